import type { ContentPart, Message, ToolCall, ToolMessage } from '@ag-ui/core';
import {
  assertMessages,
  defaultWarning,
  foreignFile,
  mimeOf,
  namePart,
  nameSource,
  textOf,
  toolResultText,
  unsupportedImage,
  type ConverterWarning,
  type ConverterOptions,
} from './converterInternals.js';
import { isOrphanResult, pairToolResults } from './pairingInternals.js';
import { splitSystemMessages } from './splitSystemMessages.js';

/** Where an Anthropic image or document comes from. */
export type AnthropicSource =
  | {
      /** Discriminant: `'base64'`. */
      type: 'base64';
      /** The MIME type, e.g. `image/png`, `application/pdf`, `text/plain`. */
      media_type: string;
      /** The content: base64 bytes, or the text itself for a `text` source. */
      data: string;
    }
  | {
      /** Discriminant: `'url'`. */
      type: 'url';
      /** The URL to fetch it from. */
      url: string;
    }
  | {
      /** Discriminant: `'file'`. */
      type: 'file';
      /** A file uploaded to Anthropic's Files API. */
      file_id: string;
    }
  | {
      /** Discriminant: `'text'`. */
      type: 'text';
      /** The MIME type, e.g. `image/png`, `application/pdf`, `text/plain`. */
      media_type: 'text/plain';
      /** The content: base64 bytes, or the text itself for a `text` source. */
      data: string;
    };

/** A text block. */
export interface AnthropicTextBlock {
  /** Discriminant: `'text'`. */
  type: 'text';
  /** The text; never empty. */
  text: string;
}

/** An image block. */
export interface AnthropicImageBlock {
  /** Discriminant: `'image'`. */
  type: 'image';
  /** Where the image comes from: base64 data, a URL or a provider file. */
  source: AnthropicSource;
}

/** A document block (PDF or plain text). */
export interface AnthropicDocumentBlock {
  /** Discriminant: `'document'`. */
  type: 'document';
  /** Where the document comes from: base64 data, a URL, a provider file, or text. */
  source: AnthropicSource;
  /** The document's title (its file name), when known. */
  title?: string | undefined;
}

/** A tool call the assistant made. */
export interface AnthropicToolUseBlock {
  /** Discriminant: `'tool_use'`. */
  type: 'tool_use';
  /** The tool call's id. */
  id: string;
  /** The tool's name. */
  name: string;
  /** The arguments, parsed from the call's JSON (`{}` when empty or not an object). */
  input: Record<string, unknown>;
}

/** A tool call Anthropic ran itself, sent back as it came, its result block right after it. */
export interface AnthropicServerToolUseBlock {
  /** Discriminant: `'server_tool_use'` (web search, web fetch, code execution …) or `'mcp_tool_use'`. */
  type: 'server_tool_use' | 'mcp_tool_use';
  /** The tool call's id. */
  id: string;
  /** The tool's name. */
  name: string;
  /** The arguments, parsed from the call's JSON (`{}` when empty or not an object). */
  input: Record<string, unknown>;
  /** The block's other fields, as Anthropic sent them (an MCP call's `server_name` …). */
  [field: string]: unknown;
}

/** A server tool's result (`web_search_tool_result`, `mcp_tool_result` …), in the assistant turn right after its call. */
export interface AnthropicServerToolResultBlock {
  /** The block's type, as Anthropic sent it. */
  type: `${string}_tool_result`;
  /** The call this result answers. */
  tool_use_id: string;
  /** The result, as Anthropic sent it. */
  content: unknown;
  /** The block's other fields, as Anthropic sent them (`is_error` …). */
  [field: string]: unknown;
}

/** What a tool returned, in a user turn. */
export interface AnthropicToolResultBlockParam {
  /** Discriminant: `'tool_result'`. */
  type: 'tool_result';
  /** The call this result answers. */
  tool_use_id: string;
  /** The result: text, or text, image and document blocks. */
  content: string | (AnthropicTextBlock | AnthropicImageBlock | AnthropicDocumentBlock)[];
  /** Set when the tool failed (the tool message has an `error`). */
  is_error?: true | undefined;
}

