import type { ContentPart, Message, ReasoningMessage, ToolCall } from '@ag-ui/core';
import {
  assertMessages,
  defaultWarning,
  fileNameOf,
  foreignFile,
  mimeOf,
  namePart,
  nameSource,
  openAIAudioFormat,
  openAIFiles,
  textOf,
  toolResultText,
  unsupportedImage,
  urlOf,
  type ConverterOptions,
} from './converterInternals.js';
import { isOrphanResult, pairToolResults } from './pairingInternals.js';
import { callKind, customInput } from './responsesInputInternals.js';

/** A text part of an OpenAI chat message. */
export interface OpenAIChatTextPart {
  /** Discriminant: `'text'`. */
  type: 'text';
  /** The text. */
  text: string;
}

/** An image part: an `https:` or `data:` URL. */
export interface OpenAIChatImagePart {
  /** Discriminant: `'image_url'`. */
  type: 'image_url';
  /** The image. */
  image_url: {
    /** A URL, or base64 data as a `data:` URL. */
    url: string;
    /** The resolution the model sees the image at; optional. */
    detail?: 'auto' | 'low' | 'high' | undefined;
  };
}

/** Inline audio, base64 wav or mp3 (audio-capable models only). */
export interface OpenAIChatAudioPart {
  /** Discriminant: `'input_audio'`. */
  type: 'input_audio';
  /** The audio. */
  input_audio: {
    /** Base64 audio bytes. */
    data: string;
    /** `wav` or `mp3`. */
    format: 'wav' | 'mp3';
  };
}

/** A file (PDF): inline as a `data:` URL with a file name, or an uploaded file's id. */
export interface OpenAIChatFilePart {
  /** Discriminant: `'file'`. */
  type: 'file';
  /** The file (a PDF). */
  file: {
    /** The file name, for inline data. */
    filename?: string | undefined;
    /** Inline data, as a `data:` URL. */
    file_data?: string | undefined;
    /** A file uploaded to OpenAI's Files API. */
    file_id?: string | undefined;
  };
}

/** One part of an OpenAI chat user message. */
export type OpenAIChatContentPart = OpenAIChatTextPart | OpenAIChatImagePart | OpenAIChatAudioPart | OpenAIChatFilePart;

/** A tool call of an assistant message, as Chat Completions sends and takes it: a function's, or a custom (freeform) tool's. */
export type OpenAIChatToolCall = OpenAIChatFunctionToolCall | OpenAIChatCustomToolCall;

/** A custom (freeform) tool's call: the raw input text the model wrote. */
export interface OpenAIChatCustomToolCall {
  /** The call's id (the AG-UI tool call id). */
  id: string;
  /** Discriminant: `'custom'`. */
  type: 'custom';
  /** The custom tool called. */
  custom: {
    /** The tool's name. */
    name: string;
    /** The free text input the model wrote. */
    input: string;
  };
  /** Gemini's OpenAI-compatible endpoint: the call's thought signature, which Gemini 3 needs back on the next request. */
  extra_content?: { google: { thought_signature: string } } | undefined;
}

/** A function's call. */
export interface OpenAIChatFunctionToolCall {
  /** The call's id (the AG-UI tool call id). */
  id: string;
  /** Discriminant: `'function'`. */
  type: 'function';
  /** The function called. */
  function: {
    /** The function's name. */
    name: string;
    /** The arguments as JSON text. */
    arguments: string;
  };
  /** Gemini's OpenAI-compatible endpoint: the call's thought signature, which Gemini 3 needs back on the next request. */
  extra_content?: { google: { thought_signature: string } } | undefined;
}

/** An encrypted reasoning block of OpenRouter's `reasoning_details`, as it takes one back. */
export interface OpenRouterEncryptedReasoning {
  /** Discriminant: `'reasoning.encrypted'`. */
  type: 'reasoning.encrypted';
  /** The tool call the block signs. */
  id: string;
  /** The encrypted reasoning (the call's `encryptedValue`). */
  data: string;
  /** The upstream format it came in (`google-gemini-v1` …), when known. */
  format?: string | undefined;
  /** The block's position among the message's blocks. */
  index: number;
}

