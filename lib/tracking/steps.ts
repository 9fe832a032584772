import { describeLane, type Lane } from '../protocol/agentEvent.js';
import { entityKind, type LifecycleFacts, type LifecycleRuleName } from '../protocol/table.js';
import { keepShapes } from '../protocol/recordType.js';

/** A step or subagent rule an event breaks: its name (the table's `lifecycleRules`) and what its message says. */
export interface LifecycleProblem {
  rule: LifecycleRuleName;
  facts: LifecycleFacts;
}

/** A running step. */
export interface RunningStep {
  lane: Lane;
  name: string;
  /** Where its STEP_STARTED was, when the caller counts events. */
  at?: number | undefined;
}

/** A running subagent. */
export interface RunningSubagent {
  id: string;
  /** Where its SUBAGENT_STARTED was, when the caller counts events. */
  at?: number | undefined;
}

/**
 * The steps and subagents one run has running, and the rules their events follow. Pure
 * bookkeeping, no RxJS: ask for the problem an event has first, record it only when it has none.
 */
export interface StepsAndSubagents {
  /**
   * Why STEP_STARTED or STEP_FINISHED (`type`) of step `name` in `lane` cannot be sent, or
   * `undefined`: a step already running in that lane (`duplicate-step`); a finish for no such
   * step, or for one running in another lane only (`step-not-started`, `step-owner-mismatch`).
   */
  stepProblem(type: string, lane: Lane, name: string): LifecycleProblem | undefined;
  /** Records a STEP_STARTED or STEP_FINISHED that has no problem; `at` is its position, if counted. */
  recordStep(type: string, lane: Lane, name: string, at?: number): void;
  /** Running steps, lane by lane (in the order each lane first had a step event), each lane's in start order. */
  runningSteps(): RunningStep[];
  /** Stops tracking the running steps of `lane` (of every lane when `all`) and returns them, latest started first. */
  finishSteps(lane: Lane, all?: boolean): RunningStep[];
  /**
   * Why SUBAGENT_STARTED, SUBAGENT_FINISHED or SUBAGENT_ERROR (`type`) of subagent `id` cannot be
   * sent, or `undefined`: a start for a running one, for an id that ended in this run, or naming a
   * `parent` never started; an end for none running.
   */
  subagentProblem(type: string, id: string, parent?: string): LifecycleProblem | undefined;
  /** Records a subagent event that has no problem; `at` is its position, if counted. */
  recordSubagent(type: string, id: string, at?: number): void;
  /** Running subagents, in start order. */
  runningSubagents(): RunningSubagent[];
  /** Stops tracking the running subagents (they count as ended) and returns them, latest started first. */
  finishSubagents(): RunningSubagent[];
}

/** Creates the step and subagent bookkeeping of one run. */
export function trackStepsAndSubagents(): StepsAndSubagents {
  // Running steps per lane: name -> the step, in start order; lanes in the order they first had a step event.
  // Each table made at its first write: most runs have no step or subagent.
  let steps: Map<Lane, Map<string, RunningStep & { order: number }>> | undefined;
  // Start order across lanes: the latest started step finishes first.
  let started = 0;
  // Running subagents in start order, and the ids that have ended (an invocation id never comes back in a run).
  let subagents: Map<string, RunningSubagent> | undefined;
  let ended: Set<string> | undefined;

  const stepsOf = (lane: Lane) => {
    let running = (steps ??= new Map()).get(lane);
    if (running === undefined) steps.set(lane, (running = new Map()));
    return running;
  };

  return {
    stepProblem(type, lane, name) {
      const step = stepsOf(lane).get(name);
      if (type === entityKind.step.start) {
        return step === undefined ? undefined : { rule: 'duplicate-step', facts: { type, id: name, lane: describeLane(lane), since: step.at } };
      }
      if (step !== undefined) return undefined;
      for (const [other, names] of steps ?? []) {
        if (other !== lane && names.has(name)) return { rule: 'step-owner-mismatch', facts: { type, id: name, lane: describeLane(lane), runningIn: describeLane(other) } };
      }
      return { rule: 'step-not-started', facts: { type, id: name, lane: describeLane(lane) } };
    },
    recordStep(type, lane, name, at) {
      if (type === entityKind.step.start) stepsOf(lane).set(name, { lane, name, at, order: started++ });
      else stepsOf(lane).delete(name);
    },
    runningSteps() {
      const running: RunningStep[] = [];
      if (steps === undefined) return running;
      for (const names of steps.values()) for (const { lane, name, at } of names.values()) running.push({ lane, name, at });
      return running;
    },
    finishSteps(lane, all = false) {
      const finished: (RunningStep & { order: number })[] = [];
      for (const [owner, names] of steps ?? []) {
        if (!all && owner !== lane) continue;
        finished.push(...names.values());
        names.clear();
      }
      return finished.sort((a, b) => b.order - a.order).map(({ lane: owner, name, at }) => ({ lane: owner, name, at }));
    },
    subagentProblem(type, id, parent) {
      const running = subagents?.get(id);
      if (type !== entityKind.subagent.start) return running === undefined ? { rule: 'subagent-not-active', facts: { type, id } } : undefined;
      if (running !== undefined) return { rule: 'subagent-already-active', facts: { type, id, since: running.at } };
      if (ended?.has(id)) return { rule: 'subagent-id-reused', facts: { type, id } };
      if (parent !== undefined && subagents?.has(parent) !== true && ended?.has(parent) !== true) return { rule: 'subagent-parent-unknown', facts: { type, id, parent } };
      return undefined;
    },
    recordSubagent(type, id, at) {
      if (type === entityKind.subagent.start) {
        (subagents ??= new Map()).set(id, { id, at });
        return;
      }
      if (subagents?.delete(id)) (ended ??= new Set()).add(id);
    },
    runningSubagents: () => (subagents === undefined ? [] : [...subagents.values()]),
    finishSubagents() {
      if (subagents === undefined) return [];
      const running = [...subagents.values()].reverse();
      for (const { id } of running) (ended ??= new Set()).add(id);
      subagents.clear();
      return running;
    },
  };
}

// A run makes one: one kept (see keepShapes).
keepShapes(trackStepsAndSubagents());
