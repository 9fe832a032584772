import type { Event } from '@ag-ui/core';
import { from, type Observable, type OperatorFunction } from 'rxjs';
import { fromAiSdkStream } from '../../../lib/adapters/fromAiSdkStream.js';
import { fromAnthropicMessages } from '../../../lib/adapters/fromAnthropicMessages.js';
import { fromLangChainStreamEvents } from '../../../lib/adapters/fromLangChainStreamEvents.js';
import { fromLangGraphStream } from '../../../lib/adapters/fromLangGraphStream.js';
import { fromOpenAIChatCompletions } from '../../../lib/adapters/fromOpenAIChatCompletions.js';
import { fromOpenAIResponses } from '../../../lib/adapters/fromOpenAIResponses.js';
import type { AgentEvent } from '../../../lib/protocol/agentEvent.js';
import { toAgui } from '../../../operators/toAgui.js';
import { runWithOracle } from '../../support/oracle.js';

// Issue 17, target 3: one tool call, text or reasoning message of many chunks costs the same per
// chunk as a short one. Pinned by counting work, never by timing: the characters handed to
// JSON.parse, to regular expressions and to the string searches that could re-read a growing
// buffer, for 1k chunks and for 16k chunks of the same shape.

type Shape = 'braces' | 'quoted';
type Input = unknown;

/** `braces`: every prefix ends in `}` as a whole object would; `quoted`: every prefix ends in `}` inside a string. */
function fragments(shape: Shape, n: number): string[] {
  return Array.from({ length: n }, (_, i) => {
    if (shape === 'braces') return i === 0 ? '{"items":[{"a":0}' : i === n - 1 ? ']}' : `,{"a":${i}}`;
    return i === 0 ? '{"s":"' : i === n - 1 ? '"}' : 'x}';
  });
}
const words = (n: number) => Array.from({ length: n }, (_, i) => (i % 7 === 6 ? 'end. ' : 'word '));

const completion = (delta: Record<string, unknown>, finish: string | null = null) => ({ id: 'cmpl-1', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta, finish_reason: finish }] });
const response = (status: string) => ({ id: 'resp_1', object: 'response', status, model: 'm', output: [] });
const anthropicMessage = (block: Record<string, unknown>, deltas: Record<string, unknown>[], stopReason: string) => [
  { type: 'message_start', message: { id: 'msg_1', type: 'message', role: 'assistant', model: 'm', content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 1, output_tokens: 1 } } },
  { type: 'content_block_start', index: 0, content_block: block },
  ...deltas.map((delta) => ({ type: 'content_block_delta', index: 0, delta })),
  { type: 'content_block_stop', index: 0 },
  { type: 'message_delta', delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: 1 } },
  { type: 'message_stop' },
];
const lcEvent = (chunk: Record<string, unknown>) => ({ event: 'on_chat_model_stream', name: 'ChatOpenAI', run_id: 'run-m1', tags: [], metadata: { langgraph_node: 'agent' }, data: { chunk: { id: 'lc_1', ...chunk } } });
const lcPiece = (args: string, i: number) => ({ type: 'tool_call_chunk', index: 0, args, ...(i === 0 ? { id: 'call_1', name: 'search' } : {}) });
const lgMessage = (kwargs: Record<string, unknown>) => [
  'messages',
  [{ lc: 1, type: 'constructor', id: ['langchain_core', 'messages', 'AIMessageChunk'], kwargs: { id: 'run-1', tool_call_chunks: [], additional_kwargs: {}, ...kwargs } }, { langgraph_node: 'agent' }],
];

interface Case {
  name: string;
  make: (n: number) => Input[];
  adapter?: () => OperatorFunction<never, AgentEvent>;
}

