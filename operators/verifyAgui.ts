import type { Event, Message } from '@ag-ui/core';
import type { OperatorFunction } from 'rxjs';
import { warnDiagnostic } from '../lib/protocol/diagnostics.js';
import { AguiRxError, describeValue } from '../lib/protocol/errors.js';
import { createOperator } from '../lib/protocol/createOperator.js';
import { createAguiVerifier, type AguiViolation } from '../lib/tracking/verifier.js';

/** Options of {@link verifyAgui}. */
export interface VerifyAguiOptions {
  /**
   * `'error'` (the default): the first violation errors the stream with `AguiRxError`
   * `AGUI_VIOLATION`. `'report'`: every violation goes to `onViolation` and the events pass unchanged.
   */
  mode?: 'error' | 'report' | undefined;
  /**
   * Receives each violation in `'report'` mode, and each warning in either mode (unless `strict`
   * makes it an error). Default: one `console.warn` line each.
   */
  onViolation?: ((violation: AguiViolation) => void) | undefined;
  /**
   * Whether warnings (severity `'warning'`: what the AG-UI specification tolerates, such as an
   * unknown event type, and our own stricter checks, such as a run cut off) count as violations:
   * in `'error'` mode the first one errors the stream. Default: false, warnings are only reported.
   */
  strict?: boolean | undefined;
  /**
   * The conversation before the run (RunAgentInput `messages`; `[]` for none). Given, the
   * `id-collision` rule is on: a run that starts a message or tool call under one of its ids, or
   * under the id of a message of another kind, breaks it. Default: absent, the rule off (the client
   * accepts such streams and corrupts its messages with them).
   */
  messages?: readonly Message[] | undefined;
}

/**
 * One line for a violation: `#<index> <TYPE>: <message> [<rule>]`, `[<rule>, warning]` for a
 * warning. An event that is not an object with a string `type` shows as `(not an event)`; what the
 * end of the stream finds as `(end of stream)`.
 */
export function formatAguiViolation(violation: Omit<AguiViolation, 'severity'> & Partial<Pick<AguiViolation, 'severity'>>, atEnd = false): string {
  const type = violation.type ?? (atEnd ? '(end of stream)' : '(not an event)');
  return `#${violation.index} ${type}: ${violation.message} [${violation.rule}${violation.severity === 'warning' ? ', warning' : ''}]`;
}

/** The default `onViolation`: a `console.warn` line, as for every diagnostic. */
const warnViolation = (violation: AguiViolation, atEnd: boolean) => warnDiagnostic({ message: formatAguiViolation(violation, atEnd), event: violation });

