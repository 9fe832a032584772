import { EventType, type Event, type RunAgentInput } from '@ag-ui/core';
import { firstValueFrom, lastValueFrom, mergeMap, take, toArray, type Observable } from 'rxjs';
import type { RunLogEntry, RunRecord, RunStore } from '../../../lib/broker/runStore.js';
import { pollUntil } from '../../support/helpers.js';

/** Options a conformance case asks of a fresh store. */
export interface RunStoreCaseOptions {
  /** How long finished runs are kept, in ms. */
  retainMs?: number;
  /** About how many entries a thread's log keeps. */
  maxLen?: number;
}

/** How the suite gets stores of one kind. */
export interface RunStoreFactory {
  /** A fresh store; stores of one factory may share their runs (Redis) or not (memory). */
  make(options?: RunStoreCaseOptions): RunStore;
  /** Another instance that shares `store`'s runs (another connection to the same Redis); for a single-process store, `store` itself. */
  peer(store: RunStore): RunStore;
  /** A well-formed cursor after every entry a case appends: what a confused client, or a later run of the thread, may send. */
  aheadCursor(): string;
  /** The largest cursor the store could ever make: nothing can come after it. */
  lastCursor: string;
  /** Cursors written like the store's but beyond what it could make (out of its numbers' range): a client's mistake. */
  beyondCursors: readonly string[];
}

let threads = 0;
/** A thread id no other case (nor an earlier jest run against the same Redis) uses. */
const freshThread = () => `thread-${process.pid}-${Date.now()}-${++threads}`;

const text = (delta: string): Event => ({ type: EventType.TEXT_MESSAGE_CONTENT, messageId: 'm1', delta }) as Event;
const finished = (threadId: string, runId: string): Event => ({ type: EventType.RUN_FINISHED, threadId, runId }) as Event;
const input = (threadId: string, runId: string): RunAgentInput => ({ threadId, runId, messages: [], tools: [], context: [], state: {}, forwardedProps: {} });
const record = (threadId: string, runId: string, owner = 'owner-1'): RunRecord => ({
  threadId,
  runId,
  input: input(threadId, runId),
  owner,
  status: 'running',
  startedAt: 1_000,
  leaseUntil: 2_000,
});

/** Every entry a read delivers, flattened. */
const entries = (read$: Observable<RunLogEntry[]>) => lastValueFrom(read$.pipe(mergeMap((batch) => batch), toArray()));
/** The error a promise rejects with (a failed expectation when it resolves). */
async function failure(promise: Promise<unknown>): Promise<{ code?: unknown; message: string }> {
  try {
    await promise;
  } catch (error) {
    return error as { code?: unknown; message: string };
  }
  throw new Error('expected a failure, got a value');
}
/** Polls `condition` until it holds, for a state change no event announces (retention expiry). */
const eventually = (condition: () => Promise<boolean>, deadlineMs = 10_000) => pollUntil(condition, (held) => held, { timeoutMs: deadlineMs, intervalMs: 25 });

/**
 * The conformance suite of {@link RunStore}: what every store must do, one case per rule of the
 * interface's contract. Used by the in-memory store's spec and the Redis store's.
 *
 * @param name The store's name in the report.
 * @param factory How to make stores of the kind under test.
 */
