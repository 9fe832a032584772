import type { Event } from '@ag-ui/core';
import { Observable, Subject, filter, map, pipe, type Subscriber } from 'rxjs';
import { isTerminalEvent } from '../protocol/agentEvent.js';
import { AguiRxError, assertNumberOption } from '../protocol/errors.js';
import type { RunLogEntry, RunRecord, RunStore } from './runStore.js';
import { assertStorable } from './storedEvent.js';
import { copyWith, MAX_TIMER_MS } from '../protocol/values.js';

/** Options of {@link createMemoryRunStore}. */
export interface MemoryRunStoreOptions {
  /** How long a finished run stays readable (its events and record), in ms. Default: 600000 (10 min). */
  retainMs?: number | undefined;
  /** How many entries a thread's log keeps, the oldest dropped first: a reader behind what was dropped gets `CURSOR_EXPIRED`. Default: no limit. */
  maxLen?: number | undefined;
  /** The clock, in ms since the epoch (specs pass a fake one). Default: `Date.now`. */
  now?: (() => number) | undefined;
}

/** A run as this store holds it: its record, its entries, and who waits for more. */
interface MemoryRun {
  record: RunRecord;
  /** This run's entries, ascending (a cursor is the entry's sequence number in the thread's log): made once, handed to every reader as they are. */
  entries: RunLogEntry[];
  /** The last sequence number of this run that `maxLen` dropped, if any: a read after an earlier one has lost entries. */
  trimmedUpTo?: number | undefined;
  /**
   * Live readers, told of every appended batch (made for the first one: most runs have one reader,
   * some none). Their own subscribers, not a Subject's, and no teardown: a reader that unsubscribed
   * is `closed` and is dropped at the next append or read (a Subject, its subscription and a
   * teardown per reader cost more than the run's log).
   */
  live?: Subscriber<RunLogEntry[]>[] | undefined;
  /** Registered readers and until when, made for the first one. */
  readers?: Map<string, number> | undefined;
}

/** A thread: its runs in creation order, and the next sequence number of its log. */
interface MemoryThread {
  /** Its runs in creation order. */
  runs: MemoryRun[];
  /**
   * Its runs by id, made once it has more than `INDEX_FROM` (most threads hold a few runs, and a
   * Map per thread cost more than a run's log; a thread that holds many gets its lookups fast).
   */
  byId?: Map<string, MemoryRun> | undefined;
  nextSeq: number;
  /** The oldest sequence number the log still keeps (`maxLen`). */
  firstSeq: number;
}

/** How many runs a thread holds before they are indexed by id. */
const INDEX_FROM = 8;

/** The thread's run `runId`, if it holds it. */
const runIn = (thread: MemoryThread, runId: string): MemoryRun | undefined =>
  thread.byId !== undefined ? thread.byId.get(runId) : thread.runs.find((run) => run.record.runId === runId);

const cursorOf = (seq: number) => String(seq);
const isClosed = (subscriber: Subscriber<unknown>) => subscriber.closed;
const seqOf = (entry: RunLogEntry) => Number(entry.cursor);

/**
 * The batches of a read after cursor `seq`, each with only the entries strictly after it: the
 * replay starts after the cursor already, and this holds the live batches to it too when the
 * cursor is ahead of the log (one a client kept from an earlier run of the same id), as a Redis
 * stream's XREAD after an id does.
 */
const entriesAfter = (seq: number) =>
  pipe(
    map((batch: RunLogEntry[]) => (seqOf(batch[0]) > seq ? batch : batch.filter((entry) => seqOf(entry) > seq))),
    filter((batch: RunLogEntry[]) => batch.length > 0),
  );
const CURSOR = /^(0|[1-9][0-9]{0,15})$/;
/** Whether `text` is a cursor this store could have made: a sequence number read exactly (a safe integer). */
const isSequence = (text: string) => CURSOR.test(text) && Number(text) <= Number.MAX_SAFE_INTEGER;

/**
 * A {@link RunStore} in this process's memory: the run broker's default. No dependency, one
 * process: runs are not shared with other instances and do not survive a restart (use
 * `createRedisRunStore` from `agui-rx/broker/redis` for that).
 *
 * - Cursors are the decimal sequence numbers of the thread's log (`"1"`, `"2"`, …), ordered per thread.
 * - A thread's log keeps its last `maxLen` entries (default: all); a read that needs a dropped one
 *   errors `CURSOR_EXPIRED`.
 * - A finished run is kept `retainMs` (default 10 min) after its terminal event, then dropped;
 *   a thread with no runs left is dropped with it. Reading a dropped run errors `RUN_NOT_FOUND`.
 * - Live reads are synchronous: an append reaches every reader before `append` resolves.
 * - As the Redis store, it refuses a batch holding an event that JSON cannot carry (a reference
 *   cycle, a BigInt) with `INVALID_EVENT`, naming the event's type: nothing of the batch is appended.
 *
 * ## Example
 *
 * ```ts
 * const broker = createRunBroker({ store: createMemoryRunStore({ retainMs: 60_000 }) });
 * ```
 *
 * @param options `retainMs` (ms), `maxLen` and the clock.
 * @throws RangeError when `retainMs` or `maxLen` is not a valid number (`NaN`, negative, a fraction of an entry).
 * @return The store.
 */
