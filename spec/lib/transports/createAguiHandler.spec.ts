import { HttpAgent } from '@ag-ui/client';
import { EventType, type RunAgentInput } from '@ag-ui/core';
import { RunAgentInputSchema } from '@ag-ui/core/schemas';
import { createServer, request as httpRequest, type IncomingMessage, type Server } from 'node:http';
import { connect as netConnect, type AddressInfo } from 'node:net';
import { NEVER, Observable, concat, delay, from, of } from 'rxjs';
import type { AgentEvent } from '../../../lib/protocol/agentEvent.js';
import { createAguiFetchHandler, createAguiHandler, type AguiAgent } from '../../../lib/transports/createAguiHandler.js';
import { SCRIPT, scriptMessages } from './brokerHarness.js';

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

/** A small agent: text, a tool call with its result, a state change, more text, paced asynchronously. */
const scripted: AguiAgent = () => from(SCRIPT).pipe(delay(1));

async function listen(handler: Parameters<typeof createServer>[1]): Promise<{ server: Server; url: string }> {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/agent` };
}

function close(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}

/** An official-client agent that asks for protobuf frames instead of SSE. */
class ProtobufHttpAgent extends HttpAgent {
  protected override requestInit(runInput: RunAgentInput): RequestInit {
    const init = super.requestInit(runInput);
    return { ...init, headers: { ...(init.headers as Record<string, string>), Accept: 'application/vnd.ag-ui.event+proto' } };
  }
}

async function runOfficialClient(url: string, Agent: typeof HttpAgent = HttpAgent) {
  const agent = new Agent({ url, threadId: 'thread-1', initialMessages: input().messages, initialState: { count: 0 } });
  const consoleError = console.error;
  console.error = () => undefined;
  try {
    await agent.runAgent({ runId: 'run-1' });
  } finally {
    console.error = consoleError;
  }
  return agent;
}

/** Posts raw bytes and returns the status, headers and body. */
function post(url: string, body: string | Buffer, headers: Record<string, string> = {}, method = 'POST'): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method, headers: { 'Content-Type': 'application/json', ...headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    if (method !== 'GET') req.end(body);
    else req.end();
  });
}

const expectedMessages = scriptMessages();

describe('createAguiHandler (node:http)', () => {
  let server: Server;
  let url: string;
  afterEach(() => close(server));

  it('should serve the official HttpAgent over SSE: messages and state as the agent meant', async () => {
    ({ server, url } = await listen(createAguiHandler(scripted)));
    const agent = await runOfficialClient(url);
    expect(agent.messages).toEqual(expectedMessages);
    expect(agent.state).toEqual({ count: 1, city: 'Oslo' });
  });

  it('should keep the client\'s history intact when the agent reuses its ids (issue 14 item 4): fresh ids, one diagnostic each', async () => {
    const history = [
      { id: 'u1', role: 'user' as const, content: 'Find rxjs' },
      { id: 'a1', role: 'assistant' as const, content: '', toolCalls: [{ id: 'c1', type: 'function' as const, function: { name: 'search', arguments: '{"q":"old"}' } }] },
      { id: 't1', role: 'tool' as const, toolCallId: 'c1', content: '3 hits' },
    ];
    const diagnostics: string[] = [];
    let seen: RunAgentInput | undefined;
    const reusing: AguiAgent = (runInput) => {
      seen = runInput;
      return from<AgentEvent[]>([
        { type: 'TEXT_MESSAGE_CHUNK', messageId: 'u1', delta: 'Searching again' },
        { type: 'ACTIVITY_SNAPSHOT', messageId: 'u1', activityType: 'plan', content: { steps: ['search'] } },
        { type: 'TOOL_CALL_CHUNK', toolCallId: 'c1', toolCallName: 'search', delta: '{"q":"new"}' },
        { type: 'TOOL_CALL_RESULT', toolCallId: 'c1', messageId: 't1', content: '5 hits' },
      ]).pipe(delay(1));
    };
    ({ server, url } = await listen(createAguiHandler(reusing, { onDiagnostic: (diagnostic) => void diagnostics.push(diagnostic.message) })));
    const agent = new HttpAgent({ url, threadId: 'thread-1', initialMessages: structuredClone(history) });
    await agent.runAgent({ runId: 'run-1' });
    expect(seen?.messages).toEqual(history);
    // The result goes right after its call's message, before the activity.
    const [text, result, activity] = agent.messages.slice(3) as { id: string; toolCalls?: { id: string }[] }[];
    const callId = text?.toolCalls?.[0]?.id;
    expect(agent.messages).toEqual([
      ...history,
      { id: text?.id, role: 'assistant', content: 'Searching again', toolCalls: [{ id: callId, type: 'function', function: { name: 'search', arguments: '{"q":"new"}' } }] },
      { id: result?.id, role: 'tool', toolCallId: callId, content: '5 hits' },
      { id: activity?.id, role: 'activity', activityType: 'plan', content: { steps: ['search'] } },
    ]);
    const [textId, resultId, activityId] = [text?.id, result?.id, activity?.id];
    expect(new Set([textId, activityId, resultId, 'u1', 'a1', 't1']).size).toBe(6);
    expect(callId).not.toBe('c1');
    expect(diagnostics).toHaveLength(4);
  });

  it('should validate a request body once per run: the run does not validate the input the handler checked again', async () => {
    ({ server, url } = await listen(createAguiHandler(scripted)));
    const parse = jest.spyOn(RunAgentInputSchema, 'safeParse');
    try {
      const agent = await runOfficialClient(url);
      expect(agent.messages).toEqual(expectedMessages);
      expect(parse).toHaveBeenCalledTimes(1);
    } finally {
      parse.mockRestore();
    }
  });

  it('should serve the official HttpAgent over protobuf when it asks for it', async () => {
    let contentType: string | undefined;
    const handler = createAguiHandler(scripted);
    ({ server, url } = await listen((req, res) => {
      const writeHead = res.writeHead.bind(res) as (status: number, headers?: Record<string, string>) => typeof res;
      res.writeHead = ((status: number, headers?: Record<string, string>) => {
        contentType ??= headers?.['Content-Type'];
        return writeHead(status, headers);
      }) as typeof res.writeHead;
      handler(req, res);
    }));
    const agent = await runOfficialClient(url, ProtobufHttpAgent);
    expect(contentType).toBe('application/vnd.ag-ui.event+proto');
    expect(agent.messages).toEqual(expectedMessages);
    expect(agent.state).toEqual({ count: 1, city: 'Oslo' });
  });

  it('should send the stream headers', async () => {
    ({ server, url } = await listen(createAguiHandler(() => of<AgentEvent[]>({ type: 'TEXT_MESSAGE_CHUNK', delta: 'Hi' }))));
    const response = await post(url, JSON.stringify(input()), { Accept: 'text/event-stream' });
    expect(response.status).toBe(200);
    expect(response.headers).toMatchObject({ 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'x-accel-buffering': 'no' });
    expect(response.body.split('\n\n').filter(Boolean).map((frame) => JSON.parse(frame.replace(/^data: /, '')).type)).toEqual([
      EventType.RUN_STARTED,
      EventType.TEXT_MESSAGE_START,
      EventType.TEXT_MESSAGE_CONTENT,
      EventType.TEXT_MESSAGE_END,
      EventType.RUN_FINISHED,
    ]);
  });

  it('should keep a connection open after the stream unless the client asked to close it (RFC 9112 §9.6)', async () => {
    ({ server, url } = await listen(createAguiHandler(() => of<AgentEvent[]>({ type: 'TEXT_MESSAGE_CHUNK', delta: 'Hi' }))));
    // Longer than the spec may wait: a socket closed before it is one the server closed after the response.
    server.keepAliveTimeout = 120_000;
    const { port } = server.address() as AddressInfo;
    const exchange = (connection: string) =>
      new Promise<{ head: string; closed: boolean }>((resolve, reject) => {
        const body = JSON.stringify(input());
        const socket = netConnect(port, '127.0.0.1', () =>
          socket.write(`POST /agent HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nConnection: ${connection}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`),
        );
        let text = '';
        socket.setEncoding('utf8');
        socket.on('data', (chunk: string) => {
          text += chunk;
          // The chunked body's last chunk: the response is complete; wait a moment for a close that follows it.
          if (text.includes('\r\n0\r\n\r\n')) setTimeout(() => (socket.destroy(), resolve({ head: text.slice(0, text.indexOf('\r\n\r\n')).toLowerCase(), closed: false })), 200);
        });
        socket.on('end', () => resolve({ head: text.slice(0, text.indexOf('\r\n\r\n')).toLowerCase(), closed: true }));
        socket.on('error', reject);
      });

    const closing = await exchange('close');
    const keeping = await exchange('keep-alive');

    expect(closing.head).toContain('connection: close');
    expect(closing.closed).toBe(true);
    expect(keeping.head).toContain('connection: keep-alive');
    expect(keeping.closed).toBe(false);
  });

  it('should unsubscribe the agent, abort its signal and clear the heartbeat when the client disconnects mid-stream', async () => {
    let unsubscribed!: () => void;
    const agentGone = new Promise<void>((resolve) => (unsubscribed = resolve));
    let agentSignal: AbortSignal | undefined;
    const endless: AguiAgent = (_input, { signal }) =>
      new Observable<AgentEvent>((subscriber) => {
        agentSignal = signal;
        subscriber.next({ type: 'TOOL_CALL_CHUNK', toolCallId: 'c1', toolCallName: 'slow', delta: '{"a":' });
        return () => unsubscribed();
      });
    const setTimeoutSpy = jest.spyOn(global, 'setTimeout');
    const clearTimeoutSpy = jest.spyOn(global, 'clearTimeout');
    try {
      ({ server, url } = await listen(createAguiHandler(endless, { heartbeatMs: 10_000 })));
      const controller = new AbortController();
      const response = await fetch(url, { method: 'POST', body: JSON.stringify(input()), headers: { 'Content-Type': 'application/json' }, signal: controller.signal });
      const reader = response.body!.getReader();
      const { value } = await reader.read();
      expect(new TextDecoder().decode(value)).toContain('RUN_STARTED');
      controller.abort();
      await agentGone;
      expect(agentSignal?.aborted).toBe(true);
      // Every heartbeat timer the stream armed was cleared.
      const heartbeats = setTimeoutSpy.mock.results.filter((_result, index) => setTimeoutSpy.mock.calls[index][1] === 10_000).map((result) => result.value);
      expect(heartbeats.length).toBeGreaterThan(0);
      for (const handle of heartbeats) expect(clearTimeoutSpy.mock.calls.some(([cleared]) => cleared === handle)).toBe(true);
    } finally {
      setTimeoutSpy.mockRestore();
      clearTimeoutSpy.mockRestore();
    }
  });

  it('should drop its request listeners once the body is read, and take a late request error without crashing', async () => {
    let request: IncomingMessage | undefined;
    const handler = createAguiHandler(() => NEVER);
    ({ server, url } = await listen((req, res) => {
      request = req;
      handler(req, res);
    }));
    const controller = new AbortController();
    const response = await fetch(url, { method: 'POST', body: JSON.stringify(input()), headers: { 'Content-Type': 'application/json' }, signal: controller.signal });
    const reader = response.body!.getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toContain('RUN_STARTED');
    // What the body's listeners held (the body, the run's callbacks) is not kept while the stream is open.
    expect(request!.listenerCount('data')).toBe(0);
    expect(request!.listenerCount('end')).toBe(0);
    // Without a listener, an 'error' event throws: a reset after the body was read must not crash the server.
    expect(() => request!.emit('error', new Error('read ECONNRESET'))).not.toThrow();
    controller.abort();
    // And it keeps serving.
    const next = new AbortController();
    const again = await fetch(url, { method: 'POST', body: JSON.stringify(input({ runId: 'run-2' })), headers: { 'Content-Type': 'application/json' }, signal: next.signal });
    expect(new TextDecoder().decode((await again.body!.getReader().read()).value)).toContain('RUN_STARTED');
    next.abort();
  });

  it('should refuse bad requests with a reason, and keep serving', async () => {
    ({ server, url } = await listen(createAguiHandler(scripted, { maxBodyBytes: 2048 })));

    const get = await post(url, '', {}, 'GET');
    expect(get.status).toBe(405);
    expect(get.headers.allow).toBe('POST');
    expect(JSON.parse(get.body)).toEqual({ error: 'GET is not supported here: POST a RunAgentInput (the AG-UI HTTP binding).' });

    const empty = await post(url, '');
    expect([empty.status, JSON.parse(empty.body)]).toEqual([400, { error: 'The request body is empty: POST a RunAgentInput as JSON.' }]);

    const notJson = await post(url, '{"threadId": ');
    expect(notJson.status).toBe(400);
    expect(JSON.parse(notJson.body).error).toMatch(/^The request body is not valid JSON: .+\. POST a RunAgentInput as JSON\.$/);

    const noMessages = await post(url, JSON.stringify({ ...input(), messages: 'hello' }));
    expect(noMessages.status).toBe(400);
    expect(JSON.parse(noMessages.body)).toEqual({ error: "The request body is not a valid RunAgentInput: 'messages' must be an array, not \"hello\"." });

    const badMessage = await post(url, JSON.stringify({ ...input(), messages: [{ id: 'u1', role: 'user' }] }));
    expect(badMessage.status).toBe(400);
    expect(JSON.parse(badMessage.body).error).toMatch(/^The request body is not a valid RunAgentInput: 'messages\.0/);

    const declaredTooLarge = await post(url, JSON.stringify({ ...input(), context: [{ description: 'x', value: 'y'.repeat(4096) }] }));
    expect(declaredTooLarge.status).toBe(413);
    expect(JSON.parse(declaredTooLarge.body)).toEqual({ error: 'The request body is larger than 2048 bytes, the limit of this endpoint. Send less history, or raise maxBodyBytes.' });

    const agent = await runOfficialClient(url);
    expect(agent.messages).toEqual(expectedMessages);
  });

  it('should refuse, by field, a RunAgentInput the schema lets through but no run can use', async () => {
    ({ server, url } = await listen(createAguiHandler(scripted)));
    const emptyThread = await post(url, JSON.stringify({ ...input(), threadId: '' }));
    expect([emptyThread.status, JSON.parse(emptyThread.body)]).toEqual([400, { error: "The request body is not a valid RunAgentInput: 'threadId' is empty: it must name the thread." }]);
    // Valid JSON, but no UTF-8 can carry it: the run's events and URLs would name another run.
    const halfPair = await post(url, '{"threadId":"t","runId":"r\\ud800","messages":[],"tools":[],"context":[],"state":{}}');
    expect([halfPair.status, JSON.parse(halfPair.body)]).toEqual([
      400,
      { error: 'The request body is not a valid RunAgentInput: \'runId\' holds half of a UTF-16 surrogate pair ("r\\ud800"), which UTF-8 cannot carry: send ids of whole characters.' },
    ]);
    const deep = '['.repeat(100_000) + ']'.repeat(100_000);
    const nested = await post(url, `{"threadId":"t","runId":"r","messages":[],"tools":[],"context":[],"state":${deep}}`);
    expect(nested.status).toBe(400);
    expect(JSON.parse(nested.body).error).toMatch(/^The request body's 'state' cannot be handled: Maximum call stack size exceeded\. Send it less deeply nested\.$/);
    const agent = await runOfficialClient(url);
    expect(agent.messages).toEqual(expectedMessages);
  });

  it('should end the run with RUN_FINISHED, and keep serving, when the agent\'s teardown throws', async () => {
    const warn = jest.spyOn(console, 'warn').mockImplementation(() => undefined);
    try {
      ({ server, url } = await listen(
        createAguiHandler(
          () =>
            new Observable<AgentEvent>((subscriber) => {
              const timer = setTimeout(() => {
                subscriber.next({ type: 'TEXT_MESSAGE_CHUNK', delta: 'x' });
                subscriber.complete();
              }, 5);
              return () => {
                clearTimeout(timer);
                throw new Error('teardown');
              };
            }),
        ),
      ));
      const response = await post(url, JSON.stringify(input()));
      const types = response.body.split('\n\n').filter(Boolean).map((frame) => JSON.parse(frame.replace(/^data: /, '')).type);
      expect(types).toEqual([EventType.RUN_STARTED, EventType.TEXT_MESSAGE_START, EventType.TEXT_MESSAGE_CONTENT, EventType.TEXT_MESSAGE_END, EventType.RUN_FINISHED]);
      expect(warn).toHaveBeenCalled();
    } finally {
      warn.mockRestore();
    }
  });

  it('should refuse an oversize body sent without Content-Length while reading it, before parsing', async () => {
    let parsed = false;
    const parse = JSON.parse;
    ({ server, url } = await listen(createAguiHandler(scripted, { maxBodyBytes: 1024 })));
    const status = await new Promise<number>((resolve, reject) => {
      const req = httpRequest(url, { method: 'POST', headers: { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' } }, (res) => {
        res.resume();
        resolve(res.statusCode!);
      });
      req.on('error', reject);
      JSON.parse = ((text: string, ...rest: []) => {
        parsed = true;
        return parse(text, ...rest);
      }) as typeof JSON.parse;
      req.write('{"threadId":"' + 'x'.repeat(600));
      req.write('x'.repeat(600));
      req.end('"}');
    }).finally(() => (JSON.parse = parse));
    expect(status).toBe(413);
    expect(parsed).toBe(false);
    const agent = await runOfficialClient(url);
    expect(agent.messages).toEqual(expectedMessages);
  });

  it('should turn an agent that throws on call into RUN_ERROR', async () => {
    ({ server, url } = await listen(
      createAguiHandler(() => {
        throw Object.assign(new Error('No API key configured.'), { code: 'CONFIG' });
      }),
    ));
    const response = await post(url, JSON.stringify(input()));
    const events = response.body.split('\n\n').filter(Boolean).map((frame) => JSON.parse(frame.replace(/^data: /, '')));
    expect(events.map((event) => event.type)).toEqual([EventType.RUN_STARTED, EventType.RUN_ERROR]);
    expect(events[1]).toEqual({ type: EventType.RUN_ERROR, message: 'No API key configured.', code: 'CONFIG' });
  });
});

describe('createAguiFetchHandler (Web Request/Response)', () => {
  const handler = createAguiFetchHandler(scripted, { maxBodyBytes: 2048 });
  const requestFor = (body: BodyInit | null, init: RequestInit = {}) =>
    new Request('http://localhost/agent', { method: 'POST', body, headers: { 'Content-Type': 'application/json' }, ...init });

  async function eventsOf(response: Response) {
    const text = await response.text();
    return text.split('\n\n').filter((frame) => frame.startsWith('data: ')).map((frame) => JSON.parse(frame.slice(6)));
  }

  it('should stream the run as SSE with the stream headers', async () => {
    const response = await handler(requestFor(JSON.stringify(input())));
    expect(response.status).toBe(200);
    expect(Object.fromEntries(response.headers)).toEqual({ 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'x-accel-buffering': 'no' });
    const events = await eventsOf(response);
    expect(events[0]).toMatchObject({ type: EventType.RUN_STARTED, threadId: 'thread-1', runId: 'run-1' });
    expect(events[events.length - 1]).toMatchObject({ type: EventType.RUN_FINISHED, threadId: 'thread-1', runId: 'run-1' });
  });

  it('should refuse a GET, a bad body and an oversize one', async () => {
    const get = await handler(new Request('http://localhost/agent'));
    expect([get.status, get.headers.get('allow'), await get.json()]).toEqual([405, 'POST', { error: 'GET is not supported here: POST a RunAgentInput (the AG-UI HTTP binding).' }]);
    const bad = await handler(requestFor(JSON.stringify({ ...input(), threadId: 7 })));
    expect([bad.status, await bad.json()]).toEqual([400, { error: "The request body is not a valid RunAgentInput: 'threadId' must be a string, not number 7." }]);
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        controller.enqueue(new TextEncoder().encode('x'.repeat(1000)));
      },
    });
    const large = await handler(requestFor(stream, { duplex: 'half' } as RequestInit));
    expect(large.status).toBe(413);
  });

  it('should answer 400, not reject, when the body stream fails or the client goes away while sending it', async () => {
    const failing = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode('{"threadId":'));
        controller.error(new Error('client went away'));
      },
    });
    const failed = await handler(requestFor(failing, { duplex: 'half' } as RequestInit));
    expect([failed.status, await failed.json()]).toEqual([400, { error: 'The request body could not be read: client went away.' }]);

    const controller = new AbortController();
    const open = new ReadableStream<Uint8Array>({ start: (c) => c.enqueue(new TextEncoder().encode('{')) });
    const pending = handler(requestFor(open, { duplex: 'half', signal: controller.signal } as RequestInit));
    controller.abort();
    const aborted = await pending;
    expect(aborted.status).toBe(400);
    expect((await aborted.json()).error).toMatch(/^The request body could not be read: the client went away/);
  });

  it('should unsubscribe the agent and abort its signal when the response is cancelled', async () => {
    let tornDown = false;
    let agentSignal: AbortSignal | undefined;
    const endless = createAguiFetchHandler((_input, { signal }) =>
      concat(
        of<AgentEvent[]>({ type: 'TEXT_MESSAGE_CHUNK', delta: 'Hi' }),
        new Observable<AgentEvent>(() => {
          agentSignal = signal;
          return () => (tornDown = true);
        }),
      ),
    );
    const response = await endless(requestFor(JSON.stringify(input())));
    const reader = response.body!.getReader();
    await reader.read();
    await reader.cancel();
    expect(tornDown).toBe(true);
    expect(agentSignal?.aborted).toBe(true);
  });

  it('should stop the agent when request.signal aborts', async () => {
    let tornDown = false;
    const controller = new AbortController();
    const endless = createAguiFetchHandler(() => new Observable<AgentEvent>(() => () => (tornDown = true)));
    const response = await endless(requestFor(JSON.stringify(input()), { signal: controller.signal }));
    const reader = response.body!.getReader();
    await reader.read();
    controller.abort();
    expect(tornDown).toBe(true);
    await reader.cancel();
  });
});
