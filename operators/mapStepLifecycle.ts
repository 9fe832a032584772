import { EventType } from '@ag-ui/core';
import type { OperatorFunction } from 'rxjs';
import { describeLane, eventTypeOf, laneFields, laneOf, optionalString, requiredString, type AgentEvent, type Lane } from '../lib/protocol/agentEvent.js';
import { warnDiagnostic, type DiagnosticHandler } from '../lib/protocol/diagnostics.js';
import { createOperator } from '../lib/protocol/createOperator.js';

/** Options of {@link mapStepLifecycle}. */
export interface MapStepLifecycleOptions {
  /** A STEP_STARTED first finishes the step its owner still has open: steps follow each other, never nest. Default: `false`. */
  finishPrevious?: boolean;
  /** Told about each STEP_STARTED or STEP_FINISHED dropped to keep the stream valid. Default: `console.warn`. */
  onDiagnostic?: DiagnosticHandler;
}

/** One open step: its owner (lane) and name. */
interface OpenStep {
  lane: Lane;
  stepName: string;
}

/**
 * Closes STEP_STARTED automatically: every step that is started is finished, once.
 *
 * A producer may leave STEP_FINISHED out; the step ends when the run does, or, with
 * `finishPrevious`, when its owner starts the next one.
 *
 * ```text
 * source:  --a--b--c--|            a = STEP_STARTED 'plan', b = TEXT_MESSAGE_CHUNK, c = STEP_STARTED 'act'
 * output:  --a--b--c--(qp|)        q = STEP_FINISHED 'act', p = STEP_FINISHED 'plan'
 *
 * source:  --a--c-----R-----|      with { finishPrevious: true }; R = RUN_FINISHED
 * output:  --a--(pc)--(qR)--|
 * ```
 *
 * Rules:
 * 1. Steps are tracked per owner: the `subagentRunId` of the event, absent for the parent agent.
 *    Two owners may each have a step of the same name open.
 * 2. A step still open is finished (STEP_FINISHED with its `stepName` and `subagentRunId`), the
 *    latest started first, before RUN_FINISHED or RUN_ERROR passes, and when the source completes
 *    or errors; a subagent's steps are finished before its SUBAGENT_FINISHED or SUBAGENT_ERROR.
 * 3. With `finishPrevious: true`, a STEP_STARTED first finishes the steps its owner has open.
 * 4. A STEP_FINISHED for no open step of its owner, and a second STEP_STARTED for a step of its
 *    owner that is open, are dropped and reported through `onDiagnostic`.
 * 5. A STEP_STARTED or STEP_FINISHED without a string `stepName`, or with a non-string
 *    `subagentRunId`, is an `INVALID_EVENT` error (RUN_ERROR under `mapRunLifecycle`).
 * 6. Every other event, CUSTOM and RAW included, passes through untouched.
 *
 * ## Example
 *
 * ```ts
 * of<AgentEvent[]>(
 *   { type: EventType.STEP_STARTED, stepName: 'plan' },
 *   { type: EventType.STEP_STARTED, stepName: 'act' },
 * ).pipe(mapStepLifecycle({ finishPrevious: true })).subscribe((e) => console.log(e.type, 'stepName' in e ? e.stepName : ''));
 * // results: STEP_STARTED plan, STEP_FINISHED plan, STEP_STARTED act, STEP_FINISHED act
 * ```
 *
 * @param options `finishPrevious` and the diagnostics handler.
 * @return A function that returns an Observable in which every STEP_STARTED has exactly one
 * STEP_FINISHED, sent before the run ends; other events pass through.
 */
export function mapStepLifecycle(options: MapStepLifecycleOptions = {}): OperatorFunction<AgentEvent, AgentEvent> {
  const finishPrevious = options?.finishPrevious === true;
  const diagnose = options?.onDiagnostic ?? warnDiagnostic;
  return createOperator<AgentEvent, AgentEvent>((subscriber) => {
    // Open steps of every owner, in start order: they are finished latest first.
    const open: OpenStep[] = [];

    const indexOf = (lane: Lane, stepName: string) => open.findIndex((step) => step.lane === lane && step.stepName === stepName);

    // Finishes the open steps `which` selects, latest first.
    const finishWhere = (which: (step: OpenStep) => boolean) => {
      for (let index = open.length - 1; index >= 0; index--) {
        const step = open[index];
        if (!which(step)) continue;
        open.splice(index, 1);
        subscriber.next({ type: EventType.STEP_FINISHED, stepName: step.stepName, ...laneFields(step.lane) });
      }
    };

    return {
      next(event) {
        const type = eventTypeOf(event);
        const fields = event as unknown as Record<string, unknown>;
        switch (type) {
          case EventType.STEP_STARTED: {
            const stepName = requiredString(fields, 'stepName');
            const lane = laneOf(fields);
            if (indexOf(lane, stepName) !== -1) {
              return diagnose({ message: `Dropped a second STEP_STARTED for step '${stepName}' of ${describeLane(lane)}, which is already running. Finish a step before starting it again.`, event });
            }
            if (finishPrevious) finishWhere((step) => step.lane === lane);
            open.push({ lane, stepName });
            return subscriber.next(event);
          }
          case EventType.STEP_FINISHED: {
            const stepName = requiredString(fields, 'stepName');
            const lane = laneOf(fields);
            const index = indexOf(lane, stepName);
            if (index === -1) {
              return diagnose({ message: `Dropped STEP_FINISHED for step '${stepName}': no such step of ${describeLane(lane)} is running. Finish a step once, after its STEP_STARTED, with the same subagentRunId.`, event });
            }
            open.splice(index, 1);
            return subscriber.next(event);
          }
          case EventType.SUBAGENT_FINISHED:
          case EventType.SUBAGENT_ERROR: {
            const subagent = optionalString(fields, 'subagentRunId');
            if (subagent !== undefined) finishWhere((step) => step.lane === subagent);
            return subscriber.next(event);
          }
          case EventType.RUN_FINISHED:
          case EventType.RUN_ERROR:
            finishWhere(() => true);
            return subscriber.next(event);
          default:
            subscriber.next(event);
        }
      },
      flush() {
        finishWhere(() => true);
      },
    };
  }, { passesTokenEvents: true });
}
