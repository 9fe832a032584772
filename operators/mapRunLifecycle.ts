import { EventType, type Event, type RunAgentInput, type RunErrorEvent, type RunFinishedEvent } from '@ag-ui/core';
import type { OperatorFunction } from 'rxjs';
import { ToolkitEventType, eventTypeOf, type AgentEvent } from '../lib/protocol/agentEvent.js';
import { createOperator, type OperatorContext, type OperatorHandlers, type OperatorSink } from '../lib/protocol/createOperator.js';
import { recordType } from '../lib/protocol/recordType.js';
import type { CancelSignal } from '../lib/protocol/cancelSignal.js';
import { warnDiagnostic, type DiagnosticHandler } from '../lib/protocol/diagnostics.js';
import { runFailures, type ErrorMessagePolicy, type RunErrorHandler, type RunFailure } from '../lib/protocol/runErrors.js';
import { isTokenEventType } from '../lib/protocol/table.js';
import { stripWithDiagnostic } from '../lib/protocol/unrecognised.js';
import { assertWireEvent, isPlainTextContent } from '../lib/protocol/validate.js';
import { noMessage, runErrorWithStack, runErrorWithoutStack, runIdentityOf, trackRunLifecycle, type RunLifecycle } from '../lib/tracking/runLifecycle.js';

/** Options of {@link mapRunLifecycle}. */
export interface MapRunLifecycleOptions {
  /** The thread this run belongs to; sent on RUN_STARTED and RUN_FINISHED whatever upstream says. */
  threadId: string;
  /** This run's id; sent on RUN_STARTED and RUN_FINISHED whatever upstream says. */
  runId: string;
  /** The run this one continues, if any (RUN_STARTED `parentRunId`). */
  parentRunId?: string | undefined;
  /** The run's input, echoed on RUN_STARTED `input`. */
  input?: RunAgentInput | undefined;
  /** Aborting it (an `AbortSignal`, or any {@link CancelSignal}) ends the run with RUN_FINISHED `cancelled` and unsubscribes upstream. */
  signal?: CancelSignal | undefined;
  /** Told about each event dropped to keep the run valid (a late RUN_STARTED, a step finished twice). Default: `console.warn`. */
  onDiagnostic?: DiagnosticHandler | undefined;
  /**
   * Also send the failing error's stack trace, as RUN_ERROR `metadata: { stack }`. Default: false:
   * stacks name files and lines of the server, which a client should not see in production.
   */
  exposeErrorStack?: boolean | undefined;
  /**
   * Told once when the run ends in RUN_ERROR (not cancelled), with the error and `{ input, threadId,
   * runId, reference }` (the id a redacted message quotes). Default: a `console.error` line. Only
   * with it does the run keep `input` after RUN_STARTED's echo (else it holds no client history).
   */
  onError?: RunErrorHandler | undefined;
  /**
   * What RUN_ERROR `message` tells the client of an error: `'expose'` (its message), `'redact'`
   * (only the toolkit's own errors, `AguiRxError`, and errors marked `expose: true` keep their
   * message; any other gets a generic text quoting `reference`, and `code: "INTERNAL_ERROR"`), or
   * `(error, reference) => message`. Default: `'redact'` when `NODE_ENV` is `production`, else
   * `'expose'`. An upstream RUN_ERROR event is the agent's own word to the client: sent as it is.
   */
  errorMessages?: ErrorMessagePolicy | undefined;
}

