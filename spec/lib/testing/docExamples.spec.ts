import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { format } from 'node:util';
import * as ts from 'typescript';

// spec/docExamples.spec.ts runs the synchronous examples of the package; the agui-rx/testing
// helpers are asynchronous, so their examples run here, awaited, each in a module of its own.

const root = resolve(__dirname, '../../..');
const folder = join(root, 'lib', 'testing');

/** The `## Example` block of each file's doc comment, and the results it promises, if any. */
function examples(): { name: string; code: string; results?: string }[] {
  return readdirSync(folder)
    .filter((file) => file.endsWith('.ts') && file !== 'index.ts')
    .sort()
    .map((file) => {
      const source = readFileSync(join(folder, file), 'utf8');
      const block = /## Example\s*\*\s*\* ```ts\n([\s\S]*?) \* ```/.exec(source);
      if (block === null) throw new Error(`lib/testing/${file} has no "## Example" ts block in its doc comment.`);
      const code = block[1]
        .split('\n')
        .map((line) => line.replace(/^ \* ?/, ''))
        .join('\n');
      return { name: file.replace(/\.ts$/, ''), code, results: /\/\/ results: (.*)/.exec(code)?.[1] };
    });
}

const header = (lib: string) => `import { EventType, type Event } from '@ag-ui/core';
import { from, map, of } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { toAgui, type AgentEvent } from '${lib}/index.js';
import { AguiStreamError, aguiMarbles, expectAgui, runWithOfficialClient, toBeWellFormedAgui } from '${lib}/testing/index.js';
void [EventType, from, map, of, TestScheduler, toAgui, AguiStreamError, aguiMarbles, expectAgui, runWithOfficialClient, toBeWellFormedAgui];
export type { AgentEvent, Event };
export async function example(): Promise<void> {
`;

describe('agui-rx/testing doc comment examples', () => {
  const all = examples();
  let generated: string;

  beforeAll(() => {
    generated = mkdtempSync(join(__dirname, '.doc-examples-'));
    for (const { name, code } of all) writeFileSync(join(generated, `${name}.ts`), `${header('../../../../lib')}${code}\n}\n`);
  });

  afterAll(() => rmSync(generated, { recursive: true, force: true }));

  it('should have one for every helper', () => {
    expect(all.map(({ name }) => name)).toEqual(['aguiMarbles', 'expectAgui', 'runWithOfficialClient', 'toBeWellFormedAgui']);
  });

  it('should type-check under the project settings (strict), with the matcher types opted into', () => {
    const config = ts.getParsedCommandLineOfConfigFile(join(root, 'tsconfig.json'), {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => undefined })!;
    const program = ts.createProgram([...all.map(({ name }) => join(generated, `${name}.ts`)), join(__dirname, 'aguiMatchers.d.ts')], {
      ...config.options,
      noEmit: true,
      noUnusedLocals: false,
    });
    const problems = ts
      .getPreEmitDiagnostics(program)
      .filter((diagnostic) => diagnostic.file?.fileName.startsWith(generated))
      .map((diagnostic) => `${diagnostic.file!.fileName.slice(generated.length + 1)}: ${ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n')}`);
    expect(problems).toEqual([]);
  });

  it.each(all.map((example) => [example.name, example] as const))('should give the results the %s example promises', async (_name, { name, results }) => {
    const logged: string[] = [];
    // As console.log prints them: strings as they are, other values inspected.
    const log = jest.spyOn(console, 'log').mockImplementation((...args: unknown[]) => void logged.push(format(...args)));
    try {
      const { example } = require(join(generated, `${name}.ts`)) as { example: () => Promise<void> };
      await example();
    } finally {
      log.mockRestore();
    }
    if (results !== undefined) expect(logged.join(', ')).toBe(results);
  });
});