/** The assistant's extended thinking, sent back with its signature. */
export interface AnthropicThinkingBlock {
  /** Discriminant: `'thinking'`. */
  type: 'thinking';
  /** The reasoning text (the reasoning message's content). */
  thinking: string;
  /** Anthropic's signature (the reasoning message's `encryptedValue`). */
  signature: string;
}

/** Thinking the safety systems redacted, sent back as the encrypted data it came as. */
export interface AnthropicRedactedThinkingBlock {
  /** Discriminant: `'redacted_thinking'`. */
  type: 'redacted_thinking';
  /** The encrypted thinking, as Anthropic sent it (the message's `encryptedValue`). */
  data: string;
}

/** One block of an Anthropic message's content. */
export type AnthropicContentBlockParam =
  | AnthropicTextBlock
  | AnthropicImageBlock
  | AnthropicDocumentBlock
  | AnthropicToolUseBlock
  | AnthropicToolResultBlockParam
  | AnthropicServerToolUseBlock
  | AnthropicServerToolResultBlock
  | AnthropicThinkingBlock
  | AnthropicRedactedThinkingBlock;

/** One entry of an Anthropic Messages request's `messages`. */
export interface AnthropicMessageParam {
  /** `user` or `assistant`; turns alternate. */
  role: 'user' | 'assistant';
  /** The turn's blocks. */
  content: AnthropicContentBlockParam[];
}

/** What {@link toAnthropicMessages} returns: the request's `system` and `messages`. */
export interface AnthropicRequestMessages {
  /** The system and developer messages, joined by a blank line; absent when there is none. */
  system?: string | undefined;
  /** The conversation's turns, roles alternating. */
  messages: AnthropicMessageParam[];
}

/** Options of {@link toAnthropicMessages}. */
export type ToAnthropicMessagesOptions = ConverterOptions;

