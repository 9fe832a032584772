import type { RunAgentInput } from '@ag-ui/core';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Observable, delay, from } from 'rxjs';
import { createRunBroker, type RunBroker } from '../../../lib/broker/createRunBroker.js';
import type { AgentEvent } from '../../../lib/protocol/agentEvent.js';
import { createAguiHandler, type AguiAgent, type AguiHandlerOptions } from '../../../lib/transports/createAguiHandler.js';
import { pollUntil } from '../../support/helpers.js';
import { runWithOracle } from '../../support/oracle.js';
import { SCRIPT, agentHarness, scriptMessages } from './brokerHarness.js';
import { eventsOf, pipeline, rawPost } from './pipelinedClient.js';

/*
 * HTTP/1.1 pipelining (RFC 9112 §9.3.2) over raw loopback TCP: several POSTs in one write on one
 * connection. Node calls the handler for each at once; a run must start only when its response owns
 * the connection, and none may start once the client has gone.
 */

const input = (runId: string): RunAgentInput => ({
  threadId: 'thread-1',
  runId,
  state: { count: 0 },
  messages: [{ id: `u-${runId}`, role: 'user', content: 'Weather in Oslo?' }],
  tools: [],
  context: [],
  forwardedProps: {},
});

const expectedMessages = (runId: string) => scriptMessages(`u-${runId}`);

async function listen(agent: AguiAgent, options: AguiHandlerOptions): Promise<{ server: Server; port: number }> {
  const server = createServer(createAguiHandler(agent, options));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as AddressInfo).port };
}

/** A scripted agent (SCRIPT, 1 ms apart) that records the order of starts and how many run at once. */
function countingAgent() {
  const starts: string[] = [];
  let running = 0;
  let maxRunning = 0;
  const agent: AguiAgent = (runInput) =>
    new Observable<AgentEvent>((subscriber) => {
      starts.push(runInput.runId);
      maxRunning = Math.max(maxRunning, ++running);
      const subscription = from(SCRIPT).pipe(delay(1)).subscribe(subscriber);
      return () => {
        running--;
        subscription.unsubscribe();
      };
    });
  return { agent, starts, maxRunning: () => maxRunning };
}

/** Lets the server's pending callbacks run (its 'close' handling, a run that would start in a later tick). */
const settle = () => new Promise<void>((resolve) => setTimeout(() => setImmediate(resolve), 20));

