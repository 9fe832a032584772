import { EventType, type TokenUsage } from '@ag-ui/core';
import type { OperatorFunction } from 'rxjs';
import type { AgentEvent } from '../protocol/agentEvent.js';
import { AguiRxError, describeValue } from '../protocol/errors.js';
import { generateId as defaultGenerateId, type IdGenerator } from '../protocol/generateId.js';
import { createOperator } from '../protocol/createOperator.js';
import { warnDiagnostic, type DiagnosticHandler } from '../protocol/diagnostics.js';
import { cutCalls, cutToolCallError, endedEarlyError, endedInToolCallError, unparsedArgumentsError, unparsedCalls, type StreamedCall } from '../protocol/cutToolCalls.js';
import { createDropReporter, fieldReaders, isObject, nonEmpty, providerError, rawEvent, tokenUsageEvent, toolCallStart, usageReport, type Fields } from './readers.js';
import type { AnthropicStreamEvent } from './wire/anthropicMessages.js';

// The provider's stream format, importable from here too.
export type * from './wire/anthropicMessages.js';

/** Options of {@link fromAnthropicMessages}. */
export interface FromAnthropicMessagesOptions {
  /** Mints a message id for content that arrives without a `message_start` (or with an empty id). Default: nanoid. */
  generateId?: IdGenerator | undefined;
  /** Also send each event as it came, as `RAW { event, source: 'anthropic' }`, before the events made from it. Default: false. */
  raw?: boolean | undefined;
  /** Told of each kind of content block or delta that has no AG-UI form and is dropped (`citations_delta`, a `container_upload` block …), once per type per subscription, of server tool counts in the usage, and of each server tool call dropped because its result never came. Default: `console.warn`. */
  onDiagnostic?: DiagnosticHandler | undefined;
}

const { invalid, object, string: text, index: position, count } = fieldReaders({
  adapter: 'fromAnthropicMessages',
  malformed: 'a malformed Messages stream event',
  unit: 'event',
});

/** One open content block of the current message. */
type Block =
  | { kind: 'text' }
  | { kind: 'reasoning'; messageId: string; opened: boolean }
  | { kind: 'tool'; type: string; toolCallId: string; name: string; input: unknown; argsSent: boolean; call: StreamedCall; server?: ServerCall }
  | { kind: 'other' }
  // A block of a type with no AG-UI form, reported at its start: its deltas go with it.
  | { kind: 'dropped' };

const toolBlockTypes: ReadonlySet<string> = new Set(['tool_use', 'server_tool_use', 'mcp_tool_use']);

/** A call Anthropic runs itself (`server_tool_use`, `mcp_tool_use`), held until its result block comes. */
interface ServerCall {
  /** The call as streamed: its id, tool name and argument text. */
  call: StreamedCall;
  /** The assistant message the call belongs to. */
  parentMessageId: string;
  /** The block's own fields: `metadata.anthropic` of the call. */
  block: Fields;
  /** The message it came in, for the diagnostic of one that gets no result. */
  messageId: string;
}

/** The stop reasons that cut the model's output where it stood, with what to do about each. */
const outputLimits: ReadonlyMap<string, [limit: string, advice: string]> = new Map([
  ['max_tokens', ['its max_tokens limit (stop_reason: max_tokens)', 'Raise max_tokens (or ask for a shorter answer) and retry the request.']],
  ['model_context_window_exceeded', ["the model's context window (stop_reason: model_context_window_exceeded)", 'Shorten the conversation (or its tool results) and retry the request.']],
  ['refusal', ['a refusal (stop_reason: refusal)', 'The model declined to go on (see the anthropic.refusal event): rephrase the request.']],
]);