/**
 * Converts an AG-UI conversation into the `system` and `messages` of an Anthropic Messages
 * API request.
 *
 * Rules:
 * 1. `system` and `developer` messages are split out into `system` (see `splitSystemMessages`).
 * 2. Content is always a block list. A `user` message's text becomes a `text` block (empty text
 *    is left out, and whitespace-only text with a warning, in user, assistant and tool-result
 *    content alike: the API refuses both, "text content blocks must contain non-whitespace text"); an image becomes an `image` block (base64, URL or provider
 *    file source) when it is JPEG, PNG, GIF or WebP (a URL or file that declares no `mimeType` is
 *    sent: Anthropic reads the bytes); a document becomes a `document` block: base64 PDF as it is, base64 `text/*`
 *    decoded into a `text` source, a URL or a provider file as such. A provider file (image or
 *    document) whose `provider` names another vendor than `anthropic` (OpenAI's `file-…`, Google's
 *    `files/…`) is dropped with a warning: only the provider that issued a handle can resolve it.
 *    One without `provider` is sent as it is (the agent that made it knows which provider it talks to).
 * 3. An `assistant` message becomes a `text` block (when it has text) and one `tool_use` block
 *    `{ id, name, input }` per call, `input` parsed from the JSON arguments: `{}` when they are
 *    empty, and `{}` with a warning when they are not a JSON object.
 * 4. A `reasoning` message with an `encryptedValue` becomes a `thinking` block `{ thinking:
 *    content, signature: encryptedValue }` in the assistant turn it belongs to, before that
 *    turn's text and tool_use blocks (after a server tool's result block, before the text and
 *    calls that follow that result: Anthropic's own order). One marked `metadata: { anthropic: { type:
 *    'redacted_thinking' } }` (as `fromAnthropicMessages` marks it) becomes `{ type:
 *    'redacted_thinking', data: encryptedValue }`.
 * 5. A `tool` message becomes a `tool_result` block `{ tool_use_id, content }` in a user turn,
 *    `tool_result` blocks first in their turn. Its content is text when it has only text, else
 *    text, image and document blocks as in rule 2; when it failed, `is_error: true` and
 *    `Error: <error>` appended.
 * 6. A call's `tool_result` goes in the user turn right after the assistant turn that made it,
 *    the only place the API takes it: a tool message that came later (after the assistant's next
 *    turn, say) is moved to directly after the assistant message with the call. A call that no
 *    tool message answers (a run cut or stopped mid-call, a client tool never answered) gets a
 *    failed result, `is_error: true` with `Error: the call did not complete, and no result was
 *    returned for it.`, with a warning: the API refuses a `tool_use` without its `tool_result`, at
 *    the end of the conversation too. A failed result rather than leaving the call out, so that
 *    the model still sees what it tried, and signed thinking keeps the `tool_use` it came with. To
 *    send a call's real result, add its tool message to the messages before converting them.
 *    `tool_use` ids are unique in the request, as Anthropic requires ("tool_use ids must be
 *    unique"): a call whose id an earlier call has (OpenAI-compatible servers reuse `call_0` in
 *    every response) is sent as `<id>_2` (the next free number), and so is the `tool_result` that
 *    answers it, with a warning. A tool message answers the latest call of its id made before it.
 * 7. A call Anthropic ran itself, marked `metadata: { anthropic: { type: 'server_tool_use' |
 *    'mcp_tool_use', … } }` (as `fromAnthropicMessages` marks it), is sent back as that block
 *    (with the mark's other fields, an MCP call's `server_name`), followed in the same assistant
 *    turn by its result: the tool message that answers it, marked `metadata: { anthropic: { type:
 *    '<…>_tool_result', … } }`, as that block, its content parsed back from JSON when the mark
 *    says `contentFormat: 'json'`. Anthropic takes a server tool's result only there, never as a
 *    `tool_result`. So the transcript text, call, result, answer becomes one assistant turn in
 *    that order.
 * 8. Roles must alternate: consecutive messages of one role (assistant text then more calls,
 *    several tool results, tool results then the user's next words, the messages before and
 *    after a server tool's result) are merged into one turn. A turn left with no blocks (empty
 *    text, or only dropped parts) is left out. When that leaves the request starting with an
 *    assistant turn (the user messages before the first assistant message had nothing to send), a
 *    warning says so: Anthropic refuses a first turn that is not the user's, and no user words are
 *    made up. A conversation that itself starts with an assistant message is sent as it is.
 * 9. Dropped, each with a warning that names it: reasoning without `encryptedValue` (Anthropic
 *    refuses unsigned thinking), `activity` messages, audio and video parts, documents other than
 *    PDF and text, images other than JPEG, PNG, GIF and WebP (SVG, HEIC …), another provider's files, empty user messages, tool messages that answer no call of an earlier assistant
 *    message (the API refuses them; one whose call comes after it too), and a server tool call without a marked result (nor its
 *    result: sent apart, Anthropic would refuse them), with the tool message that answers it
 *    unmarked.
 *
 * ## Example
 *
 * ```ts
 * const { system, messages } = toAnthropicMessages([
 *   { id: 's1', role: 'system', content: 'Be brief.' },
 *   { id: 'u1', role: 'user', content: 'Weather in Paris?' },
 *   { id: 'a1', role: 'assistant', toolCalls: [{ id: 'c1', type: 'function', function: { name: 'weather', arguments: '{"city":"Paris"}' } }] },
 *   { id: 't1', role: 'tool', toolCallId: 'c1', content: 'Sunny' },
 * ]);
 * console.log(JSON.stringify({ system, messages }));
 * // results: {"system":"Be brief.","messages":[{"role":"user","content":[{"type":"text","text":"Weather in Paris?"}]},{"role":"assistant","content":[{"type":"tool_use","id":"c1","name":"weather","input":{"city":"Paris"}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"c1","content":"Sunny"}]}]}
 * ```
 *
 * @param messages The AG-UI messages (e.g. `RunAgentInput.messages`), oldest first.
 * @param options Where warnings about dropped messages and parts, unparsable arguments and unanswered calls go.
 * @return The request's `system` (absent when none) and `messages`, oldest first.
 * @throws {AguiRxError} `INVALID_ARGUMENT` when `messages` is not an array of AG-UI messages (the `RunAgentInput` itself, a `null` message, content or part, a tool call without `function` …), naming what is wrong and where.
 */
