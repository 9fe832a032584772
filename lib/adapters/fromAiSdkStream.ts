import { EventType, type Interrupt, type TokenUsage } from '@ag-ui/core';
import type { OperatorFunction } from 'rxjs';
import type { AgentEvent } from '../protocol/agentEvent.js';
import { AguiRxError, describeValue } from '../protocol/errors.js';
import { generateId as defaultGenerateId, type IdGenerator } from '../protocol/generateId.js';
import { createOperator } from '../protocol/createOperator.js';
import { warnDiagnostic, type DiagnosticHandler } from '../protocol/diagnostics.js';
import { interrupt as interruptRun } from '../interaction/interrupts.js';
import { aiSdkAnthropicReasoning as anthropicReasoning, createReasoningBlocks } from './reasoningBlocks.js';
import { createDropReporter, errorMessage, fieldReaders, isObject, rawEvent, tokenUsageEvent, toolCallStart, usageReport, type Fields, type UsageCounts } from './readers.js';
import type { AiSdkStreamPart } from './wire/aiSdk.js';

// The provider's stream format, importable from here too.
export type * from './wire/aiSdk.js';

/** Options of {@link fromAiSdkStream}. */
export interface FromAiSdkStreamOptions {
  /** Mints the id of an assistant message whose first part is a tool call. Default: nanoid. */
  generateId?: IdGenerator | undefined;
  /** Also send each part as it came, as `RAW { event, source: 'ai-sdk' }`, before the events made from it. Default: false. */
  raw?: boolean | undefined;
  /** Told of each kind of part that has no AG-UI form and is dropped (`source`, `file`, `data-*` …), once per type per subscription, and of each call `abort` cut mid-arguments. Default: `console.warn`. */
  onDiagnostic?: DiagnosticHandler | undefined;
}

// The AI SDK's parts are objects, not JSON: a null field is a wrong value, not an absent one.
const { invalid, object, string, requiredName: required, count } = fieldReaders({
  adapter: 'fromAiSdkStream',
  malformed: 'a malformed stream part',
  unit: 'part',
  nullIsAbsent: false,
});

/** What is known of a tool call of the run. */
interface Call {
  name: string;
  /** The argument text sent so far. */
  args: string;
  /** Whether its whole input came (`tool-call`, `tool-input-available`, `tool-input-error`) or a result: no longer being written. */
  whole: boolean;
}

