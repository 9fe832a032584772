import { EventType, type Event } from '@ag-ui/core';
import { readFileSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { from } from 'rxjs';
import { fromAiSdkStream, type AiSdkStreamPart } from '../../lib/adapters/fromAiSdkStream.js';
import { toAgui } from '../../operators/toAgui.js';
import { fixtureFiles, fixturesDir, haveFixtures } from '../support/fixtures.js';
import { diagnosticsSink, terminals } from '../support/helpers.js';
import { runWithOracle } from '../support/oracle.js';

type Raw = Record<string, any>;

const ownDir = resolve(__dirname, '../fixtures/vercel-ai-sdk');
const sharedDir = join(fixturesDir, 'vercel-ai-sdk');

function readParts(path: string): AiSdkStreamPart[] {
  return JSON.parse(readFileSync(path, 'utf8'));
}

/** A count of the recording's usage, or undefined when it reports none. */
const count = (value: unknown) => (typeof value === 'number' && Number.isFinite(value) ? value : undefined);

/** The usage as TokenUsage, computed straight from an AI SDK usage object (flat or nested). */
function expectedUsage(usage: Raw | undefined, model: string | undefined): Raw | undefined {
  if (usage === undefined) return undefined;
  const nested = typeof usage.inputTokens === 'object';
  const entry: Raw = nested
    ? {
        inputTokens: count(usage.inputTokens?.total),
        outputTokens: count(usage.outputTokens?.total),
        reasoningTokens: count(usage.outputTokens?.reasoning),
        cachedInputTokens: count(usage.inputTokens?.cacheRead),
        cacheWriteInputTokens: count(usage.inputTokens?.cacheWrite),
      }
    : {
        inputTokens: count(usage.inputTokens),
        outputTokens: count(usage.outputTokens),
        totalTokens: count(usage.totalTokens),
        reasoningTokens: count(usage.reasoningTokens),
        cachedInputTokens: count(usage.cachedInputTokens),
      };
  if (model !== undefined) entry.model = model;
  return Object.fromEntries(Object.entries(entry).filter(([, value]) => value !== undefined));
}

/** What the model and its tools said, gathered straight from the raw parts. */
function intent(parts: readonly Raw[]) {
  let text = '';
  let reasoning = '';
  const deltas = new Map<string, string>();
  const wholeInputs = new Map<string, string>();
  const names = new Map<string, string>();
  const results = new Map<string, unknown>();
  const interrupts: Raw[] = [];
  let model: string | undefined;
  let usage: Raw | undefined;
  const stepUsage: Raw[] = [];
  let ending: 'success' | 'cancelled' | 'error' = 'success';
  let steps = 0;
  for (const part of parts) {
    if (ending !== 'success') break;
    switch (part.type) {
      case 'text-delta':
        text += part.delta ?? part.text;
        break;
      case 'reasoning-delta':
        reasoning += part.delta ?? part.text;
        break;
      case 'tool-input-start':
        names.set(part.toolCallId ?? part.id, part.toolName);
        break;
      case 'tool-input-delta': {
        const id = part.toolCallId ?? part.id;
        deltas.set(id, (deltas.get(id) ?? '') + (part.inputTextDelta ?? part.delta));
        break;
      }
      case 'tool-call':
      case 'tool-input-available':
        names.set(part.toolCallId, part.toolName);
        wholeInputs.set(part.toolCallId, typeof part.input === 'string' ? part.input : JSON.stringify(part.input));
        break;
      case 'tool-result':
      case 'tool-output-available':
        results.set(part.toolCallId, part.output ?? part.result);
        break;
      case 'tool-error':
        results.set(part.toolCallId, `Error: ${part.error}`);
        break;
      case 'tool-output-error':
        results.set(part.toolCallId, `Error: ${part.errorText}`);
        break;
      case 'tool-approval-request':
        interrupts.push({ id: part.approvalId, reason: 'tool_approval', toolCallId: part.toolCallId, message: `Approve the call to '${names.get(part.toolCallId)}'?` });
        break;
      case 'response-metadata':
        model = part.modelId ?? model;
        break;
      case 'start-step':
        steps++;
        break;
      case 'finish-step':
        model = part.response?.modelId ?? model;
        if (part.usage) stepUsage.push(expectedUsage(part.usage, model)!);
        break;
      case 'finish':
        usage = expectedUsage(part.totalUsage ?? part.usage, model);
        break;
      case 'abort':
        ending = 'cancelled';
        break;
      case 'error':
        ending = 'error';
        break;
    }
  }
  // Each call's arguments: its streamed pieces, or its whole input when none came; an empty input is the "{}" of a call without arguments.
  const args = new Map<string, string>();
  for (const id of names.keys()) args.set(id, deltas.get(id) || wholeInputs.get(id) || '{}');
  return { text, reasoning, args, names, results, interrupts, usage: usage === undefined ? stepUsage : [usage], ending, steps };
}

/** Runs one stream of parts through the adapter, toAgui and the official client, and checks that nothing the model said is lost. */
async function checkRecording(path: string): Promise<void> {
  const parts = readParts(path);
  const expected = intent(parts as Raw[]);
  const { onDiagnostic, messages: diagnostics } = diagnosticsSink();
  const run = await runWithOracle(from(parts).pipe(fromAiSdkStream(), toAgui({ threadId: 'thread-1', runId: 'run-1', onDiagnostic })));
  const received = run.events as unknown as Event[];

  // One run, ended once; no repair needed.
  expect(received[0].type).toBe(EventType.RUN_STARTED);
  expect(terminals(received)).toEqual([received[received.length - 1]]);
  expect(diagnostics).toEqual([]);

  // The client's messages carry the model's full text, reasoning, each call's exact arguments and each result.
  const assistant = run.messages.filter((message) => message.role === 'assistant');
  expect(assistant.map((message) => (message as { content?: string }).content ?? '').join('')).toBe(expected.text);
  const reasoning = run.messages.filter((message) => message.role === 'reasoning');
  expect(reasoning.map((message) => (message as { content?: string }).content ?? '').join('')).toBe(expected.reasoning);
  const calls = assistant.flatMap((message) => (message.role === 'assistant' ? (message.toolCalls ?? []) : []));
  expect(new Map(calls.map((call) => [call.id, call.function.arguments]))).toEqual(expected.args);
  expect(new Map(calls.map((call) => [call.id, call.function.name]))).toEqual(expected.names);
  const tools = run.messages.filter((message) => message.role === 'tool');
  const serialised = (content: unknown) => (typeof content === 'string' || (Array.isArray(content) && content.every((part) => part?.type === 'text')) ? content : JSON.stringify(content));
  expect(new Map(tools.map((message) => [(message as { toolCallId: string }).toolCallId, message.content]))).toEqual(
    new Map([...expected.results].map(([id, content]) => [id, serialised(content)])),
  );
  // Every step started is finished.
  expect(received.filter((event) => event.type === EventType.STEP_STARTED).map((event) => (event as { stepName: string }).stepName)).toEqual(
    Array.from({ length: expected.steps }, (_, i) => `step-${i + 1}`),
  );
  expect(received.filter((event) => event.type === EventType.STEP_FINISHED)).toHaveLength(expected.steps);

  // The run ends the way the stream did, with its usage.
  const last = received[received.length - 1] as Raw;
  if (expected.ending === 'error') {
    expect(last).toMatchObject({ type: EventType.RUN_ERROR, code: 'PROVIDER_ERROR' });
    return;
  }
  expect(last.type).toBe(EventType.RUN_FINISHED);
  if (expected.ending === 'cancelled') expect(last.outcome).toEqual({ type: 'cancelled' });
  else if (expected.interrupts.length > 0) expect(last.outcome).toEqual({ type: 'interrupt', interrupts: expected.interrupts });
  else expect(last.outcome.type).toBe('success');
  if (expected.usage.length === 0) expect(last.usage).toBeUndefined();
  else expect(last.usage).toEqual(expected.usage.length === 1 ? expected.usage : [expect.objectContaining({ inputTokens: expected.usage.reduce((sum, entry) => sum + entry.inputTokens, 0) })]);
}

const shared = fixtureFiles('vercel-ai-sdk', ['.json']);
const own = readdirSync(ownDir)
  .filter((name) => name.endsWith('.json'))
  .sort();

// A user's own clone has no ../shared: the skip says why, in the suite's own name.
(haveFixtures ? describe : describe.skip)(
  `recorded Vercel AI SDK streams through fromAiSdkStream, toAgui and the official client${haveFixtures ? '' : ' (skipped: ../shared/fixtures is absent)'}`,
  () => {
    it('should find the recordings', () => {
      expect(shared.length).toBeGreaterThanOrEqual(3);
    });

    it.each(shared)('should keep the text, reasoning, tool arguments, results and usage of %s', (name) => checkRecording(join(sharedDir, name)));

    it('should give each provider response of the LanguageModelV3 recording its own assistant message, named after the response', async () => {
      const parts = readParts(join(sharedDir, 'vercel-lmv3-openai-responses-reasoning-tool-calls.json')) as Raw[];
      const responses = parts.filter((part) => part.type === 'response-metadata').map((part) => part.id);
      const run = await runWithOracle(from(parts as AiSdkStreamPart[]).pipe(fromAiSdkStream(), toAgui({ threadId: 'thread-1', runId: 'run-1', onDiagnostic: () => undefined })));
      expect(run.messages.filter((message) => message.role === 'assistant').map((message) => message.id)).toEqual(responses);
      expect(run.messages.filter((message) => message.role === 'reasoning').map((message) => message.id)).toEqual([`${responses[0]}-reasoning`]);
    });

    it('should put the tool calls of one UI stream step in one assistant message with the step reasoning beside it', async () => {
      const parts = readParts(join(sharedDir, 'vercel-ui-stream-react-agent-parallel-tools.json'));
      const run = await runWithOracle(from(parts).pipe(fromAiSdkStream(), toAgui({ threadId: 'thread-1', runId: 'run-1', onDiagnostic: () => undefined })));
      expect(run.messages.map((message) => message.role)).toEqual(['reasoning', 'assistant', 'tool', 'tool', 'assistant']);
      expect(run.messages[1]).toMatchObject({ id: 'run-019b2888-ee10-7000-8000-09947d4d7fff' });
      expect(run.messages[0]).toMatchObject({ id: 'run-019b2888-ee10-7000-8000-09947d4d7fff-reasoning' });
    });
  },
);

describe('our own Vercel AI SDK streams through fromAiSdkStream, toAgui and the official client', () => {
  it('should find them', () => {
    expect(own).toEqual([
      'fullstream-abort.json',
      'fullstream-error.json',
      'fullstream-steps.json',
      'fullstream-tool-error.json',
      'lmv3-tool-call-without-deltas.json',
      'ui-tool-approval-request.json',
      'ui-tool-output-error.json',
    ]);
  });

  it.each(own)('should keep the text, reasoning, tool arguments, results and usage of %s', (name) => checkRecording(join(ownDir, name)));

  it('should really hold the edge cases they are named after', () => {
    const parts = (name: string) => readParts(join(ownDir, name)) as Raw[];
    const types = (name: string) => parts(name).map((part) => part.type);
    expect(types('ui-tool-approval-request.json')).toContain('tool-approval-request');
    expect(parts('ui-tool-approval-request.json').some((part) => 'inputTextDelta' in part)).toBe(true);
    expect(types('fullstream-abort.json').at(-1)).toBe('abort');
    expect(parts('fullstream-abort.json').some((part) => part.type === 'text-delta' && 'text' in part && !('delta' in part))).toBe(true);
    expect(parts('fullstream-error.json').at(-1)).toMatchObject({ type: 'error', error: { message: 'Overloaded' } });
    expect(types('fullstream-tool-error.json')).toContain('tool-error');
    expect(types('ui-tool-output-error.json')).toContain('tool-output-error');
    expect(types('ui-tool-output-error.json')).not.toContain('tool-input-start');
    expect(types('lmv3-tool-call-without-deltas.json').filter((type) => type.startsWith('tool-input'))).toEqual([]);
    expect(parts('lmv3-tool-call-without-deltas.json').at(-1)).toMatchObject({ type: 'finish', usage: { inputTokens: { total: 75 } } });
    const steps = parts('fullstream-steps.json');
    expect(steps.filter((part) => part.type === 'start-step')).toHaveLength(2);
    expect(new Set(steps.filter((part) => part.type === 'text-delta').map((part) => part.id))).toEqual(new Set(['1', '0']));
  });

  it('should name the messages of fullstream-steps.json apart though their part ids repeat', async () => {
    const run = await runWithOracle(from(readParts(join(ownDir, 'fullstream-steps.json'))).pipe(fromAiSdkStream(), toAgui({ threadId: 'thread-1', runId: 'run-1', onDiagnostic: () => undefined })));
    expect(run.messages.map((message) => [message.role, message.id])).toEqual([
      ['reasoning', '0-reasoning'],
      ['assistant', '0'],
      ['tool', expect.any(String)],
      ['assistant', '0-2'],
    ]);
  });
});
