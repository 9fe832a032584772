import { EventType, type Event } from '@ag-ui/core';
import { execFile, fork, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { from, of } from 'rxjs';
import { createRunBroker, type RunBroker } from '../../../lib/broker/createRunBroker.js';
import type { AgentEvent } from '../../../lib/protocol/agentEvent.js';
import { createAguiFetchHandler, createAguiHandler, type AguiAgent, type AguiHandlerOptions } from '../../../lib/transports/createAguiHandler.js';
import { pollUntil } from '../../support/helpers.js';
import { runWithOracle } from '../../support/oracle.js';
import { runInput, serveNode, type Loopback } from './brokerHttp.js';

// Issue 14, items 1 and 2, over real loopback HTTP with the client in another process reading as
// fast as it can: a client that reads is never cut, however large the burst; one that stops
// reading is cut after stallTimeoutMs and frees what it held; maxBufferedBytes bounds memory.
// Tens of megabytes cross loopback here: generous timeouts, and nothing asserted about time.
jest.setTimeout(180_000);

/** What readFlatOut.mjs reports about one response. */
interface Read {
  status: number;
  ended: boolean;
  bytes: number;
  frames: number;
  types: Record<string, number>;
  deltaChars: number;
  deltaSha256: string;
  errors: Event[];
  rest: string;
  error?: string;
  events?: Event[];
}

/** Reads one response to its end in a child process, flat out. */
function readFlatOut(method: string, url: string, body = '', mode = ''): Promise<Read> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [join(__dirname, 'readFlatOut.mjs'), method, url, body, mode], { maxBuffer: 256 * 1024 * 1024 }, (error, stdout, stderr) => {
      if (error) return reject(new Error(`readFlatOut failed: ${error.message}\n${stderr}`));
      resolve(JSON.parse(stdout) as Read);
    });
  });
}

/**
 * Serves a fetch handler through node:http the way Node adapters do, honouring backpressure: the
 * body is piped into the response (`pipeline` waits for 'drain'), a body that errors destroys the
 * connection, and a client that goes away cancels the body and aborts `request.signal`.
 */
