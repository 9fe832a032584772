import { EventType, type Event, type RunAgentInput } from '@ag-ui/core';
import { Observable, Subject, concat, concatMap, defaultIfEmpty, from, lastValueFrom, of, takeLast, takeWhile, tap, timeout, toArray, type Observer, type Subscriber, type Subscription, type Unsubscribable } from 'rxjs';
import { isTerminalEvent } from '../protocol/agentEvent.js';
import { safeUnsubscribe } from '../protocol/createOperator.js';
import { warnDiagnostic } from '../protocol/diagnostics.js';
import type { CancelListener, CancelSignal } from '../protocol/cancelSignal.js';
import { AguiRxError, assertFunctionOption, assertNumberOption, describeValue, errorMessage } from '../protocol/errors.js';
import { generateId } from '../protocol/generateId.js';
import type { BrokerAccess, BrokerFrame, RunBrokerApi } from '../transports/brokerRoutes.js';
import { compactRuns, type FinishedRun } from './compactThread.js';
import { createMemoryRunStore } from './createMemoryRunStore.js';
import type { RunLogEntry, RunRecord, RunRef, RunStore } from './runStore.js';
import { MAX_ID_BYTES, unroutableReason } from './routableId.js';
import { assertStorable } from './storedEvent.js';
import { copyWith, hasLoneSurrogate, MAX_TIMER_MS, missingMethods } from '../protocol/values.js';
import { trackOpenEntities, type OpenEntities } from '../tracking/openEntities.js';

/** What a request asks of a run, as the `authorize` hook sees it. */
export type BrokerAction = 'start' | 'attach' | 'events' | 'connect' | 'stop';

/** What every `authorize` question holds: the request, what it asks and of which thread (and run). */
export interface BrokerRequest extends BrokerAccess {
  /** What the request asks: start or attach to a run (POST), read it (GET events), connect to the thread, or stop the run. */
  readonly action: BrokerAction;
  /** The thread the request names. */
  readonly threadId: string;
  /** Absent for `connect`, which names a thread only. */
  readonly runId?: string | undefined;
}

/**
 * The question the `authorize` hook answers: may this request do `action` on this thread (and
 * run)? With a `Context` type (`createRunBroker<Caller>(…)`, for a handler whose `context` option
 * makes a `Caller`), `context` is that type and always there; without one, `unknown`.
 */
export type AuthorizeRequest<Context = unknown> = unknown extends Context ? BrokerRequest : BrokerRequest & { readonly context: Context };

/**
 * What the broker reports through `onActivity`, one call per happening (times in ms, counts in events):
 *
 * - `run-started`: this instance (`instanceId`) started the agent.
 * - `run-ended`: its terminal event is in the log; `outcome` as RUN_FINISHED says (`error` for
 *   RUN_ERROR, with its `code`), `events` appended, `durationMs` since the start. A run this
 *   instance stops running because the store lost it, or another instance ended it (its lease was
 *   taken for lapsed), ends `error` with code `RUN_LOST`; one whose event the store refused (not
 *   valid JSON), `error` with code `INVALID_EVENT`.
 * - `reader-attached` / `reader-left`: a connection of this instance began or stopped reading;
 *   `readers` of the run on this instance now, `delivered` events, `lag` events appended but not
 *   delivered when it left (known on the owner only).
 * - `run-detached`: the last reader left; the run is cancelled after `graceMs` unless one comes back.
 * - `run-lost`: a reader found the `owner`'s lease lapsed and ended the run RUN_LOST.
 * - `store-error`: an append failed (`message`); `unwritten` events are waiting to be written.
 */
export type BrokerActivity = RunRef &
  (
    | {
        /** This instance started the run's agent. */
        readonly type: 'run-started';
        /** The instance that runs it. */
        readonly instanceId: string;
      }
    | {
        /** The run's terminal event is in the log. */
        readonly type: 'run-ended';
        /** The instance that ran it. */
        readonly instanceId: string;
        /** RUN_FINISHED's outcome, or `error` for RUN_ERROR. */
        readonly outcome: 'success' | 'interrupt' | 'cancelled' | 'error';
        /** RUN_ERROR's code. */
        readonly code?: string | undefined;
        /** Events appended, the terminal one included. */
        readonly events: number;
        /** Time since the start, in ms. */
        readonly durationMs: number;
      }
    | {
        /** A connection of this instance began reading the run. */
        readonly type: 'reader-attached';
        /** The reader's id. */
        readonly readerId: string;
        /** Readers of the run on this instance, this one included. */
        readonly readers: number;
      }
    | {
        /** A connection of this instance stopped reading the run. */
        readonly type: 'reader-left';
        /** The reader's id. */
        readonly readerId: string;
        /** Readers of the run left on this instance. */
        readonly readers: number;
        /** Events the reader was handed. */
        readonly delivered: number;
        /** Events appended but not handed to it when it left (known on the owner only). */
        readonly lag?: number | undefined;
      }
    | {
        /** The last reader left: the run is cancelled after the grace unless one comes back. */
        readonly type: 'run-detached';
        /** The grace, in ms. */
        readonly graceMs: number;
      }
    | {
        /** A reader found the owner's lease lapsed and ended the run with RUN_LOST. */
        readonly type: 'run-lost';
        /** The instance that held the lease. */
        readonly owner: string;
      }
    | {
        /** An append to the store failed. */
        readonly type: 'store-error';
        /** The store's message. */
        readonly message: string;
        /** Events waiting to be written. */
        readonly unwritten: number;
      }
  );

/** Options of {@link createRunBroker}; `Context` is what the handler's `context` option makes of a request (the caller), as `authorize` sees it. */
export interface RunBrokerOptions<Context = unknown> {
  /** Where run logs live. Default: {@link createMemoryRunStore} (one process). */
  store?: RunStore | undefined;
  /**
   * How long a run goes on with no reader before it is cancelled, in ms. Default: 30000.
   * `Infinity` lets every run finish; the stop route cancels at once.
   */
  detachGraceMs?: number | undefined;
  /** How long an owner's lease holds without renewal, in ms; a dead owner's readers get RUN_ERROR `RUN_LOST` within about this. Default: 15000. */
  leaseMs?: number | undefined;
  /** The most readers of one run on this instance; one more is refused (429). Default: 100. */
  maxSubscribers?: number | undefined;
  /**
   * Decides every start (POST of a new run), attach (POST of a run that exists), events (GET),
   * connect and stop. Without it anyone may start a run, only the POST that started a run reads
   * it, and every other request is refused (403).
   */
  authorize?: ((request: AuthorizeRequest<Context>) => boolean | Promise<boolean>) | undefined;
  /** Called for each run start and end, reader arrival and departure, loss and store failure. */
  onActivity?: ((activity: BrokerActivity) => void) | undefined;
  /** This instance's id (the owner recorded on its runs). Default: a minted id. */
  instanceId?: string | undefined;
}

