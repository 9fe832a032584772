import { EventType, type TokenUsage } from '@ag-ui/core';
import type { OperatorFunction } from 'rxjs';
import type { AgentEvent } from '../protocol/agentEvent.js';
import { AguiRxError, describeValue } from '../protocol/errors.js';
import { generateId as defaultGenerateId, type IdGenerator } from '../protocol/generateId.js';
import { createOperator } from '../protocol/createOperator.js';
import { warnDiagnostic, type DiagnosticHandler } from '../protocol/diagnostics.js';
import { cutCalls, cutToolCallError, endedInToolCallError, unparsedArgumentsError, unparsedCalls, type StreamedCall } from '../protocol/cutToolCalls.js';
import { createDropReporter, fieldReaders, isObject, nonEmpty, providerError, rawEvent, tokenUsageEvent, toolCallStart, usageReport, type Fields } from './readers.js';
import { continuedCall, startCall, unnamedCall, type ToolCallPieces } from './toolCallPieces.js';
import { isKnownDetail, readReasoningDetails, type ReasoningDetail } from './reasoningDetails.js';
import { jsonStringPiece, toolItemMark } from './responsesToolItems.js';
import type { ChatCompletionChunk } from './wire/openAIChatCompletions.js';

// The provider's stream format, importable from here too.
export type * from './wire/openAIChatCompletions.js';

/** Options of {@link fromOpenAIChatCompletions}. */
export interface FromOpenAIChatCompletionsOptions {
  /** The `index` of the choice to read when the request asked for several (`n` > 1). Default: 0. */
  choice?: number | undefined;
  /** Mints ids for a completion or tool call whose chunks carry none (some compatible servers). Default: nanoid. */
  generateId?: IdGenerator | undefined;
  /** Also send each chunk as it came, as `RAW { event, source: 'openai-chat' }`, before the events made from it. Default: false. */
  raw?: boolean | undefined;
  /** Told of each kind of content part that has no AG-UI form and is dropped (`reference`, `image_url` …), once per type per subscription, of each message's audio, of `extra_content` it cannot carry, of log probabilities, and of chunk ids read as one completion. Default: `console.warn`. */
  onDiagnostic?: DiagnosticHandler | undefined;
}

const readers = fieldReaders({
  adapter: 'fromOpenAIChatCompletions',
  malformed: 'a malformed chat.completion.chunk',
  unit: 'chunk',
});
const { invalid, object, string: text, list, index, toolCallIndex, count } = readers;

const contentPartExample = "[{ type: 'text', text: 'Hi' }]";