/**
 * Turns a Vercel AI SDK stream (`fullStream` parts, provider stream parts or UI message stream
 * chunks; AI SDK 4 and AI SDK 5 and later) into agent events: text, reasoning, tool calls and
 * results, steps, usage and the run's outcome.
 *
 * Each model call (a step, or a provider response) is one assistant message: its text, its tool
 * calls (`parentMessageId`) and, under `<id>-reasoning`, its reasoning.
 *
 * ```text
 * source:  -s--t--c--S--o--f--|   s = start-step, t = text-delta, c = tool-call, S = finish-step,
 * output:  -P--x--k--F--r--U--|   o = tool-output-available, f = finish
 *          P = STEP_STARTED, x = TEXT_MESSAGE_CHUNK, k = TOOL_CALL_CHUNK, F = STEP_FINISHED,
 *          r = TOOL_CALL_RESULT, U = TOKEN_USAGE
 * ```
 *
 * Rules:
 * 1. The assistant message of a model call is named by the provider's response id
 *    (`response-metadata`), else by AI SDK 4's `step-start.messageId`, else by the id of its first
 *    text or reasoning part, else minted; an id an earlier message had gets a `-<n>` suffix.
 *    `start-step`, `finish-step` and a `response-metadata` with another id begin a new message.
 *    The UI stream's `start.messageId` names the whole multi-step UI message and is not used.
 *    After the result of a tool the provider ran (`providerExecuted: true`, e.g. Anthropic's web
 *    search; one whose call did not come before it is dropped, with a diagnostic), the text and
 *    calls that follow are a new assistant message `<message id>-<part id>`
 *    (the first such part's id; a number when it has none), as `fromAnthropicMessages` splits
 *    them, so that the client's transcript reads call, result, answer.
 * 2. `text-delta` becomes TEXT_MESSAGE_CHUNK with the message's id, `reasoning-delta` (AI SDK 4:
 *    `reasoning`) REASONING_MESSAGE_CHUNK with `<message id>-reasoning`, a later reasoning block
 *    (another part `id`) of the message `<message id>-reasoning-<n>` (n from 2); the delta is read
 *    from `delta`, `text` (`fullStream`) or `textDelta` (AI SDK 4). Empty deltas, and
 *    `*-start`/`*-end`, send nothing; a delta part with none of those fields is an `INVALID_EVENT`.
 *    Anthropic's thinking signature (`providerMetadata.anthropic.signature` of a reasoning part:
 *    an empty `reasoning-delta`, or a UI stream's `reasoning-start` / `reasoning-end`) becomes
 *    REASONING_ENCRYPTED_VALUE `{ subtype: 'message', entityId: <reasoning message id> }`, once per
 *    value; a redacted block (`providerMetadata.anthropic.redactedData`) is a reasoning message
 *    with no text, REASONING_MESSAGE_START `metadata: { anthropic: { type: 'redacted_thinking' } }`,
 *    and that data as its encrypted value, as `fromAnthropicMessages` sends them.
 * 3. `tool-input-start` (AI SDK 4: `tool-call-streaming-start`) opens a call (TOOL_CALL_CHUNK with
 *    `toolCallId`, `toolCallName` and `parentMessageId`), `tool-input-delta` (AI SDK 4:
 *    `tool-call-delta`, `argsTextDelta`) adds its argument text, and an AI SDK 4 provider's
 *    `tool-call-delta`, which comes without a start, opens its call with the tool it names; a new
 *    response ends the calls the last one left open (TOOL_CALL_END). `tool-call`,
 *    `tool-input-available` and `tool-input-error` carry the whole input (`input`, AI SDK 4:
 *    `args`): it is sent only when no argument text was (opening the call if needed), so
 *    arguments are never doubled. Object input is sent as JSON text. A delta without argument
 *    text, or a `tool-call` / `tool-input-available` with neither `input` nor `args`, is an
 *    `INVALID_EVENT`.
 * 4. `tool-result` and `tool-output-available` become TOOL_CALL_RESULT with the output (`output`,
 *    AI SDK 4: `result`); a `tool-result` with neither is sent empty and reported through
 *    `onDiagnostic`; preliminary outputs are skipped. `tool-error`, `tool-output-error`, a
 *    `tool-result` with `isError` and `tool-output-denied` become TOOL_CALL_RESULT too, whose
 *    content is `Error: <message>` (or says the call was denied), so that no call is left
 *    without an answer.
 * 5. `tool-approval-request` is held as an interrupt `{ id: approvalId, reason: 'tool_approval',
 *    toolCallId, message }`; at `finish`, or when the source completes, the interrupts end the run:
 *    RUN_FINISHED with `outcome: { type: 'interrupt', interrupts }`.
 * 6. `start-step` (AI SDK 4: `step-start`) becomes STEP_STARTED `step-<n>` (n counts from 1),
 *    `finish-step` (`step-finish`) its STEP_FINISHED.
 * 7. Usage becomes TOKEN_USAGE (`inputTokens`, `outputTokens`, `totalTokens`, `reasoningTokens`,
 *    `cachedInputTokens`, `cacheWriteInputTokens`, and `model` from `response-metadata` or the
 *    step's response; absent counts omitted), flat and nested forms alike, and AI SDK 4's
 *    `promptTokens` / `completionTokens` as `inputTokens` / `outputTokens`. `finish` sends its
 *    `totalUsage` (or `usage`); without one, the steps' `finish-step` usage is sent instead, at
 *    `finish` or when the source completes or errors. A usage object with none of those counts
 *    sends nothing and is reported through `onDiagnostic`.
 * 8. `error` is a `PROVIDER_ERROR` error; `abort` sends the usage held, then RUN_FINISHED with
 *    `outcome: { type: 'cancelled' }`, and later parts are ignored. A call it cut while its
 *    arguments were streaming (no whole input yet, its text not whole JSON) stays as it was sent
 *    (the fragments are on the wire; the user asked to stop, so this is no error), and
 *    `onDiagnostic` names it and its arguments so far: it must not be run.
 * 9. `start`, `stream-start`, `message-metadata`, `raw` and the `*-start`/`*-end` parts are
 *    bookkeeping and send nothing. `source`, `source-url`, `source-document`, `file`, `data-*`,
 *    AI SDK 4's `reasoning-signature` and `redacted-reasoning` (AI SDK 5 and later carry them in
 *    `providerMetadata`, rule 2) and parts of unknown types carry content this adapter
 *    does not send: they are dropped, with one `onDiagnostic` per part type per subscription. A
 *    part that is not an object with a string `type`, or whose fields have the wrong types, is an
 *    `INVALID_EVENT` error. Under `toAgui` both errors become RUN_ERROR.
 *
 * ## Example
 *
 * ```ts
 * of<AiSdkStreamPart[]>(
 *   { type: 'start-step' },
 *   { type: 'text-start', id: 't1' },
 *   { type: 'text-delta', id: 't1', delta: 'Hi' },
 *   { type: 'text-end', id: 't1' },
 *   { type: 'finish-step' },
 *   { type: 'finish', totalUsage: { inputTokens: 9, outputTokens: 1, totalTokens: 10 } },
 * ).pipe(fromAiSdkStream()).subscribe((event) => console.log(JSON.stringify(event)));
 * // results: {"type":"STEP_STARTED","stepName":"step-1"}, {"type":"TEXT_MESSAGE_CHUNK","messageId":"t1","delta":"Hi"}, {"type":"STEP_FINISHED","stepName":"step-1"}, {"type":"TOKEN_USAGE","usage":{"inputTokens":9,"outputTokens":1,"totalTokens":10}}
 * ```
 *
 * @param options The id generator for messages that begin with a tool call, the `raw` switch, and where dropped parts are reported.
 * @return A function that returns an Observable of agent events, to pipe into `toAgui`.
 */
