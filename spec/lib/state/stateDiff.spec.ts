import { EventType } from '@ag-ui/core';
import fc from 'fast-check';
import jsonpatch, { type Operation } from 'fast-json-patch';
import { Observable, of } from 'rxjs';
import type { AgentEvent } from '../../../lib/protocol/agentEvent.js';
import { createStateMirror, diffJson, jsonLength, type StateChange } from '../../../lib/state/stateDiff.js';
import { mapRunLifecycle } from '../../../operators/mapRunLifecycle.js';
import { stateDelta } from '../../../operators/stateDelta.js';
import { collect, errorOf } from '../../support/helpers.js';
import { runWithOracle } from '../../support/oracle.js';

/**
 * Differential property specs of the state diff: for random states and random changes (immutable,
 * in place, deep-frozen), applying what the mirror sends to what the client held gives exactly
 * `JSON.parse(JSON.stringify(next))`. `FUZZ_RUNS` scales the number of cases (default 10,000 in all).
 */
const totalRuns = Number(process.env.FUZZ_RUNS ?? 10000);
const share = (fraction: number) => Math.max(1, Math.round(totalRuns * fraction));
const seed = process.env.FUZZ_SEED === undefined ? undefined : Number(process.env.FUZZ_SEED);
const params = (numRuns: number): fc.Parameters<unknown> => ({ numRuns, ...(seed === undefined ? {} : { seed }) });
const timeout = Math.max(60_000, totalRuns * 25);

/** What the client sees: the JSON of a value. */
const json = (value: unknown): unknown => JSON.parse(JSON.stringify(value));

/** Whether `value` is plain JSON as it stands: what JSON.parse could have built. */
function isPlainJson(value: unknown): boolean {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return true;
  if (typeof value === 'number') return Number.isFinite(value) && !Object.is(value, -0);
  if (typeof value !== 'object') return false;
  const prototype = Object.getPrototypeOf(value);
  if (Array.isArray(value)) return prototype === Array.prototype && Object.keys(value).length === value.length && value.every(isPlainJson);
  return (prototype === Object.prototype || prototype === null) && typeof (value as { toJSON?: unknown }).toJSON !== 'function' && Object.values(value).every(isPlainJson);
}

/** Deep-freezes what is not frozen yet. */
function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const key of Object.keys(value)) deepFreeze((value as Record<string, unknown>)[key]);
  }
  return value;
}

// ---- arbitraries ----------------------------------------------------------------------------

/** Keys, with the characters RFC 6901 escapes, quotes, newlines, non-ASCII and prototype names. */
const key = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom('a', 'b', 'c', 'id', 'list') },
  { weight: 1, arbitrary: fc.constantFrom('a/b', 'm~n', '~1', '~0/', '', 'x y', 'é', '"q"', 'line\nbreak', '\ud83d\ude00', '__proto__', 'constructor', 'prototype', '0', '10') },
  { weight: 1, arbitrary: fc.string({ maxLength: 4 }) },
);

/** Values JSON writes as they are. */
const plainLeaf = fc.oneof(fc.integer({ min: -5, max: 5 }), fc.string({ maxLength: 6 }), fc.string({ unit: 'binary', maxLength: 3 }), fc.boolean(), fc.constant(null), fc.double());

/** Values JSON rewrites or leaves out: undefined, functions, symbols, NaN, ±Infinity, -0, Dates, wrappers. */
const exoticLeaf = fc.oneof(
  fc.constantFrom<unknown>(undefined, NaN, Infinity, -Infinity, -0, Symbol('s'), () => 1),
  fc.date(),
  fc.integer().map((n) => new Number(n)),
  fc.string({ maxLength: 3 }).map((s) => new String(s)),
  fc.boolean().map((b) => new Boolean(b)),
  fc.integer().map((n) => ({ toJSON: () => ({ from: n }) })),
);

const { tree } = fc.letrec((tie) => ({
  tree: fc.oneof({ depthSize: 'small', withCrossShrink: true }, { weight: 6, arbitrary: plainLeaf }, { weight: 1, arbitrary: exoticLeaf }, tie('array'), tie('object')),
  array: fc.array(tie('tree'), { maxLength: 5 }),
  object: fc.dictionary(key, tie('tree'), { maxKeys: 5 }),
}));

/** A state: an object or an array at the top, like every real state. */
const state = fc.oneof(fc.dictionary(key, tree, { maxKeys: 6 }), fc.array(tree, { maxLength: 6 }));

/** One change: where (child indexes, taken modulo the number of children) and what. */
interface Edit {
  path: number[];
  kind: 'set' | 'delete' | 'push' | 'insert';
  value: unknown;
}

