import { HttpAgent } from '@ag-ui/client';
import { EventType, type Event, type RunAgentInput, type RunErrorEvent } from '@ag-ui/core';
import express from 'express';
import { IncomingMessage } from 'node:http';
import { concat, delay, from, of, throwError, type Observable } from 'rxjs';
import { createRunBroker, type AuthorizeRequest, type RunBroker } from '../../../lib/broker/createRunBroker.js';
import type { AgentEvent } from '../../../lib/protocol/agentEvent.js';
import { AguiRxError } from '../../../lib/protocol/errors.js';
import { toAgui } from '../../../operators/toAgui.js';
import { createAguiFetchHandler, createAguiHandler, type AguiAgent, type AguiHandlerOptions, type HandlerErrorReport } from '../../../lib/transports/createAguiHandler.js';
import { runWithOracle } from '../../support/oracle.js';
import { SCRIPT, quietly, scriptMessages } from './brokerHarness.js';
import { framesOf, post, send, serveFetch, serveNode, type Loopback } from './brokerHttp.js';

const secret = 'connect ECONNREFUSED 10.0.0.5:5432 (db password=hunter2)';
const input = (overrides: Partial<RunAgentInput> = {}): RunAgentInput => ({
  threadId: 'thread-1',
  runId: 'run-1',
  state: {},
  messages: [{ id: 'u1', role: 'user', content: 'Weather in Oslo?' }],
  tools: [],
  context: [],
  forwardedProps: {},
  ...overrides,
});
/** An agent that says a word, then fails the way a database driver does. */
const failingAgent: AguiAgent = () => concat(of<AgentEvent>({ type: EventType.TEXT_MESSAGE_CHUNK, messageId: 'm1', delta: 'Looking' }), throwError(() => Object.assign(new Error(secret), { code: 'ECONNREFUSED' })).pipe(delay(1)));
const scripted: AguiAgent = () => from(SCRIPT).pipe(delay(1));

function errorSink() {
  const calls: { error: unknown; report: HandlerErrorReport<unknown> }[] = [];
  return { calls, onError: (error: unknown, report: { reference: string }) => void calls.push({ error, report: report as HandlerErrorReport<unknown> }) };
}

const runErrorOf = (body: string) => framesOf(body).find((frame) => frame.event.type === EventType.RUN_ERROR)?.event as RunErrorEvent | undefined;

let server: Loopback | undefined;
let broker: RunBroker | undefined;
afterEach(async () => {
  await server?.close();
  await broker?.close();
  server = undefined;
  broker = undefined;
});

