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