/** The finish reasons that cut the model's output where it stood, with what to do about each. */
const outputCuts: ReadonlyMap<string, [cut: string, advice: string]> = new Map([
  ['length', ['its token limit (finish_reason: length)', 'Raise max_completion_tokens (max_tokens on older servers), or ask for a shorter answer, and retry the request.']],
  ['content_filter', ["the provider's content filter (finish_reason: content_filter)", 'Rephrase the request (or check the content filter settings) and retry it.']],
]);

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
 *    A chunk whose `id` differs from the completion's while that completion still has calls open
 *    (no `finish_reason` yet) and whose chosen choice only continues them (pieces without
 *    `function.name`, at indexes the completion has, with no id or the call's own), or only
 *    finishes (a `finish_reason` and no content), is read as the same completion: some
 *    OpenAI-compatible servers give every chunk a new id (llama.cpp's before March 2024, Foundry
 *    Local), and such a chunk cannot begin a completion. The first such chunk is reported through
 *    `onDiagnostic`. Any other chunk with a new id begins a new completion (text from such a server
 *    is one message per chunk, and a call's first piece begins a completion of its own); a piece
 *    that then continues a call the id change left open fails saying the server changed the chunk
 *    id mid-completion.
 * 2. `delta.content` and `delta.refusal` become TEXT_MESSAGE_CHUNK with `messageId` = the chunk's
 *    `id`; `delta.reasoning_content` (or `delta.reasoning`) becomes REASONING_MESSAGE_CHUNK with
 *    `messageId` = `<id>-reasoning`. Empty and `null` pieces send nothing.
 *    OpenRouter's `delta.reasoning_details` blocks: their text (`reasoning.text`, `reasoning.summary`)
 *    is `delta.reasoning`'s, read from the blocks only when the delta has no `reasoning`; the blocks
 *    themselves (type, format, index) have no AG-UI form and are reported once per subscription. An
 *    encrypted block whose `id` names a call of the completion (Gemini 3's) becomes that call's
 *    REASONING_ENCRYPTED_VALUE, its TOOL_CALL_CHUNK marked `metadata: { openrouter: { encryptedValue:
 *    'reasoning.encrypted', format } }` when the block came first (as OpenRouter sends it), so that
 *    `toOpenAIChatMessages` sends it back as `reasoning_details`; any other encrypted block, and a
 *    text block's `signature` (Anthropic's), becomes the reasoning message's (opened with
 *    REASONING_MESSAGE_START when it said nothing yet), not sent back. A second encrypted value for
 *    one message or call, and a block of another type, are dropped with one `onDiagnostic` per kind.
 *    `reasoning_details` that are not an array of objects with a string `type` are `INVALID_EVENT`.
 *    `delta.content` may also be an array of content parts (Mistral), read in order: a `text`
 *    part's `text` is text; a `thinking` part's `thinking` (a list of `text` parts, or a string) is reasoning.
 *    Other parts (`reference`, `image_url` …) have no AG-UI text form, a `text` part without a
 *    `text` string (absent or `null`) and a `thinking` part without parts (absent, `null` or `[]`)
 *    carry nothing: each is dropped, with one `onDiagnostic` per kind per subscription. An empty
 *    `text` (or `thinking`) string is no content, and no drop.
 *    An audio answer (`modalities: ['text', 'audio']`) has no `content`: `delta.audio.transcript`
 *    is its text, sent as TEXT_MESSAGE_CHUNK; its `delta.audio.data` (base64 audio) has no AG-UI
 *    form in a message and is dropped, with one `onDiagnostic` per message (naming the audio's
 *    `id`, which a later request may refer to).
 * 3. `delta.tool_calls` pieces are keyed by `index` (any numbers, in any order, interleaved). The
 *    first piece of a call (its `id` and `function.name`) gives TOOL_CALL_CHUNK with `toolCallId`,
 *    `toolCallName` and `parentMessageId` = the chunk's `id`; later pieces give TOOL_CALL_CHUNK with
 *    the same `toolCallId` and their `function.arguments` fragment. A piece with a new `id` at a
 *    known index starts a new call; a call without `id` gets a minted one, and so does a call
 *    whose `id` another call of the message has (with an `onDiagnostic`: merged, the two would break).
 *    Gemini's OpenAI-compatible endpoint signs a call: a piece's `extra_content.google.thought_signature`
 *    becomes REASONING_ENCRYPTED_VALUE `{ subtype: 'tool-call', entityId: <toolCallId>,
 *    encryptedValue }` after the piece, and the piece's TOOL_CALL_CHUNK carries `metadata: { google:
 *    { encryptedValue: 'thought_signature' } }`, so that `toOpenAIChatMessages` sends it back as
 *    Gemini 3 requires. Other `extra_content` fields, and `delta.extra_content` (a text's
 *    signature), are dropped with one `onDiagnostic` per kind per subscription.
 *    A custom (freeform) tool's call (`type: 'custom'`, `custom: { name, input }`) is read as
 *    `fromOpenAIResponses` reads a `custom_tool_call`: `custom.name` is the tool name, the arguments
 *    are `{"input": "<text>"}` with each `custom.input` piece streamed inside the string, closed at
 *    the call's `finish_reason`, and its first TOOL_CALL_CHUNK carries the same mark, `metadata: {
 *    openai: { type: 'custom_tool_call' } }`, so that `toOpenAIChatMessages` sends it back as a custom
 *    call (and `toOpenAIResponsesInput` as a `custom_tool_call`). A piece of another type without `function` is `INVALID_EVENT`, saying so.
 * 4. `finish_reason` ends the completion's tool calls (a later piece at the same index is a new
 *    call) and sends nothing: the downstream operators close messages and calls at the next
 *    boundary. Text already sent is kept whatever the reason (`length`, `content_filter`).
 *    `content_filter` (the provider's filter stopped the answer: Azure OpenAI) also sends CUSTOM
 *    `{ name: 'openai.content_filter', value: { messageId, contentFilterResults? } }`, the choice's
 *    `content_filter_results` as they came, so that a client can tell a filtered answer from a whole one.
 *    `finish_reason: 'length'` (or `content_filter`) while a call's arguments are not yet one whole
 *    JSON value means the limit (or filter) cut the call: the output fails with `INCOMPLETE_STREAM`,
 *    naming the call, once the completion's usage is in (at `'[DONE]'`, the next completion, or the
 *    source's end). Any other `finish_reason` (`tool_calls`, `stop` …) while a call's arguments
 *    are written but do not parse fails the same way, saying the model finished with arguments
 *    that are not JSON (empty arguments are a call without any). Checked once, at the finish, never
 *    per fragment. What was streamed of the call is not taken back; a call whose arguments parse
 *    stays a call. A source that completes with a call's arguments not whole and no
 *    `finish_reason` for it was cut off mid-call: `INCOMPLETE_STREAM` too, after the usage. Text,
 *    reasoning or another call's pieces between one call's pieces change nothing: every piece at
 *    the call's index is that call's, until its `finish_reason`.
 * 5. `usage` (on the usage-only final chunk, or on any chunk) becomes TOKEN_USAGE with
 *    `inputTokens`, `outputTokens`, `totalTokens`, `cachedInputTokens`, `reasoningTokens` and
 *    `model`, absent counts omitted. Groq sends a stream's usage only in its last chunk's
 *    `x_groq.usage` (same fields), read when the chunk has no top-level `usage`. Only the completion's last report counts, as some servers
 *    repeat running totals: it is sent when the next completion begins, at `'[DONE]'`, or when the
 *    source completes or errors.
 *    A choice's `logprobs` (`content` or `refusal` entries, when the request asked for them) have no
 *    AG-UI event: dropped, with one `onDiagnostic` per subscription (`raw: true` sends them in RAW).
 * 6. Chunks with no chosen choice and no usage (Azure's `prompt_filter_results`, other choices)
 *    send nothing. `'[DONE]'` ends nothing (but fails a cut call of rule 4): the source's completion does.
 * 7. A chunk with an `error` object (a provider failing mid-stream) is a `PROVIDER_ERROR` error;
 *    anything that is not a chunk (a non-object, no `choices` array, a `content` that is neither a
 *    string nor an array of parts …) is an `INVALID_EVENT` error. Under `toAgui` all become RUN_ERROR.
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
 * @param options The choice to read, the id generator for chunks that carry no ids, and where dropped content parts are reported.
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
  const onDiagnostic = options.onDiagnostic ?? warnDiagnostic;
  return createOperator<ChatCompletionChunk | '[DONE]', AgentEvent>((subscriber) => {
    // The completion being read: its id names its message.
    let completion: string | undefined;
    // The id minted for a completion whose chunks carry none, until its finish_reason.
    let minted: string | undefined;
    // The completion's tool calls, by the pieces' index.
    let pieces: ToolCallPieces = { calls: new Map() };
    // The completion's tool calls and the argument text sent for each, by toolCallId.
    let streamed = new Map<string, StreamedCall>();
    // The completion's custom (freeform) tool calls, whose input is sent as {"input": "<text>"}: closed at their finish.
    let customCalls = new Set<string>();
    // OpenRouter's encrypted reasoning blocks whose id names a call not yet started, by that id, with the reasoning message they fall back to.
    let heldSeals = new Map<string, { value: string; format?: string | undefined; reasoningId: string }>();
    // The entities (`tool-call:<id>`, `message:<id>`) given an encrypted value: a second one would replace the first.
    const sealed = new Set<string>();
    // The reasoning message already sent something (an encrypted value needs no START of its own then).
    const reasoningSent = new Set<string>();
    // The error of the calls a finish_reason cut or left broken, failed once the completion's usage is in.
    let cut: AguiRxError | undefined;
    // Dropped content part types, each reported once.
    const report = createDropReporter(onDiagnostic);
    // The id of the chunk before, when the chunk being read has another: a continuation that fails then says so.
    let idChangedFrom: string | undefined;
    // The calls of the last completion a new id left with calls open: a piece that continues one names the id change.
    let leftCalls: ToolCallPieces | undefined;
    // The id of the last chunk read.
    let lastChunkId: string | undefined;
    // The id of the completion's audio answer, for the diagnostic that says its audio was dropped.
    let audioId: string | undefined;
    // The completion's latest usage report, sent once the completion is over.
    let usage: TokenUsage | undefined;
    const emit = (event: AgentEvent) => {
      if (event.type === EventType.REASONING_MESSAGE_CHUNK && event.messageId !== undefined) reasoningSent.add(event.messageId);
      subscriber.next(event);
    };

    const sendUsage = () => {
      if (usage === undefined) return;
      const report = usage;
      usage = undefined;
      emit(tokenUsageEvent(report));
    };

    // The completion is over: its usage, then the error of a call its output limit cut.
    const endCompletion = () => {
      sendUsage();
      if (cut !== undefined) throw cut;
    };

    const endToolCalls = () => {
      pieces = { calls: new Map() };
      streamed = new Map();
      customCalls = new Set();
    };

    const enter = (id: string) => {
      if (id === completion) return;
      if (pieces.calls.size > 0) leftCalls = pieces;
      releaseSeals();
      endCompletion();
      completion = id;
      audioId = undefined;
      endToolCalls();
    };

    const onToolCall = (input: unknown, where: string, messageId: string, legacyIndex?: number) => {
      const piece = object(input, where, "{ index: 0, function: { arguments: '…' } }");
      const index = legacyIndex ?? toolCallIndex(piece.index, where);
      const custom = isCustomPiece(piece, where);
      const field = custom ? 'custom' : 'function';
      const fn = object(piece[field] ?? {}, `${where}.${field}`, custom ? "{ name: 'code_exec', input: '…' }" : "{ name: 'search', arguments: '{}' }");
      const id = nonEmpty(text(piece, 'id', where));
      const name = text(fn, 'name', `${where}.${field}`);
      const args = text(fn, custom ? 'input' : 'arguments', `${where}.${field}`);

      const signature = thoughtSignature(piece.extra_content, `${where}.extra_content`);
      // Marks the call's encryptedValue as Gemini's, for toOpenAIChatMessages to send it back.
      const marked = signature === undefined ? undefined : { google: { encryptedValue: 'thought_signature' } };
      const continued = continuedCall(pieces, index, id);
      if (continued !== undefined) {
        if (args !== undefined && args !== '') {
          // A custom call's free text goes inside its {"input": "…"} string.
          const piece = customCalls.has(continued) ? jsonStringPiece(args) : args;
          streamed.get(continued)!.args += piece;
          emit(marked === undefined ? { type: EventType.TOOL_CALL_CHUNK, toolCallId: continued, delta: piece } : { type: EventType.TOOL_CALL_CHUNK, toolCallId: continued, delta: piece, metadata: marked });
        }
        if (signature !== undefined) seal('tool-call', continued, signature);
        return;
      }
      if (name === undefined || name === '') {
        const left = index === undefined ? undefined : leftCalls?.calls.get(index);
        if (idChangedFrom === undefined || left === undefined || (id !== undefined && id !== left)) throw invalid(unnamedCall(where, id, `${field}.name`));
        throw invalid(
          `${where} continues tool call '${left}' (it has no function.name), but its chunk's id '${lastChunkId}' differs from the chunk before it ('${idChangedFrom}'): the server changed the id in the middle of a completion, and a chunk with a new id begins a new completion, which has no call to continue. OpenAI gives every chunk of a completion the same id; fix the server, or give every chunk of the stream the first chunk's id before the adapter.`,
        );
      }
      let toolCallId = id ?? mint();
      if (streamed.has(toolCallId)) {
        // Two calls of one message under one id (a server's mistake) would be merged downstream.
        const fresh = mint();
        onDiagnostic({ message: `fromOpenAIChatCompletions: ${where} starts a tool call under id '${toolCallId}', which another call of this message has; it is sent as '${fresh}' so that the two stay apart. Each call needs an id of its own: check the server.`, event: input });
        toolCallId = fresh;
      }
      startCall(pieces, index, toolCallId);
      const first = custom ? `{"input":"${jsonStringPiece(args ?? '')}` : args;
      if (custom) customCalls.add(toolCallId);
      streamed.set(toolCallId, { id: toolCallId, name, args: first ?? '' });
      // OpenRouter's encrypted reasoning block that named this call before it started: the call's, marked for toOpenAIChatMessages.
      const held = id === undefined ? undefined : heldSeals.get(id);
      if (held !== undefined) heldSeals.delete(id!);
      const openrouter = held === undefined ? undefined : { openrouter: { encryptedValue: 'reasoning.encrypted', ...(held.format === undefined ? {} : { format: held.format }) } };
      // A custom call carries the mark fromOpenAIResponses puts on a custom_tool_call, for the converters to send it back as one.
      const kind = custom ? toolItemMark('custom_tool_call', {}) : undefined;
      emit(toolCallStart(toolCallId, name, messageId, first, marked === undefined && openrouter === undefined && kind === undefined ? undefined : { ...marked, ...openrouter, ...kind }));
      if (signature !== undefined) seal('tool-call', toolCallId, signature);
      if (held !== undefined) seal('tool-call', toolCallId, held.value);
    };

    // A call whose input was free text: its {"input": "…"} gets its closing quote and brace.
    const closeCustomCalls = () => {
      for (const toolCallId of customCalls) {
        streamed.get(toolCallId)!.args += '"}';
        emit({ type: EventType.TOOL_CALL_CHUNK, toolCallId, delta: '"}' });
      }
      customCalls = new Set();
    };

    // An encrypted value on its message or call; a second one for the same entity would replace the first, and is dropped.
    const seal = (subtype: 'tool-call' | 'message', entityId: string, encryptedValue: string) => {
      const key = `${subtype}:${entityId}`;
      if (sealed.has(key)) {
        return report(
          'encrypted:second',
          `fromOpenAIChatCompletions dropped a second encrypted value of ${subtype === 'tool-call' ? 'tool call' : 'reasoning message'} '${entityId}': AG-UI keeps one encryptedValue per message or call, and the first stands. Later such values of this stream are dropped without another warning.`,
          encryptedValue,
        );
      }
      sealed.add(key);
      if (subtype === 'message' && !reasoningSent.has(entityId)) {
        // A reasoning message that said nothing yet: opened, so that the value has a message to land on.
        reasoningSent.add(entityId);
        emit({ type: EventType.REASONING_MESSAGE_START, messageId: entityId, role: 'reasoning' });
      }
      emit({ type: EventType.REASONING_ENCRYPTED_VALUE, subtype, entityId, encryptedValue });
    };

    // OpenRouter's reasoning blocks: their text is `reasoning`'s (read here only when the delta has none), their encrypted
    // data and signatures become encrypted values, of the call an encrypted block's id names, else of the reasoning message.
    const onReasoningDetails = (details: readonly ReasoningDetail[], where: string, messageId: string, readText: boolean) => {
      details.forEach((detail, i) => {
        const path = `${where}[${i}]`;
        if (!isKnownDetail(detail)) {
          return report(
            `reasoning_details:${detail.type}`,
            `fromOpenAIChatCompletions dropped a '${detail.type}' reasoning block (${path}): only 'reasoning.text', 'reasoning.summary' and 'reasoning.encrypted' blocks have an AG-UI form. Later '${detail.type}' blocks of this stream are dropped without another warning.`,
            detail,
          );
        }
        if (detail.text) {
          if (readText) emit({ type: EventType.REASONING_MESSAGE_CHUNK, messageId: `${messageId}-reasoning`, delta: detail.text });
          report(
            'reasoning_details:text',
            `fromOpenAIChatCompletions read the text of reasoning_details (${path}) as the text of reasoning message '${messageId}-reasoning' (the same text as delta.reasoning); the blocks themselves (their type, format and index) have no AG-UI form and are not kept, so toOpenAIChatMessages cannot send them back as reasoning_details. Only encrypted blocks are kept (as encrypted values), and only a tool call's is sent back. Later reasoning_details text of this stream is read the same way without another warning.`,
            detail,
          );
        }
        if (detail.encrypted === undefined) return;
        const reasoningId = `${messageId}-reasoning`;
        if (detail.type !== 'reasoning.encrypted' || detail.id === undefined) return seal('message', reasoningId, detail.encrypted);
        if (streamed.has(detail.id)) return seal('tool-call', detail.id, detail.encrypted);
        heldSeals.set(detail.id, { value: detail.encrypted, format: detail.format, reasoningId });
      });
    };

    // Encrypted blocks whose id named no call of the completion, once it is over: the reasoning message's.
    const releaseSeals = () => {
      if (heldSeals.size === 0) return;
      const held = heldSeals;
      heldSeals = new Map();
      for (const { value, reasoningId } of held.values()) seal('message', reasoningId, value);
    };

    // Gemini's `extra_content.google.thought_signature` of a call piece; what else extra_content holds has no AG-UI form.
    const thoughtSignature = (extra: unknown, where: string): string | undefined => {
      if (extra === undefined || extra === null) return undefined;
      const fields = object(extra, where, "{ google: { thought_signature: '…' } }");
      const google = fields.google === undefined || fields.google === null ? {} : object(fields.google, `${where}.google`, "{ thought_signature: '…' }");
      const signature = nonEmpty(text(google, 'thought_signature', `${where}.google`));
      const others = [...Object.keys(fields).filter((key) => key !== 'google'), ...Object.keys(google).filter((key) => key !== 'thought_signature').map((key) => `google.${key}`)];
      if (others.length > 0) {
        report(
          'extra_content:tool call',
          `fromOpenAIChatCompletions dropped ${others.map((key) => `'${key}'`).join(', ')} of a tool call piece's extra_content (${where}): only Gemini's google.thought_signature has an AG-UI form (the call's encryptedValue). Later such fields of this stream are dropped without another warning.`,
          extra,
        );
      }
      return signature;
    };

    // Mistral's content parts: text, and thinking that holds text parts.
    const onContentParts = (content: unknown, where: string, messageId: string) => {
      if (!Array.isArray(content)) throw invalid(`${where} is ${describeValue(content)}, but it must be a string or an array of content parts such as ${contentPartExample}.`);
      for (let i = 0; i < content.length; i++) {
        const path = `${where}[${i}]`;
        const part = contentPart(content[i], path);
        if (part.type === 'text') onText(part, path, EventType.TEXT_MESSAGE_CHUNK, messageId);
        else if (part.type === 'thinking') onThinking(part, path, `${messageId}-reasoning`);
        else drop(part, path);
      }
    };

    // A text part, as text or (inside thinking) reasoning; '' is no content, no text at all a drop.
    const onText = (part: Fields, where: string, type: EventType.TEXT_MESSAGE_CHUNK | EventType.REASONING_MESSAGE_CHUNK, messageId: string) => {
      const piece = text(part, 'text', where);
      if (piece === undefined) {
        report(
          'text:no text',
          `fromOpenAIChatCompletions dropped a 'text' content part without a 'text' string (${where}): it carries nothing to show. Later 'text' parts without text in this stream are dropped without another warning.`,
          part,
        );
      } else if (piece !== '') emit({ type, messageId, delta: piece });
    };

    const onThinking = (part: Fields, where: string, reasoningId: string) => {
      const thinking = part.thinking;
      if (typeof thinking === 'string') {
        if (thinking) emit({ type: EventType.REASONING_MESSAGE_CHUNK, messageId: reasoningId, delta: thinking });
        return;
      }
      if (thinking !== undefined && thinking !== null && !Array.isArray(thinking)) {
        throw invalid(`${where}.thinking is ${describeValue(thinking)}, but it must be an array of content parts such as ${contentPartExample}.`);
      }
      if (thinking === undefined || thinking === null || thinking.length === 0) {
        report(
          'thinking:no parts',
          `fromOpenAIChatCompletions dropped a 'thinking' content part without parts (${where}): its 'thinking' is ${describeValue(thinking)}, where a list of text parts such as ${contentPartExample} was expected. Later 'thinking' parts without parts in this stream are dropped without another warning.`,
          part,
        );
        return;
      }
      for (let i = 0; i < thinking.length; i++) {
        const path = `${where}.thinking[${i}]`;
        const inner = contentPart(thinking[i], path);
        if (inner.type === 'text') onText(inner, path, EventType.REASONING_MESSAGE_CHUNK, reasoningId);
        else drop(inner, path);
      }
    };

    const drop = (part: Fields & { type: string }, where: string) =>
      report(
        part.type,
        `fromOpenAIChatCompletions dropped a '${part.type}' content part (${where}): it has no AG-UI text or reasoning form, as only 'text' parts and the text of 'thinking' parts are read. Later '${part.type}' parts of this stream are dropped without another warning.`,
        part,
      );

    // An audio answer: its transcript is the message's text; its audio has no AG-UI form.
    const onAudio = (audio: Fields, where: string, messageId: string) => {
      audioId ??= nonEmpty(text(audio, 'id', where));
      const transcript = text(audio, 'transcript', where);
      if (transcript) emit({ type: EventType.TEXT_MESSAGE_CHUNK, messageId, delta: transcript });
      if (!text(audio, 'data', where)) return;
      report(
        `audio:${messageId}`,
        `fromOpenAIChatCompletions dropped the audio of message '${messageId}' (${where}.data${audioId === undefined ? '' : `, audio id '${audioId}'`}): AG-UI has no event that carries audio in an assistant message, so only its transcript is sent, as the message's text. To play it, read delta.audio.data from the chunks yourself (raw: true also sends each chunk as RAW).`,
        audio,
      );
    };

    const onChoice = (choice: Fields, where: string, messageId: string) => {
      const delta = object(choice.delta ?? {}, `${where}.delta`, "{ content: 'Hi' }");
      if (delta.extra_content !== undefined && delta.extra_content !== null) {
        // Gemini signs text too (optionally sent back): AG-UI keeps encrypted values of reasoning and calls, not of an answer's text.
        report(
          'extra_content:delta',
          `fromOpenAIChatCompletions dropped the extra_content of message '${messageId}' (${where}.delta.extra_content, such as Gemini's thought signature of its text): it has no AG-UI form; only a tool call's thought signature is kept (as the call's encryptedValue). Later delta.extra_content of this stream is dropped without another warning.`,
          delta.extra_content,
        );
      }
      const reasoningContent = text(delta, 'reasoning_content', `${where}.delta`);
      // A server that sends both (reasoning_content '' beside reasoning, as some vLLM versions do) means the one with text.
      const reasoning = reasoningContent || (text(delta, 'reasoning', `${where}.delta`) ?? reasoningContent);
      if (reasoning) emit({ type: EventType.REASONING_MESSAGE_CHUNK, messageId: `${messageId}-reasoning`, delta: reasoning });
      const details = readReasoningDetails(delta, `${where}.delta`, readers);
      if (details.length > 0) onReasoningDetails(details, `${where}.delta.reasoning_details`, messageId, !reasoning);
      const content = delta.content;
      // A string is the common case: checked first, so that it costs no more than before.
      if (typeof content === 'string') {
        if (content) emit({ type: EventType.TEXT_MESSAGE_CHUNK, messageId, delta: content });
      } else if (content !== undefined && content !== null) onContentParts(content, `${where}.delta.content`, messageId);
      if (delta.audio !== undefined && delta.audio !== null) onAudio(object(delta.audio, `${where}.delta.audio`, "{ transcript: 'Hi' }"), `${where}.delta.audio`, messageId);
      // A refusal is shown as the answer.
      const refusal = text(delta, 'refusal', `${where}.delta`);
      if (refusal) emit({ type: EventType.TEXT_MESSAGE_CHUNK, messageId, delta: refusal });
      list(delta, 'tool_calls', `${where}.delta`, 'an array of tool call pieces').forEach((piece, i) => onToolCall(piece, `${where}.delta.tool_calls[${i}]`, messageId));
      if (delta.function_call !== undefined && delta.function_call !== null) {
        // The legacy single call: no id and no index, one per message.
        onToolCall({ function: delta.function_call }, `${where}.delta.function_call`, messageId, -1);
      }
      if (hasLogprobs(choice.logprobs)) {
        report(
          'logprobs',
          `fromOpenAIChatCompletions dropped the log probabilities of message '${messageId}' (${where}.logprobs): AG-UI has no event for them. To read them, pass raw: true and read choices[].logprobs from the RAW events. Later log probabilities of this stream are dropped without another warning.`,
          choice.logprobs,
        );
      }
      const reason = choice.finish_reason;
      if (reason === 'content_filter') {
        // The filter stopped the answer: said, so that a client can tell it from a whole answer.
        const value: Fields = { messageId };
        if (isObject(choice.content_filter_results)) value.contentFilterResults = choice.content_filter_results;
        emit({ type: EventType.CUSTOM, name: 'openai.content_filter', value });
      }
      if (reason !== undefined && reason !== null) {
        // Checked once, at the finish, never per fragment.
        const limit = typeof reason === 'string' ? outputCuts.get(reason) : undefined;
        // The model finished its custom calls' input (a cut leaves it open, and the call cut).
        if (limit === undefined) closeCustomCalls();
        releaseSeals();
        if (limit !== undefined) {
          const calls = cutCalls(streamed.values());
          if (calls.length > 0) cut ??= cutToolCallError('fromOpenAIChatCompletions', limit[0], calls, limit[1]);
        } else {
          // The model says it is done (stop, tool_calls …): arguments that do not parse are broken, not cut.
          const broken = unparsedCalls(streamed.values());
          if (broken.length > 0) cut ??= unparsedArgumentsError('fromOpenAIChatCompletions', `finish_reason: ${typeof reason === 'string' ? reason : describeValue(reason)}`, broken);
        }
        endToolCalls();
        minted = undefined;
      }
    };

    return {
      next(input) {
        if (raw) emit(rawEvent(input, 'openai-chat'));
        if (typeof input === 'string' && input.trim() === '[DONE]') {
          releaseSeals();
          return endCompletion();
        }
        const chunk = checkChunk(input);
        const choices = chunk.choices as unknown[];
        let choice: Fields | undefined;
        let position = -1;
        for (let i = 0; i < choices.length; i++) {
          const entry = object(choices[i], `choices[${i}]`, "{ index: 0, delta: { content: 'Hi' } }");
          // A choice without index counts by its position.
          const which = entry.index === undefined || entry.index === null ? i : index(entry, 'index', `choices[${i}]`);
          if (which === chosen) {
            choice = entry;
            position = i;
            break;
          }
        }
        // Groq sends a stream's usage only as x_groq.usage, on its last chunk.
        const groq = isObject(chunk.usage) || !isObject(chunk.x_groq) ? undefined : chunk.x_groq.usage;
        const counts = groq === undefined ? usageOf(chunk.usage, chunk.model, 'usage') : usageOf(groq, chunk.model, 'x_groq.usage');
        if (choice === undefined && counts === undefined) return;
        const id = nonEmpty(text(chunk, 'id', ''));
        idChangedFrom = id !== undefined && lastChunkId !== undefined && id !== lastChunkId ? lastChunkId : undefined;
        lastChunkId = id ?? lastChunkId;
        if (id !== undefined && id !== completion && choice !== undefined && continuesCalls(pieces, choice)) {
          report(
            'id:changed',
            `fromOpenAIChatCompletions read chunk '${id}' as part of completion '${completion}': it continues that completion's tool calls (or only finishes them), though its id differs. OpenAI gives every chunk of a completion the same id; this server changes it, so its text may become one message per chunk. Fix the server, or give every chunk of the stream the first chunk's id before the adapter. Later id changes of this stream are read the same way without another warning.`,
            input,
          );
        } else if (id !== undefined) enter(id);
        else if (choice !== undefined) enter((minted ??= mint()));
        if (choice !== undefined) onChoice(choice, `choices[${position}]`, completion!);
        if (counts !== undefined) usage = counts;
      },
      flush: sendUsage,
      complete() {
        // Calls still streaming with no finish_reason: the body was cut off mid-call.
        const open = cutCalls(streamed.values());
        if (open.length > 0) cut ??= endedInToolCallError('fromOpenAIChatCompletions', 'before its finish_reason', open);
        releaseSeals();
        endCompletion();
        subscriber.complete();
      },
    };
  });
}