export function toAnthropicMessages(messages: readonly Message[], options: ToAnthropicMessagesOptions = {}): AnthropicRequestMessages {
  assertMessages('toAnthropicMessages', messages);
  const warn = options.onWarning ?? defaultWarning;
  const { system, messages: conversation } = splitSystemMessages(messages);
  const turns: AnthropicMessageParam[] = [];
  const add = (role: 'user' | 'assistant', blocks: AnthropicContentBlockParam[]) => {
    const last = turns[turns.length - 1];
    if (last !== undefined && last.role === role) last.content.push(...blocks);
    else turns.push({ role, content: blocks });
  };
  // Each call's results right after it, a failed one for a call without (Anthropic's server calls have their own blocks).
  const paired = pairToolResults('toAnthropicMessages', conversation, warn, isServerToolUse);
  // Server tool calls, each with the tool message that gives its result block (sent with the call, not where it stands).
  const serverResults = findServerResults(paired.messages);
  for (const message of paired.messages) {
    switch (message.role) {
      case 'user':
        // Anthropic refuses an empty text block, and a turn without content.
        if (message.content === '') warn(`toAnthropicMessages dropped user message '${message.id}': it has no content, and Anthropic refuses an empty message.`);
        else if (typeof message.content === 'string') add('user', textBlocks(message.content, () => warn(`toAnthropicMessages dropped user message '${message.id}': ${WHITESPACE_ONLY}`)));
        else add('user', blocksOf(message, message.content, warn));
        break;
      case 'assistant': {
        const blocks: AnthropicContentBlockParam[] = textBlocks(message.content ?? '', () => warn(`toAnthropicMessages left out the text of assistant message '${message.id}': ${WHITESPACE_ONLY}`));
        for (const call of message.toolCalls ?? []) {
          if (serverResults.has(call.id)) {
            blocks.push(...serverBlocks(call, message.id, serverResults.get(call.id), warn));
            continue;
          }
          blocks.push({ type: 'tool_use', id: call.id, name: call.function.name, input: inputOf(call.function.arguments, call.id, message.id, warn) });
        }
        add('assistant', blocks);
        break;
      }
      case 'tool': {
        if (serverResults.has(message.toolCallId)) {
          // Sent with its call; another answer to a server call has no block to go in.
          if (serverResults.get(message.toolCallId) !== message) {
            warn(
              `toAnthropicMessages dropped tool message '${message.id}': it answers tool call '${message.toolCallId}', which Anthropic ran itself (a server tool), and ${serverResults.get(message.toolCallId) === undefined ? "does not name the result block it came as (metadata.anthropic.type, such as 'web_search_tool_result', as fromAnthropicMessages sets it)" : 'another tool message already gives its result'}. Anthropic takes a server tool's result only as that block, after its call.`,
            );
          }
          break;
        }
        if (isOrphanResult('toAnthropicMessages', message, paired, warn)) break;
        const content = message.content;
        const failed = message.error !== undefined && message.error !== '';
        const textOnly = typeof content === 'string' || content.every((part) => part.type === 'text');
        const block: AnthropicToolResultBlockParam = {
          type: 'tool_result',
          tool_use_id: message.toolCallId,
          content: textOnly
            ? toolResultText(resultText(message, warn), message.error)
            : [...(blocksOf(message, content, warn) as Exclude<AnthropicToolResultBlockParam['content'], string>), ...textBlocks(failed ? `Error: ${message.error}` : '')],
        };
        if (failed) block.is_error = true;
        add('user', [block]);
        break;
      }
      case 'reasoning':
        if (message.encryptedValue === undefined || message.encryptedValue === '') {
          warn(`toAnthropicMessages dropped reasoning message '${message.id}': it has no encryptedValue (signature), and Anthropic refuses thinking blocks without one.`);
          break;
        }
        add(
          'assistant',
          isRedacted(message.metadata)
            ? [{ type: 'redacted_thinking', data: message.encryptedValue }]
            : [{ type: 'thinking', thinking: message.content, signature: message.encryptedValue }],
        );
        break;
      case 'activity':
        warn(`toAnthropicMessages dropped activity message '${message.id}' (${message.activityType}): activity is shown to the user, not sent to the model.`);
        break;
      case 'system':
      case 'developer':
        // Split out above.
        break;
      default: {
        const unreachable: never = message;
        warn(`toAnthropicMessages dropped a message with unknown role '${(unreachable as { role?: unknown }).role}'.`);
      }
    }
  }
  const out: AnthropicMessageParam[] = [];
  for (const turn of turns) {
    // The API refuses an empty turn; what it held was empty text or parts already warned about.
    if (turn.content.length === 0) continue;
    // Thinking first in an assistant turn, tool results first in a user turn: the API's order.
    // After a server tool's result, the model went on (thinking again, maybe): each such stretch keeps its own thinking first.
    const first = turn.role === 'assistant' ? ['thinking', 'redacted_thinking'] : ['tool_result'];
    const ordered: AnthropicContentBlockParam[] = [];
    let stretch: AnthropicContentBlockParam[] = [];
    const flush = () => ordered.push(...stretch.filter((block) => first.includes(block.type)), ...stretch.filter((block) => !first.includes(block.type)));
    for (const block of turn.content) {
      stretch.push(block);
      if (turn.role === 'assistant' && block.type.endsWith('_tool_result')) {
        flush();
        stretch = [];
      }
    }
    flush();
    turn.content = ordered;
    const previous = out[out.length - 1];
    // Leaving out an empty turn may put two turns of one role side by side.
    if (previous !== undefined && previous.role === turn.role) previous.content.push(...turn.content);
    else out.push(turn);
  }
  warnIfAssistantFirst(conversation, out, warn);
  return system === undefined ? { messages: out } : { system, messages: out };
}

