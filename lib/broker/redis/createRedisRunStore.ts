import { createHash } from 'node:crypto';
import type { Event } from '@ag-ui/core';
import { createClient, ErrorReply } from 'redis';
import { Observable, Subject } from 'rxjs';
import { isTerminalEvent } from '../../protocol/agentEvent.js';
import { AguiRxError, assertNumberOption } from '../../protocol/errors.js';
import { hasLoneSurrogate, MAX_TIMER_MS } from '../../protocol/values.js';
import type { RunLogEntry, RunRecord, RunStore } from '../runStore.js';
import { encodeStoredEvent } from '../storedEvent.js';
import { DeadlineExceeded, withDeadline, withDeadlines } from './deadline.js';
import { describeClient, redactUrl, storeUnavailable, type RedisClient } from './redisClient.js';
import { APPEND, CREATE_RUN, RENEW_LEASE, TOUCH_READER } from './scripts.js';
import { createThreadWatchers, decodeEntries, type StreamEntry, type ThreadListener } from './threadWatchers.js';

/** Options of {@link createRedisRunStore}: `url` or `client`, not both. */
export interface RedisRunStoreOptions {
  /** Where Redis is (`redis://[[user]:password@]host[:port][/db]`, `rediss://` for TLS): the store opens and closes its own connections. */
  url?: string | undefined;
  /** A connected node-redis client of yours: the store duplicates it for its blocking reads and pub/sub, and never closes it. */
  client?: RedisClient | undefined;
  /** The first part of every key and channel name, so that several apps share one Redis. Default: `'agui'`. */
  keyPrefix?: string | undefined;
  /** How long a finished run stays readable (its record, readers and, once no run of the thread runs, the thread's stream), in ms. Default: 600000 (10 min). */
  retainMs?: number | undefined;
  /** About how many entries a thread's stream keeps (`XADD MAXLEN ~`): a reader behind what was trimmed gets `CURSOR_EXPIRED`. Default: 1000000 (a run of 100k events replays whole). */
  maxLen?: number | undefined;
  /** How long an operation or a live read waits for an unreachable Redis, or one that does not answer (frozen, a network blackhole), before it fails with `STORE_UNAVAILABLE`, in ms. Default: 5000. */
  unavailableAfterMs?: number | undefined;
  /** The clock, in ms since the epoch (a finished run's finishedAt). Default: `Date.now`. */
  now?: (() => number) | undefined;
}

/** An append that got no answer by its deadline: its events, and, once Redis answered, its cursors (or 'failed'). */
interface Unanswered {
  readonly events: readonly Event[];
  cursors: string[] | 'failed' | undefined;
  /** Forgets it a while after it settled, when no retry came. */
  forget: ReturnType<typeof setTimeout> | undefined;
}

/** A Lua script and its SHA1, sent by EVALSHA (the source only when Redis does not have it yet). */
interface Script {
  readonly source: string;
  readonly sha: string;
}

const script = (source: string): Script => ({ source, sha: createHash('sha1').update(source).digest('hex') });
const scripts = { append: script(APPEND), createRun: script(CREATE_RUN), renewLease: script(RENEW_LEASE), touchReader: script(TOUCH_READER) };

/** The run hash's fields, in the order HMGET returns them. */
const RECORD_FIELDS = ['threadId', 'runId', 'input', 'owner', 'status', 'startedAt', 'finishedAt', 'leaseUntil'] as const;
/** Stream ids are two unsigned 64-bit integers, `ms-seq`. */
const CURSOR = /^(0|[1-9][0-9]{0,19})-(0|[1-9][0-9]{0,19})$/;
/** The largest unsigned 64-bit integer: a part above it is no stream id (Redis refuses it). */
const MAX_PART = '18446744073709551615';
/** The last stream id there can be: nothing comes after it. */
const LAST_ID = `${MAX_PART}-${MAX_PART}`;

/** Whether `text` is a stream id Redis could have made: two decimal parts, each within 64 bits. */
function isStreamId(text: string): boolean {
  const parts = CURSOR.exec(text);
  return parts !== null && compareDecimal(parts[1], MAX_PART) <= 0 && compareDecimal(parts[2], MAX_PART) <= 0;
}
/** Entries per XRANGE page of a replay, and most entries per XREAD. */
const PAGE = 1000;
/** How long one XREAD blocks before it is sent again, in ms (a bounded block notices a half-open connection). */
const BLOCK_MS = 5000;