const edit: fc.Arbitrary<Edit> = fc.record({
  path: fc.array(fc.nat({ max: 20 }), { maxLength: 4 }),
  kind: fc.constantFrom<Edit['kind']>('set', 'delete', 'push', 'insert'),
  value: tree,
});

/** A sequence of steps, each a few edits. */
const steps = fc.array(fc.array(edit, { minLength: 1, maxLength: 3 }), { minLength: 1, maxLength: 6 });

type Container = Record<string, unknown> | unknown[];

const isContainer = (value: unknown): value is Container =>
  typeof value === 'object' &&
  value !== null &&
  (Array.isArray(value) || Object.getPrototypeOf(value) === Object.prototype || Object.getPrototypeOf(value) === null) &&
  typeof (value as { toJSON?: unknown }).toJSON !== 'function';

/** Applies `change` to `node`, in place or copying what it changes (the producer's two styles); returns the node. */
function applyEdit(node: Container, change: Edit, immutable: boolean, depth = 0): Container {
  const target: Container = immutable ? (Array.isArray(node) ? [...node] : { ...node }) : node;
  if (!isContainer(target)) return target;
  const keys = Object.keys(target);
  const step = change.path[depth];
  if (step !== undefined && keys.length > 0) {
    const childKey = keys[step % keys.length];
    const child = (target as Record<string, unknown>)[childKey];
    if (isContainer(child) && depth + 1 < change.path.length) {
      const edited = applyEdit(child, change, immutable, depth + 1);
      if (immutable) define(target, childKey, edited);
      return target;
    }
    if (Array.isArray(target)) {
      const index = Number(childKey);
      if (change.kind === 'set') target[index] = change.value;
      else if (change.kind === 'delete') target.splice(index, 1);
      else if (change.kind === 'insert') target.splice(index, 0, change.value);
      else target.push(change.value);
    } else if (change.kind === 'delete') {
      delete target[childKey];
    } else {
      define(target, change.kind === 'set' ? childKey : `k${step}`, change.value);
    }
    return target;
  }
  if (Array.isArray(target)) target.push(change.value);
  else define(target, `k${step ?? 0}`, change.value);
  return target;
}

/** Sets an own key, `__proto__` included. */
function define(target: Container, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true });
}

/** Runs the mirror over the states, applying each change as a client would; checks every step. */
function checkMirror(initial: Container, edits: Edit[][], style: 'immutable' | 'in place' | 'frozen', immutable: boolean): void {
  const mirror = createStateMirror({ immutable });
  let client: unknown;
  const sent: { change: StateChange; json: string }[] = [];
  let current = style === 'frozen' ? deepFreeze(initial) : initial;
  const advance = (next: Container) => {
    const expected = json(next);
    const change = mirror.update(next);
    if (change.type === 'snapshot') {
      expect(isPlainJson(change.snapshot)).toBe(true);
      client = structuredClone(change.snapshot);
    } else if (change.type === 'delta') {
      expect(change.delta.every((op) => !('value' in op) || isPlainJson(op.value))).toBe(true);
      // Rule 2: a delta is sent only when shorter than the snapshot.
      expect(JSON.stringify(change.delta).length).toBeLessThan(JSON.stringify(expected).length);
      client = jsonpatch.applyPatch(client, change.delta, true, false).newDocument;
    } else {
      expect(sent.length).toBeGreaterThan(0);
    }
    if (change.type !== 'none') sent.push({ change, json: JSON.stringify(change) });
    expect(client).toEqual(expected);
  };
  advance(current);
  for (const stepEdits of edits) {
    for (const change of stepEdits) current = applyEdit(current, change, style !== 'in place');
    if (style === 'frozen') deepFreeze(current);
    advance(current);
  }
  // Nothing sent changed afterwards, though an in-place producer kept changing its objects.
  for (const { change, json: text } of sent) expect(JSON.stringify(change)).toBe(text);
}

