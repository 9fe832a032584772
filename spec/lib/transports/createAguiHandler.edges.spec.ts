import { HttpAgent } from '@ag-ui/client';
import { EventType, type RunAgentInput } from '@ag-ui/core';
import express from 'express';
import { getEventListeners } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { NEVER, Observable, concat, delay, from, of } from 'rxjs';
import { createRunBroker, type BrokerActivity, type RunBroker } from '../../../lib/broker/createRunBroker.js';
import type { AgentEvent } from '../../../lib/protocol/agentEvent.js';
import { createAguiFetchHandler, createAguiHandler, type AguiAgent, type AguiHandlerOptions } from '../../../lib/transports/createAguiHandler.js';
import { pollUntil } from '../../support/helpers.js';
import { SCRIPT, quietly, scriptMessages } from './brokerHarness.js';
import { framesOf, open, post, protoEventsOf, send, serveFetch, serveNode, type Loopback } from './brokerHttp.js';

const PROTO = 'application/vnd.ag-ui.event+proto';

const input = (overrides: Partial<RunAgentInput> = {}): RunAgentInput => ({
  threadId: 'thread-1',
  runId: 'run-1',
  state: { count: 0 },
  messages: [{ id: 'u1', role: 'user', content: 'Weather in Oslo?' }],
  tools: [],
  context: [],
  forwardedProps: {},
  ...overrides,
});

const expectedMessages = scriptMessages();

/** The official client's run against `url`: the oracle, over the wire. */
async function runOfficialClient(url: string): Promise<HttpAgent> {
  const agent = new HttpAgent({ url, threadId: 'thread-1', initialMessages: input().messages, initialState: { count: 0 } });
  await quietly(() => agent.runAgent({ runId: 'run-1' }));
  return agent;
}

/** The scripted agent, recording the signal each run got. */
function recordingAgent(events$: () => Observable<AgentEvent> = () => from(SCRIPT).pipe(delay(1))) {
  const signals: AbortSignal[] = [];
  const agent: AguiAgent = (_input, { signal }) => {
    signals.push(signal);
    return events$();
  };
  return { agent, signals };
}

