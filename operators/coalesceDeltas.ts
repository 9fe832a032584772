import type { Event } from '@ag-ui/core';
import { asyncScheduler, type OperatorFunction, type SchedulerLike, type Subscription } from 'rxjs';
import { eventTypeOf } from '../lib/protocol/agentEvent.js';
import { AguiRxError, describeValue } from '../lib/protocol/errors.js';
import { createOperator } from '../lib/protocol/createOperator.js';
import { tokenIdFieldOf } from '../lib/protocol/table.js';

/** Options of {@link coalesceDeltas}. */
export interface CoalesceDeltasOptions {
  /** How long (ms) a buffer may wait, counted from its first delta, before it is sent. */
  intervalMs: number;
  /** Sends the buffer as soon as it holds this many characters (`string.length`). Default: no limit. */
  maxChars?: number | undefined;
  /** Runs the window timer. Default: `asyncScheduler` (a TestScheduler in specs). */
  scheduler?: SchedulerLike | undefined;
}

/**
 * Merges consecutive text, tool-call argument and reasoning deltas of one id into fewer, larger
 * events, to cut the frames a slow client has to handle.
 *
 * Place it after `toAgui`: it sees the wire events, holds deltas for at most `intervalMs`, and lets
 * everything else through at once, after what it holds.
 *
 * ```text
 * source:  --a-b-c----d--E---|    a…d = TEXT_MESSAGE_CONTENT of one message, E = TEXT_MESSAGE_END
 * output:  -------A------(dE)|    intervalMs 5: A = a+b+c, when the window a opened ends; E sends d first
 * ```
 *
 * Rules:
 * 1. A per-token event (TEXT_MESSAGE_CONTENT, TOOL_CALL_ARGS, REASONING_MESSAGE_CONTENT) is held;
 *    the deltas that follow it with the same type, id (`messageId` / `toolCallId`) and
 *    `subagentRunId` are appended to it.
 * 2. What is held is sent as one event, the first delta's fields (timestamp, metadata …) with the
 *    concatenated `delta`: when `intervalMs` have passed since its first delta (a timer on
 *    `scheduler`), as soon as it holds `maxChars` characters or more, and just before any other
 *    event, which then passes at once (a delta of another id or type, a lifecycle or structural
 *    event, CUSTOM, RAW).
 * 3. A single delta is sent as it came (the same object); nothing is split, so a delta longer than
 *    `maxChars` passes whole.
 * 4. Completion and error send what is held first; unsubscription cancels the timer.
 *
 * ## Example
 *
 * ```ts
 * of<Event[]>(
 *   { type: EventType.TEXT_MESSAGE_START, messageId: 'm1', role: 'assistant' },
 *   { type: EventType.TEXT_MESSAGE_CONTENT, messageId: 'm1', delta: 'Hel' },
 *   { type: EventType.TEXT_MESSAGE_CONTENT, messageId: 'm1', delta: 'lo' },
 *   { type: EventType.TEXT_MESSAGE_CONTENT, messageId: 'm1', delta: '!' },
 *   { type: EventType.TEXT_MESSAGE_END, messageId: 'm1' },
 * )
 *   .pipe(coalesceDeltas({ intervalMs: 50 }))
 *   .subscribe((event) => console.log(event.type === EventType.TEXT_MESSAGE_CONTENT ? event.delta : event.type));
 * // results: TEXT_MESSAGE_START, Hello!, TEXT_MESSAGE_END
 * ```
 *
 * @param options The window (`intervalMs`), the size limit (`maxChars`) and the timer's `scheduler`.
 * @return A function that returns an Observable of the same events, with consecutive deltas of one
 * id merged.
 * @throws {AguiRxError} `INVALID_OPTIONS` at call time when `intervalMs` is not a finite number
 * ≥ 0, or `maxChars` not a whole number ≥ 1 (or `Infinity`).
 */
export function coalesceDeltas(options: CoalesceDeltasOptions): OperatorFunction<Event, Event> {
  const { intervalMs, maxChars = Infinity, scheduler = asyncScheduler } = options ?? ({} as CoalesceDeltasOptions);
  if (typeof intervalMs !== 'number' || !Number.isFinite(intervalMs) || intervalMs < 0) {
    throw new AguiRxError('INVALID_OPTIONS', `coalesceDeltas 'intervalMs' must be a finite number of milliseconds ≥ 0 (got ${describeValue(intervalMs)}). Pass how long a delta may wait, e.g. { intervalMs: 50 }.`);
  }
  if (typeof maxChars !== 'number' || !(maxChars === Infinity || (Number.isInteger(maxChars) && maxChars >= 1))) {
    throw new AguiRxError('INVALID_OPTIONS', `coalesceDeltas 'maxChars' must be a whole number ≥ 1 (got ${describeValue(maxChars)}). Omit it for no size limit.`);
  }
  return createOperator<Event, Event>((subscriber) => {
    // The deltas held, all of one type, id and lane; undefined when nothing is held.
    let held: { first: Event; type: string; id: string; lane: unknown; parts: string[]; length: number } | undefined;
    // The window's end, while something is held and the window is open.
    let timer: Subscription | undefined;

    const flush = () => {
      timer?.unsubscribe();
      timer = undefined;
      if (held === undefined) return;
      const { first, parts } = held;
      // Cleared before sending: a subscriber that feeds the source synchronously must not see it twice.
      held = undefined;
      subscriber.next(parts.length === 1 ? first : ({ ...first, delta: parts.join('') } as Event));
    };

    return {
      next(event) {
        const type = eventTypeOf(event);
        const record = event as unknown as Record<string, unknown>;
        // The delta events that may be merged are the per-token ones; their id is read by name.
        const idField = tokenIdFieldOf(type);
        const id = idField === undefined ? undefined : idField === 'toolCallId' ? record.toolCallId : record.messageId;
        const delta = record.delta;
        if (typeof id !== 'string' || typeof delta !== 'string') {
          flush();
          return subscriber.next(event);
        }
        const lane = record.subagentRunId;
        if (held === undefined || held.type !== type || held.id !== id || held.lane !== lane) {
          flush();
          // Sending may have ended the output (a `take` downstream): then hold nothing, start no timer.
          if (subscriber.closed) return;
          held = { first: event, type, id, lane, parts: [], length: 0 };
        }
        held.parts.push(delta);
        held.length += delta.length;
        if (held.length >= maxChars) return flush();
        timer ??= scheduler.schedule(flush, intervalMs);
      },
      flush,
      teardown() {
        timer?.unsubscribe();
        timer = undefined;
        held = undefined;
      },
    };
  });
}