describe('stateDiff', () => {
  describe('StateMirror', () => {
    it.each([
      ['immutable updates, with the immutable option', 'immutable', true],
      ['immutable updates, without the option', 'immutable', false],
      ['in-place mutation of one object', 'in place', false],
      ['deep-frozen states, without the option', 'frozen', false],
    ] as const)(
      'should send what turns the client state into the JSON of the next state, for %s',
      (_, style, immutable) => {
        fc.assert(
          fc.property(state, steps, (initial, edits) => checkMirror(initial as Container, edits, style, immutable)),
          params(share(0.22)),
        );
      },
      timeout,
    );

    it(
      'should give the same state through the official client, for stateDelta with and without the immutable option',
      async () => {
        await fc.assert(
          fc.asyncProperty(state, steps, fc.constantFrom('immutable', 'in place', 'frozen' as const), async (initial, edits, style) => {
            let last: unknown;
            // The producer: a snapshot after each step's edits (in place: the same object, changed between emissions).
            const events$ = new Observable<AgentEvent>((subscriber) => {
              let current = style === 'frozen' ? deepFreeze(initial as Container) : (initial as Container);
              subscriber.next({ type: EventType.STATE_SNAPSHOT, snapshot: current });
              for (const stepEdits of edits) {
                for (const change of stepEdits) current = applyEdit(current, change, style !== 'in place');
                if (style === 'frozen') deepFreeze(current);
                subscriber.next({ type: EventType.STATE_SNAPSHOT, snapshot: current });
              }
              last = json(current);
              subscriber.complete();
            });
            const run = await runWithOracle(events$.pipe(stateDelta({ immutable: style === 'immutable' }), mapRunLifecycle({ threadId: 'thread-1', runId: 'run-1' })));
            expect(run.state).toEqual(last);
            expect(run.events[1].type).toBe(EventType.STATE_SNAPSHOT);
          }),
          params(share(0.06)),
        );
      },
      timeout,
    );
  });

  describe('diffJson', () => {
    it(
      'should give the very operations of fast-json-patch compare for JSON objects',
      () => {
        const object = fc.dictionary(fc.string({ maxLength: 3 }), fc.jsonValue({ maxDepth: 3 }), { maxKeys: 6 });
        fc.assert(
          fc.property(object, object, (a, b) => {
            // Through JSON: compare leaves a -0 as it is, where JSON (and diffJson) write 0.
            expect(json(diffJson(a, b))).toEqual(json(jsonpatch.compare(a, b)));
          }),
          params(share(0.1)),
        );
      },
      timeout,
    );

    it('should escape ~ and / in pointers (RFC 6901 section 4) and leave other characters as they are', () => {
      expect(diffJson({ 'a/b': 1, 'm~n': 1, '~1': 1, 'é "q"': 1 }, { 'a/b': 2, 'm~n': 2, '~1': 2, 'é "q"': 2 })).toEqual([
        { op: 'replace', path: '/é "q"', value: 2 },
        { op: 'replace', path: '/~01', value: 2 },
        { op: 'replace', path: '/m~0n', value: 2 },
        { op: 'replace', path: '/a~1b', value: 2 },
      ]);
    });

    it('should not look into a subtree that is the same object on both sides', () => {
      const shared = { list: [1, 2, 3] };
      const from = { shared, n: 1 };
      const to = { shared, n: 2 };
      // Were it walked, the getter would throw.
      Object.defineProperty(shared, 'trap', { enumerable: true, get: () => { throw new Error('walked'); } });
      expect(diffJson(from, to)).toEqual([{ op: 'replace', path: '/n', value: 2 }]);
    });
  });

  describe('jsonLength', () => {
    it(
      'should be the length of JSON.stringify, escapes and lone surrogates included',
      () => {
        fc.assert(
          fc.property(state, (value) => {
            expect(jsonLength(value)).toBe(JSON.stringify(value).length);
          }),
          params(share(0.1)),
        );
      },
      timeout,
    );

    it(
      'should say whether the JSON is longer than a limit, walking only as far as needed',
      () => {
        fc.assert(
          fc.property(state, fc.nat({ max: 200 }), (value, limit) => {
            expect(jsonLength(value, limit)! > limit).toBe(JSON.stringify(value).length > limit);
          }),
          params(share(0.1)),
        );
      },
      timeout,
    );

    it('should count a state from its start only, for a limit the start already passes', () => {
      let read = 0;
      const records = Array.from({ length: 1000 }, (_, i) => ({
        get id() {
          read++;
          return i;
        },
      }));
      expect(jsonLength({ records }, 50)).toBeGreaterThan(50);
      expect(jsonLength(undefined)).toBeUndefined();
      expect(read).toBeLessThan(10);
    });

    it('should decide delta or snapshot without reading the characters of a growing string (issue 17)', () => {
      for (const immutable of [true, false]) {
        const paragraphs = Array.from({ length: 100 }, (_, i) => `Paragraph ${i}, "quoted", with a newline\n and some more words to make it long.`.repeat(3));
        const doc = { title: 'Doc', paragraphs };
        const mirror = createStateMirror({ immutable });
        mirror.update(doc);
        let state = doc;
        const exec = RegExp.prototype.exec;
        let scanned = 0;
        RegExp.prototype.exec = function (this: RegExp, text: string) {
          scanned += String(text).length;
          return exec.call(this, text);
        };
        const kinds: string[] = [];
        try {
          for (let step = 0; step < 500; step++) {
            const next = immutable ? { ...state, paragraphs: [...state.paragraphs.slice(0, 99), state.paragraphs[99] + ' word\n'] } : state;
            if (!immutable) state.paragraphs[99] += ' word\n';
            kinds.push(mirror.update(next).type);
            state = next;
          }
        } finally {
          RegExp.prototype.exec = exec;
        }
        expect(new Set(kinds)).toEqual(new Set(['delta']));
        // The paths' characters only: reading the paragraph at each step would be over 500 x 700.
        expect(scanned).toBeLessThan(500 * 20);
        expect(JSON.stringify(mirror.state)).toBe(JSON.stringify(state));
      }
    });
  });

  describe('JSON semantics', () => {
    /** The first snapshot and the change to `next`, as a mirror sends them. */
    const changes = (previous: unknown, next: unknown, immutable = false) => {
      const mirror = createStateMirror({ immutable });
      return [mirror.update(previous), mirror.update(next)] as StateChange[];
    };
    const padding = 'x'.repeat(200);

    it.each([
      ['a key whose value is undefined, a function or a symbol is absent', { padding, a: 1 }, { padding, a: undefined, f: () => 1, s: Symbol('s') }, [{ op: 'remove', path: '/a' }]],
      ['toJSON is called (a Date becomes its ISO string)', { padding, at: '2026-11-29T00:00:00.000Z' }, { padding, at: new Date('2026-11-29T00:00:00.000Z') }, []],
      ['a changed Date is replaced by its string', { padding, at: '2026-11-29T00:00:00.000Z' }, { padding, at: new Date('2026-11-30T00:00:00.000Z') }, [{ op: 'replace', path: '/at', value: '2026-11-30T00:00:00.000Z' }]],
      ['NaN and ±Infinity are null', { padding, n: null, m: 1 }, { padding, n: NaN, m: Infinity }, [{ op: 'replace', path: '/m', value: null }]],
      ['undefined, functions and symbols in arrays are null', { padding, list: [null, null, 1] }, { padding, list: [undefined, () => 1, Symbol('s')] }, [{ op: 'replace', path: '/list/2', value: null }]],
      ['-0 is 0', { padding, z: 0 }, { padding, z: -0 }, []],
      ['Number, String and Boolean objects are unwrapped', { padding, n: 1, s: 'a', b: true }, { padding, n: new Number(2), s: new String('a'), b: new Boolean(false) }, [{ op: 'replace', path: '/b', value: false }, { op: 'replace', path: '/n', value: 2 }]],
      ['a class instance is its own enumerable keys', { padding, point: { x: 1 } }, { padding, point: new (class Point { x = 1; y = 2; get norm() { return 3; } })() }, [{ op: 'add', path: '/point/y', value: 2 }]],
      ['an added value is its JSON', { padding }, { padding, added: { at: new Date(0), n: NaN, gone: undefined, list: [undefined] } }, [{ op: 'add', path: '/added', value: { at: '1970-01-01T00:00:00.000Z', n: null, list: [null] } }]],
    ] as [string, unknown, unknown, Operation[]][])('should read states as JSON.stringify does: %s', (_, previous, next, ops) => {
      for (const immutable of [false, true]) {
        const [, change] = changes(previous, next, immutable);
        expect(change).toEqual(ops.length === 0 ? { type: 'none' } : { type: 'delta', delta: ops });
        if (change.type === 'delta') expect(change.delta.every((op) => !('value' in op) || isPlainJson(op.value))).toBe(true);
      }
    });

    it('should send a copy in default mode and, in immutable mode, the producer object when it is plain JSON', () => {
      const record = { id: 1, tags: ['a'] };
      const withDate = { id: 2, at: new Date(0) };
      for (const immutable of [false, true]) {
        const [, change] = changes({ padding, records: [] }, { padding, records: [record, withDate] }, immutable);
        const values = (change as { delta: { value: unknown }[] }).delta.map((op) => op.value);
        expect(values).toEqual([{ id: 1, tags: ['a'] }, { id: 2, at: '1970-01-01T00:00:00.000Z' }]);
        expect(values[0] === record).toBe(immutable);
        expect(values[1]).not.toBe(withDate);
      }
    });

    it('should fail with INVALID_STATE for a BigInt in a changed subtree, in either mode', () => {
      for (const immutable of [false, true]) {
        const mirror = createStateMirror({ immutable });
        mirror.update({ padding, a: { n: 1 } });
        expect(() => mirror.update({ padding, a: { n: 1n } })).toThrow(expect.objectContaining({ code: 'INVALID_STATE', message: expect.stringMatching(/^STATE_SNAPSHOT is not JSON-serialisable: .*BigInt.*\. State must be plain JSON/) }));
      }
    });

    it('should fail with INVALID_STATE for a cycle in a changed subtree, in either mode', () => {
      for (const immutable of [false, true]) {
        const mirror = createStateMirror({ immutable });
        mirror.update({ padding, a: {} });
        const cyclic: Record<string, unknown> = {};
        cyclic.self = { again: cyclic };
        expect(() => mirror.update({ padding, a: cyclic })).toThrow(expect.objectContaining({ code: 'INVALID_STATE', message: expect.stringMatching(/^STATE_SNAPSHOT is not JSON-serialisable: Converting circular structure to JSON\. /) }));
      }
    });

    it('should fail with INVALID_STATE when a toJSON throws, naming its error', () => {
      const mirror = createStateMirror();
      expect(() => mirror.update({ a: { toJSON: () => { throw new Error('no JSON today'); } } })).toThrow(
        expect.objectContaining({ code: 'INVALID_STATE', message: 'STATE_SNAPSHOT is not JSON-serialisable: no JSON today. State must be plain JSON: convert BigInts to strings or numbers and break reference cycles.' }),
      );
    });
  });
});

