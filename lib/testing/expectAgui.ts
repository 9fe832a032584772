import type { Event } from '@ag-ui/core';
import { from, isObservable, type Observable, type Subscription } from 'rxjs';
import { AguiRxError, describeValue } from '../protocol/errors.js';
import { createAguiVerifier, type AguiViolation } from '../tracking/verifier.js';
import { formatAguiViolation } from '../../operators/verifyAgui.js';

/** What {@link expectAgui} and `toBeWellFormedAgui` accept: an Observable of events, or the events themselves (an array or any iterable). */
export type AguiEventsInput = Observable<unknown> | Iterable<unknown> | AsyncIterable<unknown>;

/** A stream checked by {@link checkAguiStream}: what it emitted and what it breaks. */
export interface AguiStreamCheck {
  /** Every value the stream emitted, in order. */
  events: unknown[];
  /** Every violation found, in stream order; `[]` when the stream is well-formed. */
  violations: AguiViolation[];
  /** Each violation as one line: `#<index> <TYPE>: <message> [<rule>]` (see `formatAguiViolation`). */
  lines: string[];
}

/** Thrown (as a rejection) by `expectAgui(…).toBeWellFormed()`: the message lists every violation; `violations` has them as data. */
export class AguiStreamError extends AguiRxError {
  /** Every violation found, in stream order. */
  readonly violations: AguiViolation[];
  /** Every value the stream emitted before it ended. */
  readonly events: unknown[];

  constructor(check: AguiStreamCheck) {
    super('AGUI_VIOLATION', describeCheck(check));
    this.name = 'AguiStreamError';
    this.violations = check.violations;
    this.events = check.events;
  }
}

/** The rule name of a stream that errored instead of completing. */
const SOURCE_ERROR = 'source-error';

/** Whether `value` is something {@link checkAguiStream} can read. */
export function isAguiEventsInput(value: unknown): value is AguiEventsInput {
  if (isObservable(value)) return true;
  if (typeof value !== 'object' || value === null) return false;
  return typeof (value as Iterable<unknown>)[Symbol.iterator] === 'function' || typeof (value as AsyncIterable<unknown>)[Symbol.asyncIterator] === 'function';
}

/** How many violations a failure message lists; the error's `violations` holds them all. */
const listedViolations = 50;

/** The message of a failed check: a header line, then one indented line per violation (the first 50). */
export function describeCheck(check: AguiStreamCheck): string {
  const count = check.violations.length;
  const events = `${check.events.length} event${check.events.length === 1 ? '' : 's'}`;
  const listed = check.lines.slice(0, listedViolations).map((line) => `  ${line}`);
  if (check.lines.length > listedViolations) listed.push(`  … and ${check.lines.length - listedViolations} more (all of them are on the error's \`violations\`)`);
  return `Expected a well-formed AG-UI stream, but found ${count} violation${count === 1 ? '' : 's'} in ${events}:\n${listed.join('\n')}`;
}

/**
 * Subscribes to `events$`, checks every event with {@link createAguiVerifier}, and resolves when
 * the stream ends with what it emitted and every violation found (never rejects for a bad stream).
 *
 * A stream that errors instead of completing gets a `source-error` violation at the index after its
 * last event (an AG-UI run reports failure with RUN_ERROR, then completes).
 *
 * @param events$ An Observable of AG-UI events, or the events (an array or any iterable).
 * @return A promise of the {@link AguiStreamCheck}; it never settles if `events$` never ends (an endless synchronous source blocks the thread: bound it with `take`).
 * @throws {AguiRxError} `INVALID_ARGUMENT` (as a rejection) when `events$` is neither an Observable nor iterable.
 */
