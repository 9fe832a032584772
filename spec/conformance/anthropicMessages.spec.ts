import { EventType, type Event, type Message } from '@ag-ui/core';
import { readFileSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { from, map, type Observable } from 'rxjs';
import { fromAnthropicMessages, type AnthropicStreamEvent } from '../../lib/adapters/fromAnthropicMessages.js';
import { parseSSE } from '../../lib/transports/parseSSE.js';
import { toAgui } from '../../operators/toAgui.js';
import { fixtureFiles, fixturesDir, haveFixtures } from '../support/fixtures.js';
import { collect, diagnosticsSink, terminals } from '../support/helpers.js';
import { runWithOracle } from '../support/oracle.js';

type Raw = Record<string, any>;

const ownDir = resolve(__dirname, '../fixtures/anthropic-messages');
const sharedDir = join(fixturesDir, 'anthropic-messages');
const suffixes = ['.sse', '.jsonl'];

/** A recorded stream's events, read the way a server reads a response body: SSE through parseSSE, in small byte pieces. */
async function readInputs(path: string): Promise<AnthropicStreamEvent[]> {
  const bytes = readFileSync(path);
  if (path.endsWith('.jsonl')) {
    return bytes
      .toString('utf8')
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line) => JSON.parse(line));
  }
  // Odd-sized pieces, so that lines and UTF-8 sequences are split.
  const pieces: Uint8Array[] = [];
  for (let at = 0; at < bytes.length; at += 7) pieces.push(bytes.subarray(at, at + 7));
  const { onDiagnostic, messages: diagnostics } = diagnosticsSink();
  const messages = await collect(from(pieces).pipe(parseSSE({ onDiagnostic })));
  // The Anthropic SDK's own recordings end without the blank line after `message_stop`: parseSSE
  // drops that last event, as the SSE specification says, and reports it. Nothing but the stop is lost.
  if (bytes.toString('utf8').endsWith('\n\n')) expect(diagnostics).toEqual([]);
  else expect(diagnostics).toEqual([expect.stringMatching(/^Discarded an incomplete server-sent event at the end of the stream \("data: {\\"type\\":\\"message_stop\\"}"\)/)]);
  // The `event:` line names the same type as the data's own `type`.
  for (const message of messages) expect(message.event).toBe(JSON.parse(message.data).type);
  return messages.map((message) => JSON.parse(message.data));
}

/** The same events, read naively (every event of these files is one `data:` line): a check on parseSSE. */
function readNaively(path: string): Raw[] {
  const text = readFileSync(path, 'utf8');
  if (path.endsWith('.jsonl')) return text.split('\n').filter((line) => line.trim() !== '').map((line) => JSON.parse(line));
  return text
    .split(/\r\n|\r|\n/)
    .filter((line) => line.startsWith('data:'))
    .map((line) => JSON.parse(line.slice('data:'.length)));
}

/** What parseSSE must dispatch: every event, but one the file leaves without its closing blank line. */
function dispatched(path: string): Raw[] {
  const events = readNaively(path);
  return path.endsWith('.sse') && !readFileSync(path, 'utf8').endsWith('\n\n') ? events.slice(0, -1) : events;
}

/**
 * What the provider said, rebuilt from the raw events the way Anthropic's SDK accumulates a
 * message: each block's text, thinking and signature concatenated, each tool's input as the
 * concatenated `partial_json` (the start's `input` when there is none).
 */