/** One entry of a Chat Completions request's `messages`. */
export type OpenAIChatMessage =
  | {
      /** The message's role. */
      role: 'system' | 'developer';
      /** The message's content: text or parts (`null` for an assistant message with only tool calls). */
      content: string;
      /** The author's name, when the AG-UI message has one. */
      name?: string | undefined;
    }
  | {
      /** The message's role. */
      role: 'user';
      /** The message's content: text or parts (`null` for an assistant message with only tool calls). */
      content: string | OpenAIChatContentPart[];
      /** The author's name, when the AG-UI message has one. */
      name?: string | undefined;
    }
  | {
      /** The message's role. */
      role: 'assistant';
      /** The message's content: text or parts (`null` for an assistant message with only tool calls). */
      content: string | null;
      /** DeepSeek, Moonshot (Kimi) thinking mode: the reasoning before this answer, with `reasoningContent: true`. */
      reasoning_content?: string | undefined;
      /** OpenRouter: the encrypted reasoning blocks of the message's tool calls (Gemini 3's), which it needs back. */
      reasoning_details?: OpenRouterEncryptedReasoning[] | undefined;
      /** The assistant's tool calls; absent when it made none. */
      tool_calls?: OpenAIChatToolCall[] | undefined;
      /** The author's name, when the AG-UI message has one. */
      name?: string | undefined;
    }
  | {
      /** The message's role. */
      role: 'tool';
      /** The call this tool message answers. */
      tool_call_id: string;
      /** The message's content: text or parts (`null` for an assistant message with only tool calls). */
      content: string;
    };

/** Options of {@link toOpenAIChatMessages}. */
export interface ToOpenAIChatMessagesOptions extends ConverterOptions {
  /**
   * Send the reasoning of an assistant turn back as the assistant message's `reasoning_content`, as
   * DeepSeek's and Moonshot's (Kimi) thinking mode require for a turn that made tool calls (else
   * 400 "Missing reasoning_content field in the assistant message"). Default: false, as OpenAI
   * and strict servers refuse unknown fields: reasoning messages are dropped with a warning.
   */
  reasoningContent?: boolean | undefined;
}

