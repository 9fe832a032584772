import { HttpAgent } from '@ag-ui/client';
import { EventType, type Event, type Message, type RunAgentInput } from '@ag-ui/core';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { concat, delay, from, of, throwError } from 'rxjs';
import type { AgentEvent } from '../../lib/protocol/agentEvent.js';
import { createAguiHandler, type AguiAgent, type AguiHandlerOptions } from '../../lib/transports/createAguiHandler.js';
import { createAguiVerifier } from '../../lib/tracking/verifier.js';
import { toAgui } from '../../operators/toAgui.js';
import { sequentialIds, terminals, typesOf } from '../support/helpers.js';
import { runWithOracle } from '../support/oracle.js';

const input = (overrides: Partial<RunAgentInput> = {}): RunAgentInput => ({
  threadId: 'thread-1',
  runId: 'run-1',
  state: {},
  messages: [{ id: 'u1', role: 'user', content: 'Hi' }],
  tools: [],
  context: [],
  forwardedProps: {},
  ...overrides,
});

async function listen(agent: AguiAgent, options: AguiHandlerOptions = {}): Promise<{ server: Server; url: string }> {
  const server = createServer(createAguiHandler(agent, { heartbeatMs: 0, onDiagnostic: () => undefined, ...options }));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/agent` };
}

function close(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}

/** Posts raw bytes (chunked when `chunked`, else with Content-Length) and returns the status and body. */
function post(url: string, body: string | Buffer, { chunked = false }: { chunked?: boolean } = {}): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: 'POST', headers: { 'Content-Type': 'application/json', Accept: 'text/event-stream' } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode!, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    // A server that answers 413 and closes may reset a request still being written.
    req.on('error', (error: NodeJS.ErrnoException) => (error.code === 'EPIPE' || error.code === 'ECONNRESET' ? undefined : reject(error)));
    if (chunked) {
      const buffer = Buffer.from(body);
      for (let offset = 0; offset < buffer.length; offset += 64 * 1024) req.write(buffer.subarray(offset, offset + 64 * 1024));
      req.end();
    } else {
      req.setHeader('Content-Length', Buffer.byteLength(body));
      req.end(body);
    }
  });
}

/** Splits an SSE body into frames; each must be exactly one `data: ` line (no `event:`, no second line). */
function framesOf(body: string): { lines: string[][]; events: Event[] } {
  const raw = body.split('\n\n');
  expect(raw.pop()).toBe('');
  const lines = raw.map((frame) => frame.split(/\r\n|\r|\n/));
  for (const frame of lines) {
    expect(frame).toHaveLength(1);
    expect(frame[0].startsWith('data: ')).toBe(true);
  }
  const events = lines.map(([line]) => JSON.parse(line.slice('data: '.length)) as Event);
  const verifier = createAguiVerifier();
  expect([...events.flatMap((event, index) => verifier.verify(event, index)), ...verifier.end()]).toEqual([]);
  return { lines, events };
}

async function runHttpAgent(url: string, overrides: { initialState?: Record<string, unknown>; forwardedProps?: unknown } = {}) {
  const agent = new HttpAgent({ url, threadId: 'thread-1', initialMessages: input().messages, initialState: overrides.initialState ?? {} });
  const events: Event[] = [];
  const consoleError = console.error;
  console.error = () => undefined;
  try {
    await agent.runAgent({ runId: 'run-1', forwardedProps: overrides.forwardedProps }, { onEvent: ({ event }) => void events.push(event as Event) });
  } finally {
    console.error = consoleError;
  }
  return { agent, events };
}

const INJECTIONS = [
  '\n\ndata: {"type":"RUN_ERROR","message":"injected"}\n\n',
  '\r\n\r\ndata: {"type":"RUN_ERROR","message":"injected"}\r\n\r\n',
  '\r\rdata: {"type":"RUN_ERROR","message":"injected"}\r\r',
  '\u2028\u2029data: {"type":"RUN_ERROR","message":"injected"}\u0085',
  '\n\nevent: error\ndata: {"type":"RUN_FINISHED","threadId":"thread-1","runId":"run-1"}\n\n: comment\n\nretry: 1\nid: 9\n\n',
];
const payload = INJECTIONS.join('|');

describe('hostile input over HTTP (createAguiHandler)', () => {
  let server: Server | undefined;
  afterEach(async () => {
    if (server) await close(server);
    server = undefined;
    delete (Object.prototype as Record<string, unknown>).polluted;
  });

  describe('SSE frame injection', () => {
    const injecting: AguiAgent = () =>
      from<AgentEvent[]>([
        { type: EventType.TEXT_MESSAGE_CHUNK, delta: `text ${payload}` },
        { type: EventType.TOOL_CALL_CHUNK, toolCallId: 'call-1', toolCallName: `tool${payload}`, delta: JSON.stringify({ q: payload }) },
        { type: EventType.TOOL_CALL_RESULT, toolCallId: 'call-1', content: payload },
        { type: EventType.STATE_SNAPSHOT, snapshot: { [payload]: payload, nested: [payload] } },
        { type: EventType.STATE_SNAPSHOT, snapshot: { [payload]: `${payload}!`, nested: [payload, payload] } },
        { type: EventType.CUSTOM, name: payload, value: payload },
      ]).pipe(delay(1));

    it('should send each event as exactly one data line, whatever line breaks its strings hold', async () => {
      let url: string;
      ({ server, url } = await listen(injecting));
      const { status, body } = await post(url, JSON.stringify(input()));
      expect(status).toBe(200);
      const { events } = framesOf(body);
      expect(terminals(events)).toEqual([events[events.length - 1]]);
      expect(events[events.length - 1].type).toBe(EventType.RUN_FINISHED);
      expect(events.filter((event) => (event as { message?: string }).message === 'injected')).toEqual([]);
      // The payload survives intact as data.
      expect(events.find((event) => event.type === EventType.TEXT_MESSAGE_CONTENT)).toMatchObject({ delta: `text ${payload}` });
      expect(events.find((event) => event.type === EventType.CUSTOM)).toMatchObject({ name: payload, value: payload });
    });

    it('should let the official client see only the real events, with the payloads as data', async () => {
      let url: string;
      ({ server, url } = await listen(injecting));
      const { agent, events } = await runHttpAgent(url);
      expect(typesOf(events)[0]).toBe(EventType.RUN_STARTED);
      expect(terminals(events)).toEqual([events[events.length - 1]]);
      expect(events[events.length - 1].type).toBe(EventType.RUN_FINISHED);
      expect(events.some((event) => event.type === EventType.RUN_ERROR)).toBe(false);
      const [, assistant, tool] = agent.messages as Message[];
      expect(assistant).toMatchObject({ role: 'assistant', content: `text ${payload}`, toolCalls: [{ id: 'call-1', function: { name: `tool${payload}`, arguments: JSON.stringify({ q: payload }) } }] });
      expect(tool).toMatchObject({ role: 'tool', toolCallId: 'call-1', content: payload });
      expect(agent.state).toEqual({ [payload]: `${payload}!`, nested: [payload, payload] });
    });
  });

  describe('prototype pollution through patches', () => {
    const forbidden = ['/__proto__/polluted', '/constructor/prototype/polluted', '/a/__proto__/polluted', '/prototype/polluted', '/a/constructor/polluted'];

    it.each(forbidden)('should end the run with RUN_ERROR for a STATE_DELTA through %s, leaving Object.prototype untouched', async (path) => {
      const { events } = await runWithOracle(
        from<AgentEvent[]>([
          { type: EventType.STATE_SNAPSHOT, snapshot: { a: {} } },
          { type: EventType.STATE_DELTA, delta: [{ op: 'add', path, value: 'yes' }] },
        ]).pipe(toAgui({ threadId: 'thread-1', runId: 'run-1', generateId: sequentialIds() })),
      );
      const last = events[events.length - 1] as Event & { message?: string };
      expect(last.type).toBe(EventType.RUN_ERROR);
      expect(last.message).toMatch(/prototype/);
      expect(terminals(events as Event[])).toHaveLength(1);
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
      expect(Object.prototype.hasOwnProperty.call(Object.prototype, 'polluted')).toBe(false);
    });

    it.each(forbidden)('should end the run with RUN_ERROR for an ACTIVITY_DELTA through %s, leaving Object.prototype untouched', async (path) => {
      const { events } = await runWithOracle(
        from<AgentEvent[]>([
          { type: EventType.ACTIVITY_SNAPSHOT, messageId: 'act-1', activityType: 'plan', content: { a: {} } },
          { type: EventType.ACTIVITY_DELTA, messageId: 'act-1', activityType: 'plan', patch: [{ op: 'add', path, value: 'yes' }] } as AgentEvent,
        ]).pipe(toAgui({ threadId: 'thread-1', runId: 'run-1', generateId: sequentialIds() })),
      );
      const last = events[events.length - 1] as Event & { message?: string };
      expect(last.type).toBe(EventType.RUN_ERROR);
      expect(last.message).toMatch(/prototype/);
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    });

    it('should end the run with RUN_ERROR on the wire for a polluting STATE_DELTA sent by an agent behind the handler', async () => {
      let url: string;
      ({ server, url } = await listen(() => of<AgentEvent[]>({ type: EventType.STATE_DELTA, delta: [{ op: 'add', path: '/__proto__/polluted', value: 'yes' }] })));
      const { status, body } = await post(url, JSON.stringify(input()));
      expect(status).toBe(200);
      const { events } = framesOf(body);
      expect(typesOf(events)).toEqual([EventType.RUN_STARTED, EventType.RUN_ERROR]);
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    });

    it('should carry a RunAgentInput.state with __proto__ keys as plain data, without polluting anything', async () => {
      let received: RunAgentInput | undefined;
      let url: string;
      ({ server, url } = await listen((runInput) => {
        received = runInput;
        // The agent changes the state it was given; stateDelta diffs against the posted state.
        return of<AgentEvent[]>({ type: EventType.STATE_SNAPSHOT, snapshot: { ...(runInput.state as object), count: 1 } });
      }));
      const raw = `{"threadId":"thread-1","runId":"run-1","state":{"__proto__":{"polluted":"yes"},"constructor":{"prototype":{"polluted":"yes"}},"count":0},"messages":[],"tools":[],"context":[],"forwardedProps":{"__proto__":{"polluted":"yes"}}}`;
      const { status, body } = await post(url, raw);
      expect(status).toBe(200);
      const { events } = framesOf(body);
      expect(events[events.length - 1].type).toBe(EventType.RUN_FINISHED);
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
      expect(Object.prototype.hasOwnProperty.call(Object.prototype, 'polluted')).toBe(false);
      // JSON.parse made __proto__ an own key: the agent got it as data, not as a prototype.
      expect(Object.getPrototypeOf(received!.state)).toBe(Object.prototype);
      expect(Object.prototype.hasOwnProperty.call(received!.state, '__proto__')).toBe(true);
      const started = events[0] as Event & { input?: RunAgentInput };
      expect(JSON.stringify(started.input?.state)).toBe('{"__proto__":{"polluted":"yes"},"constructor":{"prototype":{"polluted":"yes"}},"count":0}');
      // The state change went out as something the client can apply (no patch through __proto__).
      const change = events.find((event) => event.type === EventType.STATE_DELTA || event.type === EventType.STATE_SNAPSHOT) as Event & { delta?: { path: string }[] };
      expect(change).toBeDefined();
      if (change.type === EventType.STATE_DELTA) expect(change.delta!.every(({ path }) => !/__proto__|constructor|prototype/.test(path))).toBe(true);
    });
  });

  describe('body limit', () => {
    const limit = 4096;
    let parse: jest.SpyInstance;
    beforeEach(() => {
      parse = jest.spyOn(JSON, 'parse');
    });
    afterEach(() => parse.mockRestore());

    it.each([
      ['with Content-Length', false],
      ['chunked, without Content-Length', true],
    ])('should answer 413 to an oversize body (%s) without ever parsing it or calling the agent', async (_label, chunked) => {
      const agent = jest.fn<ReturnType<AguiAgent>, Parameters<AguiAgent>>(() => of<AgentEvent>());
      let url: string;
      ({ server, url } = await listen(agent, { maxBodyBytes: limit }));
      const big = JSON.stringify(input({ forwardedProps: { padding: 'x'.repeat(limit * 64) } }));
      parse.mockClear();
      const { status, body } = await post(url, big, { chunked });
      expect(status).toBe(413);
      expect(JSON.parse(body)).toEqual({ error: expect.stringContaining(`${limit} bytes`) });
      // The only parse is ours, of the small refusal above.
      expect(parse.mock.calls.map(([text]) => text)).toEqual([body]);
      expect(agent).not.toHaveBeenCalled();
    });

    it('should still accept and parse a body of exactly the limit', async () => {
      let url: string;
      ({ server, url } = await listen(() => of<AgentEvent>(), { maxBodyBytes: limit }));
      const base = JSON.stringify(input({ forwardedProps: { padding: '' } }));
      const exact = JSON.stringify(input({ forwardedProps: { padding: 'x'.repeat(limit - base.length) } }));
      expect(Buffer.byteLength(exact)).toBe(limit);
      parse.mockClear();
      const { status } = await post(url, exact);
      expect(status).toBe(200);
      expect(parse.mock.calls.some(([text]) => text === exact)).toBe(true);
    });
  });

  describe('error details on the wire', () => {
    const failing: AguiAgent = () =>
      concat(
        of<AgentEvent[]>({ type: EventType.TEXT_MESSAGE_CHUNK, delta: 'Working…' }),
        throwError(() => new Error('The database is unavailable.')),
      );

    const expectNoDetails = (text: string) => {
      expect(text).not.toMatch(/\n\s*at /);
      expect(text).not.toMatch(/\bat .+:\d+:\d+/);
      expect(text).not.toContain('/work/');
      expect(text).not.toContain(__dirname);
      expect(text).not.toMatch(/\.(ts|js):\d+/);
    };

    it('should send the error message alone: no stack trace, no file paths', async () => {
      let url: string;
      ({ server, url } = await listen(failing));
      const { body } = await post(url, JSON.stringify(input()));
      const { events } = framesOf(body);
      expect(events[events.length - 1]).toEqual({ type: EventType.RUN_ERROR, message: 'The database is unavailable.' });
      expectNoDetails(body);
    });

    it('should send no stack or path for an agent that throws synchronously, nor for a library error', async () => {
      let url: string;
      ({ server, url } = await listen(() => {
        throw new Error('Bad configuration.');
      }));
      const sync = await post(url, JSON.stringify(input()));
      expect(framesOf(sync.body).events.pop()).toEqual({ type: EventType.RUN_ERROR, message: 'Bad configuration.' });
      expectNoDetails(sync.body);
      await close(server!);

      // A malformed known value is the library's error (an unknown event type is dropped, not fatal).
      ({ server, url } = await listen(() => of<AgentEvent[]>({ type: EventType.STEP_STARTED, stepName: 5 } as unknown as AgentEvent)));
      const library = await post(url, JSON.stringify(input()));
      const last = framesOf(library.body).events.pop() as Event & { message: string; code?: string };
      expect(last.type).toBe(EventType.RUN_ERROR);
      expect(last.message).toContain("'stepName'");
      expectNoDetails(library.body);
    });

    it('should send the stack as RUN_ERROR metadata only when the server opts in with exposeErrorStack', async () => {
      let url: string;
      ({ server, url } = await listen(failing, { exposeErrorStack: true }));
      const { body } = await post(url, JSON.stringify(input()));
      const last = framesOf(body).events.pop() as Event & { metadata?: { stack?: string } };
      expect(last).toMatchObject({ type: EventType.RUN_ERROR, message: 'The database is unavailable.' });
      expect(last.metadata?.stack).toMatch(/\n\s*at /);
    });
  });

  describe('RunAgentInput is validated, never evaluated', () => {
    const hostileProps = {
      toString: '() => { throw new Error("evaluated toString") }',
      valueOf: 'function () { process.exit(1) }',
      toJSON: 'boom',
      then: 'function (resolve) { resolve("hijacked") }',
      get: '${process.exit(1)}',
      constructor: { name: 'Function', prototype: 'x' },
      template: '{{constructor.constructor("return process")().exit()}}',
      nested: { __defineGetter__: 'x', hasOwnProperty: 'not a function' },
    };

    it('should pass forwardedProps with code-looking strings and method names through as data', async () => {
      let received: RunAgentInput | undefined;
      let url: string;
      ({ server, url } = await listen((runInput) => {
        received = runInput;
        return of<AgentEvent[]>({ type: EventType.STATE_SNAPSHOT, snapshot: { echoed: runInput.forwardedProps } });
      }));
      const { agent, events } = await runHttpAgent(url, { forwardedProps: hostileProps });
      expect(events[events.length - 1].type).toBe(EventType.RUN_FINISHED);
      expect(received!.forwardedProps).toEqual(hostileProps);
      expect(typeof received!.forwardedProps.toString).toBe('string');
      expect(typeof received!.forwardedProps.then).toBe('string');
      expect((events[0] as Event & { input: RunAgentInput }).input.forwardedProps).toEqual(hostileProps);
      expect(agent.state).toEqual({ echoed: hostileProps });
    });

    it('should treat ids, message content and tool schemas that look like code as plain strings', async () => {
      let received: RunAgentInput | undefined;
      let url: string;
      ({ server, url } = await listen((runInput) => {
        received = runInput;
        return of<AgentEvent[]>({ type: EventType.TEXT_MESSAGE_CHUNK, delta: 'ok' });
      }));
      const hostile = input({
        threadId: '__proto__',
        runId: 'constructor',
        messages: [{ id: 'toString', role: 'user', content: '${process.exit(1)} `rm -rf /` <script>alert(1)</script>' }],
        tools: [{ name: 'valueOf', description: '() => 1', parameters: { $ref: '#/definitions/__proto__', default: { ['__proto__']: 'x' } } }],
        context: [{ description: 'constructor', value: '{"__proto__":{"polluted":true}}' }],
      });
      const { status, body } = await post(url, JSON.stringify(hostile));
      expect(status).toBe(200);
      const { events } = framesOf(body);
      expect(events[0]).toMatchObject({ type: EventType.RUN_STARTED, threadId: '__proto__', runId: 'constructor' });
      expect(events[events.length - 1]).toMatchObject({ type: EventType.RUN_FINISHED, threadId: '__proto__', runId: 'constructor' });
      expect(received).toEqual(JSON.parse(JSON.stringify(hostile)));
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    });

    it('should refuse a field of the wrong type by name with 400, never coercing it', async () => {
      const agent = jest.fn<ReturnType<AguiAgent>, Parameters<AguiAgent>>(() => of<AgentEvent>());
      let url: string;
      ({ server, url } = await listen(agent));
      const coercible = { ...input(), messages: { toString: 'x', length: 1, 0: { id: 'm', role: 'user', content: 'x' } } };
      const { status, body } = await post(url, JSON.stringify(coercible));
      expect(status).toBe(400);
      expect(JSON.parse(body).error).toContain('messages');
      expect(agent).not.toHaveBeenCalled();
    });
  });
});