function intent(inputs: readonly Raw[]) {
  let text = '';
  const reasoning: { content: string; signature?: string }[] = [];
  const args = new Map<string, string>();
  const names = new Map<string, string>();
  const results = new Map<string, string>();
  const messageIds: string[] = [];
  // What the message says, in order: text (runs of it as one), each call, each result.
  const order: string[] = [];
  const say = (item: string) => {
    if (item !== 'text' || order.at(-1) !== 'text') order.push(item);
  };
  let usage: Raw = {};
  let model: string | undefined;
  let stopReason: string | undefined;
  let error: Raw | undefined;
  const blocks = new Map<number, Raw>();
  for (const event of inputs) {
    switch (event.type) {
      case 'message_start':
        messageIds.push(event.message.id);
        model = event.message.model;
        usage = { ...event.message.usage };
        break;
      case 'content_block_start': {
        const block = { ...event.content_block, json: '' };
        blocks.set(event.index, block);
        if (block.type === 'text') text += block.text;
        if (block.type === 'text' && block.text !== '') say('text');
        if (block.type === 'redacted_thinking') reasoning.push({ content: '', signature: block.data });
        if (block.type === 'thinking') reasoning.push({ content: block.thinking });
        if (block.type.endsWith('_tool_use')  || block.type === 'tool_use') {
          names.set(block.id, block.name);
          say(`call ${block.id}`);
        }
        if (block.type.endsWith('_tool_result')) {
          results.set(block.tool_use_id, typeof block.content === 'string' ? block.content : JSON.stringify(block.content));
          say(`result ${block.tool_use_id}`);
        }
        break;
      }
      case 'content_block_delta': {
        const block = blocks.get(event.index)!;
        const delta = event.delta;
        if (delta.type === 'text_delta') text += delta.text;
        if (delta.type === 'text_delta' && delta.text !== '') say('text');
        if (delta.type === 'thinking_delta') reasoning.at(-1)!.content += delta.thinking;
        if (delta.type === 'signature_delta') reasoning.at(-1)!.signature = delta.signature;
        if (delta.type === 'input_json_delta') block.json += delta.partial_json;
        break;
      }
      case 'content_block_stop': {
        const block = blocks.get(event.index)!;
        if (names.has(block.id)) args.set(block.id, block.json === '' ? JSON.stringify(block.input) : block.json);
        break;
      }
      case 'message_delta':
        stopReason = event.delta.stop_reason;
        for (const [field, value] of Object.entries(event.usage ?? {})) if (typeof value === 'number') usage[field] = value;
        break;
      case 'error':
        error = event.error;
        break;
    }
  }
  const input = (usage.input_tokens ?? 0) + (usage.cache_creation_input_tokens ?? 0) + (usage.cache_read_input_tokens ?? 0);
  const tokenUsage = {
    inputTokens: input,
    outputTokens: usage.output_tokens,
    totalTokens: input + usage.output_tokens,
    ...(usage.cache_read_input_tokens === undefined ? {} : { cachedInputTokens: usage.cache_read_input_tokens }),
    ...(usage.cache_creation_input_tokens === undefined ? {} : { cacheWriteInputTokens: usage.cache_creation_input_tokens }),
    model,
  };
  return { text, reasoning, args, names, results, messageIds, order, usage: tokenUsage, stopReason, error };
}

/** What the client's messages say, in order, as `intent` lists it: text, each call, each result. */
function transcriptOrder(messages: readonly Message[]): string[] {
  const order: string[] = [];
  for (const message of messages) {
    if (message.role === 'assistant') {
      if ((message.content ?? '') !== '' && order.at(-1) !== 'text') order.push('text');
      for (const call of message.toolCalls ?? []) order.push(`call ${call.id}`);
    } else if (message.role === 'tool') order.push(`result ${message.toolCallId}`);
  }
  return order;
}

