import { EventType, type Event } from '@ag-ui/core';
import { createClient } from 'redis';
import { firstValueFrom, lastValueFrom, mergeMap, tap, toArray } from 'rxjs';
import { createRedisRunStore, type RedisClient } from '../../../lib/broker/redis/index.js';
import type { RunRecord, RunStore } from '../../../lib/broker/runStore.js';
import { describeWithRedis, startRedisServer, type RedisServer } from '../../support/redisServer.js';
import { describeRunStore } from './runStoreConformance.js';
import { pollUntil } from '../../support/helpers.js';

const text = (delta: string): Event => ({ type: EventType.TEXT_MESSAGE_CONTENT, messageId: 'm1', delta }) as Event;
const finished = (threadId: string, runId: string): Event => ({ type: EventType.RUN_FINISHED, threadId, runId }) as Event;
const record = (threadId: string, runId: string): RunRecord => ({
  threadId,
  runId,
  input: { threadId, runId, messages: [], tools: [], context: [], state: {}, forwardedProps: {} },
  owner: 'owner-1',
  status: 'running',
  startedAt: 1_000,
  leaseUntil: 2_000,
});

describeWithRedis('createRedisRunStore', () => {
  let server: RedisServer;
  beforeAll(async () => {
    server = await startRedisServer();
  });
  afterAll(async () => {
    await server?.stop();
  });

  // Every store is a new set of connections to the one server: a "peer" is another instance.
  describeRunStore('createRedisRunStore', {
    make: (options) => createRedisRunStore({ url: server.url, retainMs: options?.retainMs, maxLen: options?.maxLen }),
    peer: () => createRedisRunStore({ url: server.url }),
    // A stream id an hour ahead: Redis ids are the append time in ms.
    aheadCursor: () => `${Date.now() + 3_600_000}-0`,
    // A stream id is two unsigned 64-bit integers.
    lastCursor: '18446744073709551615-18446744073709551615',
    beyondCursors: ['18446744073709551616-0', '0-18446744073709551616', '99999999999999999999-0', '99999999999999999999-99999999999999999999'],
    });

  describe('over Redis', () => {
    const open: { close(): Promise<unknown> }[] = [];
    afterEach(async () => {
      for (const item of open.splice(0).reverse()) await item.close();
    });
    const store = (options: Parameters<typeof createRedisRunStore>[0]) => {
      const made = createRedisRunStore(options);
      open.push(made);
      return made;
    };
    const client = async (url = server.url): Promise<RedisClient> => {
      const made: RedisClient = createClient({ url });
      made.on('error', () => undefined);
      await made.connect();
      open.push({ close: () => (made.isOpen ? made.close() : Promise.resolve()) });
      return made;
    };
    /** How many connections sit in a blocking command right now (INFO clients). */
    const blockedClients = async (admin: RedisClient) => Number(/blocked_clients:(\d+)/.exec(String(await admin.info('clients')))?.[1]);
    /** Waits until the server counts `n` blocked connections (a blocking read re-blocks every few seconds at most). */
    const untilBlocked = (admin: RedisClient, n: number) => pollUntil(() => blockedClients(admin), (count) => count === n, { what: `${n} blocked clients` });

    it('should append a burst of 1,000 events in one round trip (counted by MONITOR)', async () => {
      const runs = store({ url: server.url });
      const threadId = `burst-${Date.now()}`;
      await runs.createRun(record(threadId, 'r'));
      // Loads the append script, so that the burst is one EVALSHA.
      await runs.append(threadId, 'r', [text('warm-up')]);
      const monitor = await client();
      const marker = await client();
      const commands: string[] = [];
      let markerSeen!: () => void;
      const marked = new Promise<void>((resolve) => (markerSeen = resolve));
      await monitor.monitor((line) => {
        commands.push(String(line));
        if (String(line).includes('"marker"')) markerSeen();
      });
      const burst = Array.from({ length: 1000 }, (_, i) => text(`e${i}`));
      const cursors = await runs.append(threadId, 'r', burst);
      // A marker from another connection: MONITOR has shown everything before it once it arrives.
      await marker.ping('marker');
      await marked;
      const fromClients = commands.filter((line) => !line.includes(' lua]') && !line.includes('"marker"'));
      const xadds = commands.filter((line) => line.includes(' lua]') && /"xadd"/i.test(line));
      expect(cursors).toHaveLength(1000);
      expect(xadds).toHaveLength(1000);
      expect(fromClients.map((line) => /"(\w+)"/.exec(line.slice(line.indexOf(']')))?.[1].toLowerCase())).toEqual(['evalsha']);
      console.log(`Redis run store: a burst of 1000 events took ${fromClients.length} round trip(s): ${1000 / fromClients.length} events per round trip.`);
    });

    it('should read live through one blocking connection per watched thread, released with the last reader', async () => {
      const admin = await client();
      const runs = store({ url: server.url });
      const [a, b] = [`share-a-${Date.now()}`, `share-b-${Date.now()}`];
      await runs.createRun(record(a, 'r'));
      await runs.createRun(record(b, 'r'));
      const readers = [runs.read(a, 'r').subscribe(), runs.read(a, 'r').subscribe(), runs.read(a, 'r').subscribe()];
      await untilBlocked(admin, 1);
      readers.push(runs.read(b, 'r').subscribe());
      await untilBlocked(admin, 2);
      for (const reader of readers) reader.unsubscribe();
      await untilBlocked(admin, 0);
    });

    it('should share runs between two instances with their own connections', async () => {
      const one = store({ url: server.url });
      const two = store({ url: server.url });
      const threadId = `two-${Date.now()}`;
      await one.createRun(record(threadId, 'r'));
      expect((await two.listRuns(threadId)).map((run) => run.runId)).toEqual(['r']);
      const read = lastValueFrom(two.read(threadId, 'r').pipe(mergeMap((batch) => batch), toArray()));
      await one.append(threadId, 'r', [text('a')]);
      await one.append(threadId, 'r', [finished(threadId, 'r')]);
      expect((await read).map((entry) => entry.event)).toEqual([text('a'), finished(threadId, 'r')]);
    });

    it("should use the user's client without closing it", async () => {
      const own = await client();
      const runs = createRedisRunStore({ client: own, keyPrefix: 'mine' });
      const threadId = `own-${Date.now()}`;
      await runs.createRun(record(threadId, 'r'));
      expect(await own.exists(`mine:run:{${threadId}}:r`)).toBe(1);
      await runs.close();
      expect(own.isOpen).toBe(true);
      expect(await own.ping()).toBe('PONG');
    });

    it('should error a live read with STORE_UNAVAILABLE, naming the URL without password, when Redis stops', async () => {
      const doomed = await startRedisServer();
      open.push({ close: () => doomed.stop() });
      const url = `redis://:secret@127.0.0.1:${doomed.port}`;
      const runs = store({ url: doomed.url, unavailableAfterMs: 500 });
      const threadId = `down-${Date.now()}`;
      await runs.createRun(record(threadId, 'r'));
      const read = firstValueFrom(runs.read(threadId, 'r').pipe(toArray())).then(
        () => undefined,
        (error: { code?: string; message: string }) => error,
      );
      await runs.append(threadId, 'r', [text('a')]);
      const stoppedAt = Date.now();
      await doomed.stop();
      const error = await read;
      const waited = Date.now() - stoppedAt;
      expect(error).toMatchObject({ code: 'STORE_UNAVAILABLE' });
      expect(error?.message).toContain(`redis://127.0.0.1:${doomed.port}`);
      expect(waited).toBeLessThan(3_000);
      expect(await runs.getRun(threadId, 'r').catch((failure: { code?: string }) => failure.code)).toBe('STORE_UNAVAILABLE');
      const hidden = createRedisRunStore({ url, unavailableAfterMs: 200 });
      const message = await hidden.getRun(threadId, 'r').catch((failure: Error) => failure.message);
      await hidden.close();
      expect(message).toContain(`redis://:***@127.0.0.1:${doomed.port}`);
      expect(message).not.toContain('secret');
    });

    it('should answer STORE_UNAVAILABLE within unavailableAfterMs when Redis is not there at all', async () => {
      const doomed = await startRedisServer();
      await doomed.stop();
      const runs: RunStore = store({ url: doomed.url, unavailableAfterMs: 300 });
      const startedAt = Date.now();
      expect(await runs.createRun(record('t', 'r')).catch((failure: { code?: string }) => failure.code)).toBe('STORE_UNAVAILABLE');
      expect(Date.now() - startedAt).toBeLessThan(2_000);
    });

    it('should refuse, when made, a limit that is NaN or negative, before connecting', () => {
      const url = 'redis://127.0.0.1:1';
      expect(() => createRedisRunStore({ url, retainMs: Number.NaN })).toThrow(new RangeError("'retainMs' must be a number of ms ≥ 0 (Infinity: keep finished runs), not NaN."));
      expect(() => createRedisRunStore({ url, maxLen: Infinity })).toThrow(new RangeError("'maxLen' must be a whole number of entries ≥ 1, not Infinity."));
      expect(() => createRedisRunStore({ url, unavailableAfterMs: -1 })).toThrow(new RangeError("'unavailableAfterMs' must be a number of ms > 0, at most 2147483647 (what a timer holds), not -1."));
      expect(() => createRedisRunStore({ url, unavailableAfterMs: 2 ** 31 })).toThrow(RangeError);
    });

    it('should serve once Redis comes up after the store was created', async () => {
      const late = await startRedisServer();
      open.push({ close: () => late.stop() });
      await late.stop();
      const runs = store({ url: late.url, unavailableAfterMs: 300 });
      expect(await runs.listRuns('t').catch((failure: { code?: string }) => failure.code)).toBe('STORE_UNAVAILABLE');
      await late.restart();
      // node-redis reconnects by itself (backing off up to 1 s), telling no one outside the store: poll until it has.
      const answer = await pollUntil(() => runs.listRuns('t').catch((failure: { code?: string }) => failure.code), Array.isArray, { intervalMs: 50, what: 'the store to reconnect' });
      expect(answer).toEqual([]);
    });

    it('should error a live read with RUN_NOT_FOUND when Redis restarts without its data', async () => {
      const amnesiac = await startRedisServer();
      open.push({ close: () => amnesiac.stop() });
      const runs = store({ url: amnesiac.url, unavailableAfterMs: 5_000 });
      const threadId = `lost-${Date.now()}`;
      await runs.createRun(record(threadId, 'r'));
      await runs.append(threadId, 'r', [text('a')]);
      // The restart comes once the read is under way: its first entry has arrived.
      let underWay!: () => void;
      const started = new Promise<void>((resolve) => (underWay = resolve));
      const read = firstValueFrom(runs.read(threadId, 'r').pipe(tap(() => underWay()), toArray())).then(
        () => undefined,
        (error: { code?: string }) => error.code,
      );
      await started;
      await amnesiac.restart();
      expect(await read).toBe('RUN_NOT_FOUND');
    });

    it('should not load the store (nor redis) with the package root', () => {
      jest.isolateModules(() => {
        jest.doMock('redis', () => {
          throw new Error('the package root loaded redis');
        });
        expect(() => require('../../../lib/index')).not.toThrow();
      });
    });
  });
});