/** A run broker: runs agents into run logs and serves readers of them (see {@link createRunBroker}). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- as RunBrokerApi: without an argument, any broker
export interface RunBroker<Context = any> extends RunBrokerApi<Context> {
  /** `run` for a `start` cancelled through the run's record (a {@link CancelSignal}) instead of an AbortSignal; the handlers use it. */
  runWithCancel(input: RunAgentInput, start: (cancel: CancelSignal) => Observable<Event>, access: BrokerAccess, after?: string): Promise<Observable<BrokerFrame>>;
  /** This instance's id. */
  readonly instanceId: string;
  /** The store it writes to. */
  readonly store: RunStore;
  /** Cancels every run this instance owns (each ends RUN_FINISHED `cancelled`), then closes the store. */
  close(): Promise<void>;
}

// The broker keeps one plain record per run it owns and per reader it serves, and one set of
// functions for all of them: a closure per callback per stream cost more memory than the stream's
// own state (issue 13 bounds the broker's cost per open reader). For the same reason each record
// is the observer of what it subscribes to, its `next`/`error`/`complete` the broker's shared
// functions, called with the record as `this` (RxJS calls an observer object's methods on it).

/**
 * A run this instance runs: its cancel switch, its batch of events not yet appended, its timers;
 * the observer of its agent's events, and, for a `start` that takes one, its {@link CancelSignal}.
 */
interface OwnedRun extends RunRef, Partial<Observer<Event>>, CancelSignal {
  /** `keyOf(threadId, runId)`, shared with its readers. */
  readonly key: string;
  /** The AbortSignal's controller, for a `start` that takes an AbortSignal (`run`); none for `runWithCancel`. */
  readonly controller: AbortController | undefined;
  /** The run was cancelled. */
  aborted: boolean;
  /** The 'abort' listeners added through the record (`runWithCancel`), in order; called once, when it is cancelled. */
  listeners: readonly CancelListener[] | undefined;
  /** When it started, in ms since the epoch. */
  readonly startedAt: number;
  subscription?: Subscription | undefined;
  graceTimer?: ReturnType<typeof setTimeout> | undefined;
  /** How many detachment checks began, and the number of the latest that decided (an older one that answers later is stale). */
  detachChecks: number;
  detachDecided: number;
  /** Events the store took. */
  appended: number;
  /** Events emitted but not yet appended (one append in flight at a time). */
  batch: Event[];
  inFlight: boolean;
  /** The agent's terminal event (or the one the broker made), once emitted. */
  terminal?: Event | undefined;
  /** Until when this instance's lease is known to hold, in ms since the epoch. */
  leaseUntil: number;
  /** Since when appends have failed without a success in between, in ms since the epoch. */
  failingSince?: number | undefined;
  /** The run's events kept in memory for this instance's readers; none for a store in this process. */
  readonly mirror?: Mirror | undefined;
  /** This instance's readers of it, made for the first one. */
  readers: Reader[] | undefined;
}

/** What an owner keeps of its run's events, so that its readers go on while a shared store is unreachable. */
interface Mirror {
  /** The run's latest events as emitted (at most about `MIRROR_EVENTS`). */
  readonly events: Event[];
  /** The cursors of the written events, a prefix of `events`: `cursors[i]` is `events[i]`'s. */
  readonly cursors: string[];
  /** Each event as emitted (and a RUN_ERROR when the run is given up), for readers on the mirror. */
  readonly emitted: Subject<Event>;
}

/** A connection of this instance reading a run; the observer of its store read, and the teardown of its subscription. */
interface Reader extends RunRef, Partial<Observer<RunLogEntry[]>>, Unsubscribable {
  readonly key: string;
  /** Its number on this instance: its id is `<instanceId>.<seq>`. */
  readonly seq: number;
  readonly subscriber: Subscriber<BrokerFrame>;
  /**
   * Whether this instance runs the run: its owner counts it for detachment, so it is not
   * registered with the store (a registration per reader cost a round trip and memory).
   */
  readonly local: boolean;
  /** Events handed to it. */
  delivered: number;
  /** When the store last handed it entries, in ms since the epoch. */
  lastEventAt: number;
  done: boolean;
  /** Since when the store has failed to answer its checks, in ms since the epoch. */
  unreachableSince?: number | undefined;
  /** The cursor of the last entry handed to it. */
  lastCursor: string | undefined;
  /**
   * What the events handed to it left open, so that a RUN_ERROR that comes mid-run (the broker's
   * own: the run was lost, the store failed) follows their closing events. For a reader that
   * started after a cursor it knows only what opened since; its run's log is read then. None with
   * a store in this process, which neither fails nor loses an owner mid-run: its log is read then.
   */
  readonly open: OpenEntities | undefined;
  /** Whether it started after a cursor: what its client was given before is not in `open`. */
  readonly resumed: boolean;
  subscription?: Subscription | undefined;
  /** Its subscription to the owner's mirror, once the store failed under it. */
  fallback?: Subscription | undefined;
}

/** Whether a store can hold `event` (it is valid JSON). */
function isStorable(event: Event, run: RunRef): boolean {
  try {
    assertStorable(event, run.threadId, run.runId);
    return true;
  } catch {
    return false;
  }
}

/** How many of its latest events an owned run keeps in memory for its local readers. */
const MIRROR_EVENTS = 10_000;

const keyOf = (threadId: string, runId: string) => `${threadId}\u0000${runId}`;

// An owned run's record as a CancelSignal: its 'abort' listeners, kept in an array of exactly their
// number (a push onto [] would reserve room for 17), called once when the run is cancelled.
function addCancelListener(this: OwnedRun, type: 'abort', listener: CancelListener): void {
  // As on an EventTarget: a listener added twice is called once, and one added after the abort never.
  if (type !== 'abort' || this.aborted || this.listeners?.includes(listener)) return;
  this.listeners = this.listeners === undefined ? [listener] : [...this.listeners, listener];
}

function removeCancelListener(this: OwnedRun, type: 'abort', listener: CancelListener): void {
  if (type !== 'abort' || this.listeners === undefined || !this.listeners.includes(listener)) return;
  const rest = this.listeners.filter((each) => each !== listener);
  this.listeners = rest.length === 0 ? undefined : rest;
}

