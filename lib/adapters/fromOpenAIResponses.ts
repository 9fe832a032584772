import { EventType, type TokenUsage } from '@ag-ui/core';
import type { OperatorFunction } from 'rxjs';
import type { AgentEvent } from '../protocol/agentEvent.js';
import { AguiRxError, describeValue } from '../protocol/errors.js';
import { generateId as defaultGenerateId, type IdGenerator } from '../protocol/generateId.js';
import { createOperator } from '../protocol/createOperator.js';
import { fieldReaders, isObject, nonEmpty, providerError, rawEvent, tokenUsageEvent, toolCallStart, usageReport, type Fields } from './readers.js';
import type { ResponseStreamEvent } from './wire/openAIResponses.js';

// The provider's stream format, importable from here too.
export type * from './wire/openAIResponses.js';

/** Options of {@link fromOpenAIResponses}. */
export interface FromOpenAIResponsesOptions {
  /** Mints ids for output that arrives outside any response (no `response.created`) or items without ids. Default: nanoid. */
  generateId?: IdGenerator;
  /** Also send each event as it came, as `RAW { event, source: 'openai-responses' }`, before the events made from it. Default: false. */
  raw?: boolean;
}

const { invalid, object, string, requiredString, list, index, count } = fieldReaders({
  adapter: 'fromOpenAIResponses',
  malformed: 'a malformed Responses API event',
  unit: 'event',
});

/** One output item of the response being read, keyed by its `output_index`. */
interface Item {
  kind: 'message' | 'reasoning' | 'call';
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
}

/** The response being read. */
interface OpenResponse {
  /** Its id, from the event that began it: proxies that rotate ids change it on later events. */
  id: string;
  /** The assistant message its text and tool calls currently go to; the response id first. */
  assistant?: string;
  items: Map<number, Item>;
}

/**
 * Turns an OpenAI Responses API stream (its typed events) into agent events: text, reasoning,
 * tool-call chunks and token usage.
 *
 * One response is one assistant turn: its text and its function calls share one assistant message,
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
 *    none is open); its `response.id` names the response's assistant message. Later events'
 *    response and item ids are not trusted (GitHub Copilot changes them on every event): output
 *    items are keyed by `output_index` within the response.
 * 2. The response's first message item, or its first function call if that comes first, uses the
 *    response id as the assistant message id; each further message item is a message of its own,
 *    named by its first item id. `response.output_text.delta` and `response.refusal.delta` become
 *    TEXT_MESSAGE_CHUNK with that id; empty pieces send nothing.
 * 3. A `function_call` item becomes a tool call: `call_id` is its `toolCallId`, its first
 *    TOOL_CALL_CHUNK carries `toolCallName` and `parentMessageId` = the assistant message the
 *    response's text last went to (the response id when none). `function_call_arguments.delta`
 *    fragments follow, keyed by `output_index`, so calls may interleave.
 * 4. Reasoning summary deltas (`response.reasoning_summary_text.delta`) and reasoning text deltas
 *    (`response.reasoning_text.delta`) become REASONING_MESSAGE_CHUNK with `messageId` = the
 *    reasoning item's first id. A summary's parts are one reasoning message, separated by a blank line.
 * 5. The whole texts (`output_text.done`, `refusal.done`, `content_part.done`,
 *    `reasoning_summary_text.done`, `reasoning_summary_part.done`, `function_call_arguments.done`,
 *    `output_item.done`, and the output of `response.completed` / `response.incomplete`) send what
 *    the deltas did not: arguments that only arrive whole are not lost. A whole text that does not
 *    begin with what the deltas sent is an `INVALID_EVENT` error.
 * 6. `response.completed` and `response.incomplete` end the response (its text is kept) and send its
 *    `usage` as TOKEN_USAGE (`inputTokens`, `outputTokens`, `totalTokens`, `cachedInputTokens`,
 *    `cacheWriteInputTokens`, `reasoningTokens`, `model`; absent counts omitted).
 * 7. An `error` event, or `response.failed` (after its usage), is a `PROVIDER_ERROR` error; under
 *    `toAgui` it becomes RUN_ERROR. Events of other types are skipped; an event that is not an
 *    object with a string `type`, or a known event with malformed fields, is an `INVALID_EVENT` error.
 * 8. When the source completes with a function call whose arguments never arrived whole (no
 *    `.done` and no end of its response), or `response.incomplete` ends a call cut off (its item
 *    `incomplete`, or never done), the output fails with `INCOMPLETE_STREAM` (after the usage)
 *    rather than leave a half-written call. Text cut off either way is kept.
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
 * @param options The id generator for output without ids, and whether to keep each event as RAW.
 * @return A function that returns an Observable of agent events, to pipe into `toAgui`.
 * @throws {AguiRxError} `INVALID_OPTIONS` at call time when `generateId` is not a function.
 */
