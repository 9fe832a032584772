import { EventType, type Event } from '@ag-ui/core';
import { Observable, concat, map, mergeMap, of, retry, take, throwError } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import type { AgentEvent } from '../../lib/protocol/agentEvent.js';
import { AguiRxError } from '../../lib/protocol/errors.js';
import { mapRunLifecycle } from '../../operators/mapRunLifecycle.js';
import { mapStepLifecycle } from '../../operators/mapStepLifecycle.js';
import { toAgui } from '../../operators/toAgui.js';
import { collect, createTestScheduler, diagnosticsSink, typesOf } from '../support/helpers.js';
import { runWithOracle } from '../support/oracle.js';

const started = (stepName: string, subagentRunId?: string): AgentEvent => ({ type: EventType.STEP_STARTED, stepName, ...(subagentRunId === undefined ? {} : { subagentRunId }) });
const finished = (stepName: string, subagentRunId?: string): AgentEvent => ({ type: EventType.STEP_FINISHED, stepName, ...(subagentRunId === undefined ? {} : { subagentRunId }) });
const custom = (value: number): AgentEvent => ({ type: EventType.CUSTOM, name: 'tick', value });
const bad = (value: unknown) => value as AgentEvent;

const DUPLICATE = "Dropped STEP_STARTED for step 'plan' of the parent agent, which is already running. Finish it with STEP_FINISHED before starting it again.";
const NOTHING_OPEN = (step: string, owner: string) => `Dropped STEP_FINISHED for step '${step}' of ${owner}, which is not running. Send STEP_STARTED first, and finish each step once.`;
const OTHER_OWNER = (step: string, owner: string, runningIn: string) =>
  `Dropped STEP_FINISHED for step '${step}' of ${owner}, but that step is running in ${runningIn}. Finish a step with the subagentRunId it was started with.`;

// a/b start steps, f finishes 'plan', x is a CUSTOM event; capitals are what the operator adds.
const values = {
  a: started('plan'),
  b: started('act'),
  f: finished('plan'),
  x: custom(1),
  r: { type: EventType.RAW, event: { provider: 'data' } } as AgentEvent,
  R: { type: EventType.RUN_FINISHED } as AgentEvent,
  E: { type: EventType.RUN_ERROR, message: 'boom' } as AgentEvent,
  P: finished('plan'),
  Q: finished('act'),
};