/**
 * Whether a chunk's choice only continues the open completion's tool calls (pieces without a name,
 * at indexes it has, with no id or the call's own) or only finishes them: what a server that
 * changes the chunk id mid-completion sends, and no completion can begin with. Read leniently:
 * the choice's own reading reports what is malformed.
 */
function continuesCalls(pieces: ToolCallPieces, choice: Fields): boolean {
  if (pieces.calls.size === 0 || !isObject(choice.delta ?? {})) return false;
  const delta = (choice.delta ?? {}) as Fields;
  const says = (field: string) => delta[field] !== undefined && delta[field] !== null && delta[field] !== '';
  if (['content', 'refusal', 'reasoning_content', 'reasoning', 'audio'].some(says)) return false;
  const continues = (piece: unknown, index: unknown) => {
    if (!isObject(piece)) return false;
    const fn = piece.function ?? piece.custom ?? {};
    const known = typeof index === 'number' ? pieces.calls.get(index) : undefined;
    return isObject(fn) && (fn.name === undefined || fn.name === null || fn.name === '') && known !== undefined && (piece.id === undefined || piece.id === null || piece.id === known);
  };
  const toolCalls = delta.tool_calls;
  if (Array.isArray(toolCalls) && toolCalls.length > 0) return !says('function_call') && toolCalls.every((piece) => continues(piece, isObject(piece) ? piece.index : undefined));
  if (says('function_call')) return continues({ function: delta.function_call }, -1);
  // Only a finish: nothing a new completion could begin with.
  return choice.finish_reason !== undefined && choice.finish_reason !== null && !says('tool_calls');
}

