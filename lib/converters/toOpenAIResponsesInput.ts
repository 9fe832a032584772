import type { ContentPart, Message, ResumeEntry, ToolCall } from '@ag-ui/core';
import { approvalAnswer, assertResume, callKind, customInput, openAIMark, type ResponsesCallKind } from './responsesInputInternals.js';
import {
  assertMessages,
  defaultWarning,
  fileNameOf,
  foreignFile,
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
import { splitSystemMessages } from './splitSystemMessages.js';

/** Text in a Responses input message. */
export interface ResponsesInputText {
  /** Discriminant: `'input_text'`. */
  type: 'input_text';
  /** The text. */
  text: string;
}

/** An image in a Responses input message: a URL (`https:` or `data:`) or an uploaded file's id. */
export interface ResponsesInputImage {
  /** Discriminant: `'input_image'`. */
  type: 'input_image';
  /** The resolution the model sees the image at: `auto`. */
  detail: 'auto' | 'low' | 'high';
  /** A URL, or base64 data as a `data:` URL. */
  image_url?: string | undefined;
  /** A file uploaded to OpenAI's Files API. */
  file_id?: string | undefined;
}

/** A file in a Responses input message: inline as a `data:` URL with a file name, a URL, or an uploaded file's id. */
export interface ResponsesInputFile {
  /** Discriminant: `'input_file'`. */
  type: 'input_file';
  /** The file name, for inline data. */
  filename?: string | undefined;
  /** Inline data, as a `data:` URL. */
  file_data?: string | undefined;
  /** A URL to fetch the file from. */
  file_url?: string | undefined;
  /** A file uploaded to OpenAI's Files API. */
  file_id?: string | undefined;
}

/** Inline audio, base64 wav or mp3. */
export interface ResponsesInputAudio {
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

/** One part of a Responses input message. */
export type ResponsesInputContent = ResponsesInputText | ResponsesInputImage | ResponsesInputFile | ResponsesInputAudio;

/** One item of a Responses request's `input`. */
export type ResponsesInputItem =
  | {
      /** Discriminant: `'message'`. */
      type: 'message';
      /** The message's role. */
      role: 'user';
      /** The message's parts. */
      content: ResponsesInputContent[];
    }
  | {
      /** Discriminant: `'message'`. */
      type: 'message';
      /** The message's role. */
      role: 'assistant';
      /** The message's parts. */
      content: {
        /** Discriminant: `'output_text'`. */
        type: 'output_text';
        /** The assistant's text. */
        text: string;
      }[];
    }
  | {
      /** Discriminant: `'function_call'`. */
      type: 'function_call';
      /** The tool call's id (the AG-UI tool call id). */
      call_id: string;
      /** The function's name. */
      name: string;
      /** The arguments as JSON text. */
      arguments: string;
    }
  | {
      /** Discriminant: `'function_call_output'`, or `'custom_tool_call_output'` for a custom tool's call. */
      type: 'function_call_output' | 'custom_tool_call_output';
      /** The tool call's id (the AG-UI tool call id). */
      call_id: string;
      /** The tool's result: text, or input parts. */
      output: string | ResponsesInputContent[];
    }
  | {
      /** Discriminant: `'custom_tool_call'` (a custom, freeform tool). */
      type: 'custom_tool_call';
      /** The tool call's id (the AG-UI tool call id). */
      call_id: string;
      /** The tool's name. */
      name: string;
      /** The free text input the model wrote. */
      input: string;
    }
  | {
      /** Discriminant: `'mcp_approval_request'`. */
      type: 'mcp_approval_request';
      /** The request's id (`mcpr_…`, the AG-UI tool call id). */
      id: string;
      /** The MCP server's label. */
      server_label: string;
      /** The MCP tool's name. */
      name: string;
      /** The arguments as JSON text. */
      arguments: string;
    }
  | {
      /** Discriminant: `'mcp_approval_response'`. */
      type: 'mcp_approval_response';
      /** The id of the request it answers. */
      approval_request_id: string;
      /** Whether the user approved the call. */
      approve: boolean;
      /** Why, when the answer gave a reason. */
      reason?: string | undefined;
    }
  | {
      /** Discriminant: `'reasoning'`. */
      type: 'reasoning';
      /** The reasoning item's id, when it is the API's own (`rs_…`). */
      id?: string | undefined;
      /** The encrypted reasoning (the reasoning message's `encryptedValue`). */
      encrypted_content: string;
      /** The reasoning summary (the reasoning message's content; empty when it has none). */
      summary: {
        /** Discriminant: `'summary_text'`. */
        type: 'summary_text';
        /** The summary's text. */
        text: string;
      }[];
    };

/** What {@link toOpenAIResponsesInput} returns: the request's `instructions` and `input`. */
export interface ResponsesRequestInput {
  /** The system and developer messages, joined by a blank line; absent when there is none. */
  instructions?: string | undefined;
  /** The conversation as Responses input items. */
  input: ResponsesInputItem[];
}

/** Options of {@link toOpenAIResponsesInput}. */
export interface ToOpenAIResponsesInputOptions extends ConverterOptions {
  /**
   * The run's `RunAgentInput.resume` entries: the user's answers to the MCP approval requests the
   * previous run ended with (its interrupt ids are the requests' ids). Each answered request is sent
   * with an `mcp_approval_response`. Default: none.
   */
  resume?: readonly ResumeEntry[] | undefined;
}

/**
 * Converts an AG-UI conversation into the `instructions` and `input` items of an OpenAI
 * Responses API request.
 *
 * Rules:
 * 1. `system` and `developer` messages are split out into `instructions` (see `splitSystemMessages`).
 * 2. A `user` message becomes a `message` item whose content is always a part list: text →
 *    `input_text`, image → `input_image` (`image_url` for base64, as a `data:` URL, and URLs;
 *    `file_id` for a provider file; `detail: 'auto'`), document → `input_file` (`file_data` with
 *    a file name for base64, `file_url`, or `file_id`), base64 wav/mp3 audio → `input_audio`.
 *    A provider file whose `provider` names another vendor than `openai` or `azure` (Anthropic's
 *    `file_…`, Google's `files/…`) is dropped with a warning: only the provider that issued a
 *    handle can resolve it. One without `provider` is sent as it is (the agent knows its provider).
 * 3. An `assistant` message becomes a `message` item with one `output_text` part when it has
 *    text, then one `function_call` item `{ call_id, name, arguments }` per tool call. AG-UI ids
 *    are not sent as item ids (the API only takes its own `msg_`/`fc_` ids).
 * 4. A `tool` message becomes `function_call_output` `{ call_id, output }`: the text when it has
 *    only text (its `error` appended as `Error: <error>`), else a part list as in rule 2. One that
 *    answers no call in the messages is kept: its call may be in the `previous_response_id`
 *    response. One whose call comes after it is dropped with a warning: a result answers a call
 *    made before it, and the call gets one output (rule 5).
 * 5. A call's `function_call_output` goes directly after the assistant message's `function_call`
 *    items: one that came later is moved there. A call that no tool message answers (a run cut or
 *    stopped mid-call, a client tool never answered) gets a failed output, `Error: the call did not
 *    complete, and no result was returned for it.`, with a warning: the API refuses a
 *    `function_call` without its output ("No tool output found for function call"), at the end of
 *    `input` too, and with `previous_response_id` too, as only `input` can answer a call in
 *    `input`. A failed output rather than leaving the call out, so that the model still sees what
 *    it tried, and a reasoning item keeps the item that followed it. To send a call's real result,
 *    add its tool message to the messages before converting them. A tool message answers the latest
 *    call of its id made before it; a call whose id an earlier call has (servers that number calls
 *    per response reuse `call_0`) is sent as `<id>_2` (the next free number), with its output, and
 *    a warning: one `call_id` per call, one output per `call_id`.
 * 6. A `reasoning` message with an `encryptedValue` becomes `{ type: 'reasoning',
 *    encrypted_content, summary }` (its content as one `summary_text`, none when empty), with
 *    `id` when the message id is the API's own (`rs_…`). Send the request with
 *    `include: ['reasoning.encrypted_content']` and `store: false`. One that no assistant message
 *    or tool call follows (a response cut while the model reasoned) is dropped with a warning: the
 *    API refuses a reasoning item without the item that followed it.
 * 7. Dropped, each with a warning that names it: reasoning without `encryptedValue` (the API
 *    cannot take it back), `activity` messages, video parts, audio other than base64 wav/mp3,
 *    images other than JPEG, PNG, GIF and WebP (a URL or file that declares no `mimeType` is
 *    sent), another provider's files. A
 *    user message whose every part was dropped is left out.
 * 8. A call `fromOpenAIResponses` marked as made by a Responses tool item (`metadata: { openai: {
 *    type, server_label? } }`) goes back as that item where the API takes it: a custom tool's
 *    (`custom_tool_call`) as `{ type: 'custom_tool_call', call_id, name, input }` with the raw input
 *    text (the `input` of its `{"input": …}` arguments; other arguments are sent as the text, with a
 *    warning), its results (a failed one too) as `custom_tool_call_output`. A call OpenAI ran
 *    itself (`web_search_call`, `file_search_call`, `mcp_call`, `code_interpreter_call`) is left
 *    out with its results, one warning each, and gets no failed output: as an input item it needs
 *    its response's item id, which the API finds only in a stored response (with `store: false` it
 *    refuses the item), and as a `function_call` it would name a function the request never
 *    declared; the text the model wrote after it is kept (send `previous_response_id` to keep the
 *    whole response). An `mcp_approval_request` gets no output either: the `options.resume` entry
 *    whose `interruptId` is its id (the interrupt `fromOpenAIResponses` ended the run with) sends it
 *    as `{ type: 'mcp_approval_request', id, server_label, name, arguments }` followed by
 *    `{ type: 'mcp_approval_response', approval_request_id, approve, reason? }`: `status: 'resolved'`
 *    with payload `{ approved, reason? }` (or a bare boolean), `cancelled` declines. A request no
 *    entry answers is left out with a warning; a tool message answering one is dropped with a
 *    warning. Unmarked calls, and other tool items' calls, stay function calls. So the run that
 *    resumes an interrupted one converts with `toOpenAIResponsesInput(runInput.messages, { resume:
 *    runInput.resume })`.
 *
 * ## Example
 *
 * ```ts
 * const { instructions, input } = toOpenAIResponsesInput([
 *   { id: 's1', role: 'system', content: 'Be brief.' },
 *   { id: 'u1', role: 'user', content: 'Weather in Paris?' },
 *   { id: 'a1', role: 'assistant', toolCalls: [{ id: 'c1', type: 'function', function: { name: 'weather', arguments: '{"city":"Paris"}' } }] },
 *   { id: 't1', role: 'tool', toolCallId: 'c1', content: 'Sunny' },
 * ]);
 * console.log(JSON.stringify({ instructions, input }));
 * // results: {"instructions":"Be brief.","input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"Weather in Paris?"}]},{"type":"function_call","call_id":"c1","name":"weather","arguments":"{\"city\":\"Paris\"}"},{"type":"function_call_output","call_id":"c1","output":"Sunny"}]}
 * ```
 *
 * @param messages The AG-UI messages (e.g. `RunAgentInput.messages`), oldest first.
 * @param options Where warnings about dropped messages and parts, and unanswered calls, go; the run's `resume` entries that answer MCP approval requests.
 * @return The request's `instructions` (absent when none) and `input` items, oldest first.
 * @throws {AguiRxError} `INVALID_ARGUMENT` when `messages` is not an array of AG-UI messages (the `RunAgentInput` itself, a `null` message, content or part, a tool call without `function` …), naming what is wrong and where.
 * @throws {AguiRxError} `INVALID_RESUME` for a resume entry of an MCP approval request whose status is neither resolved nor cancelled, or, resolved, whose payload does not say whether it is approved; `INVALID_ARGUMENT` when `messages` are not AG-UI messages or `options.resume` is not a list of resume entries.
 */
export function toOpenAIResponsesInput(messages: readonly Message[], options: ToOpenAIResponsesInputOptions = {}): ResponsesRequestInput {
  assertMessages('toOpenAIResponsesInput', messages);
  assertResume(options.resume);
  const warn = options.onWarning ?? defaultWarning;
  const { system, messages: conversation } = splitSystemMessages(messages);
  const input: ResponsesInputItem[] = [];
  // The reasoning items, with the message each came from.
  const reasoningOf = new Map<ResponsesInputItem, string>();
  // The kind of each call made so far, by id: how its results go back.
  const kinds = new Map<string, ResponsesCallKind>();
  const answeredByProvider = (call: ToolCall) => callKind(call) === 'server' || callKind(call) === 'approval';
  const paired = pairToolResults('toOpenAIResponsesInput', conversation, warn, answeredByProvider);
  for (const message of paired.messages) {
    switch (message.role) {
      case 'user': {
        const content: ResponsesInputContent[] = typeof message.content === 'string' ? [{ type: 'input_text', text: message.content }] : inputParts(message, message.content, warn);
        // A part list whose every part was dropped (and warned about) leaves nothing to send.
        if (content.length > 0) input.push({ type: 'message', role: 'user', content });
        break;
      }
      case 'assistant': {
        // null content (as an OpenAI message has with only tool calls) is no text.
        const text = message.content ?? '';
        if (text !== '') input.push({ type: 'message', role: 'assistant', content: [{ type: 'output_text', text }] });
        for (const call of message.toolCalls ?? []) {
          kinds.set(call.id, callKind(call));
          input.push(...callItems(call, message.id, options.resume ?? [], warn));
        }
        break;
      }
      case 'tool': {
        // One that answers no call in the messages is kept (its call may be in the previous_response_id response), unless its call comes after it.
        if (isOrphanResult('toOpenAIResponsesInput', message, paired, warn, true)) break;
        const kind = kinds.get(message.toolCallId);
        // Its call's warning named it: a server tool's result goes with its call, an approval request is answered by resume.
        if (kind === 'server') break;
        if (kind === 'approval') {
          warn(`toOpenAIResponsesInput dropped tool message '${message.id}': it answers MCP approval request '${message.toolCallId}', which takes no result; the user's answer goes in options.resume (RunAgentInput.resume), as an mcp_approval_response.`);
          break;
        }
        const type = kind === 'custom' ? 'custom_tool_call_output' : 'function_call_output';
        const content = message.content;
        const textOnly = typeof content === 'string' || content.every((part) => part.type === 'text');
        if (textOnly) input.push({ type, call_id: message.toolCallId, output: toolResultText(textOf(content), message.error) });
        else {
          const output = inputParts(message, content, warn);
          if (message.error !== undefined && message.error !== '') output.push({ type: 'input_text', text: `Error: ${message.error}` });
          input.push({ type, call_id: message.toolCallId, output });
        }
        break;
      }
      case 'reasoning': {
        if (message.encryptedValue === undefined || message.encryptedValue === '') {
          warn(`toOpenAIResponsesInput dropped reasoning message '${message.id}': it has no encryptedValue, and the Responses API takes reasoning back only as encrypted_content.`);
          break;
        }
        const item: ResponsesInputItem = {
          type: 'reasoning',
          ...(message.id.startsWith('rs_') ? { id: message.id } : {}),
          encrypted_content: message.encryptedValue,
          summary: message.content === '' ? [] : [{ type: 'summary_text', text: message.content }],
        };
        reasoningOf.set(item, message.id);
        input.push(item);
        break;
      }
      case 'activity':
        warn(`toOpenAIResponsesInput dropped activity message '${message.id}' (${message.activityType}): activity is shown to the user, not sent to the model.`);
        break;
      case 'system':
      case 'developer':
        // Split out above.
        break;
      default: {
        const unreachable: never = message;
        warn(`toOpenAIResponsesInput dropped a message with unknown role '${(unreachable as { role?: unknown }).role}'.`);
      }
    }
  }
  const kept = withFollowingItems(input, reasoningOf, warn);
  return system === undefined ? { input: kept } : { instructions: system, input: kept };
}

/**
 * The input items of one tool call, by its kind: a `function_call`; a custom tool's
 * `custom_tool_call` with its input text; an MCP approval request answered by a resume entry as
 * the request and its `mcp_approval_response`; nothing (and a warning) for a tool OpenAI ran
 * itself, or an approval request no entry answers.
 */
function callItems(call: ToolCall, messageId: string, resume: readonly ResumeEntry[], warn: (message: string) => void): ResponsesInputItem[] {
  const { name, arguments: args } = call.function;
  const named = `tool call '${call.id}' (${name}) of assistant message '${messageId}'`;
  switch (callKind(call)) {
    case 'function':
      return [{ type: 'function_call', call_id: call.id, name, arguments: args }];
    case 'custom': {
      const text = customInput(args);
      if (text === undefined) warn(`toOpenAIResponsesInput sent custom ${named} with its arguments as its input text: they are not the {"input": "<text>"} fromOpenAIResponses gives a custom tool's call.`);
      return [{ type: 'custom_tool_call', call_id: call.id, name, input: text ?? args }];
    }
    case 'server':
      warn(
        `toOpenAIResponsesInput left out server ${named} and its result: OpenAI ran it itself (a ${String(openAIMark(call)?.type)} item), and takes it back only as that item with its response's item id, which it finds only in a stored response (with store: false it refuses the item). As a function_call it would name a function the request never declared. What the model wrote after it is kept; to send the whole response, use previous_response_id.`,
      );
      return [];
    case 'approval': {
      const entry = resume.find((candidate) => candidate.interruptId === call.id);
      if (entry === undefined) {
        warn(
          `toOpenAIResponsesInput left out MCP approval request ${named}: no resume entry answers it, and the API runs the tool only on an mcp_approval_response. To answer it, pass the run's RunAgentInput.resume as options.resume (an entry with interruptId '${call.id}').`,
        );
        return [];
      }
      const answer = approvalAnswer(entry, call.id);
      const response: ResponsesInputItem = { type: 'mcp_approval_response', approval_request_id: call.id, approve: answer.approve, ...(answer.reason === undefined ? {} : { reason: answer.reason }) };
      const label = openAIMark(call)?.server_label;
      if (typeof label === 'string' && label !== '') return [{ type: 'mcp_approval_request', id: call.id, server_label: label, name, arguments: args }, response];
      warn(`toOpenAIResponsesInput sent only the answer to MCP approval request ${named}: its mark has no server_label, so the request item cannot be sent with it, and the API finds the request only through previous_response_id.`);
      return [response];
    }
  }
}

/** A message's parts as Responses input parts, dropping (with a warning) those it cannot take. */
function inputParts(message: Message, parts: readonly ContentPart[], warn: (message: string) => void): ResponsesInputContent[] {
  const out: ResponsesInputContent[] = [];
  parts.forEach((part, index) => {
    const drop = (why: string) => warn(`toOpenAIResponsesInput dropped ${namePart(part, index, message)}: ${why}`);
    switch (part.type) {
      case 'text':
        out.push({ type: 'input_text', text: part.text });
        break;
      case 'image': {
        const url = urlOf(part.source);
        const why = foreignFile(part.source, 'the Responses API', 'OpenAI', openAIFiles) ?? unsupportedImage(part.source, 'the Responses API');
        if (why !== undefined) {
          drop(why);
          break;
        }
        out.push(url === undefined ? { type: 'input_image', detail: 'auto', file_id: part.source.value } : { type: 'input_image', detail: 'auto', image_url: url });
        break;
      }
      case 'document': {
        const source = part.source;
        const foreign = foreignFile(source, 'the Responses API', 'OpenAI', openAIFiles);
        if (foreign !== undefined) drop(foreign);
        else if (source.type === 'data') out.push({ type: 'input_file', filename: fileNameOf(part, message.id, index), file_data: urlOf(source)! });
        else if (source.type === 'url') out.push({ type: 'input_file', file_url: source.value });
        else out.push({ type: 'input_file', file_id: source.value });
        break;
      }
      case 'audio': {
        const format = openAIAudioFormat(part.source);
        if (format === undefined) drop(`the Responses API takes audio only as base64 wav or mp3, and this is ${nameSource(part.source)}. Convert it to wav or mp3 bytes first.`);
        else out.push({ type: 'input_audio', input_audio: { data: part.source.value, format } });
        break;
      }
      case 'video':
        drop('the Responses API takes no video. Send frames as images, or a transcript as text.');
        break;
      default: {
        const unreachable: never = part;
        drop(`'${(unreachable as { type?: unknown }).type}' is not an AG-UI content part type.`);
      }
    }
  });
  return out;
}

/** The call items that can follow a reasoning item, as the model's output did. */
const followingTypes: ReadonlySet<unknown> = new Set(['function_call', 'custom_tool_call', 'mcp_approval_request']);

/**
 * The items without the reasoning items that nothing the model wrote follows: the API refuses a
 * reasoning item without the message or function call that came after it in its response ("was
 * provided without its required following item"), as a response cut while it reasoned leaves one.
 */
function withFollowingItems(input: ResponsesInputItem[], reasoningOf: ReadonlyMap<ResponsesInputItem, string>, warn: (message: string) => void): ResponsesInputItem[] {
  if (reasoningOf.size === 0) return input;
  const kept: ResponsesInputItem[] = [];
  for (let i = 0; i < input.length; i++) {
    const item = input[i];
    const id = reasoningOf.get(item);
    if (id !== undefined) {
      let next = i + 1;
      while (next < input.length && reasoningOf.has(input[next])) next++;
      const following = input[next] as { type?: unknown; role?: unknown } | undefined;
      if (!followingTypes.has(following?.type) && !(following?.type === 'message' && following.role === 'assistant')) {
        warn(`toOpenAIResponsesInput dropped reasoning message '${id}': no assistant message or tool call follows it (its response was cut while the model reasoned), and the API refuses a reasoning item without the item that followed it.`);
        continue;
      }
    }
    kept.push(item);
  }
  return kept;
}
