import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const root = resolve(__dirname, '../..');

/**
 * Whether the npm registry answers. The install specs skip (with a notice) without it, since
 * they install real packages; everywhere else they run.
 */
export function registryReachable(): boolean {
  try {
    execFileSync('npm', ['ping'], { stdio: 'ignore', timeout: 20_000 });
    return true;
  } catch {
    return false;
  }
}

/** `it`, or `it.skip` with a notice naming what was not checked when the registry cannot be reached. */
export function itWithRegistry(online: boolean, what: string): jest.It {
  if (online) return it;
  console.warn(`[install specs] SKIPPED: the npm registry cannot be reached, so ${what} was not checked.`);
  return it.skip;
}

/** A fresh project in a temp folder: the packed agui-rx and `dependencies`, installed as a user would. */
export interface TempProject {
  readonly dir: string;
  /** Runs `node` in the project; returns what it printed. */
  node(args: string[]): string;
  /** Type-checks `files` (name → source) with this repository's TypeScript and `compilerOptions`; returns tsc's output ('' when clean). */
  typecheck(files: Record<string, string>, compilerOptions?: Record<string, unknown>): string;
  remove(): void;
}

/**
 * Packs agui-rx (needs `npm run build`: npm test builds first), then installs it with `dependencies`
 * (pinned versions: CI must be reproducible) in a fresh temp project, without install scripts.
 *
 * @throws The npm error (ERESOLVE and the like) when the install fails: that is what the specs assert.
 */
export function createTempProject(dependencies: Record<string, string>, overrides?: Record<string, string>): TempProject {
  if (!existsSync(resolve(root, 'dist/cjs/lib/index.js'))) throw new Error('dist/ is missing: run `npm run build` (npm test does) first.');
  const dir = mkdtempSync(join(tmpdir(), 'agui-rx-install-'));
  const tarball = execFileSync('npm', ['pack', '--silent', '--ignore-scripts', '--pack-destination', dir], { cwd: root, encoding: 'utf8' }).trim().split('\n').pop()!;
  const manifest = { name: 'app', private: true, dependencies: { 'agui-rx': `file:./${tarball}`, ...dependencies }, ...(overrides === undefined ? {} : { overrides }) };
  writeFileSync(join(dir, 'package.json'), JSON.stringify(manifest, null, 2));
  execFileSync('npm', ['install', '--ignore-scripts', '--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error'], { cwd: dir, encoding: 'utf8', stdio: 'pipe' });
  const tsc = resolve(root, 'node_modules/typescript/bin/tsc');
  return {
    dir,
    node: (args) => execFileSync(process.execPath, args, { cwd: dir, encoding: 'utf8' }).trim(),
    typecheck(files, compilerOptions = {}) {
      for (const [name, source] of Object.entries(files)) writeFileSync(join(dir, name), source);
      const options = { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, skipLibCheck: true, noEmit: true, lib: ['ES2022', 'DOM'], types: ['node'], ...compilerOptions };
      writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: options, files: Object.keys(files) }));
      try {
        execFileSync(process.execPath, [tsc, '-p', dir], { cwd: dir, encoding: 'utf8', stdio: 'pipe' });
        return '';
      } catch (error) {
        return String((error as { stdout?: unknown }).stdout ?? error);
      }
    },
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