describe('mapStepLifecycle', () => {
  let testScheduler: TestScheduler;

  beforeEach(() => {
    testScheduler = createTestScheduler();
  });

  it('should pass steps through and finish those left open, latest first, when the source completes', () =>
    testScheduler.run(({ hot, expectObservable, expectSubscriptions }) => {
      // prettier-ignore
      const e1 =  hot('--a--x--b--|', values);
      // prettier-ignore
      const e1subs =  '^----------!';
      // prettier-ignore
      const expected ='--a--x--b--(QP|)';

      expectObservable(e1.pipe(mapStepLifecycle())).toBe(expected, values);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    }));

  it('should finish open steps before the error when the source raises an error', () =>
    testScheduler.run(({ hot, expectObservable, expectSubscriptions }) => {
      // prettier-ignore
      const e1 =  hot('--a--#', values);
      // prettier-ignore
      const e1subs =  '^----!';
      // prettier-ignore
      const expected ='--a--(P#)';

      expectObservable(e1.pipe(mapStepLifecycle())).toBe(expected, values);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    }));

  it('should complete with an empty source', () =>
    testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
      // prettier-ignore
      const e1 =  cold<AgentEvent>('|');
      // prettier-ignore
      const e1subs =   '(^!)';
      // prettier-ignore
      const expected = '|';

      expectObservable(e1.pipe(mapStepLifecycle())).toBe(expected);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    }));

  it('should not complete with a never source', () =>
    testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
      // prettier-ignore
      const e1 =  cold<AgentEvent>('-');
      // prettier-ignore
      const e1subs =   '^';
      // prettier-ignore
      const expected = '-';

      expectObservable(e1.pipe(mapStepLifecycle())).toBe(expected);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    }));

  it('should raise an error with a throw source', () =>
    testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
      // prettier-ignore
      const e1 =  cold<AgentEvent>('#');
      // prettier-ignore
      const e1subs =   '(^!)';
      // prettier-ignore
      const expected = '#';

      expectObservable(e1.pipe(mapStepLifecycle())).toBe(expected);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    }));

  it('should allow unsubscribing early and explicitly, sending nothing at teardown', () =>
    testScheduler.run(({ hot, expectObservable, expectSubscriptions }) => {
      // prettier-ignore
      const e1 =  hot('--a--x--b--|', values);
      // prettier-ignore
      const unsub =   '------!     ';
      // prettier-ignore
      const e1subs =  '^-----!     ';
      // prettier-ignore
      const expected ='--a--x-     ';

      expectObservable(e1.pipe(mapStepLifecycle()), unsub).toBe(expected, values);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    }));

  it('should not break unsubscription chains when unsubscribed explicitly', () =>
    testScheduler.run(({ hot, expectObservable, expectSubscriptions }) => {
      // prettier-ignore
      const e1 =  hot('--a--x--b--|', values);
      // prettier-ignore
      const unsub =   '------!     ';
      // prettier-ignore
      const e1subs =  '^-----!     ';
      // prettier-ignore
      const expected ='--a--x-     ';

      const result = e1.pipe(
        mergeMap((event) => of(event)),
        mapStepLifecycle(),
        mergeMap((event) => of(event)),
      );

      expectObservable(result, unsub).toBe(expected, values);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    }));

  it('should stop a synchronous source when take ends the output', () => {
    let produced = 0;
    const source$ = new Observable<AgentEvent>((subscriber) => {
      for (let count = 0; !subscriber.closed && count < 10; count++) {
        produced++;
        subscriber.next(started(`step-${count}`));
      }
    });

    testScheduler.run(({ expectObservable }) => {
      expectObservable(source$.pipe(mapStepLifecycle(), take(2))).toBe('(ab|)', { a: started('step-0'), b: started('step-1') });
    });

    expect(produced).toBe(2);
  });

  it('should keep open steps per subscription: two subscriptions are independent', () =>
    testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
      // prettier-ignore
      const e1 =  cold('--a--|', values);
      // prettier-ignore
      const e1subs =   '^----!';
      // prettier-ignore
      const expected = '--a--(P|)';

      // A shared state would drop the second subscriber's STEP_STARTED as a duplicate.
      const result$ = e1.pipe(mapStepLifecycle());
      expectObservable(result$).toBe(expected, values);
      expectObservable(result$).toBe(expected, values);
      expectSubscriptions(e1.subscriptions).toBe([e1subs, e1subs]);
    }));

  it('should start afresh when retried', () =>
    testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
      // prettier-ignore
      const e1 =  cold('--a--#', values);
      // prettier-ignore
      const e1subs =  ['^----!',
                       '-----^----!'];
      // prettier-ignore
      const expected = '--a--P-a--(P#)';

      expectObservable(e1.pipe(mapStepLifecycle(), retry(1))).toBe(expected, values);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    }));

  it('should finish open steps before RUN_FINISHED and RUN_ERROR pass, in the same frame', () =>
    testScheduler.run(({ cold, expectObservable }) => {
      // prettier-ignore
      expectObservable(cold('--a--b--R-----|', values).pipe(mapStepLifecycle())).toBe('--a--b--(QPR)-|', values);
      // prettier-ignore
      expectObservable(cold('--a--E----|', values).pipe(mapStepLifecycle())).toBe('--a--(PE)-|', values);
    }));

  it('should pass an explicit STEP_FINISHED and not finish that step again', () =>
    testScheduler.run(({ cold, expectObservable }) => {
      // prettier-ignore
      expectObservable(cold('--a--b--f--|', values).pipe(mapStepLifecycle())).toBe('--a--b--f--(Q|)', values);
    }));

  it('should finish the owner\'s open step when the next one starts, with finishPrevious', () =>
    testScheduler.run(({ cold, expectObservable }) => {
      // prettier-ignore
      const e1 =  cold('--a--b-----|', values);
      // prettier-ignore
      const expected = '--a--(Pb)--(Q|)';

      expectObservable(e1.pipe(mapStepLifecycle({ finishPrevious: true }))).toBe(expected, values);
    }));

  it('should nest steps without finishPrevious, and finish only the same owner\'s step with it', () =>
    testScheduler.run(({ cold, expectObservable }) => {
      const lanes = {
        a: started('plan'),
        s: started('browse', 'sub-1'),
        b: started('act'),
        t: started('read', 'sub-1'),
        P: finished('plan'),
        S: finished('browse', 'sub-1'),
        Q: finished('act'),
        T: finished('read', 'sub-1'),
      };
      // prettier-ignore
      const e1 =  cold('-a-s-b---t---|', lanes);
      // prettier-ignore
      expectObservable(e1.pipe(mapStepLifecycle({ finishPrevious: true }))).toBe('-a-s-(Pb)(St)(TQ|)', lanes);
      // prettier-ignore
      expectObservable(e1.pipe(mapStepLifecycle())).toBe('-a-s-b---t---(TQSP|)', lanes);
    }));

  it('should keep steps of the same name apart per owner', () =>
    testScheduler.run(({ cold, expectObservable }) => {
      const lanes = { a: started('tools'), s: started('tools', 'sub-1'), F: finished('tools'), S: finished('tools', 'sub-1') };
      // prettier-ignore
      expectObservable(cold('-a-s-F-|', lanes).pipe(mapStepLifecycle())).toBe('-a-s-F-(S|)', lanes);
    }));

  it('should finish a subagent\'s steps before its SUBAGENT_FINISHED or SUBAGENT_ERROR, leaving the others open', () =>
    testScheduler.run(({ cold, expectObservable }) => {
      const lanes = {
        a: started('plan'),
        s: started('browse', 'sub-1'),
        t: started('read', 'sub-2'),
        f: { type: EventType.SUBAGENT_FINISHED, subagentRunId: 'sub-1', outcome: { type: 'success' } } as AgentEvent,
        e: { type: EventType.SUBAGENT_ERROR, subagentRunId: 'sub-2', message: 'failed' } as AgentEvent,
        P: finished('plan'),
        S: finished('browse', 'sub-1'),
        T: finished('read', 'sub-2'),
      };
      // prettier-ignore
      expectObservable(cold('-a-s-t-f---e---|', lanes).pipe(mapStepLifecycle())).toBe('-a-s-t-(Sf)(Te)(P|)', lanes);
    }));

  it('should drop a STEP_FINISHED for nothing open and a second STEP_STARTED, reporting each', () => {
    const sink = diagnosticsSink();
    testScheduler.run(({ cold, expectObservable }) => {
      const lanes = { ...values, g: finished('plan', 'sub-1') };
      // prettier-ignore
      const e1 =  cold('-f-a-a-g-|', lanes);
      // prettier-ignore
      const expected = '---a-----(P|)';
      expectObservable(e1.pipe(mapStepLifecycle({ onDiagnostic: sink.onDiagnostic }))).toBe(expected, lanes);
    });
    expect(sink.messages).toEqual([NOTHING_OPEN('plan', 'the parent agent'), DUPLICATE, OTHER_OWNER('plan', "subagent 'sub-1'", 'the parent agent')]);
  });

  it('should drop a second STEP_STARTED of the open step under finishPrevious too, without finishing it', () => {
    const sink = diagnosticsSink();
    testScheduler.run(({ cold, expectObservable }) => {
      // prettier-ignore
      expectObservable(cold('-a-a-|', values).pipe(mapStepLifecycle({ finishPrevious: true, onDiagnostic: sink.onDiagnostic }))).toBe('-a---(P|)', values);
    });
    expect(sink.messages).toEqual([DUPLICATE]);
  });

  it('should report through console.warn by default', async () => {
    const warn = jest.spyOn(console, 'warn').mockImplementation(() => undefined);
    try {
      await collect(of(values.f).pipe(mapStepLifecycle()));
      expect(warn).toHaveBeenCalledWith(`[agui-rx] ${NOTHING_OPEN('plan', 'the parent agent')}`);
    } finally {
      warn.mockRestore();
    }
  });

  it('should pass CUSTOM, RAW and other events untouched', () =>
    testScheduler.run(({ cold, expectObservable }) => {
      // prettier-ignore
      expectObservable(cold('-x-r-|', values).pipe(mapStepLifecycle())).toBe('-x-r-|', values);
    }));

  it('should error on a step event without a string stepName, or with a non-string subagentRunId, after finishing what is open', () =>
    testScheduler.run(({ cold, expectObservable }) => {
      const errors = {
        n: bad({ type: EventType.STEP_STARTED }),
        m: bad({ type: EventType.STEP_FINISHED, stepName: 7 }),
        l: bad({ type: EventType.STEP_STARTED, stepName: 'x', subagentRunId: 7 }),
      };
      const all = { ...values, ...errors };
      expectObservable(cold('-a-n-|', all).pipe(mapStepLifecycle())).toBe(
        '-a-(P#)',
        all,
        new AguiRxError('INVALID_EVENT', "STEP_STARTED has no 'stepName'. Add 'stepName' (a string) to the event."),
      );
      expectObservable(cold('-m-|', all).pipe(mapStepLifecycle())).toBe(
        '-#',
        all,
        new AguiRxError('INVALID_EVENT', "STEP_FINISHED has 'stepName: number 7', but 'stepName' must be a string."),
      );
      expectObservable(cold('-l-|', all).pipe(mapStepLifecycle())).toBe(
        '-#',
        all,
        new AguiRxError('INVALID_EVENT', "STEP_STARTED has 'subagentRunId: number 7', but 'subagentRunId' must be a string."),
      );
    }));

  describe('through the official client', () => {
    it('should make a run with unclosed steps well-formed, and the client accept it', async () => {
      const events$ = of(started('plan'), { type: EventType.TEXT_MESSAGE_CHUNK, delta: 'Thinking' } as AgentEvent, started('act'), started('browse', 'sub-1'));
      const run = await runWithOracle(events$.pipe(mapStepLifecycle(), toAgui({ threadId: 'thread-1', runId: 'run-1', generateId: () => 'm1' })));
      expect(typesOf(run.events)).toEqual([
        'RUN_STARTED',
        'STEP_STARTED',
        'TEXT_MESSAGE_START',
        'TEXT_MESSAGE_CONTENT',
        'TEXT_MESSAGE_END',
        'STEP_STARTED',
        'STEP_STARTED',
        'STEP_FINISHED',
        'STEP_FINISHED',
        'STEP_FINISHED',
        'RUN_FINISHED',
      ]);
      expect(run.messages).toEqual([{ id: 'm1', role: 'assistant', content: 'Thinking' }]);
    });

    it('should close steps before an upstream RUN_FINISHED, finish previous steps, and be accepted', async () => {
      const events$ = of(started('plan'), started('act'), { type: EventType.RUN_FINISHED, result: 'done' } as AgentEvent);
      const run = await runWithOracle(events$.pipe(mapStepLifecycle({ finishPrevious: true }), mapRunLifecycle({ threadId: 'thread-1', runId: 'run-1' })));
      expect(run.events.map((event) => [event.type, (event as { stepName?: string }).stepName])).toEqual([
        ['RUN_STARTED', undefined],
        ['STEP_STARTED', 'plan'],
        ['STEP_FINISHED', 'plan'],
        ['STEP_STARTED', 'act'],
        ['STEP_FINISHED', 'act'],
        ['RUN_FINISHED', undefined],
      ]);
      expect(run.result).toBe('done');
    });

    it('should end a failing run with its steps finished before RUN_ERROR', async () => {
      const events$ = concat(of(started('plan')), throwError(() => new Error('model down')));
      const output = await collect(events$.pipe(mapStepLifecycle(), toAgui({ threadId: 'thread-1', runId: 'run-1' })));
      expect(typesOf(output)).toEqual(['RUN_STARTED', 'STEP_STARTED', 'STEP_FINISHED', 'RUN_ERROR']);
      const run = await runWithOracle(of(...(output as Event[])));
      expect(run.events).toEqual(output);
    });

    it('should leave a stream with explicit, well-paired steps as it is', async () => {
      const events = [started('plan'), custom(1), finished('plan')];
      const output = await collect(of(...events).pipe(mapStepLifecycle(), map((event) => event)));
      expect(output).toEqual(events);
      await runWithOracle(of(...events).pipe(mapStepLifecycle(), toAgui({ threadId: 'thread-1', runId: 'run-1' })));
    });
  });
});
