import type { ContentPart, Message, PartSource, ToolCall, ToolMessage } from '@ag-ui/core';

/** Where a converter's warnings go: a message naming what was dropped (or answered for), and why. */
export type ConverterWarning = (message: string) => void;

/** Options every message converter takes. */
export interface ConverterOptions {
  /** Called once for each message or part the provider cannot take and that is therefore dropped, and for each tool call sent with a failed result because no tool message answers it. Default: `console.warn` with an `[agui-rx]` prefix. */
  onWarning?: ConverterWarning | undefined;
}

/** The default warning sink. */
export function defaultWarning(message: string): void {
  console.warn(`[agui-rx] ${message}`);
}

/** A message's content as plain text: a string as it is, the text parts of a part list joined by newlines. */
export function textOf(content: string | ContentPart[] | undefined): string {
  if (content === undefined) return '';
  if (typeof content === 'string') return content;
  return content
    .filter((part): part is Extract<ContentPart, { type: 'text' }> => part.type === 'text')
    .map((part) => part.text)
    .join('\n');
}

/** A data or url source as a URL: a data source becomes a `data:` URL, a url source is kept. `undefined` for a provider file handle. */
export function urlOf(source: PartSource): string | undefined {
  if (source.type === 'data') return `data:${source.mimeType};base64,${source.value}`;
  if (source.type === 'url') return source.value;
  return undefined;
}

/** The mime type a source declares, lower-cased, without parameters (`text/plain; charset=utf-8` → `text/plain`). */
export function mimeOf(source: PartSource): string | undefined {
  return source.mimeType?.split(';')[0].trim().toLowerCase();
}

/** The OpenAI `input_audio` format for a base64 audio source, or `undefined` when OpenAI cannot take it inline. */
export function openAIAudioFormat(source: PartSource): 'wav' | 'mp3' | undefined {
  if (source.type !== 'data') return undefined;
  const mime = mimeOf(source);
  if (mime === 'audio/wav' || mime === 'audio/x-wav' || mime === 'audio/wave' || mime === 'audio/vnd.wave') return 'wav';
  if (mime === 'audio/mpeg' || mime === 'audio/mp3') return 'mp3';
  return undefined;
}

/** A file name for a document part: `metadata.filename` when it is a string, else `<messageId>-<index>` with an extension for the mime type. */
export function fileNameOf(part: ContentPart, messageId: string, index: number): string {
  const name = (part.metadata as { filename?: unknown } | undefined)?.filename;
  if (typeof name === 'string' && name !== '') return name;
  const mime = 'source' in part ? mimeOf(part.source) : undefined;
  const extension = mime === 'application/pdf' ? '.pdf' : mime?.startsWith('text/') ? '.txt' : '';
  return `${messageId}-${index}${extension}`;
}

/** How a warning names a part: "the audio part at index 1 of user message 'u1'". */
export function namePart(part: ContentPart, index: number, message: Message): string {
  return `the ${part.type} part at index ${index} of ${message.role} message '${message.id}'`;
}

/** How a warning names a source: "base64 (audio/ogg)", "URL", "provider file". */
export function nameSource(source: PartSource): string {
  const kind = source.type === 'data' ? 'base64' : source.type === 'url' ? 'URL' : 'provider file';
  return source.mimeType === undefined ? kind : `${kind} (${source.mimeType})`;
}

/** The text a tool message tells the model: its content's text, and its `error` when it failed. */
export function toolResultText(content: string, error: string | undefined): string {
  if (error === undefined || error === '') return content;
  return content === '' ? `Error: ${error}` : `${content}\nError: ${error}`;
}

/** System and developer instructions joined (blank line between), or `undefined` when there are none. */
export function joinInstructions(parts: readonly string[]): string | undefined {
  const kept = parts.filter((part) => part !== '');
  return kept.length === 0 ? undefined : kept.join('\n\n');
}

/** The schema of a tool that declares none: an object with no properties. */
export function parametersOf(parameters: unknown): Record<string, unknown> {
  return parameters === undefined || parameters === null ? { type: 'object', properties: {} } : (parameters as Record<string, unknown>);
}

/**
 * Whether a tool message is one {@link pairToolResults} found answering no call of an earlier
 * assistant message: then it is dropped, with a warning, as an API that keeps no state (Chat
 * Completions, Anthropic Messages) refuses the whole request for a result without its call.
 */
export function isOrphanResult(converter: string, message: ToolMessage, paired: PairedMessages, warn: ConverterWarning): boolean {
  if (!paired.orphans.has(message)) return false;
  warn(`${converter} dropped tool message '${message.id}': it answers tool call '${message.toolCallId}', which no earlier assistant message made, and the API refuses a result without its call. Keep the assistant message with the call in the history, or leave the result out.`);
  return true;
}

/** The `error` of the result a converter sends for a tool call that no tool message answers. */
export const UNANSWERED_CALL_ERROR = 'the call did not complete, and no result was returned for it.';