/**
 * Converts an AG-UI conversation into the `messages` of an OpenAI Chat Completions request.
 *
 * Every message keeps its place; what Chat Completions has no place for is dropped with a warning.
 *
 * Rules:
 * 1. `system` and `developer` messages stay in the list with their role (use
 *    `splitSystemMessages` first to send them some other way); `name` is kept on every role that has one.
 * 2. A `user` message with string content keeps it; a part list becomes parts: text → `text`,
 *    image → `image_url` (a base64 source as a `data:` URL, a URL as it is), base64 wav/mp3 audio →
 *    `input_audio`, a PDF document → `file` (base64 as `file_data` with a file name from
 *    `metadata.filename` or `<messageId>-<index>.pdf`, a provider file as `file_id`). A provider
 *    file whose `provider` names another vendor than `openai` or `azure` (Anthropic's `file_…`,
 *    Google's `files/…`) is dropped with a warning: only the provider that issued a handle can
 *    resolve it. One without `provider` is sent as it is (the agent knows its provider).
 * 3. An `assistant` message becomes `{ role: 'assistant', content, tool_calls }`: `content` is
 *    `null` when it has tool calls and no text, `tool_calls` is left out when it has none. One
 *    with neither text nor calls is left out (it tells the model nothing).
 *    A call marked `metadata: { google: { encryptedValue: 'thought_signature' } }` (as
 *    `fromOpenAIChatCompletions` marks Gemini's) gets its `encryptedValue` back as `extra_content:
 *    { google: { thought_signature } }`, which Gemini 3 requires on the next request. A call marked
 *    `metadata: { openrouter: { encryptedValue: 'reasoning.encrypted', format } }` (as
 *    `fromOpenAIChatCompletions` marks an OpenRouter encrypted reasoning block that names the call)
 *    gets it back as an entry `{ type: 'reasoning.encrypted', id, data, format, index }` of the
 *    assistant message's `reasoning_details`, which OpenRouter needs back for tool calling with
 *    reasoning (Gemini 3 through OpenRouter). Chat Completions has no field for another call's
 *    `encryptedValue`, which is left out with a warning (OpenAI and strict servers refuse unknown fields).
 *    A call marked `metadata: { openai: { type: 'custom_tool_call' } }` (a custom, freeform tool's,
 *    as `fromOpenAIChatCompletions` and `fromOpenAIResponses` mark it) goes back as `{ id, type:
 *    'custom', custom: { name, input } }` with the raw input text (the `input` of its `{"input": …}`
 *    arguments; other arguments are sent as the text, with a warning); its results stay `tool`
 *    messages.
 * 4. With `reasoningContent: true` (DeepSeek, Moonshot/Kimi thinking mode), the `reasoning`
 *    messages directly before an assistant message (only `activity` messages between) become its
 *    `reasoning_content`: their contents joined by a blank line, empty ones skipped (`''` when
 *    every one is empty: the field is there, as the API wants it after a tool call). A reasoning
 *    message that no assistant message follows in its turn (a completion cut while the model
 *    reasoned; an assistant message left out for having neither text nor calls) is dropped with a
 *    warning, and so is a reasoning message's `encryptedValue` (Chat Completions has no field for
 *    it; OpenRouter's other reasoning blocks are not sent back).
 * 5. A `tool` message becomes `{ role: 'tool', tool_call_id, content }`, its content the text of
 *    its text parts; its `error`, if any, is appended as `Error: <error>`.
 * 6. The tool messages of a call go directly after the assistant message that made it, the only
 *    place the API takes them: one that came later (after the user's next words, say) is moved
 *    there. A call that no tool message answers (a run cut or stopped mid-call, a client tool never
 *    answered) gets a failed result, `Error: the call did not complete, and no result was returned
 *    for it.`, with a warning: the API refuses a call without its result, at the end of the
 *    conversation too. A failed result rather than leaving the call out, so that the model still
 *    sees what it tried. To send a call's real result (a tool run once the user approved it, say),
 *    add its tool message to the messages before converting them. A tool message answers the latest
 *    call of its id made before it (one that comes before its call is dropped, rule 7); a call whose
 *    id an earlier call has (servers that number calls per response reuse `call_0`) is sent as
 *    `<id>_2` (the next free number), with its results, and a warning, so that each result pairs
 *    with its own call.
 * 7. Dropped, each with a warning that names it: `reasoning` messages without `reasoningContent`
 *    (Chat Completions takes no reasoning back), `activity` messages (UI-only), video parts, audio
 *    other than base64 wav/mp3, documents other than PDF and URL-sourced documents, provider-file
 *    images, images other than JPEG, PNG, GIF and WebP (a URL that declares no `mimeType` is sent),
 *    another provider's files, media parts of tool results (Chat Completions takes text only there), and tool
 *    messages that answer no call of an earlier assistant message (the API refuses them; one whose
 *    call comes after it too: a result answers a call made before it). A user
 *    message whose every part was dropped is left out.
 *
 * ## Example
 *
 * ```ts
 * const messages = toOpenAIChatMessages([
 *   { id: 's1', role: 'system', content: 'Be brief.' },
 *   { id: 'u1', role: 'user', content: 'Weather in Paris?' },
 *   { id: 'a1', role: 'assistant', toolCalls: [{ id: 'c1', type: 'function', function: { name: 'weather', arguments: '{"city":"Paris"}' } }] },
 *   { id: 't1', role: 'tool', toolCallId: 'c1', content: 'Sunny' },
 * ]);
 * console.log(JSON.stringify(messages));
 * // results: [{"role":"system","content":"Be brief."},{"role":"user","content":"Weather in Paris?"},{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"weather","arguments":"{\"city\":\"Paris\"}"}}]},{"role":"tool","tool_call_id":"c1","content":"Sunny"}]
 * ```
 *
 * @param messages The AG-UI messages (e.g. `RunAgentInput.messages`), oldest first.
 * @param options Where warnings about dropped messages and parts, and unanswered calls, go; whether reasoning goes back as `reasoning_content`.
 * @return The Chat Completions messages, oldest first.
 * @throws {AguiRxError} `INVALID_ARGUMENT` when `messages` is not an array of AG-UI messages (the `RunAgentInput` itself, a `null` message, content or part, a tool call without `function` …), naming what is wrong and where.
 */
