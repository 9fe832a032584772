import { EventType, type TokenUsage } from '@ag-ui/core';
import type { OperatorFunction } from 'rxjs';
import { ToolkitEventType, type AgentEvent } from '../protocol/agentEvent.js';
import { AguiRxError, describeValue } from '../protocol/errors.js';
import { generateId as defaultGenerateId, type IdGenerator } from '../protocol/generateId.js';
import { createOperator } from '../protocol/createOperator.js';

/**
 * One streamed chunk of the OpenAI Chat Completions API (`stream: true`), the `data:` payload
 * of one server-sent event parsed as JSON. OpenAI-compatible servers (Azure OpenAI, DeepSeek,
 * vLLM, OpenRouter …) send the same shape, some with extra fields.
 */
export interface ChatCompletionChunk {
  /** The completion's id, the same on every chunk of one completion (`chatcmpl-…`). */
  id: string;
  /** `chat.completion.chunk` (Azure's filter-only chunk has `''`). */
  object?: string;
  /** Unix time of the completion's creation, in seconds. */
  created?: number;
  /** The model that served the request, e.g. `gpt-4o-2024-08-06`. */
  model?: string;
  /** The backend configuration's fingerprint; not read. */
  system_fingerprint?: string | null;
  /** The service tier that ran the request; not read. */
  service_tier?: string | null;
  /** One entry per streamed choice; empty on the usage-only final chunk and on Azure's filter-only chunk. */
  choices: ChatCompletionChunkChoice[];
  /** Token counts: on the final chunk (`choices: []`) with `stream_options.include_usage`; DeepSeek puts them on the last chunk with choices. */
  usage?: ChatCompletionUsage | null;
  /** Azure OpenAI: the prompt's content filter verdicts, on a first chunk with `choices: []`. */
  prompt_filter_results?: unknown[];
}

/** One choice of a {@link ChatCompletionChunk}. */
export interface ChatCompletionChunkChoice {
  /** Which of the `n` requested choices this is (0 for the first). */
  index: number;
  /** What this chunk adds to the choice's message. */
  delta: ChatCompletionChunkDelta;
  /** Why the choice ended, on its last chunk; `null` before. */
  finish_reason: 'stop' | 'length' | 'tool_calls' | 'content_filter' | 'function_call' | (string & {}) | null;
  /** Log probabilities, when requested; not read. */
  logprobs?: unknown;
  /** Azure OpenAI: the content filter verdicts of this piece of output. */
  content_filter_results?: unknown;
}

/** The part of an assistant message one chunk adds. Every field is optional; `null` means absent. */
export interface ChatCompletionChunkDelta {
  /** The role, on the first chunk (`assistant`). */
  role?: 'assistant' | (string & {}) | null;
  /** A piece of the assistant's text. */
  content?: string | null;
  /** A piece of the model's refusal, sent instead of `content`. */
  refusal?: string | null;
  /** DeepSeek (and vLLM): a piece of the model's reasoning, before its answer. */
  reasoning_content?: string | null;
  /** OpenRouter (and newer vLLM): the same as `reasoning_content`, read when that is absent. */
  reasoning?: string | null;
  /** Pieces of tool calls, each keyed by the call's `index`. */
  tool_calls?: ChatCompletionChunkToolCall[] | null;
  /** The legacy `functions` API's single call (deprecated by OpenAI). */
  function_call?: {
    /** The deprecated single function call's name; not read. */
    name?: string;
    /** The deprecated single function call's arguments; not read. */
    arguments?: string;
  } | null;
}

/** A piece of one tool call. */
export interface ChatCompletionChunkToolCall {
  /** Which call of the message this piece belongs to; not always 0-based (Anthropic's compatible endpoint starts at 1). */
  index: number;
  /** The call's id, on its first piece only. */
  id?: string | null;
  /** `function`, on a call's first piece. */
  type?: 'function' | (string & {});
  /** The function: its `name` on the first piece, `arguments` fragments after. */
  function?: {
    /** The tool's name, on the call's first piece only. */
    name?: string | null;
    /** A fragment of the arguments' JSON text. */
    arguments?: string | null;
  } | null;
}

