import { mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { format } from 'node:util';
import * as ts from 'typescript';

const root = resolve(__dirname, '..');
const generated = join(root, 'spec', '.doc-examples');

/** Where documented exports live: every operator, and the lib/ files whose examples promise results. */
const documented = [
  ...readdirSync(join(root, 'operators'))
    .filter((file) => file.endsWith('.ts') && file !== 'index.ts')
    .map((file) => `operators/${file}`),
  'lib/transports/encodeSSE.ts',
  'lib/tracking/verifier.ts',
  'lib/interaction/interrupts.ts',
  'lib/interaction/clientTools.ts',
  'lib/transports/parseSSE.ts',
  'lib/adapters/fromOpenAIChatCompletions.ts',
  'lib/adapters/fromOpenAIResponses.ts',
  'lib/adapters/fromAnthropicMessages.ts',
  'lib/adapters/fromAiSdkStream.ts',
  'lib/adapters/fromLangChainStreamEvents.ts',
  'lib/adapters/fromLangGraphStream.ts',
  'lib/testing/aguiMarbles.ts',
  ...readdirSync(join(root, 'lib', 'converters'))
    .filter((file) => file.endsWith('.ts') && file !== 'index.ts' && !file.endsWith('Internals.ts'))
    .sort()
    .map((file) => `lib/converters/${file}`),
];

/** The `## Example` block of each documented export's doc comment, with the results it promises. */
function examples(): { name: string; code: string; results: string }[] {
  return documented.map((path) => {
    const source = readFileSync(join(root, path), 'utf8');
    const block = /## Example\s*\*\s*\* ```ts\n([\s\S]*?) \* ```/.exec(source);
    if (block === null) throw new Error(`${path} has no "## Example" ts block in its doc comment.`);
    const code = block[1]
      .split('\n')
      .map((line) => line.replace(/^ \* ?/, ''))
      .join('\n');
    const results = /\/\/ results: (.*)/.exec(code);
    if (results === null) throw new Error(`${path}'s example has no "// results:" line.`);
    return { name: path.replace(/\.ts$/, '').replace(/\//g, '-'), code, results: results[1] };
  });
}

// Each example as a module of its own, as a user would write it: imports, then the example.
const header = `import { EventType, type Event, type Message } from '@ag-ui/core';
import { from, map, of } from 'rxjs';
import {
  a2uiSurfaces, activityDelta, coalesceDeltas, createAguiVerifier, distinctIds, encodeSSE, mapRunLifecycle, mapStepLifecycle, mapSubagentLifecycle,
  openMessageStartContentEnd, parseSSE, stateDelta, toAgui, toolCallCorrelator, withStep, type A2uiMessage, type AgentEvent,
  messagesSnapshot, verifyAgui, interrupt, approvalInterrupt, matchResume, clientToolNames, isClientTool, toolResultsFromInput, a2uiUserAction,
} from '../../lib/index.js';
import {
  fromAiSdkStream, fromAnthropicMessages, fromLangChainStreamEvents, fromLangGraphStream, fromOpenAIChatCompletions, fromOpenAIResponses,
  type AiSdkStreamPart, type AnthropicStreamEvent, type ChatCompletionChunk, type LangChainStreamEvent, type LangGraphStreamPart, type ResponseStreamEvent,
} from '../../lib/adapters/index.js';
import * as converters from '../../lib/converters/index.js';
import { TestScheduler } from 'rxjs/testing';
import { aguiMarbles } from '../../lib/testing/index.js';
void [TestScheduler, aguiMarbles];
const {
  fromAnthropicToolUses, fromOpenAIToolCalls, splitSystemMessages, toAnthropicMessages, toAnthropicTools,
  toOpenAIChatMessages, toOpenAIResponsesInput, toOpenAIResponsesTools, toOpenAITools,
} = converters;
void [EventType, from, map, of, createAguiVerifier, encodeSSE, mapRunLifecycle, openMessageStartContentEnd, parseSSE, stateDelta, toAgui, toolCallCorrelator];
void [a2uiSurfaces, activityDelta, coalesceDeltas, distinctIds, mapStepLifecycle, mapSubagentLifecycle, withStep, messagesSnapshot, verifyAgui];
void [interrupt, approvalInterrupt, matchResume, clientToolNames, isClientTool, toolResultsFromInput, a2uiUserAction];
void [fromAiSdkStream, fromAnthropicMessages, fromLangChainStreamEvents, fromLangGraphStream, fromOpenAIChatCompletions, fromOpenAIResponses];
void [fromAnthropicToolUses, fromOpenAIToolCalls, splitSystemMessages, toAnthropicMessages, toAnthropicTools, toOpenAIChatMessages, toOpenAIResponsesInput, toOpenAIResponsesTools, toOpenAITools];
export type { A2uiMessage, AgentEvent, Message, AiSdkStreamPart, AnthropicStreamEvent, ChatCompletionChunk, Event, LangChainStreamEvent, LangGraphStreamPart, ResponseStreamEvent };
`;

describe('doc comment examples', () => {
  const all = examples();

  beforeAll(() => {
    rmSync(generated, { recursive: true, force: true });
    mkdirSync(generated, { recursive: true });
    for (const { name, code } of all) writeFileSync(join(generated, `${name}.ts`), header + code);
  });

  afterAll(() => rmSync(generated, { recursive: true, force: true }));

  it('should have one for every operator and every documented lib/ export', () => {
    expect(all.map(({ name }) => name)).toEqual([
      'operators-a2uiSurfaces',
      'operators-activityDelta',
      'operators-coalesceDeltas',
      'operators-distinctIds',
      'operators-mapRunLifecycle',
      'operators-mapStepLifecycle',
      'operators-mapSubagentLifecycle',
      'operators-messagesSnapshot',
      'operators-openMessageStartContentEnd',
      'operators-stateDelta',
      'operators-toAgui',
      'operators-toolCallCorrelator',
      'operators-verifyAgui',
      'operators-withStep',
      'lib-transports-encodeSSE',
      'lib-tracking-verifier',
      'lib-interaction-interrupts',
      'lib-interaction-clientTools',
      'lib-transports-parseSSE',
      'lib-adapters-fromOpenAIChatCompletions',
      'lib-adapters-fromOpenAIResponses',
      'lib-adapters-fromAnthropicMessages',
      'lib-adapters-fromAiSdkStream',
      'lib-adapters-fromLangChainStreamEvents',
      'lib-adapters-fromLangGraphStream',
      'lib-testing-aguiMarbles',
      ...readdirSync(join(root, 'lib', 'converters'))
        .filter((file) => file.endsWith('.ts') && file !== 'index.ts' && !file.endsWith('Internals.ts'))
        .sort()
        .map((file) => `lib-converters-${file.replace(/\.ts$/, '')}`),
    ]);
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
    // As console.log prints them: strings as they are, other values inspected.
    const log = jest.spyOn(console, 'log').mockImplementation((...args: unknown[]) => void logged.push(format(...args)));
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
