import { EventType } from '@ag-ui/core';
import { catchError, concat, defer, of, throwError, type OperatorFunction } from 'rxjs';
import { laneFields, type AgentEvent } from '../lib/protocol/agentEvent.js';
import { AguiRxError, describeValue } from '../lib/protocol/errors.js';

/** Options of {@link withStep}. */
export interface WithStepOptions {
  /** The subagent whose step this is; absent for the parent agent. Sent on both step events. */
  subagentRunId?: string | undefined;
}

/**
 * Wraps an inner observable of agent events in one step: STEP_STARTED, its events, STEP_FINISHED.
 *
 * ```text
 * inner:   --a--b--|
 * output:  s-a--b--(f|)       s = STEP_STARTED, f = STEP_FINISHED
 *
 * inner:   --a--#
 * output:  s-a--(f#)
 * ```
 *
 * Rules:
 * 1. STEP_STARTED (`stepName`, and `subagentRunId` when given) is sent on subscribe, before
 *    anything the inner observable sends, even synchronously.
 * 2. STEP_FINISHED is sent once: when the inner observable completes, or when it errors, just
 *    before the error passes on.
 * 3. Unsubscribing sends nothing: whoever unsubscribes ends the run (`mapRunLifecycle` finishes
 *    the step if the run goes on).
 * 4. Each subscription gets its own step events; inner events pass through untouched.
 *
 * ## Example
 *
 * ```ts
 * of<AgentEvent[]>({ type: EventType.CUSTOM, name: 'progress', value: 1 })
 *   .pipe(withStep('search'))
 *   .subscribe((e) => console.log(e.type));
 * // results: STEP_STARTED, CUSTOM, STEP_FINISHED
 * ```
 *
 * @param name The step's name (`stepName`).
 * @param options The `subagentRunId` of the step's owner.
 * @return A function that returns an Observable of the inner events wrapped in the step.
 * @throws {AguiRxError} `INVALID_OPTIONS` at call time when `name` is not a non-empty string or
 * `subagentRunId` is not a string.
 */
export function withStep(name: string, options: WithStepOptions = {}): OperatorFunction<AgentEvent, AgentEvent> {
  if (typeof name !== 'string' || name === '') {
    throw new AguiRxError('INVALID_OPTIONS', `withStep needs a non-empty string step name (got ${describeValue(name)}), e.g. withStep('search').`);
  }
  const lane = options?.subagentRunId;
  if (lane !== undefined && typeof lane !== 'string') {
    throw new AguiRxError('INVALID_OPTIONS', `withStep 'subagentRunId' must be a string (got ${describeValue(lane)}). Omit it for a step of the parent agent.`);
  }
  // Fresh objects per subscription: a downstream operator may add fields to what it receives.
  const started = (): AgentEvent => ({ type: EventType.STEP_STARTED, stepName: name, ...laneFields(lane) });
  const finished = (): AgentEvent => ({ type: EventType.STEP_FINISHED, stepName: name, ...laneFields(lane) });
  return (inner$) =>
    defer(() =>
      concat(
        of(started()),
        // On error, concat stops here: the step is finished once, before the error.
        inner$.pipe(catchError((error: unknown) => concat(of(finished()), throwError(() => error)))),
        defer(() => of(finished())),
      ),
    );
}