/**
 * Warns when the request starts with an assistant turn only because the user messages before the
 * first assistant message had nothing Anthropic takes (each dropped with its own warning): Anthropic
 * has refused a conversation whose first turn is not the user's. No user words are made up; a
 * conversation that starts with an assistant message is the caller's, and sent so.
 */
function warnIfAssistantFirst(conversation: readonly Message[], turns: readonly AnthropicMessageParam[], warn: ConverterWarning): void {
  if (turns[0]?.role !== 'assistant') return;
  const firstAssistant = conversation.findIndex((message) => message.role === 'assistant' || message.role === 'reasoning');
  const dropped = conversation.slice(0, firstAssistant).filter((message) => message.role === 'user');
  if (dropped.length === 0) return;
  warn(
    `toAnthropicMessages sent a request whose first turn is the assistant's: the user message before it (${dropped.map(({ id }) => `'${id}'`).join(', ')}) had nothing Anthropic takes, and Anthropic refuses a conversation that does not start with a user turn ("messages: first message must use the \"user\" role"). Give that user message some text, or leave out the messages before the user's first words.`,
  );
}

/** The `metadata.anthropic` of a call or tool message, when it is an object. */
function anthropicMark(metadata: unknown): Record<string, unknown> | undefined {
  const mark = (metadata as { anthropic?: unknown } | undefined)?.anthropic;
  return typeof mark === 'object' && mark !== null && !Array.isArray(mark) ? (mark as Record<string, unknown>) : undefined;
}

