import type { Event } from '@ag-ui/core';
import { Observable, Subject } from 'rxjs';
import { isTerminalEvent } from '../protocol/agentEvent.js';
import { AguiRxError } from '../protocol/errors.js';
import type { RunLogEntry, RunRecord, RunStore } from './runStore.js';

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
  trimmedUpTo?: number;
  /** Live readers, told of every appended batch (made for the first one: most runs have one reader, some none). */
  live?: Subject<RunLogEntry[]> | undefined;
  /** Registered readers and until when, made for the first one. */
  readers?: Map<string, number> | undefined;
}

/** A thread: its runs in creation order, and the next sequence number of its log. */
interface MemoryThread {
  runs: Map<string, MemoryRun>;
  nextSeq: number;
  /** The oldest sequence number the log still keeps (`maxLen`). */
  firstSeq: number;
}

const cursorOf = (seq: number) => String(seq);
const seqOf = (entry: RunLogEntry) => Number(entry.cursor);
const CURSOR = /^(0|[1-9][0-9]{0,15})$/;

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
 *
 * ## Example
 *
 * ```ts
 * const broker = createRunBroker({ store: createMemoryRunStore({ retainMs: 60_000 }) });
 * ```
 *
 * @param options `retainMs` (ms), `maxLen` and the clock.
 * @return The store.
 */
export function createMemoryRunStore(options: MemoryRunStoreOptions = {}): RunStore {
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
  const runOf = (threadId: string, runId: string) => threads.get(threadId)?.runs.get(runId);
  const notFound = (threadId: string, runId: string) =>
    new AguiRxError('RUN_NOT_FOUND', `Run '${runId}' of thread '${threadId}' is not in the run store: it never started here, or it finished longer ago than the store retains runs.`);

  const drop = (threadId: string, runId: string) => {
    const thread = threads.get(threadId);
    const run = thread?.runs.get(runId);
    if (thread === undefined || run === undefined) return;
    thread.runs.delete(runId);
    run.live?.complete();
    if (thread.runs.size === 0) threads.delete(threadId);
  };

  const finish = (threadId: string, run: MemoryRun) => {
    run.record = { ...run.record, status: 'finished', finishedAt: now() };
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
    for (const run of thread.runs.values()) {
      let dropped = 0;
      while (dropped < run.entries.length && seqOf(run.entries[dropped]) < thread.firstSeq) dropped++;
      if (dropped === 0) continue;
      run.trimmedUpTo = seqOf(run.entries[dropped - 1]);
      run.entries.splice(0, dropped);
    }
  };

  const appendTo = (thread: MemoryThread, threadId: string, run: MemoryRun, events: readonly Event[]): string[] => {
    const batch: RunLogEntry[] = [];
    for (const event of events) {
      const seq = thread.nextSeq++;
      const entry: RunLogEntry = { cursor: cursorOf(seq), event };
      run.entries.push(entry);
      batch.push(entry);
      if (isTerminalEvent(event)) {
        finish(threadId, run);
        break;
      }
    }
    if (thread.nextSeq - thread.firstSeq > maxLen) trim(thread);
    run.live?.next(batch);
    if (run.record.status === 'finished') run.live?.complete();
    return batch.map((entry) => entry.cursor);
  };

  return {
    async createRun(record) {
      assertOpen();
      let thread = threads.get(record.threadId);
      if (thread === undefined) threads.set(record.threadId, (thread = { runs: new Map(), nextSeq: 1, firstSeq: 1 }));
      if (thread.runs.has(record.runId)) return false;
      thread.runs.set(record.runId, { record, entries: [] });
      return true;
    },
    async getRun(threadId, runId) {
      assertOpen();
      return runOf(threadId, runId)?.record;
    },
    async listRuns(threadId) {
      assertOpen();
      return [...(threads.get(threadId)?.runs.values() ?? [])].map((run) => run.record);
    },
    async append(threadId, runId, events) {
      assertOpen();
      const thread = threads.get(threadId);
      const run = thread?.runs.get(runId);
      if (thread === undefined || run === undefined) throw notFound(threadId, runId);
      if (run.record.status === 'finished') throw new AguiRxError('RUN_ENDED', `Run '${runId}' of thread '${threadId}' has ended: nothing can be appended to it.`);
      return events.length === 0 ? [] : appendTo(thread, threadId, run, events);
    },
    async endRun(threadId, runId, terminal) {
      assertOpen();
      const thread = threads.get(threadId);
      const run = thread?.runs.get(runId);
      if (thread === undefined || run === undefined) throw notFound(threadId, runId);
      if (run.record.status === 'finished') return undefined;
      return appendTo(thread, threadId, run, [terminal])[0];
    },
    read(threadId, runId, after) {
      return new Observable<RunLogEntry[]>((subscriber) => {
        if (closed) return subscriber.error(new AguiRxError('STORE_UNAVAILABLE', 'The run store is closed.'));
        const run = runOf(threadId, runId);
        if (run === undefined) return subscriber.error(notFound(threadId, runId));
        if (after !== undefined && !CURSOR.test(after)) return subscriber.error(new AguiRxError('INVALID_CURSOR', `'${after}' is not a cursor of this run log.`));
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
        return (run.live ??= new Subject()).subscribe(subscriber);
      });
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
    isCursor: (cursor) => CURSOR.test(cursor),
    async close() {
      closed = true;
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      for (const thread of threads.values()) for (const run of thread.runs.values()) run.live?.complete();
      threads.clear();
      stops.complete();
    },
  };
}