describe.each([
  ['node:http', (agent: AguiAgent, options: AguiHandlerOptions) => serveNode(createAguiHandler(agent, options)), IncomingMessage],
  ['the fetch handler', (agent: AguiAgent, options: AguiHandlerOptions) => serveFetch(createAguiFetchHandler(agent, options)), Request],
] as const)('over %s', (_name, serve, RequestType) => {
  describe('errors logged and redacted', () => {
    it('should send a generic message quoting a reference under redact, and give onError the error, the run and the request', async () => {
      const { calls, onError } = errorSink();
      server = await serve(failingAgent, { heartbeatMs: 0, errorMessages: 'redact', onError });
      const answer = await post(`${server.origin}/agent`, input());
      expect(answer.status).toBe(200);
      expect(answer.body).not.toContain('hunter2');
      expect(answer.body).not.toContain('10.0.0.5');
      const terminal = runErrorOf(answer.body)!;
      expect(terminal.code).toBe('INTERNAL_ERROR');
      expect(calls).toHaveLength(1);
      const [{ error, report }] = calls;
      expect((error as Error).message).toBe(secret);
      expect(report).toMatchObject({ threadId: 'thread-1', runId: 'run-1', input: input() });
      expect(report.request).toBeInstanceOf(RequestType);
      expect(terminal.message).toContain(report.reference);
      // The oracle: the official client takes the stream, and builds what was said before the failure.
      const events = framesOf(answer.body).map((frame) => frame.event);
      const oracle = await quietly(() => runWithOracle(from(events) as Observable<Event>).then(() => undefined, (failure: Error) => failure));
      expect(String(oracle)).not.toContain('hunter2');
    });

    it('should send the message as it is under expose, and for errors marked expose: true or of the toolkit under redact', async () => {
      const { calls, onError } = errorSink();
      const plan = Object.assign(new Error('Your plan allows 10 runs a day.'), { status: 429, expose: true });
      const agents: Record<string, AguiAgent> = { exposed: () => throwError(() => plan), own: () => throwError(() => new AguiRxError('PROVIDER_ERROR', 'The model provider is overloaded.')) };
      server = await serve((runInput, ctx) => agents[runInput.runId]?.(runInput, ctx) ?? failingAgent(runInput, ctx), { heartbeatMs: 0, errorMessages: 'redact', onError });
      expect(runErrorOf((await post(`${server.origin}/agent`, input({ runId: 'exposed' }))).body)?.message).toBe('Your plan allows 10 runs a day.');
      expect(runErrorOf((await post(`${server.origin}/agent`, input({ runId: 'own' }))).body)).toMatchObject({ message: 'The model provider is overloaded.', code: 'PROVIDER_ERROR' });
      await server.close();
      server = await serve(failingAgent, { heartbeatMs: 0, errorMessages: 'expose', onError });
      expect(runErrorOf((await post(`${server.origin}/agent`, input())).body)).toMatchObject({ message: secret, code: 'ECONNREFUSED' });
      expect(calls).toHaveLength(3);
    });

    it('should redact by default in production and log one console.error line when no onError is given', async () => {
      const before = process.env.NODE_ENV;
      const log = jest.spyOn(console, 'error').mockImplementation(() => undefined);
      try {
        process.env.NODE_ENV = 'production';
        server = await serve(failingAgent, { heartbeatMs: 0 });
        process.env.NODE_ENV = before;
        const terminal = runErrorOf((await post(`${server.origin}/agent`, input())).body)!;
        expect(terminal.message).not.toContain('hunter2');
        const lines = log.mock.calls.map((call) => String(call[0])).filter((line) => line.startsWith('[agui-rx]'));
        expect(lines).toHaveLength(1);
        expect(lines[0]).toContain(secret);
        expect(lines[0]).toContain('ECONNREFUSED');
        expect(terminal.message).toContain(lines[0].match(/reference ([\w-]{21})/)![1]);
      } finally {
        process.env.NODE_ENV = before;
        log.mockRestore();
      }
    });

    it("should call the handler's onError, not the inner one, for an agent that runs toAgui itself", async () => {
      const inner = errorSink();
      const outer = errorSink();
      const agent: AguiAgent = (runInput, ctx) => failingAgent(runInput, ctx).pipe(toAgui({ threadId: runInput.threadId, runId: runInput.runId, onError: inner.onError, errorMessages: 'expose' }));
      server = await serve(agent, { heartbeatMs: 0, errorMessages: 'redact', onError: outer.onError });
      const answer = await post(`${server.origin}/agent`, input());
      expect(answer.body).not.toContain('hunter2');
      expect(inner.calls).toHaveLength(0);
      expect(outer.calls).toHaveLength(1);
      expect(runErrorOf(answer.body)?.message).toContain(outer.calls[0].report.reference);
    });

    it('should report a run the transport stopped (SEND_BUFFER_FULL), and not a run that finished', async () => {
      const { calls, onError } = errorSink();
      const flood: AguiAgent = () => from(Array.from({ length: 400 }, () => ({ type: EventType.TEXT_MESSAGE_CHUNK, messageId: 'm1', delta: 'x'.repeat(2048) }) as AgentEvent));
      server = await serve(flood, { heartbeatMs: 0, maxBufferedBytes: 4096, onError });
      const answer = await post(`${server.origin}/agent`, input());
      expect(runErrorOf(answer.body)?.code).toBe('SEND_BUFFER_FULL');
      expect(calls.map((call) => (call.error as AguiRxError).code)).toEqual(['SEND_BUFFER_FULL']);
      expect(calls[0].report).toMatchObject({ runId: 'run-1' });
      await server.close();
      server = await serve(scripted, { heartbeatMs: 0, onError });
      expect((await post(`${server.origin}/agent`, input())).status).toBe(200);
      expect(calls).toHaveLength(1);
    });
  });

  describe('an event that cannot be encoded', () => {
    it('should close what it interrupts before RUN_ERROR INVALID_EVENT, shown under redact, and tell onError once', async () => {
      const { calls, onError } = errorSink();
      const agent: AguiAgent = () =>
        from<AgentEvent[]>([
          { type: EventType.TEXT_MESSAGE_CHUNK, messageId: 'm1', delta: 'Hello' },
          { type: EventType.TOOL_CALL_CHUNK, toolCallId: 'c1', toolCallName: 'lookup', parentMessageId: 'm1', delta: '{}' },
          { type: EventType.CUSTOM, name: 'progress', value: { done: BigInt(1) } },
        ]).pipe(delay(1));
      server = await serve(agent, { heartbeatMs: 0, errorMessages: 'redact', onError });
      const answer = await post(`${server.origin}/agent`, input());
      const events = framesOf(answer.body).map((frame) => frame.event);
      expect(events.map((event) => event.type)).toEqual([
        EventType.RUN_STARTED,
        EventType.TEXT_MESSAGE_START,
        EventType.TEXT_MESSAGE_CONTENT,
        EventType.TOOL_CALL_START,
        EventType.TOOL_CALL_ARGS,
        EventType.TOOL_CALL_END,
        EventType.TEXT_MESSAGE_END,
        EventType.RUN_ERROR,
      ]);
      expect(events.at(-1)).toMatchObject({ code: 'INVALID_EVENT', message: expect.stringContaining('The CUSTOM event cannot be encoded: Do not know how to serialize a BigInt.') });
      expect(calls.map((call) => (call.error as AguiRxError).code)).toEqual(['INVALID_EVENT']);
      const run = await runWithOracle(from(events));
      expect(run.messages).toEqual([...input().messages, { id: 'm1', role: 'assistant', content: 'Hello', toolCalls: [{ id: 'c1', type: 'function', function: { name: 'lookup', arguments: '{}' } }] }]);
    });
  });

  describe('the agent sees the request', () => {
    it('should give the agent the request and what context(request) made of it, and the broker authorize the same', async () => {
      const seen: unknown[] = [];
      const authorized: AuthorizeRequest<{ user: string }>[] = [];
      broker = createRunBroker<{ user: string }>({ detachGraceMs: Infinity, authorize: (request) => (authorized.push(request), request.context.user === 'ada') });
      const agent: AguiAgent<{ user: string }> = (_input, ctx) => {
        seen.push(ctx.context, ctx.request instanceof RequestType);
        return from(SCRIPT).pipe(delay(1));
      };
      const context = async (request: IncomingMessage | Request) => {
        const auth = request instanceof Request ? request.headers.get('authorization') : request.headers.authorization;
        return { user: auth === 'Bearer ada' ? 'ada' : 'bob' };
      };
      server = await serve(agent as AguiAgent, { heartbeatMs: 0, broker, basePath: '/agent', context });
      const started = await post(`${server.origin}/agent`, input(), { Authorization: 'Bearer ada' });
      expect(framesOf(started.body).at(-1)?.event.type).toBe(EventType.RUN_FINISHED);
      expect(seen).toEqual([{ user: 'ada' }, true]);
      const read = await send(`${server.origin}/agent/threads/thread-1/runs/run-1/events`, { method: 'GET', headers: { Authorization: 'Bearer ada' } });
      expect(read.status).toBe(200);
      const refused = await send(`${server.origin}/agent/threads/thread-1/runs/run-1/events`, { method: 'GET', headers: { Authorization: 'Bearer bob' } });
      expect(refused.status).toBe(403);
      expect(authorized.map((request) => [request.action, request.context])).toEqual([
        ['start', { user: 'ada' }],
        ['events', { user: 'ada' }],
        ['events', { user: 'bob' }],
      ]);
    });

    it('should answer the status a throwing context carries (401, 403) with its message, before any stream and without running the agent', async () => {
      let runs = 0;
      const context = () => {
        throw Object.assign(new Error('Sign in first: no session cookie.'), { status: 401, expose: true });
      };
      server = await serve(() => (runs++, from(SCRIPT)), { context });
      const answer = await post(`${server.origin}/agent`, input());
      expect([answer.status, JSON.parse(answer.body)]).toEqual([401, { error: 'Sign in first: no session cookie.' }]);
      await server.close();
      server = await serve(() => (runs++, from(SCRIPT)), { context: () => Promise.reject(Object.assign(new Error('Not your tenant.'), { statusCode: 403 })) });
      const forbidden = await post(`${server.origin}/agent`, input());
      expect([forbidden.status, JSON.parse(forbidden.body)]).toEqual([403, { error: 'Not your tenant.' }]);
      expect(runs).toBe(0);
    });

    it('should answer 500 with a redacted message when context throws anything else, and report it', async () => {
      const { calls, onError } = errorSink();
      server = await serve(scripted, { errorMessages: 'redact', onError, context: () => { throw new Error(secret); } });
      const answer = await post(`${server.origin}/agent`, input());
      expect(answer.status).toBe(500);
      expect(answer.body).not.toContain('hunter2');
      expect(calls).toHaveLength(1);
      expect(JSON.parse(answer.body).error).toContain(calls[0].report.reference);
      // No agent ran: the words are the request's, not a run's.
      expect(JSON.parse(answer.body).error).toMatch(/^The server failed to serve this request\. Its log has the details under reference /);
      expect(calls[0].report.request).toBeInstanceOf(RequestType);
    });
  });

  describe('CORS', () => {
    const cors = { origins: ['https://app.example.com'], credentials: true, exposedHeaders: ['X-Run'] };

    it('should answer a preflight 204 with the Access-Control headers for an allowed origin, and none for another', async () => {
      server = await serve(scripted, { cors });
      const preflight = await send(`${server.origin}/agent`, { method: 'OPTIONS', headers: { Origin: 'https://app.example.com', 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'content-type, last-event-id' } });
      expect(preflight.status).toBe(204);
      expect(preflight.headers).toMatchObject({
        'access-control-allow-origin': 'https://app.example.com',
        'access-control-allow-credentials': 'true',
        'access-control-allow-methods': 'POST',
        'access-control-allow-headers': 'Content-Type, Authorization, Accept, Last-Event-ID',
        'access-control-max-age': '600',
        vary: 'Origin',
      });
      const stranger = await send(`${server.origin}/agent`, { method: 'OPTIONS', headers: { Origin: 'https://evil.example', 'Access-Control-Request-Method': 'POST' } });
      expect(stranger.status).toBe(204);
      expect(Object.keys(stranger.headers).filter((name) => name.startsWith('access-control-'))).toEqual([]);
    });

    it('should put the headers on the stream and on refusals, for the official client', async () => {
      server = await serve(scripted, { cors, heartbeatMs: 0 });
      const agent = new HttpAgent({ url: `${server.origin}/agent`, threadId: 'thread-1', initialMessages: input().messages, headers: { Origin: 'https://app.example.com' } });
      await quietly(() => agent.runAgent({ runId: 'run-1' }));
      expect(agent.messages).toEqual(scriptMessages());
      const answer = await post(`${server.origin}/agent`, input(), { Origin: 'https://app.example.com' });
      expect(answer.headers).toMatchObject({ 'access-control-allow-origin': 'https://app.example.com', 'access-control-expose-headers': 'X-Run' });
      const refused = await post(`${server.origin}/agent`, '{', { Origin: 'https://app.example.com' });
      expect(refused.status).toBe(400);
      expect(refused.headers['access-control-allow-origin']).toBe('https://app.example.com');
    });

    it('should serve preflights on every broker route, with a RegExp, a function or true for origins', async () => {
      broker = createRunBroker({ detachGraceMs: Infinity });
      for (const origins of [/^https:\/\/[a-z]+\.example\.com$/, (origin: string) => Promise.resolve(origin.endsWith('.example.com')), true as const]) {
        server = await serve(scripted, { broker, basePath: '/agent', cors: { origins } });
        for (const path of ['/agent', '/agent/connect', '/agent/threads/t/runs/r/events', '/agent/threads/t/runs/r/stop']) {
          const preflight = await send(`${server.origin}${path}`, { method: 'OPTIONS', headers: { Origin: 'https://app.example.com', 'Access-Control-Request-Method': 'GET' } });
          expect([path, preflight.status, preflight.headers['access-control-allow-origin'], preflight.headers['access-control-allow-methods']]).toEqual([path, 204, 'https://app.example.com', 'GET, POST']);
        }
        await server.close();
        server = undefined;
      }
    });

    it('should leave OPTIONS at 405 without the cors option', async () => {
      server = await serve(scripted, {});
      const answer = await send(`${server.origin}/agent`, { method: 'OPTIONS', headers: { Origin: 'https://app.example.com', 'Access-Control-Request-Method': 'POST' } });
      expect(answer.status).toBe(405);
    });
  });
});