/**
 * Whether a tool call piece is of a custom (freeform) tool call: it has `custom`, or `type: 'custom'`.
 * A piece of another type without `function` is one this adapter cannot read: that is its error.
 */
function isCustomPiece(piece: Fields, where: string): boolean {
  if ((piece.custom !== undefined && piece.custom !== null) || piece.type === 'custom') return true;
  const type = piece.type;
  if ((piece.function === undefined || piece.function === null) && type !== undefined && type !== null && type !== 'function') {
    throw invalid(
      `${where} is a tool call piece of type ${typeof type === 'string' ? `'${type}'` : describeValue(type)}, which fromOpenAIChatCompletions cannot read: only 'function' calls (with function.name and function.arguments) and 'custom' calls (with custom.name and custom.input) are. Map such pieces to one of these before the adapter, or read them from the chunks yourself (raw: true also sends each chunk as RAW).`,
    );
  }
  return false;
}

/** A content part: an object with a string `type`. */
function contentPart(input: unknown, where: string): Fields & { type: string } {
  const part = object(input, where, "{ type: 'text', text: 'Hi' }");
  if (typeof part.type !== 'string') throw invalid(`${where} has 'type: ${describeValue(part.type)}', but a content part's type must be a string such as 'text' or 'thinking'.`);
  return part as Fields & { type: string };
}

