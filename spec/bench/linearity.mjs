// Item 17: no superlinear path. One tool call, one text message or one reasoning message of 64k
// chunks must cost at most 2x per chunk what one of 1k chunks costs, for every chunk shape toAgui
// takes and every adapter that streams arguments or text produces (adapter → toAgui).
import { fromAiSdkStream, fromAnthropicMessages, fromLangChainStreamEvents, fromLangGraphStream, fromOpenAIChatCompletions, fromOpenAIResponses } from 'agui-rx/adapters';
import { toAgui } from 'agui-rx';
import { from } from 'rxjs';
import { measure, row } from './harness.mjs';
import { collectSync, drain, runOptions } from './workloads.mjs';

export const name = 'linearity';

/**
 * Argument fragments of one call, `n` of them, making one JSON object:
 * `words`: `{"query":"` then words then `"}`;
 * `braces`: `{"items":[{"a":0}` then `,{"a":1}`… then `]}` (every prefix ends in `}`, as a complete object would);
 * `quoted`: `{"s":"` then `x}`… then `"}` (every prefix ends in `}`, but inside a string).
 */
export function fragments(shape, n) {
  const out = new Array(n);
  for (let i = 0; i < n; i++) {
    if (shape === 'words') out[i] = i === 0 ? '{"query":"' : i === n - 1 ? '"}' : 'word ';
    else if (shape === 'braces') out[i] = i === 0 ? '{"items":[{"a":0}' : i === n - 1 ? ']}' : `,{"a":${i}}`;
    else out[i] = i === 0 ? '{"s":"' : i === n - 1 ? '"}' : 'x}';
  }
  return out;
}

const words = (n) => Array.from({ length: n }, (_, i) => (i % 7 === 6 ? 'end. ' : 'word '));

// toAgui's own input shapes.
const chunk = (type, fields) => ({ type, ...fields });
const agui = {
  toolChunkNamed: (shape) => (n) => fragments(shape, n).map((delta) => chunk('TOOL_CALL_CHUNK', { toolCallId: 'c1', toolCallName: 'search', delta })),
  toolChunkFirstId: (shape) => (n) => fragments(shape, n).map((delta, i) => chunk('TOOL_CALL_CHUNK', i === 0 ? { toolCallId: 'c1', toolCallName: 'search', delta } : { delta })),
  toolChunkNoId: (shape) => (n) => fragments(shape, n).map((delta, i) => chunk('TOOL_CALL_CHUNK', i === 0 ? { toolCallName: 'search', delta } : { delta })),
  toolStartArgsEnd: (shape) => (n) => [
    chunk('TOOL_CALL_START', { toolCallId: 'c1', toolCallName: 'search' }),
    ...fragments(shape, n).map((delta) => chunk('TOOL_CALL_ARGS', { toolCallId: 'c1', delta })),
    chunk('TOOL_CALL_END', { toolCallId: 'c1' }),
  ],
  textChunk: (n) => words(n).map((delta) => chunk('TEXT_MESSAGE_CHUNK', { messageId: 'm1', delta })),
  textStartContentEnd: (n) => [
    chunk('TEXT_MESSAGE_START', { messageId: 'm1', role: 'assistant' }),
    ...words(n).map((delta) => chunk('TEXT_MESSAGE_CONTENT', { messageId: 'm1', delta })),
    chunk('TEXT_MESSAGE_END', { messageId: 'm1' }),
  ],
  reasoningChunk: (n) => words(n).map((delta) => chunk('REASONING_MESSAGE_CHUNK', { messageId: 'r1', delta })),
};