export function fromAiSdkStream(options: FromAiSdkStreamOptions = {}): OperatorFunction<AiSdkStreamPart, AgentEvent> {
  const mint = options.generateId ?? defaultGenerateId;
  const raw = options.raw ?? false;
  const onDiagnostic = options.onDiagnostic ?? warnDiagnostic;
  return createOperator<AiSdkStreamPart, AgentEvent>((subscriber) => {
    // Dropped part types, each reported once.
    const report = createDropReporter(onDiagnostic);
    // The current assistant message's id, chosen when it first says something.
    let message: string | undefined;
    // The provider response the current message belongs to, and the one that names the next message.
    let response: string | undefined;
    let nextResponse: string | undefined;
    // Every message id of the run, so that a reused part id ("0" in each step) names no two messages.
    const used = new Set<string>();
    // The steps begun, and whether one is open.
    let steps = 0;
    let stepOpen = false;
    // The model, for usage reports.
    let model: string | undefined;
    // The run's tool calls by id, and those of the current message still open downstream.
    const calls = new Map<string, Call>();
    let openCalls = new Set<string>();
    // Per-step usage, sent unless `finish` reports the run's total.
    let stepUsage: TokenUsage[] = [];
    // Tool approvals asked for: the run's interrupt outcome.
    let interrupts: Interrupt[] = [];
    // After `abort`, nothing more is read.
    let done = false;
    const emit = (event: AgentEvent) => subscriber.next(event);
    // The current message's reasoning blocks, each a reasoning message with its signature.
    const reasoning = createReasoningBlocks(emit);

    // After a provider-executed tool's result, the assistant message its answer goes to, and whether the next content begins one.
    let segment: string | undefined;
    let segmentEnded = false;

    const unusedId = (wanted: string): string => {
      let id = wanted;
      for (let n = used.size + 1; used.has(id); n++) id = `${wanted}-${n}`;
      used.add(id);
      return id;
    };

    const messageId = (partId?: string): string => {
      if (message !== undefined) return message;
      const id = nextResponse ?? partId ?? mint();
      nextResponse = undefined;
      return (message = unusedId(id));
    };

    // The assistant message of text and calls: after a provider-executed tool's result, a new one `<message id>-<part id>`.
    const assistantId = (partId?: string): string => {
      const base = messageId(partId);
      if (segmentEnded) segment = unusedId(`${base}-${partId ?? used.size + 1}`);
      segmentEnded = false;
      return segment ?? base;
    };

    const endMessage = () => {
      segment = undefined;
      segmentEnded = false;
      reasoning.reset();
      message = undefined;
      response = undefined;
      openCalls = new Set();
    };

    const sendUsage = (reports: TokenUsage[]) => {
      for (const usage of reports) emit(tokenUsageEvent(usage));
    };

    const flush = () => {
      const held = stepUsage;
      stepUsage = [];
      sendUsage(held);
    };

    const interrupt = () => {
      if (interrupts.length === 0) return;
      const held = interrupts;
      interrupts = [];
      emit(interruptRun(held));
    };

    const openCall = (toolCallId: string, toolName: string, args?: string): Call => {
      const parentMessageId = assistantId();
      const call: Call = { name: toolName, args: args ?? '', whole: false };
      calls.set(toolCallId, call);
      openCalls.add(toolCallId);
      emit(toolCallStart(toolCallId, toolName, parentMessageId, args));
      return call;
    };

    // A usage object in neither version's words: its counts are not sent, and the reader is told once.
    const unreadUsage = (where: string, part: Fields) =>
      report(
        'usage:unread',
        `fromAiSdkStream could not read ${where}: it has none of the AI SDK's token counts (inputTokens / outputTokens / totalTokens of AI SDK 5 and later, promptTokens / completionTokens of AI SDK 4), so no usage is reported for it. Later usage of that kind is not reported again.`,
        part,
      );

    const result = (part: Fields, toolCallId: string, content: unknown) => {
      const call = calls.get(toolCallId);
      if (call === undefined && part.providerExecuted === true) {
        // The provider ran it within this stream, so its call must be in it: a result of no call would be a tool message answering nothing.
        report(
          `orphan:${toolCallId}`,
          `fromAiSdkStream dropped the result of provider-executed tool call '${toolCallId}': no call with that id came before it in this stream (a provider runs its own tools within the response that calls them). Check that the stream is whole and in order.`,
          part,
        );
        return;
      }
      openCalls.delete(toolCallId);
      if (call !== undefined) call.whole = true;
      emit({ type: EventType.TOOL_CALL_RESULT, toolCallId, content: content === undefined ? '' : content === null ? 'null' : (content as string) });
      // The provider ran the tool inside this response: what the model says next answers it, in a message after the result.
      if (part.providerExecuted === true) segmentEnded = true;
    };

    const onPart = (part: Fields, type: string) => {
      switch (type) {
        case 'text-delta':
        case 'reasoning-delta':
        case 'reasoning': {
          const id = string(part, 'id', type);
          const delta = deltaText(part, type);
          if (delta === '') {
            // A signature_delta is an empty reasoning-delta with the signature in its providerMetadata.
            if (type === 'reasoning-delta') reasoning.encrypted(messageId(id), id, anthropicReasoning(part.providerMetadata));
            return;
          }
          const owner = messageId(id);
          // Text and reasoning end the calls before them (toolCallCorrelator closes them too).
          openCalls.clear();
          if (type === 'text-delta') emit({ type: EventType.TEXT_MESSAGE_CHUNK, messageId: assistantId(id), delta });
          else reasoning.text(owner, id, delta);
          if (type === 'reasoning-delta') reasoning.encrypted(owner, id, anthropicReasoning(part.providerMetadata));
          return;
        }
        case 'reasoning-start':
        case 'reasoning-end': {
          // Bounds, but Anthropic's signature or redacted data may ride on them (UI stream; redacted_thinking in fullStream).
          const encrypted = anthropicReasoning(part.providerMetadata);
          if (encrypted === undefined) return;
          const id = string(part, 'id', type);
          openCalls.clear();
          reasoning.encrypted(messageId(id), id, encrypted);
          return;
        }
        case 'tool-input-start':
        case 'tool-call-streaming-start': {
          const toolCallId = callId(part, type);
          if (calls.has(toolCallId)) return;
          openCall(toolCallId, required(part, 'toolName', type));
          return;
        }
        case 'tool-input-delta':
        case 'tool-call-delta': {
          const toolCallId = callId(part, type);
          const delta = argsDelta(part, type);
          const call = calls.get(toolCallId);
          if (call === undefined) {
            // AI SDK 4's provider parts stream a call without a start part: its deltas name the tool.
            const toolName = string(part, 'toolName', type);
            if (toolName === undefined || toolName === '') {
              throw invalid(`${type} for tool call '${toolCallId}' came before its ${type === 'tool-call-delta' ? 'tool-call-streaming-start' : 'tool-input-start'}, which names the tool. Is the stream cut short or reordered?`);
            }
            openCall(toolCallId, toolName, delta);
            return;
          }
          if (delta === '') return;
          call.args += delta;
          emit({ type: EventType.TOOL_CALL_CHUNK, toolCallId, delta });
          return;
        }
        case 'tool-call':
        case 'tool-input-available':
        case 'tool-input-error': {
          const toolCallId = required(part, 'toolCallId', type);
          const toolName = required(part, 'toolName', type);
          const args = inputText(callInput(part, type, toolCallId), type);
          const call = calls.get(toolCallId) ?? openCall(toolCallId, toolName, args);
          if (call.args === '' && args !== '') {
            call.args = args;
            emit({ type: EventType.TOOL_CALL_CHUNK, toolCallId, delta: args });
          }
          call.whole = true;
          return;
        }
        case 'tool-result':
        case 'tool-output-available': {
          const toolCallId = required(part, 'toolCallId', type);
          if (part.preliminary === true) return;
          // The UI stream's JSON leaves out an undefined output (a tool that returned nothing); a
          // fullStream part always has one of its version's fields.
          if (type === 'tool-result' && !('output' in part) && !('result' in part)) {
            report(
              'tool-result:no-output',
              `fromAiSdkStream read a 'tool-result' part for tool call '${toolCallId}' with neither 'output' (AI SDK 5 and later) nor 'result' (AI SDK 4), so its result is sent empty, as for a tool that returned nothing. Later such parts are not reported again.`,
              part,
            );
          }
          const output = 'output' in part ? part.output : part.result;
          if (part.isError === true) return result(part, toolCallId, `Error: ${errorMessage(output, 'no message given')}`);
          return result(part, toolCallId, output);
        }
        case 'tool-error':
        case 'tool-output-error':
          return result(part, required(part, 'toolCallId', type), `Error: ${type === 'tool-error' ? errorMessage(part.error, 'no message given') : (string(part, 'errorText', type) ?? 'no message given')}`);
        case 'tool-output-denied': {
          const toolCallId = required(part, 'toolCallId', type);
          const name = string(part, 'toolName', type) ?? calls.get(toolCallId)?.name;
          return result(part, toolCallId, `Error: the user denied the call${name === undefined ? '' : ` to '${name}'`}.`);
        }
        case 'tool-approval-request': {
          const approvalId = required(part, 'approvalId', type);
          const carried = part.toolCall === undefined ? undefined : object(part.toolCall, `${type}.toolCall`, "{ toolCallId: 'call-1', toolName: 'search', input: {} }");
          const toolCallId = string(part, 'toolCallId', type) ?? (carried === undefined ? undefined : required(carried, 'toolCallId', `${type}.toolCall`));
          const name = (carried === undefined ? undefined : string(carried, 'toolName', `${type}.toolCall`)) ?? (toolCallId === undefined ? undefined : calls.get(toolCallId)?.name);
          const entry: Interrupt = { id: approvalId, reason: 'tool_approval' };
          if (toolCallId !== undefined) entry.toolCallId = toolCallId;
          if (name !== undefined) entry.message = `Approve the call to '${name}'?`;
          interrupts.push(entry);
          return;
        }
        case 'response-metadata': {
          const id = string(part, 'id', type);
          model = string(part, 'modelId', type) ?? model;
          if (id === undefined || id === '' || id === response) return;
          // A new response is a new message; an id that comes after its message began just names the response.
          if (response !== undefined || message === undefined) {
            // Nothing else ends a response's calls when no step boundary follows (provider parts).
            for (const toolCallId of openCalls) emit({ type: EventType.TOOL_CALL_END, toolCallId });
            endMessage();
            nextResponse = id;
          }
          response = id;
          return;
        }
        case 'start-step':
        case 'step-start': {
          if (stepOpen) emit({ type: EventType.STEP_FINISHED, stepName: `step-${steps}` });
          steps++;
          stepOpen = true;
          endMessage();
          // AI SDK 4 names the step's response message; a continued step (isContinued) reuses the name, suffixed.
          const named = string(part, 'messageId', type);
          if (named !== undefined && named !== '') nextResponse = named;
          emit({ type: EventType.STEP_STARTED, stepName: `step-${steps}` });
          return;
        }
        case 'finish-step':
        case 'step-finish': {
          const answer = part.response;
          if (isObject(answer)) model = string(answer, 'modelId', `${type}.response`) ?? model;
          const usage = usageOf(part.usage, `${type}.usage`, model, (where) => unreadUsage(where, part));
          if (usage !== undefined) stepUsage.push(usage);
          if (stepOpen) emit({ type: EventType.STEP_FINISHED, stepName: `step-${steps}` });
          stepOpen = false;
          endMessage();
          return;
        }
        case 'finish': {
          const unread = (where: string) => unreadUsage(where, part);
          const total = part.totalUsage !== undefined ? usageOf(part.totalUsage, 'finish.totalUsage', model, unread) : usageOf(part.usage, 'finish.usage', model, unread);
          if (total !== undefined) {
            stepUsage = [];
            sendUsage([total]);
          } else flush();
          interrupt();
          return;
        }
        case 'error':
          throw new AguiRxError(
            'PROVIDER_ERROR',
            `The AI SDK stream reported an error: ${string(part, 'errorText', type) ?? errorMessage(part.error, 'no message given')}. Retry the request; if it keeps failing, check the request, the API key and the provider's status.`,
          );
        case 'abort':
          // The user stopped the run: it ends cancelled, but a call cut mid-arguments is already on the wire.
          for (const [toolCallId, call] of calls) if (isCut(call)) onDiagnostic({ message: cutByAbort(toolCallId, call), event: part });
          flush();
          done = true;
          emit({ type: EventType.RUN_FINISHED, outcome: { type: 'cancelled' } });
          return;
        // Bookkeeping, with nothing of the answer in it: a part's bounds (its deltas carry the
        // content), the UI message's id, the call's warnings, message metadata the app defines,
        // and the provider's own chunks (includeRawChunks), whose content comes as the parts around them.
        case 'text-start':
        case 'text-end':
        case 'tool-input-end':
        case 'start':
        case 'stream-start':
        case 'message-metadata':
        case 'raw':
          return;
        default:
          // source, source-url, source-document, file, data-*, AI SDK 4's reasoning signatures and types added later carry content not sent.
          return report(
            type,
            `fromAiSdkStream dropped a '${type}' part (${typeof part.id === 'string' && part.id !== '' ? `id '${part.id}', ` : ''}${stepOpen ? `in step-${steps}` : 'outside a step'}): it has no AG-UI form. Later '${type}' parts of this stream are dropped without another warning.`,
            part,
          );
      }
    };

    return {
      next(input) {
        if (done) return;
        if (raw) emit(rawEvent(input, 'ai-sdk'));
        const part = input as unknown;
        if (!isObject(part) || typeof part.type !== 'string') {
          throw new AguiRxError(
            'INVALID_EVENT',
            `fromAiSdkStream received ${isObject(part) ? `an object whose type is ${describeValue(part.type)}` : describeValue(part)} where an AI SDK stream part ({ type: 'text-delta', id, delta }, …) was expected. Pipe streamText().fullStream, a model's doStream() stream, or the parsed chunks of a UI message stream.`,
          );
        }
        onPart(part, part.type);
      },
      flush,
      complete() {
        flush();
        interrupt();
        subscriber.complete();
      },
    };
  });
}