/** Serves an Express app on 127.0.0.1. */
async function serveExpress(app: express.Express): Promise<Loopback> {
  const server = createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close() {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

let server: Loopback | undefined;
let broker: RunBroker | undefined;
afterEach(async () => {
  await server?.close();
  await broker?.close();
  server = undefined;
  broker = undefined;
});

describe('ctx.signal: aborted only for a cancelled run', () => {
  const ended = (activities: BrokerActivity[]) => activities.some((activity) => activity.type === 'run-ended');

  describe.each([
    ['node:http', (agent: AguiAgent, options: AguiHandlerOptions) => serveNode(createAguiHandler(agent, options))],
    ['the fetch handler served through node', (agent: AguiAgent, options: AguiHandlerOptions) => serveFetch(createAguiFetchHandler(agent, options))],
  ] as const)('over %s', (_name, serve) => {
    it('should not abort the signal of a run that completed, and leave no listener of ours on it', async () => {
      const { agent, signals } = recordingAgent();
      server = await serve(agent, { heartbeatMs: 0 });
      const answer = await post(`${server.origin}/agent`, input());
      expect(framesOf(answer.body).at(-1)?.event.type).toBe(EventType.RUN_FINISHED);
      // The run's teardown ran before the response ended; one more turn for any late abort.
      await new Promise((resolve) => setImmediate(resolve));
      expect(signals).toHaveLength(1);
      expect(signals[0].aborted).toBe(false);
      expect(getEventListeners(signals[0], 'abort')).toHaveLength(0);
    });

    it('should not abort the signal of a run that ended with RUN_ERROR', async () => {
      const { agent, signals } = recordingAgent(() => concat(of<AgentEvent>({ type: 'TEXT_MESSAGE_CHUNK', delta: 'x' }), new Observable<AgentEvent>((s) => s.error(new Error('model failed')))));
      server = await serve(agent, { heartbeatMs: 0 });
      const answer = await post(`${server.origin}/agent`, input());
      expect(framesOf(answer.body).at(-1)?.event).toMatchObject({ type: EventType.RUN_ERROR, message: 'model failed' });
      await new Promise((resolve) => setImmediate(resolve));
      expect(signals[0].aborted).toBe(false);
    });

    it('should abort the signal when the client goes away mid-run', async () => {
      const { agent, signals } = recordingAgent(() => concat(of<AgentEvent>({ type: 'TEXT_MESSAGE_CHUNK', delta: 'x' }), NEVER));
      server = await serve(agent, { heartbeatMs: 0 });
      const stream = await open(`${server.origin}/agent`, { body: input() });
      await stream.take(2);
      stream.leave();
      await pollUntil(() => signals[0]?.aborted, Boolean, { what: 'the agent signal to abort' });
    });

    it('should not abort the signal of a brokered run that completed, after its log took the terminal event', async () => {
      const activities: BrokerActivity[] = [];
      const { agent, signals } = recordingAgent();
      broker = createRunBroker({ detachGraceMs: Infinity, onActivity: (activity) => activities.push(activity) });
      server = await serve(agent, { broker, basePath: '/agent', heartbeatMs: 0 });
      const answer = await post(`${server.origin}/agent`, input());
      expect(framesOf(answer.body).at(-1)?.event.type).toBe(EventType.RUN_FINISHED);
      await pollUntil(() => ended(activities), Boolean, { what: 'the run-ended report' });
      await new Promise((resolve) => setImmediate(resolve));
      expect(signals[0].aborted).toBe(false);
    });

    it('should abort the signal of a brokered run when it is stopped, and when it is left past its grace', async () => {
      const { agent, signals } = recordingAgent(() => concat(of<AgentEvent>({ type: 'TEXT_MESSAGE_CHUNK', delta: 'x' }), NEVER));
      broker = createRunBroker({ detachGraceMs: 20, authorize: () => true });
      server = await serve(agent, { broker, basePath: '/agent', heartbeatMs: 0 });
      const stopped = await open(`${server.origin}/agent`, { body: input({ runId: 'stopped' }) });
      await stopped.take(2);
      expect((await send(`${server.origin}/agent/threads/thread-1/runs/stopped/stop`, { body: '' })).status).toBe(202);
      expect((await stopped.ended).at(-1)?.event).toMatchObject({ type: EventType.RUN_FINISHED, outcome: { type: 'cancelled' } });
      expect(signals[0].aborted).toBe(true);

      const left = await open(`${server.origin}/agent`, { body: input({ runId: 'left' }) });
      await left.take(2);
      left.leave();
      await pollUntil(() => signals[1]?.aborted, Boolean, { what: 'the detached run to be cancelled' });
    });
  });

  it('should abort the signal of a run stopped for a slow client (node, SLOW_CLIENT)', async () => {
    // A reader that never reads, and an agent that keeps producing: the stream stops the run.
    const big = 'x'.repeat(64 * 1024);
    const { agent, signals } = recordingAgent(
      () =>
        new Observable<AgentEvent>((subscriber) => {
          const timer = setInterval(() => subscriber.next({ type: 'TEXT_MESSAGE_CHUNK', messageId: 'm1', delta: big }), 1);
          return () => clearInterval(timer);
        }),
    );
    server = await serveNode(createAguiHandler(agent, { heartbeatMs: 0, maxBufferedBytes: 256 * 1024 }));
    const { port } = new URL(server.origin);
    const socket = connect(Number(port), '127.0.0.1');
    const body = JSON.stringify(input());
    socket.write(`POST /agent HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
    socket.pause();
    try {
      await pollUntil(() => signals[0]?.aborted, Boolean, { timeoutMs: 20_000, what: 'the slow client run to be stopped' });
    } finally {
      socket.destroy();
    }
  });
});

describe('createAguiFetchHandler: request.signal aborting closes the response body', () => {
  const endless = () => concat(of<AgentEvent>({ type: 'TEXT_MESSAGE_CHUNK', delta: 'Hi' }), NEVER);

  it.each([
    ['without a broker', false],
    ['with a broker', true],
  ] as const)('should end the body a reader waits on (a Web Request/Response, %s)', async (_name, brokered) => {
    let tornDown = false;
    if (brokered) broker = createRunBroker({ detachGraceMs: Infinity });
    const handler = createAguiFetchHandler(() => new Observable<AgentEvent>((subscriber) => endless().subscribe(subscriber).add(() => (tornDown = true))), { heartbeatMs: 0, broker });
    const controller = new AbortController();
    const response = await handler(new Request('http://localhost/', { method: 'POST', body: JSON.stringify(input()), headers: { 'Content-Type': 'application/json' }, signal: controller.signal }));
    expect(response.status).toBe(200);
    const reader = response.body!.getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toContain('RUN_STARTED');
    const rest = (async () => {
      for (;;) if ((await reader.read()).done) return 'closed';
    })();
    controller.abort();
    await expect(rest).resolves.toBe('closed');
    // Without a broker the agent is stopped; with one it only lost its reader (and goes on).
    expect(tornDown).toBe(!brokered);
  });

  it('should let a Node adapter that only aborts request.signal finish its response (loopback)', async () => {
    // An adapter that aborts request.signal when the client leaves, and waits for the body to end
    // (it does not cancel it): it used to wait forever, holding the stream and the agent's closure.
    let pumped: (() => void) | undefined;
    const pumpDone = new Promise<void>((resolve) => (pumped = resolve));
    const handler = createAguiFetchHandler(() => endless(), { heartbeatMs: 0 });
    const node = createServer((req: IncomingMessage, res: ServerResponse) => {
      const controller = new AbortController();
      res.on('close', () => controller.abort());
      const request = new Request(`http://127.0.0.1${req.url}`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: Readable.toWeb(req) as ReadableStream<Uint8Array>, duplex: 'half', signal: controller.signal } as RequestInit);
      void handler(request).then(async (response) => {
        res.writeHead(response.status, Object.fromEntries(response.headers));
        const reader = response.body!.getReader();
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          if (!res.destroyed) res.write(value);
        }
        res.end();
        pumped!();
      });
    });
    await new Promise<void>((resolve) => node.listen(0, '127.0.0.1', resolve));
    server = { origin: `http://127.0.0.1:${(node.address() as AddressInfo).port}`, close: () => new Promise((resolve) => (node.closeAllConnections(), node.close(() => resolve()))) };
    const stream = await open(`${server.origin}/agent`, { body: input() });
    await stream.take(1);
    stream.leave();
    await pumpDone;
  });
});