// Chat Completions chunks (OpenAI, Mistral and other compatible servers).
const completion = (delta, finish = null) => ({ id: 'cmpl-1', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta, finish_reason: finish }] });
const chat = {
  text: (n) => [...words(n).map((content) => completion({ content })), completion({}, 'stop'), '[DONE]'],
  reasoning: (n) => [...words(n).map((reasoning_content) => completion({ reasoning_content })), completion({ content: 'ok' }), completion({}, 'stop'), '[DONE]'],
  // Mistral's content parts: thinking that holds text parts.
  thinkingParts: (n) => [...words(n).map((text) => completion({ content: [{ type: 'thinking', thinking: [{ type: 'text', text }] }] })), completion({}, 'stop'), '[DONE]'],
  // id and name on the first piece, the index only after (OpenAI).
  tool: (shape) => (n) => [
    ...fragments(shape, n).map((args, i) => completion({ tool_calls: [{ index: 0, ...(i === 0 ? { id: 'call_1', type: 'function', function: { name: 'search', arguments: args } } : { function: { arguments: args } }) }] })),
    completion({}, 'tool_calls'),
    '[DONE]',
  ],
  // id and name on every piece (some compatible servers).
  toolNamed: (shape) => (n) => [
    ...fragments(shape, n).map((args) => completion({ tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'search', arguments: args } }] })),
    completion({}, 'tool_calls'),
    '[DONE]',
  ],
  // No id at all (the adapter mints one).
  toolNoId: (shape) => (n) => [
    ...fragments(shape, n).map((args, i) => completion({ tool_calls: [{ index: 0, function: i === 0 ? { name: 'search', arguments: args } : { arguments: args } }] })),
    completion({}, 'tool_calls'),
    '[DONE]',
  ],
};

// Responses API events: deltas, then the whole text (`.done`, the item done) that must not be sent twice.
const response = (status) => ({ id: 'resp_1', object: 'response', status, model: 'm', output: [] });
const responses = {
  text: (n) => {
    const parts = words(n);
    const whole = parts.join('');
    return [
      { type: 'response.created', response: response('in_progress') },
      { type: 'response.output_item.added', output_index: 0, item: { type: 'message', id: 'msg_1', role: 'assistant', status: 'in_progress', content: [] } },
      ...parts.map((delta) => ({ type: 'response.output_text.delta', item_id: 'msg_1', output_index: 0, content_index: 0, delta })),
      { type: 'response.output_text.done', item_id: 'msg_1', output_index: 0, content_index: 0, text: whole },
      { type: 'response.output_item.done', output_index: 0, item: { type: 'message', id: 'msg_1', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: whole, annotations: [] }] } },
      { type: 'response.completed', response: response('completed') },
    ];
  },
  reasoning: (n) => {
    const parts = words(n);
    const whole = parts.join('');
    return [
      { type: 'response.created', response: response('in_progress') },
      { type: 'response.output_item.added', output_index: 0, item: { type: 'reasoning', id: 'rs_1', summary: [] } },
      ...parts.map((delta) => ({ type: 'response.reasoning_summary_text.delta', item_id: 'rs_1', output_index: 0, summary_index: 0, delta })),
      { type: 'response.reasoning_summary_text.done', item_id: 'rs_1', output_index: 0, summary_index: 0, text: whole },
      { type: 'response.output_item.done', output_index: 0, item: { type: 'reasoning', id: 'rs_1', summary: [{ type: 'summary_text', text: whole }] } },
      { type: 'response.completed', response: response('completed') },
    ];
  },
  tool: (shape) => (n) => {
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
};

// Anthropic Messages events.
const anthropicMessage = (block, deltas, stopReason) => [
  { type: 'message_start', message: { id: 'msg_1', type: 'message', role: 'assistant', model: 'm', content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 1, output_tokens: 1 } } },
  { type: 'content_block_start', index: 0, content_block: block },
  ...deltas.map((delta) => ({ type: 'content_block_delta', index: 0, delta })),
  { type: 'content_block_stop', index: 0 },
  { type: 'message_delta', delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: 1 } },
  { type: 'message_stop' },
];
const anthropic = {
  text: (n) => anthropicMessage({ type: 'text', text: '' }, words(n).map((text) => ({ type: 'text_delta', text })), 'end_turn'),
  thinking: (n) => anthropicMessage({ type: 'thinking', thinking: '', signature: '' }, words(n).map((thinking) => ({ type: 'thinking_delta', thinking })), 'end_turn'),
  tool: (shape) => (n) => anthropicMessage({ type: 'tool_use', id: 'toolu_1', name: 'search', input: {} }, fragments(shape, n).map((partial_json) => ({ type: 'input_json_delta', partial_json })), 'tool_use'),
};