/** Whether a call was still being written: no whole input nor result came, and its argument text is not whole JSON. */
function isCut(call: Call): boolean {
  if (call.whole) return false;
  try {
    // A call's arguments are an object: `12` may be the start of `123`, or of nothing a tool takes.
    const args: unknown = JSON.parse(call.args);
    return typeof args !== 'object' || args === null || Array.isArray(args);
  } catch {
    return true;
  }
}

/** The diagnostic of a call that `abort` cut in the middle of its arguments. */
function cutByAbort(toolCallId: string, call: Call): string {
  const shown = call.args.length > 60 ? `${call.args.slice(0, 60)}…` : call.args;
  return `fromAiSdkStream received 'abort' in the middle of tool call '${toolCallId}' (${call.name}): its arguments stopped at ${call.args === '' ? 'nothing' : JSON.stringify(shown)}, which is not a whole JSON object. The run ends cancelled, as the user asked, but the call stays in the client's messages half-written: it must not be run, and the next request made from those messages carries it (the converters send its input as {}, with a warning, and answer it with a failed result).`;
}

/** A tool call's id: `toolCallId` (UI stream) or `id` (`fullStream`, provider parts). */
function callId(part: Fields, where: string): string {
  const id = string(part, 'toolCallId', where) ?? string(part, 'id', where);
  if (id === undefined || id === '') throw invalid(`${where} has neither 'toolCallId' nor 'id'. Each ${where} part names its tool call.`);
  return id;
}