describe('a body parser in front of createAguiHandler', () => {
  const handler = (options: AguiHandlerOptions = {}) => createAguiHandler(() => from(SCRIPT).pipe(delay(1)), { heartbeatMs: 0, ...options });

  it('should run from req.body after express.json(), for the official client', async () => {
    const app = express();
    app.use(express.json());
    app.post('/agent', handler());
    server = await serveExpress(app);
    const agent = await runOfficialClient(`${server.origin}/agent`);
    expect(agent.messages).toEqual(expectedMessages);
    expect(agent.state).toEqual({ count: 1, city: 'Oslo' });
  });

  it('should run from req.body after express.text() and express.raw(), a BOM and all', async () => {
    const app = express();
    app.post('/text', express.text({ type: '*/*' }), handler());
    app.post('/raw', express.raw({ type: '*/*' }), handler());
    server = await serveExpress(app);
    for (const path of ['/text', '/raw']) {
      const answer = await post(`${server.origin}${path}`, '\uFEFF' + JSON.stringify(input()));
      expect([path, answer.status]).toEqual([path, 200]);
      expect(framesOf(answer.body).map((frame) => frame.event.type).at(-1)).toBe(EventType.RUN_FINISHED);
    }
  });

  it("should validate req.body as usual: a bad RunAgentInput gets 400 by field, bad JSON text gets 400, the parser's own limit applies", async () => {
    const app = express();
    app.post('/json', express.json({ limit: '1kb' }), handler());
    app.post('/text', express.text({ type: '*/*' }), handler());
    server = await serveExpress(app);
    const bad = await post(`${server.origin}/json`, { ...input(), messages: 'hello' });
    expect([bad.status, JSON.parse(bad.body)]).toEqual([400, { error: "The request body is not a valid RunAgentInput: 'messages' must be an array, not \"hello\"." }]);
    const empty = await post(`${server.origin}/json`, '{}');
    expect(empty.status).toBe(400);
    expect(JSON.parse(empty.body).error).toMatch(/^The request body is not a valid RunAgentInput: 'threadId'/);
    const notJson = await post(`${server.origin}/text`, '{"threadId": ');
    expect(notJson.status).toBe(400);
    expect(JSON.parse(notJson.body).error).toMatch(/^The request body is not valid JSON: /);
    // Over express.json()'s limit: Express answers 413 itself; the handler is never called.
    const large = await post(`${server.origin}/json`, { ...input(), context: [{ description: 'x', value: 'y'.repeat(2048) }] });
    expect(large.status).toBe(413);
  });

  it('should read the body itself when express.json() let it pass (another JSON type), and refuse one that is not JSON with 415', async () => {
    const app = express();
    app.use(express.json());
    app.post('/agent', handler());
    server = await serveExpress(app);
    const answer = await post(`${server.origin}/agent`, JSON.stringify(input()), { 'Content-Type': 'application/vnd.api+json' });
    expect(answer.status).toBe(200);
    expect(framesOf(answer.body).at(-1)?.event.type).toBe(EventType.RUN_FINISHED);
    const text = await post(`${server.origin}/agent`, JSON.stringify(input()), { 'Content-Type': 'text/plain' });
    expect([text.status, JSON.parse(text.body)]).toEqual([415, { error: "The Content-Type 'text/plain' is not JSON (fetch and new Request send a string body as text/plain unless given the header): POST the RunAgentInput as JSON, with the header 'Content-Type: application/json'. A browser sends other types across sites without asking first, so they are refused." }]);
  });

  it('should serve a run broker behind express.json()', async () => {
    broker = createRunBroker({ detachGraceMs: Infinity });
    const app = express();
    app.use(express.json());
    app.use('/agent', handler({ broker }));
    server = await serveExpress(app);
    const agent = await runOfficialClient(`${server.origin}/agent`);
    expect(agent.messages).toEqual(expectedMessages);
  });

  it('should answer 400 naming the cause when middleware consumed the body without leaving req.body (Express and plain node:http)', async () => {
    const app = express();
    app.use((req, _res, next) => {
      req.on('data', () => undefined).on('end', () => next());
    });
    app.post('/agent', handler());
    server = await serveExpress(app);
    const viaExpress = await post(`${server.origin}/agent`, input());
    expect(viaExpress.status).toBe(400);
    expect(JSON.parse(viaExpress.body).error).toBe(
      'The request body was already read before this handler, and nothing left it in req.body (a body parser or middleware consumed it). Remove the body parser from this route, or use one that sets req.body (express.json()).',
    );
    await server.close();

    const plain = handler();
    server = await serveNode(async (req, res) => {
      for await (const _chunk of req) {
        // consumed, and dropped
      }
      plain(req, res);
    });
    const viaNode = await post(`${server.origin}/agent`, input());
    expect(viaNode.status).toBe(400);
    expect(JSON.parse(viaNode.body).error).toMatch(/^The request body was already read before this handler/);
  });

  it('should answer 400 naming the cause when middleware read part of the body', async () => {
    const app = express();
    app.use((req, _res, next) => {
      // A middleware that peeks at the first bytes and passes the request on.
      req.once('readable', () => {
        req.read(10);
        next();
      });
    });
    app.post('/agent', handler());
    server = await serveExpress(app);
    const response = await post(`${server.origin}/agent`, input());
    expect(response.status).toBe(400);
    expect(JSON.parse(response.body).error).toMatch(/^Part of the request body was read before this handler/);
  });

  it('should answer 400 for a Web request whose body was already read', async () => {
    const request = new Request('http://localhost/agent', { method: 'POST', body: JSON.stringify(input()), headers: { 'Content-Type': 'application/json' } });
    await request.text();
    const response = await createAguiFetchHandler(() => of())(request);
    expect(response.status).toBe(400);
    expect((await response.json()).error).toMatch(/^The request body was already read before this handler/);
  });
});

