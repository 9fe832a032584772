import { EventType, type Event, type JsonPatchOperation, type RunAgentInput } from '@ag-ui/core';
import jsonpatch, { type Operation } from 'fast-json-patch';
import { Observable, Subject, map, mergeMap, of, retry, take } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import type { AgentEvent } from '../../lib/protocol/agentEvent.js';
import type { AguiDiagnostic } from '../../lib/protocol/diagnostics.js';
import { AguiRxError } from '../../lib/protocol/errors.js';
import { mapRunLifecycle } from '../../operators/mapRunLifecycle.js';
import { stateDelta, type StateDeltaOptions } from '../../operators/stateDelta.js';
import { collect, createTestScheduler, typesOf } from '../support/helpers.js';
import { runWithOracle } from '../support/oracle.js';

/** A whole-state event, as an agent emits it. */
const snapshot = (state: unknown): AgentEvent => ({ type: EventType.STATE_SNAPSHOT, snapshot: state });

/** A patch event, as an agent emits it or as `stateDelta` sends it. */
const delta = (ops: JsonPatchOperation[]): AgentEvent => ({ type: EventType.STATE_DELTA, delta: ops });

const RUN_STARTED = { type: EventType.RUN_STARTED, threadId: 'thread-1', runId: 'run-1' } as Event;
const RUN_FINISHED = { type: EventType.RUN_FINISHED, threadId: 'thread-1', runId: 'run-1' } as Event;

/** Pads states so that a small change travels as a delta (a patch smaller than the snapshot). */
const title = `Plan the launch of the new release: ${'checklist, owners, dates and risks; '.repeat(4)}`;

/** The state a client reaches by applying `events` to `initial`, as the client does. */
function replay(events: readonly AgentEvent[], initial: unknown = {}): unknown {
  return events.reduce<unknown>((state, event) => {
    if (event.type === EventType.STATE_SNAPSHOT) return event.snapshot;
    if (event.type === EventType.STATE_DELTA) return jsonpatch.applyPatch(state, event.delta as Operation[], true, false).newDocument;
    return state;
  }, initial);
}

/** What the client sees: the JSON of a value. */
const json = (value: unknown): unknown => JSON.parse(JSON.stringify(value));

/** The message of the error JSON.stringify raises for `value` (engine wording differs between Node versions). */
function stringifyError(value: unknown): string {
  try {
    JSON.stringify(value);
  } catch (error) {
    return (error as Error).message.split('\n')[0];
  }
  throw new Error('expected JSON.stringify to throw');
}

const deltaError = (message: string) => new AguiRxError('INVALID_STATE_DELTA', message);
const patchError = (message: string) => new AguiRxError('INVALID_PATCH', message);
const stateError = (message: string) => new AguiRxError('INVALID_STATE', message);

const hint = 'Send a STATE_SNAPSHOT first, or patch only paths the state has.';