/** A text or reasoning part's piece of text: `delta` (provider parts, UI stream), `text` (`fullStream` 5 and later) or `textDelta` (AI SDK 4). */
function deltaText(part: Fields, where: string): string {
  const delta = string(part, 'delta', where) ?? string(part, 'text', where) ?? string(part, 'textDelta', where);
  if (delta === undefined) {
    throw invalid(`${where} has no text: neither 'delta' nor 'text' (AI SDK 5 and later) nor 'textDelta' (AI SDK 4). Each ${where} part carries its piece of text in one of them; is the stream from another library?`);
  }
  return delta;
}

/** A piece of a tool call's argument text: `delta` (`fullStream`, provider parts), `inputTextDelta` (UI stream) or `argsTextDelta` (AI SDK 4). */
function argsDelta(part: Fields, where: string): string {
  const delta = string(part, 'inputTextDelta', where) ?? string(part, 'delta', where) ?? string(part, 'argsTextDelta', where);
  if (delta === undefined) {
    throw invalid(`${where} has no argument text: neither 'delta' / 'inputTextDelta' (AI SDK 5 and later) nor 'argsTextDelta' (AI SDK 4). Each ${where} part carries a piece of the call's arguments in one of them.`);
  }
  return delta;
}

/** A tool call's whole input: `input` (AI SDK 5 and later) or `args` (AI SDK 4); `tool-input-error` may have none (the model's input was the error). */
function callInput(part: Fields, where: string, toolCallId: string): unknown {
  if ('input' in part) return part.input;
  if ('args' in part) return part.args;
  if (where === 'tool-input-error') return undefined;
  throw invalid(`${where} for tool call '${toolCallId}' has neither 'input' (AI SDK 5 and later) nor 'args' (AI SDK 4), the call's arguments. Each ${where} part carries them, '{}' for a tool without parameters.`);
}

