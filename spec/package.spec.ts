import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

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

  it('should load redis only through agui-rx/broker/redis, with require() and import', () => {
    const loaded = `Object.keys(require.cache).some((path) => /node_modules[\\\\/](redis|@redis)[\\\\/]/.test(path))`;
    const cjs = node(['-e', `require('agui-rx'); const before = ${loaded}; const { createRedisRunStore } = require('agui-rx/broker/redis'); console.log(before, ${loaded}, typeof createRedisRunStore);`]);
    expect(cjs).toBe('false true function');
    const esm = node(['--input-type=module', '-e', `const { createRedisRunStore } = await import('agui-rx/broker/redis'); console.log(typeof createRedisRunStore);`]);
    expect(esm).toBe('function');
  });

  it('should ship type declarations for both module systems', () => {
    expect(existsSync(resolve(root, 'dist/esm/lib/index.d.ts'))).toBe(true);
    expect(existsSync(resolve(root, 'dist/cjs/lib/index.d.ts'))).toBe(true);
  });

  it('should export agui-rx/client for both module systems: an HttpAgent of the official client', () => {
    const check = `console.log([typeof ResumableHttpAgent, new ResumableHttpAgent({ url: 'http://localhost/agent' }) instanceof HttpAgent].join(','))`;
    const cjs = node(['-e', `const { ResumableHttpAgent } = require('agui-rx/client'); const { HttpAgent } = require('@ag-ui/client'); ${check}`]);
    const esm = node(['--input-type=module', '-e', `import { ResumableHttpAgent } from 'agui-rx/client'; import { HttpAgent } from '@ag-ui/client'; ${check}`]);
    expect([cjs, esm]).toEqual(['function,true', 'function,true']);
    for (const system of ['esm', 'cjs']) expect(existsSync(resolve(root, `dist/${system}/lib/client/index.d.ts`))).toBe(true);
  });

  it('should not load @ag-ui/client from the package root', () => {
    const loaded = node(['-e', `require('agui-rx'); console.log(Object.keys(require.cache).filter((file) => /node_modules[\\\\/]@ag-ui[\\\\/]client[\\\\/]/.test(file)).length)`]);
    expect(loaded).toBe('0');
  });

  it('should work when installed from its packed tarball, with only the dependencies it declares', () => {
    // A user's project: nothing of ours is there but what package.json declares (a dev
    // dependency that happens to bring a needed package in cannot hide a missing one).
    const app = mkdtempSync(join(tmpdir(), 'agui-rx-app-'));
    try {
      const tarball = execFileSync('npm', ['pack', '--silent', '--ignore-scripts', '--pack-destination', app], { cwd: root, encoding: 'utf8' }).trim().split('\n').pop()!;
      writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'app', private: true }));
      execFileSync('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--silent', join(app, tarball), 'rxjs@^7.8'], { cwd: app, encoding: 'utf8' });
      const cjs = execFileSync(process.execPath, ['-e', `const pkg = require('agui-rx'); const AGUI_CORE = require('@ag-ui/core'); const RXJS = require('rxjs'); ${script}`], { cwd: app, encoding: 'utf8' });
      const esm = execFileSync(process.execPath, ['--input-type=module', '-e', `import * as pkg from 'agui-rx'; import * as AGUI_CORE from '@ag-ui/core'; import * as RXJS from 'rxjs'; ${script}`], { cwd: app, encoding: 'utf8' });
      expect([cjs.trim(), esm.trim()]).toEqual([
        'RUN_STARTED,TEXT_MESSAGE_START,TEXT_MESSAGE_CONTENT,TEXT_MESSAGE_END,RUN_FINISHED',
        'RUN_STARTED,TEXT_MESSAGE_START,TEXT_MESSAGE_CONTENT,TEXT_MESSAGE_END,RUN_FINISHED',
      ]);
      // @ag-ui/client is an optional peer dependency: not installed, so the testing kit loads and
      // runWithOfficialClient says what to install.
      expect(existsSync(join(app, 'node_modules', '@ag-ui', 'client'))).toBe(false);
      const missing = execFileSync(
        process.execPath,
        ['-e', `const { runWithOfficialClient } = require('agui-rx/testing'); runWithOfficialClient([]).then(() => console.log('resolved'), (error) => console.log(error.code, /npm install -D @ag-ui\\/client/.test(error.message)));`],
        { cwd: app, encoding: 'utf8' },
      );
      expect(missing.trim()).toBe('MISSING_PEER_DEPENDENCY true');
      // agui-rx/client subclasses the official HttpAgent: without @ag-ui/client it cannot load, and Node names the package.
      const client = execFileSync(
        process.execPath,
        ['-e', `try { require('agui-rx/client'); console.log('loaded'); } catch (error) { console.log(error.code, /@ag-ui\\/client/.test(error.message)); }`],
        { cwd: app, encoding: 'utf8' },
      );
      expect(client.trim()).toBe('MODULE_NOT_FOUND true');
    } finally {
      rmSync(app, { recursive: true, force: true });
    }
  }, 180_000);
});
