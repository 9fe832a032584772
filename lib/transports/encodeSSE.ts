import type { Event } from '@ag-ui/core';
import { EventEncoder } from '@ag-ui/encoder';
import type { OperatorFunction } from 'rxjs';
import { createOperator } from '../protocol/createOperator.js';
import { entityKinds } from '../protocol/table.js';

/** Options of {@link encodeSSE}. */
export interface EncodeSSEOptions {
  /** Put an `id:` line on each frame: the event's sequence number in the run, from 1. Default: false. */
  ids?: boolean | undefined;
}

/**
 * Frames each AG-UI event as one server-sent event, `data: <json>\n\n` (LF only), the AG-UI HTTP binding.
 *
 * The text is what `@ag-ui/encoder`'s `EventEncoder` writes (for a flat event without `null`
 * fields, plain `JSON.stringify`, which gives the same text faster); JSON text never holds a raw
 * line break, so no payload can split a frame or inject a field.
 *
 * ```text
 * source:  --a-----b---|         a, b = AG-UI events
 * output:  --A-----B---|         A = 'data: {"type":…}\n\n' (with ids: 'id: 1\ndata: …\n\n')
 * ```
 *
 * ## Example
 *
 * ```ts
 * of<Event[]>({ type: EventType.RUN_STARTED, threadId: 't1', runId: 'r1' })
 *   .pipe(encodeSSE({ ids: true }))
 *   .subscribe((frame) => console.log(JSON.stringify(frame)));
 * // results: "id: 1\ndata: {\"type\":\"RUN_STARTED\",\"threadId\":\"t1\",\"runId\":\"r1\"}\n\n"
 * ```
 *
 * @param options Whether to number the frames (`id:`, WHATWG HTML "server-sent events").
 * @return A function that returns an Observable of SSE frame strings, one per event, in the same frame.
 * @throws Nothing synchronously; an event `JSON.stringify` cannot encode (a BigInt in `rawEvent`) is an error notification.
 */
export function encodeSSE(options: EncodeSSEOptions = {}): OperatorFunction<Event, string> {
  const ids = options.ids ?? false;
  return createOperator<Event, string>((subscriber) => {
    const encoder = new EventEncoder();
    // The event's sequence number in this run (this subscription).
    let sequence = 0;
    return {
      next(event) {
        const frame = sseFrame(event, encoder);
        subscriber.next(ids ? `id: ${++sequence}\n${frame}` : frame);
      },
    };
  });
}

/**
 * One event as an SSE frame, `data: <json>\n\n`: the text `encoder.encodeSSE(event)` gives, through
 * plain `JSON.stringify` when that gives the same text (a flat event without `null` fields, see
 * `isFlatWithoutNulls`, or a small event of plain objects with no `null` anywhere, see
 * `walkWithoutNull`), which is most events and several times cheaper. Shared by {@link encodeSSE}
 * and the transports' framing.
 *
 * @throws What `JSON.stringify` throws (a BigInt, a cycle).
 */
export function sseFrame(event: Event, encoder: EventEncoder): string {
  return isFlatWithoutNulls(event) || walkWithoutNull(event, WALK_BUDGET) >= 0 ? `data: ${JSON.stringify(event)}\n\n` : encoder.encodeSSE(event);
}

// Events whose only optional fields (as @ag-ui/core's `omitOptionalNulls` knows them) are the base
// ones, with no nested shapes: the per-token events and the END events of what they stream.
const flatTypes: ReadonlySet<unknown> = new Set(entityKinds.flatMap((kind) => (kind.content === undefined ? [] : [kind.content, ...kind.end])));

/**
 * Whether `EventEncoder.encodeSSE` would send `event` as plain `JSON.stringify`: a flat event with
 * no optional field set to `null` (the encoder drops those). Most events are, and skipping the
 * encoder's walk over the event's shape makes framing cost little more than the stringify.
 */
function isFlatWithoutNulls(event: Event): boolean {
  if (!flatTypes.has(event.type)) return false;
  const { timestamp, rawEvent, metadata, subagentRunId } = event as { timestamp?: unknown; rawEvent?: unknown; metadata?: unknown; subagentRunId?: unknown };
  return timestamp !== null && rawEvent !== null && metadata !== null && subagentRunId !== null;
}

// How many objects and values `walkWithoutNull` looks at before it leaves an event to the encoder:
// a run's RUN_STARTED (its input echoed), RUN_FINISHED or a message's START are walked whole; a large
// snapshot is left to the encoder after a few hundred values, so the walk never costs much.
const WALK_BUDGET = 256;

/**
 * What is left of `budget` after walking `value` (each value counts one), or -1 when it holds a
 * `null` anywhere, an object that is neither an array nor a plain object (a class instance, a
 * `Date`: the encoder copies objects, which would lose their prototype), or more than `budget`
 * values. The encoder (`omitOptionalNulls`) only ever drops `null`s: with none in plain objects and
 * arrays, its text is `JSON.stringify`'s.
 */
function walkWithoutNull(value: unknown, budget: number): number {
  if (value === null || --budget < 0) return -1;
  if (typeof value !== 'object') return budget;
  if (Array.isArray(value)) {
    for (let index = 0; index < value.length && budget >= 0; index++) budget = walkWithoutNull(value[index], budget);
    return budget;
  }
  const prototype = Object.getPrototypeOf(value) as unknown;
  if (prototype !== Object.prototype && prototype !== null) return -1;
  for (const key in value) {
    budget = walkWithoutNull((value as Record<string, unknown>)[key], budget);
    if (budget < 0) return -1;
  }
  return budget;
}
