import { describeValue } from '../protocol/errors.js';
import { nonEmpty, type FieldReaders, type Fields } from './readers.js';

/**
 * OpenRouter's `reasoning_details` (on a Chat Completions delta): each entry read and checked, as
 * `fromOpenAIChatCompletions` uses it. A pure reader; not part of the public API.
 */

/** One reasoning block of `reasoning_details`, as far as AG-UI can carry it. */
export interface ReasoningDetail {
  /** The entry's `type` (`reasoning.text`, `reasoning.summary`, `reasoning.encrypted`, or another). */
  type: string;
  /** The reasoning text (`text` of a text entry, `summary` of a summary entry); `undefined` when it has none. */
  text?: string | undefined;
  /** An encrypted value: `data` of an encrypted entry, `signature` of a text entry; never empty. */
  encrypted?: string | undefined;
  /** The entry's `id` (Gemini's encrypted entries: the tool call they sign); never empty. */
  id?: string | undefined;
  /** The upstream `format` (`google-gemini-v1` …), never empty. */
  format?: string | undefined;
}

const detailExample = "[{ type: 'reasoning.encrypted', data: '…', id: 'call_1', format: 'google-gemini-v1' }]";

/** The fields of each entry that hold its text or its encrypted value, by type. */
const fieldsOf: ReadonlyMap<string, { text?: string; encrypted?: string }> = new Map([
  ['reasoning.text', { text: 'text', encrypted: 'signature' }],
  ['reasoning.summary', { text: 'summary' }],
  ['reasoning.encrypted', { encrypted: 'data' }],
]);

/**
 * The entries of a delta's `reasoning_details` (absent and `null` are none). Anything but an array
 * of objects with a string `type`, or a field of the wrong type, is the adapter's INVALID_EVENT error.
 */
export function readReasoningDetails(delta: Fields, where: string, readers: FieldReaders): readonly ReasoningDetail[] {
  // Nearly every delta has none: no array is made for it.
  if (delta.reasoning_details === undefined || delta.reasoning_details === null) return noDetails;
  const { invalid, object, string: text } = readers;
  const entries = readers.list(delta, 'reasoning_details', where, `an array of reasoning blocks such as ${detailExample} (OpenRouter's format)`);
  return entries.map((entry, i) => {
    const path = `${where}.reasoning_details[${i}]`;
    const fields = object(entry, path, "{ type: 'reasoning.text', text: '…' }");
    if (typeof fields.type !== 'string') throw invalid(`${path} has 'type: ${describeValue(fields.type)}', but a reasoning block's type must be a string such as 'reasoning.text' or 'reasoning.encrypted'.`);
    const read = fieldsOf.get(fields.type) ?? {};
    const detail: ReasoningDetail = { type: fields.type };
    if (read.text !== undefined) detail.text = text(fields, read.text, path);
    if (read.encrypted !== undefined) detail.encrypted = nonEmpty(text(fields, read.encrypted, path));
    detail.id = nonEmpty(text(fields, 'id', path));
    detail.format = nonEmpty(text(fields, 'format', path));
    return detail;
  });
}

const noDetails: readonly ReasoningDetail[] = Object.freeze([]);

/** Whether the entry is of a type this reader knows. */
export function isKnownDetail(detail: ReasoningDetail): boolean {
  return fieldsOf.has(detail.type);
}