describe('Expect: 100-continue', () => {
  /** Sends raw request head bytes and collects everything the server answers until it closes or `until` holds. */
  function rawExchange(origin: string, head: string, onData: (received: string, socket: ReturnType<typeof connect>) => boolean): Promise<string> {
    const { port } = new URL(origin);
    return new Promise((resolve, reject) => {
      let received = '';
      const socket = connect(Number(port), '127.0.0.1', () => socket.write(head));
      socket.setEncoding('utf8');
      socket.on('data', (chunk: string) => {
        received += chunk;
        if (onData(received, socket)) {
          socket.destroy();
          resolve(received);
        }
      });
      socket.on('error', reject);
      socket.on('close', () => resolve(received));
    });
  }

  async function serveWithCheckContinue(options: AguiHandlerOptions): Promise<void> {
    const handle = createAguiHandler(() => from(SCRIPT), { heartbeatMs: 0, ...options });
    const node: Server = createServer(handle);
    // What the docs tell users to do: the handler answers checkContinue itself.
    node.on('checkContinue', handle);
    await new Promise<void>((resolve) => node.listen(0, '127.0.0.1', resolve));
    server = { origin: `http://127.0.0.1:${(node.address() as AddressInfo).port}`, close: () => new Promise((resolve) => (node.closeAllConnections(), node.close(() => resolve()))) };
  }

  it('should answer 413 for an oversize Content-Length without sending 100 Continue', async () => {
    await serveWithCheckContinue({ maxBodyBytes: 1024 });
    const answer = await rawExchange(server!.origin, 'POST /agent HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100000\r\nExpect: 100-continue\r\n\r\n', (received) => received.includes('\r\n\r\n{'));
    expect(answer).not.toContain('100 Continue');
    expect(answer.startsWith('HTTP/1.1 413 ')).toBe(true);
    expect(answer).toContain('The request body is larger than 1024 bytes');
  });

  it('should send 100 Continue, once, when it wants the body, then stream the run', async () => {
    await serveWithCheckContinue({});
    const body = JSON.stringify(input());
    const answer = await rawExchange(
      server!.origin,
      `POST /agent HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nExpect: 100-continue\r\n\r\n`,
      (received, socket) => {
        if (received.endsWith('100 Continue\r\n\r\n')) socket.write(body);
        return received.includes('RUN_FINISHED');
      },
    );
    expect(answer.match(/100 Continue/g)).toHaveLength(1);
    expect(answer).toMatch(/^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 200 OK\r\n/);
  });

  it('should not send a second 100 Continue when Node sent one (no checkContinue listener)', async () => {
    server = await serveNode(createAguiHandler(() => from(SCRIPT), { heartbeatMs: 0 }));
    const body = JSON.stringify(input());
    const answer = await rawExchange(
      server.origin,
      `POST /agent HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nExpect: 100-continue\r\n\r\n`,
      (received, socket) => {
        if (received.endsWith('100 Continue\r\n\r\n')) socket.write(body);
        return received.includes('RUN_FINISHED');
      },
    );
    expect(answer.match(/100 Continue/g)).toHaveLength(1);
  });
});