async function serveFetchPiped(handler: (request: Request) => Promise<Response>): Promise<Loopback> {
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const controller = new AbortController();
    res.on('close', () => {
      if (!res.writableFinished) controller.abort();
    });
    const body = req.method === 'GET' ? undefined : (Readable.toWeb(req) as ReadableStream<Uint8Array>);
    const request = new Request(`http://${req.headers.host}${req.url}`, {
      method: req.method,
      headers: req.headers as Record<string, string>,
      body,
      signal: controller.signal,
      duplex: 'half',
    } as RequestInit);
    void handler(request).then((response) => {
      res.writeHead(response.status, Object.fromEntries(response.headers));
      if (response.body === null) return void res.end();
      pipeline(Readable.fromWeb(response.body as import('node:stream/web').ReadableStream<Uint8Array>), res).catch(() => res.destroy());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close() {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

type Serve = (agent: AguiAgent, options: AguiHandlerOptions) => Promise<Loopback>;
const servers: [string, Serve][] = [
  ['createAguiHandler (node:http)', (agent, options) => serveNode(createAguiHandler(agent, options))],
  ['createAguiFetchHandler (piped into node:http)', (agent, options) => serveFetchPiped(createAguiFetchHandler(agent, options))],
];

/** One text message of `deltas`, as the agent emits it. */
function textMessage(deltas: string[]): AgentEvent[] {
  return [
    { type: EventType.TEXT_MESSAGE_START, messageId: 'm1', role: 'assistant' },
    ...deltas.map((delta): AgentEvent => ({ type: EventType.TEXT_MESSAGE_CONTENT, messageId: 'm1', delta })),
    { type: EventType.TEXT_MESSAGE_END, messageId: 'm1' },
  ];
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const body = (threadId = 't1', runId = 'r1') => JSON.stringify(runInput(threadId, runId));

describe.each(servers)('a client that reads flat out, through %s, with the default limits', (_name, serve) => {
  let server: Loopback | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  // Until issue 17 every delta was its own frame; now the deltas of one message that wait for the
  // socket go as one frame (coalescing), so every delta arrives, in far fewer frames.
  it('should get every delta of a synchronous from(array) of 200k events, in order', async () => {
    const deltas = Array.from({ length: 200_000 }, (_, i) => `word ${i} `);
    server = await serve(() => from(textMessage(deltas)), {});

    const read = await readFlatOut('POST', `${server.origin}/`, body());

    expect(read).toMatchObject({ status: 200, ended: true, rest: '', errors: [] });
    expect(read.types).toEqual({ RUN_STARTED: 1, TEXT_MESSAGE_START: 1, TEXT_MESSAGE_CONTENT: expect.any(Number), TEXT_MESSAGE_END: 1, RUN_FINISHED: 1 });
    expect(read.types.TEXT_MESSAGE_CONTENT).toBeLessThan(200_000);
    expect(read.deltaSha256).toBe(sha256(deltas.join('')));
  });

  it('should get every event of a synchronous from(array) of 200k events with coalesce: false', async () => {
    const deltas = Array.from({ length: 200_000 }, (_, i) => `word ${i} `);
    server = await serve(() => from(textMessage(deltas)), { coalesce: false });

    const read = await readFlatOut('POST', `${server.origin}/`, body());

    expect(read).toMatchObject({ status: 200, ended: true, rest: '', errors: [] });
    expect(read.types).toEqual({ RUN_STARTED: 1, TEXT_MESSAGE_START: 1, TEXT_MESSAGE_CONTENT: 200_000, TEXT_MESSAGE_END: 1, RUN_FINISHED: 1 });
    expect(read.deltaSha256).toBe(sha256(deltas.join('')));
  });

  it('should get a 1 MB delta then a 5 MB delta whole, and the official client builds the message', async () => {
    const deltas = ['a'.repeat(1_000_000), 'é'.repeat(2_500_000)];
    server = await serve(() => from(textMessage(deltas)), {});

    const read = await readFlatOut('POST', `${server.origin}/`, body(), 'events');

    expect(read).toMatchObject({ status: 200, ended: true, rest: '', errors: [] });
    const run = await runWithOracle(from(read.events!), { runId: 'r1' });
    expect(run.messages).toEqual([{ id: 'm1', role: 'assistant', content: deltas.join('') }]);
  });

  it('should get a single 20 MB event whole', async () => {
    const deltas = ['x'.repeat(20 * 1024 * 1024)];
    server = await serve(() => from(textMessage(deltas)), {});

    const read = await readFlatOut('POST', `${server.origin}/`, body());

    expect(read).toMatchObject({ status: 200, ended: true, rest: '', errors: [], deltaChars: deltas[0].length });
    expect(read.types.RUN_FINISHED).toBe(1);
  });
});

describe.each(servers)('maxBufferedBytes, through %s', (_name, serve) => {
  let server: Loopback | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it('should end a run that queues more than maxBufferedBytes at once with RUN_ERROR SEND_BUFFER_FULL, a readable end', async () => {
    const deltas = Array.from({ length: 20_000 }, (_, i) => `${i} `.repeat(100));
    server = await serve(() => from(textMessage(deltas)), { maxBufferedBytes: 256 * 1024 });

    const read = await readFlatOut('POST', `${server.origin}/`, body(), 'events');

    expect(read).toMatchObject({ status: 200, ended: true, rest: '' });
    expect(read.errors).toEqual([
      {
        type: EventType.RUN_ERROR,
        code: 'SEND_BUFFER_FULL',
        message: `The run produced events faster than the connection could send them: more than ${256 * 1024} bytes waited unsent, so the run was stopped. Raise maxBufferedBytes, or have the agent emit less at once.`,
      },
    ]);
    expect(read.events!.at(-1)!.type).toBe(EventType.RUN_ERROR);
    expect(read.types.TEXT_MESSAGE_CONTENT).toBeLessThan(20_000);
    // A stream ended by RUN_ERROR is well-formed: the official client takes it whole.
    const run = await runWithOracle(from(read.events!), { runId: 'r1' });
    expect(run.events.at(-1)).toMatchObject({ type: EventType.RUN_ERROR, code: 'SEND_BUFFER_FULL' });
  });
});

describe.each(servers)('with a run broker, through %s', (_name, serve) => {
  let server: Loopback | undefined;
  let broker: RunBroker | undefined;
  afterEach(async () => {
    await server?.close();
    await broker?.close();
    server = undefined;
    broker = undefined;
  });

  it('should give a fast reader the replay of a finished 20 MB run whole, with the default limits', async () => {
    const deltas = Array.from({ length: 20_000 }, (_, i) => `${i} `.repeat(250));
    broker = createRunBroker({ authorize: () => true });
    server = await serve(() => from(textMessage(deltas)), { broker, basePath: '/agent' });

    const live = await readFlatOut('POST', `${server.origin}/agent`, body('t20', 'r20'));
    const replay = await readFlatOut('GET', `${server.origin}/agent/threads/t20/runs/r20/events`);

    expect(live.bytes).toBeGreaterThan(20 * 1024 * 1024);
    for (const read of [live, replay]) {
      expect(read).toMatchObject({ status: 200, ended: true, rest: '', errors: [] });
      expect(read.types).toEqual({ RUN_STARTED: 1, TEXT_MESSAGE_START: 1, TEXT_MESSAGE_CONTENT: 20_000, TEXT_MESSAGE_END: 1, RUN_FINISHED: 1 });
      expect(read.deltaSha256).toBe(sha256(deltas.join('')));
    }
  });
});

/** The server child's answer to 'stats': its heap after two full GCs, and what it counted. */
interface ServerStats {
  heapUsed: number;
  external: number;
  arrayBuffers: number;
  started: number;
  stopped: number;
  open: number;
  cut: number;
}

describe('readers that stop reading (a server in a child process with --expose-gc)', () => {
  const built = join(__dirname, '../../../dist/cjs/lib/index.js');
  let child: ChildProcess | undefined;
  const sockets: Socket[] = [];

  afterEach(() => {
    for (const socket of sockets.splice(0)) socket.destroy();
    child?.kill();
    child = undefined;
  });

  const stats = (): Promise<ServerStats> =>
    new Promise((resolve) => {
      child!.once('message', (message) => resolve(message as ServerStats));
      child!.send('stats');
    });
  const held = (s: ServerStats) => s.heapUsed + s.arrayBuffers;

  it.each(['node', 'fetch'])('should free what 50 stalled readers held once stallTimeoutMs passes, through the %s handler', async (mode) => {
    if (!existsSync(built)) throw new Error(`The server child runs the built package, and ${built} is missing: run \`npm run build\` first (\`npm test\` does).`);
    child = fork(join(__dirname, 'stalledServer.cjs'), [mode], { execArgv: ['--expose-gc'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    const { port } = await new Promise<{ port: number }>((resolve) => child!.once('message', (message) => resolve(message as { port: number })));
    const before = await stats();

    // Each reader sends its request and never reads a byte, nor closes: as a peer that vanished without FIN.
    const request = body();
    for (let i = 0; i < 50; i++) {
      const socket = connect(port, '127.0.0.1');
      socket.pause();
      socket.on('error', () => undefined);
      socket.write(`POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(request)}\r\n\r\n${request}`);
      sockets.push(socket);
    }
    const peak = await pollUntil(stats, (s) => s.started === 50, { timeoutMs: 60_000, what: '50 runs started' });
    // The server closes every connection itself: the readers, paused, never see it.
    const after = await pollUntil(stats, (s) => s.stopped === 50 && s.open === 0, { timeoutMs: 60_000, what: 'every stalled run stopped and its connection closed by the server' });
    const freed = await pollUntil(stats, (s) => held(s) < held(before) + 16 * 1024 * 1024, { timeoutMs: 10_000, what: 'the heap back near where it was' });

    // The readers held a lot (each run queues ~2 MB more than the kernel takes), and it is gone.
    expect(held(peak) - held(before)).toBeGreaterThan(40 * 1024 * 1024);
    expect(after.stopped).toBe(50);
    // Each cut reported once (SLOW_CLIENT), to the handler's onError.
    expect(after.cut).toBe(50);
    expect(held(freed) - held(before)).toBeLessThan(16 * 1024 * 1024);
  });
});

describe('the handlers’ flow options', () => {
  it.each([
    ['createAguiHandler', createAguiHandler],
    ['createAguiFetchHandler', createAguiFetchHandler],
  ] as const)('%s should throw a RangeError naming a bad maxBufferedBytes or stallTimeoutMs when created', (_name, create) => {
    const agent: AguiAgent = () => from([]);

    expect(() => create(agent, { maxBufferedBytes: -1 })).toThrow(new RangeError("'maxBufferedBytes' must be a number of bytes ≥ 0 (or Infinity), not -1."));
    expect(() => create(agent, { stallTimeoutMs: 0 })).toThrow(new RangeError("'stallTimeoutMs' must be a number of ms > 0 (or Infinity), not 0."));
    expect(() => create(agent, { stallTimeoutMs: Number.NaN })).toThrow(new RangeError("'stallTimeoutMs' must be a number of ms > 0 (or Infinity), not NaN."));
  });

  it.each([
    ['createAguiHandler', createAguiHandler],
    ['createAguiFetchHandler', createAguiFetchHandler],
  ] as const)('%s should throw a RangeError naming any other limit that is NaN, negative or a fraction of an event', (_name, create) => {
    const agent: AguiAgent = () => from([]);
    // NaN is what `Number(process.env.UNSET)` gives: it must not lift a limit or stall runs silently.
    expect(() => create(agent, { maxBodyBytes: Number.NaN })).toThrow(new RangeError("'maxBodyBytes' must be a number of bytes ≥ 0 (or Infinity), not NaN."));
    expect(() => create(agent, { heartbeatMs: -5 })).toThrow(new RangeError("'heartbeatMs' must be a number of ms ≥ 0 (0 or Infinity: no heartbeat), not -5."));
    expect(() => create(agent, { sliceEvents: Number.NaN })).toThrow(new RangeError("'sliceEvents' must be a whole number of events ≥ 1, not NaN."));
    expect(() => create(agent, { sliceEvents: 2.5 })).toThrow(RangeError);
    expect(() => create(agent, { sliceMs: -1 })).toThrow(RangeError);
    expect(() => create(agent, { maxPipelinedRequests: Number.NaN })).toThrow(RangeError);
    expect(() => create(agent, { heartbeatMs: Infinity, maxBodyBytes: Infinity, maxPipelinedRequests: Infinity })).not.toThrow();
  });

  it.each([
    ['createAguiHandler', createAguiHandler],
    ['createAguiFetchHandler', createAguiFetchHandler],
  ] as const)('%s should refuse, when created, an agent that is not a function and a broker that is not one, saying what to pass', (_name, create) => {
    const agent: AguiAgent = () => from([]);
    const invalid = (message: string) => expect.objectContaining({ code: 'INVALID_OPTIONS', message });
    // What JavaScript lets through, and every request would then fail on.
    expect(() => create(of({ type: 'TEXT_MESSAGE_CHUNK', delta: 'x' }) as unknown as AguiAgent)).toThrow(
      invalid("The agent must be a function of the request's RunAgentInput that returns its events, not an object: wrap it, (input) => events$, so that each request runs the agent anew."),
    );
    expect(() => create(undefined as unknown as AguiAgent)).toThrow(invalid("The agent must be a function of the request's RunAgentInput that returns its events, not undefined."));
    expect(() => create(agent, { broker: createRunBroker as unknown as RunBroker })).toThrow(
      invalid("'broker' must be a run broker made by createRunBroker() (with run, events, connect and stop), not a function: call it, broker: createRunBroker({ … })."),
    );
    expect(() => create(agent, { broker: {} as RunBroker })).toThrow(invalid("'broker' must be a run broker made by createRunBroker() (with run, events, connect and stop), not an object."));
    const broker = createRunBroker();
    expect(() => create(agent, { broker })).not.toThrow();
    void broker.close();
  });

  it.each([
    ['createAguiHandler', createAguiHandler],
    ['createAguiFetchHandler', createAguiFetchHandler],
  ] as const)('%s should refuse, when created, hooks that are not functions and a basePath that is no path', (_name, create) => {
    const agent: AguiAgent = () => from([]);
    const invalid = (message: string) => expect.objectContaining({ code: 'INVALID_OPTIONS', message });
    expect(() => create(agent, { context: { userId: 'u1' } as unknown as () => unknown })).toThrow(
      invalid("'context' must be a function of the request, returning what the agent and authorize get as context (may be async), not an object."),
    );
    expect(() => create(agent, { onError: 'log' as unknown as () => void })).toThrow(invalid("'onError' must be a function of the error and its report, not \"log\"."));
    for (const basePath of ['https://example.com/agent', '/agent?x=1', 7 as unknown as string]) {
      expect(() => create(agent, { basePath })).toThrow(expect.objectContaining({ code: 'INVALID_OPTIONS', message: expect.stringMatching(/^'basePath' must be the path the handler is mounted at, such as '\/agent' \(no origin, query or fragment\), not /) }));
    }
    expect(() => create(agent, { basePath: 'agent', context: async () => undefined, onError: () => undefined })).not.toThrow();
  });
});
