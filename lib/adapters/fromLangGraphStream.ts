import { EventType } from '@ag-ui/core';
import type { OperatorFunction } from 'rxjs';
import type { AgentEvent } from '../protocol/agentEvent.js';
import { AguiRxError, describeValue } from '../protocol/errors.js';
import { generateId as defaultGenerateId, type IdGenerator } from '../protocol/generateId.js';
import { createOperator } from '../protocol/createOperator.js';
import { warnDiagnostic, type DiagnosticHandler } from '../protocol/diagnostics.js';
import { interrupt } from '../interaction/interrupts.js';
import { createLangChainMessageReader, messageFields, messageKind, modelName, resultText, usageOf, type ModelTurn } from './langChainMessages.js';
import { INTERRUPT_KEY, readInterrupts, type InterruptsRead } from './langGraphInterrupts.js';
import { createDropReporter, fieldReaders, isObject, nonEmpty, rawEvent, tokenUsageEvent, type Fields } from './readers.js';
import type { LangGraphStreamPart } from './wire/langGraph.js';

// The provider's stream format, importable from here too.
export type * from './wire/langGraph.js';

/** Options of {@link fromLangGraphStream}. */
export interface FromLangGraphStreamOptions {
  /** Also send each item as it came, as `RAW { event, source: 'langgraph' }`, before the events made from it. Default: false. */
  raw?: boolean | undefined;
  /** Told of each kind of content block that has no AG-UI form and is dropped (`image_url`, `document` …), and of each stream mode ignored (`debug` …), once per type per subscription. Default: `console.warn`. */
  onDiagnostic?: DiagnosticHandler | undefined;
  /** Mints ids for messages and tool calls that carry none. Default: nanoid. */
  generateId?: IdGenerator | undefined;
}

