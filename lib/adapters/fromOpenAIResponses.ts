import { EventType, type Interrupt, type TokenUsage } from '@ag-ui/core';
import type { OperatorFunction } from 'rxjs';
import type { AgentEvent } from '../protocol/agentEvent.js';
import { AguiRxError, describeValue } from '../protocol/errors.js';
import { generateId as defaultGenerateId, type IdGenerator } from '../protocol/generateId.js';
import { createOperator } from '../protocol/createOperator.js';
import { warnDiagnostic, type DiagnosticHandler } from '../protocol/diagnostics.js';
import { approvalInterrupt, interrupt } from '../interaction/interrupts.js';
import { createDropReporter, fieldReaders, isIndex, isObject, nonEmpty, providerError, rawEvent, tokenUsageEvent, toolCallStart, usageReport, type Fields } from './readers.js';
import { isToolItemProgress, jsonStringPiece, toolItemArguments, toolItemForms, toolItemMark, toolItemName, toolItemResult, type ToolItemForm } from './responsesToolItems.js';
import { droppedAnnotation } from './responsesAnnotations.js';
import type { ResponseStreamEvent } from './wire/openAIResponses.js';
import { cutCalls, cutToolCallError, endedEarlyError, endedInToolCallError, type StreamedCall } from '../protocol/cutToolCalls.js';

// The provider's stream format, importable from here too.
export type * from './wire/openAIResponses.js';

/** Options of {@link fromOpenAIResponses}. */
export interface FromOpenAIResponsesOptions {
  /** Mints ids for output that arrives outside any response (no `response.created`) or items without ids. Default: nanoid. */
  generateId?: IdGenerator | undefined;
  /** Also send each event as it came, as `RAW { event, source: 'openai-responses' }`, before the events made from it. Default: false. */
  raw?: boolean | undefined;
  /**
   * Receives what the adapter drops or keeps on purpose: items, content parts and event types with no AG-UI form, text
   * annotations (citations), log probabilities, outputs for calls the stream did not make, final texts that disagree with their deltas,
   * incomplete responses (and the server-run tools they stopped). Default: `console.warn`.
   */
  onDiagnostic?: DiagnosticHandler | undefined;
}

const { invalid, object, string, requiredString, list, index, count } = fieldReaders({
  adapter: 'fromOpenAIResponses',
  malformed: 'a malformed Responses API event',
  unit: 'event',
});

/** One output item of the response being read. */
interface Item {
  kind: 'message' | 'reasoning' | 'call' | 'other';
  /** Its `output_index`, as first met. */
  index: number;
  /** The AG-UI id: the message's, the reasoning message's, or the tool call's. */
  id: string;
  /** The provider's item id, as first given: a `*_output` item may name its call by it. */
  itemId?: string;
  /** What has been sent (or, for a call not yet named, held) of each part: `c<content_index>`, `s<summary_index>`, or `args`. */
  sent: Map<string, string>;
  /**
   * What `output_item.added` (or `content_part.added`) already held of each part: sent only if no
   * delta and no whole text of that part follows, when the item or the response ends.
   */
  snapshot?: Map<string, string>;
  /** A call: its tool's name, once known. */
  name?: string;
  /** A call: whether its first TOOL_CALL_CHUNK went out. */
  started?: boolean;
  /** A call: whether its whole arguments arrived (`.done`), so that it is not half-written. */
  done?: boolean;
  /** A call whose item says it was cut off (`status: incomplete`). */
  cut?: boolean;
  /** A call made by a tool item other than `function_call`: how it is read. */
  form?: ToolItemForm;
  /** The item's `type` (tool items, other items). */
  type?: string;
  /** A tool item's call: the `metadata` its first TOOL_CALL_CHUNK carries (`{ openai: { type, server_label? } }`). */
  mark?: Record<string, unknown>;
  /** A message item: the keys of its `refusal` parts, kept apart from its text by a blank line. */
  refusals?: Set<string>;
  /** Parts whose whole text disagreed with their deltas, reported once each. */
  reported?: Set<string>;
  /** Another item: its fields as last seen, and whether it was dealt with (a result, RAW, or a diagnostic). */
  fields?: Fields;
  handled?: boolean;
  /** A reasoning item: its `encrypted_content`, until sent; a whole item's replaces what the added item held. */
  encrypted?: string;
  /** A reasoning item: whether its encrypted content went out (once: the completed output repeats the item). */
  sealed?: boolean;
}

/** The response being read. */
interface OpenResponse {
  /** Its id, from the event that began it: proxies that rotate ids change it on later events. */
  id: string;
  /** The assistant message its text and tool calls currently go to; the response id first. */
  assistant?: string;
  /** Its items, in the order met. */
  items: Item[];
  /** The item each `output_index` last pointed to: how events without a known item id find theirs. */
  byIndex: Map<number, Item>;
  /** Items by every item id an event gave them: found by id first, so that text is never keyed on a guessed index. */
  byId: Map<string, Item>;
  /** Calls by `call_id`. */
  byCallId: Map<string, Item>;
}

/** The content part types, by the kind of item they belong to. */
const partKinds: ReadonlyMap<unknown, 'message' | 'reasoning'> = new Map([
  ['output_text', 'message'],
  ['refusal', 'message'],
  ['reasoning_text', 'reasoning'],
  ['summary_text', 'reasoning'],
]);

/** The fields in which an event of a type the adapter does not read would carry content. */
const contentFields = ['delta', 'text'] as const;

