import { EventType, type Interrupt, type TokenUsage } from '@ag-ui/core';
import type { OperatorFunction } from 'rxjs';
import { ToolkitEventType, type AgentEvent } from '../protocol/agentEvent.js';
import { AguiRxError, describeValue } from '../protocol/errors.js';
import { generateId as defaultGenerateId, type IdGenerator } from '../protocol/generateId.js';
import { createOperator } from '../protocol/createOperator.js';

/**
 * Token counts as the AI SDK reports them: v5's flat `LanguageModelUsage` (v6 adds the
 * `inputTokenDetails`/`outputTokenDetails`), or the provider-level LanguageModelV3 form whose
 * `inputTokens` and `outputTokens` are objects. A count the provider did not return is absent,
 * `undefined` or `NaN`.
 */
export type AiSdkUsage = AiSdkFlatUsage | AiSdkNestedUsage;

/** `LanguageModelUsage` of `streamText` (v5, v6): counts at the top level. */
export interface AiSdkFlatUsage {
  /** Prompt tokens (AI SDK 4/5 flat usage). */
  inputTokens?: number;
  /** Completion tokens. */
  outputTokens?: number;
  /** Prompt plus completion tokens. */
  totalTokens?: number;
  /** Reasoning tokens, part of `outputTokens`. */
  reasoningTokens?: number;
  /** Prompt tokens read from the provider's cache. */
  cachedInputTokens?: number;
  /** v6: the input split by cache use. */
  inputTokenDetails?: {
    /** Prompt tokens neither read from nor written to the cache. */
    noCacheTokens?: number;
    /** Prompt tokens read from the cache. */
    cacheReadTokens?: number;
    /** Prompt tokens written to the cache. */
    cacheWriteTokens?: number;
  };
  /** v6: the output split into text and reasoning. */
  outputTokenDetails?: {
    /** Completion tokens of text. */
    textTokens?: number;
    /** Completion tokens of reasoning. */
    reasoningTokens?: number;
  };
  /** The provider's own usage object; not read. */
  raw?: unknown;
}

/** LanguageModelV3 usage (`doStream`'s `finish` part, AI SDK 6 providers): counts nested by kind. */
export interface AiSdkNestedUsage {
  /** Prompt token counts (AI SDK 6 / provider v3 nested usage). */
  inputTokens: {
    /** All prompt tokens. */
    total?: number;
    /** Prompt tokens neither read from nor written to the cache. */
    noCache?: number;
    /** Prompt tokens read from the cache. */
    cacheRead?: number;
    /** Prompt tokens written to the cache. */
    cacheWrite?: number;
  };
  /** Completion token counts. */
  outputTokens: {
    /** All completion tokens. */
    total?: number;
    /** Completion tokens of text. */
    text?: number;
    /** Completion tokens of reasoning. */
    reasoning?: number;
  };
  /** The provider's own usage object; not read. */
  raw?: unknown;
}

/** Start, delta or end of a text or reasoning part. `fullStream` spells the delta `text`, providers and UI streams `delta`. */
export interface AiSdkTextPart {
  /** Discriminant: `'text-start'`, `'text-delta'`, `'text-end'`, `'reasoning-start'`, `'reasoning-delta'`, `'reasoning-end'`. */
  type: 'text-start' | 'text-delta' | 'text-end' | 'reasoning-start' | 'reasoning-delta' | 'reasoning-end';
  /** The part's id: the same on its start, deltas and end. */
  id: string;
  /** A piece of the text (LanguageModelV2/V3 parts, UI message stream chunks). */
  delta?: string;
  /** A piece of the text (`streamText().fullStream`). */
  text?: string;
  /** Provider-specific data; not read. */
  providerMetadata?: Record<string, unknown>;
}

/** The start, a piece or the end of a tool call's input, streamed as JSON text. */
export interface AiSdkToolInputPart {
  /** Discriminant: `'tool-input-start'`, `'tool-input-delta'`, `'tool-input-end'`. */
  type: 'tool-input-start' | 'tool-input-delta' | 'tool-input-end';
  /** The call's id in `fullStream` and provider parts. */
  id?: string;
  /** The call's id in UI message stream chunks. */
  toolCallId?: string;
  /** The tool's name, on `tool-input-start`. */
  toolName?: string;
  /** A piece of the input's JSON text (`fullStream`, provider parts). */
  delta?: string;
  /** A piece of the input's JSON text (UI message stream). */
  inputTextDelta?: string;
  /** Set for tools the provider ran itself; not read. */
  providerExecuted?: boolean;
  /** Set for tools not known statically (MCP tools); not read. */
  dynamic?: boolean;
}