/**
 * Turns LangGraph JS `graph.stream()` output with `streamMode: ["values", "messages"]` (or
 * `streamMode: "messages"` alone; `subgraphs: true` or not) into agent events: the model's text,
 * reasoning and tool calls, the tools' results, token usage, and the graph's state.
 *
 * One AI message (its chunks share an `id`) is one assistant message, and the parent of its tool calls.
 *
 * ```text
 * source:  --m--m--m--v--t--v--|    m = ['messages', [AIMessageChunk, metadata]], v = ['values', state]
 * output:  --r--t--k--S--R--S--|    t = ['messages', [ToolMessage, metadata]]
 *          r = REASONING_MESSAGE_CHUNK, t = TEXT_MESSAGE_CHUNK, k = TOOL_CALL_CHUNK,
 *          S = STATE_SNAPSHOT, R = TOOL_CALL_RESULT
 * ```
 *
 * Rules:
 * 1. Items are `[mode, payload]` (streamMode an array) or, with `subgraphs: true`,
 *    `[namespace, mode, payload]` (`namespace` `[]` for the root graph, else the subgraph's path,
 *    `['research:<task id>']`). A single `streamMode: 'messages'` yields bare `[message, metadata]`
 *    pairs (with `subgraphs: true`, `[namespace, [message, metadata]]`), read as `messages` items.
 *    Messages may be message objects, their plain JSON or their `lc`-serialised form
 *    (`{ lc: 1, type: 'constructor', id: [..., 'AIMessageChunk'], kwargs }`).
 * 2. An AI message chunk is read as `fromLangChainStreamEvents` reads a chunk: reasoning
 *    (`additional_kwargs.reasoning_content`, `additional_kwargs.reasoning` summaries, `thinking`
 *    / `reasoning` blocks) as REASONING_MESSAGE_CHUNK with `messageId` = `<id>-reasoning` (a thinking
 *    block's signature, a `redacted_thinking` block's data as REASONING_ENCRYPTED_VALUE), text (a
 *    string, or `text` blocks) as TEXT_MESSAGE_CHUNK with `messageId` = the chunk's `id`, and
 *    `tool_call_chunks` (else `tool_use` / `input_json_delta` blocks, else a whole message's
 *    `tool_calls`) keyed by `index`, as TOOL_CALL_CHUNK with the provider's call id. Blocks of
 *    other types (`image_url`, types added later) are dropped, with one `onDiagnostic` per block
 *    type per subscription.
 * 3. A chunk with another `id` starts a new message, unless it carries nothing (OpenAI's
 *    Responses API sends an empty chunk named after its output item mid-message); a chunk
 *    without `id` continues the current message (or starts one with a minted id).
 * 4. A chunk's `usage_metadata` becomes TOKEN_USAGE (chunks' usage adds up, as LangChain merges
 *    it), with `model` = the message's `response_metadata.model_name`, else `ls_model_name`.
 * 5. A ToolMessage becomes TOOL_CALL_RESULT for its `tool_call_id`, with its `id` as `messageId`
 *    and its content as text (text blocks joined, anything else as JSON). Human and system
 *    messages send nothing: they are the input, not the run's output.
 * 6. A `values` state of the root graph becomes STATE_SNAPSHOT **without its `messages` key**: the
 *    messages travel as messages (point 2 to 5), and `stateDelta` sends only what changed. A
 *    subgraph's `values` send nothing: its state is its own, and what it returns reaches the
 *    root's next state. A subgraph's messages stream like the root's.
 * 7. A paused graph (a node called `interrupt(value)`) ends the run with an interrupt, never a
 *    success (AG-UI Interrupts and Resume: a producer must not report an interrupted run as
 *    success): the `__interrupt__: [{ id, value }]` of its `values` and `updates` items become,
 *    when the source completes, RUN_FINISHED with `outcome: { type: 'interrupt', interrupts }`,
 *    each `{ id, reason: 'input_required', message, metadata: { value } }` (`id` LangGraph's,
 *    minted when absent; `message` the value when it is text). Each interrupt counts once (both
 *    modes repeat it); the root graph's are the run's, a subgraph's count when the root sends
 *    none. `__interrupt__` is never part of the state: a `values` item holding nothing else
 *    (LangGraph before 1.0) sends no snapshot. Resume the graph with `new Command({ resume })`
 *    from the next run's `resume` entries (`matchResume`). `streamMode: 'messages'` alone carries
 *    no interrupts: add `'values'` or `'updates'`.
 * 8. A `custom` item (what a node writes with `config.writer`) becomes CUSTOM `{ name: 'custom',
 *    value }`. `updates` send nothing else: the state travels in `values`. Other modes (`debug`,
 *    `tasks`, `checkpoints` …) have no AG-UI form: ignored, with one `onDiagnostic` per mode per
 *    subscription.
 * 9. An item in none of the shapes of point 1 is an `INVALID_EVENT` error whose message says to
 *    pass `streamMode` as an array: the bare payloads of another single mode (a `values` state,
 *    an `updates` object) cannot be told apart. So is a `messages` payload that is not
 *    `[message, metadata]`, a malformed chunk, or an `__interrupt__` that is not a list of objects.
 *
 * ## Example
 *
 * ```ts
 * of<LangGraphStreamPart[]>(
 *   ['messages', [{ type: 'AIMessageChunk', id: 'm1', content: 'Hi' }, { langgraph_node: 'agent' }]],
 *   ['values', { messages: [], mood: 'happy' }],
 * ).pipe(fromLangGraphStream()).subscribe((event) => console.log(JSON.stringify(event)));
 * // results: {"type":"TEXT_MESSAGE_CHUNK","messageId":"m1","delta":"Hi"}, {"type":"STATE_SNAPSHOT","snapshot":{"mood":"happy"}}
 * ```
 *
 * @param options `raw` to keep each item, the id generator, and where dropped blocks are reported.
 * @return A function that returns an Observable of agent events, to pipe into `toAgui`.
 * @throws Nothing synchronously; malformed items reach the subscriber as `INVALID_EVENT` errors.
 */