const toolCases = (shape: Shape): Case[] => [
  { name: `TOOL_CALL_CHUNK, id and name on every chunk, ${shape}`, make: (n) => fragments(shape, n).map((delta) => ({ type: 'TOOL_CALL_CHUNK', toolCallId: 'c1', toolCallName: 'search', delta })) },
  { name: `TOOL_CALL_CHUNK, id and name on the first only, ${shape}`, make: (n) => fragments(shape, n).map((delta, i) => ({ type: 'TOOL_CALL_CHUNK', ...(i === 0 ? { toolCallId: 'c1', toolCallName: 'search' } : {}), delta })) },
  { name: `TOOL_CALL_CHUNK, no id, name on the first, ${shape}`, make: (n) => fragments(shape, n).map((delta, i) => ({ type: 'TOOL_CALL_CHUNK', ...(i === 0 ? { toolCallName: 'search' } : {}), delta })) },
  {
    name: `TOOL_CALL_START/ARGS/END, ${shape}`,
    make: (n) => [{ type: 'TOOL_CALL_START', toolCallId: 'c1', toolCallName: 'search' }, ...fragments(shape, n).map((delta) => ({ type: 'TOOL_CALL_ARGS', toolCallId: 'c1', delta })), { type: 'TOOL_CALL_END', toolCallId: 'c1' }],
  },
  {
    name: `fromOpenAIChatCompletions tool call, id and name on every piece, ${shape}`,
    adapter: fromOpenAIChatCompletions,
    make: (n) => [...fragments(shape, n).map((args) => completion({ tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'search', arguments: args } }] })), completion({}, 'tool_calls'), '[DONE]'],
  },
  {
    name: `fromOpenAIChatCompletions tool call, no id, ${shape}`,
    adapter: fromOpenAIChatCompletions,
    make: (n) => [...fragments(shape, n).map((args, i) => completion({ tool_calls: [{ index: 0, function: i === 0 ? { name: 'search', arguments: args } : { arguments: args } }] })), completion({}, 'tool_calls'), '[DONE]'],
  },
  {
    name: `fromOpenAIResponses function call, deltas then .done, ${shape}`,
    adapter: fromOpenAIResponses,
    make: (n) => {
      const parts = fragments(shape, n);
      const whole = parts.join('');
      return [
        { type: 'response.created', response: response('in_progress') },
        { type: 'response.output_item.added', output_index: 0, item: { type: 'function_call', id: 'fc_0', call_id: 'call_1', name: 'search', arguments: '', status: 'in_progress' } },
        ...parts.map((delta) => ({ type: 'response.function_call_arguments.delta', item_id: 'fc_0', output_index: 0, delta })),
        { type: 'response.function_call_arguments.done', item_id: 'fc_0', output_index: 0, arguments: whole },
        { type: 'response.output_item.done', output_index: 0, item: { type: 'function_call', id: 'fc_0', call_id: 'call_1', name: 'search', arguments: whole, status: 'completed' } },
        { type: 'response.completed', response: response('completed') },
      ];
    },
  },
  {
    name: `fromAnthropicMessages input_json_delta, ${shape}`,
    adapter: fromAnthropicMessages,
    make: (n) => anthropicMessage({ type: 'tool_use', id: 'toolu_1', name: 'search', input: {} }, fragments(shape, n).map((partial_json) => ({ type: 'input_json_delta', partial_json })), 'tool_use'),
  },
  {
    name: `fromAiSdkStream tool-input-delta, ${shape}`,
    adapter: fromAiSdkStream,
    make: (n) => {
      const parts = fragments(shape, n);
      return [
        { type: 'tool-input-start', toolCallId: 'c1', toolName: 'search' },
        ...parts.map((inputTextDelta) => ({ type: 'tool-input-delta', toolCallId: 'c1', inputTextDelta })),
        { type: 'tool-input-end', toolCallId: 'c1' },
        { type: 'tool-call', toolCallId: 'c1', toolName: 'search', input: JSON.parse(parts.join('')) },
      ];
    },
  },
  { name: `fromLangChainStreamEvents tool_call_chunks, ${shape}`, adapter: fromLangChainStreamEvents, make: (n) => fragments(shape, n).map((args, i) => lcEvent({ content: '', tool_call_chunks: [lcPiece(args, i)] })) },
  { name: `fromLangGraphStream tool_call_chunks, ${shape}`, adapter: fromLangGraphStream, make: (n) => fragments(shape, n).map((args, i) => lgMessage({ content: [], tool_call_chunks: [lcPiece(args, i)] })) },
];