/**
 * Turns an Anthropic Messages stream (its `message_start` … `message_stop` events) into agent
 * events: text, reasoning (with its signature), tool calls, server tool results and token usage.
 *
 * One message is one assistant message: its id (`message.id`) is the message's id and the parent
 * of its tool calls; each thinking block is a reasoning message of its own.
 *
 * ```text
 * source:  --s--b--t--p--u--x--d--z--|    s = message_start, b = text block start, t = text_delta,
 * output:  -----------T--K--A--------U--|  p = content_block_stop, u = tool_use start, x = input_json_delta,
 *          T = TEXT_MESSAGE_CHUNK,        d = message_delta, z = message_stop (then the source completes)
 *          K, A = TOOL_CALL_CHUNK (name, then arguments), U = TOKEN_USAGE
 * ```
 *
 * Rules:
 * 1. `message_start` begins a message: `message.id` names it (minted when absent). Its usage is
 *    kept for rule 7.
 * 2. `text_delta` becomes TEXT_MESSAGE_CHUNK with `messageId` = the message id. Every text block
 *    of a message shares it, up to a server tool's result (rule 5): the text and calls after it
 *    are a new assistant message `<message id>-<block index>` (the index of the block that begins
 *    it), so that the client's transcript reads call, result, answer, in Anthropic's order.
 * 3. A `thinking` block is the reasoning message `<message id>-reasoning-<block index>`:
 *    `thinking_delta` becomes REASONING_MESSAGE_CHUNK; `signature_delta` becomes
 *    REASONING_ENCRYPTED_VALUE `{ subtype: 'message', entityId: <that id>, encryptedValue: <signature> }`
 *    (after an explicit REASONING_MESSAGE_START when the block had no thinking text, so that the
 *    signature has a message to land on). A `redacted_thinking` block is such a message with no
 *    text (REASONING_MESSAGE_START with `metadata: { anthropic: { type: 'redacted_thinking' } }`)
 *    whose encrypted value is the block's `data`.
 * 4. A `tool_use` block is a tool call: its start gives TOOL_CALL_CHUNK with `toolCallId` = the
 *    block's `id`, `toolCallName` and `parentMessageId` = the assistant message (rule 2); each
 *    non-empty `input_json_delta` gives TOOL_CALL_CHUNK with that fragment. A call whose block
 *    stops with no fragment (a tool without arguments) gets the block's `input` as JSON, `{}` when
 *    empty. A `server_tool_use` or `mcp_tool_use` block is a call Anthropic runs itself: it is
 *    held, and sent whole (one TOOL_CALL_CHUNK with its arguments and `metadata: { anthropic: {
 *    type, …the block's other fields } }`, e.g. an MCP call's `server_name`) when its result block
 *    comes, so that it is never left for the client to run (RUN_FINISHED's `pendingToolCallIds`).
 *    One whose result never comes in the stream (a turn Anthropic paused, `stop_reason:
 *    pause_turn`, before it ran the tool) is dropped when the source ends, with an `onDiagnostic`.
 * 5. A block whose type ends in `_tool_result` and that has a `tool_use_id`
 *    (`web_search_tool_result`, `web_fetch_tool_result`, `code_execution_tool_result`,
 *    `bash_code_execution_tool_result`, `mcp_tool_result`, `tool_search_tool_result` …) becomes
 *    TOOL_CALL_RESULT for that call, after the held call; content that is not a string is sent as
 *    its JSON text. Its `metadata: { anthropic: { type, …the block's other fields } }` (with
 *    `contentFormat: 'json'` when the content was sent as JSON) lets `toAnthropicMessages` send it
 *    back as Anthropic's own block.
 * 6. `message_delta`'s `stop_reason` is the model's word that the message is over; it sends
 *    nothing and loses nothing: text cut short by `max_tokens` is kept. `refusal` also sends CUSTOM
 *    `{ name: 'anthropic.refusal', value: { messageId, stopDetails? } }`, so that a client can say
 *    why the answer stopped (or is empty). A `container` (code execution's: `{ id, expires_at }`)
 *    sends CUSTOM `{ name: 'anthropic.container', value: { messageId, container } }`, the container
 *    as it came, so that the next request can reuse it (its `container` parameter). `max_tokens`, `model_context_window_exceeded` or
 *    `refusal` while a tool call's arguments are not one whole JSON value, its block stopped or
 *    not, means the stop cut the call: the output fails with `INCOMPLETE_STREAM`, naming the call
 *    and the cut, after the message's usage. Any other stop reason (`tool_use`, `end_turn` …) while
 *    a call's written arguments do not parse is `INCOMPLETE_STREAM` too, saying the model finished
 *    with arguments that are not JSON (a call with no fragment has none: `{}`). Checked once, at
 *    `message_delta`. What was streamed of the call is not taken back; a call whose arguments
 *    parse stays a call.
 * 7. Usage becomes TOKEN_USAGE, once per message, at `message_stop` (or the next `message_start`,
 *    or when the source completes or errors): `message_delta`'s counts over `message_start`'s;
 *    `inputTokens` = input + cache writes + cache reads, `cacheWriteInputTokens` =
 *    `cache_creation_input_tokens`, `cachedInputTokens` = `cache_read_input_tokens`,
 *    `outputTokens`, `totalTokens` = their sum, and `model`; absent counts are omitted.
 *    `server_tool_use` counts (`web_search_requests`, `web_fetch_requests`) have no TOKEN_USAGE
 *    field: dropped, with one `onDiagnostic` per subscription (`raw: true` sends them in RAW).
 * 8. A content block or delta of a type with no AG-UI form (`citations_delta`, `container_upload`,
 *    a `*_tool_result` without `tool_use_id`, types added later) is dropped, with one `onDiagnostic`
 *    per type per subscription (a dropped block's deltas go with it, unreported); so is content
 *    already in `message_start` (blocks arrive in `content_block_*` events). `ping` and unknown
 *    event types carry no content and send nothing (Anthropic adds new ones; `raw: true` keeps
 *    them as RAW).
 * 9. An `error` event is a `PROVIDER_ERROR` error; a malformed event (no `type`, a delta for a
 *    block that is not open, a non-string `text` …) is an `INVALID_EVENT` error. The documented
 *    stream ends each message with `message_delta` (its `stop_reason`) and `message_stop`: a
 *    source that completes inside a message with neither (after `message_start`, or content that
 *    came without one) was cut, and is an `INCOMPLETE_STREAM` error after the usage it holds,
 *    naming the tool calls whose arguments are not whole JSON when there are any, never a
 *    half-written call or a cut answer passed off as whole; so is a `message_start` that arrives
 *    inside such a message. A `stop_reason` with no `message_stop` after it ends the message (its
 *    open calls too). A source with no message (`ping` only, or nothing) just completes. Under
 *    `toAgui` all become RUN_ERROR.
 *
 * ## Example
 *
 * ```ts
 * of<AnthropicStreamEvent[]>(
 *   { type: 'message_start', message: { id: 'msg_1', model: 'claude-x', usage: { input_tokens: 9, output_tokens: 1 } } },
 *   { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
 *   { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hi' } },
 *   { type: 'content_block_stop', index: 0 },
 *   { type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 2 } },
 *   { type: 'message_stop' },
 * ).pipe(fromAnthropicMessages()).subscribe((event) => console.log(JSON.stringify(event)));
 * // results: {"type":"TEXT_MESSAGE_CHUNK","messageId":"msg_1","delta":"Hi"}, {"type":"TOKEN_USAGE","usage":{"inputTokens":9,"outputTokens":2,"totalTokens":11,"model":"claude-x"}}
 * ```
 *
 * @param options The id generator for content without a message id, whether to keep the raw events, and where dropped content is reported.
 * @return A function that returns an Observable of agent events, to pipe into `toAgui`.
 */