export function checkAguiStream(events$: AguiEventsInput): Promise<AguiStreamCheck> {
  return new Promise((resolve, reject) => {
    if (!isAguiEventsInput(events$)) {
      reject(new AguiRxError('INVALID_ARGUMENT', `Expected an Observable of AG-UI events or an array of them, got ${describeValue(events$)}.`));
      return;
    }
    const verifier = createAguiVerifier();
    const events: unknown[] = [];
    const violations: AguiViolation[] = [];
    const lines: string[] = [];
    const add = (found: readonly AguiViolation[], atEnd: boolean) => {
      for (const violation of found) {
        violations.push(violation);
        lines.push(formatAguiViolation(violation, atEnd));
      }
    };
    // Set when the checker itself throws (a bug in it, not in the stream): the rest is ignored.
    let broken = false;
    let subscription: Subscription | undefined = undefined;
    subscription = from(events$ as Observable<unknown>).subscribe({
      next: (event) => {
        if (broken) return;
        try {
          add(verifier.verify(event, events.length), false);
        } catch (error) {
          broken = true;
          subscription?.unsubscribe();
          reject(error);
          return;
        }
        events.push(event);
      },
      error: (error: unknown) => {
        const message = error instanceof Error ? `${error.name}: ${error.message}` : describeValue(error);
        add(
          [
            {
              index: events.length,
              rule: SOURCE_ERROR,
              severity: 'violation',
              message: `The stream errored (${message}) instead of completing. An AG-UI run reports a failure with RUN_ERROR and then completes: end the pipeline with toAgui or mapRunLifecycle, which turn errors into RUN_ERROR.`,
            },
          ],
          true,
        );
        resolve({ events, violations, lines });
      },
      complete: () => {
        if (broken) return;
        add(verifier.end(), true);
        resolve({ events, violations, lines });
      },
    });
    if (broken) subscription.unsubscribe();
  });
}

/** What {@link expectAgui} returns. */
export interface AguiExpectation {
  /**
   * Resolves with the stream's events when it is a well-formed AG-UI stream; rejects with an
   * {@link AguiStreamError} listing every violation (index, type, message, rule) otherwise.
   */
  toBeWellFormed(): Promise<Event[]>;
}

/**
 * Asserts, without any test framework, that a stream is well-formed AG-UI: every event valid
 * against the `@ag-ui/core` schema and the sequence rules `@ag-ui/client`'s `verifyEvents`
 * enforces, checked by {@link createAguiVerifier} (the checker `verifyAgui` uses).
 *
 * Unlike `verifyAgui`, which stops at the first violation, `toBeWellFormed()` reads the whole
 * stream and lists every violation, one line each: `#<index> <TYPE>: <message> [<rule>]`.
 *
 * Rules:
 * 1. Resolves with the events (typed as `Event[]`) when there is no violation.
 * 2. Rejects with {@link AguiStreamError} (`code: 'AGUI_VIOLATION'`, `violations`, `events`)
 *    otherwise; what the end of the stream finds (`no-terminal-event`, `open-at-end`, `no-run`)
 *    shows as `(end of stream)`.
 * 3. A stream that errors instead of completing is a `source-error` violation: an AG-UI run
 *    reports failure with RUN_ERROR, then completes.
 * 4. Stricter than the client, as `verifyAgui` is: an empty stream, an unknown event type or a
 *    stream that stops mid-run is a violation.
 * 5. Never settles if the stream never ends (the test's timeout then fails it).
 *
 * ## Example
 *
 * ```ts
 * const events = await expectAgui(of<AgentEvent[]>({ type: 'TEXT_MESSAGE_CHUNK', delta: 'Hi' }).pipe(toAgui({ threadId: 't1', runId: 'r1' }))).toBeWellFormed();
 * console.log(events.length);
 * await expectAgui([{ type: 'RUN_STARTED', threadId: 't1', runId: 'r1' }, { type: 'TEXT_MESSAGE_CONTENT', messageId: 'm1', delta: 'Hi' }])
 *   .toBeWellFormed()
 *   .catch((error: AguiStreamError) => console.log(error.violations.map((violation) => `#${violation.index} ${violation.rule}`)));
 * // results: 5, [ '#1 content-without-start', '#2 no-terminal-event' ]
 * ```
 *
 * @param events$ An Observable of AG-UI events, or the events (an array or any iterable).
 * @return An {@link AguiExpectation}.
 */
export function expectAgui(events$: AguiEventsInput): AguiExpectation {
  return {
    async toBeWellFormed() {
      const check = await checkAguiStream(events$);
      if (check.violations.length > 0) throw new AguiStreamError(check);
      return check.events as Event[];
    },
  };
}
