import { EventType, type Event } from '@ag-ui/core';
import { readFileSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { from, map, type Observable } from 'rxjs';
import { fromOpenAIResponses, type ResponseStreamEvent } from '../../lib/adapters/fromOpenAIResponses.js';
import { parseSSE } from '../../lib/transports/parseSSE.js';
import { toAgui } from '../../operators/toAgui.js';
import { fixtureFiles, fixturesDir, haveFixtures } from '../support/fixtures.js';
import { collect, diagnosticsSink, terminals } from '../support/helpers.js';
import { runWithOracle } from '../support/oracle.js';

type Raw = Record<string, any>;

const ownDir = resolve(__dirname, '../fixtures/openai-responses');
const sharedDir = join(fixturesDir, 'openai-responses');
const suffixes = ['.sse', '.jsonl'];

/** A recorded stream's events, read the way a server reads a response body: SSE through parseSSE, in small byte pieces. */
async function readInputs(path: string): Promise<ResponseStreamEvent[]> {
  const bytes = readFileSync(path);
  if (path.endsWith('.jsonl')) return readNaively(path) as ResponseStreamEvent[];
  // Odd-sized pieces, so that lines and UTF-8 sequences are split.
  const pieces: Uint8Array[] = [];
  for (let at = 0; at < bytes.length; at += 7) pieces.push(bytes.subarray(at, at + 7));
  const { onDiagnostic, messages: diagnostics } = diagnosticsSink();
  const inputs = await collect(
    from(pieces).pipe(
      parseSSE({ onDiagnostic }),
      map((message) => JSON.parse(message.data) as ResponseStreamEvent),
    ),
  );
  expect(diagnostics).toEqual([]);
  return inputs;
}

/** The same events, read naively (every event of these files is one `data:` line, or one JSON line): a check on parseSSE. */
function readNaively(path: string): Raw[] {
  const text = readFileSync(path, 'utf8');
  if (path.endsWith('.jsonl')) return text.split('\n').filter((line) => line.trim() !== '').map((line) => JSON.parse(line));
  return text
    .split(/\r\n|\r|\n/)
    .filter((line) => line.startsWith('data:'))
    .map((line) => JSON.parse(line.slice('data:'.length)));
}

/** What the provider said, from its own final content: each `response.completed`'s output, and its usage. */
function intent(inputs: readonly Raw[]) {
  let text = '';
  const reasoning: string[] = [];
  const args = new Map<string, string>();
  const names = new Map<string, string>();
  // The assistant messages, in order: per response, the first message or call takes the response's id, later messages their first item id.
  const assistants: string[] = [];
  const reasoningIds: string[] = [];
  const usage = new Map<string, Raw>();
  let responseId: string | undefined;
  // output_index -> the item id first seen there, in the response being read.
  let firstIds = new Map<number, string>();
  for (const event of inputs) {
    if (event.type === 'response.created') {
      responseId = event.response.id;
      firstIds = new Map();
    }
    if (event.type === 'response.output_item.added' && !firstIds.has(event.output_index)) firstIds.set(event.output_index, event.item.id);
    if (event.type !== 'response.completed' && event.type !== 'response.incomplete') continue;
    let claimed = false;
    (event.response.output as Raw[]).forEach((item, index) => {
      if (item.type === 'message') {
        text += (item.content as Raw[]).map((part) => part.text ?? part.refusal ?? '').join('');
        assistants.push(claimed ? firstIds.get(index)! : responseId!);
        claimed = true;
      } else if (item.type === 'function_call') {
        args.set(item.call_id, item.arguments);
        names.set(item.call_id, item.name);
        if (!claimed) assistants.push(responseId!);
        claimed = true;
      } else if (item.type === 'reasoning') {
        const said = [...(item.summary as Raw[]), ...((item.content as Raw[] | undefined) ?? [])].map((part) => part.text).filter((part) => part !== '');
        if (said.length > 0) {
          reasoning.push(said.join('\n\n'));
          reasoningIds.push(firstIds.get(index)!);
        }
      }
    });
    const counts = event.response.usage;
    if (counts) {
      const model = event.response.model;
      const sum = usage.get(model) ?? {};
      const add = (field: string, value: number | undefined) => {
        if (value !== undefined) sum[field] = (sum[field] ?? 0) + value;
      };
      add('inputTokens', counts.input_tokens);
      add('outputTokens', counts.output_tokens);
      add('totalTokens', counts.total_tokens);
      add('reasoningTokens', counts.output_tokens_details?.reasoning_tokens);
      add('cachedInputTokens', counts.input_tokens_details?.cached_tokens);
      add('cacheWriteInputTokens', counts.input_tokens_details?.cache_write_tokens);
      usage.set(model, sum);
    }
  }
  return { text, reasoning, args, names, assistants, reasoningIds, usage };
}

/** Runs one recorded stream through the adapter, toAgui and the official client, and checks that nothing the provider said is lost. */
async function checkRecording(path: string): Promise<void> {
  const inputs = await readInputs(path);
  expect(inputs).toEqual(readNaively(path));
  const expected = intent(inputs as Raw[]);

  const { onDiagnostic, messages: diagnostics } = diagnosticsSink();
  const events$: Observable<Event> = from(inputs).pipe(fromOpenAIResponses(), toAgui({ threadId: 'thread-1', runId: 'run-1', onDiagnostic }));
  const run = await runWithOracle(events$);
  const received = run.events as unknown as Event[];

  // One run, ended once, by the run's own ids; no repair needed.
  expect(received[0].type).toBe(EventType.RUN_STARTED);
  expect(terminals(received)).toEqual([received[received.length - 1]]);
  expect(received[received.length - 1]).toMatchObject({ type: EventType.RUN_FINISHED, threadId: 'thread-1', runId: 'run-1' });
  expect(diagnostics).toEqual([]);

  // The client's messages carry the provider's final text, reasoning and each call's exact arguments.
  const assistant = run.messages.filter((message) => message.role === 'assistant');
  expect(assistant.map((message) => (message as { content?: string }).content ?? '').join('')).toBe(expected.text);
  const reasoning = run.messages.filter((message) => message.role === 'reasoning');
  expect(reasoning.map((message) => (message as { content?: string }).content)).toEqual(expected.reasoning);
  const calls = assistant.flatMap((message) => (message.role === 'assistant' ? (message.toolCalls ?? []) : []));
  expect(new Map(calls.map((call) => [call.id, call.function.arguments]))).toEqual(expected.args);
  expect(new Map(calls.map((call) => [call.id, call.function.name]))).toEqual(expected.names);
  // One assistant message per response (its text and calls together), named after it; reasoning under the item's id.
  expect(assistant.map((message) => message.id)).toEqual(expected.assistants);
  expect(reasoning.map((message) => message.id)).toEqual(expected.reasoningIds);

  // The usage lands on RUN_FINISHED.
  const finished = received[received.length - 1] as Extract<Event, { type: EventType.RUN_FINISHED }>;
  if (expected.usage.size === 0) expect(finished.usage).toBeUndefined();
  else expect(finished.usage).toEqual([...expected.usage].map(([model, sum]) => ({ ...sum, model })));
}

/** Runs one stream that must fail, and returns its RUN_ERROR and the client's messages. */
async function checkFailure(path: string) {
  const inputs = await readInputs(path);
  const { onDiagnostic } = diagnosticsSink();
  const events$: Observable<Event> = from(inputs).pipe(fromOpenAIResponses(), toAgui({ threadId: 'thread-1', runId: 'run-1', onDiagnostic }));
  const received = await collect(events$);
  expect(terminals(received)).toEqual([received[received.length - 1]]);
  return { error: received[received.length - 1] as Raw, received };
}

const shared = fixtureFiles('openai-responses', suffixes);
const own = readdirSync(ownDir)
  .filter((name) => suffixes.some((suffix) => name.endsWith(suffix)))
  .sort();
const failing = ['error-event.sse', 'response-failed.sse'];

// A user's own clone has no ../shared: the skip says why, in the suite's own name.
(haveFixtures ? describe : describe.skip)(
  `recorded OpenAI Responses streams through fromOpenAIResponses, toAgui and the official client${haveFixtures ? '' : ' (skipped: ../shared/fixtures is absent)'}`,
  () => {
    it('should find the recordings', () => {
      expect(shared.length).toBeGreaterThanOrEqual(4);
    });

    it.each(shared)('should keep the text, reasoning, tool arguments and usage of %s', (name) => checkRecording(join(sharedDir, name)));
  },
);

describe('our own OpenAI Responses fixtures through fromOpenAIResponses, toAgui and the official client', () => {
  it('should find them', () => {
    expect(own).toEqual([
      'arguments-only-in-done.sse',
      'error-event.sse',
      'incomplete-max-output-tokens.sse',
      'response-failed.sse',
      'rotating-item-ids.jsonl',
      'two-calls-interleaved.sse',
    ]);
  });

  it.each(own.filter((name) => !failing.includes(name)))('should keep the text, reasoning, tool arguments and usage of %s', (name) => checkRecording(join(ownDir, name)));

  it('should end error-event.sse with RUN_ERROR carrying the provider message, after the text it sent', async () => {
    const { error, received } = await checkFailure(join(ownDir, 'error-event.sse'));
    expect(error).toMatchObject({ type: EventType.RUN_ERROR, code: 'PROVIDER_ERROR' });
    expect(error.message).toContain('The server is overloaded. Please try again later. (server_error)');
    expect(received.filter((event) => event.type === EventType.TEXT_MESSAGE_CONTENT).map((event) => (event as Raw).delta)).toEqual(['Let me ', 'check']);
  });

  it('should end response-failed.sse with RUN_ERROR carrying the provider message and the usage', async () => {
    const { error } = await checkFailure(join(ownDir, 'response-failed.sse'));
    expect(error).toMatchObject({
      type: EventType.RUN_ERROR,
      code: 'PROVIDER_ERROR',
      usage: [{ inputTokens: 52, outputTokens: 3, totalTokens: 55, model: 'gpt-4.1-2025-04-14' }],
    });
    expect(error.message).toContain('The response failed: Rate limit reached for gpt-4.1 on tokens per min (TPM). (rate_limit_exceeded)');
  });

  it('should really hold the edge cases they are named after', () => {
    const events = (name: string) => readNaively(join(ownDir, name));
    const order = events('two-calls-interleaved.sse')
      .filter((event) => event.type === 'response.function_call_arguments.delta')
      .map((event) => event.output_index);
    expect(order.join('')).toMatch(/^(12)+/);
    const rotating = events('rotating-item-ids.jsonl');
    const ids = rotating.map((event) => event.item_id ?? event.item?.id).filter((id) => id !== undefined);
    expect(new Set(ids).size).toBe(ids.length);
    expect(rotating.some((event) => event.type === 'response.function_call_arguments.delta')).toBe(true);
    const onlyDone = events('arguments-only-in-done.sse');
    expect(onlyDone.some((event) => event.type === 'response.function_call_arguments.delta')).toBe(false);
    expect(onlyDone.filter((event) => event.type === 'response.output_item.added').map((event) => event.item.arguments)).toEqual(['', '']);
    expect(events('error-event.sse').at(-1)).toMatchObject({ type: 'error', code: 'server_error' });
    expect(events('response-failed.sse').at(-1)).toMatchObject({ type: 'response.failed', response: { status: 'failed' } });
    expect(events('incomplete-max-output-tokens.sse').at(-1)).toMatchObject({ type: 'response.incomplete', response: { incomplete_details: { reason: 'max_output_tokens' } } });
  });
});