/**
 * An id as a part of a key, one key per id: URI-encoded (no ':', '{' or '}' left in it), and half
 * of a surrogate pair, on which `encodeURIComponent` throws, as `%uD800` (a form it never writes).
 */
function keyPart(id: string): string {
  if (!hasLoneSurrogate(id)) return encodeURIComponent(id);
  let part = '';
  // By code point: a whole pair is one character, half of one is alone.
  for (const character of id) part += hasLoneSurrogate(character) ? `%u${character.charCodeAt(0).toString(16).toUpperCase()}` : encodeURIComponent(character);
  return part;
}

/** Compares two numbers written in decimal without leading zeros, of any size. */
const compareDecimal = (a: string, b: string) => (a.length !== b.length ? Math.sign(a.length - b.length) : a < b ? -1 : a > b ? 1 : 0);

/** -1, 0 or 1 as stream id `a` is before, equal to or after `b` (ms first, then sequence). */
function compareIds(a: string, b: string): number {
  const [aMs, aSeq = '0'] = a.split('-');
  const [bMs, bSeq = '0'] = b.split('-');
  return compareDecimal(aMs, bMs) || compareDecimal(aSeq, bSeq);
}

/** A stop request as published on the stop channel; undefined for anything else published there. */
function parseStopRequest(message: string): { threadId: string; runId: string } | undefined {
  try {
    const { threadId, runId } = JSON.parse(message) as { threadId?: unknown; runId?: unknown };
    return typeof threadId === 'string' && typeof runId === 'string' ? { threadId, runId } : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A {@link RunStore} over Redis Streams: runs shared by every instance that uses the same Redis,
 * so that a reader on one instance follows a run produced on another, and a stop made anywhere
 * reaches its owner. Served from `agui-rx/broker/redis`; needs the `redis` package (node-redis 6,
 * an optional peer dependency), which the package root never loads.
 *
 * Why node-redis and not ioredis: node-redis is the client Redis develops and recommends; ioredis's
 * own README says it is maintained "on a best-effort basis" and that "for new projects, node-redis
 * is the recommended client library".
 *
 * How it keeps runs (all keys of a thread share the hash tag `{<threadId>}`, so they live in one
 * cluster slot; ids in keys are URI-encoded):
 * - `<prefix>:thread:{<threadId>}`: the thread's log, a stream; an entry has fields `run` (the runId)
 *   and `event` (the event's JSON). Cursors are its entry ids (`1733108400000-3`).
 * - `<prefix>:run:{<threadId>}:<runId>`: the run record, a hash (plus `first`, its first entry id);
 *   `<prefix>:runs:{<threadId>}`, a list of runIds in creation order; `<prefix>:running:{<threadId>}`,
 *   a set of its running runs; `<prefix>:readers:{<threadId>}:<runId>`, a sorted set of reader ids
 *   scored by until when they count.
 * - `<prefix>:stop`: the pub/sub channel of stop requests.
 *
 * Rules:
 * 1. `createRun`, `append`, `endRun`, `renewLease` and `touchReader` are each one Lua script: atomic
 *    across instances and one round trip. `append` sends a whole batch in one EVALSHA (every event
 *    XADDed with `MAXLEN ~ maxLen`); a batch with a terminal event ends there and finishes the run.
 * 2. A finished run's keys expire `retainMs` after its end; the thread's stream and runs list expire
 *    too once none of its runs is running (a running run keeps them).
 * 3. `read` replays with XRANGE (pages of 1,000, from the run's first entry or strictly after
 *    `after`, skipping other runs' entries), then follows with `XREAD BLOCK … COUNT 1000` on one
 *    connection per watched thread, shared by this instance's readers of the thread and closed when
 *    the last one leaves. It completes right after the run's terminal entry.
 * 4. Errors: `CURSOR_EXPIRED` when trimming removed entries the read needs; `RUN_NOT_FOUND` when
 *    the run record is gone (never created, expired, or lost by a Redis restart: a live read checks
 *    when its connection recovers); `INVALID_CURSOR` for a malformed `after`; `RUN_ENDED` for an
 *    append to a finished run; `STORE_UNAVAILABLE` (naming the URL, password hidden) when Redis
 *    does not answer within `unavailableAfterMs` (default 5 s): every command has that deadline,
 *    counted on our side, so a Redis that stops answering with its connection open (frozen, or
 *    behind a network blackhole) fails it too; a live read whose connection drops retries that long
 *    (node-redis reconnects by itself), then errors, and one blocking XREAD with no answer
 *    `unavailableAfterMs` past its 5 s block errors at once (a half-open connection). A read that
 *    recovers in time continues after its last entry, no gap.
 *
 * ## Example
 *
 * ```ts
 * import { createRedisRunStore } from 'agui-rx/broker/redis';
 *
 * const store = createRedisRunStore({ url: process.env.REDIS_URL, retainMs: 60_000 });
 * const broker = createRunBroker({ store });
 * // on shutdown: await store.close();
 * ```
 *
 * @param options `url` or `client`, the key prefix, retention (ms), the stream cap, how long to wait for Redis (ms) and the clock.
 * @return The store; its connections open at once, and `close()` releases them.
 * @throws `INVALID_OPTIONS` when neither or both of `url` and `client` are given; RangeError when `retainMs`, `maxLen` or `unavailableAfterMs` is not a valid number (`NaN`, negative).
 */
export function createRedisRunStore(options: RedisRunStoreOptions): RunStore {
  if ((options.url === undefined) === (options.client === undefined)) {
    throw new AguiRxError('INVALID_OPTIONS', 'createRedisRunStore needs where Redis is: pass `url` (e.g. process.env.REDIS_URL) or a connected node-redis `client`, not both.');
  }
  assertNumberOption(options, 'retainMs', (value) => value >= 0, 'a number of ms ≥ 0 (Infinity: keep finished runs)');
  assertNumberOption(options, 'maxLen', (value) => value >= 1 && Number.isSafeInteger(value), 'a whole number of entries ≥ 1');
  assertNumberOption(options, 'unavailableAfterMs', (value) => value > 0 && value <= MAX_TIMER_MS, `a number of ms > 0, at most ${MAX_TIMER_MS} (what a timer holds)`);
  const prefix = options.keyPrefix ?? 'agui';
  const retainMs = options.retainMs ?? 600_000;
  const maxLen = options.maxLen ?? 1_000_000;
  const unavailableAfterMs = options.unavailableAfterMs ?? 5_000;
  const now = options.now ?? Date.now;
  const where = options.url !== undefined ? redactUrl(options.url) : describeClient(options.client!);
  // Connection errors are reported by the operations that fail; an unhandled 'error' event would crash the process.
  let lastError: unknown;
  const listen = (client: RedisClient) => client.on('error', (error: unknown) => void (lastError = error));

  const base: RedisClient =
    options.client ??
    listen(
      createClient({
        url: options.url,
        socket: { connectTimeout: unavailableAfterMs, reconnectStrategy: (retries: number) => Math.min(50 * 2 ** retries, 1000) },
      }),
    );
  // Every command gives up after unavailableAfterMs: node-redis's timeout while it waits in the
  // offline queue for a Redis that is gone, our deadline once it is sent (a frozen Redis never answers).
  const undeadlined = base.withCommandOptions({ timeout: unavailableAfterMs });
  const redis = withDeadlines(undeadlined, unavailableAfterMs);
  const subscriber = listen(base.duplicate());
  const stops = new Subject<{ threadId: string; runId: string }>();
  const channel = `${prefix}:stop`;
  let closed = false;
  let ready = false;

  const unavailable = (cause: unknown) => storeUnavailable(where, cause);
  const opening = (async () => {
    if (options.client === undefined) await base.connect();
    await subscriber.connect();
    await subscriber.subscribe(channel, (message: string) => {
      const request = parseStopRequest(message);
      if (request !== undefined) stops.next(request);
    });
    ready = true;
  })();
  // A failure to open is reported by the first operation; this keeps it from being unhandled meanwhile.
  opening.catch(() => undefined);

  /** Waits until the connections are up (the stop subscription included), at most unavailableAfterMs. */
  const open = async () => {
    if (closed) throw new AguiRxError('STORE_UNAVAILABLE', 'The Redis run store is closed: create a new one (or a new broker) to serve runs.');
    if (ready) return;
    let timer: ReturnType<typeof setTimeout> | undefined;
    try {
      await Promise.race([
        opening,
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(unavailable(lastError ?? `no answer within ${unavailableAfterMs} ms`)), unavailableAfterMs);
        }),
      ]);
    } finally {
      clearTimeout(timer);
    }
  };

  const notFound = (threadId: string, runId: string, why = 'it never started, or it finished longer ago than the store retains runs') =>
    new AguiRxError('RUN_NOT_FOUND', `Run '${runId}' of thread '${threadId}' is not in the Redis run store: ${why}.`);
  const ended = (threadId: string, runId: string) => new AguiRxError('RUN_ENDED', `Run '${runId}' of thread '${threadId}' has ended: nothing can be appended to it.`);

  /** What a failed command means for the caller: our script's error, or Redis out of reach. */
  const translate = (error: unknown, threadId: string, runId: string): unknown => {
    if (error instanceof AguiRxError) return error;
    if (error instanceof ErrorReply) {
      // Redis prefixes a script's error reply with ERR.
      if (/\bRUN_ENDED\b/.test(error.message)) return ended(threadId, runId);
      if (/\bRUN_NOT_FOUND\b/.test(error.message)) return notFound(threadId, runId);
      return error;
    }
    return unavailable(error);
  };
  /** Runs `operation` once the store is open, with its errors translated. */
  const call = async <T>(threadId: string, runId: string, operation: () => Promise<T>): Promise<T> => {
    try {
      await open();
      return await operation();
    } catch (error) {
      throw translate(error, threadId, runId);
    }
  };

  /** Runs a script by its SHA1, sending its source only the first time a Redis lacks it; `client` is `redis` but for appends (they set their own deadline). */
  const run = async (script: Script, keys: string[], args: string[], client: RedisClient = redis): Promise<unknown> => {
    try {
      return await client.evalSha(script.sha, { keys, arguments: args });
    } catch (error) {
      if (error instanceof ErrorReply && error.message.startsWith('NOSCRIPT')) return client.eval(script.source, { keys, arguments: args });
      throw error;
    }
  };

  const tag = (threadId: string) => `{${keyPart(threadId)}}`;
  const keys = {
    stream: (threadId: string) => `${prefix}:thread:${tag(threadId)}`,
    runs: (threadId: string) => `${prefix}:runs:${tag(threadId)}`,
    running: (threadId: string) => `${prefix}:running:${tag(threadId)}`,
    run: (threadId: string, runId: string) => `${prefix}:run:${tag(threadId)}:${keyPart(runId)}`,
    readers: (threadId: string, runId: string) => `${prefix}:readers:${tag(threadId)}:${keyPart(runId)}`,
  };

  const toRecord = (values: readonly (string | null)[]): RunRecord | undefined => {
    const [threadId, runId, input, owner, status, startedAt, finishedAt, leaseUntil] = values;
    if (threadId === null || runId === null || input === null || owner === null || status === null) return undefined;
    return {
      threadId,
      runId,
      input: JSON.parse(input) as RunRecord['input'],
      owner,
      status: status === 'finished' ? 'finished' : 'running',
      startedAt: Number(startedAt),
      ...(finishedAt !== null ? { finishedAt: Number(finishedAt) } : {}),
      leaseUntil: Number(leaseUntil),
    };
  };
  const readRecord = async (threadId: string, runId: string) => toRecord(await redis.hmGet(keys.run(threadId, runId), [...RECORD_FIELDS]));

  /**
   * Appends (mode 'append') or ends (mode 'end') in one script; the batch stops at its first terminal event.
   * Every event is encoded first: one JSON cannot carry is refused (`INVALID_EVENT`) and nothing is sent.
   * The script's reply is awaited without a deadline: the caller sets it (see `append`).
   */
  const appendEvents = async (threadId: string, runId: string, events: readonly Event[], mode: 'append' | 'end'): Promise<string[]> => {
    const end = events.findIndex((event) => isTerminalEvent(event));
    const batch = end === -1 ? events : events.slice(0, end + 1);
    const encoded = batch.map((event) => encodeStoredEvent(event, threadId, runId));
    const reply = await run(
      scripts.append,
      [keys.run(threadId, runId), keys.stream(threadId), keys.running(threadId), keys.runs(threadId), keys.readers(threadId, runId)],
      [runId, mode, String(now()), Number.isFinite(retainMs) ? String(retainMs) : '-1', String(maxLen), end === -1 ? '0' : '1', ...encoded],
      undeadlined,
    );
    return (reply as unknown[]).map(String);
  };

  // Appends that got no answer by their deadline, by run key: Redis may still run them (a frozen
  // Redis runs what it was sent when it wakes), so their events must not be sent a second time.
  const unanswered = new Map<string, Unanswered>();
  /**
   * Appends `events`, at most once each across retries: while an earlier append of the run is
   * unanswered, it fails `STORE_UNAVAILABLE` without sending anything; once that one landed, a retry
   * that starts with its events (the same objects, as the broker retries) sends only the rest.
   */
  const append = async (threadId: string, runId: string, events: readonly Event[]): Promise<string[]> => {
    const key = keys.run(threadId, runId);
    const earlier = unanswered.get(key);
    let landed: string[] = [];
    let rest = events;
    if (earlier !== undefined) {
      if (earlier.cursors === undefined) throw unavailable(`an earlier append of this run got no answer yet`);
      unanswered.delete(key);
      clearTimeout(earlier.forget);
      if (earlier.cursors !== 'failed' && earlier.events.every((event, index) => events[index] === event)) {
        landed = earlier.cursors;
        rest = events.slice(earlier.events.length);
      }
    }
    if (rest.length === 0) return landed;
    const sent = appendEvents(threadId, runId, rest, 'append');
    try {
      return [...landed, ...(await withDeadline(sent, unavailableAfterMs))];
    } catch (error) {
      if (!(error instanceof DeadlineExceeded)) throw error;
      const entry: Unanswered = { events: rest, cursors: undefined, forget: undefined };
      unanswered.set(key, entry);
      const settle = (cursors: string[] | 'failed') => {
        entry.cursors = cursors;
        // Kept for the retry, which comes within a second or so; forgotten after a minute.
        entry.forget = setTimeout(() => unanswered.get(key) === entry && unanswered.delete(key), 60_000);
        entry.forget.unref?.();
      };
      sent.then(settle, () => settle('failed'));
      // Cursors of events before it that did land are lost with the error: the events are not.
      throw error;
    }
  };

  const watchers = createThreadWatchers({
    connect: () => listen(base.duplicate({ disableOfflineQueue: true })),
    unavailableAfterMs,
    blockMs: BLOCK_MS,
    count: PAGE,
    unavailable,
  });

  return {
    createRun: (record) =>
      call(record.threadId, record.runId, async () => {
        const fields = [
          ['threadId', record.threadId],
          ['runId', record.runId],
          ['input', JSON.stringify(record.input)],
          ['owner', record.owner],
          ['status', record.status],
          ['startedAt', String(record.startedAt)],
          ['leaseUntil', String(record.leaseUntil)],
          ...(record.finishedAt !== undefined ? [['finishedAt', String(record.finishedAt)]] : []),
        ].flat();
        const created = await run(scripts.createRun, [keys.run(record.threadId, record.runId), keys.runs(record.threadId), keys.running(record.threadId), keys.stream(record.threadId)], [record.runId, ...fields]);
        return Number(created) === 1;
      }),
    getRun: (threadId, runId) => call(threadId, runId, () => readRecord(threadId, runId)),
    listRuns: (threadId) =>
      call(threadId, '', async () => {
        const runIds = await redis.lRange(keys.runs(threadId), 0, -1);
        const records = await Promise.all(runIds.map((runId) => readRecord(threadId, runId)));
        // Records that expired leave the list (no harm if two instances both do it).
        const gone = runIds.filter((_, index) => records[index] === undefined);
        await Promise.all(gone.map((runId) => redis.lRem(keys.runs(threadId), 1, runId)));
        return records.filter((record): record is RunRecord => record !== undefined);
      }),
    append: (threadId, runId, events) => call(threadId, runId, () => append(threadId, runId, events)),
    // Ending is idempotent (only a running run ends): a late answer does no harm.
    endRun: (threadId, runId, terminal) => call(threadId, runId, async () => (await withDeadline(appendEvents(threadId, runId, [terminal], 'end'), unavailableAfterMs))[0]),
    read(threadId, runId, after) {
      return new Observable<RunLogEntry[]>((subscriber) => {
        if (after !== undefined && !isStreamId(after)) {
          subscriber.error(new AguiRxError('INVALID_CURSOR', `'${after}' is not a cursor of this run log (a Redis stream id, e.g. '1733108400000-3').`));
          return;
        }
        const streamKey = keys.stream(threadId);
        const runKey = keys.run(threadId, runId);
        // Unsubscribed: stop whatever is still in flight.
        let stopped = false;
        let leave: (() => void) | undefined;
        // Live batches that arrive during the replay, delivered after it; undefined once live.
        let pending: (readonly StreamEntry[])[] | undefined = [];
        // The id of the last stream entry delivered or skipped: what comes next must be after it.
        let position = after;

        /** Delivers this run's entries after `position`; completes after the terminal entry. @return Whether it completed. */
        const deliver = (entries: readonly StreamEntry[]): boolean => {
          const batch: RunLogEntry[] = [];
          let end = false;
          for (const entry of entries) {
            if (position !== undefined && compareIds(entry.id, position) <= 0) {
              // The run ended at or before the reader's cursor (one ahead of the log): nothing more will come.
              if (entry.run === runId && isTerminalEvent(entry.event)) {
                end = true;
                break;
              }
              continue;
            }
            position = entry.id;
            if (entry.run !== runId) continue;
            batch.push({ cursor: entry.id, event: entry.event });
            if ((end = isTerminalEvent(entry.event))) break;
          }
          if (batch.length > 0) subscriber.next(batch);
          if (end) subscriber.complete();
          return end;
        };
        const fail = (error: unknown) => subscriber.error(translate(error, threadId, runId));
        const listener: ThreadListener = {
          next: (entries) => void (pending !== undefined ? pending.push(entries) : deliver(entries)),
          error: fail,
          recovered: () =>
            void redis.exists(runKey).then((exists) => {
              if (exists === 0) fail(notFound(threadId, runId, 'Redis lost it while the run was read (a restart without persistence?)'));
            }, fail),
        };

        (async () => {
          await open();
          if ((await redis.exists(runKey)) === 0) throw notFound(threadId, runId);
          const left = await watchers.watch(streamKey, listener);
          if (stopped || subscriber.closed) return left();
          leave = left;
          // Read after the live read has its starting point: whatever the replay misses, it sees.
          const [status, first] = await redis.hmGet(runKey, ['status', 'first']);
          if (status === null) throw notFound(threadId, runId);
          if (first !== null) {
            const [oldest] = decodeEntries(await redis.xRange(streamKey, '-', '+', { COUNT: 1 }));
            const trimmed = oldest === undefined || compareIds(oldest.id, first) > 0;
            if (trimmed && (after === undefined || oldest === undefined || compareIds(after, oldest.id) < 0)) {
              throw new AguiRxError(
                'CURSOR_EXPIRED',
                `Run '${runId}' of thread '${threadId}' has entries the Redis stream no longer keeps (trimmed to maxLen ${maxLen}): read it again from its start, or raise maxLen.`,
              );
            }
            let start = after === undefined || compareIds(after, first) < 0 ? first : `(${after}`;
            // After the last id there can be (a confused client's cursor) nothing is replayed: Redis refuses its exclusive start.
            while (start !== `(${LAST_ID}`) {
              const page = decodeEntries(await redis.xRange(streamKey, start, '+', { COUNT: PAGE }));
              if (stopped || deliver(page)) return;
              if (page.length < PAGE) break;
              start = `(${page[page.length - 1].id}`;
            }
          }
          if (status === 'finished') return subscriber.complete();
          const queued = pending ?? [];
          pending = undefined;
          for (const entries of queued) if (deliver(entries)) return;
        })().catch(fail);

        return () => {
          stopped = true;
          leave?.();
        };
      });
    },
    renewLease: (threadId, runId, owner, leaseUntil) =>
      call(threadId, runId, async () => Number(await run(scripts.renewLease, [keys.run(threadId, runId)], [owner, String(leaseUntil)])) === 1),
    requestStop: (threadId, runId) =>
      call(threadId, runId, async () => {
        await redis.publish(channel, JSON.stringify({ threadId, runId }));
      }),
    stopRequests: () => stops.asObservable(),
    touchReader: (threadId, runId, readerId, until) =>
      call(threadId, runId, async () => {
        await run(scripts.touchReader, [keys.run(threadId, runId), keys.readers(threadId, runId)], [readerId, String(until)]);
      }),
    removeReader: (threadId, runId, readerId) =>
      call(threadId, runId, async () => {
        await redis.zRem(keys.readers(threadId, runId), readerId);
      }),
    countReaders: (threadId, runId, at) => call(threadId, runId, () => redis.zCount(keys.readers(threadId, runId), `(${at}`, '+inf')),
    compare: (a, b) => compareIds(a, b),
    isCursor: isStreamId,
    async close() {
      if (closed) return;
      closed = true;
      watchers.closeAll(new AguiRxError('STORE_UNAVAILABLE', 'The Redis run store was closed while this run was read.'));
      for (const entry of unanswered.values()) clearTimeout(entry.forget);
      unanswered.clear();
      stops.complete();
      // Ours are closed at once; the user's client stays theirs.
      const owned = options.client === undefined ? [subscriber, base] : [subscriber];
      for (const client of owned) if (client.isOpen) client.destroy();
    },
  };
}
