import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import * as operators from '../../operators/index';

const root = resolve(__dirname, '../..');
const read = (path: string) => readFileSync(join(root, path), 'utf8');

/** Every Markdown file of the guides, and the README. */
function markdownFiles(): string[] {
  const files = ['README.md'];
  const walk = (dir: string) => {
    for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory() && path !== join('docs', 'api')) walk(path);
      else if (entry.name.endsWith('.md')) files.push(path);
    }
  };
  walk('docs');
  return files;
}

/** The relative link targets of a Markdown text (no URLs, no in-page anchors), without their anchors. */
function relativeLinks(markdown: string): string[] {
  const withoutCode = markdown.replace(/```[\s\S]*?```/g, '').replace(/`[^`\n]*`/g, '');
  return [...withoutCode.matchAll(/\]\(([^)\s]+)\)/g)]
    .map((match) => match[1]!)
    .filter((target) => !/^[a-z]+:/i.test(target) && !target.startsWith('#'))
    .map((target) => target.split('#')[0]!);
}

describe('docs', () => {
  it('should have a page in docs/operators/ for every operator exported by operators/index.ts, linked from docs/operators.md', () => {
    const index = read('docs/operators.md');
    const pages = readdirSync(join(root, 'docs/operators')).map((name) => name.replace(/\.md$/, ''));
    const documented = pages.map((page) => read(`docs/operators/${page}.md`)).join('\n');
    const missing = Object.keys(operators).filter((name) => !pages.includes(name) && !documented.includes(name));
    expect(missing).toEqual([]);
    const unlinked = pages.filter((page) => !index.includes(`(operators/${page}.md)`));
    expect(unlinked).toEqual([]);
  });

  it('should give every operator page a marble diagram, options, errors and the AG-UI rule', () => {
    const incomplete = readdirSync(join(root, 'docs/operators')).filter((name) => {
      const page = read(`docs/operators/${name}`);
      return !page.includes('```text') || !/## (Options|Parameters and options)/.test(page) || !page.includes('## Errors') || !page.includes('## AG-UI rule');
    });
    expect(incomplete).toEqual([]);
  });

  it('should only link to files that exist', () => {
    const broken = markdownFiles().flatMap((file) =>
      relativeLinks(read(file))
        .filter((target) => !existsSync(resolve(root, dirname(file), target)))
        .map((target) => `${file} -> ${target}`),
    );
    expect(broken).toEqual([]);
  });

  it('should list every example in docs/examples/README.md', () => {
    const listed = read('docs/examples/README.md');
    const unlisted = readdirSync(join(root, 'docs/examples'))
      .filter((name) => name.endsWith('.ts'))
      .filter((name) => !listed.includes(`(${name})`));
    expect(unlisted).toEqual([]);
  });

  it('should link every guide from docs/README.md', () => {
    const index = read('docs/README.md');
    const guides = readdirSync(join(root, 'docs')).filter((name) => name.endsWith('.md') && name !== 'README.md');
    expect(guides.filter((name) => !index.includes(`(${name})`))).toEqual([]);
  });

  it('should give the two commands of the README exactly', () => {
    const readme = read('README.md');
    expect(readme).toContain('npm ci && npm run demo');
    expect(readme).toContain('npm ci && npm test');
  });
});