// AI SDK stream parts.
const aiSdk = {
  text: (n) => [{ type: 'text-start', id: 't1' }, ...words(n).map((delta) => ({ type: 'text-delta', id: 't1', delta })), { type: 'text-end', id: 't1' }],
  reasoning: (n) => [{ type: 'reasoning-start', id: 'r1' }, ...words(n).map((delta) => ({ type: 'reasoning-delta', id: 'r1', delta })), { type: 'reasoning-end', id: 'r1' }],
  tool: (shape) => (n) => {
    const parts = fragments(shape, n);
    return [
      { type: 'tool-input-start', toolCallId: 'c1', toolName: 'search' },
      ...parts.map((inputTextDelta) => ({ type: 'tool-input-delta', toolCallId: 'c1', inputTextDelta })),
      { type: 'tool-input-end', toolCallId: 'c1' },
      { type: 'tool-call', toolCallId: 'c1', toolName: 'search', input: JSON.parse(parts.join('')) },
    ];
  },
};

// LangChain streamEvents v2 and LangGraph `messages` stream parts.
const lcEvent = (chunk) => ({ event: 'on_chat_model_stream', name: 'ChatOpenAI', run_id: 'run-m1', tags: [], metadata: { langgraph_node: 'agent' }, data: { chunk: { id: 'lc_1', ...chunk } } });
const lcPiece = (args, i) => ({ type: 'tool_call_chunk', index: 0, args, ...(i === 0 ? { id: 'call_1', name: 'search' } : {}) });
const langChain = {
  text: (n) => words(n).map((content) => lcEvent({ content })),
  reasoning: (n) => words(n).map((thinking) => lcEvent({ content: [{ type: 'thinking', thinking }] })),
  tool: (shape) => (n) => fragments(shape, n).map((args, i) => lcEvent({ content: '', tool_call_chunks: [lcPiece(args, i)] })),
};
const lgMessage = (kwargs) => ['messages', [{ lc: 1, type: 'constructor', id: ['langchain_core', 'messages', 'AIMessageChunk'], kwargs: { id: 'run-1', tool_call_chunks: [], additional_kwargs: {}, ...kwargs } }, { langgraph_node: 'agent' }]];
const langGraph = {
  text: (n) => words(n).map((content) => lgMessage({ content })),
  tool: (shape) => (n) => fragments(shape, n).map((args, i) => lgMessage({ content: [], tool_call_chunks: [lcPiece(args, i)] })),
};

const direct = () => (source$) => source$.pipe(toAgui(runOptions()));
const through = (adapter) => () => (source$) => source$.pipe(adapter(), toAgui(runOptions()));

/**
 * Every case: a name, what grows (`tool`, `text`, `reasoning`), the inputs for `n` chunks, and the
 * pipeline. Exported for the spec that counts work (spec/lib/tracking/linearity.spec.ts reads the
 * same shapes through the sources).
 */