/** Runs one recorded stream through the adapter, toAgui and the official client, and checks that nothing the provider said is lost. */
async function checkRecording(path: string): Promise<void> {
  const inputs = await readInputs(path);
  expect(inputs).toEqual(dispatched(path));
  const expected = intent(inputs as Raw[]);

  const { onDiagnostic, messages: diagnostics } = diagnosticsSink();
  const events$: Observable<Event> = from(inputs).pipe(fromAnthropicMessages(), toAgui({ threadId: 'thread-1', runId: 'run-1', onDiagnostic }));
  const run = await runWithOracle(events$);
  const received = run.events as unknown as Event[];

  // One run, ended once, by the run's own ids; no repair needed.
  expect(received[0].type).toBe(EventType.RUN_STARTED);
  expect(terminals(received)).toEqual([received[received.length - 1]]);
  expect(received[received.length - 1]).toMatchObject({ type: EventType.RUN_FINISHED, threadId: 'thread-1', runId: 'run-1' });
  expect(diagnostics).toEqual([]);

  // The client's messages carry the provider's full text, each thinking block with its signature, and each call's exact arguments.
  const assistant = run.messages.filter((message) => message.role === 'assistant');
  expect(assistant.map((message) => (message as { content?: string }).content ?? '').join('')).toBe(expected.text);
  // One message, one assistant message named after it (none when it said nothing, as the refusal recording).
  if (expected.text !== '' || expected.names.size > 0) expect(assistant[0].id).toBe(expected.messageIds[0]);
  else expect(assistant).toEqual([]);
  const reasoning = run.messages.filter((message) => message.role === 'reasoning') as { id: string; content: string; encryptedValue?: string }[];
  expect(reasoning.map(({ content, encryptedValue }) => ({ content, ...(encryptedValue === undefined ? {} : { signature: encryptedValue }) }))).toEqual(expected.reasoning);
  for (const message of reasoning) expect(message.id).toMatch(new RegExp(`^${expected.messageIds[0]}-reasoning-\\d+$`));
  const calls = assistant.flatMap((message) => (message.role === 'assistant' ? (message.toolCalls ?? []) : []));
  expect(new Map(calls.map((call) => [call.id, call.function.arguments]))).toEqual(expected.args);
  expect(new Map(calls.map((call) => [call.id, call.function.name]))).toEqual(expected.names);
  for (const call of calls) expect(JSON.parse(call.function.arguments)).toEqual(JSON.parse(expected.args.get(call.id)!));
  const tools = run.messages.filter((message) => message.role === 'tool') as { toolCallId: string; content: string }[];
  expect(new Map(tools.map((message) => [message.toolCallId, message.content]))).toEqual(expected.results);
  // In the provider's order: a server tool's result after its call, and the text after the result after both.
  expect(transcriptOrder(run.messages)).toEqual(expected.order);

  // A refusal is said once, as CUSTOM.
  const customs = received.filter((event) => event.type === EventType.CUSTOM);
  expect(customs.map((event) => (event as { name: string }).name)).toEqual(expected.stopReason === 'refusal' ? ['anthropic.refusal'] : []);

  // The usage lands on RUN_FINISHED.
  const finished = received[received.length - 1] as Extract<Event, { type: EventType.RUN_FINISHED }>;
  expect(finished.usage).toEqual([expected.usage]);
}

/** Runs a stream that must fail through the same pipeline: the client accepts the run, which ends with RUN_ERROR and keeps the text before it. */
async function checkFailure(path: string, code: string, message: RegExp): Promise<void> {
  const inputs = await readInputs(path);
  const expected = intent(inputs as Raw[]);
  const events = await collect(from(inputs).pipe(fromAnthropicMessages(), toAgui({ threadId: 'thread-1', runId: 'run-1' })));
  const last = events[events.length - 1] as Extract<Event, { type: EventType.RUN_ERROR }>;
  expect(terminals(events)).toEqual([last]);
  expect(last).toMatchObject({ type: EventType.RUN_ERROR, code });
  expect(last.message).toMatch(message);
  // The text that came before the failure was delivered.
  const content = events.filter((event) => event.type === EventType.TEXT_MESSAGE_CONTENT).map((event) => (event as { delta: string }).delta);
  expect(content.join('')).toBe(expected.text);
  // The official client accepts the stream, ends the run with the error, and keeps the text that came before.
  const run = await runWithOracle(from(events));
  expect(run.events.at(-1)).toEqual(last);
  const assistant = run.messages.filter((message) => message.role === 'assistant');
  expect(assistant.map((message) => (message as { content?: string }).content ?? '').join('')).toBe(expected.text);
  // What was streamed of each call stays in the client's messages, as it came: nothing is held back.
  const calls = assistant.flatMap((message) => (message.role === 'assistant' ? (message.toolCalls ?? []) : []));
  expect(new Map(calls.map((call) => [call.id, call.function.arguments]))).toEqual(streamedArgs(inputs as Raw[]));
  // The usage the stream reported lands on RUN_ERROR.
  if (expected.usage.outputTokens !== undefined) expect((last as { usage?: unknown }).usage).toEqual([expected.usage]);
}