describe.each([
  ['without a broker', false],
  ['with a run broker', true],
])('createAguiHandler and HTTP pipelining (%s)', (_name, withBroker) => {
  let server: Server;
  let broker: RunBroker | undefined;
  const options = (extra: AguiHandlerOptions = {}): AguiHandlerOptions => {
    broker = withBroker ? createRunBroker({ detachGraceMs: 0 }) : undefined;
    return { ...extra, ...(broker !== undefined ? { broker, basePath: '/agent' } : {}) };
  };
  afterEach(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await broker?.close();
  });

  it('should start the pipelined runs one at a time, in order, and answer each with a well-formed stream', async () => {
    const { agent, starts, maxRunning } = countingAgent();
    let port: number;
    ({ server, port } = await listen(agent, options({ heartbeatMs: 0 })));
    const runIds = ['run-1', 'run-2', 'run-3', 'run-4', 'run-5'];
    const requests = runIds.map((runId) => rawPost(input(runId)));
    // A bad body among them is refused in its turn, between the streams around it.
    requests.splice(2, 0, rawPost(JSON.stringify({ ...input('run-x'), threadId: 7 })));
    const client = pipeline(port, requests);
    await pollUntil(
      () => client.responses.filter((response) => response.complete).length,
      (complete) => complete === requests.length,
      { what: 'every pipelined response' },
    );
    client.socket.destroy();

    expect(starts).toEqual(runIds);
    expect(maxRunning()).toBe(1);
    expect(client.responses.map((response) => response.status)).toEqual([200, 200, 400, 200, 200, 200]);
    expect(JSON.parse(client.responses[2].body).error).toMatch(/threadId/);
    const streams = client.responses.filter((response) => response.status === 200);
    for (const [index, response] of streams.entries()) {
      const runId = runIds[index];
      const events = await eventsOf(response.body);
      expect(events[0]).toMatchObject({ type: 'RUN_STARTED', threadId: 'thread-1', runId });
      const run = await runWithOracle(from(events), { runId, initialMessages: input(runId).messages, initialState: { count: 0 } });
      expect(run.messages).toEqual(expectedMessages(runId));
      expect(run.state).toEqual({ count: 1, city: 'Oslo' });
    }
  });

  it('should close a connection on which more than maxPipelinedRequests wait, starting none of them', async () => {
    const harness = agentHarness();
    harness.endless('run-0', [{ type: 'TEXT_MESSAGE_CHUNK', messageId: 'm1', delta: 'Thinking' }]);
    let port: number;
    ({ server, port } = await listen(harness.agent, options({ heartbeatMs: 0, maxPipelinedRequests: 3 })));
    // One running, then five waiting: the fourth one waiting is one too many.
    const client = pipeline(
      port,
      ['run-0', 'run-1', 'run-2', 'run-3', 'run-4', 'run-5'].map((runId) => rawPost(input(runId))),
    );
    await client.closed;
    await pollUntil(
      () => harness.unsubscribed.has('run-0'),
      (gone) => gone,
      { what: 'the running agent to be unsubscribed' },
    );
    await settle();
    expect(harness.starts).toEqual(['run-0']);
  });

  it('should notice the client leaving while a pipelined request refused 413 by its Content-Length waits (its body discarded, heartbeatMs: 0)', async () => {
    const harness = agentHarness();
    harness.endless('run-1', [{ type: 'TEXT_MESSAGE_CHUNK', messageId: 'm1', delta: 'Thinking' }]);
    let port: number;
    ({ server, port } = await listen(harness.agent, options({ heartbeatMs: 0, maxBodyBytes: 64 * 1024 })));
    const oversize = JSON.stringify({ ...input('run-2'), forwardedProps: { pad: 'x'.repeat(2_000_000) } });
    const client = pipeline(port, [rawPost(input('run-1')), rawPost(oversize)]);
    await pollUntil(
      () => client.responses[0]?.body ?? '',
      (body) => body.includes('TEXT_MESSAGE_CONTENT'),
      { what: 'the first run\'s text' },
    );
    // The oversize body is sent whole, then the FIN: the server must read past the body to see it.
    await pollUntil(
      () => client.socket.writableLength,
      (unsent) => unsent === 0,
      { what: 'the oversize body to be sent' },
    );
    client.socket.end();
    await pollUntil(
      () => harness.unsubscribed.has('run-1'),
      (gone) => gone,
      { what: 'the running agent to be unsubscribed' },
    );
    expect(harness.starts).toEqual(['run-1']);
  });

  it.each([
    ['destroys the connection', (socket: import('node:net').Socket) => socket.destroy()],
    ['half-closes the connection (FIN)', (socket: import('node:net').Socket) => socket.end()],
  ])('should start no waiting run, and stop the running one, when the client %s while runs wait (heartbeatMs: 0)', async (_how, leave) => {
    const harness = agentHarness();
    // The first run sends one message, then thinks forever: no event, no heartbeat, nothing written.
    harness.endless('run-1', [{ type: 'TEXT_MESSAGE_CHUNK', messageId: 'm1', delta: 'Thinking' }]);
    let port: number;
    ({ server, port } = await listen(harness.agent, options({ heartbeatMs: 0 })));
    const client = pipeline(
      port,
      ['run-1', 'run-2', 'run-3', 'run-4'].map((runId) => rawPost(input(runId))),
    );
    await pollUntil(
      () => client.responses[0]?.body ?? '',
      (body) => body.includes('TEXT_MESSAGE_CONTENT'),
      { what: 'the first run\'s text' },
    );
    expect(harness.starts).toEqual(['run-1']);

    leave(client.socket);
    await pollUntil(
      () => harness.unsubscribed.has('run-1'),
      (gone) => gone,
      { what: 'the running agent to be unsubscribed' },
    );
    expect(harness.signals.get('run-1')?.aborted).toBe(true);
    await pollUntil(
      () => new Promise<number>((resolve) => server.getConnections((_error, count) => resolve(count))),
      (count) => count === 0,
      { what: 'the server to close the connection' },
    );
    await settle();
    expect(harness.starts).toEqual(['run-1']);
  });

  it('should notice the client\'s FIN after Node paused reading the connection for requests that came in while it wrote a burst (heartbeatMs: 0)', async () => {
    const harness = agentHarness();
    // 16 MB in one tick, more than the loopback connection holds while the client does not read: Node
    // stops reading the connection when a request arrives while the response waits for 'drain'; then silence.
    const burst = Array.from({ length: 512 }, (): AgentEvent => ({ type: 'TEXT_MESSAGE_CHUNK', messageId: 'm1', delta: 'x'.repeat(32 * 1024) }));
    harness.endless('run-1', [...burst, { type: 'TEXT_MESSAGE_CHUNK', messageId: 'm2', delta: 'burst over' }]);
    const arrived: string[] = [];
    const handler = createAguiHandler(harness.agent, options({ heartbeatMs: 0, maxBufferedBytes: 64 * 1024 * 1024 }));
    server = createServer((req, res) => {
      arrived.push(req.url ?? '');
      handler(req, res);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const client = pipeline((server.address() as AddressInfo).port, [rawPost(input('run-1'))]);
    client.socket.pause();
    await pollUntil(
      () => harness.starts.length,
      (count) => count === 1,
      { what: 'the first run' },
    );
    client.socket.write(['run-2', 'run-3'].map((runId) => rawPost(input(runId))).join(''));
    await pollUntil(
      () => arrived.length,
      (count) => count === 3,
      { what: 'the pipelined requests to reach the handler' },
    );
    client.socket.resume();
    await pollUntil(
      () => client.responses[0]?.body ?? '',
      (body) => body.includes('burst over'),
      { what: 'the whole burst' },
    );
    client.socket.end();
    await pollUntil(
      () => harness.unsubscribed.has('run-1'),
      (gone) => gone,
      { what: 'the running agent to be unsubscribed' },
    );
    await settle();
    expect(harness.starts).toEqual(['run-1']);
  });

  it('should watch a connection with one listener, however many requests wait on it', async () => {
    const harness = agentHarness();
    harness.endless('run-1', [{ type: 'TEXT_MESSAGE_CHUNK', messageId: 'm1', delta: 'Thinking' }]);
    const handler = createAguiHandler(harness.agent, options({ heartbeatMs: 0 }));
    const sockets: import('node:net').Socket[] = [];
    let arrived = 0;
    server = createServer((req, res) => {
      arrived++;
      handler(req, res);
    });
    server.on('connection', (socket) => sockets.push(socket));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const client = pipeline(
      (server.address() as AddressInfo).port,
      Array.from({ length: 30 }, (_, i) => rawPost(input(`run-${i + 1}`))),
    );
    await pollUntil(
      () => arrived,
      (count) => count === 30,
      { what: 'the pipelined requests to reach the handler' },
    );
    await pollUntil(
      () => harness.starts.length,
      (count) => count === 1,
      { what: 'the first run' },
    );
    // Node's own listeners, the running response's, and one of ours: not one per waiting request.
    expect(sockets).toHaveLength(1);
    expect(sockets[0].listenerCount('close')).toBeLessThan(10);
    expect(sockets[0].listenerCount('end')).toBeLessThan(10);
    client.socket.destroy();
  });
});
