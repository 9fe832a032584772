import { EventType } from '@ag-ui/core';
import { lifecycleRules, operatorLifecycleMessage } from '../../../lib/protocol/table.js';
import { trackStepsAndSubagents, type LifecycleProblem } from '../../../lib/tracking/steps.js';

const { STEP_STARTED, STEP_FINISHED, SUBAGENT_STARTED, SUBAGENT_FINISHED, SUBAGENT_ERROR } = EventType;

/** The verifier's wording of a problem. */
const message = (problem: LifecycleProblem | undefined) => (problem === undefined ? undefined : lifecycleRules[problem.rule].message(problem.facts));

describe('trackStepsAndSubagents', () => {
  describe('steps', () => {
    it('should accept a start, then its finish, in each lane', () => {
      const steps = trackStepsAndSubagents();

      expect(steps.stepProblem(STEP_STARTED, undefined, 'plan')).toBeUndefined();
      steps.recordStep(STEP_STARTED, undefined, 'plan');
      expect(steps.stepProblem(STEP_STARTED, 's1', 'plan')).toBeUndefined();
      steps.recordStep(STEP_STARTED, 's1', 'plan');
      expect(steps.stepProblem(STEP_FINISHED, 's1', 'plan')).toBeUndefined();
      steps.recordStep(STEP_FINISHED, 's1', 'plan');
      expect(steps.runningSteps()).toEqual([{ lane: undefined, name: 'plan' }]);
    });

    it('should report a second start of a running step (duplicate-step), with where it started when counted', () => {
      const steps = trackStepsAndSubagents();
      steps.recordStep(STEP_STARTED, undefined, 'plan', 3);

      const problem = steps.stepProblem(STEP_STARTED, undefined, 'plan');
      expect(problem).toEqual({ rule: 'duplicate-step', facts: { type: STEP_STARTED, id: 'plan', lane: 'the parent agent', since: 3 } });
      expect(message(problem)).toBe("STEP_STARTED for step 'plan' of the parent agent, which is already running (since #3). Finish it with STEP_FINISHED before starting it again.");
    });

    it('should give an operator the "Dropped …" wording, with no position when events are not counted', () => {
      const steps = trackStepsAndSubagents();
      steps.recordStep(STEP_STARTED, 's1', 'plan');

      const problem = steps.stepProblem(STEP_STARTED, 's1', 'plan')!;
      expect(lifecycleRules[problem.rule].fatal).toBe(false);
      expect(operatorLifecycleMessage(problem.rule, problem.facts)).toBe(
        "Dropped STEP_STARTED for step 'plan' of subagent 's1', which is already running. Finish it with STEP_FINISHED before starting it again.",
      );
    });

    it('should report a finish for no running step (step-not-started)', () => {
      const steps = trackStepsAndSubagents();
      steps.recordStep(STEP_STARTED, undefined, 'plan');
      steps.recordStep(STEP_FINISHED, undefined, 'plan');

      const problem = steps.stepProblem(STEP_FINISHED, undefined, 'plan');
      expect(problem?.rule).toBe('step-not-started');
      expect(message(problem)).toBe("STEP_FINISHED for step 'plan' of the parent agent, which is not running. Send STEP_STARTED first, and finish each step once.");
    });

    it('should report a finish from another lane than the one running the step (step-owner-mismatch)', () => {
      const steps = trackStepsAndSubagents();
      steps.recordStep(STEP_STARTED, 's1', 'plan');

      const problem = steps.stepProblem(STEP_FINISHED, undefined, 'plan');
      expect(problem?.rule).toBe('step-owner-mismatch');
      expect(message(problem)).toBe("STEP_FINISHED for step 'plan' of the parent agent, but that step is running in subagent 's1'. Finish a step with the subagentRunId it was started with.");
    });

    it('should name the lane that first had a step event when several others run the step', () => {
      const steps = trackStepsAndSubagents();
      // s2 is seen first, by a finish that is refused; it starts 'plan' after the parent does.
      expect(steps.stepProblem(STEP_FINISHED, 's2', 'x')?.rule).toBe('step-not-started');
      steps.recordStep(STEP_STARTED, undefined, 'plan');
      steps.recordStep(STEP_STARTED, 's2', 'plan');

      expect(steps.stepProblem(STEP_FINISHED, 's3', 'plan')?.facts.runningIn).toBe("subagent 's2'");
      expect(steps.runningSteps()).toEqual([
        { lane: 's2', name: 'plan' },
        { lane: undefined, name: 'plan' },
      ]);
    });

    it('should finish the steps of one lane, or of all, latest started first', () => {
      const steps = trackStepsAndSubagents();
      steps.recordStep(STEP_STARTED, undefined, 'a');
      steps.recordStep(STEP_STARTED, 's1', 'b');
      steps.recordStep(STEP_STARTED, undefined, 'c');
      steps.recordStep(STEP_STARTED, 's1', 'd');

      expect(steps.finishSteps('s1').map((step) => step.name)).toEqual(['d', 'b']);
      steps.recordStep(STEP_STARTED, 's1', 'e');
      expect(steps.finishSteps(undefined, true).map((step) => [step.lane, step.name])).toEqual([
        ['s1', 'e'],
        [undefined, 'c'],
        [undefined, 'a'],
      ]);
      expect(steps.runningSteps()).toEqual([]);
      expect(steps.stepProblem(STEP_FINISHED, undefined, 'a')?.rule).toBe('step-not-started');
    });

    it('should keep two trackers apart', () => {
      const first = trackStepsAndSubagents();
      const second = trackStepsAndSubagents();
      first.recordStep(STEP_STARTED, undefined, 'plan');

      expect(second.stepProblem(STEP_STARTED, undefined, 'plan')).toBeUndefined();
      expect(second.runningSteps()).toEqual([]);
    });
  });

  describe('subagents', () => {
    it('should accept a start, then one end', () => {
      const lifecycles = trackStepsAndSubagents();

      expect(lifecycles.subagentProblem(SUBAGENT_STARTED, 's1')).toBeUndefined();
      lifecycles.recordSubagent(SUBAGENT_STARTED, 's1', 4);
      expect(lifecycles.runningSubagents()).toEqual([{ id: 's1', at: 4 }]);
      expect(lifecycles.subagentProblem(SUBAGENT_ERROR, 's1')).toBeUndefined();
      lifecycles.recordSubagent(SUBAGENT_ERROR, 's1');
      expect(lifecycles.runningSubagents()).toEqual([]);
    });

    it('should report a second start of a running subagent (subagent-already-active)', () => {
      const lifecycles = trackStepsAndSubagents();
      lifecycles.recordSubagent(SUBAGENT_STARTED, 's1', 1);

      const problem = lifecycles.subagentProblem(SUBAGENT_STARTED, 's1');
      expect(problem?.rule).toBe('subagent-already-active');
      expect(message(problem)).toBe("SUBAGENT_STARTED for subagent 's1', which is already running (since #1). End it with SUBAGENT_FINISHED or SUBAGENT_ERROR first.");
    });

    it('should report an id that ended in the run (subagent-id-reused), a rule an operator cannot repair', () => {
      const lifecycles = trackStepsAndSubagents();
      lifecycles.recordSubagent(SUBAGENT_STARTED, 's1');
      lifecycles.recordSubagent(SUBAGENT_FINISHED, 's1');

      const problem = lifecycles.subagentProblem(SUBAGENT_STARTED, 's1')!;
      expect(problem.rule).toBe('subagent-id-reused');
      expect(lifecycleRules[problem.rule].fatal).toBe(true);
      expect(operatorLifecycleMessage(problem.rule, problem.facts)).toBe(
        "SUBAGENT_STARTED reuses subagentRunId 's1', which already ended in this run. Give each subagent invocation its own subagentRunId.",
      );
    });

    it('should report a parent never started (subagent-parent-unknown), and accept one that is running or ended', () => {
      const lifecycles = trackStepsAndSubagents();

      const problem = lifecycles.subagentProblem(SUBAGENT_STARTED, 's2', 's0');
      expect(problem?.rule).toBe('subagent-parent-unknown');
      expect(message(problem)).toBe("SUBAGENT_STARTED for subagent 's2' names parentSubagentRunId 's0', which has not started in this run. Start the parent subagent first.");
      lifecycles.recordSubagent(SUBAGENT_STARTED, 's0');
      expect(lifecycles.subagentProblem(SUBAGENT_STARTED, 's2', 's0')).toBeUndefined();
      lifecycles.recordSubagent(SUBAGENT_FINISHED, 's0');
      expect(lifecycles.subagentProblem(SUBAGENT_STARTED, 's2', 's0')).toBeUndefined();
    });

    it('should report an end for no running subagent (subagent-not-active), in its event type', () => {
      const lifecycles = trackStepsAndSubagents();

      const problem = lifecycles.subagentProblem(SUBAGENT_ERROR, 's3')!;
      expect(problem.rule).toBe('subagent-not-active');
      expect(operatorLifecycleMessage(problem.rule, problem.facts)).toBe(
        "Dropped SUBAGENT_ERROR for subagent 's3', which is not running. Send SUBAGENT_STARTED first, and end each subagent once.",
      );
    });

    it('should finish running subagents latest first, and count them as ended', () => {
      const lifecycles = trackStepsAndSubagents();
      lifecycles.recordSubagent(SUBAGENT_STARTED, 's1');
      lifecycles.recordSubagent(SUBAGENT_STARTED, 's2');

      expect(lifecycles.finishSubagents().map((subagent) => subagent.id)).toEqual(['s2', 's1']);
      expect(lifecycles.runningSubagents()).toEqual([]);
      expect(lifecycles.subagentProblem(SUBAGENT_STARTED, 's1')?.rule).toBe('subagent-id-reused');
    });

    it('should not count an end for no running subagent as an ended id', () => {
      const lifecycles = trackStepsAndSubagents();
      lifecycles.recordSubagent(SUBAGENT_FINISHED, 's1');

      expect(lifecycles.subagentProblem(SUBAGENT_STARTED, 's1')).toBeUndefined();
    });
  });
});
