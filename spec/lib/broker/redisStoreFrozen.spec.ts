import { EventType, type Event } from '@ag-ui/core';
import { NEVER, firstValueFrom, lastValueFrom, tap, toArray } from 'rxjs';
import { createRunBroker } from '../../../lib/broker/createRunBroker.js';
import { createRedisRunStore } from '../../../lib/broker/redis/index.js';
import type { RunRecord, RunStore } from '../../../lib/broker/runStore.js';
import { createAguiHandler } from '../../../lib/transports/createAguiHandler.js';
import { describeWithRedis, startRedisServer, type RedisServer } from '../../support/redisServer.js';
import { runInput, send, serveNode } from '../transports/brokerHttp.js';

const text = (delta: string): Event => ({ type: EventType.TEXT_MESSAGE_CONTENT, messageId: 'm1', delta }) as Event;
const record = (threadId: string, runId: string): RunRecord => ({
  threadId,
  runId,
  input: runInput(threadId, runId),
  owner: 'owner-1',
  status: 'running',
  startedAt: Date.now(),
  leaseUntil: Date.now() + 60_000,
});

/** `work`'s rejection, or a failure naming `what` when it neither settles within `ms` (generous: the deadline under test is far shorter). */
function rejectionWithin(work: Promise<unknown>, ms: number, what: string): Promise<{ code?: string; message: string }> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  return Promise.race([
    work.then(
      (value) => {
        throw new Error(`${what} resolved (${JSON.stringify(value)}) while Redis was frozen`);
      },
      (error: { code?: string; message: string }) => error,
    ),
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what} was still pending ${ms} ms after Redis froze`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

// A Redis that stops answering with its connections open (SIGSTOP, or a network blackhole): node-redis's
// own timeout stops counting once a command is sent, so the store keeps a deadline of its own.
describeWithRedis('createRedisRunStore with a frozen Redis', () => {
  let server: RedisServer;
  const open: { close(): Promise<unknown> }[] = [];
  beforeEach(async () => {
    server = await startRedisServer();
  });
  afterEach(async () => {
    server.resume();
    for (const item of open.splice(0).reverse()) await item.close();
    await server.stop();
  });
  const store = (unavailableAfterMs: number): RunStore => {
    const made = createRedisRunStore({ url: server.url, unavailableAfterMs });
    open.push(made);
    return made;
  };

  it('should reject every operation with STORE_UNAVAILABLE once its deadline passes without an answer', async () => {
    const runs = store(300);
    await runs.createRun(record('t', 'r'));
    await runs.append('t', 'r', [text('a')]);
    server.pause();
    const operations: [string, Promise<unknown>][] = [
      ['createRun', runs.createRun(record('t', 'r2'))],
      ['getRun', runs.getRun('t', 'r')],
      ['listRuns', runs.listRuns('t')],
      ['append', runs.append('t', 'r', [text('b')])],
      ['endRun', runs.endRun('t', 'r', { type: EventType.RUN_FINISHED, threadId: 't', runId: 'r' } as Event)],
      ['renewLease', runs.renewLease('t', 'r', 'owner-1', Date.now() + 60_000)],
      ['requestStop', runs.requestStop('t', 'r')],
      ['touchReader', runs.touchReader('t', 'r', 'reader-1', Date.now() + 60_000)],
      ['removeReader', runs.removeReader('t', 'r', 'reader-1')],
      ['countReaders', runs.countReaders('t', 'r', Date.now())],
      ['read', firstValueFrom(runs.read('t', 'r'))],
    ];
    for (const [name, operation] of operations) {
      const error = await rejectionWithin(operation, 10_000, name);
      expect({ name, code: error.code }).toEqual({ name, code: 'STORE_UNAVAILABLE' });
      expect(error.message).toContain(server.url);
      expect(error.message).toContain('no answer within 300 ms');
    }
  });

  it('should error a live read with STORE_UNAVAILABLE when its blocking read gets no answer past its block', async () => {
    const runs = store(300);
    await runs.createRun(record('t', 'r'));
    await runs.append('t', 'r', [text('a')]);
    let replayed!: () => void;
    const replay = new Promise<void>((resolve) => (replayed = resolve));
    const read = lastValueFrom(runs.read('t', 'r').pipe(tap(() => replayed()), toArray()));
    // Live once the replay is in: the blocking read is on its own connection.
    await replay;
    server.pause();
    // The read blocks 5 s at a time; with no answer 300 ms after that, the connection is given up.
    const error = await rejectionWithin(read, 20_000, 'the live read');
    expect(error.code).toBe('STORE_UNAVAILABLE');
    expect(error.message).toContain(server.url);
  });

  it('should append a batch once when the append that timed out lands after all and the retry follows it', async () => {
    const runs = store(300);
    await runs.createRun(record('t', 'r'));
    const events = [text('a'), text('b')];
    server.pause();
    expect((await rejectionWithin(runs.append('t', 'r', events), 10_000, 'append')).code).toBe('STORE_UNAVAILABLE');
    // A retry while the first is unanswered sends nothing (it would be run twice once Redis wakes).
    expect((await rejectionWithin(runs.append('t', 'r', events), 10_000, 'the retried append')).code).toBe('STORE_UNAVAILABLE');
    server.resume();
    // The broker retries with the same events first, then what came since; each try after a round
    // trip to Redis on the same connection, whose answer comes after the unanswered append's.
    const later = text('c');
    let cursors: string[] | undefined;
    for (let attempt = 0; attempt < 50 && cursors === undefined; attempt++) {
      await runs.getRun('t', 'r');
      cursors = await runs.append('t', 'r', [...events, later]).catch(() => undefined);
    }
    expect(cursors).toHaveLength(3);
    await runs.endRun('t', 'r', { type: EventType.RUN_FINISHED, threadId: 't', runId: 'r' } as Event);
    const log = (await lastValueFrom(runs.read('t', 'r').pipe(toArray()))).flat();
    expect(log.map((entry) => (entry.event as { delta?: string }).delta ?? entry.event.type)).toEqual(['a', 'b', 'c', 'RUN_FINISHED']);
    expect(log.slice(0, 3).map((entry) => entry.cursor)).toEqual(cursors);
  });

  it('should answer every route 503 naming Redis, instead of no answer at all', async () => {
    const runs = store(300);
    const broker = createRunBroker({ store: runs, authorize: () => true, leaseMs: 60_000 });
    open.push({ close: () => broker.close() });
    const served = await serveNode(createAguiHandler(() => NEVER, { broker, basePath: '/agent' }));
    open.unshift(served);
    const base = `${served.origin}/agent`;
    await runs.createRun(record('t', 'r'));
    server.pause();
    const answers = await Promise.all([
      rejectionWithin(send(base, { body: JSON.stringify(runInput('t', 'new')), headers: { Accept: 'text/event-stream' } }).then((answer) => Promise.reject(answer)), 10_000, 'POST a run'),
      rejectionWithin(send(`${base}/threads/t/runs/r/events`, { method: 'GET' }).then((answer) => Promise.reject(answer)), 10_000, 'GET events'),
      rejectionWithin(send(`${base}/connect`, { body: JSON.stringify(runInput('t', 'c')) }).then((answer) => Promise.reject(answer)), 10_000, 'POST connect'),
      rejectionWithin(send(`${base}/threads/t/runs/r/stop`, { body: '{}' }).then((answer) => Promise.reject(answer)), 10_000, 'POST stop'),
    ]);
    for (const answer of answers as unknown as { status: number; body: string }[]) {
      expect(answer.status).toBe(503);
      expect(JSON.parse(answer.body).error).toContain(`cannot reach Redis at ${server.url} (no answer within 300 ms)`);
    }
  });
});