/**
 * Wraps an agent's events in one AG-UI run: RUN_STARTED first, then exactly one terminal event.
 *
 * The run ends with RUN_FINISHED when upstream completes, with RUN_ERROR when it errors, and
 * with RUN_FINISHED `cancelled` when `signal` aborts; whatever is still open is closed first.
 *
 * ```text
 * source:  ---a---b---|
 * output:  S--a---b---(F|)        S = RUN_STARTED, F = RUN_FINISHED
 *
 * source:  ---a---#
 * output:  S--a---(E|)            E = RUN_ERROR { message, code }
 * ```
 *
 * Rules:
 * 1. RUN_STARTED (`threadId`, `runId`, `parentRunId`, `protocolVersion: "1.0"`, `input`) is sent on
 *    subscribe, or merged with upstream's own RUN_STARTED when that is upstream's first, synchronous
 *    event; a later upstream RUN_STARTED is dropped and reported through `onDiagnostic`.
 * 2. An upstream RUN_FINISHED or RUN_ERROR ends the run: it is sent once, merged (its `result`,
 *    `outcome`, `usage` kept; `threadId`/`runId` are this run's), and upstream is unsubscribed.
 * 3. Text and reasoning messages, reasoning spans, tool calls, steps and subagents still open are
 *    closed before the terminal event (the AG-UI rule that all are closed before RUN_FINISHED).
 * 4. Tool calls started without a TOOL_CALL_RESULT are listed in
 *    `outcome: { type: "success", pendingToolCallIds }`.
 * 5. TOKEN_USAGE events are consumed and summed per (provider, model) into the terminal `usage`
 *    (left out, with a diagnostic, if a sum passes `Number.MAX_SAFE_INTEGER` tokens).
 * 6. A STEP_FINISHED or SUBAGENT_FINISHED/ERROR for nothing running, and a second STEP_STARTED or
 *    SUBAGENT_STARTED for one running, are dropped and reported; a subagent id used again after
 *    it ended, or a `parentSubagentRunId` never started, is an `INVALID_EVENT` error.
 * 7. An upstream error, or an event that is not valid AG-UI, becomes RUN_ERROR with the error's
 *    `message` and `code` (no stack trace unless `exposeErrorStack`); then the output completes.
 *    Under `errorMessages: 'redact'` (the default in production) an error that is not the
 *    toolkit's own nor marked `expose: true` is sent as a generic message quoting a reference
 *    id, `code: "INTERNAL_ERROR"`. Every run that ends in RUN_ERROR is reported once to
 *    `onError` (default: a `console.error` line) with that reference; a cancelled run is not.
 * 8. Nothing is sent after the terminal event.
 *
 * ## Example
 *
 * ```ts
 * of<AgentEvent[]>({ type: EventType.TEXT_MESSAGE_CHUNK, messageId: 'm1', delta: 'Hi' })
 *   .pipe(openMessageStartContentEnd(), mapRunLifecycle({ threadId: 't1', runId: 'r1' }))
 *   .subscribe((event) => console.log(event.type));
 * // results: RUN_STARTED, TEXT_MESSAGE_START, TEXT_MESSAGE_CONTENT, TEXT_MESSAGE_END, RUN_FINISHED
 * ```
 *
 * @param options The run's ids, its input to echo, and an abort signal.
 * @return A function that returns an Observable of AG-UI events forming exactly one run.
 * @throws {AguiRxError} `INVALID_OPTIONS` at call time when `threadId` or `runId` is not a non-empty string,
 * `parentRunId` is not a string, or `input` is not a valid `RunAgentInput`.
 */
export function mapRunLifecycle(options: MapRunLifecycleOptions): OperatorFunction<AgentEvent, Event> {
  const signal = options?.signal;
  const diagnose = options?.onDiagnostic ?? warnDiagnostic;
  // Checked now: a bad id or input would make every RUN_STARTED invalid, with no run to report it in.
  const run = runIdentityOf(options);
  // Checked now: an unknown errorMessages throws here.
  const failures = runFailures(options, run.exposeErrorStack ? runErrorWithStack : runErrorWithoutStack);
  return createOperator<AgentEvent, Event>((subscriber, context) => {
    // One record per run, with methods every run shares: a few fields instead of a closure per step.
    const stage = new RunStageRecord();
    stage.subscriber = subscriber;
    stage.context = context;
    stage.lifecycle = trackRunLifecycle(run);
    stage.diagnose = diagnose;
    stage.failures = failures;
    stage.signal = signal;
    RunStageRecord.shaped(stage);
    if (signal?.aborted) stage.handleEvent(); // cancelled before upstream is ever subscribed
    else signal?.addEventListener('abort', stage);
    return stage;
  }, { readsAgentEvents: diagnose });
}

/** One subscription of {@link mapRunLifecycle}: its handlers, and the `abort` listener of its signal. */
interface RunStage extends OperatorHandlers<AgentEvent>, Readonly<{ subscriber: OperatorSink<Event>; context: OperatorContext; diagnose: DiagnosticHandler }> {
  /** The run's state and decisions: started, ended, what is open, the usage reported. */
  readonly lifecycle: RunLifecycle;
  readonly failures: ReturnType<typeof runFailures>;
  readonly signal: CancelSignal | undefined;
  handleEvent(): void;
}