/**
 * The conversation with each tool call's results directly after the assistant message that made
 * the call, as every API wants them: Chat Completions refuses a call whose tool messages do not
 * directly follow it, Anthropic one whose `tool_result` is not in the very next user turn, and the
 * Responses API a `function_call` without its `function_call_output`.
 *
 * 1. A tool message that answers a call of an earlier assistant message (the latest that made a
 *    call of that id) is moved to directly after that message, in the order the results came, past
 *    any user, system or assistant message between them.
 * 2. A call that no later tool message answers gets a failed result of its own after them, a tool
 *    message with `error` {@link UNANSWERED_CALL_ERROR}, with a warning. A run cut or stopped mid-call,
 *    or a client tool left unanswered, leaves such a call, and no API takes one, not even at the end
 *    of the conversation. A failed result rather than leaving the call out: the model still sees
 *    what it tried and that it did not complete, and thinking or reasoning sent back with the call
 *    keeps what followed it.
 * 3. A second tool message for one call is dropped, with a warning: the first result stands (Anthropic
 *    refuses two `tool_result` blocks for one `tool_use`).
 * 4. Every other message keeps its place, a tool message that answers no earlier call too (each
 *    converter decides whether its API takes one: {@link isOrphanResult}).
 *
 * @param converter The converter's name, for the warnings.
 * @param messages The AG-UI messages, oldest first.
 * @param warn Where the warnings go.
 * @param answeredByProvider Whether a call is one the provider ran and answers itself (Anthropic's
 *    server tools): it gets no failed result, nor is a second answer to it dropped: the converter
 *    decides what to send for it.
 * @return The messages in the order to convert them, with the failed results added, and the tool
 *    messages among them that answer no earlier call.
 */
export function pairToolResults(converter: string, messages: readonly Message[], warn: ConverterWarning, answeredByProvider: (call: ToolCall) => boolean = () => false): PairedMessages {
  // The latest assistant message that made each call id so far (its index), and the call.
  const madeBy = new Map<string, { at: number; call: ToolCall }>();
  // The tool messages that answer an assistant message's calls, by its index, and each call's first answer.
  const results = new Map<number, { answers: ToolMessage[]; first: Map<string, ToolMessage> }>();
  // The tool messages that leave their place (moved after their call, or dropped), and those that answer no earlier call.
  const moved = new Set<number>();
  const orphans = new Set<ToolMessage>();
  messages.forEach((message, index) => {
    if (message.role === 'assistant') for (const call of message.toolCalls ?? []) madeBy.set(call.id, { at: index, call });
    else if (message.role === 'tool') {
      const made = madeBy.get(message.toolCallId);
      if (made === undefined) return void orphans.add(message);
      moved.add(index);
      let answered = results.get(made.at);
      if (answered === undefined) results.set(made.at, (answered = { answers: [], first: new Map() }));
      const first = answered.first.get(message.toolCallId);
      // A second result of one call (a retried tool, a history appended twice): every API takes one
      // result per call (Anthropic refuses a second), so the first stands. A provider's own calls are its converter's.
      if (first !== undefined && !answeredByProvider(made.call)) {
        return warn(
          `${converter} dropped tool message '${message.id}': tool call '${message.toolCallId}' has a result already (tool message '${first.id}'), and the API takes one result per call. Keep one tool message per call.`,
        );
      }
      if (first === undefined) answered.first.set(message.toolCallId, message);
      answered.answers.push(message);
    }
  });
  const out: Message[] = [];
  messages.forEach((message, index) => {
    if (moved.has(index)) return;
    out.push(message);
    if (message.role !== 'assistant') return;
    const answered = results.get(index);
    if (answered !== undefined) out.push(...answered.answers);
    // Once per id: a message that names a call twice gets one failed result.
    const failed = new Set<string>();
    for (const call of message.toolCalls ?? []) {
      if (answered?.first.has(call.id) || failed.has(call.id) || answeredByProvider(call)) continue;
      failed.add(call.id);
      warn(
        `${converter} sent tool call '${call.id}' (${call.function.name}) of assistant message '${message.id}' with a failed result ("Error: ${UNANSWERED_CALL_ERROR}"): no tool message answers it, and the API refuses a call without its result. A run cut or stopped mid-call, or a client tool never answered, leaves such a call; to send its real result, add a tool message for it to the messages before converting them.`,
      );
      out.push({ id: `${message.id}-${call.id}-unanswered`, role: 'tool', toolCallId: call.id, content: '', error: UNANSWERED_CALL_ERROR });
    }
  });
  return { messages: out, orphans };
}

/** What {@link pairToolResults} gives: the messages to convert, and the tool messages among them that answer no earlier call. */
export interface PairedMessages {
  readonly messages: readonly Message[];
  readonly orphans: ReadonlySet<ToolMessage>;
}