const responsesText = (kind: 'text' | 'reasoning') => (n: number) => {
  const parts = words(n);
  const whole = parts.join('');
  const [added, delta, done, itemDone] =
    kind === 'text'
      ? [
          { type: 'message', id: 'msg_1', role: 'assistant', status: 'in_progress', content: [] },
          (d: string) => ({ type: 'response.output_text.delta', item_id: 'msg_1', output_index: 0, content_index: 0, delta: d }),
          { type: 'response.output_text.done', item_id: 'msg_1', output_index: 0, content_index: 0, text: whole },
          { type: 'message', id: 'msg_1', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: whole, annotations: [] }] },
        ]
      : [
          { type: 'reasoning', id: 'rs_1', summary: [] },
          (d: string) => ({ type: 'response.reasoning_summary_text.delta', item_id: 'rs_1', output_index: 0, summary_index: 0, delta: d }),
          { type: 'response.reasoning_summary_text.done', item_id: 'rs_1', output_index: 0, summary_index: 0, text: whole },
          { type: 'reasoning', id: 'rs_1', summary: [{ type: 'summary_text', text: whole }] },
        ];
  return [
    { type: 'response.created', response: response('in_progress') },
    { type: 'response.output_item.added', output_index: 0, item: added },
    ...parts.map(delta as (d: string) => unknown),
    done,
    { type: 'response.output_item.done', output_index: 0, item: itemDone },
    { type: 'response.completed', response: response('completed') },
  ];
};

const cases: Case[] = [
  ...toolCases('braces'),
  ...toolCases('quoted'),
  { name: 'TEXT_MESSAGE_CHUNK', make: (n) => words(n).map((delta) => ({ type: 'TEXT_MESSAGE_CHUNK', messageId: 'm1', delta })) },
  {
    name: 'TEXT_MESSAGE_START/CONTENT/END',
    make: (n) => [{ type: 'TEXT_MESSAGE_START', messageId: 'm1', role: 'assistant' }, ...words(n).map((delta) => ({ type: 'TEXT_MESSAGE_CONTENT', messageId: 'm1', delta })), { type: 'TEXT_MESSAGE_END', messageId: 'm1' }],
  },
  { name: 'REASONING_MESSAGE_CHUNK', make: (n) => words(n).map((delta) => ({ type: 'REASONING_MESSAGE_CHUNK', messageId: 'r1', delta })) },
  { name: 'fromOpenAIChatCompletions text', adapter: fromOpenAIChatCompletions, make: (n) => [...words(n).map((content) => completion({ content })), completion({}, 'stop'), '[DONE]'] },
  {
    name: 'fromOpenAIChatCompletions reasoning_content',
    adapter: fromOpenAIChatCompletions,
    make: (n) => [...words(n).map((reasoning_content) => completion({ reasoning_content })), completion({ content: 'ok' }), completion({}, 'stop'), '[DONE]'],
  },
  { name: 'fromOpenAIResponses text, deltas then .done', adapter: fromOpenAIResponses, make: responsesText('text') },
  { name: 'fromOpenAIResponses reasoning summary, deltas then .done', adapter: fromOpenAIResponses, make: responsesText('reasoning') },
  { name: 'fromAnthropicMessages text_delta', adapter: fromAnthropicMessages, make: (n) => anthropicMessage({ type: 'text', text: '' }, words(n).map((text) => ({ type: 'text_delta', text })), 'end_turn') },
  {
    name: 'fromAnthropicMessages thinking_delta',
    adapter: fromAnthropicMessages,
    make: (n) => anthropicMessage({ type: 'thinking', thinking: '', signature: '' }, words(n).map((thinking) => ({ type: 'thinking_delta', thinking })), 'end_turn'),
  },
  { name: 'fromAiSdkStream text-delta', adapter: fromAiSdkStream, make: (n) => [{ type: 'text-start', id: 't1' }, ...words(n).map((delta) => ({ type: 'text-delta', id: 't1', delta })), { type: 'text-end', id: 't1' }] },
  {
    name: 'fromAiSdkStream reasoning-delta',
    adapter: fromAiSdkStream,
    make: (n) => [{ type: 'reasoning-start', id: 'r1' }, ...words(n).map((delta) => ({ type: 'reasoning-delta', id: 'r1', delta })), { type: 'reasoning-end', id: 'r1' }],
  },
  { name: 'fromLangChainStreamEvents text', adapter: fromLangChainStreamEvents, make: (n) => words(n).map((content) => lcEvent({ content })) },
  { name: 'fromLangChainStreamEvents thinking blocks', adapter: fromLangChainStreamEvents, make: (n) => words(n).map((thinking) => lcEvent({ content: [{ type: 'thinking', thinking }] })) },
  { name: 'fromLangGraphStream text', adapter: fromLangGraphStream, make: (n) => words(n).map((content) => lgMessage({ content })) },
];