const serverToolUseTypes: ReadonlySet<unknown> = new Set(['server_tool_use', 'mcp_tool_use']);

/** Whether a call is one Anthropic ran itself (marked as `fromAnthropicMessages` marks it). */
const isServerToolUse = (call: ToolCall): boolean => serverToolUseTypes.has(anthropicMark(call.metadata)?.type);

/**
 * The calls Anthropic ran itself (marked `server_tool_use` or `mcp_tool_use`), each with the first
 * tool message that answers it marked as a `*_tool_result` block (`undefined` when none does).
 */
function findServerResults(messages: readonly Message[]): Map<string, ToolMessage | undefined> {
  const results = new Map<string, ToolMessage | undefined>();
  for (const message of messages) {
    if (message.role === 'assistant') {
      for (const call of message.toolCalls ?? []) if (isServerToolUse(call) && !results.has(call.id)) results.set(call.id, undefined);
    } else if (message.role === 'tool' && results.has(message.toolCallId) && results.get(message.toolCallId) === undefined) {
      const type = anthropicMark(message.metadata)?.type;
      if (typeof type === 'string' && type.endsWith('_tool_result')) results.set(message.toolCallId, message);
    }
  }
  return results;
}

/** A server tool call and its result, as the two blocks Anthropic sent; none (and a warning) when the result cannot be sent back. */
function serverBlocks(call: ToolCall, messageId: string, result: ToolMessage | undefined, warn: ConverterWarning): AnthropicContentBlockParam[] {
  const dropped = (why: string) => {
    warn(`toAnthropicMessages dropped server tool call '${call.id}' (${call.function.name}) of assistant message '${messageId}': Anthropic ran it itself and takes it back only followed by its result block, and ${why}. Sent apart, Anthropic would refuse the call (or its result).`);
    return [];
  };
  if (result === undefined) {
    return dropped("no tool message gives that result with its block type (metadata.anthropic.type, such as 'web_search_tool_result', as fromAnthropicMessages sets it)");
  }
  const { contentFormat, ...resultFields } = anthropicMark(result.metadata)!;
  const text = textOf(result.content);
  let content: unknown = text;
  if (contentFormat === 'json') {
    try {
      content = JSON.parse(text);
    } catch {
      return dropped(`the content of tool message '${result.id}' is not the JSON its metadata says it is (contentFormat: 'json')`);
    }
  }
  const mark = anthropicMark(call.metadata)!;
  const use = { ...mark, id: call.id, name: call.function.name, input: inputOf(call.function.arguments, call.id, messageId, warn) } as AnthropicServerToolUseBlock;
  return [use, { ...resultFields, tool_use_id: call.id, content } as AnthropicServerToolResultBlock];
}

/** Why whitespace-only text is left out. */
const WHITESPACE_ONLY = 'its text is only whitespace, and Anthropic refuses a text block without other text ("text content blocks must contain non-whitespace text").';

/** A text block, or none for empty or whitespace-only text (`dropped` is told of the latter: Anthropic refuses both). */
function textBlocks(text: string, dropped?: () => void): AnthropicTextBlock[] {
  if (text.trim() !== '') return [{ type: 'text', text }];
  if (text !== '') dropped?.();
  return [];
}

/** A text-only tool message's text, `''` (with a warning) when it is only whitespace. */
function resultText(message: ToolMessage, warn: ConverterWarning): string {
  const text = textOf(message.content);
  if (text === '' || text.trim() !== '') return text;
  warn(`toAnthropicMessages left out the text of tool message '${message.id}': ${WHITESPACE_ONLY} Its tool_result is sent without text.`);
  return '';
}

