import type { Event, RunAgentInput } from '@ag-ui/core';
import type { Observable } from 'rxjs';

/**
 * One entry of a run log: an AG-UI event of one run and its cursor.
 *
 * A cursor is opaque to everyone but its store, non-empty, and ordered within its thread: a later
 * entry of the thread compares later by the store's {@link RunStore.compare}. It is what an SSE
 * frame's `id:` line carries and what `Last-Event-ID` sends back.
 */
export interface RunLogEntry {
  /** The entry's cursor (for Redis Streams, the stream entry id, e.g. `1733108400000-3`). */
  readonly cursor: string;
  /** The event, exactly as `toAgui` emitted it. */
  readonly event: Event;
}

/** A run named by its thread and run ids. */
export interface RunRef {
  /** The thread's id. */
  readonly threadId: string;
  /** The run's id. */
  readonly runId: string;
}

/** Whether a run still runs. A run is `finished` once its terminal event (RUN_FINISHED or RUN_ERROR) is in the log. */
export type RunStatus = 'running' | 'finished';

/** What a store keeps of a run besides its events. */
export interface RunRecord {
  /** The thread the run belongs to. */
  readonly threadId: string;
  /** The run's id, unique within its thread. */
  readonly runId: string;
  /** The run's input as posted (its messages and state rebuild the thread for `connect`). */
  readonly input: RunAgentInput;
  /** The id of the broker instance that runs the agent (holds the lease). */
  readonly owner: string;
  /** `running` until its terminal event is appended, then `finished`. */
  readonly status: RunStatus;
  /** When the run was created, in ms since the epoch. */
  readonly startedAt: number;
  /** When its terminal event was appended, in ms since the epoch. */
  readonly finishedAt?: number | undefined;
  /** Until when the owner's lease holds, in ms since the epoch; past it with the run still running, the owner is taken for dead. */
  readonly leaseUntil: number;
}

/**
 * Where a run broker keeps its run logs: one log per thread, holding the events of the thread's
 * runs in the order they were appended, each with a cursor. Two stores implement it: in memory
 * (`createMemoryRunStore`, one process) and Redis Streams (`createRedisRunStore` in
 * `agui-rx/broker/redis`, many instances). Both pass one conformance suite
 * (`spec/lib/broker/runStoreConformance.ts`).
 *
 * Every method may reject (or error, for Observables) with an `AguiRxError`: `STORE_UNAVAILABLE`
 * when the store cannot be reached or does not answer in time, `CURSOR_EXPIRED` when a cursor is
 * older than what retention kept, `RUN_NOT_FOUND` for a run the store does not know, `RUN_ENDED`
 * for an append to a finished run, `INVALID_EVENT` for an append of an event that is not valid JSON.
 */
export interface RunStore {
  /**
   * Creates the run unless the thread already has one with that `runId`; atomic across instances.
   * @return true when this call created it (the caller then runs the agent), false when it existed.
   */
  createRun(record: RunRecord): Promise<boolean>;
  /** The run, or undefined when the store does not know it (never created, or trimmed by retention). */
  getRun(threadId: string, runId: string): Promise<RunRecord | undefined>;
  /** The thread's runs still retained, oldest first (by creation). */
  listRuns(threadId: string): Promise<RunRecord[]>;
  /**
   * Appends events of one running run, in order, in one round trip where the store can.
   * A batch that holds the run's terminal event finishes the run (status, finishedAt) atomically
   * with the append.
   * @return The cursors of the appended entries, in order.
   * @throws `RUN_ENDED` when the run is finished already (e.g. another instance declared it lost):
   * nothing is appended. `INVALID_EVENT` when an event of the batch is not valid JSON (a reference
   * cycle, a BigInt): nothing of the batch is appended. `STORE_UNAVAILABLE` when the store does not
   * answer in time: a retry with the same events first (the same objects) does not append twice
   * what the unanswered call may have appended after all.
   */
  append(threadId: string, runId: string, events: readonly Event[]): Promise<string[]>;
  /**
   * Appends `terminal` (a RUN_FINISHED or RUN_ERROR) and finishes the run, atomically, only if the
   * run is still running: the one way to end a run its owner lost, so that it is ended once.
   * @return The new entry's cursor, or undefined when the run had already finished.
   */
  endRun(threadId: string, runId: string, terminal: Event): Promise<string | undefined>;
  /**
   * The run's entries strictly after `after` (from the run's first entry when undefined): what the
   * log holds now, then live as it grows, in batches (one array per read). Completes right after the
   * batch that holds the run's terminal entry; an empty run that is finished completes at once.
   * Unsubscribing stops reading (releases any blocking read).
   * Errors with `CURSOR_EXPIRED` (retention trimmed past `after`), `RUN_NOT_FOUND` (the run is not,
   * or no longer, in the store) or `STORE_UNAVAILABLE`.
   */
  read(threadId: string, runId: string, after?: string): Observable<RunLogEntry[]>;
  /** Extends the owner's lease. @return false when the run is finished or owned by another instance (stop running it). */
  renewLease(threadId: string, runId: string, owner: string, leaseUntil: number): Promise<boolean>;
  /** Asks the run's owner, wherever it runs, to stop it (delivered through {@link stopRequests}). */
  requestStop(threadId: string, runId: string): Promise<void>;
  /** Every stop request made through any instance sharing the store, from now on. */
  stopRequests(): Observable<RunRef>;
  /** Registers or refreshes a reader of a run until `until` (ms since the epoch); readers of all instances count. */
  touchReader(threadId: string, runId: string, readerId: string, until: number): Promise<void>;
  /** Removes a reader. */
  removeReader(threadId: string, runId: string, readerId: string): Promise<void>;
  /** How many readers of the run are registered with `until` after `now` (ms since the epoch). */
  countReaders(threadId: string, runId: string, now: number): Promise<number>;
  /**
   * True when the log lives in this process's memory (the in-memory store): it cannot become
   * unreachable while the process runs, so the broker keeps no copy of its runs' events for its
   * readers to fall back on. Absent or false for a shared store (Redis).
   */
  readonly inProcess?: boolean | undefined;
  /** -1, 0 or 1 as cursor `a` is before, equal to or after `b` within one thread. */
  compare(a: string, b: string): number;
  /** Whether `cursor` is a cursor this store could have made (a malformed `Last-Event-ID` is refused with 400). */
  isCursor(cursor: string): boolean;
  /** Releases connections and timers; the store is unusable after. */
  close(): Promise<void>;
}