export function fromOpenAIResponses(options: FromOpenAIResponsesOptions = {}): OperatorFunction<ResponseStreamEvent, AgentEvent> {
  if (options.generateId !== undefined && typeof options.generateId !== 'function') {
    throw new AguiRxError('INVALID_OPTIONS', `fromOpenAIResponses got generateId: ${describeValue(options.generateId)}, but generateId must be a function that returns a fresh id string.`);
  }
  const mint = options.generateId ?? defaultGenerateId;
  const raw = options.raw ?? false;
  return createOperator<ResponseStreamEvent, AgentEvent>((subscriber) => {
    // The response being read, until its end event.
    let response: OpenResponse | undefined;
    const emit = (event: AgentEvent) => subscriber.next(event);

    const begin = (id: string | undefined) => {
      response = { id: id ?? mint(), items: new Map() };
      return response;
    };
    const current = () => response ?? begin(undefined);

    // The item at `index`, created as `kind` when new; another kind there is a malformed stream.
    const itemAt = (index: number, kind: Item['kind'], itemId: unknown, type: string): Item => {
      const open = current();
      const known = open.items.get(index);
      if (known !== undefined) {
        if (known.kind !== kind) throw invalid(`${type} is for output_index ${index}, which holds a ${describeKind(known.kind)}, not a ${describeKind(kind)}.`);
        return known;
      }
      const providerId = nonEmpty(itemId);
      let id: string;
      if (kind === 'message') {
        id = open.assistant === undefined ? open.id : (providerId ?? mint());
        open.assistant = id;
      } else id = providerId ?? mint();
      const item: Item = { kind, id, sent: new Map() };
      open.items.set(index, item);
      return item;
    };

    // Sends `delta` as part `part` of `item`.
    const send = (item: Item, part: string, delta: string) => {
      if (delta === '') return;
      const before = item.sent.get(part);
      item.sent.set(part, (before ?? '') + delta);
      if (item.kind === 'message') return emit({ type: EventType.TEXT_MESSAGE_CHUNK, messageId: item.id, delta });
      if (item.kind === 'reasoning') {
        // A new part of a summary that already said something: a blank line between the two.
        const separated = before === undefined && item.sent.size > 1 ? `\n\n${delta}` : delta;
        return emit({ type: EventType.REASONING_MESSAGE_CHUNK, messageId: item.id, delta: separated });
      }
      if (item.started) emit({ type: EventType.TOOL_CALL_CHUNK, toolCallId: item.id, delta });
      else startCall(item);
    };

    // The first TOOL_CALL_CHUNK of a call, once its name is known, with the arguments held so far.
    const startCall = (item: Item) => {
      if (item.started || item.name === undefined) return;
      const open = current();
      item.started = true;
      const parentMessageId = (open.assistant ??= open.id);
      const args = item.sent.get('args') ?? '';
      emit(toolCallStart(item.id, item.name, parentMessageId, args));
    };

    // Sends what the deltas did not of a part whose whole text is `whole`.
    const catchUp = (item: Item, part: string, whole: string, where: string) => {
      const sent = item.sent.get(part) ?? '';
      if (!whole.startsWith(sent)) {
        throw invalid(
          `${where} has the whole ${describeKind(item.kind)} text ${describeValue(whole)}, which does not begin with what its deltas sent (${describeValue(sent)}). The deltas and the final text disagree; is the stream reordered or are events of two streams mixed?`,
        );
      }
      send(item, part, whole.slice(sent.length));
    };

    // A function_call item (added or done): names the call, and sends its arguments with its first chunk when it has some.
    const onCallItem = (index: number, fields: Fields, where: string) => {
      const callId = string(fields, 'call_id', where);
      const item = itemAt(index, 'call', callId ?? string(fields, 'id', where), where);
      // A call first met by its argument deltas got a minted id: the item names it before it starts.
      if (!item.started && callId !== undefined && callId !== '') item.id = callId;
      const name = string(fields, 'name', where);
      if (item.name === undefined && name !== undefined && name !== '') item.name = name;
      const args = string(fields, 'arguments', where);
      if (args !== undefined) catchUp(item, 'args', args, where);
      startCall(item);
      return item;
    };

    // An item whole (`output_item.done`, or an entry of the final response's output).
    const onItemDone = (index: number, fields: Fields, where: string) => {
      switch (fields.type) {
        case 'message': {
          const item = itemAt(index, 'message', string(fields, 'id', where), where);
          list(fields, 'content', where).forEach((part, i) => onPartDone(item, i, part, `${where}.content[${i}]`));
          return;
        }
        case 'reasoning': {
          const item = itemAt(index, 'reasoning', string(fields, 'id', where), where);
          list(fields, 'summary', where).forEach((part, i) => catchUp(item, `s${i}`, string(object(part, `${where}.summary[${i}]`), 'text', `${where}.summary[${i}]`) ?? '', where));
          list(fields, 'content', where).forEach((part, i) => catchUp(item, `c${i}`, string(object(part, `${where}.content[${i}]`), 'text', `${where}.content[${i}]`) ?? '', where));
          return;
        }
        case 'function_call': {
          const item = onCallItem(index, fields, where);
          // An incomplete item (cut by max_output_tokens) has arguments that were never finished.
          if (fields.status === 'incomplete') item.done = false;
          else if (string(fields, 'arguments', where) !== undefined) finishCall(item, where);
          return;
        }
        default:
          return;
      }
    };

    const onPartDone = (item: Item, index: number, part: unknown, where: string) => {
      const fields = object(part, where);
      const whole = fields.type === 'output_text' ? string(fields, 'text', where) : fields.type === 'refusal' ? string(fields, 'refusal', where) : undefined;
      if (whole !== undefined) catchUp(item, `c${index}`, whole, where);
    };

    // A call whose whole arguments have been sent.
    const finishCall = (item: Item, where: string) => {
      if (!item.started) {
        throw invalid(`${where} ends the function call at its output_index without its name: no output item named it. Send response.output_item.added (or .done) with the function_call item.`);
      }
      item.done = true;
    };

    // The response's end: a completed or incomplete response's output fills in what is missing.
    const end = (fields: Fields, where: string) => {
      const final = object(fields.response, `${where}.response`);
      const open = current();
      if (where !== 'response.failed') list(final, 'output', `${where}.response`).forEach((entry, i) => onItemDone(i, object(entry, `${where}.response.output[${i}]`), `${where}.response.output[${i}]`));
      let cut: Item | undefined;
      for (const item of open.items.values()) {
        if (item.kind !== 'call') continue;
        if (!item.started) {
          throw invalid(`${where} ends a response whose function call at one output_index was never named: no output item gave its call_id and name, so its arguments cannot be sent. Send response.output_item.added (or .done) with the function_call item.`);
        }
        if (where === 'response.incomplete' && !item.done) cut ??= item;
        item.done = true;
      }
      response = undefined;
      const usage = usageOf(final.usage, final.model, `${where}.response.usage`);
      if (usage !== undefined) emit(tokenUsageEvent(usage));
      if (cut !== undefined) {
        const details = final.incomplete_details;
        const reason = isObject(details) && typeof details.reason === 'string' ? ` (${details.reason})` : '';
        throw new AguiRxError(
          'INCOMPLETE_STREAM',
          `The response ended incomplete${reason} in the middle of function call '${cut.id}' (${cut.name}): its arguments were cut off, so the call must not run. Raise max_output_tokens, or retry the request.`,
        );
      }
      return final;
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
        case 'response.output_item.added': {
          const item = object(event.item, `${type}.item`);
          const index = outputIndex(event, type);
          if (item.type === 'message') itemAt(index, 'message', string(item, 'id', `${type}.item`), type);
          else if (item.type === 'reasoning') itemAt(index, 'reasoning', string(item, 'id', `${type}.item`), type);
          else if (item.type === 'function_call') onCallItem(index, item, `${type}.item`);
          return;
        }
        case 'response.output_item.done':
          return onItemDone(outputIndex(event, type), object(event.item, `${type}.item`), `${type}.item`);
        case 'response.output_text.delta':
        case 'response.refusal.delta':
          return send(itemAt(outputIndex(event, type), 'message', event.item_id, type), `c${partIndex(event, 'content_index', type)}`, delta(event, type));
        case 'response.output_text.done':
        case 'response.refusal.done': {
          const item = itemAt(outputIndex(event, type), 'message', event.item_id, type);
          const whole = requiredString(event, type === 'response.output_text.done' ? 'text' : 'refusal', type);
          return catchUp(item, `c${partIndex(event, 'content_index', type)}`, whole, type);
        }
        case 'response.content_part.done': {
          const item = itemAt(outputIndex(event, type), 'message', event.item_id, type);
          return onPartDone(item, partIndex(event, 'content_index', type), event.part, `${type}.part`);
        }
        case 'response.function_call_arguments.delta':
          return send(itemAt(outputIndex(event, type), 'call', undefined, type), 'args', delta(event, type));
        case 'response.function_call_arguments.done': {
          const item = itemAt(outputIndex(event, type), 'call', undefined, type);
          const name = string(event, 'name', type);
          if (item.name === undefined && name !== undefined && name !== '') item.name = name;
          catchUp(item, 'args', requiredString(event, 'arguments', type), type);
          startCall(item);
          return finishCall(item, type);
        }
        case 'response.reasoning_summary_text.delta':
          return send(itemAt(outputIndex(event, type), 'reasoning', event.item_id, type), `s${partIndex(event, 'summary_index', type)}`, delta(event, type));
        case 'response.reasoning_summary_text.done':
        case 'response.reasoning_summary_part.done': {
          const item = itemAt(outputIndex(event, type), 'reasoning', event.item_id, type);
          const whole = type === 'response.reasoning_summary_text.done' ? requiredString(event, 'text', type) : (string(object(event.part, `${type}.part`), 'text', `${type}.part`) ?? '');
          return catchUp(item, `s${partIndex(event, 'summary_index', type)}`, whole, type);
        }
        case 'response.reasoning_text.delta':
          return send(itemAt(outputIndex(event, type), 'reasoning', event.item_id, type), `c${partIndex(event, 'content_index', type)}`, delta(event, type));
        case 'response.reasoning_text.done':
          return catchUp(itemAt(outputIndex(event, type), 'reasoning', event.item_id, type), `c${partIndex(event, 'content_index', type)}`, requiredString(event, 'text', type), type);
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
      next(input) {
        if (raw) emit(rawEvent(input, 'openai-responses'));
        if (!isObject(input) || typeof input.type !== 'string') {
          throw new AguiRxError(
            'INVALID_EVENT',
            `fromOpenAIResponses received ${describeValue(input)} where a Responses API stream event (an object with a string 'type', such as 'response.output_text.delta') was expected. Parse each server-sent event's data first: parseSSE(), map((message) => JSON.parse(message.data)).`,
          );
        }
        onEvent(input, input.type);
      },
      complete() {
        const open = response === undefined ? [] : [...response.items.values()];
        const cut = open.find((item) => item.kind === 'call' && !item.done);
        if (cut !== undefined) {
          throw new AguiRxError(
            'INCOMPLETE_STREAM',
            `The Responses API stream ended in the middle of function call '${cut.id}'${cut.name === undefined ? '' : ` (${cut.name})`}: its arguments never arrived whole (no function_call_arguments.done, output_item.done or response.completed). The call was not run; retry the request, and check that the whole response body is read.`,
          );
        }
        subscriber.complete();
      },
    };
  });
}

function describeKind(kind: Item['kind']): string {
  return kind === 'call' ? 'function call' : kind === 'message' ? 'message' : 'reasoning item';
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
