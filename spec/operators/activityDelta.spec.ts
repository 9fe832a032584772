import { EventType, type JsonPatchOperation } from '@ag-ui/core';
import { Observable, mergeMap, of, retry, take } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import type { AgentEvent } from '../../lib/protocol/agentEvent.js';
import { AguiRxError } from '../../lib/protocol/errors.js';
import { activityDelta } from '../../operators/activityDelta.js';
import { toAgui } from '../../operators/toAgui.js';
import { createTestScheduler, typesOf } from '../support/helpers.js';
import { runWithOracle } from '../support/oracle.js';

/** Pads content so that a small change travels as a delta. */
const title = `Plan the launch of the new release: ${'checklist, owners, dates and risks; '.repeat(4)}`;

const snapshot = (content: unknown, extra: Record<string, unknown> = {}): AgentEvent =>
  ({ type: EventType.ACTIVITY_SNAPSHOT, messageId: 'plan', activityType: 'plan', content, ...extra }) as AgentEvent;
const delta = (patch: JsonPatchOperation[], extra: Record<string, unknown> = {}): AgentEvent =>
  ({ type: EventType.ACTIVITY_DELTA, messageId: 'plan', activityType: 'plan', patch, ...extra }) as AgentEvent;

describe('activityDelta', () => {
  let testScheduler: TestScheduler;

  beforeEach(() => {
    testScheduler = createTestScheduler();
  });

  afterEach(() => {
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  const values = {
    a: snapshot({ title, steps: ['spec'], done: 0 }),
    b: snapshot({ title, steps: ['spec'], done: 1 }),
    c: snapshot({ title, steps: ['spec'], done: 1 }),
    d: snapshot({ title, steps: ['spec', 'ship'], done: 1 }),
    x: { type: EventType.CUSTOM, name: 'progress', value: 50 } as AgentEvent,
    A: snapshot({ title, steps: ['spec'], done: 0 }),
    B: delta([{ op: 'replace', path: '/done', value: 1 }]),
    D: delta([{ op: 'add', path: '/steps/1', value: 'ship' }]),
    F: snapshot({ title, steps: ['spec'], done: 1 }),
  };

  it('should send the first snapshot whole and later changes as deltas', () =>
    testScheduler.run(({ hot, expectObservable, expectSubscriptions }) => {
      // prettier-ignore
      const e1 =  hot('--a--b--c--d--|', values);
      // prettier-ignore
      const e1subs =  '^-------------!';
      // prettier-ignore
      const expected ='--A--B-----D--|';

      expectObservable(e1.pipe(activityDelta())).toBe(expected, values);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    }));

  it('should raise an error when the source raises an error', () =>
    testScheduler.run(({ hot, expectObservable, expectSubscriptions }) => {
      // prettier-ignore
      const e1 =  hot('--a--b--#', values);
      // prettier-ignore
      const e1subs =  '^-------!';
      // prettier-ignore
      const expected ='--A--B--#';

      expectObservable(e1.pipe(activityDelta())).toBe(expected, values);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    }));

  it('should complete with an empty source, not complete with never, and error with throw', () =>
    testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
      const empty = cold<AgentEvent>('|');
      const never = cold<AgentEvent>('-');
      const thrown = cold<AgentEvent>('#');

      expectObservable(empty.pipe(activityDelta())).toBe('|');
      expectObservable(never.pipe(activityDelta())).toBe('-');
      expectObservable(thrown.pipe(activityDelta())).toBe('#');
      expectSubscriptions(empty.subscriptions).toBe('(^!)');
      expectSubscriptions(never.subscriptions).toBe('^');
      expectSubscriptions(thrown.subscriptions).toBe('(^!)');
    }));

  it('should allow unsubscribing early and explicitly, also through a chain', () =>
    testScheduler.run(({ hot, expectObservable, expectSubscriptions }) => {
      // prettier-ignore
      const e1 =  hot('--a--b--c--d--|', values);
      // prettier-ignore
      const unsub =   '---------!      ';
      // prettier-ignore
      const e1subs = ['^--------!      ',
                      '^--------!      '];
      // prettier-ignore
      const expected ='--A--B----      ';

      expectObservable(e1.pipe(activityDelta()), unsub).toBe(expected, values);
      expectObservable(e1.pipe(mergeMap((event) => of(event)), activityDelta(), mergeMap((event) => of(event))), unsub).toBe(expected, values);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    }));

  it('should give the first events of a synchronous source and complete when take ends the output', () => {
    let subscriptions = 0;
    const synchronousObservable = new Observable<AgentEvent>((subscriber) => {
      subscriptions++;
      for (let done = 0; !subscriber.closed && done < 10; done++) subscriber.next(snapshot({ title, done }));
    });

    testScheduler.run(({ expectObservable }) => {
      expectObservable(synchronousObservable.pipe(activityDelta(), take(2))).toBe('(AB|)', {
        A: snapshot({ title, done: 0 }),
        B: delta([{ op: 'replace', path: '/done', value: 1 }]),
      });
    });

    expect(subscriptions).toBe(1);
  });

  it('should keep separate bases per subscription and start fresh when retried', () =>
    testScheduler.run(({ cold, hot, expectObservable, expectSubscriptions }) => {
      // prettier-ignore
      const e1 =  hot('--a--b--d--|', values);
      // prettier-ignore
      const sub2 =    '----^-------';
      const result = e1.pipe(activityDelta());
      expectObservable(result).toBe('--A--B--D--|', values);
      expectObservable(result, sub2).toBe('-----F--D--|', values);

      // prettier-ignore
      const e2 =  cold('--a--b--#        ', values);
      // prettier-ignore
      const e2subs = ['^-------!        ',
                      '--------^-------!'];
      expectObservable(e2.pipe(activityDelta(), retry(1))).toBe('--A--B----A--B--#', values);
      expectSubscriptions(e2.subscriptions).toBe(e2subs);
    }));

  it('should emit in the same frame, in order, and pass other events through untouched', () =>
    testScheduler.run(({ hot, expectObservable }) => {
      // prettier-ignore
      const e1 =  hot('--(axb)--(dx)--|', values);
      // prettier-ignore
      const expected ='--(AxB)--(Dx)--|';

      expectObservable(e1.pipe(activityDelta())).toBe(expected, values);
    }));

  it('should track each messageId on its own', () =>
    testScheduler.run(({ hot, expectObservable }) => {
      const other = (done: number) => snapshot({ title, done }, { messageId: 'other' });
      // prettier-ignore
      const e1 =  hot('--a--o--b--p--|', { ...values, o: other(0), p: other(5) });
      // prettier-ignore
      const expected ='--A--o--B--P--|';

      expectObservable(e1.pipe(activityDelta())).toBe(expected, {
        ...values,
        o: other(0),
        P: delta([{ op: 'replace', path: '/done', value: 5 }], { messageId: 'other' }),
      });
    }));

  it('should send a snapshot when it is no larger than the patch, or its activityType or subagentRunId changed', () =>
    testScheduler.run(({ hot, expectObservable }) => {
      const small = { s: snapshot({ n: 1 }), t: snapshot({ n: 2 }), u: snapshot({ title, steps: ['spec'], done: 1 }, { activityType: 'checklist' }), v: snapshot({ title, steps: ['spec'], done: 1 }, { activityType: 'checklist', subagentRunId: 'sub-1' }) };
      // prettier-ignore
      const e1 =  hot('--s--t--a--u--v--|', { ...values, ...small });
      // prettier-ignore
      const expected ='--s--t--A--u--v--|';

      expectObservable(e1.pipe(activityDelta())).toBe(expected, { ...values, ...small });
    }));

  it('should pass replace: false snapshots as they are, setting the base of a new message only', () =>
    testScheduler.run(({ hot, expectObservable }) => {
      const keep = { k: snapshot({ title, steps: [], done: 9 }, { replace: false }) };
      // prettier-ignore
      const e1 =  hot('--k--a--k--b--|', { ...values, ...keep });
      // prettier-ignore
      const expected ='--k--A--k--B--|';

      // The first `k` creates the message, so `a` travels as a delta against it; the second `k` passes but leaves the base alone.
      expectObservable(e1.pipe(activityDelta())).toBe(expected, {
        ...values,
        ...keep,
        A: delta([
          { op: 'replace', path: '/done', value: 0 },
          { op: 'add', path: '/steps/0', value: 'spec' },
        ]),
      });
    }));

  it('should apply upstream deltas to the base, and pass deltas of unknown messages untracked', () =>
    testScheduler.run(({ hot, expectObservable }) => {
      const up = { p: delta([{ op: 'replace', path: '/done', value: 1 }]), q: delta([{ op: 'add', path: '/x', value: 1 }], { messageId: 'unknown' }) };
      // prettier-ignore
      const e1 =  hot('--a--p--c--q--d--|', { ...values, ...up });
      // prettier-ignore
      const expected ='--A--p-----q--D--|';

      expectObservable(e1.pipe(activityDelta())).toBe(expected, { ...values, ...up });
    }));

  it('should forget every base at MESSAGES_SNAPSHOT', () =>
    testScheduler.run(({ hot, expectObservable }) => {
      const s = { type: EventType.MESSAGES_SNAPSHOT, messages: [] } as AgentEvent;
      // prettier-ignore
      const e1 =  hot('--a--s--b--|', { ...values, s });
      // prettier-ignore
      const expected ='--A--s--F--|';

      expectObservable(e1.pipe(activityDelta())).toBe(expected, { ...values, s });
    }));

  it('should pass activities of other types as they are when activityTypes is given', () =>
    testScheduler.run(({ hot, expectObservable }) => {
      // prettier-ignore
      const e1 =  hot('--a--b--|', values);
      // prettier-ignore
      const expected ='--A--F--|';

      expectObservable(e1.pipe(activityDelta({ activityTypes: ['a2ui-surface'] }))).toBe(expected, values);
    }));

  it.each([
    ['a prototype path', [{ op: 'add', path: '/__proto__/polluted', value: true }], new AguiRxError('INVALID_PATCH', `ACTIVITY_DELTA operation 0 (add /__proto__/polluted) goes through '__proto__', which could change object prototypes; it was refused. Rename that key in your state.`)],
    ['a constructor path', [{ op: 'add', path: '/constructor/prototype/polluted', value: true }], new AguiRxError('INVALID_PATCH', `ACTIVITY_DELTA operation 0 (add /constructor/prototype/polluted) goes through 'constructor', which could change object prototypes; it was refused. Rename that key in your state.`)],
    ['a malformed operation', [{ op: 'add', path: '/missing' }], new AguiRxError('INVALID_ACTIVITY_DELTA', `ACTIVITY_DELTA 'plan' is not a valid RFC 6902 patch: operation 0 (add /missing) failed with OPERATION_VALUE_REQUIRED: Operation \`value\` property is not present (applicable in \`add\`, \`replace\` and \`test\` operations). Give each operation the members RFC 6902 requires.`)],
    ['a root replaced by a string', [{ op: 'replace', path: '', value: 'x' }], new AguiRxError('INVALID_ACTIVITY_DELTA', `ACTIVITY_DELTA would make the content of activity 'plan' "x"; activity content must stay an object.`)],
  ] as [string, JsonPatchOperation[], AguiRxError][])('should fail for an upstream delta with %s', (_, ops, error) =>
    testScheduler.run(({ hot, expectObservable, expectSubscriptions }) => {
      const bad = { p: delta(ops) };
      // prettier-ignore
      const e1 =  hot('--a--p--b--|', { ...values, ...bad });
      // prettier-ignore
      const e1subs =  '^----!      ';
      // prettier-ignore
      const expected ='--A--#      ';

      expectObservable(e1.pipe(activityDelta())).toBe(expected, values, error);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    }));

  it('should drop a delta that does not apply, keeping the content, and report it (AG-UI spec 1.1, Snapshots and Deltas)', () =>
    testScheduler.run(({ hot, expectObservable }) => {
      const diagnostics: string[] = [];
      const bad = { p: delta([{ op: 'replace', path: '/missing', value: 1 }]) };
      // prettier-ignore
      const e1 =  hot('--a--p--b--|', { ...values, ...bad });
      // prettier-ignore
      const expected ='--A-----B--|';

      expectObservable(e1.pipe(activityDelta({ onDiagnostic: (d) => void diagnostics.push(d.message) }))).toBe(expected, values);
      testScheduler.flush();
      expect(diagnostics).toEqual([
        "Dropped an ACTIVITY_DELTA that does not apply to activity 'plan', whose content is kept: operation 0 (replace /missing) failed with OPERATION_PATH_UNRESOLVABLE: Cannot perform the operation at a path that does not exist. Send an ACTIVITY_SNAPSHOT first, or patch only paths the content has.",
      ]);
    }));

  it('should drop operations of an unknown op and apply the others, and send nothing when none is left', () =>
    testScheduler.run(({ hot, expectObservable }) => {
      const diagnostics: string[] = [];
      const mixed = {
        m: delta([{ op: 'merge', path: '/done', value: 5 } as unknown as JsonPatchOperation, { op: 'replace', path: '/done', value: 1 }]),
        u: delta([{ op: 'merge', path: '/done', value: 5 } as unknown as JsonPatchOperation]),
      };
      // prettier-ignore
      const e1 =  hot('--a--m--u--b--|', { ...values, ...mixed });
      // prettier-ignore
      const expected ='--A--B--------|';

      expectObservable(e1.pipe(activityDelta({ onDiagnostic: (d) => void diagnostics.push(d.message) }))).toBe(expected, values);
      testScheduler.flush();
      expect(diagnostics).toHaveLength(2);
      expect(diagnostics[0]).toMatch(/^Stripped what AG-UI does not describe from ACTIVITY_DELTA/);
    }));

  it('should send whole a snapshot whose diff would go through a __proto__ key', () =>
    testScheduler.run(({ hot, expectObservable }) => {
      const own = { p: snapshot(JSON.parse(`{"title":"${title}","__proto__":{"polluted":true}}`)) };
      // prettier-ignore
      const e1 =  hot('--a--p--|', { ...values, ...own });
      // prettier-ignore
      const expected ='--A--p--|';

      expectObservable(e1.pipe(activityDelta())).toBe(expected, { ...values, ...own });
    }));

  it('should fail with INVALID_ACTIVITY for content that is not a JSON object', () =>
    testScheduler.run(({ hot, expectObservable }) => {
      const circular: Record<string, unknown> = {};
      circular.self = circular;
      // prettier-ignore
      const e1 =  hot('--n--|', { n: snapshot([1]) });
      // prettier-ignore
      const e2 =  hot('--n--|', { n: snapshot(circular) });

      expectObservable(e1.pipe(activityDelta())).toBe('--#', {}, new AguiRxError('INVALID_ACTIVITY', `ACTIVITY_SNAPSHOT 'plan' has 'content: an array of 1', but it must be a JSON object.`));
      let message = '';
      try {
        JSON.stringify(circular);
      } catch (error) {
        message = (error as Error).message.split('\n')[0];
      }
      expectObservable(e2.pipe(activityDelta())).toBe('--#', {}, new AguiRxError('INVALID_ACTIVITY', `ACTIVITY_SNAPSHOT 'plan' content is not JSON-serialisable: ${message}. Content must be plain JSON: convert BigInts to strings or numbers and break reference cycles.`));
    }));

  describe('conformance', () => {
    const run = (events: AgentEvent[]) => runWithOracle(of(...events).pipe(activityDelta(), toAgui({ threadId: 'thread-1', runId: 'run-1' })));

    it('should build the last content of each activity from snapshots, deltas and upstream patches', async () => {
      const events = [
        values.a,
        values.b,
        delta([{ op: 'add', path: '/steps/-', value: 'review' }]),
        snapshot({ title, steps: ['spec', 'review', 'ship'], done: 2 }),
        snapshot({ title, steps: ['spec', 'review', 'ship'], done: 2 }, { messageId: 'other', activityType: 'progress' }),
        snapshot({ title, steps: ['review', 'ship'], done: 3 }, { messageId: 'other', activityType: 'progress' }),
        snapshot({ title: 'Done', extra: { nested: true } }),
      ];

      const result = await run(events);

      expect(result.messages).toEqual([
        { id: 'plan', role: 'activity', activityType: 'plan', content: { title: 'Done', extra: { nested: true } } },
        { id: 'other', role: 'activity', activityType: 'progress', content: { title, steps: ['review', 'ship'], done: 3 } },
      ]);
      expect(typesOf(result.events)).toEqual([
        EventType.RUN_STARTED,
        EventType.ACTIVITY_SNAPSHOT,
        EventType.ACTIVITY_DELTA,
        EventType.ACTIVITY_DELTA,
        EventType.ACTIVITY_DELTA,
        EventType.ACTIVITY_SNAPSHOT,
        EventType.ACTIVITY_DELTA,
        EventType.ACTIVITY_SNAPSHOT,
        EventType.RUN_FINISHED,
      ]);
    });

    it('should keep deltas of a subagent activity on its subagentRunId', async () => {
      const sub = { subagentRunId: 'sub-1' };
      const events: AgentEvent[] = [
        { type: EventType.SUBAGENT_STARTED, subagentRunId: 'sub-1', name: 'planner' } as AgentEvent,
        snapshot({ title, done: 0 }, sub),
        snapshot({ title, done: 1 }, sub),
        { type: EventType.SUBAGENT_FINISHED, subagentRunId: 'sub-1', outcome: { type: 'success' } } as AgentEvent,
      ];

      const result = await run(events);

      expect(result.messages).toEqual([{ id: 'plan', role: 'activity', activityType: 'plan', content: { title, done: 1 }, subagentRunId: 'sub-1' }]);
      expect(typesOf(result.events)).toContain(EventType.ACTIVITY_DELTA);
    });

    it('should end the run with RUN_ERROR for a prototype path and leave Object.prototype untouched', async () => {
      const result = await run([values.a, delta([{ op: 'add', path: '/__proto__/polluted', value: true }])]);

      expect(result.events[result.events.length - 1]).toMatchObject({ type: EventType.RUN_ERROR, code: 'INVALID_PATCH' });
      expect(result.messages).toEqual([{ id: 'plan', role: 'activity', activityType: 'plan', content: { title, steps: ['spec'], done: 0 } }]);
    });
  });
});