const pipeline = (c: Case, inputs: Input[]): Observable<Event> => {
  const source = from(inputs as never[]);
  const events = c.adapter === undefined ? (source as Observable<AgentEvent>) : source.pipe(c.adapter());
  return events.pipe(toAgui({ threadId: 'thread-1', runId: 'run-1', onDiagnostic: () => {} }));
};

/** The work a run does that could grow with what came before: characters given to JSON.parse, regular expressions and string searches. */
interface Work {
  parses: number;
  parsed: number;
  matched: number;
  searched: number;
}

/** Runs `c` with `n` chunks (inputs built before counting) and counts its work. */
function countWork(c: Case, n: number): Work {
  const inputs = c.make(n);
  const work: Work = { parses: 0, parsed: 0, matched: 0, searched: 0 };
  const parse = JSON.parse;
  const exec = RegExp.prototype.exec;
  const searches = ['startsWith', 'endsWith', 'includes', 'indexOf', 'lastIndexOf'] as const;
  const originals = searches.map((name) => String.prototype[name]);
  JSON.parse = function (this: unknown, text: string, reviver?: never) {
    work.parses++;
    work.parsed += String(text).length;
    return parse.call(JSON, text, reviver);
  } as typeof JSON.parse;
  // `test`, `match`, `replace` and `split` with a regular expression all go through `exec` once it is replaced.
  RegExp.prototype.exec = function (this: RegExp, text: string) {
    work.matched += String(text).length;
    return exec.call(this, text);
  };
  searches.forEach((name, i) => {
    const original = originals[i] as (this: string, ...args: unknown[]) => unknown;
    (String.prototype as unknown as Record<string, unknown>)[name] = function (this: string, ...args: unknown[]) {
      work.searched += this.length;
      return original.apply(this, args);
    };
  });
  let failure: unknown;
  let finished = false;
  try {
    pipeline(c, inputs).subscribe({ next: (e) => (finished = e.type === 'RUN_FINISHED'), error: (error) => (failure = error) });
  } finally {
    JSON.parse = parse;
    RegExp.prototype.exec = exec;
    searches.forEach((name, i) => ((String.prototype as unknown as Record<string, unknown>)[name] = originals[i]));
  }
  if (failure !== undefined) throw failure;
  expect(finished).toBe(true);
  return work;
}

describe('linearity (issue 17, target 3): work per chunk does not grow with the message', () => {
  const small = 1000;
  const large = 16_000;
  const factor = large / small;

  it.each(cases.map((c) => [c.name, c] as const))('should read each chunk a bounded number of times: %s', (_, c) => {
    const few = countWork(c, small);
    const many = countWork(c, large);
    // Linear: 16x the chunks, at most 2 x 16x the work (a re-read of the whole buffer per chunk is 256x).
    for (const key of ['parses', 'parsed', 'matched', 'searched'] as const) {
      expect({ key, many: many[key] }).toEqual({ key, many: expect.any(Number) });
      if (many[key] > 2 * factor * Math.max(few[key], 1)) {
        throw new Error(`${c.name}: ${key} grew from ${few[key]} at ${small} chunks to ${many[key]} at ${large} chunks (over ${2 * factor}x)`);
      }
    }
    // JSON.parse is given each argument text about once (whole arguments, once they may be complete).
    const totalChars = c.make(large).reduce<number>((sum, input) => sum + JSON.stringify(input).length, 0);
    expect(many.parsed).toBeLessThanOrEqual(2 * totalChars);
  });

  it.each(cases.map((c) => [c.name, c] as const))('should give the official client a well-formed run: %s', async (_, c) => {
    const run = await runWithOracle(pipeline(c, c.make(50)));
    expect(run.messages.length).toBeGreaterThan(0);
  });
});
