import { readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';

/**
 * The layout DESIGN.md fixes: lib/ grouped by concern, dependencies pointing one way, thin
 * operators. Read from the sources, so that a file put in the wrong place, or an import against
 * the arrows, fails here rather than in a reviewer's head.
 */
const root = resolve(__dirname, '..');

/** What each folder may import besides itself (dependency order, not folder depth). */
const allowed: Record<string, readonly string[]> = {
  'lib/protocol': [],
  'lib/state': ['lib/protocol'],
  'lib/tracking': ['lib/protocol', 'lib/state'],
  'lib/interaction': ['lib/protocol'],
  'lib/adapters': ['lib/protocol', 'lib/interaction'],
  'lib/converters': ['lib/protocol', 'lib/interaction'],
  operators: ['lib/protocol', 'lib/state', 'lib/tracking', 'lib/interaction'],
  'lib/transports': ['lib/protocol', 'lib/state', 'lib/tracking', 'lib/interaction', 'operators'],
  'lib/broker': ['lib/protocol', 'lib/state', 'lib/tracking', 'lib/interaction', 'operators', 'lib/transports'],
  'lib/client': ['lib/protocol', 'lib/state', 'lib/tracking', 'lib/interaction', 'operators', 'lib/transports'],
  'lib/testing': ['lib/protocol', 'lib/state', 'lib/tracking', 'lib/interaction', 'operators', 'lib/transports'],
  'lib/demo': ['lib/protocol', 'lib/state', 'lib/tracking', 'lib/interaction', 'lib/adapters', 'lib/converters', 'operators', 'lib/transports', 'lib/broker', 'lib/client'],
  'lib/cli': ['lib/protocol', 'lib/state', 'lib/tracking', 'lib/interaction', 'lib/adapters', 'lib/converters', 'operators', 'lib/transports', 'lib/broker', 'lib/client', 'lib/demo'],
};

/** Entry files: they re-export from anywhere, since where a module lives is independent of which entry exports it. */
const entries = new Set(['lib/index.ts', 'lib/adapters/index.ts', 'lib/broker/redis/index.ts', 'lib/client/index.ts', 'lib/converters/index.ts', 'lib/testing/index.ts', 'operators/index.ts']);

function sources(dir: string): string[] {
  return readdirSync(join(root, dir)).flatMap((name) => {
    const path = `${dir}/${name}`;
    if (statSync(join(root, path)).isDirectory()) return sources(path);
    return name.endsWith('.ts') ? [path] : [];
  });
}

/** The folder of `allowed` that holds `file` (relative to the root). */
function folderOf(file: string): string | undefined {
  return Object.keys(allowed)
    .filter((folder) => file.startsWith(`${folder}/`))
    .sort((a, b) => b.length - a.length)[0];
}

/** Relative import specifiers of a source file: static imports, re-exports and dynamic imports. */
function relativeImports(source: string): string[] {
  const found: string[] = [];
  for (const match of source.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)['"](\.{1,2}\/[^'"]+)['"]/g)) found.push(match[1]);
  return found;
}

const files = [...sources('lib'), ...sources('operators')];

describe('layout', () => {
  it('should keep only the package entry at the root of lib/', () => {
    const rootFiles = readdirSync(join(root, 'lib')).filter((name) => !statSync(join(root, 'lib', name)).isDirectory());
    expect(rootFiles).toEqual(['index.ts']);
  });

  it('should put every lib/ folder in the dependency order', () => {
    const folders = readdirSync(join(root, 'lib')).filter((name) => statSync(join(root, 'lib', name)).isDirectory());
    expect(folders.map((name) => `lib/${name}`).filter((folder) => allowed[folder] === undefined)).toEqual([]);
  });

  it('should import only along the arrows: no folder imports one later in the order', () => {
    const wrong: string[] = [];
    for (const file of files) {
      if (entries.has(file)) continue;
      const from = folderOf(file)!;
      for (const specifier of relativeImports(readFileSync(join(root, file), 'utf8'))) {
        const target = relative(root, resolve(root, dirname(file), specifier)).split(sep).join('/');
        const to = folderOf(target);
        if (to === undefined) wrong.push(`${file} imports ${specifier}, outside lib/ and operators/`);
        else if (to !== from && !allowed[from].includes(to)) wrong.push(`${file} (${from}) imports ${target} (${to})`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it('should see the imports it checks (the check above cannot pass by finding none)', () => {
    const all = files.flatMap((file) => relativeImports(readFileSync(join(root, file), 'utf8')));
    expect(all.length).toBeGreaterThan(200);
    expect(relativeImports("import { a } from '../protocol/table.js';\nexport * from './x.js';\nawait import('../y.js');")).toEqual([
      '../protocol/table.js',
      './x.js',
      '../y.js',
    ]);
  });

  it('should keep every operator file at 200 lines or fewer: operators are wiring over lib/', () => {
    const long = sources('operators')
      .map((file) => ({ file, lines: readFileSync(join(root, file), 'utf8').replace(/\n$/, '').split('\n').length }))
      .filter(({ lines }) => lines > 200);
    expect(long).toEqual([]);
  });
});