export function fromAnthropicMessages(options: FromAnthropicMessagesOptions = {}): OperatorFunction<AnthropicStreamEvent, AgentEvent> {
  const mint = options.generateId ?? defaultGenerateId;
  const raw = options.raw ?? false;
  const onDiagnostic = options.onDiagnostic ?? warnDiagnostic;
  return createOperator<AnthropicStreamEvent, AgentEvent>((subscriber) => {
    // Dropped block and delta types, each reported once.
    const report = createDropReporter(onDiagnostic);
    // The message being read: its id names the assistant message.
    let message: string | undefined;
    // The message's model, for its usage report.
    let model: string | undefined;
    // Whether a message is being read: begun by message_start or by content without one, until message_stop.
    let begun = false;
    // Whether its message_delta gave a stop_reason: the model's word that the message is over.
    let finished = false;
    // The message's open content blocks, by index.
    let blocks = new Map<number, Block>();
    // The message's tool calls, with the argument text sent for each: what a max_tokens cut is checked against.
    let calls: StreamedCall[] = [];
    // The assistant message the message's text and calls go to now: the message id until a server tool's result.
    let segment: string | undefined;
    // Whether anything went to that assistant message: a result after it makes the next content another message.
    let segmentUsed = false;
    // Whether a server tool's result ended that assistant message.
    let segmentEnded = false;
    // Server tool calls waiting for their result, by id: kept across messages (a paused turn's result comes in the next).
    const held = new Map<string, ServerCall>();
    // The message's token counts so far (message_start's, overlaid by message_delta's).
    let counts: Partial<Record<CountField, number>> = {};
    // Whether the message reported any count that is not yet sent.
    let unsent = false;
    const emit = (event: AgentEvent) => subscriber.next(event);
    const messageId = () => (message ??= mint());
    // The assistant message for content that block `index` begins: a new one after a server tool's result.
    const assistantId = (index: number) => {
      if (segmentEnded) segment = `${messageId()}-${index}`;
      segmentEnded = false;
      segmentUsed = true;
      return segment ?? messageId();
    };

    const sendUsage = () => {
      if (!unsent) return;
      unsent = false;
      const report = usageOf(counts, model);
      if (report !== undefined) emit(tokenUsageEvent(report));
    };

    const addCounts = (usage: unknown, where: string) => {
      if (usage === undefined || usage === null) return;
      const fields = object(usage, where, '{ input_tokens: 12, output_tokens: 3 }');
      const serverTools = fields.server_tool_use;
      if (isObject(serverTools) && Object.values(serverTools).some((value) => typeof value === 'number' && value > 0)) {
        report(
          'usage:server_tool_use',
          `fromAnthropicMessages dropped the server tool counts of the usage (${where}.server_tool_use: ${JSON.stringify(serverTools)}): TOKEN_USAGE has no field for them, and Anthropic bills them apart from tokens. To count them, pass raw: true and read usage.server_tool_use from the RAW events. Later server tool counts of this stream are dropped without another warning.`,
          serverTools,
        );
      }
      for (const field of countFields) {
        const value = count(fields[field], `${where}.${field}`);
        if (value === undefined) continue;
        counts[field] = value;
        unsent = true;
      }
    };

    // A tool call's block ends: a call that got no argument fragment gets its whole input (a held server call keeps it).
    const endBlock = (index: number) => {
      const block = blocks.get(index);
      blocks.delete(index);
      if (block?.kind !== 'tool' || block.argsSent) return;
      const input = block.input;
      const args = isObject(input) || Array.isArray(input) ? JSON.stringify(input) : '{}';
      block.call.args = args;
      block.argsSent = true;
      if (block.server === undefined) emit({ type: EventType.TOOL_CALL_CHUNK, toolCallId: block.toolCallId, delta: args });
    };

    // A server tool's result block: its held call, whole, then the result; content after it is another assistant message.
    const onResult = (block: Fields, toolUseId: string) => {
      const server = held.get(toolUseId);
      if (server !== undefined) {
        held.delete(toolUseId);
        const open = [...blocks.entries()].find(([, state]) => state.kind === 'tool' && state.server === server);
        if (open !== undefined) endBlock(open[0]);
        const { call, parentMessageId } = server;
        const args = call.args === '' ? '{}' : call.args;
        emit(toolCallStart(call.id, call.name, parentMessageId, args, { anthropic: server.block }));
      }
      const content = block.content;
      const fields = otherFields(block, resultFields);
      const asText = typeof content === 'string' || content === undefined;
      emit({
        type: EventType.TOOL_CALL_RESULT,
        toolCallId: toolUseId,
        content: typeof content === 'string' ? content : (JSON.stringify(content) ?? ''),
        metadata: { anthropic: asText ? fields : { ...fields, contentFormat: 'json' } },
      });
      if (segmentUsed) segmentEnded = true;
    };

    // The source ends: a server call whose result never came is not sent (the client would take it for its own to run).
    const dropHeld = () => {
      for (const { call, messageId: id } of held.values()) {
        onDiagnostic({
          message: `fromAnthropicMessages dropped server tool call '${call.id}' (${call.name}) of message '${id}': Anthropic runs it itself, and no result block for it came in the stream (as when Anthropic pauses a turn, stop_reason: pause_turn, before it runs the tool), so the client would take it for a call of its own to run. To let Anthropic run it, continue the turn in the same run: send the paused response back as the last assistant message and stream the continuation into the same source, where the call comes with its result (in a later run the client has no such call to send back).`,
          event: call,
        });
      }
      held.clear();
    };

    // A message with no stop_reason and no message_stop where the stream (or its message) ends: it was cut.
    const assertMessageEnded = (why: string) => {
      if (!begun || finished) return;
      const when = `before ${message === undefined ? 'the message' : `message '${message}'`} did (${why})`;
      const cut = cutCalls(calls);
      throw cut.length > 0 ? endedInToolCallError('fromAnthropicMessages', when, cut) : endedEarlyError('fromAnthropicMessages', when);
    };

    const endMessage = () => {
      for (const index of [...blocks.keys()]) endBlock(index);
      blocks = new Map();
      calls = [];
      sendUsage();
      message = undefined;
      segment = undefined;
      segmentUsed = false;
      segmentEnded = false;
      model = undefined;
      counts = {};
      begun = false;
      finished = false;
    };

    const openBlock = (index: number, block: Fields) => {
      const type = block.type;
      if (typeof type !== 'string') throw invalid(`content_block_start ${index} has a content_block with 'type: ${describeValue(type)}', but it must be a string such as 'text'.`);
      const where = `content_block_start ${index}: content_block`;
      if (type === 'text') {
        blocks.set(index, { kind: 'text' });
        const piece = text(block, 'text', where);
        // The block's assistant message, chosen now: its deltas go to the same one.
        const id = assistantId(index);
        if (piece) emit({ type: EventType.TEXT_MESSAGE_CHUNK, messageId: id, delta: piece });
      } else if (type === 'thinking') {
        const state: Block = { kind: 'reasoning', messageId: `${messageId()}-reasoning-${index}`, opened: false };
        blocks.set(index, state);
        thinking(state, text(block, 'thinking', where));
        signature(state, text(block, 'signature', where));
      } else if (type === 'redacted_thinking') {
        const reasoningId = `${messageId()}-reasoning-${index}`;
        blocks.set(index, { kind: 'other' });
        emit({ type: EventType.REASONING_MESSAGE_START, messageId: reasoningId, role: 'reasoning', metadata: { anthropic: { type: 'redacted_thinking' } } });
        emit({ type: EventType.REASONING_ENCRYPTED_VALUE, subtype: 'message', entityId: reasoningId, encryptedValue: text(block, 'data', where) ?? '' });
      } else if (toolBlockTypes.has(type)) {
        const toolCallId = text(block, 'id', where);
        const name = text(block, 'name', where);
        if (!toolCallId || !name) throw invalid(`${where} is a ${type} block without ${toolCallId ? "a 'name'" : "an 'id'"}. Each tool call block must carry the call's id and the tool's name.`);
        const call: StreamedCall = { id: toolCallId, name, args: '' };
        calls.push(call);
        const parentMessageId = assistantId(index);
        if (type === 'tool_use') {
          blocks.set(index, { kind: 'tool', type, toolCallId, name, input: block.input, argsSent: false, call });
          emit(toolCallStart(toolCallId, name, parentMessageId));
          return;
        }
        const server: ServerCall = { call, parentMessageId, block: otherFields(block, callFields), messageId: messageId() };
        held.set(toolCallId, server);
        blocks.set(index, { kind: 'tool', type, toolCallId, name, input: block.input, argsSent: false, call, server });
      } else if (type.endsWith('_tool_result') && typeof block.tool_use_id === 'string') {
        blocks.set(index, { kind: 'other' });
        onResult(block, block.tool_use_id);
      } else {
        blocks.set(index, { kind: 'dropped' });
        const why = type.endsWith('_tool_result') ? 'it names no tool_use_id, so it answers no tool call and' : 'it';
        report(
          `block:${type}`,
          `fromAnthropicMessages dropped a '${type}' content block (${where}): ${why} has no AG-UI form. Later '${type}' blocks of this stream are dropped without another warning.`,
          block,
        );
      }
    };

    function thinking(state: Extract<Block, { kind: 'reasoning' }>, piece: string | undefined) {
      if (!piece) return;
      state.opened = true;
      emit({ type: EventType.REASONING_MESSAGE_CHUNK, messageId: state.messageId, delta: piece });
    }

    function signature(state: Extract<Block, { kind: 'reasoning' }>, value: string | undefined) {
      if (!value) return;
      if (!state.opened) emit({ type: EventType.REASONING_MESSAGE_START, messageId: state.messageId, role: 'reasoning' });
      state.opened = true;
      emit({ type: EventType.REASONING_ENCRYPTED_VALUE, subtype: 'message', entityId: state.messageId, encryptedValue: value });
    }

    const onDelta = (index: number, block: Block, delta: Fields) => {
      const where = `content_block_delta ${index}: delta`;
      switch (delta.type) {
        case 'text_delta': {
          const piece = text(delta, 'text', where);
          if (piece) emit({ type: EventType.TEXT_MESSAGE_CHUNK, messageId: segment ?? messageId(), delta: piece });
          return;
        }
        case 'thinking_delta':
        case 'signature_delta': {
          if (block.kind !== 'reasoning') throw invalid(`${where} is a ${delta.type} for block ${index}, which is not a thinking block.`);
          if (delta.type === 'thinking_delta') thinking(block, text(delta, 'thinking', where));
          else signature(block, text(delta, 'signature', where));
          return;
        }
        case 'input_json_delta': {
          if (block.kind !== 'tool') throw invalid(`${where} is an input_json_delta for block ${index}, which is not a tool_use block.`);
          const piece = text(delta, 'partial_json', where);
          if (!piece) return;
          block.argsSent = true;
          block.call.args += piece;
          if (block.server === undefined) emit({ type: EventType.TOOL_CALL_CHUNK, toolCallId: block.toolCallId, delta: piece });
          return;
        }
        default:
          // citations_delta and delta types added later; a dropped block's deltas were reported with it.
          if (block.kind === 'dropped') return;
          report(
            `delta:${delta.type}`,
            `fromAnthropicMessages dropped a '${delta.type}' delta (${where}, block ${index}): it has no AG-UI form. Later '${delta.type}' deltas of this stream are dropped without another warning.`,
            delta,
          );
          return;
      }
    };

    return {
      next(input) {
        if (raw) emit(rawEvent(input, 'anthropic'));
        const event = checkEvent(input);
        // Content (or a message_delta) without message_start still begins a message.
        if (event.type.startsWith('content_block_') || event.type === 'message_delta') begun = true;
        switch (event.type) {
          case 'message_start': {
            assertMessageEnded('a new message_start came before its stop_reason and message_stop');
            endMessage();
            begun = true;
            const started = object(event.message, 'message_start: message', "{ id: 'msg_…', usage: { … } }");
            message = nonEmpty(text(started, 'id', 'message_start: message')) ?? mint();
            model = nonEmpty(text(started, 'model', 'message_start: message'));
            addCounts(started.usage, 'message_start: message.usage');
            // Always [] from Anthropic; a server that puts blocks here would lose them unseen.
            if (Array.isArray(started.content) && started.content.length > 0) {
              report(
                'message_start.content',
                `fromAnthropicMessages dropped the ${started.content.length} content block(s) of message_start (message_start: message.content): blocks are read from content_block_start and content_block_delta events only, so these have no AG-UI form here. Later message_start content of this stream is dropped without another warning.`,
                started.content,
              );
            }
            return;
          }
          case 'content_block_start': {
            const index = indexOf(event);
            if (blocks.has(index)) throw invalid(`content_block_start opens block ${index}, which is already open. Each block is opened once and closed by content_block_stop.`);
            return openBlock(index, object(event.content_block, `content_block_start ${index}: content_block`, "{ type: 'text', text: '' }"));
          }
          case 'content_block_delta': {
            const index = indexOf(event);
            const block = blocks.get(index);
            if (block === undefined) throw invalid(`content_block_delta for block ${index}, which no content_block_start opened (or which is closed). Is the stream cut or reordered?`);
            if (!isObject(event.delta) || typeof event.delta.type !== 'string') {
              throw invalid(`content_block_delta ${index} has 'delta: ${describeValue(event.delta)}', but it must be an object with a string 'type' such as { type: 'text_delta', text: 'Hi' }.`);
            }
            return onDelta(index, block, event.delta);
          }
          case 'content_block_stop': {
            const index = indexOf(event);
            if (!blocks.has(index)) throw invalid(`content_block_stop for block ${index}, which is not open. Is the stream cut or reordered?`);
            return endBlock(index);
          }
          case 'message_delta': {
            const delta = object(event.delta ?? {}, 'message_delta: delta', "{ stop_reason: 'end_turn' }");
            addCounts(event.usage, 'message_delta: usage');
            if (delta.stop_reason === 'refusal') {
              const value: Fields = { messageId: messageId() };
              if (isObject(delta.stop_details)) value.stopDetails = delta.stop_details;
              emit({ type: EventType.CUSTOM, name: 'anthropic.refusal', value });
            }
            // The code execution container: its id is what the next request needs to reuse it.
            if (isObject(delta.container)) emit({ type: EventType.CUSTOM, name: 'anthropic.container', value: { messageId: messageId(), container: delta.container } });
            const reason = nonEmpty(delta.stop_reason);
            if (reason === undefined) return;
            finished = true;
            // Checked once, here, with the final counts in: the error path sends the usage first.
            const limit = outputLimits.get(reason);
            if (limit !== undefined) {
              const cut = cutCalls(calls);
              if (cut.length > 0) throw cutToolCallError('fromAnthropicMessages', limit[0], cut, limit[1]);
              return;
            }
            // The model says it is done: a call whose arguments do not parse is broken, not cut.
            const broken = unparsedCalls(calls);
            if (broken.length > 0) throw unparsedArgumentsError('fromAnthropicMessages', `stop_reason: ${reason}`, broken);
            return;
          }
          case 'message_stop':
            return endMessage();
          case 'error': {
            const error = isObject(event.error) ? event.error : { message: event.error };
            throw providerError(
              'Anthropic failed mid-stream',
              { message: error.message, type: error.type },
              "Retry the request (overloaded_error and api_error are usually transient); if it keeps failing, check the request and Anthropic's status page.",
            );
          }
          default:
            // ping, and event types added later.
            return;
        }
      },
      flush() {
        sendUsage();
        dropHeld();
      },
      complete() {
        // A cut message: its usage first, then the error (a throw here skips flush).
        if (begun && !finished) sendUsage();
        dropHeld();
        assertMessageEnded('no message_delta with a stop_reason, no message_stop');
        // A message whose stop_reason came but whose message_stop did not: its calls still end.
        endMessage();
        subscriber.complete();
      },
    };
  });
}