/** A tool call's whole input as JSON text: as it came when a string, serialised when parsed. */
function inputText(input: unknown, where: string): string {
  if (input === undefined) return '';
  if (typeof input === 'string') return input;
  try {
    return JSON.stringify(input) ?? '';
  } catch (error) {
    throw invalid(`${where}.input (${describeValue(input)}) cannot be serialised to JSON: ${(error as Error).message}.`);
  }
}

// The count fields of each version's usage: an object with none of them is not usage this adapter can read.
const usageFields = ['inputTokens', 'outputTokens', 'totalTokens', 'reasoningTokens', 'cachedInputTokens', 'inputTokenDetails', 'outputTokenDetails', 'promptTokens', 'completionTokens'];

/**
 * The part's usage as TokenUsage (AI SDK 5's flat or the provider's nested form, or AI SDK 4's
 * `promptTokens` / `completionTokens`), or `undefined` when it reports no count; `unread` is told
 * of a usage object with none of those fields.
 */
function usageOf(usage: unknown, where: string, model: string | undefined, unread: (where: string) => void): TokenUsage | undefined {
  if (usage === undefined || usage === null) return undefined;
  const fields = object(usage, where, '{ inputTokens: 9, outputTokens: 1 }');
  if (!usageFields.some((field) => field in fields)) {
    unread(where);
    return undefined;
  }
  // NaN, like absent, means "not reported" (the AI SDK's own convention).
  const n = (value: unknown, path: string) => count(Number.isNaN(value) ? undefined : value, `${where}.${path}`);
  const at = (value: unknown, field: string, path: string) => n(isObject(value) ? value[field] : undefined, path);
  const { inputTokens: input, outputTokens: output } = fields;
  const counts: UsageCounts =
    isObject(input) || isObject(output)
      ? {
          inputTokens: at(input, 'total', 'inputTokens.total'),
          outputTokens: at(output, 'total', 'outputTokens.total'),
          reasoningTokens: at(output, 'reasoning', 'outputTokens.reasoning'),
          cachedInputTokens: at(input, 'cacheRead', 'inputTokens.cacheRead'),
          cacheWriteInputTokens: at(input, 'cacheWrite', 'inputTokens.cacheWrite'),
        }
      : {
          inputTokens: n(input, 'inputTokens') ?? n(fields.promptTokens, 'promptTokens'),
          outputTokens: n(output, 'outputTokens') ?? n(fields.completionTokens, 'completionTokens'),
          totalTokens: n(fields.totalTokens, 'totalTokens'),
          reasoningTokens: n(fields.reasoningTokens, 'reasoningTokens') ?? at(fields.outputTokenDetails, 'reasoningTokens', 'outputTokenDetails.reasoningTokens'),
          cachedInputTokens: n(fields.cachedInputTokens, 'cachedInputTokens') ?? at(fields.inputTokenDetails, 'cacheReadTokens', 'inputTokenDetails.cacheReadTokens'),
          cacheWriteInputTokens: at(fields.inputTokenDetails, 'cacheWriteTokens', 'inputTokenDetails.cacheWriteTokens'),
        };
  return usageReport(counts, model);
}
