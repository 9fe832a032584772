import { EventType } from '@ag-ui/core';
import type { OperatorFunction } from 'rxjs';
import { eventTypeOf, laneFields, laneOf, optionalString, requiredString, type AgentEvent, type Lane } from '../lib/protocol/agentEvent.js';
import { warnDiagnostic, type DiagnosticHandler } from '../lib/protocol/diagnostics.js';
import { createOperator, type OperatorHandlers, type OperatorSink } from '../lib/protocol/createOperator.js';
import { keepShapes, recordType } from '../lib/protocol/recordType.js';
import { operatorLifecycleMessage, stepBoundaryOf } from '../lib/protocol/table.js';
import { trackStepsAndSubagents, type StepsAndSubagents } from '../lib/tracking/steps.js';

/** Options of {@link mapStepLifecycle}. */
export interface MapStepLifecycleOptions {
  /** A STEP_STARTED first finishes the step its owner still has open: steps follow each other, never nest. Default: `false`. */
  finishPrevious?: boolean | undefined;
  /** Told about each STEP_STARTED or STEP_FINISHED dropped to keep the stream valid. Default: `console.warn`. */
  onDiagnostic?: DiagnosticHandler | undefined;
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
 * 4. A STEP_FINISHED for no open step of its owner (none, or one of another owner), and a second
 *    STEP_STARTED for a step of its owner that is open, are dropped and reported through
 *    `onDiagnostic` (the step rules of the protocol table, in its wording).
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
  // One record per subscription, with methods every subscription shares.
  return createOperator<AgentEvent, AgentEvent>((subscriber) => {
    const stage = new StepStageRecord();
    stage.subscriber = subscriber;
    stage.diagnose = diagnose;
    stage.finishPrevious = finishPrevious;
    stage.steps = undefined;
    return StepStageRecord.shaped(stage);
  }, {
    passesTokenEvents: true,
    readsAgentEvents: diagnose,
  });
}

// The options a call makes once, one kept (see keepShapes).
keepShapes({ passesTokenEvents: true, readsAgentEvents: undefined });

/** One subscription of {@link mapStepLifecycle}. */
interface StepStage extends OperatorHandlers<AgentEvent> {
  readonly subscriber: OperatorSink<AgentEvent>;
  readonly diagnose: DiagnosticHandler;
  readonly finishPrevious: boolean;
  /** The open steps of every owner, in start order, and the step rules: made at the first step event (most runs have none). */
  steps: StepsAndSubagents | undefined;
}

// Finishes the open steps of `lane` (of every owner with `all`), latest first.
function finish(stage: StepStage, lane: Lane, all = false): void {
  if (stage.steps === undefined) return;
  for (const step of stage.steps.finishSteps(lane, all)) stage.subscriber.next({ type: EventType.STEP_FINISHED, stepName: step.name, ...laneFields(step.lane) });
}

const stepsMethods: Pick<StepStage, 'next' | 'flush'> = Object.freeze({
  next(this: StepStage, event: AgentEvent) {
    const type = eventTypeOf(event);
    const fields = event as unknown as Record<string, unknown>;
    switch (type) {
      case EventType.STEP_STARTED:
      case EventType.STEP_FINISHED: {
        const stepName = requiredString(fields, 'stepName');
        const lane = laneOf(fields);
        const steps = (this.steps ??= trackStepsAndSubagents());
        const problem = steps.stepProblem(type, lane, stepName);
        if (problem !== undefined) return this.diagnose({ message: operatorLifecycleMessage(problem.rule, problem.facts), event });
        if (this.finishPrevious && type === EventType.STEP_STARTED) finish(this, lane);
        steps.recordStep(type, lane, stepName);
        return this.subscriber.next(event);
      }
      default: {
        const boundary = stepBoundaryOf(type);
        if (boundary === 'run') finish(this, undefined, true);
        else if (boundary === 'subagent') {
          const subagent = optionalString(fields, 'subagentRunId');
          if (subagent !== undefined) finish(this, subagent);
        }
        this.subscriber.next(event);
      }
    }
  },
  flush(this: StepStage) {
    finish(this, undefined, true);
  },
});
const StepStageRecord = recordType<StepStage>(stepsMethods);