/** Each tool_use block's argument fragments, joined: what was streamed of each call. */
function streamedArgs(inputs: readonly Raw[]): Map<string, string> {
  const ids = new Map<number, string>();
  const args = new Map<string, string>();
  for (const event of inputs) {
    if (event.type === 'message_start') ids.clear();
    if (event.type === 'content_block_start' && event.content_block.type === 'tool_use') {
      ids.set(event.index, event.content_block.id);
      args.set(event.content_block.id, '');
    }
    const id = ids.get(event.index);
    if (event.type === 'content_block_delta' && event.delta.type === 'input_json_delta' && id !== undefined) args.set(id, args.get(id) + event.delta.partial_json);
  }
  return args;
}

const shared = fixtureFiles('anthropic-messages', suffixes);
const own = readdirSync(ownDir)
  .filter((name) => suffixes.some((suffix) => name.endsWith(suffix)))
  .sort();
const failing: Record<string, [string, RegExp]> = {
  'error-event.sse': ['PROVIDER_ERROR', /^Anthropic failed mid-stream: Overloaded \(overloaded_error\)\. Retry/],
  'truncated-mid-tool-use.sse': [
    'INCOMPLETE_STREAM',
    /^fromAnthropicMessages: the stream ended before message 'msg_01TruncatedToolUseA' did \(no message_delta with a stop_reason, no message_stop\) inside tool call 'toolu_01FerryCut00000001' \(book_ferry\), .* The connection was probably cut/,
  ],
  'truncated-after-tool-use-stop.sse': [
    'INCOMPLETE_STREAM',
    /^fromAnthropicMessages: the stream ended before message 'msg_01TruncatedAfterStop' did \(no message_delta with a stop_reason, no message_stop\) inside tool call 'toolu_01TidesCutStop000001' \(tide_table\), .* The connection was probably cut/,
  ],
  'truncated-mid-text.sse': [
    'INCOMPLETE_STREAM',
    /^fromAnthropicMessages: the stream ended before message 'msg_01TruncatedMidText00' did \(no message_delta with a stop_reason, no message_stop\), so the model's output may be cut short\. The text before it is kept\. The connection was probably cut/,
  ],
  'max-tokens-in-tool-use.sse': [
    'INCOMPLETE_STREAM',
    /^fromAnthropicMessages: the model's output was cut by its max_tokens limit \(stop_reason: max_tokens\) inside tool call 'toolu_01NotesCutOpen000001' \(write_notes\), .* Raise max_tokens/,
  ],
  'max-tokens-after-tool-use-stop.sse': [
    'INCOMPLETE_STREAM',
    /^fromAnthropicMessages: the model's output was cut by its max_tokens limit \(stop_reason: max_tokens\) inside tool call 'toolu_01ItinCutStopped0001' \(save_itinerary\), .* Raise max_tokens/,
  ],
};

// A user's own clone has no ../shared: the skip says why, in the suite's own name.
(haveFixtures ? describe : describe.skip)(
  `recorded Anthropic Messages streams through fromAnthropicMessages, toAgui and the official client${haveFixtures ? '' : ' (skipped: ../shared/fixtures is absent)'}`,
  () => {
    it('should find the recordings', () => {
      expect(shared.length).toBeGreaterThanOrEqual(7);
    });

    it.each(shared)('should keep the text, reasoning, tool arguments, results and usage of %s', (name) => checkRecording(join(sharedDir, name)));
  },
);

