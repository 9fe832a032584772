import {
  EventType,
  aggregateTokenUsage,
  type Event,
  type RunAgentInput,
  type RunErrorEvent,
  type RunFinishedEvent,
  type RunFinishedOutcome,
  type RunStartedEvent,
  type TokenUsage,
} from '@ag-ui/core';
import { RunAgentInputSchema, TokenUsageSchema } from '@ag-ui/core/schemas';
import type { OperatorFunction } from 'rxjs';
import { ToolkitEventType, eventTypeOf, isAgentEventType, type AgentEvent } from '../lib/protocol/agentEvent.js';
import { warnDiagnostic, type DiagnosticHandler } from '../lib/protocol/diagnostics.js';
import { AguiRxError, describeValue } from '../lib/protocol/errors.js';
import { createOperator } from '../lib/protocol/createOperator.js';
import { trackOpenEntities } from '../lib/tracking/openEntities.js';
import { withPendingToolCalls } from '../lib/protocol/pendingToolCalls.js';
import { assertAgentEventFields, assertWireEvent, describeIssue } from '../lib/protocol/validate.js';

// aggregateTokenUsage sets `provider`/`model` even when a report had none: omit them rather than send undefined.
const omitUndefined = (entry: TokenUsage): TokenUsage =>
  Object.fromEntries(Object.entries(entry).filter(([, value]) => value !== undefined)) as TokenUsage;

/** A field of a thrown value, or undefined when reading it throws (a getter, a revoked Proxy). */
function readField(value: unknown, field: 'message' | 'code' | 'stack'): unknown {
  try {
    return (value as Record<string, unknown> | null | undefined)?.[field];
  } catch {
    return undefined;
  }
}