const forbidden = (action: BrokerAction) =>
  new AguiRxError(
    'FORBIDDEN',
    action === 'attach'
      ? 'This run exists already and this request may not read it. Configure the run broker\'s `authorize` hook to let clients attach to, resume, connect to and stop runs.'
      : `This request may not ${deniedAction[action]}. Configure the run broker's \`authorize\` hook to allow it.`,
  );

// What each action asks, as a refusal names it.
const deniedAction: Readonly<Record<BrokerAction, string>> = { start: 'start this run', attach: 'read this run', events: 'read this run', connect: 'connect to this thread', stop: 'stop this run' };

/** The refusal of a hook that exists and did not return true: it decided, so nothing is to be configured. */
const refused = (request: BrokerRequest) =>
  new AguiRxError(
    'FORBIDDEN',
    `The run broker's \`authorize\` hook refused this request: it may not ${request.action === 'attach' ? 'attach to this run, which exists already' : deniedAction[request.action]} (action '${request.action}', thread '${request.threadId}'${request.runId === undefined ? '' : `, run '${request.runId}'`}). Sign in as a caller the hook allows; a client that makes up its thread id (HttpAgent and ResumableHttpAgent mint one when none is given) must use one the hook accepts.`,
  );

/**
 * Creates a run broker: the agent's `toAgui` output is appended to a run log (one per thread, in
 * `store`), and every connection reads the log with its own cursor, so that runs outlive their
 * connections.
 *
 * - `run(input, start, access)` starts run `input.runId` unless the store has it (then it
 *   attaches, if `authorize` allows): the agent is never started twice for one `runId`, across
 *   every instance sharing the store. It returns the run's frames, `{ cursor, event }`. The
 *   signal `start` gets aborts only when the run is cancelled (stopped, detached, closed, lost),
 *   never once the run's terminal event is stored. `runWithCancel` is the same for a `start` that
 *   takes a {@link CancelSignal} (`aborted` and 'abort' listeners, as `toAgui`'s `signal`): the run's
 *   record is that signal, and no AbortSignal is made for the run (about 0.9 KB each in Node).
 * - `events(threadId, runId, after)` replays the run after cursor `after` (strictly), then live;
 *   it completes right after the run's terminal event (RUN_FINISHED or RUN_ERROR). A RUN_ERROR
 *   that ends the run mid-message (lost, or its store failing) comes after the closing events of
 *   what was open (frames without a cursor), as toAgui sends them before its own.
 * - `connect(input)` rebuilds the thread: its finished runs compacted into RUN_STARTED,
 *   MESSAGES_SNAPSHOT, STATE_SNAPSHOT and RUN_FINISHED, then each running run from its start, live.
 * - `stop(threadId, runId)` cancels the run wherever it runs: its log ends RUN_FINISHED
 *   `outcome: { type: "cancelled" }` after whatever was open is closed.
 * - Detached runs: when the last reader leaves, the run goes on for `detachGraceMs` (30 s), then
 *   is cancelled unless a reader came back.
 * - Leases: the owner renews its lease every `leaseMs / 3`; a reader that sees the lease expired
 *   with the run still running appends RUN_ERROR `RUN_LOST`, once (the store decides who).
 * - Ids its routes cannot carry are refused when a run is started (`INVALID_ARGUMENT`, 400): `.`
 *   and `..` (URLs resolve them away), ids over {@link MAX_ID_BYTES} (1024) bytes percent-encoded,
 *   and ids holding half of a UTF-16 surrogate pair.
 * - Errors are {@link AguiRxError}s: `FORBIDDEN` (403), `RUN_NOT_FOUND` (404),
 *   `TOO_MANY_SUBSCRIBERS` (429), `INVALID_CURSOR` (400); a reader whose store fails mid-stream
 *   gets a RUN_ERROR frame with the store's code (e.g. `STORE_UNAVAILABLE`, `CURSOR_EXPIRED`).
 *
 * ## Example
 *
 * ```ts
 * const broker = createRunBroker({ authorize: ({ request }) => isSignedIn(request) });
 * createServer(createAguiHandler(agent, { broker, basePath: '/agent' })).listen(8000);
 * ```
 *
 * @param options The store, grace and lease times (ms), the reader limit, `authorize` and `onActivity`.
 * @return The broker; pass it to `createAguiHandler` / `createAguiFetchHandler` as `broker`.
 * @throws RangeError when `leaseMs`, `detachGraceMs` or `maxSubscribers` is not a valid number (`NaN`, negative, a fraction of a reader); AguiRxError `INVALID_OPTIONS` when `authorize` or `onActivity` is not a function, `store` is not a run store, or `instanceId` is not a non-empty string.
 */