describe('behind express.json(), with context and cors', () => {
  it('should take req.body, give the agent its context, and answer with CORS headers, for the official client', async () => {
    const app = express();
    app.use(express.json());
    const users: unknown[] = [];
    app.post(
      '/agent',
      createAguiHandler<{ user: string }>(
        (_input, ctx) => {
          users.push(ctx.context);
          return from(SCRIPT).pipe(delay(1));
        },
        { heartbeatMs: 0, context: () => ({ user: 'ada' }), cors: { origins: true } },
      ),
    );
    const node = require('node:http') as typeof import('node:http');
    const httpServer = node.createServer(app);
    await new Promise<void>((resolve) => httpServer.listen(0, '127.0.0.1', resolve));
    const origin = `http://127.0.0.1:${(httpServer.address() as import('node:net').AddressInfo).port}`;
    server = { origin, close: () => (httpServer.closeAllConnections(), new Promise((resolve) => httpServer.close(() => resolve()))) };
    const agent = new HttpAgent({ url: `${origin}/agent`, threadId: 'thread-1', initialMessages: input().messages });
    await quietly(() => agent.runAgent({ runId: 'run-1' }));
    expect(agent.messages).toEqual(scriptMessages());
    expect(users).toEqual([{ user: 'ada' }]);
    const answer = await post(`${origin}/agent`, input(), { Origin: 'https://app.example.com' });
    expect(answer.headers['access-control-allow-origin']).toBe('https://app.example.com');
  });
});