/**
 * A tool call with its whole input: `tool-call` (`fullStream`: input parsed; provider parts: input
 * as JSON text), the UI stream's `tool-input-available`, or `tool-input-error` (input the model
 * got wrong, kept as it came).
 */
export interface AiSdkToolCallPart {
  /** Discriminant: `'tool-call'`, `'tool-input-available'`, `'tool-input-error'`. */
  type: 'tool-call' | 'tool-input-available' | 'tool-input-error';
  /** The tool call's id. */
  toolCallId: string;
  /** The tool's name. */
  toolName: string;
  /** The call's whole arguments: sent as JSON text when no fragment was. */
  input?: unknown;
  /** `tool-input-error`: why the input was rejected. */
  errorText?: string;
  /** Set for tools the provider ran itself; not read. */
  providerExecuted?: boolean;
  /** Set for tools not known statically (MCP tools); not read. */
  dynamic?: boolean;
  /** Set when the model's arguments failed the tool's schema (`tool-input-error`). */
  invalid?: boolean;
}

/** A tool's output: `tool-result` (`fullStream` `output`, provider parts `result`) or the UI stream's `tool-output-available`. */
export interface AiSdkToolResultPart {
  /** Discriminant: `'tool-result'`, `'tool-output-available'`. */
  type: 'tool-result' | 'tool-output-available';
  /** The tool call's id. */
  toolCallId: string;
  /** The tool's name. */
  toolName?: string;
  /** The tool's output (`tool-output-available`, AI SDK 5 `tool-result`): TOOL_CALL_RESULT `content`. */
  output?: unknown;
  /** The tool's output (AI SDK 4 `tool-result`): TOOL_CALL_RESULT `content`. */
  result?: unknown;
  /** Provider parts: the result is the tool's error. */
  isError?: boolean;
  /** A streamed tool's intermediate output; only the final one is kept. */
  preliminary?: boolean;
  /** Set for tools the provider ran itself; not read. */
  providerExecuted?: boolean;
  /** Set for tools not known statically (MCP tools); not read. */
  dynamic?: boolean;
}

/** A tool that failed (`fullStream` `tool-error`, UI `tool-output-error`) or whose call the user denied (`tool-output-denied`). */
export interface AiSdkToolErrorPart {
  /** Discriminant: `'tool-error'`, `'tool-output-error'`, `'tool-output-denied'`. */
  type: 'tool-error' | 'tool-output-error' | 'tool-output-denied';
  /** The tool call's id. */
  toolCallId: string;
  /** The tool's name. */
  toolName?: string;
  /** The arguments the failed call had; not read. */
  input?: unknown;
  /** `tool-error`: what was thrown. */
  error?: unknown;
  /** `tool-output-error`: the error's message. */
  errorText?: string;
}

/** A tool call that waits for the user's approval (AI SDK 6): the UI stream names the call, `fullStream` carries it. */
export interface AiSdkToolApprovalRequestPart {
  /** Discriminant: `'tool-approval-request'`. */
  type: 'tool-approval-request';
  /** The approval's id: the interrupt's `id`. */
  approvalId: string;
  /** The call awaiting approval (UI message stream chunks). */
  toolCallId?: string;
  /** The call awaiting approval (`fullStream`). */
  toolCall?: {
    /** The call's id. */
    toolCallId: string;
    /** The tool's name. */
    toolName?: string;
    /** The call's arguments. */
    input?: unknown;
  };
}

/** The run's and each step's start and end. `finish` has the run's usage (`totalUsage` in `fullStream`, `usage` in provider parts). */
export interface AiSdkLifecyclePart {
  /** Discriminant: `'abort'`, `'start'`, `'finish'`, `'start-step'`, `'finish-step'`, `'stream-start'`. */
  type: 'start' | 'finish' | 'start-step' | 'finish-step' | 'stream-start' | 'abort';
  /** `start` (UI): the UI message's id. */
  messageId?: string;
  /** `finish-step`: the step's usage; `finish` (provider parts): the call's usage. */
  usage?: AiSdkUsage;
  /** `finish` (`fullStream`): every step's usage summed. */
  totalUsage?: AiSdkUsage;
  /** `finish-step` (`fullStream`): the model's response. */
  response?: {
    /** The provider's response id: names the step's assistant message. */
    id?: string;
    /** The model that answered: TOKEN_USAGE `model`. */
    modelId?: string;
  };
  /** Why the model stopped (`finish`, `finish-step`); not read: the text sent is kept whatever the reason. */
  finishReason?: unknown;
  /** Why the stream was aborted (`abort`). */
  reason?: string;
  [field: string]: unknown;
}

