// Item 5: stateDelta against fast-json-patch `compare` of the whole state, one change per step.
import jsonpatch from 'fast-json-patch';
import { stateDelta } from 'agui-rx';
import { from, map, Subject } from 'rxjs';
import { measure, speedRow } from './harness.mjs';
import { collectSync } from './workloads.mjs';

export const name = 'stateDelta';

const RECORDS = 10_000;

const record = (id, version) => ({ id: `r${id}`, name: `record ${id}`, qty: id % 97, price: (id % 1000) / 10 + version, tags: ['a', `v${version}`] });
/** The record replaced at a step. */
const indexAt = (step) => (step * 7919) % RECORDS;

/** Deep-freezes a value (what Immer or a careful producer hands over). */
function deepFreeze(value) {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const key of Object.keys(value)) deepFreeze(value[key]);
  }
  return value;
}

/** The states of `steps` immutable steps after `initial`, each made by `next(previous, step)`. */
function immutableSteps(initial, steps, next) {
  const states = [initial];
  for (let step = 1; step <= steps; step++) states.push(next(states[step - 1], step));
  return states;
}

const snapshot = (state) => ({ type: 'STATE_SNAPSHOT', snapshot: state });

/** The baseline: `compare` of each state with the previous one, in the same pipeline shape. */
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
 * previous state: one deep copy at the first snapshot, then each patch applied to that copy
 * (cheaper than re-copying the whole state each step; compare deep-clones the values it puts in
 * a patch, so the copy never shares the producer's objects).
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
 * A contender over pre-built states: the first snapshot goes through untimed (both sides pay
 * for a first full copy, which says nothing about diffing), the steps after it are timed.
 */
function steady(name, states, operator) {
  return {
    name,
    setup() {
      const subject = new Subject();
      subject.pipe(operator()).subscribe();
      subject.next(snapshot(states[0]));
      return () => {
        for (let step = 1; step < states.length; step++) subject.next(snapshot(states[step]));
        subject.complete();
      };
    },
  };
}

/** The same for one state mutated in place before each step (the mutation is timed for both). */
function steadyInPlace(name, steps, newRecords, records, operator) {
  return {
    name,
    setup() {
      const state = { records: records.map((r) => ({ ...r })) };
      const subject = new Subject();
      subject.pipe(operator()).subscribe();
      subject.next(snapshot(state));
      return () => {
        for (let step = 1; step <= steps; step++) {
          state.records[indexAt(step)] = newRecords[step];
          subject.next(snapshot(state));
        }
        subject.complete();
      };
    },
  };
}

/**
 * Whether the events `stateDelta` emits for some snapshots rebuild the final state (checked once,
 * untimed): snapshots replace the client's state, deltas are applied to it (RFC 6902).
 */
function rebuilds(events, operator, finalState) {
  let client;
  for (const event of collectSync(from(events).pipe(operator))) {
    if (event.type === 'STATE_SNAPSHOT') client = jsonpatch.deepClone(event.snapshot);
    else if (event.type === 'STATE_DELTA') client = jsonpatch.applyPatch(client, event.delta, false, true).newDocument;
  }
  return JSON.stringify(client) === JSON.stringify(finalState);
}

/** Marks a row with whether ours gave the right result; a wrong one fails the row whatever its speed. */
function checked(r, correct) {
  return correct ? { ...r, correct } : { ...r, correct, pass: false, name: `${r.name} — WRONG RESULT` };
}

export async function run({ quick, runs, warmup, log }) {
  // In place, every step costs a whole-state walk on both sides: fewer steps with --quick.
  const steps = quick ? 10 : 100;
  const inPlaceSteps = quick ? 3 : 30;
  const rows = [];
  const records = Array.from({ length: RECORDS }, (_, i) => record(i, 0));
  const replace = (s, step) => ({ ...s, records: s.records.with(indexAt(step), record(indexAt(step), step)) });
  const last = (states) => states[states.length - 1];

  // (a) immutable updates: the option, and deep-frozen states without it.
  const plain = immutableSteps({ records }, steps, replace);
  const frozen = immutableSteps(deepFreeze({ records: records.map((r) => ({ ...r, tags: [...r.tags] })) }), steps, (s, step) => deepFreeze(replace(s, step)));
  log(`stateDelta: 10k records, ${steps} immutable steps`);
  const a = await measure(
    [
      steady('stateDelta immutable', plain, () => stateDelta({ immutable: true })),
      steady('stateDelta frozen', frozen, () => stateDelta()),
      steady('compare', plain, compareEach),
    ],
    { runs, warmup },
  );
  const nameA = (what) => `${what} vs compare, 10k records, ${steps} steps`;
  rows.push(checked(speedRow({ item: '5a', name: nameA('stateDelta({ immutable: true })'), results: a, ours: 'stateDelta immutable', baseline: 'compare', target: { op: '>=', value: 20 } }), rebuilds(plain.map(snapshot), stateDelta({ immutable: true }), last(plain))));
  rows.push(checked(speedRow({ item: '5a', name: nameA('stateDelta() on deep-frozen states'), results: a, ours: 'stateDelta frozen', baseline: 'compare', target: { op: '>=', value: 20 } }), rebuilds(frozen.map(snapshot), stateDelta(), last(frozen))));

  // (b) in place: one object mutated and re-emitted.
  const newRecords = Array.from({ length: inPlaceSteps + 1 }, (_, step) => record(indexAt(step), step));
  log(`stateDelta: 10k records, ${inPlaceSteps} in-place steps`);
  const b = await measure(
    [steadyInPlace('stateDelta', inPlaceSteps, newRecords, records, () => stateDelta()), steadyInPlace('compare+copy', inPlaceSteps, newRecords, records, compareInPlace)],
    { runs, warmup },
  );
  // Correctness in place: the same object emitted at every step, checked against its final value.
  const state = { records: records.map((r) => ({ ...r })) };
  const mutated = [];
  const correctInPlace = (() => {
    let client;
    const subject = new Subject();
    subject.pipe(stateDelta()).subscribe((event) => mutated.push(event));
    subject.next(snapshot(state));
    for (let step = 1; step <= inPlaceSteps; step++) {
      state.records[indexAt(step)] = newRecords[step];
      subject.next(snapshot(state));
    }
    subject.complete();
    for (const event of mutated) {
      if (event.type === 'STATE_SNAPSHOT') client = jsonpatch.deepClone(event.snapshot);
      else if (event.type === 'STATE_DELTA') client = jsonpatch.applyPatch(client, event.delta, false, true).newDocument;
    }
    return JSON.stringify(client) === JSON.stringify(state);
  })();
  rows.push(checked(speedRow({ item: '5b', name: `stateDelta() vs compare + applyPatch to a copy, in place, 10k records, ${inPlaceSteps} steps`, results: b, ours: 'stateDelta', baseline: 'compare+copy', target: { op: '>=', value: 1 } }), correctInPlace));

  // (c) a flat 10k-key object and a 100x100 nested map, updated immutably.
  const flat0 = Object.fromEntries(Array.from({ length: 10_000 }, (_, i) => [`k${i}`, i]));
  const flat = immutableSteps(flat0, steps, (s, step) => ({ ...s, [`k${indexAt(step)}`]: -step }));
  const nested0 = Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`a${i}`, Object.fromEntries(Array.from({ length: 100 }, (_, j) => [`b${j}`, i * 100 + j]))]));
  const nested = immutableSteps(nested0, steps, (s, step) => {
    const key = `a${(step * 31) % 100}`;
    return { ...s, [key]: { ...s[key], [`b${(step * 17) % 100}`]: -step } };
  });
  for (const [label, states] of [
    ['flat 10k-key object', flat],
    ['100x100 nested map', nested],
  ]) {
    log(`stateDelta: ${label}, ${steps} immutable steps`);
    const c = await measure([steady('stateDelta immutable', states, () => stateDelta({ immutable: true })), steady('compare', states, compareEach)], { runs, warmup });
    rows.push(checked(speedRow({ item: '5c', name: `stateDelta({ immutable: true }) vs compare, ${label}, ${steps} steps`, results: c, ours: 'stateDelta immutable', baseline: 'compare', target: { op: '>=', value: 1 } }), rebuilds(states.map(snapshot), stateDelta({ immutable: true }), last(states))));
  }
  // (d) a document whose last paragraph grows by one token per event (a streamed answer in the
  // state), ~20 KB and ~200 KB: immutable (new objects along the changed path) and in place.
  const docSteps = quick ? 200 : 2000;
  for (const [label, paragraphs] of [
    ['~20 KB document', 100],
    ['~200 KB document', 1000],
  ]) {
    const doc0 = { title: 'Bench document', paragraphs: Array.from({ length: paragraphs }, (_, i) => paragraph(i)) };
    const last = paragraphs - 1;
    const grown = immutableSteps(doc0, docSteps, (s, step) => ({ ...s, paragraphs: s.paragraphs.with(last, s.paragraphs[last] + token(step)) }));
    log(`stateDelta: ${label} (${(JSON.stringify(doc0).length / 1000).toFixed(0)} KB), last paragraph growing, ${docSteps} immutable steps`);
    const d = await measure([steady('stateDelta immutable', grown, () => stateDelta({ immutable: true })), steady('compare', grown, compareEach)], { runs, warmup });
    rows.push(
      checked(
        speedRow({ item: '5d', name: `stateDelta({ immutable: true }) vs compare, ${label}, last paragraph growing, ${docSteps} steps`, results: d, ours: 'stateDelta immutable', baseline: 'compare', target: { op: '>=', value: 1 } }),
        rebuilds(grown.map(snapshot), stateDelta({ immutable: true }), grown[grown.length - 1]),
      ),
    );
    log(`stateDelta: ${label}, last paragraph growing, ${docSteps} in-place steps`);
    const growInPlace = (name, operator) => ({
      name,
      setup() {
        const state = { title: doc0.title, paragraphs: [...doc0.paragraphs] };
        const subject = new Subject();
        subject.pipe(operator()).subscribe();
        subject.next(snapshot(state));
        return () => {
          for (let step = 1; step <= docSteps; step++) {
            state.paragraphs[last] += token(step);
            subject.next(snapshot(state));
          }
          subject.complete();
        };
      },
    });
    const e = await measure([growInPlace('stateDelta', () => stateDelta()), growInPlace('compare+copy', compareInPlace)], { runs, warmup });
    const correct = (() => {
      const state = { title: doc0.title, paragraphs: [...doc0.paragraphs] };
      const out = [];
      const subject = new Subject();
      subject.pipe(stateDelta()).subscribe((event) => out.push(event));
      subject.next(snapshot(state));
      for (let step = 1; step <= docSteps; step++) {
        state.paragraphs[last] += token(step);
        subject.next(snapshot(state));
      }
      subject.complete();
      let client;
      for (const event of out) {
        if (event.type === 'STATE_SNAPSHOT') client = jsonpatch.deepClone(event.snapshot);
        else if (event.type === 'STATE_DELTA') client = jsonpatch.applyPatch(client, event.delta, false, true).newDocument;
      }
      return JSON.stringify(client) === JSON.stringify(state);
    })();
    rows.push(
      checked(
        speedRow({ item: '5d', name: `stateDelta() vs compare + applyPatch to a copy, in place, ${label}, last paragraph growing, ${docSteps} steps`, results: e, ours: 'stateDelta', baseline: 'compare+copy', target: { op: '>=', value: 1 } }),
        correct,
      ),
    );
  }
  return rows;
}

/** Paragraph `i` of the bench document: about 200 characters, a quote and an escape now and then. */
function paragraph(i) {
  const words = [];
  for (let k = 0; words.join(' ').length < 190; k++) words.push(WORDS[(i + k) % WORDS.length]);
  return `${i % 10 === 0 ? '"Quoted," she said. ' : ''}${words.join(' ')}.`;
}
const WORDS = ['lorem', 'ipsum', 'dolor', 'sit', 'amet', 'consectetur', 'adipiscing', 'elit', 'sed', 'do', 'eiusmod', 'tempor'];
/** The token appended at a step (a space and a word; a newline now and then, which JSON escapes). */
const token = (step) => (step % 50 === 0 ? '\n' : ' ') + WORDS[step % WORDS.length];
