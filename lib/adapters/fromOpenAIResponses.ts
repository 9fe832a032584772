import { EventType, type Interrupt, type TokenUsage } from '@ag-ui/core';
import type { OperatorFunction } from 'rxjs';
import type { AgentEvent } from '../protocol/agentEvent.js';
import { AguiRxError, describeValue } from '../protocol/errors.js';
import { generateId as defaultGenerateId, type IdGenerator } from '../protocol/generateId.js';
import { createOperator } from '../protocol/createOperator.js';
import { warnDiagnostic, type DiagnosticHandler } from '../protocol/diagnostics.js';
import { approvalInterrupt, interrupt } from '../interaction/interrupts.js';
import { createDropReporter, fieldReaders, isObject, nonEmpty, providerError, rawEvent, tokenUsageEvent, toolCallStart, usageReport, type Fields } from './readers.js';
import { jsonStringPiece, toolFamily, toolItemArguments, toolItemForms, toolItemName, toolItemResult, type ToolItemForm } from './responsesToolItems.js';
import type { ResponseStreamEvent } from './wire/openAIResponses.js';
import { cutToolCallError, endedInToolCallError, type StreamedCall } from '../protocol/cutToolCalls.js';

// The provider's stream format, importable from here too.
export type * from './wire/openAIResponses.js';

/** Options of {@link fromOpenAIResponses}. */
export interface FromOpenAIResponsesOptions {
  /** Mints ids for output that arrives outside any response (no `response.created`) or items without ids. Default: nanoid. */
  generateId?: IdGenerator;
  /** Also send each event as it came, as `RAW { event, source: 'openai-responses' }`, before the events made from it. Default: false. */
  raw?: boolean;
  /** Receives what the adapter drops or keeps on purpose: items and content parts with no AG-UI form, final texts that disagree with their deltas. Default: `console.warn`. */
  onDiagnostic?: DiagnosticHandler;
}

const { invalid, object, string, requiredString, list, index, count } = fieldReaders({
  adapter: 'fromOpenAIResponses',
  malformed: 'a malformed Responses API event',
  unit: 'event',
});

/** One output item of the response being read, keyed by its `output_index`. */
interface Item {
  kind: 'message' | 'reasoning' | 'call' | 'other';
  /** Its `output_index`. */
  index: number;
  /** The AG-UI id: the message's, the reasoning message's, or the tool call's. */
  id: string;
  /** What has been sent (or, for a call not yet named, held) of each part: `c<content_index>`, `s<summary_index>`, or `args`. */
  sent: Map<string, string>;
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
  /** Parts whose whole text disagreed with their deltas, reported once each. */
  reported?: Set<string>;
  /** Another item: its fields as last seen, and whether it was dealt with (a result, or RAW). */
  fields?: Fields;
  handled?: boolean;
}

/** The response being read. */
interface OpenResponse {
  /** Its id, from the event that began it: proxies that rotate ids change it on later events. */
  id: string;
  /** The assistant message its text and tool calls currently go to; the response id first. */
  assistant?: string;
  items: Map<number, Item>;
  /** Items by the provider's item id, where one was given: found by id first, by `output_index` when ids change. */
  byId: Map<string, Item>;
}

/** A call of the run, for the results that answer it. */
interface Call {
  /** `function`, `custom_tool`, `local_shell` …: what its `*_output` item is called. */
  family: string;
  answered: boolean;
}

