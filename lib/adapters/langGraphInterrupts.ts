import type { Interrupt } from '@ag-ui/core';
import { describeValue } from '../protocol/errors.js';
import type { IdGenerator } from '../protocol/generateId.js';
import { isObject, nonEmpty, type FieldReaders } from './readers.js';

/**
 * The interrupts of a paused LangGraph graph, as `fromLangGraphStream` reads them: a node that
 * calls `interrupt(value)` stops the graph, and the stream's `values` and `updates` items carry
 * `__interrupt__: [{ id, value }]` (LangGraph 1.0 adds them to the whole state; earlier versions
 * send them alone). Not part of the public API.
 */

/** The key LangGraph puts a paused graph's interrupts under, in a `values` state and an `updates` item. */
export const INTERRUPT_KEY = '__interrupt__';

/** The interrupts read so far, each once, keyed by LangGraph's id (else by its JSON: `values` and `updates` repeat each one). */
export type InterruptsRead = Map<string, Interrupt>;

/**
 * Adds the interrupts of one `__interrupt__` list to `into` (made when `into` is undefined) as
 * AG-UI Interrupts: `{ id, reason: 'input_required', message, metadata: { value } }`, `id` being
 * LangGraph's (a number as its text; minted when it has none), `message` the value when it is text, `metadata.value`
 * what the node passed to `interrupt()`, for the client to render and answer.
 *
 * @throws {AguiRxError} `INVALID_EVENT` when the list is not an array of objects.
 */
export function readInterrupts(list: unknown, where: string, into: InterruptsRead | undefined, mint: IdGenerator, { invalid }: FieldReaders): InterruptsRead {
  if (!Array.isArray(list)) throw invalid(`${where}.${INTERRUPT_KEY} is ${describeValue(list)}, but it must be the list of the graph's interrupts ([{ id, value }]).`);
  const read = into ?? new Map<string, Interrupt>();
  list.forEach((entry: unknown, index) => {
    if (!isObject(entry)) throw invalid(`${where}.${INTERRUPT_KEY}[${index}] is ${describeValue(entry)}, but it must be an interrupt ({ id, value }).`);
    // A number is kept as its text, so that a resume can still name it.
    const id = nonEmpty(entry.id) ?? (typeof entry.id === 'number' && Number.isFinite(entry.id) ? String(entry.id) : undefined);
    const key = id ?? keyOf(entry);
    if (key !== undefined && read.has(key)) return;
    const { value } = entry;
    read.set(key ?? mint(), {
      id: id ?? mint(),
      reason: 'input_required',
      ...(typeof value === 'string' && value !== '' ? { message: value } : {}),
      ...(value === undefined ? {} : { metadata: { value } }),
    });
  });
  return read;
}

/** An interrupt's JSON, to know it again without an id; `undefined` when it has none (a BigInt, a cycle): it is then kept as often as it comes. */
function keyOf(entry: Record<string, unknown>): string | undefined {
  try {
    return `json:${JSON.stringify(entry)}`;
  } catch {
    return undefined;
  }
}