/**
 * Turns an OpenAI Responses API stream (its typed events) into agent events: text, reasoning,
 * tool calls (function, custom and built-in tools) with their results, approval interrupts and
 * token usage.
 *
 * One response is one assistant turn: its text and its tool calls share one assistant message,
 * named after the response, so that a stream of several responses (an agent loop) gives one
 * message per response.
 *
 * ```text
 * source:  --c--a--t--t--f--d--C--|    c = response.created, a = output_item.added (message),
 * output:  --------t--t--k--l--U--|    t = output_text.delta, f = output_item.added (function_call),
 *                                      d = function_call_arguments.delta, C = response.completed
 *          t = TEXT_MESSAGE_CHUNK, k = TOOL_CALL_CHUNK (name), l = TOOL_CALL_CHUNK (arguments), U = TOKEN_USAGE
 * ```
 *
 * Rules:
 * 1. `response.created` begins a response (`response.queued` or `response.in_progress` does when
 *    none is open); its `response.id` names the response's assistant message. Output items are
 *    found by any item id an event gave them before (every text event carries `item_id`), or by the
 *    `call_id` of a call; an event whose id is new goes by `output_index` (GitHub Copilot changes
 *    ids on every event) unless the item there is plainly another (another kind, another call),
 *    when it begins a new item. Other servers number `output_index` inconsistently: text is never
 *    keyed on it while an id says which item it is.
 * 2. The response's first message item, or its first tool call if that comes first, uses the
 *    response id as the assistant message id; each further message item is a message of its own,
 *    named by its first item id. `response.output_text.delta` and `response.refusal.delta` become
 *    TEXT_MESSAGE_CHUNK with that id; empty pieces send nothing. A refusal is shown as the answer,
 *    as `fromOpenAIChatCompletions` shows `delta.refusal`, separated by a blank line from the text
 *    parts of its message item (an `output_text` then a `refusal`); `output_text` parts join as they are.
 *    An audio answer's `response.audio.transcript.delta` is text too, of the response's assistant
 *    message; its audio (`response.audio.delta`, base64) has no AG-UI form in a message and is
 *    dropped, with one `onDiagnostic` per response.
 * 3. A `function_call` item becomes a tool call: `call_id` is its `toolCallId`, its first
 *    TOOL_CALL_CHUNK carries `toolCallName` and `parentMessageId` = the assistant message the
 *    response's text last went to (the response id when none). `function_call_arguments.delta`
 *    fragments follow, so calls may interleave.
 * 4. Reasoning summary deltas and reasoning text deltas (`response.reasoning_text.delta`, and
 *    `reasoning_text` content parts) become REASONING_MESSAGE_CHUNK with `messageId` = the
 *    reasoning item's first id; its parts are one reasoning message, separated by a blank line.
 *    The item's `encrypted_content` (with `include: ['reasoning.encrypted_content']`) becomes
 *    REASONING_ENCRYPTED_VALUE `{ subtype: 'message', entityId: <that id>, encryptedValue }` once,
 *    when the item is done (`output_item.done`, else the response's output; an added item's value is
 *    sent only if neither gives one), after its text; an item with no text (an empty summary) gets a
 *    REASONING_MESSAGE_START first, so that the value has a message to land on.
 * 5. The whole texts (`.done` events, `content_part.done`, `output_item.done`, the output of
 *    `response.completed` / `response.incomplete`) send what the deltas did not: all of it when no
 *    delta sent any, the rest when it begins with what they sent; streamed text is never sent twice.
 *    A whole text that differs otherwise leaves the streamed text as it is and is reported through
 *    `onDiagnostic`; whole arguments that do not begin with the streamed ones are `INVALID_EVENT`.
 *    What `output_item.added` (or `content_part.added`) already holds (a message's text, a call's
 *    arguments, a custom tool's input) is sent only if no delta and no whole text follows for that
 *    part, when the item or the response ends; a call whose added item holds arguments starts then.
 * 6. Other tool items become tool calls (`toolCallId` = `call_id`, else the item id): the name is
 *    the item's `name` (custom tools, MCP), else its type without `_call` (`local_shell`,
 *    `apply_patch`, `computer`, `tool_search`, `web_search` …); the arguments are its input fields as
 *    a JSON object (`{"input": "<text>"}` for a custom tool's free text, streamed as it comes; MCP
 *    `arguments` as they are). The call's first TOOL_CALL_CHUNK carries `metadata: { openai: { type:
 *    '<item type>' } }` (with the item's `server_label` for MCP items), so that `toOpenAIResponsesInput`
 *    sends it back as its own item type, or leaves out what the API will not take back. Server-executed items (`web_search_call`, `file_search_call`,
 *    `mcp_call`, `code_interpreter_call`) also send TOOL_CALL_RESULT; a `*_output` item sends the
 *    result of the call its `call_id` (or `id`) names, by call id or call item id; one that names no
 *    call of the stream is dropped and reported. An `mcp_approval_request` is a call plus an approval interrupt:
 *    when the source completes, RUN_FINISHED with `outcome: { type: 'interrupt' }` ends the run.
 *    The `logprobs` of `response.output_text.delta` (with `include: ['message.output_text.logprobs']`)
 *    have no AG-UI event: dropped, with one `onDiagnostic` per subscription (`raw: true` sends them in RAW).
 * 7. An item of another type, and a content part with no AG-UI form, is reported through
 *    `onDiagnostic` (once per type per run) and the item is sent as `RAW` (unless `raw` sent it
 *    already), also when it was added and never done; a `*_output` item never done is reported. An
 *    event of a type the adapter does not read that carries a `delta` or `text` is reported once per
 *    type, except the progress events of the tool items above, whose whole item carries it. A text
 *    annotation (`url_citation`, `file_citation`, `container_file_citation`, `file_path`: AG-UI has no
 *    citation event), from `response.output_text.annotation.added` or a part's `annotations`, is
 *    dropped, and reported once per annotation type per run, naming the first one.
 * 8. `response.completed` and `response.incomplete` end the response (its text is kept) and send its
 *    `usage` as TOKEN_USAGE (`inputTokens`, `outputTokens`, `totalTokens`, `cachedInputTokens`,
 *    `cacheWriteInputTokens`, `reasoningTokens`, `model`; absent counts omitted). An incomplete
 *    response is reported through `onDiagnostic` with its `incomplete_details.reason`, naming the
 *    server-run tool items it stopped while they ran (dropped: no result came).
 * 9. An `error` event, or `response.failed` (after its usage), is a `PROVIDER_ERROR` error; under
 *    `toAgui` it becomes RUN_ERROR. Events of other types are skipped; an event that is not an
 *    object with a string `type`, or a known event with malformed fields, is an `INVALID_EVENT` error.
 * 10. A tool call cut off (an item `incomplete`, or `response.incomplete` before its item is done
 *    while its arguments are not one whole JSON value; a custom tool's input or a client tool
 *    item's input is whole only when done) fails the output with `INCOMPLETE_STREAM` after the
 *    usage, naming the call; so does a source that completes inside a call. What was streamed
 *    before (text, and the call's arguments so far) stays sent: the call stays in the client's
 *    messages of the failed run.
 * 11. Every response of the stream ends with `response.completed`, `response.incomplete` or
 *    `response.failed`: a source that completes before one did (inside a response, or without any)
 *    was cut off, and fails the output with `INCOMPLETE_STREAM`; the text sent before stays.
 *
 * ## Example
 *
 * ```ts
 * of<ResponseStreamEvent[]>(
 *   { type: 'response.created', response: { id: 'resp_1', model: 'gpt-4o' } },
 *   { type: 'response.output_text.delta', output_index: 0, content_index: 0, delta: 'Hi' },
 *   { type: 'response.output_item.added', output_index: 1, item: { type: 'function_call', call_id: 'call_1', name: 'search', arguments: '' } },
 *   { type: 'response.function_call_arguments.done', output_index: 1, arguments: '{}' },
 *   { type: 'response.completed', response: { id: 'resp_1', model: 'gpt-4o', usage: { input_tokens: 9, output_tokens: 5, total_tokens: 14 } } },
 * ).pipe(fromOpenAIResponses()).subscribe((event) => console.log(JSON.stringify(event)));
 * // results: {"type":"TEXT_MESSAGE_CHUNK","messageId":"resp_1","delta":"Hi"}, {"type":"TOOL_CALL_CHUNK","toolCallId":"call_1","toolCallName":"search","parentMessageId":"resp_1"}, {"type":"TOOL_CALL_CHUNK","toolCallId":"call_1","delta":"{}"}, {"type":"TOKEN_USAGE","usage":{"inputTokens":9,"outputTokens":5,"totalTokens":14,"model":"gpt-4o"}}
 * ```
 *
 * @param options The id generator for output without ids, whether to keep each event as RAW, and the diagnostics handler.
 * @return A function that returns an Observable of agent events, to pipe into `toAgui`.
 * @throws {AguiRxError} `INVALID_OPTIONS` at call time when `generateId` is not a function.
 */