describe('stateDelta on producers that change what looks unchangeable (adversarial cases)', () => {
  /** The client's state after each snapshot `emits` gives, in default mode, through the official client. */
  async function clientState(emits: (next: (snapshot: unknown) => void) => void): Promise<unknown> {
    const source$ = new Observable<AgentEvent>((subscriber) => {
      emits((snapshot) => subscriber.next({ type: EventType.STATE_SNAPSHOT, snapshot }));
      subscriber.complete();
    });
    return (await runWithOracle(source$.pipe(stateDelta(), mapRunLifecycle({ threadId: 't', runId: 'r' })))).state;
  }

  it('should see every in-place change to a long sealed array (sealed is not frozen)', async () => {
    const todos = Object.seal(Array.from({ length: 64 }, () => 'open'));
    const state = { todos };
    const final = await clientState((next) => {
      next(state);
      todos[0] = 'done';
      next(state);
      todos[1] = 'done';
      next(state);
    });
    expect(final).toEqual(json(state));
  });

  it('should not hold a frozen object by reference when it holds a Date, which can still change', async () => {
    const due = new Date(0);
    const frozen = Object.freeze({ title: 'x', due });
    const final = await clientState((next) => {
      next({ title: 'x', due: new Date(0) });
      next(frozen);
      due.setTime(86_400_000);
      next(frozen);
    });
    expect(final).toEqual({ title: 'x', due: '1970-01-02T00:00:00.000Z' });
  });

  it('should drop a key that became non-enumerable, as JSON.stringify does', async () => {
    const final = await clientState((next) => {
      next({ a: 1, b: 2 });
      next(Object.defineProperty({ c: 3 }, 'a', { value: 1, enumerable: false }));
    });
    expect(final).toEqual({ c: 3 });
  });

  it('should send a state nested deeper than the walk goes as a whole snapshot, not fail', async () => {
    const deep = (levels: number, leaf: unknown) => {
      let value: unknown = leaf;
      for (let i = 0; i < levels; i++) value = { child: value };
      return value;
    };
    // Deeper than the official client can apply as well (its clone overflows), so checked on the output.
    const events = await collect(of<AgentEvent[]>({ type: EventType.STATE_SNAPSHOT, snapshot: deep(2500, 1) }, { type: EventType.STATE_SNAPSHOT, snapshot: deep(2500, 2) }).pipe(stateDelta()));
    expect(events.map((event) => event.type)).toEqual([EventType.STATE_SNAPSHOT, EventType.STATE_SNAPSHOT]);
    expect(JSON.stringify((events[1] as { snapshot: unknown }).snapshot)).toBe(JSON.stringify(deep(2500, 2)));
  });

  it('should say a state is nested too deeply when not even JSON.stringify can write it', async () => {
    let value: unknown = 1;
    for (let i = 0; i < 200_000; i++) value = { child: value };
    const error = await errorOf(collect(of<AgentEvent[]>({ type: EventType.STATE_SNAPSHOT, snapshot: value }).pipe(stateDelta())));
    expect(error).toMatchObject({ code: 'INVALID_STATE', message: 'STATE_SNAPSHOT is nested too deeply to serialise (JSON.stringify ran out of stack). Flatten deeply nested structures in your state.' });
  });
});
