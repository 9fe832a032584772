// The bench workloads, built before any timing (see docs/performance.md for their exact shape).
import { toAgui } from 'agui-rx';
import { from, Observable } from 'rxjs';

process.env.SUPPRESS_TRANSFORMATION_WARNINGS = '1';

const WORDS = ['the ', 'quick ', 'brown ', 'fox ', 'jumps ', 'over ', 'a ', 'lazy ', 'dog, ', 'and ', 'then ', 'rests. '];

/** A silent diagnostics sink: the bench measures the work, not console output. */
export const onDiagnostic = () => {};

/** Options of toAgui for every bench run. */
export const runOptions = () => ({ threadId: 'bench-thread', runId: 'bench-run', onDiagnostic });

/**
 * The "mixed" workload: `turns` turns of 200 events (1M events = 5000 turns). Each turn: an
 * assistant message m<turn> of 160 TEXT_MESSAGE_CHUNKs (a short word each) with 10 STATE_SNAPSHOTs
 * spread among them (one after every 16 chunks; an immutable update `{ ...state, progress: n }`
 * that keeps a few unchanged subtrees), then 30 TOOL_CALL_CHUNKs alternating between two parallel
 * calls c<turn>a / c<turn>b (toolCallName on every chunk, parentMessageId m<turn>, a JSON fragment
 * each; each call's 15 fragments make `{"query":"…"}`). 80% text, 15% tool, 5% state.
 * Variants for single operators: `activity` sends each state as an ACTIVITY_SNAPSHOT of activity
 * `a<turn>` instead; `steps` adds STEP_STARTED / STEP_FINISHED `turn<turn>` around each turn.
 */
export function mixedEvents(turns, { activity = false, steps = false } = {}) {
  const events = [];
  let state = {
    progress: 0,
    plan: { steps: ['search', 'read', 'answer'], owner: 'agent' },
    settings: { model: 'bench', temperature: 0.2, tools: ['search', 'fetch'] },
    sources: [{ url: 'https://example.com/a', title: 'A' }, { url: 'https://example.com/b', title: 'B' }],
  };
  let progress = 0;
  for (let turn = 0; turn < turns; turn++) {
    const messageId = `m${turn}`;
    if (steps) events.push({ type: 'STEP_STARTED', stepName: `turn${turn}` });
    for (let i = 0; i < 160; i++) {
      events.push({ type: 'TEXT_MESSAGE_CHUNK', messageId, delta: WORDS[(turn + i) % WORDS.length] });
      if (i % 16 === 15) {
        state = { ...state, progress: ++progress };
        events.push(activity ? { type: 'ACTIVITY_SNAPSHOT', messageId: `a${turn}`, activityType: 'progress', content: state } : { type: 'STATE_SNAPSHOT', snapshot: state });
      }
    }
    for (let i = 0; i < 30; i++) {
      const k = i >> 1;
      const delta = k === 0 ? '{"query":"' : k === 14 ? '"}' : WORDS[(turn + k) % WORDS.length];
      events.push({ type: 'TOOL_CALL_CHUNK', toolCallId: `c${turn}${i % 2 ? 'b' : 'a'}`, toolCallName: 'search', parentMessageId: messageId, delta });
    }
    if (steps) events.push({ type: 'STEP_FINISHED', stepName: `turn${turn}` });
  }
  return events;
}

/** The "text-only" workload: `n` TEXT_MESSAGE_CHUNKs, a new message every `perMessage` (200). */
export function textEvents(n, perMessage = 200) {
  const events = new Array(n);
  for (let i = 0; i < n; i++) events[i] = { type: 'TEXT_MESSAGE_CHUNK', messageId: `m${(i / perMessage) | 0}`, delta: WORDS[i % WORDS.length] };
  return events;
}

/** Collects an Observable that emits synchronously into an array. */
export function collectSync(source$) {
  const out = [];
  let failure;
  source$.subscribe({ next: (value) => out.push(value), error: (error) => (failure = error) });
  if (failure) throw failure;
  return out;
}

/** toAgui's output for some agent events, collected once: a well-formed AG-UI run. */
export function aguiRun(events) {
  return collectSync(from(events).pipe(toAgui(runOptions())));
}

/**
 * Subscribes to a synchronous Observable and drains it, keeping only a count (so the output is
 * consumed but not stored). Throws the stream's error, if any.
 */
export function drain(source$) {
  let count = 0;
  let failure;
  source$.subscribe({ next: () => count++, error: (error) => (failure = error) });
  if (failure) throw failure;
  return count;
}

/** An Observable that emits `n` events made by `make(i)` in a loop: the input is never held in memory. */
export function lazy(n, make) {
  return new Observable((subscriber) => {
    for (let i = 0; i < n && !subscriber.closed; i++) subscriber.next(make(i));
    subscriber.complete();
  });
}
