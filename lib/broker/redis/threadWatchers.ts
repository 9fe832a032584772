import type { Event } from '@ag-ui/core';
import { DeadlineExceeded, withDeadline } from './deadline.js';
import type { RedisClient } from './redisClient.js';

/** An entry of a thread's stream, decoded. */
export interface StreamEntry {
  /** The stream entry id (the cursor). */
  readonly id: string;
  /** The runId the entry belongs to. */
  readonly run: string;
  readonly event: Event;
}

/** A local reader of a thread's live entries. */
export interface ThreadListener {
  /** Every batch the blocking read returns, in stream order. */
  next(entries: readonly StreamEntry[]): void;
  /** The blocking read failed for longer than the store waits (`STORE_UNAVAILABLE`). */
  error(error: unknown): void;
  /** The blocking read works again after failing: Redis may have restarted and lost the run. */
  recovered(): void;
}

/** Options of {@link createThreadWatchers}. */
export interface ThreadWatchersOptions {
  /** Opens a new connected-on-demand client for one thread's blocking reads (a duplicate of the store's). */
  connect(): RedisClient;
  /** How long a blocking read may keep failing before its readers error, and how long past its block one may go unanswered, in ms. */
  unavailableAfterMs: number;
  /** How long one XREAD blocks before it is sent again, in ms. */
  blockMs: number;
  /** Most entries one XREAD returns. */
  count: number;
  /** The error readers get when Redis stays unreachable. */
  unavailable(cause: unknown): Error;
}

/** The live side of the Redis run store: one blocking connection per watched thread, shared by its local readers. */
export interface ThreadWatchers {
  /**
   * Joins (or starts) the blocking read of a thread's stream. Resolves once the read has a fixed
   * starting point: every entry added after that reaches `listener`.
   * @return The function that leaves; the last listener to leave closes the connection.
   */
  watch(streamKey: string, listener: ThreadListener): Promise<() => void>;
  /** How many blocking connections are open (one per watched thread). */
  readonly size: number;
  /** Closes every blocking connection, and errors every listener with `error`. */
  closeAll(error: Error): void;
}

interface Watcher {
  readonly client: RedisClient;
  readonly listeners: Set<ThreadListener>;
  /** Resolves once `lastId` is the stream's last id (the point live reading starts from). */
  ready: Promise<void>;
  /** The id of the last entry read: the next XREAD asks for what follows it. */
  lastId: string;
  stopped: boolean;
}

/** Stream messages as node-redis returns them (XRANGE, XREAD), decoded; null (no stream) is none. */
export function decodeEntries(messages: readonly { id: unknown; message: Record<string, unknown> }[] | null | undefined): StreamEntry[] {
  return (messages ?? []).map(({ id, message }) => ({ id: String(id), run: String(message.run), event: JSON.parse(String(message.event)) as Event }));
}

const delay = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref?.());

/**
 * Blocking reads of thread streams for the Redis run store: `XREAD BLOCK … COUNT … STREAMS <thread> <lastId>`
 * in a loop on a connection of its own (a blocking command holds its connection), one per thread
 * with local readers, never one per reader; closed when the thread's last local reader leaves.
 *
 * When the connection fails (node-redis reconnects by itself), the loop retries; if it still fails
 * after `unavailableAfterMs`, every listener of the thread gets `error` and the connection closes.
 * An XREAD with no answer `unavailableAfterMs` after its block ended (Redis frozen, or a half-open
 * connection that reports no error) fails the same way at once.
 * Ids are the stream's, so a read that recovers continues after its last entry with no gap.
 *
 * @param options How to open a connection, and the timing.
 * @return The watchers.
 */
export function createThreadWatchers(options: ThreadWatchersOptions): ThreadWatchers {
  const watchers = new Map<string, Watcher>();

  const stop = (key: string, watcher: Watcher) => {
    watcher.stopped = true;
    if (watchers.get(key) === watcher) watchers.delete(key);
    // destroy() rejects the pending XREAD at once: no wait for its BLOCK to time out.
    if (watcher.client.isOpen) watcher.client.destroy();
  };

  const fail = (key: string, watcher: Watcher, cause: unknown) => {
    const error = options.unavailable(cause);
    stop(key, watcher);
    for (const listener of [...watcher.listeners]) listener.error(error);
  };

  const loop = async (key: string, watcher: Watcher) => {
    // When the current run of failures began; undefined while reads succeed.
    let failingSince: number | undefined;
    while (!watcher.stopped) {
      try {
        // Redis answers a BLOCK by its end: no answer well past it is a frozen Redis or a half-open connection.
        const reply = await withDeadline(watcher.client.xRead({ key, id: watcher.lastId }, { BLOCK: options.blockMs, COUNT: options.count }), options.blockMs + options.unavailableAfterMs);
        if (watcher.stopped) return;
        if (failingSince !== undefined) {
          failingSince = undefined;
          for (const listener of [...watcher.listeners]) listener.recovered();
        }
        const entries = decodeEntries(reply?.[0]?.messages);
        if (entries.length === 0) continue;
        watcher.lastId = entries[entries.length - 1].id;
        for (const listener of [...watcher.listeners]) listener.next(entries);
      } catch (error) {
        if (watcher.stopped) return;
        // It waited unavailableAfterMs past the block already; the connection is closed, not reused.
        if (error instanceof DeadlineExceeded) return fail(key, watcher, error);
        failingSince ??= Date.now();
        const left = failingSince + options.unavailableAfterMs - Date.now();
        if (left <= 0) return fail(key, watcher, error);
        await delay(Math.min(100, left));
      }
    }
  };

  const start = (key: string): Watcher => {
    const client = options.connect();
    const opening = async () => {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no connection within ${options.unavailableAfterMs} ms`)), options.unavailableAfterMs);
      });
      try {
        await Promise.race([client.connect(), timeout]);
        const last = await Promise.race([client.xRevRange(key, '+', '-', { COUNT: 1 }), timeout]);
        watcher.lastId = String(last?.[0]?.id ?? '0-0');
      } finally {
        clearTimeout(timer);
      }
    };
    const watcher: Watcher = { client, listeners: new Set(), lastId: '0-0', stopped: false, ready: opening() };
    watchers.set(key, watcher);
    watcher.ready.then(
      () => void loop(key, watcher),
      (error: unknown) => fail(key, watcher, error),
    );
    return watcher;
  };

  return {
    async watch(key, listener) {
      const watcher = watchers.get(key) ?? start(key);
      watcher.listeners.add(listener);
      const leave = () => {
        watcher.listeners.delete(listener);
        if (watcher.listeners.size === 0) stop(key, watcher);
      };
      try {
        await watcher.ready;
      } catch {
        // fail() has told the listener already.
      }
      return leave;
    },
    get size() {
      return watchers.size;
    },
    closeAll(error) {
      for (const [key, watcher] of [...watchers]) {
        stop(key, watcher);
        for (const listener of [...watcher.listeners]) listener.error(error);
      }
    },
  };
}