/** Provider parts: the response's id and model, sent as the response begins. */
export interface AiSdkResponseMetadataPart {
  /** Discriminant: `'response-metadata'`. */
  type: 'response-metadata';
  /** The provider's response id: names the assistant message. */
  id?: string;
  /** The model that answered: TOKEN_USAGE `model`. */
  modelId?: string;
  /** When the response was created; not read. */
  timestamp?: unknown;
}

/** A failure: `fullStream` and provider parts carry `error`, the UI stream `errorText`. */
export interface AiSdkErrorPart {
  /** Discriminant: `'error'`. */
  type: 'error';
  /** The error (`fullStream`): an Error or any value; its message becomes the `PROVIDER_ERROR` message. */
  error?: unknown;
  /** The error's text (UI message stream chunks). */
  errorText?: string;
}

/** Parts that say nothing AG-UI carries: sources, files, raw provider chunks, message metadata, custom `data-*` parts. */
export interface AiSdkIgnoredPart {
  /** Discriminant: `'source'`, `'source-url'`, `'source-document'`, `'file'`, `'raw'`, `'message-metadata'`, `data-…`. */
  type: 'source' | 'source-url' | 'source-document' | 'file' | 'raw' | 'message-metadata' | `data-${string}`;
  [field: string]: unknown;
}

/**
 * One part of a Vercel AI SDK stream: `streamText().fullStream` (v5, v6), a provider's
 * `doStream()` (LanguageModelV2/V3 parts), or a UI message stream (`toUIMessageStream()`, the
 * chunks behind `data: {…}` lines of a UI message stream response).
 */
export type AiSdkStreamPart =
  | AiSdkTextPart
  | AiSdkToolInputPart
  | AiSdkToolCallPart
  | AiSdkToolResultPart
  | AiSdkToolErrorPart
  | AiSdkToolApprovalRequestPart
  | AiSdkLifecyclePart
  | AiSdkResponseMetadataPart
  | AiSdkErrorPart
  | AiSdkIgnoredPart;

/** Options of {@link fromAiSdkStream}. */
export interface FromAiSdkStreamOptions {
  /** Mints the id of an assistant message whose first part is a tool call. Default: nanoid. */
  generateId?: IdGenerator;
  /** Also send each part as it came, as `RAW { event, source: 'ai-sdk' }`, before the events made from it. Default: false. */
  raw?: boolean;
}

type Fields = Record<string, unknown>;

/** What is known of a tool call of the run. */
interface Call {
  name: string;
  /** Whether any argument text was sent. */
  hasArgs: boolean;
}