export function createRunBroker<Context = unknown>(options: RunBrokerOptions<Context> = {}): RunBroker<Context> {
  assertBrokerOptions(options);
  // The handler passes what its `context` option made, which `Context` names.
  const authorizeHook = options.authorize as ((request: BrokerRequest) => boolean | Promise<boolean>) | undefined;
  const store = options.store ?? createMemoryRunStore();
  const detachGraceMs = options.detachGraceMs ?? 30_000;
  const leaseMs = options.leaseMs ?? 15_000;
  const maxSubscribers = options.maxSubscribers ?? 100;
  const instanceId = options.instanceId ?? generateId();
  const report = (activity: BrokerActivity) => {
    try {
      options.onActivity?.(activity);
    } catch {
      // An observer's bug must not break a run.
    }
  };
  // How often leases and reader registrations are refreshed, and detachment checked, in ms.
  const tickMs = Math.max(50, Math.min(leaseMs / 3, 1000));
  const owned = new Map<string, OwnedRun>();
  // This instance's readers of runs it does not run (those of a run it runs are the run's `readers`).
  const readersHere = new Map<string, Reader[]>();
  /** This instance's readers of a run: the subscriber limit, detachment and write failures go by them. */
  const readersOf = (key: string): Reader[] | undefined => {
    const run = owned.get(key);
    return run !== undefined ? run.readers : readersHere.get(key);
  };
  let readerSeq = 0;
  let closed = false;

  // One timer for the whole instance, running while it owns a run or serves a reader: each owned
  // run renews its lease and checks for readers, each reader refreshes its registration and checks
  // the owner's lease. (A timer per run and per reader cost memory for every open stream.)
  let ticker: ReturnType<typeof setInterval> | undefined;
  const tick = () => {
    for (const run of owned.values()) {
      tickOwned(run);
      for (const reader of run.readers ?? []) tickReader(reader);
    }
    for (const readers of readersHere.values()) for (const reader of readers) tickReader(reader);
  };
  /** Starts the ticker when there is something to tick for, stops it when there is nothing left. */
  const updateTicker = () => {
    const busy = owned.size > 0 || readersHere.size > 0;
    if (busy && ticker === undefined) {
      ticker = setInterval(tick, tickMs);
      // It never keeps a process alive on its own.
      ticker.unref?.();
    } else if (!busy && ticker !== undefined) {
      clearInterval(ticker);
      ticker = undefined;
    }
  };

  const stopSubscription = store.stopRequests().subscribe(({ threadId, runId }) => {
    const run = owned.get(keyOf(threadId, runId));
    if (run !== undefined) cancel(run);
  });

  const authorize = async (request: BrokerRequest): Promise<void> => {
    if (authorizeHook === undefined) throw forbidden(request.action);
    if ((await authorizeHook(request)) !== true) throw refused(request);
  };

  /**
   * Cancels an owned run once no reader has been seen for `detachGraceMs`. A check whose store
   * count comes back after a later check decided (a reader arrived meanwhile) is stale and decides
   * nothing; and a reader here when the count comes back counts.
   */
  const checkDetached = async (run: OwnedRun) => {
    if (!Number.isFinite(detachGraceMs) || run.aborted) return;
    const { threadId, runId } = run;
    const check = ++run.detachChecks;
    const here = run.readers?.length ?? 0;
    const counted = here > 0 ? here : await store.countReaders(threadId, runId, Date.now()).catch(() => 1);
    // The run may have ended while the store counted: nothing is left to detach.
    if (owned.get(run.key) !== run || run.aborted || check < run.detachDecided) return;
    run.detachDecided = check;
    const readers = Math.max(counted, run.readers?.length ?? 0);
    if (readers > 0) {
      if (run.graceTimer !== undefined) clearTimeout(run.graceTimer);
      run.graceTimer = undefined;
    } else if (run.graceTimer === undefined) {
      report({ type: 'run-detached', threadId, runId, graceMs: detachGraceMs });
      run.graceTimer = setTimeout(() => cancel(run), detachGraceMs);
      run.graceTimer.unref?.();
    }
  };

  /**
   * Runs the agent of a run this instance just created: its events go to the store in batches, one
   * append in flight at a time. `start` gets the run's record: its CancelSignal, and its AbortSignal's controller when `withSignal`.
   */
  const own = (record: RunRecord, start: (run: OwnedRun) => Observable<Event>, withSignal: boolean) => {
    const { threadId, runId } = record;
    const run: OwnedRun = {
      threadId,
      runId,
      key: keyOf(threadId, runId),
      controller: withSignal ? new AbortController() : undefined,
      aborted: false,
      listeners: undefined,
      startedAt: Date.now(),
      subscription: undefined,
      graceTimer: undefined,
      detachChecks: 0,
      detachDecided: 0,
      appended: 0,
      batch: [],
      inFlight: false,
      terminal: undefined,
      leaseUntil: record.leaseUntil,
      failingSince: undefined,
      // A store in this process cannot become unreachable: no copy is needed.
      mirror: store.inProcess === true ? undefined : { events: [], cursors: [], emitted: new Subject() },
      readers: undefined,
      next: ownedNext,
      error: ownedError,
      addEventListener: addCancelListener,
      removeEventListener: removeCancelListener,
    };
    owned.set(run.key, run);
    updateTicker();
    report({ type: 'run-started', threadId, runId, instanceId });
    run.subscription = start(run).subscribe(run);
  };

  /** Cancels an owned run, once: its AbortSignal aborts, or its record's listeners are called in order. */
  function cancel(run: OwnedRun): void {
    if (run.aborted) return;
    run.aborted = true;
    run.controller?.abort();
    const listeners = run.listeners;
    run.listeners = undefined;
    for (const listener of listeners ?? []) {
      try {
        if (typeof listener === 'function') listener();
        else listener.handleEvent();
      } catch (error) {
        // As an EventTarget reports a throwing listener: the others still run, and the broker goes on.
        warnDiagnostic({ message: `An 'abort' listener of run '${run.runId}' threw while the run was cancelled: ${errorMessage(error, 'no reason given')}.`, event: error });
      }
    }
  }

  /** An owned run's agent emitted. */
  function ownedNext(this: OwnedRun, event: Event) {
    if (this.terminal === undefined) accept(this, event);
  }
  /** An owned run's pipeline errored: toAgui turns errors into RUN_ERROR, so the pipeline itself broke. */
  function ownedError(this: OwnedRun) {
    if (this.terminal === undefined) accept(this, { type: EventType.RUN_ERROR, code: 'RUN_FAILED', message: 'The run failed before its terminal event.' });
  }

  /** Takes one event of an owned run: into the batch (appended at the end of the tick) and the mirror. */
  const accept = (run: OwnedRun, event: Event) => {
    run.batch.push(event);
    remember(run, event);
    if (isTerminalEvent(event)) run.terminal = event;
    // One append per tick: a synchronous burst goes in one batch.
    if (run.batch.length === 1) queueMicrotask(() => flush(run));
  };

  /** Renews an owned run's lease and checks it for readers (every tick). */
  const tickOwned = (run: OwnedRun) => {
    const until = Date.now() + leaseMs;
    void store.renewLease(run.threadId, run.runId, instanceId, until).then(
      (held) => {
        if (held) run.leaseUntil = until;
        else release(run);
      },
      () => undefined,
    );
    void checkDetached(run);
  };

  /**
   * Stops running a run: no more writes, its agent unsubscribed and (`cancelRun`) cancelled; readers on
   * the mirror get `reason`, if any. A run that ended by itself is not aborted: its agent's signal
   * aborts only for a cancelled run, so work after the run may still use it.
   */
  const release = (run: OwnedRun, reason?: Event, cancelRun = true) => {
    if (owned.get(run.key) !== run) return;
    // Readers on the mirror learn why it ends; readers of the store see the store's own end.
    if (reason !== undefined) run.mirror?.emitted.next(reason);
    run.mirror?.emitted.complete();
    owned.delete(run.key);
    // Its readers here read on (its end is in the store, or they learn it failed): they are still counted.
    if (run.readers !== undefined && run.readers.length > 0) readersHere.set(run.key, run.readers);
    updateTicker();
    if (run.graceTimer !== undefined) clearTimeout(run.graceTimer);
    safeUnsubscribe(run.subscription);
    // The agent's own work (its model request) is aborted too.
    if (cancelRun) cancel(run);
  };

  /** The run's terminal event is in the store (or was given up on): release it and report how it ended. */
  const finished = (run: OwnedRun) => {
    release(run, undefined, false);
    const { terminal } = run;
    const outcome = terminal?.type === EventType.RUN_ERROR ? 'error' : ((terminal as { outcome?: { type?: string } } | undefined)?.outcome?.type ?? 'success');
    report({
      type: 'run-ended',
      threadId: run.threadId,
      runId: run.runId,
      instanceId,
      outcome: outcome as 'success' | 'interrupt' | 'cancelled' | 'error',
      code: terminal?.type === EventType.RUN_ERROR ? terminal.code : undefined,
      events: run.appended,
      durationMs: Date.now() - run.startedAt,
    });
  };

  /** The store would not take the run's events for a lease's time: stop the run and tell its readers here, rather than leave them waiting. */
  const giveUp = (run: OwnedRun, cause: unknown) => {
    const error = new AguiRxError(
      'STORE_UNAVAILABLE',
      `The run's events could not be written to the run store for ${Date.now() - (run.failingSince ?? run.startedAt)} ms (${errorMessage(cause, 'no reason given')}): ${run.batch.length} events were not written, so the run was stopped. Start it again once the store is back.`,
    );
    run.terminal = { type: EventType.RUN_ERROR, code: error.code, message: error.message };
    // Readers elsewhere learn it from the log, if the store takes this one last write.
    void store.endRun(run.threadId, run.runId, run.terminal).catch(() => undefined);
    // Readers here go on from memory (the events the store never took), then get the RUN_ERROR.
    for (const reader of [...(run.readers ?? [])]) {
      if (!reader.done && reader.fallback === undefined && !fallBack(reader)) fail(reader, error);
    }
    release(run, run.terminal);
    finished(run);
  };

  /**
   * The store refused an event of the batch (not valid JSON): the run ends with a RUN_ERROR saying
   * so, after the batch's events before that one; what the agent emits after it is dropped.
   */
  const refuse = (run: OwnedRun, events: readonly Event[], error: unknown) => {
    const bad = events.findIndex((event) => !isStorable(event, run));
    const kept = events.slice(0, bad === -1 ? 0 : bad).filter((event) => !isTerminalEvent(event));
    const terminal: Event = { type: EventType.RUN_ERROR, code: 'INVALID_EVENT', message: `${errorMessage(error, 'An event of the run is not valid JSON.')} The run was ended at this event.` };
    run.terminal = terminal;
    run.batch = [...kept, terminal];
    remember(run, terminal);
    // The agent stops: nothing it emits now reaches the log.
    safeUnsubscribe(run.subscription);
    cancel(run);
    flush(run);
  };

  /** Appends the run's batch, unless an append is in flight (its success appends what came since). */
  const flush = (run: OwnedRun) => {
    // A released run writes nothing more (closed broker, or given up).
    if (run.inFlight || run.batch.length === 0 || owned.get(run.key) !== run) return;
    const events = run.batch;
    run.batch = [];
    run.inFlight = true;
    store.append(run.threadId, run.runId, events).then(
      (cursors) => {
        run.inFlight = false;
        run.failingSince = undefined;
        run.appended += events.length;
        const { mirror } = run;
        if (mirror !== undefined) for (let i = 0; i < cursors.length && mirror.cursors.length < mirror.events.length; i++) mirror.cursors.push(cursors[i]);
        // The terminal event is the last one emitted: it ends its batch.
        if (run.terminal !== undefined && events[events.length - 1] === run.terminal) return finished(run);
        flush(run);
      },
      (error: unknown) => {
        run.inFlight = false;
        const code = (error as { code?: unknown })?.code;
        report({ type: 'store-error', threadId: run.threadId, runId: run.runId, message: errorMessage(error, 'the store gave no reason'), unwritten: events.length + run.batch.length });
        // An event the log cannot hold: no retry would take it, so the run ends here.
        if (code === 'INVALID_EVENT') return refuse(run, events, error);
        // Ended elsewhere (declared lost, or the store lost the run): stop running it.
        if (code === 'RUN_ENDED' || code === 'RUN_NOT_FOUND') {
          run.terminal = {
            type: EventType.RUN_ERROR,
            code: 'RUN_LOST',
            message:
              code === 'RUN_ENDED'
                ? 'The run was ended by another server (its lease was taken for lapsed); this server stopped running it.'
                : `The run log store lost this run (was it restarted without its data?); ${events.length + run.batch.length} events could not be written. Start the run again.`,
          };
          release(run, run.terminal);
          // Reported as a run that ended RUN_LOST, as its readers learn.
          return finished(run);
        }
        // Otherwise the store is unreachable: retry with the events kept, for at most a lease's time.
        run.batch = [...events, ...run.batch];
        run.failingSince ??= Date.now();
        // Past the lease another instance may have declared the run lost: stop rather than write after it.
        if (Date.now() > run.leaseUntil || Date.now() - run.failingSince >= leaseMs) return giveUp(run, error);
        setTimeout(() => flush(run), Math.min(1000, leaseMs / 10)).unref?.();
      },
    );
  };

  /** Keeps an event for this instance's readers, and hands it to those already on the mirror. */
  const remember = (run: OwnedRun, event: Event) => {
    const { mirror } = run;
    if (mirror === undefined) return;
    mirror.events.push(event);
    // Trimmed in chunks, so that a long run costs an amortised constant per event.
    if (mirror.events.length > MIRROR_EVENTS * 1.5) {
      const dropped = mirror.events.length - MIRROR_EVENTS;
      mirror.events.splice(0, dropped);
      mirror.cursors.splice(0, dropped);
    }
    if (mirror.emitted.observed) mirror.emitted.next(event);
  };

  /** A reader's id, as the store registers it and activity reports name it. */
  const readerIdOf = (reader: Reader) => `${instanceId}.${reader.seq}`;

  /** The run's frames after `after`, with this instance counted as a reader while subscribed. */
  const readRun = (threadId: string, runId: string, after: string | undefined): Observable<BrokerFrame> =>
    new Observable<BrokerFrame>((subscriber) => {
      const ownedRun = owned.get(keyOf(threadId, runId));
      const key = ownedRun?.key ?? keyOf(threadId, runId);
      const readers = readersOf(key);
      if ((readers?.length ?? 0) >= maxSubscribers) return subscriber.error(tooManySubscribers(runId));
      const reader: Reader = {
        threadId,
        runId,
        key,
        seq: ++readerSeq,
        subscriber,
        local: ownedRun !== undefined,
        delivered: 0,
        lastEventAt: Date.now(),
        done: false,
        unreachableSince: undefined,
        lastCursor: after,
        open: store.inProcess === true ? undefined : trackOpenEntities(),
        resumed: after !== undefined,
        subscription: undefined,
        fallback: undefined,
        next: readerNext,
        error: readerError,
        complete: readerComplete,
        unsubscribe: readerUnsubscribe,
      };
      // An array, not a Set: most runs have one reader, and a one-element array is the smallest.
      if (readers !== undefined) readers.push(reader);
      else if (ownedRun !== undefined) ownedRun.readers = [reader];
      else readersHere.set(key, [reader]);
      updateTicker();
      if (ownedRun !== undefined) void checkDetached(ownedRun);
      else touch(reader);
      if (options.onActivity !== undefined) report({ type: 'reader-attached', threadId, runId, readerId: readerIdOf(reader), readers: readersOf(key)!.length });
      reader.subscription = store.read(threadId, runId, after).subscribe(reader);
      // The record is its own teardown: no closure per reader.
      return reader;
    });

  /** A batch of entries the store read for a reader. */
  function readerNext(this: Reader, entries: RunLogEntry[]) {
    this.lastEventAt = Date.now();
    for (const entry of entries) {
      if (this.done) return;
      this.delivered++;
      this.lastCursor = entry.cursor;
      if (isTerminalEvent(entry.event)) return end(this, entry);
      this.open?.observe(entry.event);
      this.subscriber.next(entry);
    }
  }
  /** The store's read failed. */
  function readerError(this: Reader, error: unknown) {
    fail(this, error);
  }
  /**
   * The store's read ended: after the run's terminal entry (already handed over, see `end`), or with
   * none, for a cursor at or past the run's end (a later run's of the thread, or one never made).
   * The reader then learns why nothing comes, rather than reconnecting for ever.
   */
  function readerComplete(this: Reader) {
    if (this.done) return;
    this.done = true;
    const reader = this;
    const after = reader.lastCursor;
    // The cursor of the run's own end: its client has the end, and nothing more is to come.
    void lastEntryOf(reader).then(
      (last) => (last === undefined || last.cursor === after ? reader.subscriber.complete() : endPastTheRun(reader, after)),
      () => reader.subscriber.complete(),
    );
  }
  /** Its connection is gone (or the read ended): it leaves the run. */
  function readerUnsubscribe(this: Reader) {
    leave(this);
  }

  /** Registers or refreshes a reader of a run this instance does not own with the store, so that its owner counts it. */
  const touch = (reader: Reader) => {
    if (!reader.local) void store.touchReader(reader.threadId, reader.runId, readerIdOf(reader), Date.now() + leaseMs).catch(() => undefined);
  };

  /** Refreshes a reader's registration and, when its run has been silent for half a lease, checks the owner's lease (every tick). */
  const tickReader = (reader: Reader) => {
    touch(reader);
    // On the mirror, the owner (this instance) says how the run ends.
    if (reader.fallback !== undefined || Date.now() - reader.lastEventAt < leaseMs / 2) return;
    const { threadId, runId } = reader;
    void store.getRun(threadId, runId).then(
      (record) => {
        reader.unreachableSince = undefined;
        if (reader.done) return;
        if (record === undefined) return fail(reader, new AguiRxError('RUN_LOST', `Run '${runId}' vanished from the run store (it was restarted or its data was lost); its remaining events cannot be read. Start the run again.`));
        // Appends RUN_LOST when the owner's lease has lapsed with the run still running.
        if (record.status === 'running' && record.leaseUntil < Date.now()) {
          report({ type: 'run-lost', threadId, runId, owner: record.owner });
          void store
            .endRun(threadId, runId, {
              type: EventType.RUN_ERROR,
              code: 'RUN_LOST',
              message: `The server running this run (${record.owner}) stopped answering: its lease lapsed ${Date.now() - record.leaseUntil} ms ago. The run cannot go on; start it again.`,
            })
            .catch(() => undefined);
        }
      },
      (error: unknown) => {
        // A store that stays unreachable for a lease's time will not deliver the rest: say so rather than hang.
        reader.unreachableSince ??= Date.now();
        if (Date.now() - reader.unreachableSince < leaseMs) return;
        fail(
          reader,
          new AguiRxError(
            'STORE_UNAVAILABLE',
            `The run store has not answered for ${Date.now() - reader.unreachableSince} ms (${errorMessage(error, 'no reason given')}); the run's remaining events cannot be read. Reconnect later with Last-Event-ID.`,
          ),
        );
      },
    );
  };

  /** Goes on from this instance's memory when the store fails under a run it owns. @return false when it cannot (not owned here, or the reader's cursor is no longer in memory). */
  const fallBack = (reader: Reader): boolean => {
    const mine = owned.get(reader.key)?.mirror;
    if (mine === undefined) return false;
    let from = 0;
    if (reader.lastCursor !== undefined) {
      // The reader is near the head: search from the end.
      from = mine.cursors.lastIndexOf(reader.lastCursor) + 1;
      if (from === 0) return false;
    }
    for (let i = from; i < mine.events.length && !reader.done; i++) deliver(reader, { cursor: mine.cursors[i], event: mine.events[i] });
    if (reader.done) return true;
    reader.fallback = mine.emitted.subscribe({
      next: (event) => deliver(reader, { event }),
      complete: () => {
        if (reader.done) return;
        reader.done = true;
        reader.subscriber.complete();
      },
    });
    return true;
  };

  /** Hands a frame from the mirror to a reader; the terminal event ends its stream. */
  const deliver = (reader: Reader, frame: BrokerFrame) => {
    if (reader.done) return;
    reader.delivered++;
    if (frame.cursor !== undefined) reader.lastCursor = frame.cursor;
    if (isTerminalEvent(frame.event)) return end(reader, frame);
    reader.open?.observe(frame.event);
    reader.subscriber.next(frame);
  };

  /** The store failed under a reader: a run this instance owns goes on from its memory; otherwise the reader gets a RUN_ERROR frame and its stream ends. */
  const fail = (reader: Reader, error: unknown) => {
    if (reader.done) return;
    const code = (error as { code?: unknown })?.code;
    if ((code === 'STORE_UNAVAILABLE' || code === 'RUN_NOT_FOUND') && fallBack(reader)) return;
    end(reader, {
      event: {
        type: EventType.RUN_ERROR,
        code: typeof code === 'string' ? code : 'STORE_UNAVAILABLE',
        message: errorMessage(error, 'The run log could not be read.'),
      },
    });
  };

  /**
   * Hands a reader the run's terminal frame and ends its stream. A RUN_ERROR comes after the
   * closing events of what the run left open, as toAgui sends them, whoever made it (the run's
   * agent closes what it opened itself: then there is none): a run the broker ends (lost, or its
   * store failing) ends mid-message. A reader that started after a cursor, or one of a store in this
   * process, learns what its client was given from the run's log first; when the log cannot be
   * read, it closes what it knows.
   */
  const end = (reader: Reader, frame: BrokerFrame) => {
    reader.done = true;
    const { event } = frame;
    if (event.type !== EventType.RUN_ERROR) return endWith(reader, [], frame);
    const reason = { type: 'error', message: event.message } as const;
    if (!reader.resumed && reader.open !== undefined) return endWith(reader, reader.open.closeAll(reason), frame);
    void openBefore(reader).then(
      (open) => endWith(reader, open.closeAll(reason), frame),
      () => endWith(reader, reader.open?.closeAll(reason) ?? [], frame),
    );
  };

  const endWith = (reader: Reader, closers: readonly Event[], frame: BrokerFrame) => {
    for (const closer of closers) reader.subscriber.next({ event: closer });
    reader.subscriber.next(frame);
    reader.subscriber.complete();
  };

  /** A reader whose cursor is past its run's end learns why nothing comes, rather than reconnecting for ever. */
  const endPastTheRun = (reader: Reader, after: string | undefined) =>
    endWith(reader, [], {
      event: {
        type: EventType.RUN_ERROR,
        code: 'INVALID_CURSOR',
        message: `Run '${reader.runId}' of thread '${reader.threadId}' has nothing after Last-Event-ID '${String(after).slice(0, 80)}': the run ended before it (it is a later run's cursor, or one this server never gave). Read the run from its start, without Last-Event-ID, for its events and its end.`,
      },
    });

  /** The last entry of a reader's run, which has ended. Rejects when the store fails, or does not answer in a lease's time. */
  const lastEntryOf = (reader: Reader): Promise<RunLogEntry | undefined> => lastValueFrom(logOf(reader).pipe(takeLast(1), timeout(leaseMs), defaultIfEmpty(undefined)));

  /**
   * What the run's log, from its start up to the last entry a reader was given (its cursor, if it
   * was given none since), leaves open. Rejects when the store fails, or does not get that far in a lease's time.
   */
  const openBefore = async (reader: Reader): Promise<OpenEntities> => {
    const open = trackOpenEntities();
    const last = reader.lastCursor;
    // Given nothing from the start: nothing is open for its client.
    if (last === undefined) return open;
    const observe = (entry: RunLogEntry) => {
      if (store.compare(entry.cursor, last) <= 0 && !isTerminalEvent(entry.event)) open.observe(entry.event);
    };
    await lastValueFrom(logOf(reader, last).pipe(tap(observe), timeout(leaseMs), defaultIfEmpty(undefined)));
    return open;
  };

  /** A reader's run's entries from its start, one by one: all of them, or up to the first at or past cursor `until`. */
  const logOf = (reader: Reader, until?: string): Observable<RunLogEntry> =>
    store.read(reader.threadId, reader.runId).pipe(
      concatMap((entries) => entries),
      takeWhile((entry) => until === undefined || store.compare(entry.cursor, until) < 0, true),
    );

  /** A reader's teardown: it stops reading and is no longer counted. */
  const leave = (reader: Reader) => {
    reader.done = true;
    safeUnsubscribe(reader.subscription);
    safeUnsubscribe(reader.fallback);
    const { threadId, runId, key } = reader;
    const readers = readersOf(key);
    const index = readers?.indexOf(reader) ?? -1;
    if (index !== -1) readers!.splice(index, 1);
    const left = readers?.length ?? 0;
    if (left === 0 && readersHere.get(key) === readers) readersHere.delete(key);
    updateTicker();
    if (!reader.local) void store.removeReader(threadId, runId, readerIdOf(reader)).catch(() => undefined);
    const stillOwned = owned.get(key);
    if (stillOwned !== undefined) void checkDetached(stillOwned);
    if (options.onActivity !== undefined) {
      report({
        type: 'reader-left',
        threadId,
        runId,
        readerId: readerIdOf(reader),
        readers: left,
        delivered: reader.delivered,
        lag: stillOwned === undefined ? undefined : Math.max(0, stillOwned.appended - reader.delivered),
      });
    }
  };

  const tooManySubscribers = (runId: string) =>
    new AguiRxError('TOO_MANY_SUBSCRIBERS', `Run '${runId}' has ${maxSubscribers} readers on this server already, its limit (maxSubscribers). Close another tab or connection, or raise the limit.`);
  /** Refuses a reader before its stream starts, so that the handler can answer 429 rather than a 200 holding a RUN_ERROR. */
  const assertRoom = (threadId: string, runId: string) => {
    if ((readersOf(keyOf(threadId, runId))?.length ?? 0) >= maxSubscribers) throw tooManySubscribers(runId);
  };

  const assertCursor = (after: string | undefined) => {
    if (after !== undefined && !store.isCursor(after)) {
      throw new AguiRxError('INVALID_CURSOR', `Last-Event-ID '${after.slice(0, 80)}' is not a cursor of this server's run log. Send the id of the last event received, or none to read the run from its start.`);
    }
  };

  /** Starts run `input.runId` unless the store has it (then attaches, if allowed); its frames after `after`. */
  const startOrAttach = async (input: RunAgentInput, start: (run: OwnedRun) => Observable<Event>, withSignal: boolean, access: BrokerAccess, after?: string) => {
    if (closed) throw new AguiRxError('STORE_UNAVAILABLE', 'The run broker is closed.');
    assertCursor(after);
    const { threadId, runId } = input;
    // A store keeps ids as UTF-8 (Redis), and the run's URLs and events carry them so: half a surrogate pair would be another id there.
    for (const [name, id] of [['threadId', threadId], ['runId', runId]] as const) {
      if (hasLoneSurrogate(id)) throw new AguiRxError('INVALID_ARGUMENT', `The ${name} ${JSON.stringify(id.slice(0, 40))} holds half of a UTF-16 surrogate pair, which UTF-8 cannot carry: start runs under ids of whole characters.`);
      // A run its routes cannot name could never be resumed or stopped.
      const unroutable = unroutableReason(id);
      if (unroutable !== undefined) {
        throw new AguiRxError(
          'INVALID_ARGUMENT',
          `The ${name} ${JSON.stringify(id.length > 40 ? `${id.slice(0, 40)}…` : id)} ${unroutable}: the run's events and stop routes (…/threads/<threadId>/runs/<runId>/…) could not name this run, so it could never be resumed or stopped. Start runs under other ids (not '.' or '..', at most ${MAX_ID_BYTES} bytes each, percent-encoded).`,
        );
      }
    }
    const now = Date.now();
    const record: RunRecord = { threadId, runId, input, owner: instanceId, status: 'running', startedAt: now, leaseUntil: now + leaseMs };
    // With a hook, starting a run on a thread is its decision too: a thread id is no credential.
    if (authorizeHook !== undefined && (await store.getRun(threadId, runId)) === undefined) await authorize(copyWith(access, { action: 'start', threadId, runId }));
    const created = await store.createRun(record);
    if (!created) {
      await authorize(copyWith(access, { action: 'attach', threadId, runId }));
      assertRoom(threadId, runId);
    }
    // The run starts now, whether or not anyone reads it: readers replay the log, so none misses an event.
    else own(record, start, withSignal);
    // A cursor sent with the POST that started the run is from an earlier run of the same id (a log
    // since lost, say): this run is read from its start, RUN_STARTED first.
    return readRun(threadId, runId, created ? undefined : after);
  };

  return {
    instanceId,
    store,
    run: (input: RunAgentInput, start: (signal: AbortSignal) => Observable<Event>, access: BrokerAccess, after?: string) => startOrAttach(input, (run) => start(run.controller!.signal), true, access, after),
    runWithCancel: (input: RunAgentInput, start: (cancel: CancelSignal) => Observable<Event>, access: BrokerAccess, after?: string) => startOrAttach(input, start, false, access, after),
    async events(threadId: string, runId: string, after: string | undefined, access: BrokerAccess) {
      assertCursor(after);
      await authorize(copyWith(access, { action: 'events', threadId, runId }));
      if ((await store.getRun(threadId, runId)) === undefined) {
        throw new AguiRxError('RUN_NOT_FOUND', `There is no run '${runId}' in thread '${threadId}': it never started, or it finished longer ago than runs are kept.`);
      }
      assertRoom(threadId, runId);
      return readRun(threadId, runId, after);
    },
    async connect(input: RunAgentInput, access: BrokerAccess) {
      const { threadId } = input;
      await authorize(copyWith(access, { action: 'connect', threadId }));
      const runs = await store.listRuns(threadId);
      const finishedRuns = runs.filter((run) => run.status === 'finished');
      const running = runs.filter((run) => run.status === 'running');
      const history = await Promise.all(
        finishedRuns.map(async (record): Promise<FinishedRun> => {
          const entries = await lastValueFrom(store.read(threadId, record.runId).pipe(toArray()));
          return { record, events: entries.flat().map((entry) => entry.event) };
        }),
      );
      const compacted = compactRuns(threadId, history).map((event): BrokerFrame => ({ event }));
      const live = running.map((record) =>
        // The run's deltas were computed against its own input state: the client gets it right after RUN_STARTED.
        readRun(threadId, record.runId, undefined).pipe(
          concatMap((frame, index) =>
            index === 0 && frame.event.type === EventType.RUN_STARTED && record.input.state !== undefined
              ? of(frame, { event: { type: EventType.STATE_SNAPSHOT, snapshot: record.input.state } as Event })
              : of(frame),
          ),
        ),
      );
      return concat(from(compacted), ...live);
    },
    async stop(threadId: string, runId: string, access: BrokerAccess) {
      await authorize(copyWith(access, { action: 'stop', threadId, runId }));
      const record = await store.getRun(threadId, runId);
      if (record === undefined) {
        throw new AguiRxError('RUN_NOT_FOUND', `There is no run '${runId}' in thread '${threadId}' to stop.`);
      }
      if (record.status === 'finished') return 'finished';
      const mine = owned.get(keyOf(threadId, runId));
      if (mine !== undefined) {
        cancel(mine);
        return 'stopping';
      }
      if (record.leaseUntil < Date.now()) {
        // Its owner is gone: nothing is left to close it, so it ends as lost (RUN_ERROR may come at any time).
        await store.endRun(threadId, runId, { type: EventType.RUN_ERROR, code: 'RUN_LOST', message: `The run was stopped, and the server running it (${record.owner}) had stopped answering.` });
        return 'stopping';
      }
      await store.requestStop(threadId, runId);
      return 'stopping';
    },
    async close() {
      if (closed) return;
      closed = true;
      for (const run of owned.values()) cancel(run);
      // Give the cancelled runs' last appends a moment to land.
      await new Promise((resolve) => setTimeout(resolve, 10));
      safeUnsubscribe(stopSubscription);
      await store.close();
    },
  };
}