/** The content part types, by the kind of item they belong to. */
const partKinds: ReadonlyMap<unknown, 'message' | 'reasoning'> = new Map([
  ['output_text', 'message'],
  ['refusal', 'message'],
  ['reasoning_text', 'reasoning'],
  ['summary_text', 'reasoning'],
]);

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
 *    found by their item id when an `output_item` event gave it, else by `output_index` (GitHub
 *    Copilot changes ids on every event, other servers number `output_index` inconsistently).
 * 2. The response's first message item, or its first tool call if that comes first, uses the
 *    response id as the assistant message id; each further message item is a message of its own,
 *    named by its first item id. `response.output_text.delta` and `response.refusal.delta` become
 *    TEXT_MESSAGE_CHUNK with that id; empty pieces send nothing.
 * 3. A `function_call` item becomes a tool call: `call_id` is its `toolCallId`, its first
 *    TOOL_CALL_CHUNK carries `toolCallName` and `parentMessageId` = the assistant message the
 *    response's text last went to (the response id when none). `function_call_arguments.delta`
 *    fragments follow, so calls may interleave.
 * 4. Reasoning summary deltas and reasoning text deltas (`response.reasoning_text.delta`, and
 *    `reasoning_text` content parts) become REASONING_MESSAGE_CHUNK with `messageId` = the
 *    reasoning item's first id; its parts are one reasoning message, separated by a blank line.
 * 5. The whole texts (`.done` events, `content_part.done`, `output_item.done`, the output of
 *    `response.completed` / `response.incomplete`) send a part's text only when no delta sent any:
 *    streamed text is never sent twice. A whole text that differs from what was streamed leaves the
 *    streamed text as it is and is reported through `onDiagnostic`. Arguments that only arrive whole
 *    are sent whole; whole arguments that do not begin with the streamed ones are `INVALID_EVENT`.
 * 6. Other tool items become tool calls (`toolCallId` = `call_id`, else the item id): the name is
 *    the item's `name` (custom tools, MCP), else its type without `_call` (`local_shell`,
 *    `apply_patch`, `computer`, `tool_search`, `web_search` …); the arguments are its input fields as
 *    a JSON object (`{"input": "<text>"}` for a custom tool's free text, streamed as it comes; MCP
 *    `arguments` as they are). Server-executed items (`web_search_call`, `file_search_call`,
 *    `mcp_call`, `code_interpreter_call`) also send TOOL_CALL_RESULT; a `*_output` item sends the
 *    result of the call it answers. An `mcp_approval_request` is a call plus an approval interrupt:
 *    when the source completes, RUN_FINISHED with `outcome: { type: 'interrupt' }` ends the run.
 * 7. An item of another type, and a content part with no AG-UI form, is reported through
 *    `onDiagnostic` (once per type per run) and the item is sent as `RAW` (unless `raw` sent it already).
 * 8. `response.completed` and `response.incomplete` end the response (its text is kept) and send its
 *    `usage` as TOKEN_USAGE (`inputTokens`, `outputTokens`, `totalTokens`, `cachedInputTokens`,
 *    `cacheWriteInputTokens`, `reasoningTokens`, `model`; absent counts omitted).
 * 9. An `error` event, or `response.failed` (after its usage), is a `PROVIDER_ERROR` error; under
 *    `toAgui` it becomes RUN_ERROR. Events of other types are skipped; an event that is not an
 *    object with a string `type`, or a known event with malformed fields, is an `INVALID_EVENT` error.
 * 10. A tool call cut off (`response.incomplete` before its item is done, or an item `incomplete`)
 *    fails the output with `INCOMPLETE_STREAM` after the usage, naming the call; so does a source
 *    that completes inside a call. What was streamed before (text, and the call's arguments so
 *    far) stays sent: the call stays in the client's messages of the failed run.
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
    // The event being read, for diagnostics.
    let input: unknown;
    // The run's tool calls by id, for the results that answer them.
    const calls = new Map<string, Call>();
    // Approvals asked for: the run's interrupt outcome when the source completes.
    const interrupts: Interrupt[] = [];
    // Dropped item and part types, each reported once per run.
    const reportOnce = createDropReporter(diagnose);
    const emit = (event: AgentEvent) => subscriber.next(event);

    const begin = (id: string | undefined) => {
      response = { id: id ?? mint(), items: new Map(), byId: new Map() };
      return response;
    };
    const current = () => response ?? begin(undefined);

    const report = (key: string, message: string, event: unknown = input) => reportOnce(key, message, event);

    // The item named `itemId` by an output item event, else the one at `index`, created as `kind` when new (named by
    // `itemId` when `names`); another kind there is a malformed stream.
    const itemAt = (index: number, kind: Item['kind'], type: string, itemId?: unknown, callId?: string, names = false): Item => {
      const open = current();
      const providerId = nonEmpty(itemId);
      const known = (providerId === undefined ? undefined : open.byId.get(providerId)) ?? open.items.get(index);
      if (known !== undefined) {
        if (known.kind !== kind) throw invalid(`${type} is for output_index ${known.index}, which holds a ${describeKind(known.kind)}, not a ${describeKind(kind)}.`);
        if (names && providerId !== undefined) open.byId.set(providerId, known);
        return known;
      }
      let id: string;
      if (kind === 'message') {
        id = open.assistant === undefined ? open.id : (providerId ?? mint());
        open.assistant = id;
      } else id = (kind === 'call' ? callId : providerId) ?? mint();
      const item: Item = { kind, index, id, sent: new Map() };
      open.items.set(index, item);
      if (names && providerId !== undefined) open.byId.set(providerId, item);
      return item;
    };

    // Sends `delta` as part `part` of `item`.
    const send = (item: Item, part: string, delta: string) => {
      if (delta === '') return;
      const before = item.sent.get(part);
      item.sent.set(part, (before ?? '') + delta);
      if (item.kind === 'message') return emit({ type: EventType.TEXT_MESSAGE_CHUNK, messageId: item.id, delta });
      if (item.kind === 'reasoning') {
        // A new part of a reasoning item that already said something: a blank line between the two.
        const separated = before === undefined && item.sent.size > 1 ? `\n\n${delta}` : delta;
        return emit({ type: EventType.REASONING_MESSAGE_CHUNK, messageId: item.id, delta: separated });
      }
      if (item.started) emit({ type: EventType.TOOL_CALL_CHUNK, toolCallId: item.id, delta: item.form?.streamed ? jsonStringPiece(delta) : delta });
      else startCall(item);
    };

    // The first TOOL_CALL_CHUNK of a call, once its name is known, with the arguments held so far.
    const startCall = (item: Item) => {
      if (item.started || item.name === undefined) return;
      const open = current();
      item.started = true;
      const parentMessageId = (open.assistant ??= open.id);
      const held = item.sent.get('args') ?? '';
      calls.set(item.id, { family: toolFamily(item.type ?? 'function_call'), answered: false });
      emit(toolCallStart(item.id, item.name, parentMessageId, item.form?.streamed ? `{"input":"${jsonStringPiece(held)}` : held));
    };

    // A call whose whole arguments have been sent; free text input gets its closing quote and brace.
    const finishCall = (item: Item, where: string) => {
      if (!item.started) {
        throw invalid(`${where} ends the tool call at output_index ${item.index} without its name: no output item named it. Send response.output_item.added (or .done) with the call's item.`);
      }
      if (!item.done && item.form?.streamed) emit({ type: EventType.TOOL_CALL_CHUNK, toolCallId: item.id, delta: '"}' });
      item.done = true;
    };

    const result = (toolCallId: string, content: string) => {
      const call = calls.get(toolCallId);
      if (call !== undefined) call.answered = true;
      emit({ type: EventType.TOOL_CALL_RESULT, toolCallId, content });
    };

    // Sends what no delta did of a part whose whole text is `whole`: streamed text is never sent twice.
    const catchUp = (item: Item, part: string, whole: string, where: string) => {
      const sent = item.sent.get(part);
      if (sent === undefined) return send(item, part, whole);
      if (whole === sent) return;
      if (item.kind === 'call') {
        if (!whole.startsWith(sent)) {
          throw invalid(
            `${where} has the whole arguments ${describeValue(whole)} of tool call '${item.id}', which do not begin with what its deltas sent (${describeValue(sent)}). The deltas and the final arguments disagree; is the stream reordered or are events of two streams mixed?`,
          );
        }
        return send(item, part, whole.slice(sent.length));
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

    // A whole content part of `item` at `index`.
    const onPartDone = (item: Item, partIndex: number, part: unknown, where: string) => {
      const fields = object(part, where);
      const kind = partKinds.get(fields.type);
      if (kind !== item.kind) return dropPart(fields.type, where);
      const whole = string(fields, fields.type === 'refusal' ? 'refusal' : 'text', where);
      if (whole !== undefined) catchUp(item, `${fields.type === 'summary_text' ? 's' : 'c'}${partIndex}`, whole, where);
    };

    // A function_call item (added or done): names the call, and sends its arguments with its first chunk when it has some.
    const onCallItem = (index: number, fields: Fields, where: string) => {
      const callId = nonEmpty(string(fields, 'call_id', where));
      const item = itemAt(index, 'call', where, string(fields, 'id', where), callId, true);
      // A call first met by its argument deltas got a minted id: the item names it before it starts.
      if (!item.started && callId !== undefined) item.id = callId;
      const name = string(fields, 'name', where);
      if (item.name === undefined && name !== undefined && name !== '') item.name = name;
      const args = string(fields, 'arguments', where);
      if (args !== undefined) catchUp(item, 'args', args, where);
      startCall(item);
      return item;
    };

    // A custom, shell, computer, MCP, search … call item (added, or whole when `whole`).
    const onToolItem = (index: number, fields: Fields, where: string, type: string, form: ToolItemForm, whole: boolean) => {
      const callId = nonEmpty(string(fields, 'call_id', where)) ?? nonEmpty(string(fields, 'id', where));
      const item = itemAt(index, 'call', where, fields.id, callId, true);
      if (!item.started) {
        if (callId !== undefined) item.id = callId;
        item.name ??= toolItemName(type, fields);
        item.form = form;
        item.type = type;
      }
      if (form.streamed) {
        const text = string(fields, 'input', where);
        if (text !== undefined) catchUp(item, 'args', text, where);
        startCall(item);
        if (whole && fields.status === 'incomplete') item.cut = true;
        else if (whole) finishCall(item, where);
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

    // A `*_output` item, whole: the result of the call it names (by `call_id`), else of the latest unanswered call of its tool.
    const onOutputItem = (item: Item, fields: Fields, where: string, type: string) => {
      if (item.handled) return;
      item.handled = true;
      const callId = nonEmpty(string(fields, 'call_id', where)) ?? nonEmpty(string(fields, 'id', where));
      const family = toolFamily(type);
      let target = callId !== undefined && calls.has(callId) ? callId : undefined;
      if (target === undefined) for (const [id, call] of calls) if (call.family === family && !call.answered) target = id;
      if (target === undefined) {
        return report(
          `output:${callId ?? type}`,
          `fromOpenAIResponses dropped a ${type} item (${where}): it answers tool call ${describeValue(callId)}, which this stream did not make, so it has no call to attach to.`,
        );
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

    // An output item (added, or whole when `whole`) of any type.
    const onItem = (index: number, fields: Fields, where: string, whole: boolean) => {
      const type = fields.type;
      switch (type) {
        case 'message': {
          const item = itemAt(index, 'message', where, string(fields, 'id', where), undefined, true);
          if (whole) list(fields, 'content', where).forEach((part, i) => onPartDone(item, i, part, `${where}.content[${i}]`));
          return;
        }
        case 'reasoning': {
          const item = itemAt(index, 'reasoning', where, string(fields, 'id', where), undefined, true);
          if (!whole) return;
          list(fields, 'summary', where).forEach((part, i) => onPartDone(item, i, part, `${where}.summary[${i}]`));
          list(fields, 'content', where).forEach((part, i) => onPartDone(item, i, part, `${where}.content[${i}]`));
          return;
        }
        case 'function_call': {
          const item = onCallItem(index, fields, where);
          if (!whole) return;
          // An incomplete item (cut by max_output_tokens) has arguments that were never finished.
          if (fields.status === 'incomplete') item.cut = true;
          else if (string(fields, 'arguments', where) !== undefined) finishCall(item, where);
          return;
        }
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

    // The response's end: a completed or incomplete response's output fills in what is missing.
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
      let cut: Item | undefined;
      for (const item of open.items.values()) {
        if (item.kind === 'other') {
          if (where !== 'response.failed' && !item.type?.endsWith('_output')) dropItem(item);
          continue;
        }
        if (item.kind !== 'call' || item.done) continue;
        if (item.cut || where === 'response.incomplete') {
          cut ??= item;
          continue;
        }
        if (where === 'response.failed') continue;
        if (item.name === undefined) {
          throw invalid(`${where} ends a response whose tool call at output_index ${item.index} was never named: no output item gave its call_id and name, so its arguments cannot be sent. Send response.output_item.added (or .done) with the call's item.`);
        }
        startCall(item);
        finishCall(item, where);
      }
      response = undefined;
      const usage = usageOf(final.usage, final.model, `${where}.response.usage`);
      if (usage !== undefined) emit(tokenUsageEvent(usage));
      if (cut !== undefined) {
        const details = final.incomplete_details;
        throw cutCall(cut, isObject(details) && typeof details.reason === 'string' ? details.reason : undefined);
      }
      return final;
    };

    // The call at `index` that custom tool input events feed; a call not yet seen is a custom tool call.
    const customCallAt = (event: Fields, type: string) => {
      const item = itemAt(outputIndex(event, type), 'call', type, event.item_id);
      if (!item.started && item.form === undefined) {
        item.form = toolItemForms.get('custom_tool_call');
        item.type = 'custom_tool_call';
      }
      return item;
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
        case 'response.refusal.delta':
          return send(itemAt(outputIndex(event, type), 'message', type, event.item_id), `c${partIndex(event, 'content_index', type)}`, delta(event, type));
        case 'response.output_text.done':
        case 'response.refusal.done': {
          const item = itemAt(outputIndex(event, type), 'message', type, event.item_id);
          const whole = requiredString(event, type === 'response.output_text.done' ? 'text' : 'refusal', type);
          return catchUp(item, `c${partIndex(event, 'content_index', type)}`, whole, type);
        }
        case 'response.content_part.added':
        case 'response.content_part.done': {
          // Any item's parts: text parts of a message, reasoning_text parts of a reasoning item (LM Studio, OpenRouter).
          const part = object(event.part, `${type}.part`);
          const kind = partKinds.get(part.type);
          if (kind === undefined) return dropPart(part.type, `${type}.part`);
          const item = itemAt(outputIndex(event, type), kind, type, event.item_id);
          // An added part's text is a snapshot (empty by the format), never content of its own.
          if (type === 'response.content_part.done') onPartDone(item, partIndex(event, 'content_index', type), part, `${type}.part`);
          return;
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
          return;
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
        const open = response === undefined ? [] : [...response.items.values()];
        const cut = open.find((item) => item.kind === 'call' && !item.done);
        if (cut?.cut) throw cutCall(cut, undefined);
        if (cut !== undefined) {
          throw endedInToolCallError('fromOpenAIResponses', 'before its arguments were complete (no function_call_arguments.done, output_item.done or response.completed)', [called(cut)]);
        }
        if (interrupts.length > 0) emit(interrupt(interrupts));
        subscriber.complete();
      },
    };
  });
}

/** The error of a call cut off by the model's output limit (or a content filter): the run keeps what came before. */
function cutCall(item: Item, reason: string | undefined): AguiRxError {
  const limit = reason === undefined ? 'an incomplete response' : reason === 'max_output_tokens' ? 'its token limit (max_output_tokens)' : `the server (incomplete: ${reason})`;
  return cutToolCallError('fromOpenAIResponses', limit, [called(item)], 'Raise max_output_tokens, or retry the request.');
}

/** A call as the cut errors name it. */
function called(item: Item): StreamedCall {
  return { id: item.id, name: item.name ?? 'unnamed', args: '' };
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