export function fromOpenAIResponses(options: FromOpenAIResponsesOptions = {}): OperatorFunction<ResponseStreamEvent, AgentEvent> {
  if (options.generateId !== undefined && typeof options.generateId !== 'function') {
    throw new AguiRxError('INVALID_OPTIONS', `fromOpenAIResponses got generateId: ${describeValue(options.generateId)}, but generateId must be a function that returns a fresh id string.`);
  }
  const mint = options.generateId ?? defaultGenerateId;
  const raw = options.raw ?? false;
  const diagnose = options.onDiagnostic ?? warnDiagnostic;
  return createOperator<ResponseStreamEvent, AgentEvent>((subscriber) => {
    // The response being read, until its end event.
    let response: OpenResponse | undefined;
    // Whether a response ended: a source that completes before any did, or inside one, was cut off.
    let ended = false;
    // The event being read, for diagnostics.
    let input: unknown;
    // The run's tool call ids, for the results that answer them.
    const calls = new Set<string>();
    // Tool call ids by the item id of their call item: an output item may name its call either way.
    const callItemIds = new Map<string, string>();
    // Approvals asked for: the run's interrupt outcome when the source completes.
    const interrupts: Interrupt[] = [];
    // Dropped item, part and event types, each reported once per run.
    const reportOnce = createDropReporter(diagnose);
    const emit = (event: AgentEvent) => subscriber.next(event);

    const begin = (id: string | undefined) => {
      response = { id: id ?? mint(), items: [], byIndex: new Map(), byId: new Map(), byCallId: new Map() };
      return response;
    };
    const current = () => response ?? begin(undefined);

    const report = (key: string, message: string, event: unknown = input) => reportOnce(key, message, event);

    // The item an event is about: the one its item id (or call id) named before; else the one at `index`, for servers
    // that change ids on every event, unless that one is plainly another item (another kind, another call) while the
    // event names its own; else a new `kind` item. Without any id, another kind at `index` is a malformed stream.
    const itemAt = (index: number, kind: Item['kind'], type: string, itemId?: unknown, callId?: string): Item => {
      const open = current();
      const providerId = nonEmpty(itemId);
      let item = (providerId === undefined ? undefined : open.byId.get(providerId)) ?? (callId === undefined ? undefined : open.byCallId.get(callId));
      if (item !== undefined && item.kind !== kind) throw invalid(`${type} is for output_index ${item.index}, which holds a ${describeKind(item.kind)}, not a ${describeKind(kind)}.`);
      if (item === undefined) {
        const there = open.byIndex.get(index);
        if (there !== undefined && providerId === undefined && callId === undefined && there.kind !== kind) {
          throw invalid(`${type} is for output_index ${there.index}, which holds a ${describeKind(there.kind)}, not a ${describeKind(kind)}.`);
        }
        const another = there === undefined || there.kind !== kind || (callId !== undefined && open.byCallId.get(there.id) === there && there.id !== callId);
        if (!another) item = there;
      }
      if (item === undefined) {
        let id: string;
        if (kind === 'message') {
          id = open.assistant === undefined ? open.id : (providerId ?? mint());
          open.assistant = id;
        } else id = (kind === 'call' ? callId : providerId) ?? mint();
        item = { kind, index, id, sent: new Map() };
        open.items.push(item);
        open.byIndex.set(index, item);
      }
      if (providerId !== undefined) {
        open.byId.set(providerId, item);
        item.itemId ??= providerId;
      }
      if (callId !== undefined && !item.started) {
        // A call first met by its argument deltas got a minted id: the item names it before it starts.
        item.id = callId;
        open.byCallId.set(callId, item);
      }
      return item;
    };

    // Sends `delta` as part `part` of `item`.
    const send = (item: Item, part: string, delta: string) => {
      if (delta === '') return;
      // Content streamed for the part replaces what the item held of it when it was added.
      item.snapshot?.delete(part);
      const before = item.sent.get(part);
      item.sent.set(part, (before ?? '') + delta);
      if (item.kind === 'message') {
        // A refusal after the answer's text (or text after a refusal): a blank line between the two. Text parts join as they are.
        const refusal = item.refusals?.has(part) ?? false;
        const turned = before === undefined && [...item.sent.keys()].some((key) => key !== part && (item.refusals?.has(key) ?? false) !== refusal);
        return emit({ type: EventType.TEXT_MESSAGE_CHUNK, messageId: item.id, delta: turned ? `\n\n${delta}` : delta });
      }
      if (item.kind === 'reasoning') {
        // A new part of a reasoning item that already said something: a blank line between the two.
        const separated = before === undefined && item.sent.size > 1 ? `\n\n${delta}` : delta;
        return emit({ type: EventType.REASONING_MESSAGE_CHUNK, messageId: item.id, delta: separated });
      }
      if (item.started) emit({ type: EventType.TOOL_CALL_CHUNK, toolCallId: item.id, delta: item.form?.streamed ? jsonStringPiece(delta) : delta });
      else startCall(item);
    };

    // Keeps what an added item (or part) already holds, to send if nothing else comes for that part.
    const hold = (item: Item, part: string, text: string) => {
      if (text !== '' && !item.sent.has(part)) (item.snapshot ??= new Map()).set(part, text);
    };

    // Sends what the item held since it was added, for the parts no delta and no whole text came for, then a reasoning
    // item's encrypted content.
    const flush = (item: Item) => {
      const held = item.snapshot;
      if (held !== undefined) {
        item.snapshot = undefined;
        for (const [part, text] of held) if (!item.sent.has(part)) send(item, part, text);
        if (item.kind === 'call') startCall(item);
      }
      seal(item);
    };

    // A reasoning item's encrypted content on its reasoning message, once; an item that sent no text (an empty summary)
    // opens the message first, so that the value has a message to land on and the next request can send it back.
    const seal = (item: Item) => {
      const encryptedValue = item.encrypted;
      if (encryptedValue === undefined) return;
      item.encrypted = undefined;
      item.sealed = true;
      if (item.sent.size === 0) emit({ type: EventType.REASONING_MESSAGE_START, messageId: item.id, role: 'reasoning' });
      emit({ type: EventType.REASONING_ENCRYPTED_VALUE, subtype: 'message', entityId: item.id, encryptedValue });
    };

    // The first TOOL_CALL_CHUNK of a call, once its name is known, with the arguments held so far; a call whose added
    // item held arguments waits for the deltas, the whole arguments or its end, which say what they are.
    const startCall = (item: Item) => {
      if (item.started || item.name === undefined || item.snapshot?.has('args')) return;
      const open = current();
      item.started = true;
      const parentMessageId = (open.assistant ??= open.id);
      const held = item.sent.get('args') ?? '';
      calls.add(item.id);
      if (item.itemId !== undefined) callItemIds.set(item.itemId, item.id);
      emit(toolCallStart(item.id, item.name, parentMessageId, item.form?.streamed ? `{"input":"${jsonStringPiece(held)}` : held, item.mark));
    };

    // A call whose whole arguments have been sent; free text input gets its closing quote and brace.
    const finishCall = (item: Item, where: string) => {
      if (!item.started) {
        throw invalid(`${where} ends the tool call at output_index ${item.index} without its name: no output item named it. Send response.output_item.added (or .done) with the call's item.`);
      }
      if (!item.done && item.form?.streamed) emit({ type: EventType.TOOL_CALL_CHUNK, toolCallId: item.id, delta: '"}' });
      item.done = true;
    };

    const result = (toolCallId: string, content: string) => emit({ type: EventType.TOOL_CALL_RESULT, toolCallId, content });

    // Sends what no delta did of a part whose whole text is `whole`: streamed text is never sent twice, and the rest of
    // a text the deltas began is sent as one more delta.
    const catchUp = (item: Item, part: string, whole: string, where: string) => {
      item.snapshot?.delete(part);
      const sent = item.sent.get(part);
      if (sent === undefined) return send(item, part, whole);
      if (whole === sent) return;
      if (whole.startsWith(sent)) return send(item, part, whole.slice(sent.length));
      if (item.kind === 'call') {
        throw invalid(
          `${where} has the whole arguments ${describeValue(whole)} of tool call '${item.id}', which do not begin with what its deltas sent (${describeValue(sent)}). The deltas and the final arguments disagree; is the stream reordered or are events of two streams mixed?`,
        );
      }
      // Deltas on the wire cannot be taken back: the streamed text stands, the difference is reported once.
      const reported = (item.reported ??= new Set());
      if (reported.has(part)) return;
      reported.add(part);
      let at = 0;
      while (at < sent.length && at < whole.length && sent[at] === whole[at]) at++;
      diagnose({
        message: `fromOpenAIResponses kept the streamed text of ${describeKind(item.kind)} '${item.id}' (${describePart(part)}): ${where} gives a whole text that differs from what its deltas sent, from character ${at} on (streamed ${describeValue(sent.slice(at))}, whole ${describeValue(whole.slice(at))}). Text already sent cannot be taken back, so the streamed text stands; check the server's stream.`,
        event: input,
      });
    };

    // A content part with no AG-UI form: dropped, and reported once per part type.
    const dropPart = (type: unknown, where: string) =>
      report(
        `part:${String(type)}`,
        `fromOpenAIResponses dropped a content part of type ${describeValue(type)} (${where}): it has no AG-UI form. Text parts (output_text, refusal, reasoning_text, summary_text) are kept.`,
      );

    // An annotation of a message's text part (a citation): no AG-UI form. Dropped, and reported once per type per run, as
    // other dropped content is: an answer citing twenty pages would otherwise log twenty warnings.
    const dropAnnotation = (item: Item, partIndex: number, annotation: unknown, where: string) => {
      const fields = object(annotation, where, "{ type: 'url_citation', url, title, start_index, end_index }");
      report(`annotation:${typeof fields.type === 'string' ? fields.type : ''}`, droppedAnnotation(fields, item.id, partIndex));
    };

    // The key and text of content part `partIndex` of `item`; `undefined` (and a diagnostic) for a part with no AG-UI form.
    // Its annotations are dropped, each reported.
    const readPart = (item: Item, partIndex: number, part: unknown, where: string): { key: string; text: string | undefined } | undefined => {
      const fields = object(part, where);
      const kind = partKinds.get(fields.type);
      if (kind !== item.kind) return void dropPart(fields.type, where);
      list(fields, 'annotations', where).forEach((annotation, i) => dropAnnotation(item, partIndex, annotation, `${where}.annotations[${i}]`));
      const key = `${fields.type === 'summary_text' ? 's' : 'c'}${partIndex}`;
      if (fields.type === 'refusal') (item.refusals ??= new Set()).add(key);
      return { key, text: string(fields, fields.type === 'refusal' ? 'refusal' : 'text', where) };
    };

    // A whole content part of `item` at `index`.
    const onPartDone = (item: Item, partIndex: number, part: unknown, where: string) => {
      const read = readPart(item, partIndex, part, where);
      if (read?.text !== undefined) catchUp(item, read.key, read.text, where);
    };

    // A content part as an added item (or content_part.added) holds it: sent only if nothing else comes for it.
    const onPartAdded = (item: Item, partIndex: number, part: unknown, where: string) => {
      const read = readPart(item, partIndex, part, where);
      if (read?.text !== undefined) hold(item, read.key, read.text);
    };

    // A function_call item (added, or whole when `whole`): names the call; the arguments of a whole item are sent, an added item's held.
    const onCallItem = (index: number, fields: Fields, where: string, whole: boolean) => {
      const item = itemAt(index, 'call', where, string(fields, 'id', where), nonEmpty(string(fields, 'call_id', where)));
      const name = string(fields, 'name', where);
      if (item.name === undefined && name !== undefined && name !== '') item.name = name;
      const args = string(fields, 'arguments', where);
      if (args !== undefined) (whole ? catchUp : hold)(item, 'args', args, where);
      startCall(item);
      if (!whole) return;
      flush(item);
      // An incomplete item (cut by max_output_tokens) has arguments that were never finished.
      if (fields.status === 'incomplete') item.cut = true;
      else if (args !== undefined) finishCall(item, where);
    };

    // A custom, shell, computer, MCP, search … call item (added, or whole when `whole`).
    const onToolItem = (index: number, fields: Fields, where: string, type: string, form: ToolItemForm, whole: boolean) => {
      const callId = nonEmpty(string(fields, 'call_id', where)) ?? nonEmpty(string(fields, 'id', where));
      const item = itemAt(index, 'call', where, fields.id, callId);
      if (!item.started) {
        item.name ??= toolItemName(type, fields);
        item.form = form;
        item.type = type;
        item.mark = toolItemMark(type, fields);
      }
      if (form.streamed) {
        const text = string(fields, 'input', where);
        if (text !== undefined) (whole ? catchUp : hold)(item, 'args', text, where);
        startCall(item);
        if (!whole) return;
        flush(item);
        if (fields.status === 'incomplete') item.cut = true;
        else finishCall(item, where);
        return;
      }
      // Structured input is sent whole, once the item is.
      if (!whole || item.done) return;
      if (fields.status === 'incomplete') {
        item.cut = true;
        return;
      }
      item.sent.set('args', toolItemArguments(form, fields));
      startCall(item);
      item.done = true;
      if (form.runs === 'server') result(item.id, toolItemResult(fields, form.input));
      else if (form.runs === 'approval') {
        const server = nonEmpty(fields.server_label);
        interrupts.push(approvalInterrupt({ id: item.id, toolCallId: item.id, message: `Approve the call to '${item.name}'${server === undefined ? '' : ` on MCP server '${server}'`}?` }));
      }
    };

    // A `*_output` item, whole: the result of the call it names by `call_id` (or `id`), by that call's id or its item's;
    // an output that names no call of this stream is dropped, never given to a call it may not answer.
    const onOutputItem = (item: Item, fields: Fields, where: string, type: string) => {
      if (item.handled) return;
      item.handled = true;
      const named = nonEmpty(string(fields, 'call_id', where)) ?? nonEmpty(string(fields, 'id', where));
      const target = named === undefined ? undefined : calls.has(named) ? named : callItemIds.get(named);
      if (target === undefined) {
        return diagnose({
          message: `fromOpenAIResponses dropped a ${type} item (${where}, output_index ${item.index}): ${named === undefined ? 'it has no call_id' : `it answers tool call '${named}', which no call item of this stream made`}, so it has no call to attach to (a result without its call would be a tool message the client cannot pair). The results of earlier turns' calls belong in the request's input, not in the stream.`,
          event: input,
        });
      }
      result(target, toolItemResult(fields));
    };

    // An item this adapter has no AG-UI form for: reported once per type, and sent as RAW.
    const dropItem = (item: Item) => {
      if (item.handled) return;
      item.handled = true;
      report(
        `item:${item.type}`,
        `fromOpenAIResponses has no AG-UI form for output items of type '${item.type}' (the first at output_index ${item.index}): each is sent only as a RAW event. Read them from RAW, or from the response itself.`,
        item.fields,
      );
      if (!raw) emit(rawEvent(item.fields, 'openai-responses'));
    };

    // An item of another type the response ended before it was done: an output never known, or an item sent as RAW as it was added.
    const dropUnfinished = (item: Item) => {
      if (item.handled || !item.type?.endsWith('_output')) return dropItem(item);
      item.handled = true;
      diagnose({ message: `fromOpenAIResponses dropped a ${item.type} item (output_index ${item.index}): it was added but never done, so its output is not known and no result is sent.`, event: item.fields });
    };

    // An output item (added, or whole when `whole`) of any type.
    const onItem = (index: number, fields: Fields, where: string, whole: boolean) => {
      const type = fields.type;
      switch (type) {
        case 'message': {
          const item = itemAt(index, 'message', where, string(fields, 'id', where));
          const onPart = whole ? onPartDone : onPartAdded;
          list(fields, 'content', where).forEach((part, i) => onPart(item, i, part, `${where}.content[${i}]`));
          if (whole) flush(item);
          return;
        }
        case 'reasoning': {
          const item = itemAt(index, 'reasoning', where, string(fields, 'id', where));
          const onPart = whole ? onPartDone : onPartAdded;
          list(fields, 'summary', where).forEach((part, i) => onPart(item, i, part, `${where}.summary[${i}]`));
          list(fields, 'content', where).forEach((part, i) => onPart(item, i, part, `${where}.content[${i}]`));
          // The done item's value encrypts the whole reasoning: it replaces what the added item held.
          const encrypted = nonEmpty(string(fields, 'encrypted_content', where));
          if (encrypted !== undefined && !item.sealed) item.encrypted = encrypted;
          if (whole) flush(item);
          return;
        }
        case 'function_call':
          return onCallItem(index, fields, where, whole);
        default: {
          if (typeof type !== 'string' || type === '') throw invalid(`${where}.type is ${describeValue(type)}, but each output item must have a string type ('message', 'function_call' …).`);
          const form = toolItemForms.get(type);
          if (form !== undefined) return onToolItem(index, fields, where, type, form, whole);
          // Outputs and unknown items are found by position only: an output's id may be its call's.
          const item = itemAt(index, 'other', where);
          item.type = type;
          item.fields = fields;
          if (!whole) return;
          if (type.endsWith('_output')) return onOutputItem(item, fields, where, type);
          return dropItem(item);
        }
      }
    };

    // The response's end: a completed or incomplete response's output fills in what is missing, and what the items
    // held since they were added is sent where nothing else came.
    const end = (fields: Fields, where: string) => {
      const final = object(fields.response, `${where}.response`);
      const open = current();
      if (where !== 'response.failed') {
        list(final, 'output', `${where}.response`).forEach((entry, i) => {
          const item = object(entry, `${where}.response.output[${i}]`);
          const known = typeof item.id === 'string' ? open.byId.get(item.id) : undefined;
          onItem(known?.index ?? i, item, `${where}.response.output[${i}]`, true);
        });
      }
      const details = final.incomplete_details;
      const reason = isObject(details) && typeof details.reason === 'string' ? details.reason : undefined;
      let cut: Item | undefined;
      // Server-run tools still in progress when the response stopped: no result, nothing sent.
      const running: Item[] = [];
      for (const item of open.items) {
        flush(item);
        if (item.kind === 'other') dropUnfinished(item);
        if (item.kind !== 'call' || item.done || where === 'response.failed') continue;
        if (item.cut) {
          cut ??= item;
          continue;
        }
        if (where === 'response.incomplete') {
          if (item.form?.runs === 'server') {
            running.push(item);
            continue;
          }
          // Arguments that are one whole JSON value were written out before the cut: the call stands.
          if (item.form !== undefined || cutCalls([called(item)]).length > 0) {
            cut ??= item;
            continue;
          }
        }
        if (item.name === undefined) {
          throw invalid(`${where} ends a response whose tool call at output_index ${item.index} was never named: no output item gave its call_id and name, so its arguments cannot be sent. Send response.output_item.added (or .done) with the call's item.`);
        }
        startCall(item);
        finishCall(item, where);
      }
      response = undefined;
      ended = true;
      const usage = usageOf(final.usage, final.model, `${where}.response.usage`);
      if (usage !== undefined) emit(tokenUsageEvent(usage));
      if (cut !== undefined) throw cutCall(cut, reason);
      if (where === 'response.incomplete') diagnose({ message: incompleteResponse(open.id, reason, running), event: input });
      return final;
    };

    // The call at `index` that custom tool input events feed; a call not yet seen is a custom tool call.
    const customCallAt = (event: Fields, type: string) => {
      const item = itemAt(outputIndex(event, type), 'call', type, event.item_id);
      if (!item.started && item.form === undefined) {
        item.form = toolItemForms.get('custom_tool_call');
        item.type = 'custom_tool_call';
        item.mark = toolItemMark('custom_tool_call', {});
      }
      return item;
    };

    // An event of a type this adapter does not read. One that carries content (a `delta`, a `text`) drops it: reported
    // once per type. A tool item's progress events are not: the whole item carries what they stream.
    const onOtherEvent = (event: Fields, type: string) => {
      const field = contentFields.find((name) => typeof event[name] === 'string' && event[name] !== '');
      if (field === undefined || isToolItemProgress(type)) return;
      const at = isIndex(event.output_index) ? ` (the first at output_index ${event.output_index})` : '';
      report(
        `event:${type}`,
        `fromOpenAIResponses dropped the '${field}' of ${type} events${at}: it does not know this event type, so what they carry is not sent. If the client should see it, map these events to agent events yourself before the adapter.`,
      );
    };

    const onEvent = (event: Fields, type: string) => {
      switch (type) {
        case 'response.created':
          begin(string(object(event.response, `${type}.response`), 'id', `${type}.response`));
          return;
        case 'response.queued':
        case 'response.in_progress':
          if (response === undefined) begin(string(object(event.response, `${type}.response`), 'id', `${type}.response`));
          return;
        case 'response.output_item.added':
          return onItem(outputIndex(event, type), object(event.item, `${type}.item`), `${type}.item`, false);
        case 'response.output_item.done':
          return onItem(outputIndex(event, type), object(event.item, `${type}.item`), `${type}.item`, true);
        case 'response.output_text.delta':
        case 'response.refusal.delta': {
          if (Array.isArray(event.logprobs) && event.logprobs.length > 0) {
            report(
              'logprobs',
              `fromOpenAIResponses dropped the log probabilities of the output text (${type}.logprobs): AG-UI has no event for them. To read them, pass raw: true and read logprobs from the RAW events. Later log probabilities of this stream are dropped without another warning.`,
            );
          }
          const item = itemAt(outputIndex(event, type), 'message', type, event.item_id);
          const part = `c${partIndex(event, 'content_index', type)}`;
          if (type === 'response.refusal.delta') (item.refusals ??= new Set()).add(part);
          return send(item, part, delta(event, type));
        }
        case 'response.audio.transcript.delta': {
          const text = delta(event, type);
          if (text === '') return;
          const open = current();
          return emit({ type: EventType.TEXT_MESSAGE_CHUNK, messageId: (open.assistant ??= open.id), delta: text });
        }
        case 'response.audio.delta': {
          const open = current();
          return report(
            `audio:${open.id}`,
            `fromOpenAIResponses dropped the audio of response '${open.id}' (response.audio.delta): AG-UI has no event that carries audio in an assistant message, so only its transcript (response.audio.transcript.delta) is sent, as the message's text. To play it, read the response.audio.delta events yourself (raw: true also sends each event as RAW).`,
          );
        }
        case 'response.output_text.done':
        case 'response.refusal.done': {
          const item = itemAt(outputIndex(event, type), 'message', type, event.item_id);
          const whole = requiredString(event, type === 'response.output_text.done' ? 'text' : 'refusal', type);
          const part = `c${partIndex(event, 'content_index', type)}`;
          if (type === 'response.refusal.done') (item.refusals ??= new Set()).add(part);
          return catchUp(item, part, whole, type);
        }
        case 'response.output_text.annotation.added':
          return dropAnnotation(itemAt(outputIndex(event, type), 'message', type, event.item_id), partIndex(event, 'content_index', type), event.annotation, `${type}.annotation`);
        case 'response.content_part.added':
        case 'response.content_part.done': {
          // Any item's parts: text parts of a message, reasoning_text parts of a reasoning item (LM Studio, OpenRouter).
          const part = object(event.part, `${type}.part`);
          const kind = partKinds.get(part.type);
          if (kind === undefined) return dropPart(part.type, `${type}.part`);
          const item = itemAt(outputIndex(event, type), kind, type, event.item_id);
          const onPart = type === 'response.content_part.done' ? onPartDone : onPartAdded;
          return onPart(item, partIndex(event, 'content_index', type), part, `${type}.part`);
        }
        case 'response.function_call_arguments.delta':
          return send(itemAt(outputIndex(event, type), 'call', type, event.item_id), 'args', delta(event, type));
        case 'response.function_call_arguments.done': {
          const item = itemAt(outputIndex(event, type), 'call', type, event.item_id);
          const name = string(event, 'name', type);
          if (item.name === undefined && name !== undefined && name !== '') item.name = name;
          catchUp(item, 'args', requiredString(event, 'arguments', type), type);
          startCall(item);
          return finishCall(item, type);
        }
        case 'response.custom_tool_call_input.delta':
          return send(customCallAt(event, type), 'args', delta(event, type));
        case 'response.custom_tool_call_input.done': {
          const item = customCallAt(event, type);
          catchUp(item, 'args', requiredString(event, 'input', type), type);
          startCall(item);
          return finishCall(item, type);
        }
        case 'response.reasoning_summary_text.delta':
          return send(itemAt(outputIndex(event, type), 'reasoning', type, event.item_id), `s${partIndex(event, 'summary_index', type)}`, delta(event, type));
        case 'response.reasoning_summary_text.done':
        case 'response.reasoning_summary_part.done': {
          const item = itemAt(outputIndex(event, type), 'reasoning', type, event.item_id);
          const whole = type === 'response.reasoning_summary_text.done' ? requiredString(event, 'text', type) : (string(object(event.part, `${type}.part`), 'text', `${type}.part`) ?? '');
          return catchUp(item, `s${partIndex(event, 'summary_index', type)}`, whole, type);
        }
        case 'response.reasoning_text.delta':
          return send(itemAt(outputIndex(event, type), 'reasoning', type, event.item_id), `c${partIndex(event, 'content_index', type)}`, delta(event, type));
        case 'response.reasoning_text.done':
          return catchUp(itemAt(outputIndex(event, type), 'reasoning', type, event.item_id), `c${partIndex(event, 'content_index', type)}`, requiredString(event, 'text', type), type);
        case 'response.completed':
        case 'response.incomplete':
          end(event, type);
          return;
        case 'response.failed': {
          const final = end(event, type);
          throw providerError('The response failed', isObject(final.error) ? final.error : {});
        }
        case 'error':
          throw providerError('The model provider failed mid-stream', isObject(event.error) ? { ...event, ...event.error } : event);
        default:
          return onOtherEvent(event, type);
      }
    };

    return {
      next(event) {
        input = event;
        if (raw) emit(rawEvent(event, 'openai-responses'));
        if (!isObject(event) || typeof event.type !== 'string') {
          throw new AguiRxError(
            'INVALID_EVENT',
            `fromOpenAIResponses received ${describeValue(event)} where a Responses API stream event (an object with a string 'type', such as 'response.output_text.delta') was expected. Parse each server-sent event's data first: parseSSE(), map((message) => JSON.parse(message.data)).`,
          );
        }
        onEvent(event, event.type);
      },
      complete() {
        // The documented stream ends each response with response.completed, .incomplete or .failed: without one, the
        // connection was cut. What was sent stays; what the items held is sent; the output fails.
        const open = response;
        if (open !== undefined) {
          for (const item of open.items) {
            flush(item);
            if (item.kind === 'other') dropUnfinished(item);
          }
          const pending = open.items.filter((item) => item.kind === 'call' && !item.done);
          const cut = pending.find((item) => item.cut);
          if (cut !== undefined) throw cutCall(cut, undefined);
          // Free text and structured input are whole only when their item says so; JSON arguments can tell.
          const unfinished = pending.find((item) => item.form !== undefined || cutCalls([called(item)]).length > 0);
          if (unfinished !== undefined) {
            throw endedInToolCallError('fromOpenAIResponses', 'before its arguments were complete (no function_call_arguments.done, output_item.done or response.completed)', [called(unfinished)]);
          }
        }
        if (open !== undefined || !ended) {
          throw endedEarlyError(
            'fromOpenAIResponses',
            open === undefined ? 'without any response (no response.created, response.completed, response.incomplete or response.failed)' : `before response '${open.id}' did (no response.completed, response.incomplete or response.failed)`,
          );
        }
        if (interrupts.length > 0) emit(interrupt(interrupts));
        subscriber.complete();
      },
    };
  });
}

