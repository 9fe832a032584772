import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';

const root = resolve(__dirname, '..');

/** Runs a Node script from the package folder and returns what it printed. */
function node(args: string[]): string {
  return execFileSync(process.execPath, args, { cwd: root, encoding: 'utf8' }).trim();
}

const script = `
  const { EventType } = AGUI_CORE;
  const { of, lastValueFrom, toArray } = RXJS;
  lastValueFrom(of({ type: EventType.TEXT_MESSAGE_CHUNK, delta: 'Hi' }).pipe(pkg.toAgui({ threadId: 't', runId: 'r' }), toArray()))
    .then((events) => console.log(events.map((e) => e.type).join(',')));
`;

describe('the built package', () => {
  beforeAll(() => {
    // `npm test` builds before it runs jest; say so when someone runs jest alone.
    if (!existsSync(resolve(root, 'dist/cjs/lib/index.js'))) throw new Error('dist/ is missing: run `npm run build` (npm test does) first.');
  });

  it('should be importable by its own name with require()', () => {
    const out = node(['-e', `const pkg = require('agui-rx'); const AGUI_CORE = require('@ag-ui/core'); const RXJS = require('rxjs'); ${script}`]);
    expect(out).toBe('RUN_STARTED,TEXT_MESSAGE_START,TEXT_MESSAGE_CONTENT,TEXT_MESSAGE_END,RUN_FINISHED');
  });

  it('should be importable by its own name with import', () => {
    const out = node([
      '--input-type=module',
      '-e',
      `import * as pkg from 'agui-rx'; import * as AGUI_CORE from '@ag-ui/core'; import * as RXJS from 'rxjs'; ${script}`,
    ]);
    expect(out).toBe('RUN_STARTED,TEXT_MESSAGE_START,TEXT_MESSAGE_CONTENT,TEXT_MESSAGE_END,RUN_FINISHED');
  });

  it('should ship type declarations for both module systems', () => {
    expect(existsSync(resolve(root, 'dist/esm/lib/index.d.ts'))).toBe(true);
    expect(existsSync(resolve(root, 'dist/cjs/lib/index.d.ts'))).toBe(true);
  });
});