export const cases = [
  ...['words', 'braces', 'quoted'].flatMap((shape) => [
    { name: `toAgui TOOL_CALL_CHUNK, id and name on every chunk, ${shape}`, grows: 'TOOL_CALL_ARGS', make: agui.toolChunkNamed(shape), pipe: direct },
    { name: `toAgui TOOL_CALL_CHUNK, id and name on the first only, ${shape}`, grows: 'TOOL_CALL_ARGS', make: agui.toolChunkFirstId(shape), pipe: direct },
  ]),
  { name: 'toAgui TOOL_CALL_CHUNK, no id, name on the first, braces', grows: 'TOOL_CALL_ARGS', make: agui.toolChunkNoId('braces'), pipe: direct },
  { name: 'toAgui TOOL_CALL_START/ARGS/END, quoted', grows: 'TOOL_CALL_ARGS', make: agui.toolStartArgsEnd('quoted'), pipe: direct },
  { name: 'toAgui TEXT_MESSAGE_CHUNK', grows: 'TEXT_MESSAGE_CONTENT', make: agui.textChunk, pipe: direct },
  { name: 'toAgui TEXT_MESSAGE_START/CONTENT/END', grows: 'TEXT_MESSAGE_CONTENT', make: agui.textStartContentEnd, pipe: direct },
  { name: 'toAgui REASONING_MESSAGE_CHUNK', grows: 'REASONING_MESSAGE_CONTENT', make: agui.reasoningChunk, pipe: direct },
  { name: 'fromOpenAIChatCompletions text', grows: 'TEXT_MESSAGE_CONTENT', make: chat.text, pipe: through(fromOpenAIChatCompletions) },
  { name: 'fromOpenAIChatCompletions reasoning_content', grows: 'REASONING_MESSAGE_CONTENT', make: chat.reasoning, pipe: through(fromOpenAIChatCompletions) },
  { name: 'fromOpenAIChatCompletions thinking parts (Mistral)', grows: 'REASONING_MESSAGE_CONTENT', make: chat.thinkingParts, pipe: through(fromOpenAIChatCompletions) },
  { name: 'fromOpenAIChatCompletions tool call, id and name first, braces', grows: 'TOOL_CALL_ARGS', make: chat.tool('braces'), pipe: through(fromOpenAIChatCompletions) },
  { name: 'fromOpenAIChatCompletions tool call, id and name on every piece, quoted', grows: 'TOOL_CALL_ARGS', make: chat.toolNamed('quoted'), pipe: through(fromOpenAIChatCompletions) },
  { name: 'fromOpenAIChatCompletions tool call, no id, braces', grows: 'TOOL_CALL_ARGS', make: chat.toolNoId('braces'), pipe: through(fromOpenAIChatCompletions) },
  { name: 'fromOpenAIResponses text, deltas then .done', grows: 'TEXT_MESSAGE_CONTENT', make: responses.text, pipe: through(fromOpenAIResponses) },
  { name: 'fromOpenAIResponses reasoning summary, deltas then .done', grows: 'REASONING_MESSAGE_CONTENT', make: responses.reasoning, pipe: through(fromOpenAIResponses) },
  { name: 'fromOpenAIResponses function call, deltas then .done, braces', grows: 'TOOL_CALL_ARGS', make: responses.tool('braces'), pipe: through(fromOpenAIResponses) },
  { name: 'fromOpenAIResponses function call, deltas then .done, quoted', grows: 'TOOL_CALL_ARGS', make: responses.tool('quoted'), pipe: through(fromOpenAIResponses) },
  { name: 'fromAnthropicMessages text_delta', grows: 'TEXT_MESSAGE_CONTENT', make: anthropic.text, pipe: through(fromAnthropicMessages) },
  { name: 'fromAnthropicMessages thinking_delta', grows: 'REASONING_MESSAGE_CONTENT', make: anthropic.thinking, pipe: through(fromAnthropicMessages) },
  { name: 'fromAnthropicMessages input_json_delta, braces', grows: 'TOOL_CALL_ARGS', make: anthropic.tool('braces'), pipe: through(fromAnthropicMessages) },
  { name: 'fromAnthropicMessages input_json_delta, quoted', grows: 'TOOL_CALL_ARGS', make: anthropic.tool('quoted'), pipe: through(fromAnthropicMessages) },
  { name: 'fromAiSdkStream text-delta', grows: 'TEXT_MESSAGE_CONTENT', make: aiSdk.text, pipe: through(fromAiSdkStream) },
  { name: 'fromAiSdkStream reasoning-delta', grows: 'REASONING_MESSAGE_CONTENT', make: aiSdk.reasoning, pipe: through(fromAiSdkStream) },
  { name: 'fromAiSdkStream tool-input-delta, braces', grows: 'TOOL_CALL_ARGS', make: aiSdk.tool('braces'), pipe: through(fromAiSdkStream) },
  { name: 'fromLangChainStreamEvents text', grows: 'TEXT_MESSAGE_CONTENT', make: langChain.text, pipe: through(fromLangChainStreamEvents) },
  { name: 'fromLangChainStreamEvents thinking blocks', grows: 'REASONING_MESSAGE_CONTENT', make: langChain.reasoning, pipe: through(fromLangChainStreamEvents) },
  { name: 'fromLangChainStreamEvents tool_call_chunks, braces', grows: 'TOOL_CALL_ARGS', make: langChain.tool('braces'), pipe: through(fromLangChainStreamEvents) },
  { name: 'fromLangGraphStream text', grows: 'TEXT_MESSAGE_CONTENT', make: langGraph.text, pipe: through(fromLangGraphStream) },
  { name: 'fromLangGraphStream tool_call_chunks, quoted', grows: 'TOOL_CALL_ARGS', make: langGraph.tool('quoted'), pipe: through(fromLangGraphStream) },
];