/** The error of a call cut off by the model's output limit (or a content filter): the run keeps what came before. */
function cutCall(item: Item, reason: string | undefined): AguiRxError {
  return cutToolCallError('fromOpenAIResponses', cutBy(reason), [called(item)], cutAdvice);
}

/**
 * What an incomplete response without a cut call says: its reason, and the server-run tools it
 * stopped while they ran (sent nothing: no arguments known to be whole, no result).
 */
function incompleteResponse(id: string, reason: string | undefined, running: readonly Item[]): string {
  const tools = running.map((item) => `${item.type} '${item.id}' (${item.name})`).join(', ');
  const stopped = running.length === 0 ? '' : ` It stopped while the server was running ${tools}, which ${running.length === 1 ? 'is' : 'are'} dropped: no result came.`;
  return `fromOpenAIResponses: response '${id}' is incomplete: the model's output was cut by ${cutBy(reason)}. The text before the cut is kept and the run ends as usual, its answer cut short.${stopped} ${cutAdvice}`;
}

/** What cut an incomplete response off, from its `incomplete_details.reason`. */
function cutBy(reason: string | undefined): string {
  return reason === undefined ? 'an incomplete response' : reason === 'max_output_tokens' ? 'its token limit (max_output_tokens)' : `the server (incomplete: ${reason})`;
}