describe.each([
  ['node:http', (options: AguiHandlerOptions) => serveNode(createAguiHandler(() => from(SCRIPT).pipe(delay(1)), { heartbeatMs: 0, ...options }))],
  ['the fetch handler served through node', (options: AguiHandlerOptions) => serveFetch(createAguiFetchHandler(() => from(SCRIPT).pipe(delay(1)), { heartbeatMs: 0, ...options }))],
] as const)('request edges over %s', (_name, serve) => {
  it('should accept a JSON body that starts with a UTF-8 byte order mark', async () => {
    server = await serve({});
    const answer = await send(`${server.origin}/agent`, { body: Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(JSON.stringify(input()))]) });
    expect(answer.status).toBe(200);
    expect(framesOf(answer.body).at(-1)?.event.type).toBe(EventType.RUN_FINISHED);
  });

  it('should serve protobuf for the protobuf type with media type parameters', async () => {
    server = await serve({});
    const answer = await post(`${server.origin}/agent`, input(), { Accept: `${PROTO}; charset=utf-8` });
    expect([answer.status, answer.headers['content-type']]).toEqual([200, PROTO]);
    expect(protoEventsOf(answer.raw).at(-1)?.type).toBe(EventType.RUN_FINISHED);
  });

  it.each([
    [`${PROTO};q=0, text/event-stream;q=0`],
    [`text/*;q=0, application/*;q=0`],
    [`text/event-stream;q=0, ${PROTO};q=0, application/json`],
  ])('should answer 406 naming the types it serves when Accept refuses both: %s', async (accept) => {
    server = await serve({});
    const answer = await post(`${server.origin}/agent`, input(), { Accept: accept });
    expect([answer.status, answer.headers['content-type'], JSON.parse(answer.body)]).toEqual([
      406,
      'application/json',
      { error: `The Accept header refuses every type this endpoint streams a run as (text/event-stream, ${PROTO}). Accept one of them.` },
    ]);
  });

  it.each([['application/json'], ['*/*'], [undefined], [`${PROTO};q=0`]])('should still stream SSE for Accept %s', async (accept) => {
    server = await serve({});
    const answer = await post(`${server.origin}/agent`, input(), accept === undefined ? {} : { Accept: accept });
    expect(answer.status).toBe(200);
    expect(answer.headers['content-type']).toBe('text/event-stream');
  });

  // `text/event-stream;q=0` refuses SSE but not protobuf: not every type is refused (no 406), and the one not refused is sent.
  it.each([['text/event-stream;q=0'], ['text/event-stream;q=0, */*']])('should stream protobuf for Accept %s', async (accept) => {
    server = await serve({});
    const answer = await post(`${server.origin}/agent`, input(), { Accept: accept });
    expect(answer.status).toBe(200);
    expect(answer.headers['content-type']).toBe(PROTO);
  });

  it("should answer 406 on the broker's stream routes but not on stop", async () => {
    broker = createRunBroker({ detachGraceMs: Infinity, authorize: () => true });
    server = await serve({ broker, basePath: '/agent' });
    const refused = { Accept: `${PROTO};q=0, text/event-stream;q=0` };
    expect((await post(`${server.origin}/agent`, input(), refused)).status).toBe(406);
    expect((await post(`${server.origin}/agent/connect`, input(), refused)).status).toBe(406);
    expect((await send(`${server.origin}/agent/threads/thread-1/runs/run-1/events`, { method: 'GET', headers: refused })).status).toBe(406);
    // Nothing was started by the refused POST.
    expect((await send(`${server.origin}/agent/threads/thread-1/runs/run-1/stop`, { body: '', headers: refused })).status).toBe(404);
  });
});