/** The fields of a server tool's call and result blocks that the AG-UI call and result carry themselves. */
const callFields: ReadonlySet<string> = new Set(['id', 'name', 'input']);
const resultFields: ReadonlySet<string> = new Set(['tool_use_id', 'content']);

/** A block's fields but `carried`: what `metadata.anthropic` keeps so that the block can be sent back as it came. */
function otherFields(block: Fields, carried: ReadonlySet<string>): Fields {
  const fields: Fields = {};
  for (const [field, value] of Object.entries(block)) if (!carried.has(field)) fields[field] = value;
  return fields;
}

const countFields = ['input_tokens', 'output_tokens', 'cache_creation_input_tokens', 'cache_read_input_tokens'] as const;
type CountField = (typeof countFields)[number];

/** The block index of a content_block_* event. */
function indexOf(event: Fields & { type: string }): number {
  return position(event, 'index', event.type, "the block's position in the message");
}

/** The input as an event, or the error that says why it is none. */
function checkEvent(input: unknown): Fields & { type: string } {
  if (!isObject(input) || typeof input.type !== 'string') {
    throw new AguiRxError(
      'INVALID_EVENT',
      `fromAnthropicMessages received ${isObject(input) ? `an object without a string 'type' (got ${describeValue(input.type)})` : describeValue(input)} where a Messages stream event such as { type: 'message_start', … } was expected. Parse each server-sent event's data first: parseSSE(), map((message) => JSON.parse(message.data)).`,
    );
  }
  return input as Fields & { type: string };
}

/** The message's counts as TokenUsage, or `undefined` when it has none. */
function usageOf(counts: Partial<Record<CountField, number>>, model: string | undefined): TokenUsage | undefined {
  const { input_tokens: input, output_tokens: output, cache_creation_input_tokens: writes, cache_read_input_tokens: reads } = counts;
  // AG-UI's inputTokens counts every prompt token; Anthropic reports the cache's beside its input_tokens.
  const inputTokens = input === undefined && writes === undefined && reads === undefined ? undefined : (input ?? 0) + (writes ?? 0) + (reads ?? 0);
  const totalTokens = inputTokens !== undefined && output !== undefined ? inputTokens + output : undefined;
  return usageReport({ inputTokens, outputTokens: output, totalTokens, cachedInputTokens: reads, cacheWriteInputTokens: writes }, model);
}