describe('stateDelta', () => {
  let testScheduler: TestScheduler;

  beforeEach(() => {
    testScheduler = createTestScheduler();
  });

  afterEach(() => {
    // No spec may leave a polluted prototype behind, whatever it tried.
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  const values = {
    a: snapshot({ title, todos: ['write spec'], count: 0 }),
    b: snapshot({ title, todos: ['write spec'], count: 1 }),
    c: snapshot({ title, todos: ['write spec'], count: 1 }),
    d: snapshot({ title, todos: ['write spec', 'ship'], count: 1 }),
    x: { type: EventType.CUSTOM, name: 'progress', value: 50 } as AgentEvent,
    A: snapshot({ title, todos: ['write spec'], count: 0 }),
    B: delta([{ op: 'replace', path: '/count', value: 1 }]),
    D: delta([{ op: 'add', path: '/todos/1', value: 'ship' }]),
    // `b` sent whole: the first snapshot a subscription sees.
    F: snapshot({ title, todos: ['write spec'], count: 1 }),
  };

  it('should send the first snapshot whole and later changes as deltas', () =>
    testScheduler.run(({ hot, expectObservable, expectSubscriptions }) => {
      // prettier-ignore
      const e1 =  hot('--a--b--c--d--|', values);
      // prettier-ignore
      const e1subs =  '^-------------!';
      // prettier-ignore
      const expected ='--A--B-----D--|';

      expectObservable(e1.pipe(stateDelta())).toBe(expected, values);
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

      expectObservable(e1.pipe(stateDelta())).toBe(expected, values);
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

      expectObservable(e1.pipe(stateDelta())).toBe(expected);
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

      expectObservable(e1.pipe(stateDelta())).toBe(expected);
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

      expectObservable(e1.pipe(stateDelta())).toBe(expected);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    }));

  it('should allow unsubscribing early and explicitly', () =>
    testScheduler.run(({ hot, expectObservable, expectSubscriptions }) => {
      // prettier-ignore
      const e1 =  hot('--a--b--c--d--|', values);
      // prettier-ignore
      const unsub =   '---------!      ';
      // prettier-ignore
      const e1subs =  '^--------!      ';
      // prettier-ignore
      const expected ='--A--B----      ';

      expectObservable(e1.pipe(stateDelta()), unsub).toBe(expected, values);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    }));

  it('should not break unsubscription chains when unsubscribed explicitly', () =>
    testScheduler.run(({ hot, expectObservable, expectSubscriptions }) => {
      // prettier-ignore
      const e1 =  hot('--a--b--c--d--|', values);
      // prettier-ignore
      const unsub =   '---------!      ';
      // prettier-ignore
      const e1subs =  '^--------!      ';
      // prettier-ignore
      const expected ='--A--B----      ';

      const result = e1.pipe(
        mergeMap((event) => of(event)),
        stateDelta(),
        mergeMap((event) => of(event)),
      );

      expectObservable(result, unsub).toBe(expected, values);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    }));

  it('should give the first events of a synchronous source and complete when take ends the output', () => {
    let subscriptions = 0;
    const synchronousObservable = new Observable<AgentEvent>((subscriber) => {
      subscriptions++;
      for (let count = 0; !subscriber.closed && count < 10; count++) subscriber.next(snapshot({ title, count }));
    });

    testScheduler.run(({ expectObservable }) => {
      // prettier-ignore
      const expected = '(ABC|)';

      expectObservable(synchronousObservable.pipe(stateDelta(), take(3))).toBe(expected, {
        A: snapshot({ title, count: 0 }),
        B: delta([{ op: 'replace', path: '/count', value: 1 }]),
        C: delta([{ op: 'replace', path: '/count', value: 2 }]),
      });
    });

    expect(subscriptions).toBe(1);
  });

  it('should keep a separate base for each subscription', () =>
    testScheduler.run(({ hot, expectObservable, expectSubscriptions }) => {
      // prettier-ignore
      const e1 =  hot('--a--b--d--|', values);
      // prettier-ignore
      const sub2 =    '----^-------';
      // prettier-ignore
      const e1subs = ['^----------!',
                      '----^------!'];
      // prettier-ignore
      const expected1='--A--B--D--|';
      // prettier-ignore
      const expected2='-----F--D--|';

      const result = e1.pipe(stateDelta());

      expectObservable(result).toBe(expected1, values);
      // The late subscriber's first state is `b`: it is sent whole, not as a delta against the first subscriber's base.
      expectObservable(result, sub2).toBe(expected2, values);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    }));

  it('should start from a fresh base when retried', () =>
    testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
      // prettier-ignore
      const e1 =  cold('--a--b--#                ', values);
      // prettier-ignore
      const e1subs =  ['^-------!                ',
                       '--------^-------!        '];
      // prettier-ignore
      const expected = '--A--B----A--B--#        ';

      expectObservable(e1.pipe(stateDelta(), retry(1))).toBe(expected, values);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    }));

  it('should emit in the same frame as the events that caused it, in order', () =>
    testScheduler.run(({ hot, expectObservable, expectSubscriptions }) => {
      // prettier-ignore
      const e1 =  hot('--(axb)--(dx)--|', values);
      // prettier-ignore
      const e1subs =  '^--------------!';
      // prettier-ignore
      const expected ='--(AxB)--(Dx)--|';

      expectObservable(e1.pipe(stateDelta())).toBe(expected, values);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    }));

  it('should pass other events through untouched', () =>
    testScheduler.run(({ hot, expectObservable }) => {
      // prettier-ignore
      const e1 =  hot('--x--a--x--|', values);
      // prettier-ignore
      const expected ='--x--A--x--|';

      expectObservable(e1.pipe(stateDelta())).toBe(expected, values);
    }));

  it('should diff the first snapshot against initialState', () =>
    testScheduler.run(({ hot, expectObservable }) => {
      // prettier-ignore
      const e1 =  hot('--b--d--|', values);
      // prettier-ignore
      const expected ='--B--D--|';

      expectObservable(e1.pipe(stateDelta({ initialState: { title, todos: ['write spec'], count: 0 } }))).toBe(expected, values);
    }));

  it('should send nothing when the first snapshot equals initialState', () =>
    testScheduler.run(({ hot, expectObservable }) => {
      // prettier-ignore
      const e1 =  hot('--a--b--|', values);
      // prettier-ignore
      const expected ='-----B--|';

      expectObservable(e1.pipe(stateDelta({ initialState: { title, todos: ['write spec'], count: 0 } }))).toBe(expected, values);
    }));

  it('should send the first snapshot whole when it is smaller than the patch from initialState', () =>
    testScheduler.run(({ hot, expectObservable }) => {
      // prettier-ignore
      const e1 =  hot('--s--|', { s: snapshot({ a: 1 }) });
      // prettier-ignore
      const expected ='--S--|';

      expectObservable(e1.pipe(stateDelta({ initialState: { title, todos: ['write spec'], count: 0 } }))).toBe(expected, {
        S: snapshot({ a: 1 }),
      });
    }));

  it('should take the base from RUN_STARTED input.state when there is no initialState', () =>
    testScheduler.run(({ hot, expectObservable }) => {
      const input: RunAgentInput = {
        threadId: 'thread-1',
        runId: 'run-1',
        state: { title, todos: ['write spec'], count: 0 },
        messages: [],
        tools: [],
        context: [],
        forwardedProps: {},
      };
      const r = { type: EventType.RUN_STARTED, input } as AgentEvent;
      // prettier-ignore
      const e1 =  hot('--r--b--|', { ...values, r });
      // prettier-ignore
      const expected ='--r--B--|';

      expectObservable(e1.pipe(stateDelta())).toBe(expected, { ...values, r });
    }));

  it('should send exact fast-json-patch operations for nested changes, removals and array shrinking', () =>
    testScheduler.run(({ hot, expectObservable }) => {
      // Long enough that this seven-operation patch is still smaller than the snapshot.
      const notes = 'Long-lived notes that make the state larger than the patch. '.repeat(5);
      const s = {
        s: snapshot({ notes, user: { name: 'Ana', age: 30, city: 'Rome' }, tags: ['x', 'y', 'z'], flag: true }),
        t: snapshot({ notes, user: { name: 'Ana', age: 31, team: 'core' }, tags: ['x'], extra: { nested: { deep: 1 } } }),
      };
      // prettier-ignore
      const e1 =  hot('--s--t--|', s);
      // prettier-ignore
      const expected ='--S--T--|';

      expectObservable(e1.pipe(stateDelta())).toBe(expected, {
        S: s.s,
        T: delta([
          { op: 'remove', path: '/flag' },
          { op: 'remove', path: '/tags/2' },
          { op: 'remove', path: '/tags/1' },
          { op: 'remove', path: '/user/city' },
          { op: 'replace', path: '/user/age', value: 31 },
          { op: 'add', path: '/user/team', value: 'core' },
          { op: 'add', path: '/extra', value: { nested: { deep: 1 } } },
        ]),
      });
    }));

  it('should send a snapshot when the patch would be larger than the snapshot', () =>
    testScheduler.run(({ hot, expectObservable }) => {
      // Every key changed: three replace operations (111 characters) against a 19-character snapshot.
      const s = { s: snapshot({ a: 1, b: 2, c: 3 }), t: snapshot({ a: 4, b: 5, c: 6 }), u: snapshot({ a: 4, b: 5, c: 7 }) };
      expect(JSON.stringify(jsonpatch.compare({ a: 1, b: 2, c: 3 }, { a: 4, b: 5, c: 6 })).length).toBeGreaterThan(JSON.stringify({ a: 4, b: 5, c: 6 }).length);
      // prettier-ignore
      const e1 =  hot('--s--t--u--|', s);
      // prettier-ignore
      const expected ='--S--T--U--|';

      expectObservable(e1.pipe(stateDelta())).toBe(expected, {
        S: snapshot({ a: 1, b: 2, c: 3 }),
        T: snapshot({ a: 4, b: 5, c: 6 }),
        // Even one replace operation is longer than this tiny state.
        U: snapshot({ a: 4, b: 5, c: 7 }),
      });
    }));

  it('should emit nothing for a snapshot equal to the base', () =>
    testScheduler.run(({ hot, expectObservable }) => {
      const s = {
        ...values,
        // Same JSON as `a`: a fresh object, keys in another order, and an undefined-valued key JSON drops.
        e: snapshot({ count: 0, todos: ['write spec'], title, note: undefined }),
      };
      // prettier-ignore
      const e1 =  hot('--a--a--e--b--c--|', s);
      // prettier-ignore
      const expected ='--A--------B-----|';

      expectObservable(e1.pipe(stateDelta())).toBe(expected, s);
    }));

  it('should send a snapshot when the state changes between an array, an object and a primitive', () =>
    testScheduler.run(({ hot, expectObservable }) => {
      // fast-json-patch `compare` cannot express these: [] -> {} gives no operations, {} -> null throws.
      const s = {
        p: snapshot([]),
        q: snapshot({ a: 1 }),
        r: snapshot(null),
        n: snapshot(5),
        o: snapshot([1]),
      };
      // prettier-ignore
      const e1 =  hot('--p--q--r--r--n--n--o--|', s);
      // prettier-ignore
      const expected ='--p--q--r-----n-----o--|';

      expectObservable(e1.pipe(stateDelta())).toBe(expected, s);
    }));

  it('should send a snapshot rather than a delta whose path goes through a __proto__ key of the state', async () => {
    const notes = 'Long-lived notes that make the state larger than the patch. '.repeat(5);
    // JSON.parse makes `__proto__` an own key; a patch along it is refused by clients (fast-json-patch bans it).
    const next = JSON.parse(`{"notes": ${JSON.stringify(notes)}, "__proto__": {"x": 1}}`);

    const events = await collect(of(snapshot({ notes }), snapshot(next)).pipe(stateDelta()));

    expect(typesOf(events)).toEqual([EventType.STATE_SNAPSHOT, EventType.STATE_SNAPSHOT]);
    expect(JSON.stringify((events[1] as { snapshot: unknown }).snapshot)).toBe(JSON.stringify(next));
    expect(({} as Record<string, unknown>).x).toBeUndefined();
  });

  it('should diff against what was sent when the producer mutates one object in place', async () => {
    const state = { title, items: [] as { id: number; label: string }[], count: 0 };
    const events$ = new Observable<AgentEvent>((subscriber) => {
      subscriber.next(snapshot(state));
      state.items.push({ id: 1, label: 'one' });
      state.count = 1;
      subscriber.next(snapshot(state));
      subscriber.next(snapshot(state));
      state.items[0].label = 'uno';
      subscriber.next(snapshot(state));
      subscriber.complete();
    });

    const events = await collect(events$.pipe(stateDelta()));

    expect(events).toEqual([
      snapshot({ title, items: [], count: 0 }),
      delta([
        { op: 'replace', path: '/count', value: 1 },
        { op: 'add', path: '/items/0', value: { id: 1, label: 'one' } },
      ]),
      delta([{ op: 'replace', path: '/items/0/label', value: 'uno' }]),
    ]);
  });

  it('should not alias emitted events to the producer state', async () => {
    const state = { title, items: [] as { id: number; label: string }[], count: 0 };
    const small = { a: 1, b: 2, c: 3 };
    const events$ = new Observable<AgentEvent>((subscriber) => {
      subscriber.next(snapshot(state));
      state.items.push({ id: 1, label: 'one' });
      subscriber.next(snapshot(state));
      subscriber.next(snapshot(small));
      subscriber.complete();
    });

    const events = await collect(events$.pipe(stateDelta()));
    // The producer keeps changing its objects after they were emitted.
    state.count = 99;
    state.items[0].label = 'changed';
    small.a = 99;

    expect((events[0] as { snapshot: unknown }).snapshot).not.toBe(state);
    expect(events).toEqual([
      snapshot({ title, items: [], count: 0 }),
      delta([{ op: 'add', path: '/items/0', value: { id: 1, label: 'one' } }]),
      snapshot({ a: 1, b: 2, c: 3 }),
    ]);
  });

  it('should send operations that apply when an array is created and later appended to', async () => {
    const states = [
      { title, count: 0 },
      { title, count: 0, list: [] },
      { title, count: 0, list: [1] },
      { title, count: 0, list: [1, { x: 2 }, 3] },
      { title, count: 0, list: [1, { x: 2, y: [] }, 3, 'four'] },
    ];

    const events = await collect(of(...states.map(snapshot)).pipe(stateDelta()));

    expect(events).toEqual([
      snapshot(states[0]),
      delta([{ op: 'add', path: '/list', value: [] }]),
      delta([{ op: 'add', path: '/list/0', value: 1 }]),
      delta([
        { op: 'add', path: '/list/1', value: { x: 2 } },
        { op: 'add', path: '/list/2', value: 3 },
      ]),
      delta([
        { op: 'add', path: '/list/1/y', value: [] },
        { op: 'add', path: '/list/3', value: 'four' },
      ]),
    ]);
    for (let n = 1; n <= events.length; n++) {
      expect(replay(events.slice(0, n))).toEqual(states[n - 1]);
    }
  });

  it('should apply an upstream STATE_DELTA to the base and pass it through', () =>
    testScheduler.run(({ hot, expectObservable }) => {
      const s = {
        a: snapshot({ title, todos: ['write spec'], count: 0 }),
        u: delta([{ op: 'replace', path: '/count', value: 5 }]),
        b: snapshot({ title, todos: ['write spec', 'ship'], count: 5 }),
        A: snapshot({ title, todos: ['write spec'], count: 0 }),
        // `count` is already 5 on the client: only the new todo travels.
        D: delta([{ op: 'add', path: '/todos/1', value: 'ship' }]),
      };
      // prettier-ignore
      const e1 =  hot('--a--u--b--|', s);
      // prettier-ignore
      const expected ='--A--u--D--|';

      expectObservable(e1.pipe(stateDelta())).toBe(expected, s);
    }));

  it('should apply an upstream STATE_DELTA that comes before any snapshot to an empty state', () =>
    testScheduler.run(({ hot, expectObservable }) => {
      const s = {
        u: delta([{ op: 'add', path: '/count', value: 1 }]),
        b: snapshot({ count: 1 }),
        c: snapshot({ count: 2 }),
        C: snapshot({ count: 2 }),
      };
      // prettier-ignore
      const e1 =  hot('--u--b--c--|', s);
      // prettier-ignore
      const expected ='--u-----C--|';

      expectObservable(e1.pipe(stateDelta())).toBe(expected, s);
    }));

  it('should apply an upstream STATE_DELTA with every RFC 6902 operation', async () => {
    const ops: JsonPatchOperation[] = [
      { op: 'test', path: '/count', value: 0 },
      { op: 'add', path: '/todos/-', value: 'ship' },
      { op: 'replace', path: '/count', value: 2 },
      { op: 'copy', from: '/todos/0', path: '/first' },
      { op: 'move', from: '/first', path: '/pinned' },
      { op: 'remove', path: '/title' },
      { op: 'add', path: '/a~1b', value: 'slash key' },
    ];

    const events = await collect(of(snapshot({ title, todos: ['write spec'], count: 0 }), delta(ops), snapshot({ todos: ['write spec', 'ship'], count: 2, pinned: 'write spec', 'a/b': 'slash key' })).pipe(stateDelta()));

    // The later snapshot equals the patched base: nothing more is sent.
    expect(events).toEqual([snapshot({ title, todos: ['write spec'], count: 0 }), delta(ops)]);
  });

  // AG-UI spec 1.1, Snapshots and Deltas: a well-formed patch that does not apply is warned about and skipped, the state kept.
  it.each([
    ['a replace that targets a missing key', [{ op: 'replace', path: '/missing', value: 1 }], `operation 0 (replace /missing) failed with OPERATION_PATH_UNRESOLVABLE: Cannot perform the operation at a path that does not exist`],
    ['an append to a missing array', [{ op: 'add', path: '/missing/-', value: 'x' }], 'operation 0 (add /missing/-) failed with OPERATION_PATH_CANNOT_ADD: Cannot perform an `add` operation at the desired path'],
    ['a test operation that fails', [{ op: 'replace', path: '/count', value: 7 }, { op: 'test', path: '/title', value: 'Another title' }], 'operation 1 (test /title) failed with TEST_OPERATION_FAILED: Test operation failed'],
    [
      'a longer patch, naming the operation that failed, not the first one',
      [{ op: 'replace', path: '/count', value: 7 }, { op: 'add', path: '/todos/-', value: 'ship' }, { op: 'remove', path: '/owner' }],
      'operation 2 (remove /owner) failed with OPERATION_PATH_UNRESOLVABLE: Cannot perform the operation at a path that does not exist',
    ],
  ] as [string, JsonPatchOperation[], string][])('should drop, with a diagnostic, %s, keep the state whole and go on', (_, ops, failure) =>
    testScheduler.run(({ hot, expectObservable, expectSubscriptions, flush }) => {
      const diagnostics: AguiDiagnostic[] = [];
      const s = { ...values, u: delta(ops) };
      // `b` is diffed against the state before the patch: none of its operations applied.
      // prettier-ignore
      const e1 =  hot('--a--u--b--|', s);
      // prettier-ignore
      const e1subs =  '^----------!';
      // prettier-ignore
      const expected ='--A-----B--|';

      expectObservable(e1.pipe(stateDelta({ onDiagnostic: (d) => void diagnostics.push(d) }))).toBe(expected, s);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
      flush();
      expect(diagnostics).toEqual([{ message: `Dropped a STATE_DELTA that does not apply to the current state, which is kept: ${failure}. ${hint}`, event: s.u }]);
    }));

  it('should fail with INVALID_STATE_DELTA when an add operation has no value (a malformed operation)', () =>
    testScheduler.run(({ hot, expectObservable }) => {
      const s = { ...values, u: delta([{ op: 'add', path: '/owner' } as unknown as JsonPatchOperation]) };
      // prettier-ignore
      const e1 =  hot('--a--u--|', s);
      // prettier-ignore
      const expected ='--A--#   ';

      expectObservable(e1.pipe(stateDelta())).toBe(
        expected,
        s,
        deltaError(
          'STATE_DELTA is not a valid RFC 6902 patch: operation 0 (add /owner) failed with OPERATION_VALUE_REQUIRED: Operation `value` property is not present (applicable in `add`, `replace` and `test` operations). Give each operation the members RFC 6902 requires.',
        ),
      );
    }));

  it.each([
    ['path through __proto__', { op: 'add', path: '/__proto__/polluted', value: true }, `STATE_DELTA operation 0 (add /__proto__/polluted) goes through '__proto__', which could change object prototypes; it was refused. Rename that key in your state.`],
    ['path through constructor/prototype', { op: 'add', path: '/constructor/prototype/polluted', value: true }, `STATE_DELTA operation 0 (add /constructor/prototype/polluted) goes through 'constructor', which could change object prototypes; it was refused. Rename that key in your state.`],
    ['path through prototype', { op: 'replace', path: '/todos/prototype', value: true }, `STATE_DELTA operation 0 (replace /todos/prototype) goes through 'prototype', which could change object prototypes; it was refused. Rename that key in your state.`],
    ['copy from __proto__', { op: 'copy', from: '/__proto__', path: '/polluted' }, `STATE_DELTA operation 0 (copy /__proto__) goes through '__proto__', which could change object prototypes; it was refused. Rename that key in your state.`],
    ['move from constructor', { op: 'move', from: '/constructor', path: '/polluted' }, `STATE_DELTA operation 0 (move /constructor) goes through 'constructor', which could change object prototypes; it was refused. Rename that key in your state.`],
  ] as [string, JsonPatchOperation, string][])('should fail with INVALID_PATCH for a %s and leave Object.prototype untouched', (_, operation, message) =>
    testScheduler.run(({ hot, expectObservable, expectSubscriptions }) => {
      const s = { ...values, u: delta([operation]) };
      // prettier-ignore
      const e1 =  hot('--a--u--b--|', s);
      // prettier-ignore
      const e1subs =  '^----!      ';
      // prettier-ignore
      const expected ='--A--#      ';

      expectObservable(e1.pipe(stateDelta())).toBe(expected, s, patchError(message));
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    }));

  it('should refuse prototype paths with Object.prototype untouched even before any snapshot', async () => {
    const events$ = of(delta([{ op: 'add', path: '/__proto__/polluted', value: true }]), snapshot({ a: 1 }));

    await expect(collect(events$.pipe(stateDelta()))).rejects.toMatchObject({ code: 'INVALID_PATCH' });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.prototype).not.toHaveProperty('polluted');
  });

  it('should not confuse escaped keys that merely contain a forbidden word with forbidden segments', () =>
    testScheduler.run(({ hot, expectObservable }) => {
      const s = {
        a: snapshot({ n: 0 }),
        // The keys are 'a/b' and 'x/__proto__': plain keys of the state, not prototype paths.
        u: delta([
          { op: 'add', path: '/a~1b', value: 1 },
          { op: 'add', path: '/x~1__proto__', value: 2 },
          { op: 'add', path: '/my~0constructor', value: 3 },
        ]),
        b: snapshot({ n: 0, 'a/b': 1, 'x/__proto__': 2, 'my~constructor': 3 }),
        c: snapshot({ n: 0, 'a/b': 10, 'x/__proto__': 2, 'my~constructor': 3 }),
        C: delta([{ op: 'replace', path: '/a~1b', value: 10 }]),
      };
      // prettier-ignore
      const e1 =  hot('--a--u--b--c--|', s);
      // `b` equals the patched base, so nothing; `c` changes the 'a/b' key, escaped in the delta.
      // prettier-ignore
      const expected ='--a--u-----C--|';

      expectObservable(e1.pipe(stateDelta())).toBe(expected, s);
    }));

  it('should fail with INVALID_PATCH when delta is not an array', () =>
    testScheduler.run(({ hot, expectObservable }) => {
      const s = { ...values, u: { type: EventType.STATE_DELTA, delta: { op: 'replace', path: '/count', value: 2 } } as unknown as AgentEvent };
      // prettier-ignore
      const e1 =  hot('--a--u--|', s);
      // prettier-ignore
      const expected ='--A--#   ';

      expectObservable(e1.pipe(stateDelta())).toBe(
        expected,
        s,
        patchError(`STATE_DELTA has 'delta: an object', but it must be an array of RFC 6902 operations, e.g. [{ op: 'replace', path: '/count', value: 2 }].`),
      );
    }));

  // AG-UI spec 1.1, Snapshots and Deltas: an op RFC 6902 does not define is dropped from the patch with a warning, the others apply.
  it('should drop an operation of an unknown op, with a diagnostic, and apply and send the others', () =>
    testScheduler.run(({ hot, expectObservable, flush }) => {
      const diagnostics: AguiDiagnostic[] = [];
      const s = {
        ...values,
        u: delta([{ op: 'replace', path: '/count', value: 2 }, { op: 'merge', path: '/count', value: 3 } as unknown as JsonPatchOperation, { op: 'add', path: '/todos/-', value: 'ship' }]),
        U: delta([{ op: 'replace', path: '/count', value: 2 }, { op: 'add', path: '/todos/-', value: 'ship' }]),
        m: delta([{ op: 'merge', path: '/count', value: 3 } as unknown as JsonPatchOperation]),
        e: snapshot({ title, todos: ['write spec', 'ship'], count: 2 }),
      };
      // `m` is all unknown: nothing is left to send. `e` equals the patched state: nothing either.
      // prettier-ignore
      const e1 =  hot('--a--u--m--e--|', s);
      // prettier-ignore
      const expected ='--A--U--------|';

      expectObservable(e1.pipe(stateDelta({ onDiagnostic: (d) => void diagnostics.push(d) }))).toBe(expected, s);
      flush();
      expect(diagnostics.map((d) => d.message)).toEqual([
        expect.stringMatching(/^Stripped what AG-UI does not describe from STATE_DELTA: at \/delta\/1, operation 1 has op 'merge', which RFC 6902 does not define; it was dropped and the other operations kept \(AG-UI spec 1\.1, Snapshots and Deltas/),
        expect.stringMatching(/^Stripped what AG-UI does not describe from STATE_DELTA: at \/delta\/0, operation 0 has op 'merge'/),
      ]);
    }));

  it('should fail with INVALID_PATCH for an op that is not a string (a malformed operation)', () =>
    testScheduler.run(({ hot, expectObservable }) => {
      const s = { ...values, u: delta([{ op: 'replace', path: '/count', value: 2 }, { op: 7, path: '/count', value: 3 } as unknown as JsonPatchOperation]) };
      // prettier-ignore
      const e1 =  hot('--a--u--|', s);
      // prettier-ignore
      const expected ='--A--#   ';

      expectObservable(e1.pipe(stateDelta())).toBe(expected, s, patchError(`STATE_DELTA operation 1 has op number 7; RFC 6902 allows add, remove, replace, move, copy and test.`));
    }));

  it('should fail with INVALID_STATE for a BigInt in a snapshot', () =>
    testScheduler.run(({ hot, expectObservable, expectSubscriptions }) => {
      const s = { ...values, n: snapshot({ title, count: 1n }) };
      // prettier-ignore
      const e1 =  hot('--a--n--b--|', s);
      // prettier-ignore
      const e1subs =  '^----!      ';
      // prettier-ignore
      const expected ='--A--#      ';

      expectObservable(e1.pipe(stateDelta())).toBe(
        expected,
        s,
        stateError(
          `STATE_SNAPSHOT is not JSON-serialisable: ${stringifyError(1n)}. State must be plain JSON: convert BigInts to strings or numbers and break reference cycles.`,
        ),
      );
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    }));

  it('should fail with INVALID_STATE for a circular snapshot', () =>
    testScheduler.run(({ hot, expectObservable }) => {
      const circular: Record<string, unknown> = { title };
      circular.self = circular;
      const s = { n: snapshot(circular) };
      // prettier-ignore
      const e1 =  hot('--n--|', s);
      // prettier-ignore
      const expected ='--#   ';

      expectObservable(e1.pipe(stateDelta())).toBe(
        expected,
        s,
        stateError(`STATE_SNAPSHOT is not JSON-serialisable: ${stringifyError(circular)}. State must be plain JSON: convert BigInts to strings or numbers and break reference cycles.`),
      );
    }));

  it('should fail with INVALID_STATE for a snapshot of undefined', () =>
    testScheduler.run(({ hot, expectObservable }) => {
      const s = { ...values, n: { type: EventType.STATE_SNAPSHOT } as AgentEvent };
      // prettier-ignore
      const e1 =  hot('--a--n--|', s);
      // prettier-ignore
      const expected ='--A--#   ';

      expectObservable(e1.pipe(stateDelta())).toBe(expected, s, stateError(`STATE_SNAPSHOT has no JSON value (got undefined). Send the whole state object as 'snapshot'.`));
    }));

  it('should throw INVALID_STATE at call time for an initialState that is not JSON-serialisable', () => {
    const circular: Record<string, unknown> = {};
    circular.self = circular;

    expect(() => stateDelta({ initialState: { count: 1n } })).toThrow(
      stateError(`stateDelta initialState is not JSON-serialisable: ${stringifyError(1n)}. State must be plain JSON: convert BigInts to strings or numbers and break reference cycles.`),
    );
    expect(() => stateDelta({ initialState: circular })).toThrow(
      stateError(`stateDelta initialState is not JSON-serialisable: ${stringifyError(circular)}. State must be plain JSON: convert BigInts to strings or numbers and break reference cycles.`),
    );
    let thrown: unknown;
    try {
      stateDelta({ initialState: { count: 1n } });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(AguiRxError);
    expect(thrown).toMatchObject({ code: 'INVALID_STATE' });
  });

  describe('conformance', () => {
    /** The agent's events through stateDelta and the lifecycle, run by the official client. */
    const runState = (events$: Observable<AgentEvent>, options: StateDeltaOptions = {}) =>
      runWithOracle(events$.pipe(stateDelta(options), mapRunLifecycle({ threadId: 'thread-1', runId: 'run-1' })), { initialState: options.initialState });

    it('should reach the last state of a sequence of immutable updates', async () => {
      const s0 = { title, todos: [] as string[], count: 0 };
      const s1 = { ...s0, todos: [...s0.todos, 'write spec'] };
      const s2 = { ...s1, count: 1 };
      const s3 = { ...s2, todos: [...s2.todos, 'ship'], count: 2 };

      const run = await runState(of(s0, s1, s2, s3).pipe(map(snapshot)));

      expect(run.state).toEqual(s3);
      expect(typesOf(run.events)).toEqual([EventType.RUN_STARTED, EventType.STATE_SNAPSHOT, EventType.STATE_DELTA, EventType.STATE_DELTA, EventType.STATE_DELTA, EventType.RUN_FINISHED]);
    });

    it('should reach the last state when the agent mutates one object in place', async () => {
      const state = { title, items: [] as { id: number; done: boolean }[], count: 0 };
      const events$ = new Observable<AgentEvent>((subscriber) => {
        subscriber.next(snapshot(state));
        for (let id = 1; id <= 3; id++) {
          state.items.push({ id, done: false });
          state.count = id;
          subscriber.next(snapshot(state));
        }
        state.items[1].done = true;
        subscriber.next(snapshot(state));
        subscriber.complete();
      });

      const run = await runState(events$);

      expect(run.state).toEqual({
        title,
        items: [
          { id: 1, done: false },
          { id: 2, done: true },
          { id: 3, done: false },
        ],
        count: 3,
      });
      expect(typesOf(run.events).filter((type) => type === EventType.STATE_DELTA)).toHaveLength(4);
    });

    it('should reach the last state when an array is created and grows', async () => {
      const states = [{ title }, { title, list: [] }, { title, list: ['a'] }, { title, list: ['a', 'b', 'c'] }, { title, list: ['a', 'b', 'c', { d: ['e'] }] }];

      const run = await runState(of(...states.map(snapshot)));

      expect(run.state).toEqual(states[states.length - 1]);
      expect(typesOf(run.events).filter((type) => type === EventType.STATE_DELTA)).toHaveLength(4);
    });

    it('should reach the last state through nested objects', async () => {
      const states = [
        { title, user: { profile: { name: 'Ana', langs: ['pt'] } } },
        { title, user: { profile: { name: 'Ana', langs: ['pt', 'en'] }, settings: { theme: { mode: 'dark' } } } },
        { title, user: { profile: { name: 'Ana Maria', langs: ['pt', 'en'] }, settings: { theme: { mode: 'light', accent: '#f00' } } } },
      ];

      const run = await runState(of(...states.map(snapshot)));

      expect(run.state).toEqual(states[2]);
      expect(typesOf(run.events).filter((type) => type === EventType.STATE_DELTA)).toHaveLength(2);
    });

    it('should reach the last state when keys are deleted', async () => {
      const states = [
        { title, draft: 'text', nested: { keep: 1, drop: 2 }, list: [1, 2, 3] },
        { title, nested: { keep: 1, drop: 2 }, list: [1, 2, 3] },
        { title, nested: { keep: 1 }, list: [1] },
      ];

      const run = await runState(of(...states.map(snapshot)));

      expect(run.state).toEqual(states[2]);
      expect(typesOf(run.events).filter((type) => type === EventType.STATE_DELTA)).toHaveLength(2);
    });

    it('should reach the last state from an initialState given to both stateDelta and the client', async () => {
      const initialState = { title, todos: ['from the client'], count: 0 };
      const states = [
        { title, todos: ['from the client', 'from the agent'], count: 0 },
        { title, todos: ['from the client', 'from the agent'], count: 1 },
      ];

      const run = await runState(of(...states.map(snapshot)), { initialState });

      expect(run.state).toEqual(states[1]);
      // The client already holds initialState: even the first change travels as a delta.
      expect(typesOf(run.events)).toEqual([EventType.RUN_STARTED, EventType.STATE_DELTA, EventType.STATE_DELTA, EventType.RUN_FINISHED]);
    });

    it('should reach the last state when upstream STATE_DELTAs are mixed with snapshots', async () => {
      const events$ = of(
        snapshot({ title, todos: ['write spec'], count: 0 }),
        delta([
          { op: 'replace', path: '/count', value: 1 },
          { op: 'add', path: '/todos/-', value: 'review' },
        ]),
        snapshot({ title, todos: ['write spec', 'review', 'ship'], count: 1 }),
        delta([{ op: 'remove', path: '/todos/0' }]),
        snapshot({ title, todos: ['review', 'ship'], count: 2 }),
      );

      const run = await runState(events$);

      expect(run.state).toEqual({ title, todos: ['review', 'ship'], count: 2 });
      expect(typesOf(run.events)).toEqual([
        EventType.RUN_STARTED,
        EventType.STATE_SNAPSHOT,
        EventType.STATE_DELTA,
        EventType.STATE_DELTA,
        EventType.STATE_DELTA,
        EventType.STATE_DELTA,
        EventType.RUN_FINISHED,
      ]);
    });

    it('should reach the last state when patches fall back to snapshots', async () => {
      const states = [{ a: 1, b: 2 }, { a: 3, b: 4 }, [1, 2], { c: 5 }];

      const run = await runState(of(...states.map(snapshot)));

      expect(run.state).toEqual({ c: 5 });
      expect(typesOf(run.events)).toEqual([EventType.RUN_STARTED, ...states.map(() => EventType.STATE_SNAPSHOT), EventType.RUN_FINISHED]);
    });

    it.each([
      ['a replace of a missing key', [{ op: 'replace', path: '/missing', value: 1 }]],
      ['an append to a missing array', [{ op: 'add', path: '/missing/-', value: 1 }]],
      ['a failing test', [{ op: 'test', path: '/count', value: 9 }]],
    ] as [string, JsonPatchOperation[]][])('should keep the state and the run, as the client does, for %s', async (_, ops) => {
      const diagnostics: AguiDiagnostic[] = [];
      const events$ = of(snapshot({ title, count: 0 }), delta(ops), delta([{ op: 'replace', path: '/count', value: 5 }]));

      const run = await runState(events$, { onDiagnostic: (d) => void diagnostics.push(d) });

      expect(typesOf(run.events)).toEqual([EventType.RUN_STARTED, EventType.STATE_SNAPSHOT, EventType.STATE_DELTA, EventType.RUN_FINISHED]);
      expect(run.state).toEqual({ title, count: 5 });
      expect(diagnostics).toHaveLength(1);
      // The client, given the patch that does not apply, warns and ends with the same state.
      const warn = jest.spyOn(console, 'warn').mockImplementation(() => undefined);
      const direct = await runWithOracle(of(RUN_STARTED, snapshot({ title, count: 0 }), delta(ops), delta([{ op: 'replace', path: '/count', value: 5 }]), RUN_FINISHED) as Observable<Event>);
      warn.mockRestore();
      expect(direct.state).toEqual(run.state);
    });

    it.each([
      ['a prototype path', [{ op: 'add', path: '/__proto__/polluted', value: true }], 'INVALID_PATCH', `STATE_DELTA operation 0 (add /__proto__/polluted) goes through '__proto__', which could change object prototypes; it was refused. Rename that key in your state.`],
    ] as [string, JsonPatchOperation[], string, string][])('should end the run with RUN_ERROR for %s', async (_, ops, code, message) => {
      const events$ = of(snapshot({ title, count: 0 }), delta(ops), snapshot({ title, count: 5 }));

      const run = await runState(events$);

      expect(run.events).toEqual([
        { type: EventType.RUN_STARTED, threadId: 'thread-1', runId: 'run-1', protocolVersion: '1.0' },
        snapshot({ title, count: 0 }),
        { type: EventType.RUN_ERROR, message, code } as Event,
      ]);
      // The state the client kept is the last one that applied.
      expect(run.state).toEqual({ title, count: 0 });
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    });
  });
  describe('the immutable option', () => {
    const records = Array.from({ length: 20 }, (_, id) => ({ id, label: `record ${id}`, done: false }));
    const s0 = { title, records };
    const s1 = { ...s0, records: s0.records.map((record, i) => (i === 3 ? { ...record, done: true } : record)) };
    const s2 = { ...s1, records: [...s1.records, { id: 20, label: 'record 20', done: false }] };
    const immutableValues = {
      a: snapshot(s0),
      b: snapshot(s1),
      c: snapshot(s2),
      A: snapshot(s0),
      B: delta([{ op: 'replace', path: '/records/3/done', value: true }]),
      C: delta([{ op: 'add', path: '/records/20', value: { id: 20, label: 'record 20', done: false } }]),
    };

    it('should send the same events as without the option when the producer keeps its promise', () =>
      testScheduler.run(({ hot, expectObservable, expectSubscriptions }) => {
        // prettier-ignore
        const e1 =  hot('--a--b--b--c--|', immutableValues);
        // prettier-ignore
        const e1subs =  '^-------------!';
        // prettier-ignore
        const expected ='--A--B-----C--|';

        expectObservable(e1.pipe(stateDelta({ immutable: true }))).toBe(expected, immutableValues);
        expectObservable(e1.pipe(stateDelta())).toBe(expected, immutableValues);
        expectSubscriptions(e1.subscriptions).toBe([e1subs, e1subs]);
      }));

    it('should not look into a subtree that is the same object as in the last snapshot', () => {
      // Elements that count their reads: the unchanged records array is skipped by reference.
      let reads = 0;
      const watched = [...records];
      records.forEach((record, i) => Object.defineProperty(watched, i, { enumerable: true, get: () => (reads++, record) }));
      const state = { title, records: watched, count: 0 };
      const source = new Subject<AgentEvent>();
      const events: unknown[] = [];
      source.pipe(stateDelta({ immutable: true }), map(json)).subscribe((event) => events.push(event));

      source.next(snapshot(state));
      const firstReads = reads;
      source.next(snapshot({ ...state, count: 1 }));

      expect(firstReads).toBeGreaterThan(0);
      expect(reads).toBe(firstReads);
      expect(events).toEqual([snapshot(json(state)), delta([{ op: 'replace', path: '/count', value: 1 }])]);
    });

    it('should miss a change made in place to an object already sent, until that value changes again (the documented cost of breaking the promise)', async () => {
      const state = { title, items: [{ id: 1, label: 'one' }], count: 0 };
      const events$ = new Observable<AgentEvent>((subscriber) => {
        subscriber.next(snapshot(state));
        // The promise broken: the item is changed in place, and a new top-level object sent.
        state.items[0].label = 'uno';
        subscriber.next(snapshot({ ...state, count: 1 }));
        // The item replaced by a new object: its label is the same as in the (changed) old one.
        subscriber.next(snapshot({ ...state, count: 1, items: [{ ...state.items[0], done: true }] }));
        // The label changes again: now it is sent.
        subscriber.next(snapshot({ ...state, count: 1, items: [{ id: 1, label: 'eins', done: true }] }));
        subscriber.complete();
      });

      // As sent: the events share the producer's objects, which it goes on changing.
      const events = await collect(events$.pipe(stateDelta({ immutable: true }), map(json)));

      expect(events).toEqual([
        snapshot({ title, items: [{ id: 1, label: 'one' }], count: 0 }),
        delta([{ op: 'replace', path: '/count', value: 1 }]),
        delta([{ op: 'add', path: '/items/0/done', value: true }]),
        delta([{ op: 'replace', path: '/items/0/label', value: 'eins' }]),
      ]);
      // Without the option, every change is seen.
      expect(replay(await collect(events$.pipe(stateDelta())))).toEqual({ title, count: 1, items: [{ id: 1, label: 'eins', done: true }] });
    });

    it('should send nothing for the very same state object, even when the producer changed it in place', () =>
      testScheduler.run(({ cold, expectObservable }) => {
        const state = { title, count: 0 };
        const e1 = cold<AgentEvent>('--a--a--|', { a: snapshot(state) });
        // prettier-ignore
        const expected =             '--A-----|';

        expectObservable(
          e1.pipe(
            map((event) => {
              state.count++;
              return event;
            }),
            stateDelta({ immutable: true }),
            // As sent: the event shares the producer's object, which it goes on changing.
            map(json),
          ),
        ).toBe(expected, { A: snapshot({ title, count: 1 }) });
      }));

    it('should share plain-JSON values with the producer and copy others', async () => {
      const added = { id: 9, tags: ['x'] };
      const dated = { id: 10, at: new Date(0) };
      const events = await collect(of(snapshot({ title, list: [] as unknown[] }), snapshot({ title, list: [added, dated] })).pipe(stateDelta({ immutable: true })));

      const [first, second] = (events[1] as { delta: { value: unknown }[] }).delta;
      expect(first.value).toBe(added);
      expect(second.value).toEqual({ id: 10, at: '1970-01-01T00:00:00.000Z' });
    });

    it('should fail with INVALID_STATE for a BigInt in the first snapshot', () =>
      testScheduler.run(({ hot, expectObservable }) => {
        const s = { n: snapshot({ title, count: 1n }) };
        // prettier-ignore
        const e1 =  hot('--n--|', s);
        // prettier-ignore
        const expected ='--#   ';

        expectObservable(e1.pipe(stateDelta({ immutable: true }))).toBe(
          expected,
          s,
          stateError(`STATE_SNAPSHOT is not JSON-serialisable: ${stringifyError(1n)}. State must be plain JSON: convert BigInts to strings or numbers and break reference cycles.`),
        );
      }));

    it('should fail with INVALID_STATE for a cycle in a changed subtree', () =>
      testScheduler.run(({ hot, expectObservable }) => {
        const circular: Record<string, unknown> = { title };
        circular.self = circular;
        const s = { a: snapshot({ title, child: {} }), n: snapshot({ title, child: circular }) };
        // prettier-ignore
        const e1 =  hot('--a--n--|', s);
        // prettier-ignore
        const expected ='--a--#   ';

        expectObservable(e1.pipe(stateDelta({ immutable: true }))).toBe(
          expected,
          s,
          stateError(`STATE_SNAPSHOT is not JSON-serialisable: ${stringifyError(circular)}. State must be plain JSON: convert BigInts to strings or numbers and break reference cycles.`),
        );
      }));

    it('should reach the last state through the official client', async () => {
      const run = await runWithOracle(of(s0, s1, s1, s2).pipe(map(snapshot), stateDelta({ immutable: true }), mapRunLifecycle({ threadId: 'thread-1', runId: 'run-1' })));

      expect(run.state).toEqual(s2);
      expect(typesOf(run.events)).toEqual([EventType.RUN_STARTED, EventType.STATE_SNAPSHOT, EventType.STATE_DELTA, EventType.STATE_DELTA, EventType.RUN_FINISHED]);
    });
  });

  describe('deep-frozen states', () => {
    const freeze = <T>(value: T): T => {
      if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
        Object.freeze(value);
        Object.values(value).forEach(freeze);
      }
      return value;
    };
    const records = freeze(Array.from({ length: 20 }, (_, id) => ({ id, label: `record ${id}`, tags: ['a'] })));
    const f0 = freeze({ title, records });
    const f1 = freeze({ ...f0, records: f0.records.map((record, i) => (i === 5 ? { ...record, tags: ['a', 'b'] } : record)) });
    const frozenValues = {
      a: snapshot(f0),
      b: snapshot(f1),
      A: snapshot(f0),
      B: delta([{ op: 'add', path: '/records/5/tags/1', value: 'b' }]),
    };

    it('should diff deep-frozen states without the option, skipping what is the same object', () =>
      testScheduler.run(({ hot, expectObservable }) => {
        // prettier-ignore
        const e1 =  hot('--a--b--b--|', frozenValues);
        // prettier-ignore
        const expected ='--A--B-----|';

        expectObservable(e1.pipe(stateDelta())).toBe(expected, frozenValues);
      }));

    it('should still see a change inside an unfrozen object held by a frozen one', async () => {
      const inner = { label: 'one' };
      const events$ = new Observable<AgentEvent>((subscriber) => {
        subscriber.next(snapshot(Object.freeze({ title, inner })));
        inner.label = 'uno';
        subscriber.next(snapshot(Object.freeze({ title, inner })));
        subscriber.complete();
      });

      const events = await collect(events$.pipe(stateDelta()));

      expect(events).toEqual([snapshot({ title, inner: { label: 'one' } }), delta([{ op: 'replace', path: '/inner/label', value: 'uno' }])]);
    });

    it('should see a frozen subtree that replaces a mutable one, and a mutable one that replaces a frozen one', async () => {
      const state: Record<string, unknown> = { title, part: { n: 1 } };
      const events$ = new Observable<AgentEvent>((subscriber) => {
        subscriber.next(snapshot(state));
        state.part = freeze({ n: 2, list: [1] });
        subscriber.next(snapshot(state));
        subscriber.next(snapshot(state));
        state.part = { n: 3, list: [1] };
        subscriber.next(snapshot(state));
        (state.part as { list: number[] }).list.push(2);
        subscriber.next(snapshot(state));
        subscriber.complete();
      });

      const events = await collect(events$.pipe(stateDelta()));

      expect(events).toEqual([
        snapshot({ title, part: { n: 1 } }),
        delta([
          { op: 'replace', path: '/part/n', value: 2 },
          { op: 'add', path: '/part/list', value: [1] },
        ]),
        delta([{ op: 'replace', path: '/part/n', value: 3 }]),
        delta([{ op: 'add', path: '/part/list/1', value: 2 }]),
      ]);
    });

    it('should reach the last state through the official client', async () => {
      const run = await runWithOracle(of(f0, f1, f1).pipe(map(snapshot), stateDelta(), mapRunLifecycle({ threadId: 'thread-1', runId: 'run-1' })));

      expect(run.state).toEqual(json(f1));
      expect(typesOf(run.events)).toEqual([EventType.RUN_STARTED, EventType.STATE_SNAPSHOT, EventType.STATE_DELTA, EventType.RUN_FINISHED]);
    });
  });
});