// What a run store must have: what the broker calls.
const storeMethods = ['createRun', 'getRun', 'listRuns', 'append', 'endRun', 'read', 'renewLease', 'requestStop', 'stopRequests', 'touchReader', 'removeReader', 'countReaders', 'compare', 'isCursor', 'close'] as const;

/**
 * Refuses, when the broker is made, an option that would silently do something else: a lease of
 * `NaN` ms never lapses (a dead owner's readers would wait for ever), a grace of `NaN` never
 * cancels, a hook or a store of the wrong kind fails every request.
 * @throws RangeError for a number; AguiRxError `INVALID_OPTIONS` for a hook, the store or the instance id.
 */
function assertBrokerOptions<Context>(options: RunBrokerOptions<Context>): void {
  assertNumberOption(options, 'leaseMs', (value) => value > 0 && Number.isFinite(value), 'a number of ms > 0 (finite: a dead owner is found when its lease lapses)');
  assertNumberOption(options, 'detachGraceMs', (value) => value >= 0 && (value <= MAX_TIMER_MS || value === Infinity), `a number of ms ≥ 0, at most ${MAX_TIMER_MS} (what a timer holds, about 24.8 days), or Infinity: runs always finish`);
  assertNumberOption(options, 'maxSubscribers', (value) => value >= 1 && (Number.isInteger(value) || value === Infinity), 'a whole number of readers ≥ 1 (or Infinity)');
  assertFunctionOption(options, 'authorize', 'of the request, resolving true to allow it');
  assertFunctionOption(options, 'onActivity', 'of the activity');
  const { store, instanceId } = options;
  if (store !== undefined) {
    const missing = missingMethods(store, storeMethods);
    if (missing.length > 0) {
      throw new AguiRxError(
        'INVALID_OPTIONS',
        `'store' must be a run store (createMemoryRunStore() or createRedisRunStore({ url }) from agui-rx/broker/redis), not ${describeValue(store)}${typeof store === 'object' && store !== null ? ` without ${missing.join(', ')}` : ''}.`,
      );
    }
  }
  if (instanceId !== undefined && (typeof instanceId !== 'string' || instanceId === '')) throw new AguiRxError('INVALID_OPTIONS', `'instanceId' must be a non-empty string, not ${describeValue(instanceId)}.`);
}