export function fromLangGraphStream(options: FromLangGraphStreamOptions = {}): OperatorFunction<LangGraphStreamPart, AgentEvent> {
  const mint = options.generateId ?? defaultGenerateId;
  const raw = options.raw ?? false;
  const onDiagnostic = options.onDiagnostic ?? warnDiagnostic;
  return createOperator<LangGraphStreamPart, AgentEvent>((subscriber) => {
    const emit = (event: AgentEvent) => subscriber.next(event);
    const drop = createDropReporter(onDiagnostic);
    const reader = createLangChainMessageReader(emit, mint, 'fromLangGraphStream', drop);
    // The interrupts of the paused graph (rule 7): the root graph's, else a subgraph's; made when the first comes.
    let rootInterrupts: InterruptsRead | undefined;
    let subgraphInterrupts: InterruptsRead | undefined;
    const onInterrupts = (namespace: readonly string[], list: unknown, mode: string) => {
      const where = `a '${mode}' item`;
      if (namespace.length === 0) rootInterrupts = readInterrupts(list, where, rootInterrupts, mint, readers);
      else subgraphInterrupts = readInterrupts(list, `${where} of subgraph '${namespace.join('|')}'`, subgraphInterrupts, mint, readers);
    };
    // The AI message being read, keyed by its id.
    let current: { key: string | undefined; turn: ModelTurn } | undefined;
    // The served model of each message id, from whichever of its chunks names it (often an empty first one).
    const models = new Map<string, string>();

    const onAiMessage = (fields: Fields, metadata: Fields) => {
      const id = nonEmpty(fields.id);
      const model = modelName(fields);
      if (id !== undefined && model !== undefined && !models.has(id)) models.set(id, model);
      if (current === undefined || (id !== undefined && id !== current.key)) {
        if (carriesNothing(fields)) return;
        current = { key: id, turn: reader.turn(id ?? mint()) };
      }
      const { turn } = current;
      turn.model ??= current.key === undefined ? model : models.get(current.key);
      // The usage of this chunk goes out now; the reader must not add it up again.
      const { usage_metadata: usage, ...rest } = fields;
      reader.read(turn, rest, 'message');
      const report = usageOf(usage, turn.model ?? nonEmpty(metadata.ls_model_name));
      if (report !== undefined) emit(tokenUsageEvent(report));
    };

    const onToolMessage = (fields: Fields) => {
      current = undefined;
      const toolCallId = nonEmpty(fields.tool_call_id);
      if (toolCallId === undefined) throw invalid(`a ToolMessage has tool_call_id: ${describeValue(fields.tool_call_id)}, but it must name the call it answers.`);
      if (reader.answer(toolCallId, true) === false) return;
      const messageId = nonEmpty(fields.id);
      emit({ type: EventType.TOOL_CALL_RESULT, toolCallId, content: resultText(fields.content, toolCallId), ...(messageId === undefined ? {} : { messageId }) });
    };

    return {
      next(input) {
        if (raw) emit(rawEvent(input, 'langgraph'));
        const { namespace, mode, payload } = readItem(input);
        if (mode === 'values') {
          const asked = isObject(payload) ? payload[INTERRUPT_KEY] : undefined;
          if (asked !== undefined) onInterrupts(namespace, asked, mode);
          // A subgraph's state is its own, not the run's: the root graph's next state holds what the subgraph returns to it.
          if (namespace.length > 0) return;
          if (!isObject(payload)) {
            emit({ type: EventType.STATE_SNAPSHOT, snapshot: payload });
            return;
          }
          const { messages: _messages, [INTERRUPT_KEY]: _asked, ...state } = payload;
          // Before LangGraph 1.0 a paused graph sends its interrupts alone: the state has not changed.
          if (asked === undefined || Object.keys(state).length > 0) emit({ type: EventType.STATE_SNAPSHOT, snapshot: state });
          return;
        }
        if (mode === 'updates') {
          // The state travels in 'values'; an update says only which node changed it, or that the graph paused.
          if (isObject(payload) && payload[INTERRUPT_KEY] !== undefined) onInterrupts(namespace, payload[INTERRUPT_KEY], mode);
          return;
        }
        if (mode === 'custom') {
          emit({ type: EventType.CUSTOM, name: 'custom', value: payload });
          return;
        }
        if (mode !== 'messages') {
          drop(`mode:${mode}`, `fromLangGraphStream ignores '${mode}' items: they describe how the graph runs, which AG-UI has no event for. Leave '${mode}' out of streamMode, or pass raw: true to forward every item as a RAW event. Later '${mode}' items of this stream are ignored without another warning.`, input);
          return;
        }
        if (!Array.isArray(payload) || payload.length < 1) throw invalid(`a 'messages' payload is ${describeValue(payload)}, but it must be a [message, metadata] pair.`);
        const [message, metadata] = payload;
        const fields = messageFields(message);
        if (fields === undefined) throw invalid(`a 'messages' payload holds ${describeValue(message)} where a LangChain message was expected.`);
        const kind = messageKind(message);
        if (kind === 'ai') onAiMessage(fields, isObject(metadata) ? metadata : {});
        else if (kind === 'tool') onToolMessage(fields);
      },
      complete() {
        // A subgraph's interrupt reaches the root graph's items too; a subgraph's alone says the run paused all the same.
        const asked = rootInterrupts !== undefined && rootInterrupts.size > 0 ? rootInterrupts : subgraphInterrupts;
        if (asked !== undefined && asked.size > 0) emit(interrupt([...asked.values()]));
        subscriber.complete();
      },
    };
  });
}