const cutAdvice = 'Raise max_output_tokens, or retry the request.';

/** A call as the cut errors name it, with the arguments sent (or held) for it. */
function called(item: Item): StreamedCall {
  return { id: item.id, name: item.name ?? 'unnamed', args: item.sent.get('args') ?? '' };
}

function describePart(part: string): string {
  return part.startsWith('s') ? `summary part ${part.slice(1)}` : `content part ${part.slice(1)}`;
}

function describeKind(kind: Item['kind']): string {
  return kind === 'call' ? 'tool call' : kind === 'message' ? 'message' : kind === 'reasoning' ? 'reasoning item' : 'output item of another type';
}

function delta(event: Fields, type: string): string {
  return requiredString(event, 'delta', type);
}

function outputIndex(event: Fields, type: string): number {
  return index(event, 'output_index', type, "the position of the item in the response's output");
}

/** `content_index` or `summary_index`: 0 when absent. */
function partIndex(event: Fields, field: string, type: string): number {
  return event[field] === undefined || event[field] === null ? 0 : index(event, field, type);
}

/** The response's usage as TokenUsage, or `undefined` when it reports no count. */
function usageOf(usage: unknown, model: unknown, where: string): TokenUsage | undefined {
  if (!isObject(usage)) return undefined;
  const detail = (details: string, field: string) => {
    const fields = usage[details];
    return isObject(fields) ? count(fields[field], `${where}.${details}.${field}`) : undefined;
  };
  return usageReport(
    {
      inputTokens: count(usage.input_tokens, `${where}.input_tokens`),
      outputTokens: count(usage.output_tokens, `${where}.output_tokens`),
      totalTokens: count(usage.total_tokens, `${where}.total_tokens`),
      reasoningTokens: detail('output_tokens_details', 'reasoning_tokens'),
      cachedInputTokens: detail('input_tokens_details', 'cached_tokens'),
      cacheWriteInputTokens: detail('input_tokens_details', 'cache_write_tokens'),
    },
    model,
  );
}