export function describeRunStore(name: string, factory: RunStoreFactory): void {
  describe(`${name} (RunStore conformance)`, () => {
    const open: RunStore[] = [];
    const make = (options?: RunStoreCaseOptions) => {
      const store = factory.make(options);
      open.push(store);
      return store;
    };
    const peerOf = (store: RunStore) => {
      const peer = factory.peer(store);
      if (peer !== store) open.push(peer);
      return peer;
    };
    afterEach(async () => {
      await Promise.all(open.splice(0).map((store) => store.close()));
    });

    /** A store with one running run on a fresh thread. */
    const started = async (options?: RunStoreCaseOptions) => {
      const store = make(options);
      const threadId = freshThread();
      await store.createRun(record(threadId, 'run-1'));
      return { store, threadId, runId: 'run-1' };
    };

    describe('createRun / getRun / listRuns', () => {
      it('should find no run, not fail as a store, under ids that hold half of a surrogate pair', async () => {
        // JSON can escape such an id, UTF-8 cannot carry it (the broker starts no run under one); a read of one is a miss.
        const store = make();
        const threadId = `${freshThread()}\ud800`;
        expect(await store.getRun(threadId, 'r\udc00')).toBeUndefined();
        expect(await store.listRuns(threadId)).toEqual([]);
        expect(await failure(entries(store.read(threadId, 'r\udc00')))).toMatchObject({ code: 'RUN_NOT_FOUND' });
      });


      it('should create a run once: of two concurrent creates on two instances, exactly one is true', async () => {
        const store = make();
        const peer = peerOf(store);
        const threadId = freshThread();
        const results = await Promise.all([store.createRun(record(threadId, 'r')), peer.createRun(record(threadId, 'r', 'owner-2'))]);
        expect(results.filter(Boolean)).toHaveLength(1);
        const created = await store.getRun(threadId, 'r');
        expect(created).toEqual(record(threadId, 'r', results[0] ? 'owner-1' : 'owner-2'));
        expect(await store.createRun(record(threadId, 'r'))).toBe(false);
      });

      it('should return undefined for an unknown run and [] for an unknown thread', async () => {
        const store = make();
        expect(await store.getRun(freshThread(), 'nope')).toBeUndefined();
        expect(await store.listRuns(freshThread())).toEqual([]);
      });

      it('should list a thread\'s runs oldest first', async () => {
        const store = make();
        const threadId = freshThread();
        for (const runId of ['b', 'a', 'c']) await store.createRun(record(threadId, runId));
        expect((await store.listRuns(threadId)).map((run) => run.runId)).toEqual(['b', 'a', 'c']);
      });

      it('should keep many runs of one thread apart: each found, created once, listed oldest first, read alone', async () => {
        const store = make();
        const threadId = freshThread();
        const runIds = Array.from({ length: 20 }, (_, i) => `run-${(i * 7) % 20}`);
        for (const runId of runIds) expect(await store.createRun(record(threadId, runId))).toBe(true);
        for (const runId of runIds) expect(await store.createRun(record(threadId, runId))).toBe(false);
        expect((await store.listRuns(threadId)).map((run) => run.runId)).toEqual(runIds);
        for (const runId of runIds) {
          expect((await store.getRun(threadId, runId))?.runId).toBe(runId);
          await store.append(threadId, runId, [text(runId), finished(threadId, runId)]);
        }
        for (const runId of runIds) expect((await entries(store.read(threadId, runId))).map((entry) => entry.event)).toEqual([text(runId), finished(threadId, runId)]);
        expect(await store.getRun(threadId, 'run-20')).toBeUndefined();
      });
    });

    describe('append', () => {
      it('should give cursors in append order, strictly increasing and comparable', async () => {
        const { store, threadId, runId } = await started();
        const first = await store.append(threadId, runId, [text('a'), text('b'), text('c')]);
        const second = await store.append(threadId, runId, [text('d'), text('e')]);
        const cursors = [...first, ...second];
        expect(cursors).toHaveLength(5);
        for (const cursor of cursors) expect(store.isCursor(cursor)).toBe(true);
        for (let i = 1; i < cursors.length; i++) {
          expect(store.compare(cursors[i - 1], cursors[i])).toBe(-1);
          expect(store.compare(cursors[i], cursors[i - 1])).toBe(1);
        }
        expect(store.compare(cursors[2], cursors[2])).toBe(0);
        expect(await store.append(threadId, runId, [])).toEqual([]);
      });

      it('should finish the run with a terminal event, and append nothing after it in the batch', async () => {
        const { store, threadId, runId } = await started();
        const cursors = await store.append(threadId, runId, [text('a'), finished(threadId, runId), text('late')]);
        expect(cursors).toHaveLength(2);
        const run = await store.getRun(threadId, runId);
        expect(run?.status).toBe('finished');
        expect(typeof run?.finishedAt).toBe('number');
        expect((await entries(store.read(threadId, runId))).map((entry) => entry.event)).toEqual([text('a'), finished(threadId, runId)]);
      });

      it('should refuse an append to a finished run with RUN_ENDED, and to an unknown run with RUN_NOT_FOUND', async () => {
        const { store, threadId, runId } = await started();
        await store.append(threadId, runId, [finished(threadId, runId)]);
        expect(await failure(store.append(threadId, runId, [text('x')]))).toMatchObject({ code: 'RUN_ENDED' });
        expect(await failure(store.append(threadId, 'nope', [text('x')]))).toMatchObject({ code: 'RUN_NOT_FOUND' });
      });

      it('should refuse a batch holding an event JSON cannot carry with INVALID_EVENT naming it, append none of it, and take the next batch', async () => {
        const { store, threadId, runId } = await started();
        const cyclic: Record<string, unknown> = { a: 1 };
        cyclic.self = cyclic;
        const raw = { type: EventType.RAW, event: cyclic } as Event;
        const custom = { type: EventType.CUSTOM, name: 'n', value: { n: BigInt(1) } } as Event;
        for (const bad of [raw, custom]) {
          const error = await failure(store.append(threadId, runId, [text('a'), bad, text('b')]));
          expect(error).toMatchObject({ code: 'INVALID_EVENT' });
          expect(error.message).toContain(`The ${bad.type} event of run '${runId}'`);
          expect(error.message).toContain('not valid JSON');
        }
        // Still running, and nothing of the refused batches is in the log.
        expect((await store.getRun(threadId, runId))?.status).toBe('running');
        await store.append(threadId, runId, [text('c'), finished(threadId, runId)]);
        expect((await entries(store.read(threadId, runId))).map((entry) => entry.event)).toEqual([text('c'), finished(threadId, runId)]);
      });
    });

    describe('endRun', () => {
      it('should end a run once: of two concurrent endRuns on two instances, one gets a cursor, the other undefined', async () => {
        const { store, threadId, runId } = await started();
        const peer = peerOf(store);
        await store.append(threadId, runId, [text('a')]);
        const lost: Event = { type: EventType.RUN_ERROR, message: 'lost', code: 'RUN_LOST' } as Event;
        const results = await Promise.all([store.endRun(threadId, runId, lost), peer.endRun(threadId, runId, lost)]);
        expect(results.filter((cursor) => cursor !== undefined)).toHaveLength(1);
        expect(results.filter((cursor) => cursor === undefined)).toHaveLength(1);
        expect((await entries(store.read(threadId, runId))).map((entry) => entry.event)).toEqual([text('a'), lost]);
        expect(await store.endRun(threadId, runId, lost)).toBeUndefined();
        expect((await store.getRun(threadId, runId))?.status).toBe('finished');
      });
    });

    describe('read', () => {
      it('should replay then go live with no gap and no duplicate while appends race the subscription', async () => {
        const { store, threadId, runId } = await started();
        const sent = Array.from({ length: 60 }, (_, i) => text(`e${i}`));
        await store.append(threadId, runId, sent.slice(0, 10));
        const read = entries(store.read(threadId, runId));
        // Appends start in the same tick as the subscription, one batch after another.
        for (let i = 10; i < 60; i += 5) await store.append(threadId, runId, sent.slice(i, i + 5));
        await store.append(threadId, runId, [finished(threadId, runId)]);
        const got = await read;
        expect(got.map((entry) => entry.event)).toEqual([...sent, finished(threadId, runId)]);
        for (let i = 1; i < got.length; i++) expect(store.compare(got[i - 1].cursor, got[i].cursor)).toBe(-1);
      });

      it('should read a live run on another instance', async () => {
        const { store, threadId, runId } = await started();
        const peer = peerOf(store);
        await store.append(threadId, runId, [text('a')]);
        const read = entries(peer.read(threadId, runId));
        await store.append(threadId, runId, [text('b')]);
        await store.append(threadId, runId, [finished(threadId, runId)]);
        expect((await read).map((entry) => entry.event)).toEqual([text('a'), text('b'), finished(threadId, runId)]);
      });

      it('should deliver only the entries strictly after `after`, with the cursors append gave', async () => {
        const { store, threadId, runId } = await started();
        const cursors = await store.append(threadId, runId, [text('a'), text('b'), text('c'), finished(threadId, runId)]);
        const got = await entries(store.read(threadId, runId, cursors[1]));
        expect(got).toEqual([
          { cursor: cursors[2], event: text('c') },
          { cursor: cursors[3], event: finished(threadId, runId) },
        ]);
        // After the terminal entry: nothing, and complete at once.
        expect(await entries(store.read(threadId, runId, cursors[3]))).toEqual([]);
      });

      it('should complete right after the terminal entry, though the thread goes on', async () => {
        const { store, threadId, runId } = await started();
        await store.createRun(record(threadId, 'run-2'));
        const read = firstValueFrom(store.read(threadId, runId).pipe(toArray()));
        await store.append(threadId, runId, [text('a')]);
        await store.append(threadId, runId, [finished(threadId, runId)]);
        await store.append(threadId, 'run-2', [text('other')]);
        const batches = await read;
        expect(batches.flat().map((entry) => entry.event)).toEqual([text('a'), finished(threadId, runId)]);
      });

      it('should complete a read whose cursor is after the run\'s end once the run ends, sending nothing', async () => {
        const { store, threadId, runId } = await started();
        const read = firstValueFrom(store.read(threadId, runId, factory.aheadCursor()).pipe(toArray()));
        await store.append(threadId, runId, [text('a')]);
        // A read from the start, made after it: once that one has 'a', the first (set up before it, in
        // the same order) is live, and the end reaches it as a live entry, not in its replay.
        await firstValueFrom(store.read(threadId, runId));
        await store.append(threadId, runId, [finished(threadId, runId)]);
        expect((await read).flat()).toEqual([]);
        // The same read of the finished run.
        expect(await entries(store.read(threadId, runId, factory.aheadCursor()))).toEqual([]);
      });

      it('should complete a read after the last cursor there can be once the run ends, sending nothing', async () => {
        const { store, threadId, runId } = await started();
        const read = firstValueFrom(store.read(threadId, runId, factory.lastCursor).pipe(toArray()));
        await store.append(threadId, runId, [text('a')]);
        await firstValueFrom(store.read(threadId, runId));
        await store.append(threadId, runId, [finished(threadId, runId)]);
        expect((await read).flat()).toEqual([]);
        expect(await entries(store.read(threadId, runId, factory.lastCursor))).toEqual([]);
        expect(store.isCursor(factory.lastCursor)).toBe(true);
      });

      it('should error INVALID_CURSOR, not fail as a store, for a cursor beyond what it could make', async () => {
        const { store, threadId, runId } = await started();
        await store.append(threadId, runId, [text('a'), finished(threadId, runId)]);
        for (const cursor of factory.beyondCursors) {
          expect(store.isCursor(cursor)).toBe(false);
          expect(await failure(entries(store.read(threadId, runId, cursor)))).toMatchObject({ code: 'INVALID_CURSOR' });
        }
      });

      it('should replay a finished run and complete', async () => {
        const { store, threadId, runId } = await started();
        const cursors = await store.append(threadId, runId, [text('a'), finished(threadId, runId)]);
        expect(await entries(store.read(threadId, runId))).toEqual([
          { cursor: cursors[0], event: text('a') },
          { cursor: cursors[1], event: finished(threadId, runId) },
        ]);
      });

      it('should give each read of two interleaved runs of one thread only its run', async () => {
        const { store, threadId } = await started();
        await store.createRun(record(threadId, 'run-2'));
        const one = entries(store.read(threadId, 'run-1'));
        for (let i = 0; i < 5; i++) {
          await store.append(threadId, 'run-1', [text(`one-${i}`)]);
          await store.append(threadId, 'run-2', [text(`two-${i}`)]);
        }
        await store.append(threadId, 'run-2', [finished(threadId, 'run-2')]);
        await store.append(threadId, 'run-1', [finished(threadId, 'run-1')]);
        const two = await entries(store.read(threadId, 'run-2'));
        expect((await one).map((entry) => entry.event)).toEqual([...[0, 1, 2, 3, 4].map((i) => text(`one-${i}`)), finished(threadId, 'run-1')]);
        expect(two.map((entry) => entry.event)).toEqual([...[0, 1, 2, 3, 4].map((i) => text(`two-${i}`)), finished(threadId, 'run-2')]);
        // A cursor of the other run positions the read within the thread.
        const [, middle] = (await entries(store.read(threadId, 'run-1'))).map((entry) => entry.cursor);
        const after = await entries(store.read(threadId, 'run-2', middle));
        expect(after.map((entry) => entry.event)).toEqual([...[1, 2, 3, 4].map((i) => text(`two-${i}`)), finished(threadId, 'run-2')]);
      });

      it('should error RUN_NOT_FOUND for an unknown run and INVALID_CURSOR for a malformed cursor', async () => {
        const { store, threadId, runId } = await started();
        expect(await failure(entries(store.read(threadId, 'nope')))).toMatchObject({ code: 'RUN_NOT_FOUND' });
        expect(await failure(entries(store.read(threadId, runId, 'not a cursor')))).toMatchObject({ code: 'INVALID_CURSOR' });
        expect(store.isCursor('not a cursor')).toBe(false);
        expect(store.isCursor('')).toBe(false);
        const [cursor] = await store.append(threadId, runId, [text('a')]);
        expect(store.isCursor(cursor)).toBe(true);
      });

      it('should release a live read on unsubscribe, and serve the next read as before', async () => {
        const { store, threadId, runId } = await started();
        const first = firstValueFrom(store.read(threadId, runId).pipe(take(1)));
        await store.append(threadId, runId, [text('a')]);
        expect((await first).map((entry) => entry.event)).toEqual([text('a')]);
        const again = entries(store.read(threadId, runId));
        await store.append(threadId, runId, [finished(threadId, runId)]);
        expect((await again).map((entry) => entry.event)).toEqual([text('a'), finished(threadId, runId)]);
      });

      it('should error CURSOR_EXPIRED when trimming passed the cursor, and read after a recent one', async () => {
        const { store, threadId, runId } = await started({ maxLen: 10 });
        const cursors: string[] = [];
        for (let i = 0; i < 10; i++) cursors.push(...(await store.append(threadId, runId, Array.from({ length: 100 }, (_, j) => text(`${i}-${j}`)))));
        cursors.push(...(await store.append(threadId, runId, [finished(threadId, runId)])));
        expect(await failure(entries(store.read(threadId, runId)))).toMatchObject({ code: 'CURSOR_EXPIRED' });
        expect(await failure(entries(store.read(threadId, runId, cursors[0])))).toMatchObject({ code: 'CURSOR_EXPIRED' });
        const tail = await entries(store.read(threadId, runId, cursors[cursors.length - 3]));
        expect(tail.map((entry) => entry.cursor)).toEqual(cursors.slice(-2));
      });
    });

    describe('retention', () => {
      it('should forget a finished run retainMs after its end: RUN_NOT_FOUND, gone from listRuns', async () => {
        const { store, threadId, runId } = await started({ retainMs: 200 });
        await store.append(threadId, runId, [text('a'), finished(threadId, runId)]);
        expect((await store.getRun(threadId, runId))?.status).toBe('finished');
        await eventually(async () => (await store.getRun(threadId, runId)) === undefined);
        expect(await failure(entries(store.read(threadId, runId)))).toMatchObject({ code: 'RUN_NOT_FOUND' });
        expect(await store.listRuns(threadId)).toEqual([]);
      });

      it('should keep a running run however long it runs', async () => {
        const { store, threadId, runId } = await started({ retainMs: 50 });
        await store.createRun(record(threadId, 'short'));
        await store.append(threadId, 'short', [finished(threadId, 'short')]);
        await eventually(async () => (await store.getRun(threadId, 'short')) === undefined);
        expect((await store.getRun(threadId, runId))?.status).toBe('running');
        await store.append(threadId, runId, [text('still')]);
        expect((await firstValueFrom(store.read(threadId, runId))).map((entry) => entry.event)).toEqual([text('still')]);
      });
    });

    describe('leases', () => {
      it('should renew the lease for its owner only, and not once the run is finished', async () => {
        const { store, threadId, runId } = await started();
        const peer = peerOf(store);
        expect(await peer.renewLease(threadId, runId, 'owner-1', 5_000)).toBe(true);
        expect((await store.getRun(threadId, runId))?.leaseUntil).toBe(5_000);
        expect(await store.renewLease(threadId, runId, 'owner-2', 9_000)).toBe(false);
        expect((await store.getRun(threadId, runId))?.leaseUntil).toBe(5_000);
        expect(await store.renewLease(threadId, 'nope', 'owner-1', 9_000)).toBe(false);
        await store.endRun(threadId, runId, finished(threadId, runId));
        expect(await store.renewLease(threadId, runId, 'owner-1', 9_000)).toBe(false);
      });
    });

    describe('stop requests', () => {
      it('should deliver a stop request to the instances sharing the store', async () => {
        const { store, threadId, runId } = await started();
        const peer = peerOf(store);
        const stop = firstValueFrom(peer.stopRequests());
        // Any call resolves once the instance listens for stops.
        await peer.listRuns(threadId);
        await store.requestStop(threadId, runId);
        expect(await stop).toEqual({ threadId, runId });
      });
    });

    describe('readers', () => {
      it('should count the readers registered until after now, on every instance, and forget removed ones', async () => {
        const { store, threadId, runId } = await started();
        const peer = peerOf(store);
        await store.touchReader(threadId, runId, 'reader-1', 10_000);
        await peer.touchReader(threadId, runId, 'reader-2', 3_000);
        expect(await store.countReaders(threadId, runId, 2_000)).toBe(2);
        expect(await peer.countReaders(threadId, runId, 3_000)).toBe(1);
        await store.touchReader(threadId, runId, 'reader-2', 12_000);
        expect(await store.countReaders(threadId, runId, 5_000)).toBe(2);
        await peer.removeReader(threadId, runId, 'reader-1');
        expect(await store.countReaders(threadId, runId, 5_000)).toBe(1);
        expect(await store.countReaders(threadId, 'nope', 0)).toBe(0);
      });
    });

    describe('close', () => {
      it('should make the store unusable: operations fail with STORE_UNAVAILABLE and a live read ends', async () => {
        const { store, threadId, runId } = await started();
        const live = entries(store.read(threadId, runId)).then(
          () => 'completed',
          (error: { code?: string }) => error.code,
        );
        await store.append(threadId, runId, [text('a')]);
        await store.close();
        expect(['completed', 'STORE_UNAVAILABLE']).toContain(await live);
        expect(await failure(store.getRun(threadId, runId))).toMatchObject({ code: 'STORE_UNAVAILABLE' });
        expect(await failure(store.append(threadId, runId, [text('b')]))).toMatchObject({ code: 'STORE_UNAVAILABLE' });
        expect(await failure(entries(store.read(threadId, runId)))).toMatchObject({ code: 'STORE_UNAVAILABLE' });
      });
    });
  });
}