/** Whether a choice's `logprobs` holds any (`{ content: [...] }` or `{ refusal: [...] }` with entries); `null` and empty lists hold none. */
function hasLogprobs(logprobs: unknown): boolean {
  return isObject(logprobs) && ['content', 'refusal'].some((field) => Array.isArray(logprobs[field]) && (logprobs[field] as unknown[]).length > 0);
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
    throw providerError('The model provider failed mid-stream', isObject(input.error) ? input.error : { message: input.error });
  }
  if (!Array.isArray(input.choices)) {
    throw invalid(
      `it has ${input.choices === undefined ? 'no' : `'choices: ${describeValue(input.choices)}', not an`} 'choices' array. Is this a Chat Completions stream (stream: true)? Responses API and other providers' events need their own adapter.`,
    );
  }
  return input as Fields & { choices: unknown[] };
}

/** The chunk's usage (at `where`: `usage`, or Groq's `x_groq.usage`) as TokenUsage, or `undefined` when it reports no count. */
function usageOf(usage: unknown, model: unknown, where: string): TokenUsage | undefined {
  if (!isObject(usage)) return undefined;
  const detail = (details: unknown, field: string, path: string) => (isObject(details) ? count(details[field], `${where}.${path}.${field}`) : undefined);
  return usageReport(
    {
      inputTokens: count(usage.prompt_tokens, `${where}.prompt_tokens`),
      outputTokens: count(usage.completion_tokens, `${where}.completion_tokens`),
      totalTokens: count(usage.total_tokens, `${where}.total_tokens`),
      reasoningTokens: detail(usage.completion_tokens_details, 'reasoning_tokens', 'completion_tokens_details'),
      cachedInputTokens: detail(usage.prompt_tokens_details, 'cached_tokens', 'prompt_tokens_details'),
    },
    model,
  );
}