export function toOpenAIChatMessages(messages: readonly Message[], options: ToOpenAIChatMessagesOptions = {}): OpenAIChatMessage[] {
  assertMessages('toOpenAIChatMessages', messages);
  const warn = options.onWarning ?? defaultWarning;
  const reasoningContent = options.reasoningContent ?? false;
  const out: OpenAIChatMessage[] = [];
  const paired = pairToolResults('toOpenAIChatMessages', messages, warn);
  // With reasoningContent: the reasoning messages of the turn, waiting for the assistant message they go on.
  let reasoning: ReasoningMessage[] = [];
  const dropReasoning = () => {
    for (const { id } of reasoning) {
      warn(
        `toOpenAIChatMessages dropped reasoning message '${id}': no assistant message with text or tool calls follows it in its turn (its completion was cut while the model reasoned, say), so it has no message to go on as reasoning_content.`,
      );
    }
    reasoning = [];
  };
  for (const message of paired.messages) {
    // Only activity (never sent) may stand between reasoning and the assistant message it goes on.
    if (reasoning.length > 0 && message.role !== 'reasoning' && message.role !== 'assistant' && message.role !== 'activity') dropReasoning();
    switch (message.role) {
      case 'system':
      case 'developer':
        out.push(named({ role: message.role, content: message.content }, message.name));
        break;
      case 'user': {
        const content = typeof message.content === 'string' ? message.content : userParts(message, message.content, warn);
        // A part list whose every part was dropped (and warned about) leaves nothing to send.
        if (content.length > 0 || typeof message.content === 'string') out.push(named({ role: 'user', content }, message.name));
        break;
      }
      case 'assistant': {
        const text = message.content ?? '';
        const made = message.toolCalls ?? [];
        if (text === '' && made.length === 0) {
          dropReasoning();
          break;
        }
        const converted: OpenAIChatMessage = { role: 'assistant', content: text === '' ? null : text };
        if (reasoning.length > 0) {
          converted.reasoning_content = reasoningText(reasoning, message.id, warn);
          reasoning = [];
        }
        if (made.length > 0) {
          const details: OpenRouterEncryptedReasoning[] = [];
          const calls = made.map((call) => toolCallOf(call, message.id, warn, details));
          if (details.length > 0) converted.reasoning_details = details;
          converted.tool_calls = calls;
        }
        out.push(named(converted, message.name));
        break;
      }
      case 'tool': {
        if (isOrphanResult('toOpenAIChatMessages', message, paired, warn)) break;
        if (typeof message.content !== 'string') {
          message.content.forEach((part, index) => {
            if (part.type !== 'text') {
              warn(`toOpenAIChatMessages dropped ${namePart(part, index, message)}: Chat Completions tool messages take text only. Describe the ${part.type} in text, or send it in a user message.`);
            }
          });
        }
        out.push({ role: 'tool', tool_call_id: message.toolCallId, content: toolResultText(textOf(message.content), message.error) });
        break;
      }
      case 'reasoning':
        if (reasoningContent) {
          reasoning.push(message);
          break;
        }
        warn(`toOpenAIChatMessages dropped reasoning message '${message.id}': Chat Completions takes no reasoning as input. Use the Responses API (toOpenAIResponsesInput) to send encrypted reasoning back.`);
        break;
      case 'activity':
        warn(`toOpenAIChatMessages dropped activity message '${message.id}' (${message.activityType}): activity is shown to the user, not sent to the model.`);
        break;
      default: {
        const unreachable: never = message;
        warn(`toOpenAIChatMessages dropped a message with unknown role '${(unreachable as { role?: unknown }).role}'.`);
      }
    }
  }
  dropReasoning();
  return out;
}

/** The text of a turn's reasoning messages, as one `reasoning_content`: empty ones skipped; their encrypted values have no field. */
function reasoningText(reasoning: readonly ReasoningMessage[], messageId: string, warn: (message: string) => void): string {
  for (const { id, encryptedValue } of reasoning) {
    if (encryptedValue === undefined || encryptedValue === '') continue;
    warn(`toOpenAIChatMessages left out the encryptedValue of reasoning message '${id}': Chat Completions has no field for it; only its text goes back, as the reasoning_content of assistant message '${messageId}'.`);
  }
  return reasoning
    .map(({ content }) => content)
    .filter((content) => content !== '')
    .join('\n\n');
}

/** The provider marks a call's `metadata` may carry, saying whose its `encryptedValue` is. */
type EncryptedValueMarks = { google?: { encryptedValue?: unknown }; openrouter?: { encryptedValue?: unknown; format?: unknown } } | undefined;

