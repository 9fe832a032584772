// Item 5: stateDelta against fast-json-patch `compare` of the whole state, one change per step.
import jsonpatch from 'fast-json-patch';
import { stateDelta } from 'agui-rx';
import { from, map, Observable } from 'rxjs';
import { measure, speedRow } from './harness.mjs';
import { collectSync, drain } from './workloads.mjs';

export const name = 'stateDelta';

const RECORDS = 10_000;

const record = (id, version) => ({ id: `r${id}`, name: `record ${id}`, qty: id % 97, price: (id % 1000) / 10 + version, tags: ['a', `v${version}`] });

/** Deep-freezes a value (what Immer or a careful producer hands over). */
function deepFreeze(value) {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const key of Object.keys(value)) deepFreeze(value[key]);
  }
  return value;
}

/** Snapshot events of states that each replace one element (`next(state, step)`), immutably. */
function immutableSteps(initial, steps, next) {
  const states = [initial];
  for (let step = 1; step <= steps; step++) states.push(next(states[step - 1], step));
  return states;
}

/** Marks a row with whether ours gave the right result; a wrong one fails the row whatever its speed. */
function checked(r, correct) {
  return correct ? { ...r, correct } : { ...r, correct, pass: false, name: `${r.name} — WRONG RESULT` };
}

const snapshots = (states) => states.map((snapshot) => ({ type: 'STATE_SNAPSHOT', snapshot }));

/** The baseline: compare each state with the previous one, as a map in the same pipeline shape. */
function compareEach() {
  let previous;
  return map((event) => {
    const patch = previous === undefined ? event.snapshot : jsonpatch.compare(previous, event.snapshot);
    previous = event.snapshot;
    return patch;
  });
}

/**
 * The in-place baseline: the producer mutates one object, so `compare` needs its own copy of the
 * previous state: one deep copy at the start, then each patch applied to that copy (cheaper than
 * re-copying the whole state each step; compare deep-clones the values it puts in the patch).
 */
function compareInPlace() {
  let copy;
  return map((event) => {
    if (copy === undefined) {
      copy = jsonpatch.deepClone(event.snapshot);
      return event.snapshot;
    }
    const patch = jsonpatch.compare(copy, event.snapshot);
    jsonpatch.applyPatch(copy, patch, false, true);
    return patch;
  });
}

/**
 * Whether the events `stateDelta` emitted for `source$` rebuild the final state (checked once,
 * untimed): snapshots replace the client's state, deltas are applied to it (RFC 6902).
 */
function rebuilds(source$, operator, finalState) {
  let client;
  for (const event of collectSync(source$.pipe(operator))) {
    if (event.type === 'STATE_SNAPSHOT') client = jsonpatch.deepClone(event.snapshot);
    else if (event.type === 'STATE_DELTA') client = jsonpatch.applyPatch(client, event.delta, false, true).newDocument;
  }
  return JSON.stringify(client) === JSON.stringify(finalState());
}

export async function run({ quick, runs, warmup, log }) {
  const steps = quick ? 3 : 30;
  const rows = [];
  const records = Array.from({ length: RECORDS }, (_, i) => record(i, 0));
  const replace = (s, step) => ({ ...s, records: s.records.with((step * 7919) % RECORDS, record((step * 7919) % RECORDS, step)) });

  // (a) immutable updates: the option, and deep-frozen states without it.
  const plain = snapshots(immutableSteps({ records }, steps, replace));
  const frozen = snapshots(immutableSteps(deepFreeze({ records: records.map((r) => ({ ...r, tags: [...r.tags] })) }), steps, (s, step) => deepFreeze(replace(s, step))));
  log(`stateDelta: 10k records, ${steps} immutable steps`);
  const a = await measure(
    [
      { name: 'stateDelta immutable', fn: () => drain(from(plain).pipe(stateDelta({ immutable: true }))) },
      { name: 'stateDelta frozen', fn: () => drain(from(frozen).pipe(stateDelta())) },
      { name: 'compare', fn: () => drain(from(plain).pipe(compareEach())) },
    ],
    { runs, warmup },
  );
  const last = (events) => () => events[events.length - 1].snapshot;
  rows.push(checked(speedRow({ item: '5a', name: `stateDelta({ immutable: true }) vs compare, 10k records, ${steps} steps`, results: a, ours: 'stateDelta immutable', baseline: 'compare', target: { op: '>=', value: 20 } }), rebuilds(from(plain), stateDelta({ immutable: true }), last(plain))));
  rows.push(checked(speedRow({ item: '5a', name: `stateDelta() on deep-frozen states vs compare, 10k records, ${steps} steps`, results: a, ours: 'stateDelta frozen', baseline: 'compare', target: { op: '>=', value: 20 } }), rebuilds(from(frozen), stateDelta(), last(frozen))));

  // (b) in place: one object mutated and re-emitted.
  const newRecords = Array.from({ length: steps + 1 }, (_, step) => record((step * 7919) % RECORDS, step));
  let state;
  const inPlace = () =>
    new Observable((subscriber) => {
      state = { records: records.map((r) => ({ ...r })) };
      for (let step = 0; step <= steps; step++) {
        if (step > 0) state.records[(step * 7919) % RECORDS] = newRecords[step];
        subscriber.next({ type: 'STATE_SNAPSHOT', snapshot: state });
      }
      subscriber.complete();
    });
  log(`stateDelta: 10k records, ${steps} in-place steps`);
  const b = await measure(
    [
      { name: 'stateDelta', fn: () => drain(inPlace().pipe(stateDelta())) },
      { name: 'compare+copy', fn: () => drain(inPlace().pipe(compareInPlace())) },
    ],
    { runs, warmup },
  );
  rows.push(checked(speedRow({ item: '5b', name: `stateDelta() vs compare + applyPatch to a copy, in place, 10k records, ${steps} steps`, results: b, ours: 'stateDelta', baseline: 'compare+copy', target: { op: '>=', value: 1 } }), rebuilds(inPlace(), stateDelta(), () => state)));

  // (c) a flat 10k-key object and a 100x100 nested map, updated immutably.
  const flat0 = Object.fromEntries(Array.from({ length: 10_000 }, (_, i) => [`k${i}`, i]));
  const flat = snapshots(immutableSteps(flat0, steps, (s, step) => ({ ...s, [`k${(step * 7919) % 10_000}`]: -step })));
  const nested0 = Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`a${i}`, Object.fromEntries(Array.from({ length: 100 }, (_, j) => [`b${j}`, i * 100 + j]))]));
  const nested = snapshots(
    immutableSteps(nested0, steps, (s, step) => {
      const a = `a${(step * 31) % 100}`;
      return { ...s, [a]: { ...s[a], [`b${(step * 17) % 100}`]: -step } };
    }),
  );
  for (const [label, input] of [
    ['flat 10k-key object', flat],
    ['100x100 nested map', nested],
  ]) {
    log(`stateDelta: ${label}, ${steps} immutable steps`);
    const c = await measure(
      [
        { name: 'stateDelta immutable', fn: () => drain(from(input).pipe(stateDelta({ immutable: true }))) },
        { name: 'compare', fn: () => drain(from(input).pipe(compareEach())) },
      ],
      { runs, warmup },
    );
    rows.push(checked(speedRow({ item: '5c', name: `stateDelta({ immutable: true }) vs compare, ${label}, ${steps} steps`, results: c, ours: 'stateDelta immutable', baseline: 'compare' }), rebuilds(from(input), stateDelta({ immutable: true }), last(input))));
  }
  return rows;
}
