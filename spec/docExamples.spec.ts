import { mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import * as ts from 'typescript';

const root = resolve(__dirname, '..');
const generated = join(root, 'spec', '.doc-examples');

/** The `## Example` block of each operator's doc comment, with the results it promises. */
function examples(): { name: string; code: string; results: string }[] {
  return readdirSync(join(root, 'operators'))
    .filter((file) => file.endsWith('.ts') && file !== 'index.ts')
    .map((file) => {
      const source = readFileSync(join(root, 'operators', file), 'utf8');
      const block = /## Example\s*\*\s*\* ```ts\n([\s\S]*?) \* ```/.exec(source);
      if (block === null) throw new Error(`${file} has no "## Example" ts block in its doc comment.`);
      const code = block[1]
        .split('\n')
        .map((line) => line.replace(/^ \* ?/, ''))
        .join('\n');
      const results = /\/\/ results: (.*)/.exec(code);
      if (results === null) throw new Error(`${file}'s example has no "// results:" line.`);
      return { name: file.replace(/\.ts$/, ''), code, results: results[1] };
    });
}

// Each example as a module of its own, as a user would write it: imports, then the example.
const header = `import { EventType } from '@ag-ui/core';
import { of } from 'rxjs';
import { mapRunLifecycle, openMessageStartContentEnd, stateDelta, toAgui, toolCallCorrelator, type AgentEvent } from '../../lib/index.js';
void EventType; void mapRunLifecycle; void openMessageStartContentEnd; void stateDelta; void toAgui; void toolCallCorrelator;
export type { AgentEvent };
`;

describe('doc comment examples', () => {
  const all = examples();

  beforeAll(() => {
    rmSync(generated, { recursive: true, force: true });
    mkdirSync(generated, { recursive: true });
    for (const { name, code } of all) writeFileSync(join(generated, `${name}.ts`), header + code);
  });

  afterAll(() => rmSync(generated, { recursive: true, force: true }));

  it('should have one for every operator', () => {
    expect(all.map(({ name }) => name)).toEqual(['mapRunLifecycle', 'openMessageStartContentEnd', 'stateDelta', 'toAgui', 'toolCallCorrelator']);
  });

  it('should type-check under the project settings (strict)', () => {
    const config = ts.getParsedCommandLineOfConfigFile(join(root, 'tsconfig.json'), {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => undefined })!;
    const program = ts.createProgram(
      all.map(({ name }) => join(generated, `${name}.ts`)),
      { ...config.options, noEmit: true, noUnusedLocals: false },
    );
    const problems = ts
      .getPreEmitDiagnostics(program)
      .filter((diagnostic) => diagnostic.file?.fileName.startsWith(generated))
      .map((diagnostic) => `${diagnostic.file!.fileName.slice(generated.length + 1)}: ${ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n')}`);
    expect(problems).toEqual([]);
  });

  it.each(all.map((example) => [example.name, example] as const))('should give the results the %s example promises', (_name, { name }) => {
    const logged: string[] = [];
    const log = jest.spyOn(console, 'log').mockImplementation((...args: unknown[]) => void logged.push(args.map(String).join(' ')));
    try {
      jest.isolateModules(() => {
        require(join(generated, `${name}.ts`));
      });
    } finally {
      log.mockRestore();
    }
    expect(logged.join(', ')).toBe(all.find((example) => example.name === name)!.results);
  });
});