/** Token counts of one completion. */
export interface ChatCompletionUsage {
  /** Every input token, cached ones included. */
  prompt_tokens?: number;
  /** Every output token, reasoning included. */
  completion_tokens?: number;
  /** Prompt plus completion tokens: `totalTokens`. */
  total_tokens?: number;
  /** Prompt token breakdown. */
  prompt_tokens_details?: {
    /** Prompt tokens read from the cache: `cachedInputTokens`. */
    cached_tokens?: number;
    /** Prompt tokens of audio; not read. */
    audio_tokens?: number;
  } | null;
  /** Completion token breakdown. */
  completion_tokens_details?: {
    /** Reasoning tokens: `reasoningTokens`. */
    reasoning_tokens?: number;
    /** Completion tokens of audio; not read. */
    audio_tokens?: number;
    /** Predicted-output tokens that appeared in the completion; not read. */
    accepted_prediction_tokens?: number;
    /** Predicted-output tokens that did not; not read. */
    rejected_prediction_tokens?: number;
  } | null;
}

/** Options of {@link fromOpenAIChatCompletions}. */
export interface FromOpenAIChatCompletionsOptions {
  /** The `index` of the choice to read when the request asked for several (`n` > 1). Default: 0. */
  choice?: number;
  /** Mints ids for a completion or tool call whose chunks carry none (some compatible servers). Default: nanoid. */
  generateId?: IdGenerator;
  /** Also send each chunk as it came, as `RAW { event, source: 'openai-chat' }`, before the events made from it. Default: false. */
  raw?: boolean;
}

/** The chunk's fields, read without trusting their types. */
type Fields = Record<string, unknown>;

/** The delta fields that are the assistant's text: a refusal is shown as the answer. */
const assistantText = ['content', 'refusal'] as const;

/**
 * Turns an OpenAI Chat Completions stream (its `chat.completion.chunk` objects, and `'[DONE]'`)
 * into agent events: text, reasoning and tool-call chunks, and token usage.
 *
 * One completion is one assistant message: its id (the chunk `id`) is the message's id and the
 * parent of its tool calls, so a second completion in the stream starts a new message.
 *
 * ```text
 * source:  --a--b--c--f--u--D--|    a, b = content, c = a tool call's first piece, f = finish_reason,
 * output:  --t--t--k--------U--|    u = the usage-only chunk, D = '[DONE]'
 *          t = TEXT_MESSAGE_CHUNK, k = TOOL_CALL_CHUNK, U = TOKEN_USAGE
 * ```
 *
 * Rules:
 * 1. Only the choice whose `index` is `options.choice` is read: with `n` > 1 choices interleave
 *    (a choice without `index` counts by its position in `choices`).
 * 2. `delta.content` and `delta.refusal` become TEXT_MESSAGE_CHUNK with `messageId` = the chunk's
 *    `id`; `delta.reasoning_content` (or `delta.reasoning`) becomes REASONING_MESSAGE_CHUNK with
 *    `messageId` = `<id>-reasoning`. Empty and `null` pieces send nothing.
 * 3. `delta.tool_calls` pieces are keyed by `index` (any numbers, in any order, interleaved). The
 *    first piece of a call (its `id` and `function.name`) gives TOOL_CALL_CHUNK with `toolCallId`,
 *    `toolCallName` and `parentMessageId` = the chunk's `id`; later pieces give TOOL_CALL_CHUNK with
 *    the same `toolCallId` and their `function.arguments` fragment. A piece with a new `id` at a
 *    known index starts a new call; a call without `id` gets a minted one.
 * 4. `finish_reason` ends the completion's tool calls (a later piece at the same index is a new
 *    call) and sends nothing: the downstream operators close messages and calls at the next
 *    boundary. Text already sent is kept whatever the reason (`length`, `content_filter`).
 * 5. `usage` (on the usage-only final chunk, or on any chunk) becomes TOKEN_USAGE with
 *    `inputTokens`, `outputTokens`, `totalTokens`, `cachedInputTokens`, `reasoningTokens` and
 *    `model`, absent counts omitted. Only the completion's last report counts, as some servers
 *    repeat running totals: it is sent when the next completion begins, at `'[DONE]'`, or when the
 *    source completes or errors.
 * 6. Chunks with no chosen choice and no usage (Azure's `prompt_filter_results`, other choices)
 *    send nothing. `'[DONE]'` ends nothing: the source's completion does.
 * 7. A chunk with an `error` object (a provider failing mid-stream) is a `PROVIDER_ERROR` error;
 *    anything that is not a chunk (a non-object, no `choices` array, a non-string `content` …) is
 *    an `INVALID_EVENT` error. Under `toAgui` both become RUN_ERROR.
 * 8. With `raw: true`, each chunk is also sent as `RAW { event, source: 'openai-chat' }` first.
 *
 * ## Example
 *
 * ```ts
 * of<(ChatCompletionChunk | '[DONE]')[]>(
 *   { id: 'c1', choices: [{ index: 0, delta: { content: 'Hi' }, finish_reason: null }] },
 *   { id: 'c1', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] },
 *   { id: 'c1', model: 'gpt-4o', choices: [], usage: { prompt_tokens: 9, completion_tokens: 1, total_tokens: 10 } },
 *   '[DONE]',
 * ).pipe(fromOpenAIChatCompletions()).subscribe((event) => console.log(JSON.stringify(event)));
 * // results: {"type":"TEXT_MESSAGE_CHUNK","messageId":"c1","delta":"Hi"}, {"type":"TOKEN_USAGE","usage":{"inputTokens":9,"outputTokens":1,"totalTokens":10,"model":"gpt-4o"}}
 * ```
 *
 * @param options The choice to read, and the id generator for chunks that carry no ids.
 * @return A function that returns an Observable of agent events, to pipe into `toAgui`.
 * @throws {AguiRxError} `INVALID_OPTIONS` at call time when `choice` is not a non-negative integer.
 */
