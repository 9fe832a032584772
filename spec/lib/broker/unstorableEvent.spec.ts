import { EventType, type Event, type RunAgentInput } from '@ag-ui/core';
import { Subject, firstValueFrom, from, lastValueFrom, tap, toArray } from 'rxjs';
import { createMemoryRunStore } from '../../../lib/broker/createMemoryRunStore.js';
import { createRunBroker, type BrokerActivity } from '../../../lib/broker/createRunBroker.js';
import { createRedisRunStore } from '../../../lib/broker/redis/index.js';
import type { RunStore } from '../../../lib/broker/runStore.js';
import type { AgentEvent } from '../../../lib/protocol/agentEvent.js';
import { toAgui } from '../../../operators/toAgui.js';
import { pollUntil } from '../../support/helpers.js';
import { runWithOracle } from '../../support/oracle.js';
import { describeWithRedis, startRedisServer, type RedisServer } from '../../support/redisServer.js';

const input = (threadId: string): RunAgentInput => ({ threadId, runId: 'r1', messages: [], tools: [], context: [], state: {}, forwardedProps: {} });
const access = { request: undefined };

/** An agent's RAW event whose payload refers to itself: JSON cannot carry it. */
function cyclicRaw(): AgentEvent {
  const payload: Record<string, unknown> = { a: 1 };
  payload.self = payload;
  return { type: EventType.RAW, event: payload } as AgentEvent;
}

/** The broker cases, for a store of each kind: an event the log cannot hold ends the run at once. */
function describeUnstorable(name: string, makeStore: () => RunStore): void {
  describe(`createRunBroker over ${name}, when the agent emits an event that is not valid JSON`, () => {
    it('should end the run at once with RUN_ERROR INVALID_EVENT naming the event, after closing what was open, and stop the agent', async () => {
      const threadId = `unstorable-${Date.now()}`;
      const activity: BrokerActivity[] = [];
      // A lease long enough that a retry loop would outlast the test.
      const broker = createRunBroker({ store: makeStore(), leaseMs: 60_000, onActivity: (entry) => activity.push(entry) });
      const agent$ = new Subject<AgentEvent>();
      let aborted = false;
      const frames$ = await broker.run(
        input(threadId),
        (signal) => {
          signal.addEventListener('abort', () => (aborted = true));
          return agent$.pipe(toAgui({ threadId, runId: 'r1', input: input(threadId), signal }));
        },
        access,
      );
      // A frame with a cursor is in the log: the event before the bad one was appended on its own.
      let logged!: () => void;
      const contentLogged = new Promise<void>((resolve) => (logged = resolve));
      const frames = firstValueFrom(frames$.pipe(tap((frame) => frame.event.type === EventType.TEXT_MESSAGE_CONTENT && frame.cursor !== undefined && logged()), toArray()));
      agent$.next({ type: EventType.TEXT_MESSAGE_CHUNK, messageId: 'm1', delta: 'before' } as AgentEvent);
      await contentLogged;
      agent$.next(cyclicRaw());
      agent$.next({ type: EventType.TEXT_MESSAGE_CHUNK, messageId: 'm1', delta: ' after' } as AgentEvent);
      const events = (await frames).map((frame) => frame.event);
      expect(events.map((event) => event.type)).toEqual(['RUN_STARTED', 'TEXT_MESSAGE_START', 'TEXT_MESSAGE_CONTENT', 'TEXT_MESSAGE_END', 'RUN_ERROR']);
      const end = events.at(-1) as { code?: string; message: string };
      expect(end.code).toBe('INVALID_EVENT');
      expect(end.message).toContain("The RAW event of run 'r1'");
      expect(end.message).toContain('not valid JSON');
      expect(end.message).toContain('break reference cycles');
      expect(aborted).toBe(true);
      // Refused once, never retried; the run ended as the log says (a reader may see it before the owner's append resolves).
      await pollUntil(async () => activity.some((entry) => entry.type === 'run-ended'), (ended) => ended, { what: 'the run-ended activity' });
      expect(activity.filter((entry) => entry.type === 'store-error')).toHaveLength(1);
      expect(activity.filter((entry) => entry.type === 'run-ended')).toEqual([expect.objectContaining({ outcome: 'error', code: 'INVALID_EVENT' })]);
      expect((await broker.store.getRun(threadId, 'r1'))?.status).toBe('finished');
      // Every reader, now or later, reads the same end: it is in the log.
      const log = (await lastValueFrom(broker.store.read(threadId, 'r1').pipe(toArray()))).flat();
      expect(log.map((entry) => entry.event.type)).toEqual(['RUN_STARTED', 'TEXT_MESSAGE_START', 'TEXT_MESSAGE_CONTENT', 'RUN_ERROR']);
      expect(log.at(-1)?.event).toEqual(end);
      const oracle = await runWithOracle(from(events as Event[]));
      expect(oracle.messages.at(-1)).toMatchObject({ id: 'm1', content: 'before' });
      await broker.close();
    });
  });
}

describeUnstorable('the memory store', () => createMemoryRunStore());

describeWithRedis('createRunBroker over Redis, with an event that is not valid JSON', () => {
  let server: RedisServer;
  beforeAll(async () => {
    server = await startRedisServer();
  });
  afterAll(async () => {
    await server?.stop();
  });
  describeUnstorable('the Redis store', () => createRedisRunStore({ url: server.url }));
});
