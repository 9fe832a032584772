import type { ContentPart, Message, PartSource, ToolCall, ToolMessage } from '@ag-ui/core';
import { AguiRxError, describeValue } from '../protocol/errors.js';

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
  // The declared type as the checks read it (lower-cased, no parameters, image/jpg as image/jpeg).
  if (source.type === 'data') return `data:${mimeOf(source)};base64,${source.value}`;
  if (source.type === 'url') return source.value;
  return undefined;
}

/**
 * The mime type a source declares, lower-cased, without parameters (`text/plain; charset=utf-8` →
 * `text/plain`), with the common alias `image/jpg` read as `image/jpeg`; `undefined` when none or empty.
 */
export function mimeOf(source: PartSource): string | undefined {
  const mime = source.mimeType?.split(';')[0].trim().toLowerCase();
  return mime === '' ? undefined : mime === 'image/jpg' ? 'image/jpeg' : mime;
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

/** The image types Anthropic and both OpenAI APIs take (PNG, JPEG, GIF, WebP); each refuses others, SVG and HEIC among them. */
export const imageTypes: readonly string[] = ['image/jpeg', 'image/png', 'image/gif', 'image/webp'];

/**
 * Why an image cannot go to `api`, or `undefined` when it can: a base64 image, or a URL or file
 * whose declared `mimeType` is not one of {@link imageTypes}. A URL or file that declares no type
 * is sent: the provider reads the type from the bytes.
 */
export function unsupportedImage(source: PartSource, api: string): string | undefined {
  const mime = mimeOf(source);
  if (mime === undefined || imageTypes.includes(mime)) return undefined;
  return `${api} takes images only as ${imageTypes.join(', ')}, and this is ${nameSource(source)}. Convert it to PNG or JPEG first.`;
}

/** The `FileSource.provider` whose handles the OpenAI APIs resolve: OpenAI's, and Azure OpenAI's (the same APIs; which host gets the request, the converter cannot tell). */
export const openAIFiles: readonly string[] = ['openai', 'azure'];

/**
 * Why a provider file handle cannot go to `api` (of `vendor`), or `undefined` when it can: its `provider` (compared
 * lower-cased) is set and is none of `accepts`. Only the provider that issued a handle can resolve it
 * (AG-UI's `FileSource`); a handle without `provider` is sent as it is, as the agent that made it
 * knows which provider it talks to.
 */
export function foreignFile(source: PartSource, api: string, vendor: string, accepts: readonly string[]): string | undefined {
  if (source.type !== 'file') return undefined;
  // An empty provider names none, as an absent one; spaces around a name are not part of it.
  const provider = source.provider?.trim().toLowerCase();
  if (provider === undefined || provider === '' || accepts.includes(provider)) return undefined;
  return `it is a file handle that '${source.provider}' issued ('${source.value}'), and only the provider that issued a handle can resolve it: ${api} would refuse it. Send the file's bytes (base64) or its URL instead, or upload the file to ${vendor}'s Files API and send that id (with provider: '${accepts[0]}').`;
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

/** An object that is not an array (nor `null`). */
const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** What each role's `content` must be, and whether it may be absent. */
const contentRules: Record<string, { parts: boolean; optional: boolean; takes: string }> = {
  user: { parts: true, optional: false, takes: 'its text (a string) or an array of content parts' },
  tool: { parts: true, optional: false, takes: 'its text (a string) or an array of content parts' },
  assistant: { parts: false, optional: true, takes: 'its text (a string), or absent' },
  system: { parts: false, optional: false, takes: 'its text (a string)' },
  developer: { parts: false, optional: false, takes: 'its text (a string)' },
  reasoning: { parts: false, optional: false, takes: 'its text (a string)' },
};

/**
 * Refuses what a converter cannot read as AG-UI messages, naming what is wrong and where, instead of
 * failing with a `TypeError` deep inside (or converting a string's characters): the
 * `RunAgentInput` itself instead of its `messages`, a message that is not an object, a `null`
 * content or part, a tool call without `function`. A role it does not know is left to the converter
 * (dropped with a warning).
 *
 * @throws {AguiRxError} `INVALID_ARGUMENT`.
 */
export function assertMessages(converter: string, messages: unknown): asserts messages is readonly Message[] {
  const fail = (detail: string): never => {
    throw new AguiRxError('INVALID_ARGUMENT', `${converter} cannot convert the messages: ${detail}`);
  };
  if (!Array.isArray(messages)) {
    if (isRecord(messages) && Array.isArray(messages.messages)) {
      throw new AguiRxError('INVALID_ARGUMENT', `${converter} takes RunAgentInput.messages (an array of messages), not the RunAgentInput itself: call ${converter}(input.messages).`);
    }
    fail(`they are ${describeValue(messages)}, but ${converter} takes an array of AG-UI messages, such as RunAgentInput.messages.`);
  }
  // Array.from: a hole is undefined, and refused as such (forEach would skip it).
  Array.from(messages as unknown[]).forEach((message, index) => {
    const at = `messages[${index}]`;
    if (!isRecord(message)) return fail(`${at} is ${describeValue(message)}, but each message must be an object with a role, such as { id: 'u1', role: 'user', content: 'Hi' }.`);
    const rule = typeof message.role === 'string' ? contentRules[message.role] : undefined;
    if (rule === undefined) return;
    const content = message.content;
    const parts = Array.isArray(content);
    if (!(typeof content === 'string' || (rule.parts && parts) || (rule.optional && (content === undefined || content === null)))) {
      fail(`${at}.content is ${describeValue(content)}, but a ${message.role} message's content must be ${rule.takes}.`);
    }
    if (parts) Array.from(content as unknown[]).forEach((part, k) => assertPart(part, `${at}.content[${k}]`, fail));
    if (message.role === 'tool' && typeof message.toolCallId !== 'string') fail(`${at}.toolCallId is ${describeValue(message.toolCallId)}, but a tool message must name the call it answers (a string).`);
    if (message.role !== 'assistant' || message.toolCalls === undefined || message.toolCalls === null) return;
    if (!Array.isArray(message.toolCalls)) return fail(`${at}.toolCalls is ${describeValue(message.toolCalls)}, but it must be an array of tool calls, or absent.`);
    Array.from(message.toolCalls as unknown[]).forEach((call, k) => {
      const where = `${at}.toolCalls[${k}]`;
      if (!isRecord(call)) return fail(`${where} is ${describeValue(call)}, but a tool call must be an object such as { id: 'c1', type: 'function', function: { name: 'search', arguments: '{}' } }.`);
      if (typeof call.id !== 'string') fail(`${where}.id is ${describeValue(call.id)}, but a tool call's id must be a string.`);
      if (!isRecord(call.function)) return fail(`${where}.function is ${describeValue(call.function)}, but a tool call must have function: { name, arguments }, such as { name: 'search', arguments: '{}' }.`);
      if (typeof call.function.name !== 'string') fail(`${where}.function.name is ${describeValue(call.function.name)}, but it must be the tool's name (a string).`);
      if (typeof call.function.arguments !== 'string') fail(`${where}.function.arguments is ${describeValue(call.function.arguments)}, but it must be the arguments as JSON text (a string, '{}' for none).`);
    });
  });
}

/** The content part types that carry a `source`. */
const mediaParts: ReadonlySet<string> = new Set(['image', 'audio', 'video', 'document']);

/** Refuses a content part that is not an object with a `type`, a text part without text, a media part without a source. */
function assertPart(part: unknown, where: string, fail: (detail: string) => never): void {
  if (!isRecord(part) || typeof part.type !== 'string') return void fail(`${where} is ${describeValue(part)}, but a content part must be an object with a type, such as { type: 'text', text: 'Hi' }.`);
  if (part.type === 'text' && typeof part.text !== 'string') fail(`${where}.text is ${describeValue(part.text)}, but a text part's text must be a string.`);
  if (mediaParts.has(part.type) && !(isRecord(part.source) && typeof part.source.type === 'string' && typeof part.source.value === 'string')) {
    fail(`${where}.source is ${describeValue(part.source)}, but a ${part.type} part's source must be { type: 'data' | 'url' | 'file', value: '…', mimeType? }.`);
  }
}