/**
 * Turns a Vercel AI SDK stream (`fullStream` parts, provider stream parts or UI message stream
 * chunks) into agent events: text, reasoning, tool calls and results, steps, usage and the run's
 * outcome.
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
 *    (`response-metadata`), else by the id of its first text or reasoning part, else minted; an
 *    id an earlier message had gets a `-<n>` suffix. `start-step`, `finish-step` and a
 *    `response-metadata` with another id begin a new message. The UI stream's `start.messageId`
 *    names the whole multi-step UI message and is not used.
 * 2. `text-delta` becomes TEXT_MESSAGE_CHUNK with the message's id, `reasoning-delta`
 *    REASONING_MESSAGE_CHUNK with `<message id>-reasoning`; the delta is read from `delta`, or
 *    from `text` (`fullStream`). Empty deltas, and `*-start`/`*-end`, send nothing.
 * 3. `tool-input-start` opens a call (TOOL_CALL_CHUNK with `toolCallId`, `toolCallName` and
 *    `parentMessageId`), `tool-input-delta` adds its argument text; a new response ends the calls
 *    the last one left open (TOOL_CALL_END). `tool-call`,
 *    `tool-input-available` and `tool-input-error` carry the whole input: it is sent only when no
 *    argument text was (opening the call if needed), so arguments are never doubled. Object input
 *    is sent as JSON text.
 * 4. `tool-result` and `tool-output-available` become TOOL_CALL_RESULT with the output (`output`,
 *    or `result`); preliminary outputs are skipped. `tool-error`, `tool-output-error`, a
 *    `tool-result` with `isError` and `tool-output-denied` become TOOL_CALL_RESULT too, whose
 *    content is `Error: <message>` (or says the call was denied), so that no call is left
 *    without an answer.
 * 5. `tool-approval-request` is held as an interrupt `{ id: approvalId, reason: 'tool_approval',
 *    toolCallId, message }`; at `finish`, or when the source completes, the interrupts end the run:
 *    RUN_FINISHED with `outcome: { type: 'interrupt', interrupts }`.
 * 6. `start-step` becomes STEP_STARTED `step-<n>` (n counts from 1), `finish-step` its
 *    STEP_FINISHED.
 * 7. Usage becomes TOKEN_USAGE (`inputTokens`, `outputTokens`, `totalTokens`, `reasoningTokens`,
 *    `cachedInputTokens`, `cacheWriteInputTokens`, and `model` from `response-metadata` or the
 *    step's response; absent counts omitted), flat and nested forms alike. `finish` sends its
 *    `totalUsage` (or `usage`); without one, the steps' `finish-step` usage is sent instead, at
 *    `finish` or when the source completes or errors.
 * 8. `error` is a `PROVIDER_ERROR` error; `abort` sends the usage held, then RUN_FINISHED with
 *    `outcome: { type: 'cancelled' }`, and later parts are ignored.
 * 9. `start`, `stream-start`, `source`, `file`, `raw`, `message-metadata`, `data-*` and parts of
 *    unknown types send nothing; a part that is not an object with a string `type`, or whose
 *    fields have the wrong types, is an `INVALID_EVENT` error. Under `toAgui` both errors become
 *    RUN_ERROR.
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
 * @param options The id generator for messages that begin with a tool call, and the `raw` switch.
 * @return A function that returns an Observable of agent events, to pipe into `toAgui`.
 */