export function fromOpenAIChatCompletions(
  options: FromOpenAIChatCompletionsOptions = {},
): OperatorFunction<ChatCompletionChunk | '[DONE]', AgentEvent> {
  const chosen = options.choice ?? 0;
  if (!Number.isSafeInteger(chosen) || chosen < 0) {
    throw new AguiRxError(
      'INVALID_OPTIONS',
      `fromOpenAIChatCompletions got choice: ${describeValue(chosen)}, but choice must be a non-negative integer: the 'index' of one of the n choices requested (0 for the first).`,
    );
  }
  const mint = options.generateId ?? defaultGenerateId;
  const raw = options.raw ?? false;
  return createOperator<ChatCompletionChunk | '[DONE]', AgentEvent>((subscriber) => {
    // The completion being read: its id names its message.
    let completion: string | undefined;
    // The id minted for a completion whose chunks carry none, until its finish_reason.
    let minted: string | undefined;
    // The completion's tool calls: provider index -> toolCallId.
    let calls = new Map<number, string>();
    // The latest call, continued by pieces without an index.
    let latestCall: string | undefined;
    // The completion's latest usage report, sent once the completion is over.
    let usage: TokenUsage | undefined;
    const emit = (event: AgentEvent) => subscriber.next(event);

    const sendUsage = () => {
      if (usage === undefined) return;
      const report = usage;
      usage = undefined;
      emit({ type: ToolkitEventType.TOKEN_USAGE, usage: report });
    };

    const endToolCalls = () => {
      calls = new Map();
      latestCall = undefined;
    };

    const enter = (id: string) => {
      if (id === completion) return;
      sendUsage();
      completion = id;
      endToolCalls();
    };

    const onToolCall = (piece: unknown, where: string, messageId: string, legacyIndex?: number) => {
      if (!isObject(piece)) throw invalid(`${where} is ${describeValue(piece)}, but each tool call piece must be an object such as { index: 0, function: { arguments: '…' } }.`);
      const index = legacyIndex ?? piece.index;
      if (index !== undefined && index !== null && !Number.isSafeInteger(index)) {
        throw invalid(`${where}.index is ${describeValue(index)}, but a tool call's index must be an integer.`);
      }
      const fn = piece.function ?? {};
      if (!isObject(fn)) throw invalid(`${where}.function is ${describeValue(fn)}, but it must be an object such as { name: 'search', arguments: '{}' }.`);
      const id = text(piece, 'id', where) || undefined;
      const name = text(fn, 'name', `${where}.function`);
      const args = text(fn, 'arguments', `${where}.function`);

      // The call this piece continues, if any.
      let toolCallId: string | undefined;
      if (typeof index === 'number') {
        const known = calls.get(index);
        // A new id at a known index is a new call (servers that number every call 0).
        if (known !== undefined && (id === undefined || id === known)) toolCallId = known;
      } else if (id === undefined || id === latestCall) {
        // No index (some compatible servers): the piece continues the latest call.
        toolCallId = latestCall;
      }
      if (toolCallId !== undefined) {
        latestCall = toolCallId;
        if (args !== undefined && args !== '') emit({ type: EventType.TOOL_CALL_CHUNK, toolCallId, delta: args });
        return;
      }
      if (name === undefined || name === '') {
        throw invalid(
          `${where} starts a tool call${id === undefined ? '' : ` ('${id}')`} without function.name. The first piece of each call must carry the tool's name and id; is the stream cut short or reordered?`,
        );
      }
      toolCallId = id ?? mint();
      if (typeof index === 'number') calls.set(index, toolCallId);
      latestCall = toolCallId;
      const first: Fields = { type: EventType.TOOL_CALL_CHUNK, toolCallId, toolCallName: name, parentMessageId: messageId };
      if (args !== undefined && args !== '') first.delta = args;
      emit(first as AgentEvent);
    };

    const onChoice = (choice: Fields, where: string, messageId: string) => {
      const delta = choice.delta ?? {};
      if (!isObject(delta)) throw invalid(`${where}.delta is ${describeValue(delta)}, but it must be an object such as { content: 'Hi' }.`);
      const reasoning = text(delta, 'reasoning_content', `${where}.delta`) ?? text(delta, 'reasoning', `${where}.delta`);
      if (reasoning) emit({ type: EventType.REASONING_MESSAGE_CHUNK, messageId: `${messageId}-reasoning`, delta: reasoning });
      for (const field of assistantText) {
        const piece = text(delta, field, `${where}.delta`);
        if (piece) emit({ type: EventType.TEXT_MESSAGE_CHUNK, messageId, delta: piece });
      }
      const toolCalls = delta.tool_calls;
      if (toolCalls !== undefined && toolCalls !== null) {
        if (!Array.isArray(toolCalls)) throw invalid(`${where}.delta.tool_calls is ${describeValue(toolCalls)}, but it must be an array of tool call pieces.`);
        toolCalls.forEach((piece, i) => onToolCall(piece, `${where}.delta.tool_calls[${i}]`, messageId));
      }
      if (delta.function_call !== undefined && delta.function_call !== null) {
        // The legacy single call: no id and no index, one per message.
        onToolCall({ function: delta.function_call }, `${where}.delta.function_call`, messageId, -1);
      }
      if (choice.finish_reason !== undefined && choice.finish_reason !== null) {
        endToolCalls();
        minted = undefined;
      }
    };

    return {
      next(input) {
        if (raw) emit({ type: EventType.RAW, event: input, source: 'openai-chat' });
        if (typeof input === 'string' && input.trim() === '[DONE]') return sendUsage();
        const chunk = checkChunk(input);
        const choices = chunk.choices as unknown[];
        let choice: Fields | undefined;
        let position = -1;
        for (let i = 0; i < choices.length; i++) {
          const entry = choices[i];
          if (!isObject(entry)) throw invalid(`choices[${i}] is ${describeValue(entry)}, but each choice must be an object such as { index: 0, delta: { content: 'Hi' } }.`);
          if (entry.index !== undefined && entry.index !== null && !(Number.isSafeInteger(entry.index) && (entry.index as number) >= 0)) {
            throw invalid(`choices[${i}].index is ${describeValue(entry.index)}, but a choice's index must be a non-negative integer.`);
          }
          if ((entry.index ?? i) === chosen) {
            choice = entry;
            position = i;
            break;
          }
        }
        const report = usageOf(chunk.usage, chunk.model);
        if (choice === undefined && report === undefined) return;
        const id = text(chunk, 'id', '') || undefined;
        if (id !== undefined) enter(id);
        else if (choice !== undefined) enter((minted ??= mint()));
        if (choice !== undefined) onChoice(choice, `choices[${position}]`, completion!);
        if (report !== undefined) usage = report;
      },
      flush: sendUsage,
    };
  });
}