/** Checks once, untimed, that `n` chunks of a case come out as `n` events of the kind that grows, in one run that finishes. */
function check(c, n) {
  const out = collectSync(from(c.make(n)).pipe(c.pipe()));
  const grown = out.filter((e) => e.type === c.grows).length;
  const last = out[out.length - 1]?.type;
  // Adapters may send the first fragment with the call's start: n or n - 1 growing events.
  if ((grown !== n && grown !== n - 1) || last !== 'RUN_FINISHED') throw new Error(`linearity case '${c.name}' gave ${grown} ${c.grows} for ${n} chunks and ended with ${last}`);
}

export async function run({ quick, runs, warmup, log }) {
  // The long message, and as many short ones as make the same number of chunks.
  const small = 1000;
  // --quick (the CI sanity spec): 8k, where a quadratic path still shows as about 8x.
  const large = quick ? 8_000 : 64_000;
  const repeat = large / small;
  const label = `${large / 1000}k`;
  // --quick (the CI sanity spec, which runs every item in under a minute): 5 rounds of a few ms
  // each, whose median a scheduling blip on a loaded machine does not move as it moved a median of 3.
  const rounds = quick ? { runs: 5, warmup: 2 } : { runs, warmup };
  const rows = [];
  log(`linearity: ${cases.length} cases, one message of ${label} chunks vs ${repeat} of 1k`);
  for (const c of cases) {
    check(c, small);
    const long = c.make(large);
    const short = c.make(small);
    const results = await measure(
      [
        { name: `1 × ${label}`, fn: () => drain(from(long).pipe(c.pipe())) },
        {
          name: `${repeat} × 1k`,
          fn: () => {
            for (let k = 0; k < repeat; k++) drain(from(short).pipe(c.pipe()));
          },
        },
      ],
      rounds,
    );
    const a = results[`1 × ${label}`].median;
    const b = results[`${repeat} × 1k`].median;
    rows.push(
      row({
        item: 17,
        name: `per chunk, ${label} ÷ 1k: ${c.name}`,
        ours: { name: `1 × ${label}`, value: a },
        baseline: { name: `${repeat} × 1k`, value: b },
        ratio: a / b,
        ratioMeans: `per chunk at ${label} ÷ per chunk at 1k`,
        target: { op: '<=', value: 2 },
      }),
    );
  }
  return rows;
}
