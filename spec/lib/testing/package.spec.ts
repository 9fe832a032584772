import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';

const root = resolve(__dirname, '../../..');

/** Runs a Node script from the package folder (a plain Node process: no jest anywhere) and returns what it printed. */
function node(args: string[]): string {
  return execFileSync(process.execPath, args, { cwd: root, encoding: 'utf8' }).trim();
}

// The same script for both module systems: marble values, the verifier, the matcher and the official client.
const script = `
  const { aguiMarbles, expectAgui, toBeWellFormedAgui, runWithOfficialClient } = testing;
  const { toAgui } = pkg;
  const { of } = RXJS;
  const m = aguiMarbles();
  (async () => {
    const events$ = of(m.chunk.text('Hi')).pipe(toAgui(m.runOptions));
    const events = await expectAgui(events$).toBeWellFormed();
    const matcher = await toBeWellFormedAgui.call({}, [m.run.started(), m.text('x').end()]);
    const run = await runWithOfficialClient(of(m.run.started(), m.text('m1').start(), m.text('m1').content('Hi'), m.text('m1').end(), m.run.finished()));
    console.log([events.length, matcher.pass, run.messages[0].content, typeof expect].join(','));
  })().catch((error) => { console.error(error); process.exit(1); });
`;

describe('agui-rx/testing, the built package export', () => {
  beforeAll(() => {
    // `npm test` builds before it runs jest; say so when someone runs jest alone.
    if (!existsSync(resolve(root, 'dist/cjs/lib/testing/index.js'))) throw new Error('dist/ is missing: run `npm run build` (npm test does) first.');
  });

  it('should be importable by name with require(), and work without jest', () => {
    const out = node(['-e', `const testing = require('agui-rx/testing'); const pkg = require('agui-rx'); const RXJS = require('rxjs'); ${script}`]);
    expect(out).toBe('5,false,Hi,undefined');
  });

  it('should be importable by name with import, and work without jest', () => {
    const out = node(['--input-type=module', '-e', `import * as testing from 'agui-rx/testing'; import * as pkg from 'agui-rx'; import * as RXJS from 'rxjs'; ${script}`]);
    expect(out).toBe('5,false,Hi,undefined');
  });

  it('should load neither a test framework nor @ag-ui/client when imported', () => {
    const loaded = node([
      '-e',
      `require('agui-rx/testing'); console.log(Object.keys(require.cache).filter((file) => /node_modules[\\\\/](jest|@jest|expect|@ag-ui[\\\\/]client)[\\\\/]/.test(file)).length)`,
    ]);
    expect(loaded).toBe('0');
  });

  it('should ship type declarations for both module systems, with no types of jest or @ag-ui/client in them', () => {
    for (const system of ['esm', 'cjs']) {
      const folder = resolve(root, `dist/${system}/lib/testing`);
      const declarations = readdirSync(folder).filter((file) => file.endsWith('.d.ts'));
      expect(declarations).toContain('index.d.ts');
      // What the declarations import, doc comments (which show how to use jest) left out.
      const code = (file: string) => readFileSync(join(folder, file), 'utf8').replace(/\/\*[\s\S]*?\*\//g, '');
      const imports = declarations.flatMap((file) => [...code(file).matchAll(/from '([^']+)'|import\('([^']+)'\)/g)].map((match) => match[1] ?? match[2]));
      expect(imports.filter((specifier) => /^(jest|expect|@jest\/.+|@types\/jest|@ag-ui\/client)$/.test(specifier))).toEqual([]);
    }
  });
});