describe('a typed context', () => {
  interface Caller {
    userId: string;
  }
  const callerOf = (request: IncomingMessage): Caller => ({ userId: String(request.headers['x-user'] ?? 'anon') });

  it("should give the agent and authorize the Context the handler's context option makes, always there, and require that option", async () => {
    const seen: string[] = [];
    const allowed: string[] = [];
    // No `!` and no cast: with a Context type, ctx.context and authorize's context are that type.
    broker = createRunBroker<Caller>({ detachGraceMs: Infinity, authorize: ({ context, threadId }) => (allowed.push(context.userId), threadId.startsWith(`${context.userId}:`)) });
    const handler = createAguiHandler<Caller>(
      (_input, { context }) => {
        seen.push(context.userId);
        return from(SCRIPT).pipe(delay(1));
      },
      { heartbeatMs: 0, broker, basePath: '/agent', context: callerOf },
    );
    server = await serveNode(handler);
    const started = await post(`${server.origin}/agent`, input({ threadId: 'ada:1' }), { 'X-User': 'ada' });
    expect(framesOf(started.body).at(-1)?.event.type).toBe(EventType.RUN_FINISHED);
    const refused = await send(`${server.origin}/agent/threads/ada:1/runs/run-1/events`, { method: 'GET', headers: { 'X-User': 'bob' } });
    expect(refused.status).toBe(403);
    expect({ seen, allowed }).toEqual({ seen: ['ada'], allowed: ['ada', 'bob'] });

    // A Context type without the context option that makes it is a compile error (the agent would get undefined).
    // @ts-expect-error -- 'context' is missing in the options
    expect(() => createAguiHandler<Caller>(() => from(SCRIPT), { heartbeatMs: 0 })).not.toThrow();
    // @ts-expect-error -- the options are required with a Context type
    expect(() => createAguiFetchHandler<Caller>(() => from(SCRIPT))).not.toThrow();
    // A broker whose authorize reads a Caller needs a handler that makes one: without the context option, a compile error.
    const typedBroker = createRunBroker<Caller>({ authorize: ({ context }) => context.userId === 'ada' });
    // @ts-expect-error -- 'context' is missing in the options (the broker's authorize would read undefined)
    expect(() => createAguiHandler(() => from(SCRIPT), { broker: typedBroker })).not.toThrow();
    // @ts-expect-error -- the same with a handler that names no Context: the broker's Context is not unknown
    expect(() => createAguiHandler<unknown>(() => from(SCRIPT), { broker: typedBroker })).not.toThrow();
    // A broker that reads no context fits a typed handler, and the RunBroker type without an argument holds any broker.
    const untypedBroker = createRunBroker();
    createAguiHandler<Caller>(() => from(SCRIPT), { context: callerOf, broker: untypedBroker });
    const anyBroker: RunBroker = typedBroker;
    await Promise.all([typedBroker.close(), untypedBroker.close(), anyBroker.close()]);
    // Without a Context type, context stays unknown and optional, and the options too.
    createAguiHandler((_input, { context }) => {
      // @ts-expect-error -- 'context' is of type 'unknown'
      void context.userId;
      return from(SCRIPT);
    });
    createRunBroker({
      authorize: ({ context }) => {
        // @ts-expect-error -- 'context' is of type 'unknown'
        return context.userId === 'ada';
      },
    });
  });
});