function isObject(value: unknown): value is Fields {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function invalid(detail: string): AguiRxError {
  return new AguiRxError('INVALID_EVENT', `fromOpenAIChatCompletions received a malformed chat.completion.chunk: ${detail}`);
}

/** An optional string field: `null` and absent are `undefined`; another type is an error. `where` is the path to `fields`, empty for the chunk. */
function text(fields: Fields, field: string, where: string): string | undefined {
  const value = fields[field];
  if (value === undefined || value === null || typeof value === 'string') return value ?? undefined;
  throw invalid(`${where === '' ? '' : `${where}.`}${field} is ${describeValue(value)}, but it must be a string (or null).`);
}

/** The input as a chunk, or the error that says why it is none. */
function checkChunk(input: unknown): Fields & { choices: unknown[] } {
  if (!isObject(input)) {
    throw new AguiRxError(
      'INVALID_EVENT',
      `fromOpenAIChatCompletions received ${describeValue(input)} where a chat.completion.chunk object (or '[DONE]') was expected. Parse each server-sent event's data first: parseSSE(), map((message) => (message.data === '[DONE]' ? '[DONE]' : JSON.parse(message.data))).`,
    );
  }
  // An error wins over whatever else the chunk holds: some providers send it beside `choices: []`.
  if (input.error !== undefined && input.error !== null) {
    const { message, type, code } = isObject(input.error) ? input.error : { message: input.error, type: undefined, code: undefined };
    const kind = [type, code].filter((part) => typeof part === 'string' || typeof part === 'number').join(', ');
    throw new AguiRxError(
      'PROVIDER_ERROR',
      `The model provider failed mid-stream: ${typeof message === 'string' && message !== '' ? message : 'no message given'}${kind === '' ? '' : ` (${kind})`}. Retry the request; if it keeps failing, check the request and the provider's status.`,
    );
  }
  if (!Array.isArray(input.choices)) {
    throw invalid(
      `it has ${input.choices === undefined ? 'no' : `'choices: ${describeValue(input.choices)}', not an`} 'choices' array. Is this a Chat Completions stream (stream: true)? Responses API and other providers' events need their own adapter.`,
    );
  }
  return input as Fields & { choices: unknown[] };
}

/** The chunk's usage as TokenUsage, or `undefined` when it reports no count. */
function usageOf(usage: unknown, model: unknown): TokenUsage | undefined {
  if (!isObject(usage)) return undefined;
  // Absent or null counts are left out; anything else that is not a count is a malformed chunk.
  const count = (value: unknown, path: string) => {
    if (value === undefined || value === null) return undefined;
    if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) return value;
    throw invalid(`${path} is ${describeValue(value)}, but token counts must be non-negative integers.`);
  };
  const detail = (details: unknown, field: string, path: string) => (isObject(details) ? count(details[field], `${path}.${field}`) : undefined);
  const counts: [keyof TokenUsage, number | undefined][] = [
    ['inputTokens', count(usage.prompt_tokens, 'usage.prompt_tokens')],
    ['outputTokens', count(usage.completion_tokens, 'usage.completion_tokens')],
    ['totalTokens', count(usage.total_tokens, 'usage.total_tokens')],
    ['reasoningTokens', detail(usage.completion_tokens_details, 'reasoning_tokens', 'usage.completion_tokens_details')],
    ['cachedInputTokens', detail(usage.prompt_tokens_details, 'cached_tokens', 'usage.prompt_tokens_details')],
  ];
  const report: Record<string, unknown> = {};
  for (const [field, value] of counts) if (value !== undefined) report[field] = value;
  if (Object.keys(report).length === 0) return undefined;
  if (typeof model === 'string' && model !== '') report.model = model;
  return report as TokenUsage;
}