/**
 * Checks an AG-UI event stream against the protocol as it passes, with {@link createAguiVerifier}:
 * the schema of each event and the sequence rules `@ag-ui/client`'s `verifyEvents` enforces, in
 * one pass with no per-token schema parse, so it can stay on in production, on the server side,
 * where the official verifier only runs in the client.
 *
 * ```text
 * source:  --S--c--E--F--|          S = RUN_STARTED, c = TEXT_MESSAGE_CONTENT, E = ..._END, F = RUN_FINISHED
 * error:   --S--#                   (default) #1 content-without-start: errors with AGUI_VIOLATION
 * report:  --S--c--E--F--|          onViolation(#1 content-without-start), onViolation(#2 end-without-start)
 * ```
 *
 * Rules:
 * 1. Each event is checked with the event's index (from 0, per subscription) against the rules
 *    of {@link createAguiVerifier}; each violation names that index and the rule broken.
 * 2. `mode: 'error'` (default): the first violation errors the stream with `AguiRxError`
 *    `AGUI_VIOLATION`, message `#<index> <TYPE>: <message> [<rule>]`; the offending event is not
 *    passed on and the source is unsubscribed. It checks whole runs, so it goes after
 *    `mapRunLifecycle` (or `toAgui`); an operator after it that turns errors into RUN_ERROR (a
 *    lifecycle) sends the violation to the client as RUN_ERROR, otherwise it reaches the subscriber.
 * 3. `mode: 'report'`: every violation goes to `onViolation` (default: a `console.warn` line in
 *    the same format) and every event passes unchanged.
 * 4. On completion, what the end of the stream leaves wrong (`no-terminal-event`, `open-at-end`,
 *    `no-run`) is handled the same way: an error instead of completion, or reported before it.
 * 5. Each finding has a severity (see `createAguiVerifier`). Warnings, what the AG-UI specification
 *    tolerates (an unknown event type, an unknown outcome, content part or patch op: a consumer
 *    drops or strips them) and our own stricter checks (a value that is not an event, a stream
 *    that stops mid-run, an empty stream), go to `onViolation` and the events pass, in both modes;
 *    with `strict: true` they are handled as violations.
 * 6. A source error passes through unchanged; each subscription gets its own verifier.
 *
 * ## Example
 *
 * ```ts
 * from<Event[]>([
 *   { type: EventType.RUN_STARTED, threadId: 't1', runId: 'r1' },
 *   { type: EventType.TEXT_MESSAGE_CONTENT, messageId: 'm1', delta: 'Hi' },
 *   { type: EventType.RUN_FINISHED, threadId: 't1', runId: 'r1' },
 * ]).pipe(verifyAgui()).subscribe({ next: (e) => console.log(e.type), error: (error) => console.log(error.code, error.message) });
 * // results: RUN_STARTED, AGUI_VIOLATION #1 TEXT_MESSAGE_CONTENT: TEXT_MESSAGE_CONTENT for text message 'm1', which is not open. Send TEXT_MESSAGE_START first, and nothing for the text message after its TEXT_MESSAGE_END. [content-without-start]
 * ```
 *
 * @param options Whether a violation ends the stream or is only reported, where reports go, whether warnings count (`strict`), and the history (`messages`).
 * @return A function that returns an Observable of the same events, checked against the AG-UI protocol.
 * @throws {AguiRxError} `INVALID_OPTIONS` at call time for an unknown `mode` or an `onViolation` that is not a function.
 */
export function verifyAgui(options: VerifyAguiOptions = {}): OperatorFunction<Event, Event> {
  const mode = options.mode ?? 'error';
  if (mode !== 'error' && mode !== 'report') {
    throw new AguiRxError('INVALID_OPTIONS', `verifyAgui 'mode' must be 'error' or 'report' (got ${describeValue(mode)}). Use 'report' to only report violations.`);
  }
  const onViolation = options.onViolation;
  const strict = options.strict === true;
  if (onViolation !== undefined && typeof onViolation !== 'function') {
    throw new AguiRxError('INVALID_OPTIONS', `verifyAgui 'onViolation' must be a function (got ${describeValue(onViolation)}). It receives each violation in 'report' mode.`);
  }
  return createOperator<Event, Event>((subscriber) => {
    const verifier = createAguiVerifier({ messages: options.messages });
    let index = 0;

    /** Handles what was found; throws (routed to the error path by createOperator) in 'error' mode. */
    const handle = (violations: readonly AguiViolation[], atEnd: boolean) => {
      if (violations.length === 0) return;
      if (mode === 'error') {
        const fatal = violations.find((violation) => strict || violation.severity === 'violation');
        if (fatal !== undefined) throw new AguiRxError('AGUI_VIOLATION', formatAguiViolation(fatal, atEnd));
      }
      for (const violation of violations) {
        if (onViolation !== undefined) onViolation(violation);
        else warnViolation(violation, atEnd);
      }
    };

    return {
      next(event) {
        const violations = verifier.verify(event, index++);
        if (violations.length > 0) handle(violations, false);
        subscriber.next(event);
      },
      complete() {
        handle(verifier.end(), true);
        subscriber.complete();
      },
    };
  });
}
