import { EventType, type Event } from '@ag-ui/core';
import { of } from 'rxjs';
import { createRunBroker } from '../../../lib/broker/createRunBroker.js';
import { MAX_ID_BYTES, unroutableReason } from '../../../lib/broker/routableId.js';
import { createAguiHandler } from '../../../lib/transports/createAguiHandler.js';
import type { AgentEvent } from '../../../lib/protocol/agentEvent.js';
import { framesOf, post, runInput, send, serveNode } from '../transports/brokerHttp.js';

const access = { request: undefined };
const agent = () => of({ type: EventType.TEXT_MESSAGE_CHUNK, messageId: 'm1', delta: 'hi' } as AgentEvent);

describe('unroutableReason', () => {
  it('should refuse the dot segments and ids over MAX_ID_BYTES percent-encoded, and take the rest', () => {
    expect(MAX_ID_BYTES).toBe(1024);
    expect(unroutableReason('.')).toContain('dot segment');
    expect(unroutableReason('..')).toContain('dot segment');
    for (const id of ['...', '%2e', '.a', 'a.', 'x'.repeat(1024), 'é'.repeat(170)]) expect(unroutableReason(id)).toBeUndefined();
    expect(unroutableReason('x'.repeat(1025))).toContain('takes 1025 bytes');
    // é is two UTF-8 bytes, six percent-encoded.
    expect(unroutableReason('é'.repeat(171))).toContain('takes 1026 bytes');
  });
});

describe('createRunBroker with ids its routes cannot carry', () => {
  it.each([
    ['threadId', "'.'", '.'],
    ['threadId', "'..'", '..'],
    ['runId', "'..'", '..'],
    ['runId', '10 KB long', 'x'.repeat(10_000)],
  ])('should refuse to start a run whose %s is %s, starting nothing', async (field, _label, id) => {
    const broker = createRunBroker({ authorize: () => true });
    let started = false;
    const input = { ...runInput('t1', 'r1'), [field]: id };
    const error = await broker
      .run(
        input,
        () => {
          started = true;
          return of({ type: EventType.RUN_STARTED, threadId: 't1', runId: 'r1' } as Event);
        },
        access,
      )
      .catch((failure: { code?: string; message: string }) => failure);
    expect(error).toMatchObject({ code: 'INVALID_ARGUMENT' });
    expect((error as Error).message).toContain(`The ${field} "${id.slice(0, 40)}`);
    expect((error as Error).message).toContain('could never be resumed or stopped');
    expect(started).toBe(false);
    expect(await broker.store.getRun(input.threadId, input.runId)).toBeUndefined();
    await broker.close();
  });

  it('should answer 400 over HTTP for a dot-segment or oversized id, and serve every route of the longest id it takes', async () => {
    const broker = createRunBroker({ authorize: () => true });
    const served = await serveNode(createAguiHandler(agent, { broker, basePath: '/agent' }));
    try {
      const base = `${served.origin}/agent`;
      for (const input of [runInput('..', 'r1'), runInput('t1', '.'), runInput('t1', 'é'.repeat(171))]) {
        const answer = await post(base, input, { Accept: 'text/event-stream' });
        expect(answer.status).toBe(400);
        expect(JSON.parse(answer.body).error).toContain('could never be resumed or stopped');
      }
      const threadId = 'é'.repeat(170);
      const runId = 'r'.repeat(MAX_ID_BYTES);
      const started = await post(base, runInput(threadId, runId), { Accept: 'text/event-stream' });
      expect(started.status).toBe(200);
      const path = `${base}/threads/${encodeURIComponent(threadId)}/runs/${encodeURIComponent(runId)}`;
      const replay = await send(`${path}/events`, { method: 'GET', headers: { Accept: 'text/event-stream' } });
      expect(replay.status).toBe(200);
      expect(framesOf(replay.body).at(-1)?.event.type).toBe('RUN_FINISHED');
      const stop = await send(`${path}/stop`, { body: '{}' });
      expect(stop.status).toBe(202);
    } finally {
      await served.close();
      await broker.close();
    }
  });
});
