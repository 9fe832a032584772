import { EventType } from '@ag-ui/core';
import { Observable, concat, mergeMap, of, retry, take, throwError } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import type { AgentEvent } from '../../lib/protocol/agentEvent.js';
import { AguiRxError } from '../../lib/protocol/errors.js';
import { mapStepLifecycle } from '../../operators/mapStepLifecycle.js';
import { toAgui } from '../../operators/toAgui.js';
import { withStep } from '../../operators/withStep.js';
import { collect, createTestScheduler, diagnosticsSink, typesOf } from '../support/helpers.js';
import { runWithOracle } from '../support/oracle.js';

const custom = (value: number): AgentEvent => ({ type: EventType.CUSTOM, name: 'tick', value });
const text = (delta: string): AgentEvent => ({ type: EventType.TEXT_MESSAGE_CHUNK, delta });

// s/f start and finish step 'search'; a/b are inner events.
const values = {
  a: custom(1),
  b: custom(2),
  s: { type: EventType.STEP_STARTED, stepName: 'search' } as AgentEvent,
  f: { type: EventType.STEP_FINISHED, stepName: 'search' } as AgentEvent,
};

describe('withStep', () => {
  let testScheduler: TestScheduler;

  beforeEach(() => {
    testScheduler = createTestScheduler();
  });

  it('should send STEP_STARTED on subscribe, the inner events, then STEP_FINISHED on completion', () =>
    testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
      // prettier-ignore
      const e1 =  cold('--a--b--|', values);
      // prettier-ignore
      const e1subs =   '^-------!';
      // prettier-ignore
      const expected = 's-a--b--(f|)';

      expectObservable(e1.pipe(withStep('search'))).toBe(expected, values);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    }));

  it('should send STEP_FINISHED before the error when the inner observable raises an error', () =>
    testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
      const error = new Error('tool failed');
      // prettier-ignore
      const e1 =  cold('--a--#', values, error);
      // prettier-ignore
      const e1subs =   '^----!';
      // prettier-ignore
      const expected = 's-a--(f#)';

      expectObservable(e1.pipe(withStep('search'))).toBe(expected, values, error);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    }));

  it('should wrap an empty inner observable in a step', () =>
    testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
      // prettier-ignore
      const e1 =  cold<AgentEvent>('|');
      // prettier-ignore
      const e1subs =   '(^!)';
      // prettier-ignore
      const expected = '(sf|)';

      expectObservable(e1.pipe(withStep('search'))).toBe(expected, values);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    }));

  it('should start the step and not finish it with a never inner observable', () =>
    testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
      // prettier-ignore
      const e1 =  cold<AgentEvent>('-');
      // prettier-ignore
      const e1subs =   '^';
      // prettier-ignore
      const expected = 's';

      expectObservable(e1.pipe(withStep('search'))).toBe(expected, values);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    }));

  it('should start and finish the step, then raise the error, with a throw inner observable', () =>
    testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
      // prettier-ignore
      const e1 =  cold<AgentEvent>('#');
      // prettier-ignore
      const e1subs =   '(^!)';
      // prettier-ignore
      const expected = '(sf#)';

      expectObservable(e1.pipe(withStep('search'))).toBe(expected, values);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    }));

  it('should allow unsubscribing early and explicitly, sending nothing at teardown', () =>
    testScheduler.run(({ hot, expectObservable, expectSubscriptions }) => {
      // prettier-ignore
      const e1 =  hot('--a--b--|', values);
      // prettier-ignore
      const unsub =   '----!    ';
      // prettier-ignore
      const e1subs =  '^---!    ';
      // prettier-ignore
      const expected ='s-a--    ';

      expectObservable(e1.pipe(withStep('search')), unsub).toBe(expected, values);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    }));

  it('should not break unsubscription chains when unsubscribed explicitly', () =>
    testScheduler.run(({ hot, expectObservable, expectSubscriptions }) => {
      // prettier-ignore
      const e1 =  hot('--a--b--|', values);
      // prettier-ignore
      const unsub =   '----!    ';
      // prettier-ignore
      const e1subs =  '^---!    ';
      // prettier-ignore
      const expected ='s-a--    ';

      const result = e1.pipe(
        mergeMap((event) => of(event)),
        withStep('search'),
        mergeMap((event) => of(event)),
      );

      expectObservable(result, unsub).toBe(expected, values);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    }));

  it('should send STEP_STARTED before a synchronous inner observable\'s events, and stop it when take ends the output', () => {
    let produced = 0;
    const inner$ = new Observable<AgentEvent>((subscriber) => {
      for (let count = 0; !subscriber.closed && count < 10; count++) {
        produced++;
        subscriber.next(custom(count));
      }
      subscriber.complete();
    });

    testScheduler.run(({ expectObservable }) => {
      expectObservable(inner$.pipe(withStep('search'), take(3))).toBe('(sab|)', { ...values, a: custom(0), b: custom(1) });
    });

    expect(produced).toBe(2);
  });

  it('should give each subscription its own step', () =>
    testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
      // prettier-ignore
      const e1 =  cold('--a--|', values);
      // prettier-ignore
      const e1subs =   '^----!';
      // prettier-ignore
      const expected = 's-a--(f|)';

      const result$ = e1.pipe(withStep('search'));
      expectObservable(result$).toBe(expected, values);
      expectObservable(result$).toBe(expected, values);
      expectSubscriptions(e1.subscriptions).toBe([e1subs, e1subs]);
    }));

  it('should start a new step when retried, the failed one finished first', () =>
    testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
      // prettier-ignore
      const e1 =  cold('----a---#', values);
      // prettier-ignore
      const e1subs =  ['^-------!',
                       '--------^-------!'];
      // prettier-ignore
      const expected = 's---a---(fs)a---(f#)';

      expectObservable(e1.pipe(withStep('search'), retry(1))).toBe(expected, values);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    }));

  it('should send fresh step events to each subscription', async () => {
    const step$ = of(custom(1)).pipe(withStep('search'));
    const [first, second] = [await collect(step$), await collect(step$)];
    expect(first).toEqual(second);
    expect(first[0]).not.toBe(second[0]);
    expect(first[2]).not.toBe(second[2]);
  });

  it('should tag both step events with subagentRunId, and only them', () =>
    testScheduler.run(({ cold, expectObservable }) => {
      const lanes = {
        a: custom(1),
        s: { type: EventType.STEP_STARTED, stepName: 'browse', subagentRunId: 'sub-1' } as AgentEvent,
        f: { type: EventType.STEP_FINISHED, stepName: 'browse', subagentRunId: 'sub-1' } as AgentEvent,
      };
      // prettier-ignore
      expectObservable(cold('--a--|', lanes).pipe(withStep('browse', { subagentRunId: 'sub-1' }))).toBe('s-a--(f|)', lanes);
    }));

  it('should reject a bad name or subagentRunId at call time', () => {
    expect(() => withStep('')).toThrow(new AguiRxError('INVALID_OPTIONS', `withStep needs a non-empty string step name (got ""), e.g. withStep('search').`));
    expect(() => withStep(7 as unknown as string)).toThrow(new AguiRxError('INVALID_OPTIONS', `withStep needs a non-empty string step name (got number 7), e.g. withStep('search').`));
    expect(() => withStep('search', { subagentRunId: null as unknown as string })).toThrow(
      new AguiRxError('INVALID_OPTIONS', `withStep 'subagentRunId' must be a string (got null). Omit it for a step of the parent agent.`),
    );
    try {
      withStep('');
    } catch (error) {
      expect(error).toBeInstanceOf(AguiRxError);
      expect((error as AguiRxError).code).toBe('INVALID_OPTIONS');
    }
  });

  describe('through the official client', () => {
    it('should be accepted with the step closing the text inside it', async () => {
      const events$ = concat(of(text('Let me look')), of(text(' it up')).pipe(withStep('search')), of(text('Found it')));
      const ids = ['m1', 'm2', 'm3'];
      const run = await runWithOracle(events$.pipe(toAgui({ threadId: 'thread-1', runId: 'run-1', generateId: () => ids.shift()! })));
      expect(typesOf(run.events)).toEqual([
        'RUN_STARTED',
        'TEXT_MESSAGE_START',
        'TEXT_MESSAGE_CONTENT',
        'TEXT_MESSAGE_END',
        'STEP_STARTED',
        'TEXT_MESSAGE_START',
        'TEXT_MESSAGE_CONTENT',
        'TEXT_MESSAGE_END',
        'STEP_FINISHED',
        'TEXT_MESSAGE_START',
        'TEXT_MESSAGE_CONTENT',
        'TEXT_MESSAGE_END',
        'RUN_FINISHED',
      ]);
      expect(run.messages.map((message) => message.content)).toEqual(['Let me look', ' it up', 'Found it']);
    });

    it('should be accepted nested, per owner, and when the inner observable fails (STEP_FINISHED before RUN_ERROR)', async () => {
      const inner$ = concat(of(custom(1)), throwError(() => new Error('search failed')));
      const events$ = inner$.pipe(withStep('search'), withStep('tools', { subagentRunId: 'sub-1' }), withStep('tools'));
      const sink = diagnosticsSink();
      const run = await runWithOracle(events$.pipe(mapStepLifecycle({ onDiagnostic: sink.onDiagnostic }), toAgui({ threadId: 'thread-1', runId: 'run-1' })));
      expect(run.events.map((event) => [event.type, (event as { stepName?: string }).stepName, (event as { subagentRunId?: string }).subagentRunId])).toEqual([
        ['RUN_STARTED', undefined, undefined],
        ['STEP_STARTED', 'tools', undefined],
        ['STEP_STARTED', 'tools', 'sub-1'],
        ['STEP_STARTED', 'search', undefined],
        ['CUSTOM', undefined, undefined],
        ['STEP_FINISHED', 'search', undefined],
        ['STEP_FINISHED', 'tools', 'sub-1'],
        ['STEP_FINISHED', 'tools', undefined],
        ['RUN_ERROR', undefined, undefined],
      ]);
      expect(sink.messages).toEqual([]);
    });
  });
});