/** A tool call's arguments as a `tool_use` input object. */
function inputOf(args: string, callId: string, messageId: string, warn: ConverterWarning): Record<string, unknown> {
  if (args.trim() === '') return {};
  try {
    const input: unknown = JSON.parse(args);
    if (typeof input === 'object' && input !== null && !Array.isArray(input)) return input as Record<string, unknown>;
  } catch {
    // Reported below.
  }
  const shown = args.length > 60 ? `${args.slice(0, 60)}…` : args;
  warn(`toAnthropicMessages sent tool call '${callId}' of assistant message '${messageId}' with input {}: its arguments ${JSON.stringify(shown)} are not a JSON object, and tool_use input must be one.`);
  return {};
}

/** A message's parts as Anthropic blocks, dropping (with a warning) those it cannot take. */
function blocksOf(message: Message, parts: readonly ContentPart[], warn: ConverterWarning): (AnthropicTextBlock | AnthropicImageBlock | AnthropicDocumentBlock)[] {
  const out: (AnthropicTextBlock | AnthropicImageBlock | AnthropicDocumentBlock)[] = [];
  parts.forEach((part, index) => {
    const drop = (why: string) => warn(`toAnthropicMessages dropped ${namePart(part, index, message)}: ${why}`);
    switch (part.type) {
      case 'text':
        out.push(...textBlocks(part.text, () => drop(WHITESPACE_ONLY)));
        break;
      case 'image': {
        const source = part.source;
        const why = foreignFile(source, 'Anthropic', 'Anthropic', anthropicFiles) ?? unsupportedImage(source, 'Anthropic');
        if (why !== undefined) {
          drop(why);
          break;
        }
        out.push({
          type: 'image',
          source:
            source.type === 'data' ? { type: 'base64', media_type: mimeOf(source)!, data: source.value } : source.type === 'url' ? { type: 'url', url: source.value } : { type: 'file', file_id: source.value },
        });
        break;
      }
      case 'document': {
        const source = part.source;
        const mime = mimeOf(source);
        const title = (part.metadata as { title?: unknown } | undefined)?.title;
        const foreign = foreignFile(source, 'Anthropic', 'Anthropic', anthropicFiles);
        if (foreign !== undefined) {
          drop(foreign);
          break;
        }
        let block: AnthropicDocumentBlock | undefined;
        if (source.type === 'url') block = { type: 'document', source: { type: 'url', url: source.value } };
        else if (source.type === 'file') block = { type: 'document', source: { type: 'file', file_id: source.value } };
        else if (mime === 'application/pdf') block = { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: source.value } };
        else if (mime?.startsWith('text/')) block = { type: 'document', source: { type: 'text', media_type: 'text/plain', data: decodeBase64Text(source.value) } };
        if (block === undefined) {
          drop(`Anthropic takes documents only as PDF or plain text, and this is ${nameSource(source)}. Convert it to PDF or send its text.`);
          break;
        }
        if (typeof title === 'string' && title !== '') block.title = title;
        out.push(block);
        break;
      }
      case 'audio':
        drop('Anthropic takes no audio input. Transcribe it first, or send it to a provider that takes audio.');
        break;
      case 'video':
        drop('Anthropic takes no video input. Send frames as images, or a transcript as text.');
        break;
      default: {
        const unreachable: never = part;
        drop(`'${(unreachable as { type?: unknown }).type}' is not an AG-UI content part type.`);
      }
    }
  });
  return out;
}

/** The `FileSource.provider` whose handles Anthropic resolves. */
const anthropicFiles: readonly string[] = ['anthropic'];

/** Base64 bytes as UTF-8 text (with `atob`, so that it runs outside Node too). */
function decodeBase64Text(value: string): string {
  return new TextDecoder().decode(Uint8Array.from(atob(value), (char) => char.charCodeAt(0)));
}

/** Whether a reasoning message came from a `redacted_thinking` block (see `fromAnthropicMessages`). */
function isRedacted(metadata: unknown): boolean {
  const anthropic = (metadata as { anthropic?: { type?: unknown } } | undefined)?.anthropic;
  return anthropic?.type === 'redacted_thinking';
}