const readers = fieldReaders({ adapter: 'fromLangGraphStream', malformed: 'a malformed item', unit: 'item' });
const { invalid } = readers;

/** One `graph.stream()` item, read: the subgraph it came from (`[]` for the root graph), its mode and payload. */
interface StreamItem {
  namespace: readonly string[];
  mode: string;
  payload: unknown;
}

// What `messageKind` calls LangChain's message classes and types: a pair that begins with one is a 'messages' payload.
const messageKinds = new Set(['ai', 'human', 'system', 'tool', 'function', 'chat', 'generic', 'remove', 'developer']);

const root: readonly string[] = [];

// What to do when the items carry no mode.
const asArray = "Pass streamMode as an array, e.g. graph.stream(input, { streamMode: ['messages', 'values'] }), and its items unchanged.";

/**
 * Reads an item in each shape `graph.stream()` yields: `[mode, payload]` (streamMode an array),
 * `[namespace, mode, payload]` (and `subgraphs: true`), and for a single `streamMode: 'messages'`
 * the bare `[message, metadata]` pair (with `subgraphs: true`, `[namespace, [message, metadata]]`).
 * The bare payloads of another single mode (a state, an update) cannot be told apart: an error.
 */
function readItem(input: unknown): StreamItem {
  if (Array.isArray(input)) {
    if (input.length === 3 && isNamespace(input[0]) && typeof input[1] === 'string') return { namespace: input[0], mode: input[1], payload: input[2] };
    if (input.length === 2) {
      const [first, payload] = input;
      if (typeof first === 'string') return { namespace: root, mode: first, payload };
      if (isMessagePair(input)) return { namespace: root, mode: 'messages', payload: input };
      if (isNamespace(first)) {
        if (isMessagePair(payload)) return { namespace: first, mode: 'messages', payload };
        throw new AguiRxError(
          'INVALID_EVENT',
          `fromLangGraphStream received a [namespace, payload] item without its mode (graph.stream() with subgraphs: true and a single streamMode) whose payload is ${describeValue(payload)}, not a [message, metadata] pair: a state and an update cannot be told apart. ${asArray}`,
        );
      }
    }
  }
  throw new AguiRxError(
    'INVALID_EVENT',
    `fromLangGraphStream received ${describeValue(input)} where a [mode, payload] item (with subgraphs: true, [namespace, mode, payload]) was expected. graph.stream() with a single streamMode other than 'messages' yields bare states or updates, which cannot be told apart. ${asArray} streamEvents() output needs fromLangChainStreamEvents.`,
  );
}

/** Whether `value` is a subgraph namespace: a list of `<node>:<task id>` strings, `[]` for the root graph. */
function isNamespace(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((segment) => typeof segment === 'string');
}

/** Whether `value` is a 'messages' payload: a LangChain message and its metadata (an object, when there). */
function isMessagePair(value: unknown): value is [unknown, unknown] {
  if (!Array.isArray(value) || value.length !== 2 || (value[1] !== undefined && !isObject(value[1]))) return false;
  const kind = messageKind(value[0]);
  return kind !== undefined && messageKinds.has(kind);
}

/** Whether a chunk says nothing: no text, reasoning, tool call or usage. */
function carriesNothing(fields: Fields): boolean {
  const { content, tool_call_chunks: chunks, tool_calls: calls, additional_kwargs: kwargs, usage_metadata: usage } = fields;
  // Content of any other type is read, to be refused there.
  if (typeof content === 'string' ? content !== '' : Array.isArray(content) ? content.length > 0 : content !== undefined && content !== null) return false;
  if ((Array.isArray(chunks) && chunks.length > 0) || (Array.isArray(calls) && calls.length > 0) || isObject(usage)) return false;
  if (isObject(kwargs)) {
    if (nonEmpty(kwargs.reasoning_content) !== undefined || nonEmpty(kwargs.reasoning) !== undefined) return false;
    const reasoning = kwargs.reasoning;
    if (isObject(reasoning) && Array.isArray(reasoning.summary) && reasoning.summary.some((part) => isObject(part) && nonEmpty(part.text) !== undefined)) return false;
  }
  return true;
}