/** Options of {@link mapRunLifecycle}. */
export interface MapRunLifecycleOptions {
  /** The thread this run belongs to; sent on RUN_STARTED and RUN_FINISHED whatever upstream says. */
  threadId: string;
  /** This run's id; sent on RUN_STARTED and RUN_FINISHED whatever upstream says. */
  runId: string;
  /** The run this one continues, if any (RUN_STARTED `parentRunId`). */
  parentRunId?: string;
  /** The run's input, echoed on RUN_STARTED `input`. */
  input?: RunAgentInput;
  /** Aborting it ends the run with RUN_FINISHED `outcome: { type: "cancelled" }` and unsubscribes upstream. */
  signal?: AbortSignal;
  /** Told about each event dropped to keep the run valid (a late RUN_STARTED, a step finished twice). Default: `console.warn`. */
  onDiagnostic?: DiagnosticHandler;
  /**
   * Also send the failing error's stack trace, as RUN_ERROR `metadata: { stack }`. Default: false:
   * stacks name files and lines of the server, which a client should not see in production.
   */
  exposeErrorStack?: boolean;
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
  const { threadId, runId, parentRunId, input, signal } = options ?? ({} as MapRunLifecycleOptions);
  const diagnose = options?.onDiagnostic ?? warnDiagnostic;
  for (const [name, value] of [['threadId', threadId], ['runId', runId]] as const) {
    if (typeof value !== 'string' || value === '') {
      throw new AguiRxError('INVALID_OPTIONS', `The run needs a non-empty string '${name}' option (got ${describeValue(value)}). Pass the ids of the run, e.g. { threadId: input.threadId, runId: input.runId } from RunAgentInput.`);
    }
  }
  // Checked now: a bad parentRunId or input would make every RUN_STARTED invalid, with no run to report it in.
  if (parentRunId !== undefined && typeof parentRunId !== 'string') {
    throw new AguiRxError('INVALID_OPTIONS', `mapRunLifecycle 'parentRunId' must be a string (got ${describeValue(parentRunId)}). Omit it when this run continues no other run.`);
  }
  if (input !== undefined) {
    const result = RunAgentInputSchema.safeParse(input);
    if (!result.success) {
      throw new AguiRxError('INVALID_OPTIONS', `mapRunLifecycle 'input' is not a valid RunAgentInput: ${describeIssue(result.error)}. Pass the RunAgentInput the client posted, or omit it.`);
    }
  }
  return createOperator<AgentEvent, Event>((subscriber, context) => {
    // Whether RUN_STARTED was sent, and whether the terminal event was.
    let started = false;
    let ended = false;
    // What is open on the output, so that the run can always end cleanly.
    const open = trackOpenEntities();
    // Usage reported during the run.
    const usage: TokenUsage[] = [];

    const send = (event: Event) => {
      open.observe(event);
      subscriber.next(event);
    };

    const start = (upstream?: Record<string, unknown>) => {
      const event: RunStartedEvent = {
        ...(upstream as Partial<RunStartedEvent> | undefined),
        type: EventType.RUN_STARTED,
        threadId,
        runId,
        protocolVersion: '1.0',
      };
      const parent = parentRunId ?? (upstream?.parentRunId as string | undefined);
      if (parent !== undefined) event.parentRunId = parent;
      const runInput = input ?? (upstream?.input as RunAgentInput | undefined);
      if (runInput !== undefined) event.input = runInput;
      assertWireEvent(event as unknown as Record<string, unknown>);
      // Set only once valid: an invalid upstream RUN_STARTED still gets our own RUN_STARTED before the RUN_ERROR.
      started = true;
      send(event);
    };

    const end = (terminal: Event) => {
      if (!started) start();
      ended = true;
      const reason = terminal.type === EventType.RUN_ERROR ? { type: 'error' as const, message: terminal.message } : { type: 'finished' as const };
      for (const closer of open.closeAll(reason)) subscriber.next(closer);
      if (usage.length > 0) {
        const sums = aggregateTokenUsage(usage).map(omitUndefined);
        // Each report was valid, but their sum may not be: send none rather than an invalid terminal event.
        if (sums.every((entry) => TokenUsageSchema.safeParse(entry).success)) (terminal as { usage?: TokenUsage[] }).usage = sums;
        else diagnose({ message: `Left out the run's token usage: its sum is past ${Number.MAX_SAFE_INTEGER} tokens, more than AG-UI can carry. Check the counts your agent reports.`, event: usage });
      }
      subscriber.next(terminal);
      context.unsubscribeSource();
      subscriber.complete();
    };

    const finish = (upstream?: Record<string, unknown>, outcome?: RunFinishedOutcome) => {
      // Validated before it is taken apart: a null outcome or a bad usage entry is INVALID_EVENT, not a TypeError or a hang.
      const event = assertWireEvent({ ...upstream, type: EventType.RUN_FINISHED, threadId, runId }) as RunFinishedEvent;
      if (event.usage !== undefined) usage.unshift(...event.usage);
      delete event.usage;
      if (outcome !== undefined) event.outcome = outcome;
      else event.outcome = withPendingToolCalls(event.outcome, open.pendingToolCallIds());
      end(event);
    };

    const fail = (error: unknown) => {
      if (ended) return;
      // Duck-typed: errors from another realm, or plain { message, code } objects, keep their message.
      const reported = readField(error, 'message');
      const message = typeof reported === 'string' ? reported : typeof error === 'string' ? error : `Agent failed with ${describeValue(error)}`;
      const code = readField(error, 'code');
      const stack = options?.exposeErrorStack ? readField(error, 'stack') : undefined;
      end({
        type: EventType.RUN_ERROR,
        message: message === '' ? 'The agent failed without an error message.' : message,
        ...(typeof code === 'string' || typeof code === 'number' ? { code: String(code) } : {}),
        ...(typeof stack === 'string' ? { metadata: { stack } } : {}),
      });
    };

    const onAbort = () => {
      if (!ended) finish(undefined, { type: 'cancelled' });
    };
    // Already aborted: the run is cancelled before upstream is ever subscribed.
    if (signal?.aborted) onAbort();
    else signal?.addEventListener('abort', onAbort);

    return {
      next(event) {
        if (ended) return;
        const type = eventTypeOf(event);
        const fields = event as unknown as Record<string, unknown>;
        if (!started) {
          if (type === EventType.RUN_STARTED) return start(fields);
          start();
        }
        if (type === EventType.TEXT_MESSAGE_CONTENT || type === EventType.TOOL_CALL_ARGS || type === EventType.REASONING_MESSAGE_CONTENT) {
          // The per-token events open and close nothing: checked, then sent without the bookkeeping below.
          return subscriber.next(assertWireEvent(fields));
        }
        switch (type) {
          case EventType.RUN_STARTED:
            // Ours went out at subscription: a RUN_STARTED that comes later can no longer be merged.
            return diagnose({
              message: `Dropped an upstream RUN_STARTED that came after the run had started. Pass parentRunId and input as options of mapRunLifecycle (or toAgui), or emit RUN_STARTED as the agent's first, synchronous event.`,
              event,
            });
          case EventType.RUN_FINISHED:
            return finish(fields);
          case EventType.RUN_ERROR: {
            // Validated whole first, so that a bad `usage` is reported rather than dropped.
            const { usage: reported, ...rest } = assertWireEvent(fields) as RunErrorEvent;
            if (reported !== undefined) usage.unshift(...reported);
            if (rest.message.trim() === '') rest.message = 'The agent reported an error without a message.';
            return end(rest);
          }
          case ToolkitEventType.TOKEN_USAGE: {
            const reported = fields.usage;
            const entries = Array.isArray(reported) ? reported : [reported];
            for (const entry of entries) {
              if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) {
                throw new AguiRxError('INVALID_EVENT', `TOKEN_USAGE has 'usage: ${describeValue(entry)}', but usage must be a TokenUsage object (or an array of them), e.g. { inputTokens: 12, outputTokens: 30 }.`);
              }
              // The sums land on the terminal event: a bad count must fail here, not make RUN_FINISHED invalid.
              const result = TokenUsageSchema.safeParse(entry);
              if (!result.success) {
                throw new AguiRxError('INVALID_EVENT', `TOKEN_USAGE has an invalid usage entry: ${describeIssue(result.error)}. Counts are non-negative integers, e.g. { inputTokens: 12, outputTokens: 30 }.`);
              }
            }
            usage.push(...(entries as TokenUsage[]));
            return;
          }
          default:
            if (!isAgentEventType(type)) {
              throw new AguiRxError('INVALID_EVENT', `Unknown event type '${type}'. Emit one of the AG-UI 1.0 event types (EventType from @ag-ui/core), or wrap provider data in a RAW or CUSTOM event.`);
            }
            // Relaxed fields pass: an operator after this one may still fill them in.
            assertAgentEventFields(fields);
            const problem = open.sequenceProblem(fields as unknown as Event);
            if (problem?.fatal) throw new AguiRxError('INVALID_EVENT', problem.message);
            if (problem) return diagnose({ message: problem.message, event });
            send(fields as unknown as Event);
        }
      },
      complete() {
        if (!ended) finish();
      },
      error: fail,
      subscribed() {
        if (!started && !ended) start();
      },
      teardown() {
        signal?.removeEventListener('abort', onAbort);
      },
    };
  });
}