export function createMemoryRunStore(options: MemoryRunStoreOptions = {}): RunStore {
  assertNumberOption(options, 'retainMs', (value) => value >= 0 && (value <= MAX_TIMER_MS || value === Infinity), `a number of ms ≥ 0, at most ${MAX_TIMER_MS} (what a timer holds, about 24.8 days), or Infinity: keep finished runs`);
  assertNumberOption(options, 'maxLen', (value) => value >= 1 && (Number.isInteger(value) || value === Infinity), 'a whole number of entries ≥ 1 (or Infinity)');
  const retainMs = options.retainMs ?? 600_000;
  const now = options.now ?? Date.now;
  const maxLen = options.maxLen ?? Infinity;
  const threads = new Map<string, MemoryThread>();
  const stops = new Subject<{ threadId: string; runId: string }>();
  // Retention timers of finished runs, cleared on close.
  const timers = new Set<ReturnType<typeof setTimeout>>();
  let closed = false;

  const assertOpen = () => {
    if (closed) throw new AguiRxError('STORE_UNAVAILABLE', 'The run store is closed: create a new one (or a new broker) to serve runs.');
  };
  const runOf = (threadId: string, runId: string) => {
    const thread = threads.get(threadId);
    return thread === undefined ? undefined : runIn(thread, runId);
  };
  const notFound = (threadId: string, runId: string) =>
    new AguiRxError('RUN_NOT_FOUND', `Run '${runId}' of thread '${threadId}' is not in the run store: it never started here, or it finished longer ago than the store retains runs.`);

  const drop = (threadId: string, runId: string) => {
    const thread = threads.get(threadId);
    const run = thread === undefined ? undefined : runIn(thread, runId);
    if (thread === undefined || run === undefined) return;
    thread.runs.splice(thread.runs.indexOf(run), 1);
    thread.byId?.delete(runId);
    notify(run, undefined, true);
    if (thread.runs.length === 0) threads.delete(threadId);
  };

  const finish = (threadId: string, run: MemoryRun) => {
    run.record = copyWith(run.record, { status: 'finished', finishedAt: now() });
    if (!Number.isFinite(retainMs)) return;
    const timer = setTimeout(() => {
      timers.delete(timer);
      drop(threadId, run.record.runId);
    }, retainMs);
    // Retention must never keep a process alive.
    timer.unref?.();
    timers.add(timer);
  };

  /** Drops the thread's oldest entries beyond maxLen, from whichever runs hold them. */
  const trim = (thread: MemoryThread) => {
    thread.firstSeq = thread.nextSeq - maxLen;
    for (const run of thread.runs) {
      let dropped = 0;
      while (dropped < run.entries.length && seqOf(run.entries[dropped]) < thread.firstSeq) dropped++;
      if (dropped === 0) continue;
      run.trimmedUpTo = seqOf(run.entries[dropped - 1]);
      run.entries.splice(0, dropped);
    }
  };

  /** Hands a batch to the run's live readers; with `end`, completes them (the run finished or was dropped). */
  const notify = (run: MemoryRun, batch: RunLogEntry[] | undefined, end: boolean) => {
    const { live } = run;
    if (live === undefined) return;
    // Those that left are dropped; leaving never changes the array, so it is told as it is.
    const readers = live.some(isClosed) ? live.filter((subscriber) => !subscriber.closed) : live;
    run.live = end || readers.length === 0 ? undefined : readers;
    for (const subscriber of readers) {
      if (batch !== undefined) subscriber.next(batch);
      if (end) subscriber.complete();
    }
  };

  const appendTo = (thread: MemoryThread, threadId: string, run: MemoryRun, events: readonly Event[]): string[] => {
    // Nothing after a terminal event is appended.
    const terminalAt = events.findIndex(isTerminalEvent);
    const taken = terminalAt === -1 ? events : events.slice(0, terminalAt + 1);
    const batch = taken.map((event): RunLogEntry => ({ cursor: cursorOf(thread.nextSeq++), event }));
    // The first batch is copied as is: a run that waits after RUN_STARTED holds one entry, not a grown array.
    if (run.entries.length === 0) run.entries = batch.slice();
    else for (const entry of batch) run.entries.push(entry);
    if (terminalAt !== -1) finish(threadId, run);
    if (thread.nextSeq - thread.firstSeq > maxLen) trim(thread);
    notify(run, batch, run.record.status === 'finished');
    return batch.map((entry) => entry.cursor);
  };

  return {
    async createRun(record) {
      assertOpen();
      let thread = threads.get(record.threadId);
      const run: MemoryRun = { record, entries: [], trimmedUpTo: undefined, live: undefined, readers: undefined };
      if (thread === undefined) {
        threads.set(record.threadId, { runs: [run], byId: undefined, nextSeq: 1, firstSeq: 1 });
        return true;
      }
      if (runIn(thread, record.runId) !== undefined) return false;
      thread.runs.push(run);
      if (thread.byId !== undefined) thread.byId.set(record.runId, run);
      else if (thread.runs.length > INDEX_FROM) thread.byId = new Map(thread.runs.map((each) => [each.record.runId, each]));
      return true;
    },
    async getRun(threadId, runId) {
      assertOpen();
      return runOf(threadId, runId)?.record;
    },
    async listRuns(threadId) {
      assertOpen();
      return (threads.get(threadId)?.runs ?? []).map((run) => run.record);
    },
    async append(threadId, runId, events) {
      assertOpen();
      const thread = threads.get(threadId);
      const run = thread === undefined ? undefined : runIn(thread, runId);
      if (thread === undefined || run === undefined) throw notFound(threadId, runId);
      if (run.record.status === 'finished') throw new AguiRxError('RUN_ENDED', `Run '${runId}' of thread '${threadId}' has ended: nothing can be appended to it.`);
      // As a shared store, which keeps events as JSON: a batch with one JSON cannot carry is refused whole.
      for (const event of events) {
        assertStorable(event, threadId, runId);
        if (isTerminalEvent(event)) break;
      }
      return events.length === 0 ? [] : appendTo(thread, threadId, run, events);
    },
    async endRun(threadId, runId, terminal) {
      assertOpen();
      const thread = threads.get(threadId);
      const run = thread === undefined ? undefined : runIn(thread, runId);
      if (thread === undefined || run === undefined) throw notFound(threadId, runId);
      if (run.record.status === 'finished') return undefined;
      return appendTo(thread, threadId, run, [terminal])[0];
    },
    read(threadId, runId, after) {
      const entries$ = new Observable<RunLogEntry[]>((subscriber) => {
        if (closed) return subscriber.error(new AguiRxError('STORE_UNAVAILABLE', 'The run store is closed.'));
        const run = runOf(threadId, runId);
        if (run === undefined) return subscriber.error(notFound(threadId, runId));
        if (after !== undefined && !isSequence(after)) return subscriber.error(new AguiRxError('INVALID_CURSOR', `'${after}' is not a cursor of this run log.`));
        if (run.trimmedUpTo !== undefined && (after === undefined || Number(after) < run.trimmedUpTo)) {
          return subscriber.error(
            new AguiRxError('CURSOR_EXPIRED', `Run '${runId}' of thread '${threadId}' has entries the run store no longer keeps (maxLen ${maxLen}): read it again from its start, or raise maxLen.`),
          );
        }
        let from = 0;
        if (after !== undefined) {
          const seq = Number(after);
          // Entries are ascending: the first one after the cursor.
          let lo = 0;
          let hi = run.entries.length;
          while (lo < hi) {
            const mid = (lo + hi) >>> 1;
            if (seqOf(run.entries[mid]) <= seq) lo = mid + 1;
            else hi = mid;
          }
          from = lo;
        }
        // Replay and going live happen in one synchronous step: no append can fall between them.
        if (from < run.entries.length) {
          const replay: RunLogEntry[] = run.entries.slice(from);
          subscriber.next(replay);
        }
        if (run.record.status === 'finished') return subscriber.complete();
        // A new array: one being told (in notify) is never changed.
        run.live = run.live === undefined ? [subscriber] : [...run.live.filter((reader) => !reader.closed), subscriber];
      });
      // (A cursor that is none errors before any batch.)
      return after === undefined ? entries$ : entries$.pipe(entriesAfter(Number(after)));
    },
    async renewLease(threadId, runId, owner, leaseUntil) {
      assertOpen();
      const run = runOf(threadId, runId);
      if (run === undefined || run.record.status === 'finished' || run.record.owner !== owner) return false;
      run.record = { ...run.record, leaseUntil };
      return true;
    },
    async requestStop(threadId, runId) {
      assertOpen();
      stops.next({ threadId, runId });
    },
    stopRequests: () => stops.asObservable(),
    async touchReader(threadId, runId, readerId, until) {
      assertOpen();
      const run = runOf(threadId, runId);
      if (run !== undefined) (run.readers ??= new Map()).set(readerId, until);
    },
    async removeReader(threadId, runId, readerId) {
      runOf(threadId, runId)?.readers?.delete(readerId);
    },
    async countReaders(threadId, runId, at) {
      assertOpen();
      let count = 0;
      for (const until of runOf(threadId, runId)?.readers?.values() ?? []) if (until > at) count++;
      return count;
    },
    inProcess: true,
    compare: (a, b) => Math.sign(Number(a) - Number(b)),
    isCursor: isSequence,
    async close() {
      closed = true;
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      for (const thread of threads.values()) for (const run of thread.runs) notify(run, undefined, true);
      threads.clear();
      stops.complete();
    },
  };
}