describe('our own Anthropic Messages fixtures through fromAnthropicMessages, toAgui and the official client', () => {
  it('should find them', () => {
    expect(own).toEqual([
      'error-event.sse',
      'max-tokens-after-tool-use-stop.sse',
      'max-tokens-in-tool-use.sse',
      'max-tokens.sse',
      'redacted-thinking.sse',
      'refusal-after-text.sse',
      'server-tools.sse',
      'thinking-signature.sse',
      'tool-no-args.sse',
      'truncated-after-tool-use-stop.sse',
      'truncated-mid-text.sse',
      'truncated-mid-tool-use.sse',
      'two-tool-uses.sse',
    ]);
  });

  it.each(own.filter((name) => !(name in failing)))('should keep the text, reasoning, tool arguments, results and usage of %s', (name) => checkRecording(join(ownDir, name)));

  it.each(Object.keys(failing))('should end %s with RUN_ERROR, after the text that came before', (name) => checkFailure(join(ownDir, name), ...failing[name]));

  it('should really hold the edge cases they are named after', () => {
    const events = (name: string) => readNaively(join(ownDir, name));
    const blockTypes = (name: string) => events(name).filter((event) => event.type === 'content_block_start').map((event) => event.content_block.type);
    const deltaTypes = (name: string) => events(name).filter((event) => event.type === 'content_block_delta').map((event) => event.delta.type);
    const stopReason = (name: string) => events(name).find((event) => event.type === 'message_delta')?.delta.stop_reason;
    expect(blockTypes('two-tool-uses.sse')).toEqual(['text', 'tool_use', 'tool_use']);
    expect(blockTypes('tool-no-args.sse')).toEqual(['text', 'tool_use']);
    expect(deltaTypes('tool-no-args.sse')).toEqual(['text_delta']);
    expect(blockTypes('thinking-signature.sse')).toEqual(['thinking', 'text']);
    expect(deltaTypes('thinking-signature.sse')).toContain('signature_delta');
    expect(events('thinking-signature.sse')[0].message.usage).toMatchObject({ cache_creation_input_tokens: 1800, cache_read_input_tokens: 2048 });
    expect(blockTypes('redacted-thinking.sse')).toEqual(['redacted_thinking', 'thinking', 'text']);
    expect(stopReason('refusal-after-text.sse')).toBe('refusal');
    expect(deltaTypes('refusal-after-text.sse')).toContain('text_delta');
    expect(stopReason('max-tokens.sse')).toBe('max_tokens');
    // The cut: max_tokens while the last tool_use block's arguments are not whole JSON, its block stopped in one file and not in the other.
    for (const name of ['max-tokens-in-tool-use.sse', 'max-tokens-after-tool-use-stop.sse']) {
      expect(stopReason(name)).toBe('max_tokens');
      expect(blockTypes(name)).toEqual(['text', 'tool_use']);
      expect(events(name).at(-1)).toEqual({ type: 'message_stop' });
      const json = events(name).filter((event) => event.type === 'content_block_delta' && event.index === 1).map((event) => event.delta.partial_json).join('');
      expect(() => JSON.parse(json)).toThrow();
    }
    expect(events('max-tokens-in-tool-use.sse').some((event) => event.type === 'content_block_stop' && event.index === 1)).toBe(false);
    expect(events('max-tokens-after-tool-use-stop.sse').some((event) => event.type === 'content_block_stop' && event.index === 1)).toBe(true);
    expect(events('error-event.sse').at(-1)).toMatchObject({ type: 'error', error: { type: 'overloaded_error' } });
    const truncated = events('truncated-mid-tool-use.sse');
    expect(truncated.at(-1)).toMatchObject({ type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta' } });
    expect(truncated.some((event) => event.type === 'message_stop' || (event.type === 'content_block_stop' && event.index === 1))).toBe(false);
    // Cut after the call's block stopped, and cut in text: no stop_reason, no message_stop.
    const afterStop = events('truncated-after-tool-use-stop.sse');
    expect(afterStop.at(-1)).toEqual({ type: 'content_block_stop', index: 1 });
    expect(() => JSON.parse(afterStop.filter((event) => event.type === 'content_block_delta' && event.index === 1).map((event) => event.delta.partial_json).join(''))).toThrow();
    const midText = events('truncated-mid-text.sse');
    expect(midText.at(-1)).toMatchObject({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta' } });
    for (const cut of [afterStop, midText]) expect(cut.some((event) => event.type === 'message_delta' || event.type === 'message_stop')).toBe(false);
    expect(blockTypes('server-tools.sse')).toEqual(['text', 'server_tool_use', 'web_search_tool_result', 'text', 'mcp_tool_use', 'mcp_tool_result', 'text']);
    expect(deltaTypes('server-tools.sse')).toContain('citations_delta');
  });
});