/** A call as Chat Completions takes it, with Gemini's thought signature when the call carries one; OpenRouter's encrypted reasoning goes in `details`. */
function toolCallOf(call: ToolCall, messageId: string, warn: (message: string) => void, details: OpenRouterEncryptedReasoning[]): OpenAIChatToolCall {
  const converted = callOf(call, messageId, warn);
  const value = call.encryptedValue;
  if (value === undefined || value === '') return converted;
  const marks = call.metadata as EncryptedValueMarks;
  if (marks?.google?.encryptedValue === 'thought_signature') converted.extra_content = { google: { thought_signature: value } };
  else if (marks?.openrouter?.encryptedValue === 'reasoning.encrypted') {
    const format = marks.openrouter.format;
    details.push({ type: 'reasoning.encrypted', id: call.id, data: value, ...(typeof format === 'string' && format !== '' ? { format } : {}), index: details.length });
  } else {
    warn(
      `toOpenAIChatMessages left out the encryptedValue of tool call '${call.id}' of assistant message '${messageId}': Chat Completions has no field for it. Only Gemini's thought signature, marked metadata: { google: { encryptedValue: 'thought_signature' } } as fromOpenAIChatCompletions marks it, is sent back (as extra_content), and OpenRouter's encrypted reasoning, marked metadata: { openrouter: { encryptedValue: 'reasoning.encrypted' } } (as reasoning_details); OpenAI and strict servers refuse unknown fields.`,
    );
  }
  return converted;
}

/**
 * A call marked as a custom tool's (`metadata: { openai: { type: 'custom_tool_call' } }`, as
 * `fromOpenAIChatCompletions` and `fromOpenAIResponses` mark it) as a custom call with its raw input
 * text (the `input` of its `{"input": …}` arguments); any other as a function call.
 */
function callOf(call: ToolCall, messageId: string, warn: (message: string) => void): OpenAIChatToolCall {
  const { name, arguments: args } = call.function;
  if (callKind(call) !== 'custom') return { id: call.id, type: 'function', function: { name, arguments: args } };
  const input = customInput(args);
  if (input === undefined) {
    warn(`toOpenAIChatMessages sent custom tool call '${call.id}' (${name}) of assistant message '${messageId}' with its arguments as its input text: they are not the {"input": "<text>"} fromOpenAIChatCompletions gives a custom tool's call.`);
  }
  return { id: call.id, type: 'custom', custom: { name, input: input ?? args } };
}

/** The message with `name` when the AG-UI message has one (never an undefined-valued key). */
function named<T extends OpenAIChatMessage>(converted: T, name: string | undefined): T {
  if (name !== undefined && converted.role !== 'tool') (converted as { name?: string }).name = name;
  return converted;
}

/** A user message's parts as Chat Completions parts, dropping (with a warning) those it cannot take. */
function userParts(message: Message, parts: readonly ContentPart[], warn: (message: string) => void): OpenAIChatContentPart[] {
  const out: OpenAIChatContentPart[] = [];
  parts.forEach((part, index) => {
    const drop = (why: string) => warn(`toOpenAIChatMessages dropped ${namePart(part, index, message)}: ${why}`);
    switch (part.type) {
      case 'text':
        out.push({ type: 'text', text: part.text });
        break;
      case 'image': {
        const url = urlOf(part.source);
        const why = foreignFile(part.source, 'Chat Completions', 'OpenAI', openAIFiles) ?? unsupportedImage(part.source, 'Chat Completions');
        if (why !== undefined) drop(why);
        else if (url === undefined) drop(`Chat Completions takes images as URLs or base64 data, not as a provider file (${part.source.value}). Send the image's bytes or URL instead.`);
        else out.push({ type: 'image_url', image_url: { url } });
        break;
      }
      case 'audio': {
        const format = openAIAudioFormat(part.source);
        if (format === undefined) drop(`Chat Completions takes audio only as base64 wav or mp3, and this is ${nameSource(part.source)}. Convert it to wav or mp3 bytes first.`);
        else out.push({ type: 'input_audio', input_audio: { data: part.source.value, format } });
        break;
      }
      case 'document': {
        const source = part.source;
        const foreign = foreignFile(source, 'Chat Completions', 'OpenAI', openAIFiles);
        if (foreign !== undefined) drop(foreign);
        else if (source.type === 'file') out.push({ type: 'file', file: { file_id: source.value } });
        else if (source.type === 'data' && mimeOf(source) === 'application/pdf') {
          out.push({ type: 'file', file: { filename: fileNameOf(part, message.id, index), file_data: urlOf(source)! } });
        } else drop(`Chat Completions takes documents only as base64 PDF or an uploaded file id, and this is ${nameSource(source)}. Send the PDF's bytes, or its text as a text part.`);
        break;
      }
      case 'video':
        drop('Chat Completions takes no video. Send frames as images, or a transcript as text.');
        break;
      default: {
        const unreachable: never = part;
        drop(`'${(unreachable as { type?: unknown }).type}' is not an AG-UI content part type.`);
      }
    }
  });
  return out;
}