export function fromAiSdkStream(options: FromAiSdkStreamOptions = {}): OperatorFunction<AiSdkStreamPart, AgentEvent> {
  const mint = options.generateId ?? defaultGenerateId;
  const raw = options.raw ?? false;
  return createOperator<AiSdkStreamPart, AgentEvent>((subscriber) => {
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

    const messageId = (partId?: string): string => {
      if (message !== undefined) return message;
      let id = nextResponse ?? partId ?? mint();
      nextResponse = undefined;
      if (used.has(id)) {
        const base = id;
        for (let n = used.size + 1; used.has(id); n++) id = `${base}-${n}`;
      }
      used.add(id);
      return (message = id);
    };

    const endMessage = () => {
      message = undefined;
      response = undefined;
      openCalls = new Set();
    };

    const sendUsage = (reports: TokenUsage[]) => {
      for (const usage of reports) emit({ type: ToolkitEventType.TOKEN_USAGE, usage });
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
      emit({ type: EventType.RUN_FINISHED, outcome: { type: 'interrupt', interrupts: held } });
    };

    const openCall = (toolCallId: string, toolName: string, args?: string) => {
      const first: Fields = { type: EventType.TOOL_CALL_CHUNK, toolCallId, toolCallName: toolName, parentMessageId: messageId() };
      if (args !== undefined && args !== '') first.delta = args;
      calls.set(toolCallId, { name: toolName, hasArgs: args !== undefined && args !== '' });
      openCalls.add(toolCallId);
      emit(first as AgentEvent);
    };

    const result = (toolCallId: string, content: unknown) => {
      openCalls.delete(toolCallId);
      emit({ type: EventType.TOOL_CALL_RESULT, toolCallId, content: content === undefined ? '' : content === null ? 'null' : (content as string) });
    };

    const onPart = (part: Fields, type: string) => {
      switch (type) {
        case 'text-delta':
        case 'reasoning-delta': {
          const id = string(part, 'id', type);
          const delta = string(part, 'delta', type) ?? string(part, 'text', type);
          if (delta === undefined || delta === '') return;
          const owner = messageId(id);
          // Text and reasoning end the calls before them (toolCallCorrelator closes them too).
          openCalls.clear();
          if (type === 'text-delta') emit({ type: EventType.TEXT_MESSAGE_CHUNK, messageId: owner, delta });
          else emit({ type: EventType.REASONING_MESSAGE_CHUNK, messageId: `${owner}-reasoning`, delta });
          return;
        }
        case 'tool-input-start': {
          const toolCallId = callId(part, type);
          if (calls.has(toolCallId)) return;
          openCall(toolCallId, required(part, 'toolName', type));
          return;
        }
        case 'tool-input-delta': {
          const toolCallId = callId(part, type);
          const delta = string(part, 'inputTextDelta', type) ?? string(part, 'delta', type);
          const call = calls.get(toolCallId);
          if (call === undefined) {
            throw invalid(`tool-input-delta for tool call '${toolCallId}' came before its tool-input-start, which names the tool. Is the stream cut short or reordered?`);
          }
          if (delta === undefined || delta === '') return;
          call.hasArgs = true;
          emit({ type: EventType.TOOL_CALL_CHUNK, toolCallId, delta });
          return;
        }
        case 'tool-call':
        case 'tool-input-available':
        case 'tool-input-error': {
          const toolCallId = required(part, 'toolCallId', type);
          const toolName = required(part, 'toolName', type);
          const args = inputText(part.input, type);
          const call = calls.get(toolCallId);
          if (call === undefined) openCall(toolCallId, toolName, args);
          else if (!call.hasArgs && args !== '') {
            call.hasArgs = true;
            emit({ type: EventType.TOOL_CALL_CHUNK, toolCallId, delta: args });
          }
          return;
        }
        case 'tool-result':
        case 'tool-output-available': {
          const toolCallId = required(part, 'toolCallId', type);
          if (part.preliminary === true) return;
          const output = 'output' in part ? part.output : part.result;
          if (part.isError === true) return result(toolCallId, `Error: ${errorMessage(output)}`);
          return result(toolCallId, output);
        }
        case 'tool-error':
        case 'tool-output-error':
          return result(required(part, 'toolCallId', type), `Error: ${type === 'tool-error' ? errorMessage(part.error) : (string(part, 'errorText', type) ?? 'no message given')}`);
        case 'tool-output-denied': {
          const toolCallId = required(part, 'toolCallId', type);
          const name = string(part, 'toolName', type) ?? calls.get(toolCallId)?.name;
          return result(toolCallId, `Error: the user denied the call${name === undefined ? '' : ` to '${name}'`}.`);
        }
        case 'tool-approval-request': {
          const approvalId = required(part, 'approvalId', type);
          const carried = part.toolCall;
          if (carried !== undefined && !isObject(carried)) throw invalid(`tool-approval-request.toolCall is ${describeValue(carried)}, but it must be an object such as { toolCallId: 'call-1', toolName: 'search', input: {} }.`);
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
          if (stepOpen) emit({ type: EventType.STEP_FINISHED, stepName: `step-${steps}` });
          steps++;
          stepOpen = true;
          endMessage();
          emit({ type: EventType.STEP_STARTED, stepName: `step-${steps}` });
          return;
        case 'finish-step': {
          const answer = part.response;
          if (isObject(answer)) model = string(answer, 'modelId', `${type}.response`) ?? model;
          const usage = usageOf(part.usage, 'finish-step.usage', model);
          if (usage !== undefined) stepUsage.push(usage);
          if (stepOpen) emit({ type: EventType.STEP_FINISHED, stepName: `step-${steps}` });
          stepOpen = false;
          endMessage();
          return;
        }
        case 'finish': {
          const total = part.totalUsage !== undefined ? usageOf(part.totalUsage, 'finish.totalUsage', model) : usageOf(part.usage, 'finish.usage', model);
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
            `The AI SDK stream reported an error: ${string(part, 'errorText', type) ?? errorMessage(part.error)}. Retry the request; if it keeps failing, check the request, the API key and the provider's status.`,
          );
        case 'abort':
          flush();
          done = true;
          emit({ type: EventType.RUN_FINISHED, outcome: { type: 'cancelled' } });
          return;
        default:
          // text-start/-end, reasoning-start/-end, tool-input-end, start, stream-start, sources,
          // files, raw chunks, message metadata, data-* parts and types added after this was written.
          return;
      }
    };

    return {
      next(input) {
        if (done) return;
        if (raw) emit({ type: EventType.RAW, event: input, source: 'ai-sdk' });
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

function isObject(value: unknown): value is Fields {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function invalid(detail: string): AguiRxError {
  return new AguiRxError('INVALID_EVENT', `fromAiSdkStream received a malformed stream part: ${detail}`);
}

/** An optional string field; another type is an error. */
function string(fields: Fields, field: string, where: string): string | undefined {
  const value = fields[field];
  if (value === undefined || typeof value === 'string') return value;
  throw invalid(`${where}.${field} is ${describeValue(value)}, but it must be a string.`);
}

/** A required, non-empty string field. */
function required(fields: Fields, field: string, where: string): string {
  const value = string(fields, field, where);
  if (value === undefined || value === '') throw invalid(`${where} has no '${field}'. Each ${where} part names it.`);
  return value;
}

/** A tool call's id: `toolCallId` (UI stream) or `id` (`fullStream`, provider parts). */
function callId(part: Fields, where: string): string {
  const id = string(part, 'toolCallId', where) ?? string(part, 'id', where);
  if (id === undefined || id === '') throw invalid(`${where} has neither 'toolCallId' nor 'id'. Each ${where} part names its tool call.`);
  return id;
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

/** The message of whatever a tool or a provider threw: an Error, a string, an object with `message`, or anything else as JSON. */
function errorMessage(error: unknown): string {
  if (typeof error === 'string') return error === '' ? 'no message given' : error;
  if (isObject(error) || error instanceof Error) {
    const message = (error as { message?: unknown }).message;
    if (typeof message === 'string' && message !== '') return message;
  }
  if (error === undefined) return 'no message given';
  try {
    return JSON.stringify(error) ?? String(error);
  } catch {
    return describeValue(error);
  }
}

/** The part's usage as TokenUsage (flat or nested form), or `undefined` when it reports no count. */
function usageOf(usage: unknown, where: string, model: string | undefined): TokenUsage | undefined {
  if (usage === undefined || usage === null) return undefined;
  if (!isObject(usage)) throw invalid(`${where} is ${describeValue(usage)}, but usage must be an object such as { inputTokens: 9, outputTokens: 1 }.`);
  // Absent, undefined and NaN mean "not reported"; anything else that is not a count is a malformed part.
  const count = (value: unknown, path: string) => {
    if (value === undefined || value === null || Number.isNaN(value)) return undefined;
    if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) return value;
    throw invalid(`${where}.${path} is ${describeValue(value)}, but token counts must be non-negative integers.`);
  };
  const at = (value: unknown, field: string) => (isObject(value) ? value[field] : undefined);
  const nested = isObject(usage.inputTokens) || isObject(usage.outputTokens);
  const counts: [keyof TokenUsage, number | undefined][] = nested
    ? [
        ['inputTokens', count(at(usage.inputTokens, 'total'), 'inputTokens.total')],
        ['outputTokens', count(at(usage.outputTokens, 'total'), 'outputTokens.total')],
        ['reasoningTokens', count(at(usage.outputTokens, 'reasoning'), 'outputTokens.reasoning')],
        ['cachedInputTokens', count(at(usage.inputTokens, 'cacheRead'), 'inputTokens.cacheRead')],
        ['cacheWriteInputTokens', count(at(usage.inputTokens, 'cacheWrite'), 'inputTokens.cacheWrite')],
      ]
    : [
        ['inputTokens', count(usage.inputTokens, 'inputTokens')],
        ['outputTokens', count(usage.outputTokens, 'outputTokens')],
        ['totalTokens', count(usage.totalTokens, 'totalTokens')],
        ['reasoningTokens', count(usage.reasoningTokens, 'reasoningTokens') ?? count(at(usage.outputTokenDetails, 'reasoningTokens'), 'outputTokenDetails.reasoningTokens')],
        ['cachedInputTokens', count(usage.cachedInputTokens, 'cachedInputTokens') ?? count(at(usage.inputTokenDetails, 'cacheReadTokens'), 'inputTokenDetails.cacheReadTokens')],
        ['cacheWriteInputTokens', count(at(usage.inputTokenDetails, 'cacheWriteTokens'), 'inputTokenDetails.cacheWriteTokens')],
      ];
  const report: Record<string, unknown> = {};
  for (const [field, value] of counts) if (value !== undefined) report[field] = value;
  if (Object.keys(report).length === 0) return undefined;
  if (model !== undefined && model !== '') report.model = model;
  return report as TokenUsage;
}