const start = (stage: RunStage, upstream?: Record<string, unknown>) => stage.subscriber.next(stage.lifecycle.start(upstream));

function end(stage: RunStage, terminal: RunFinishedEvent | RunErrorEvent): void {
  const { lifecycle, subscriber } = stage;
  if (!lifecycle.started) start(stage);
  const { closers, diagnostic } = lifecycle.end(terminal);
  for (const closer of closers) subscriber.next(closer);
  if (diagnostic !== undefined) stage.diagnose(diagnostic);
  subscriber.next(terminal);
  stage.context.unsubscribeSource();
  subscriber.complete();
}

// Reported once the RUN_ERROR went by: here, unless a lifecycle downstream (the handler's, around an agent running toAgui) claimed it.
const fail = (stage: RunStage, { terminal, settle }: RunFailure) => (end(stage, terminal), settle());

function next(this: RunStage, event: AgentEvent): void {
  const { lifecycle, subscriber, diagnose } = this;
  if (lifecycle.ended) return;
  const type = eventTypeOf(event);
  let fields = event as unknown as Record<string, unknown>;
  // The most frequent event first: a plain text content passes the checks assertWireEvent makes, inlined.
  if (lifecycle.started && isPlainTextContent(type, fields)) return subscriber.next(event as unknown as Event);
  if (!lifecycle.started) {
    // An upstream RUN_STARTED whose input has content parts AG-UI does not describe is merged without them.
    if (type === EventType.RUN_STARTED) return start(this, stripWithDiagnostic(fields, diagnose).event);
    start(this);
  }
  // The per-token events open and close nothing: checked, then sent without the bookkeeping below.
  if (isTokenEventType(type)) return subscriber.next(assertWireEvent(fields));
  // What AG-UI does not describe in a union (an outcome, a content part, a patch op) is stripped, not fatal.
  fields = stripWithDiagnostic(fields, diagnose).event;
  switch (type) {
    case EventType.RUN_FINISHED:
      return end(this, lifecycle.finished(fields));
    case EventType.RUN_ERROR:
      // The wire gets the toolkit's wording; the server's log gets why (as for `message: null`, read at the entry).
      if (fields.message === undefined || (typeof fields.message === 'string' && fields.message.trim() === '')) {
        diagnose({ message: `An upstream RUN_ERROR has no message: sent as '${noMessage}'. Say what went wrong in RUN_ERROR's message.`, event });
      }
      return fail(this, this.failures.upstream(lifecycle.upstreamError(fields), event));
    case ToolkitEventType.TOKEN_USAGE:
      return lifecycle.addUsage(fields.usage);
    default: {
      const dropped = lifecycle.admit(fields, type);
      if (dropped !== undefined) return diagnose({ message: dropped, event });
      subscriber.next(fields as unknown as Event);
    }
  }
}

// The handlers every run shares; `handleEvent` is the signal's `abort` listener: the run ends cancelled.
const runStageMethods: Omit<RunStage, 'subscriber' | 'context' | 'lifecycle' | 'diagnose' | 'failures' | 'signal'> = Object.freeze({
  next,
  complete(this: RunStage) { if (!this.lifecycle.ended) end(this, this.lifecycle.finished()); },
  error(this: RunStage, error: unknown) { if (!this.lifecycle.ended) fail(this, this.failures.thrown(error)); },
  subscribed(this: RunStage) { if (!this.lifecycle.started && !this.lifecycle.ended) start(this); },
  teardown(this: RunStage) { this.signal?.removeEventListener('abort', this); },
  handleEvent(this: RunStage) { if (!this.lifecycle.ended) end(this, this.lifecycle.finished(undefined, { type: 'cancelled' })); },
  // What `next` sends on at once and as it is: a plain text content of a started run that has not ended.
  passesAsIs(this: RunStage, event: unknown) {
    const lifecycle = this.lifecycle;
    return lifecycle.started && !lifecycle.ended && typeof event === 'object' && event !== null && isPlainTextContent((event as { type?: unknown }).type, event as Record<string, unknown>);
  },
});
const RunStageRecord = recordType<RunStage>(runStageMethods);
