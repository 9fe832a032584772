import { EventType, type Event } from '@ag-ui/core';
import { decode } from '@ag-ui/proto';
import { EventEmitter } from 'node:events';
import { Agent as HttpAgentPool, createServer, get as httpGet, type IncomingHttpHeaders, type RequestListener, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { NEVER, Subject, concat, defer, finalize, from, of, throwError, type Observable } from 'rxjs';
import { sendSSE, type SendSSEOptions } from '../../../lib/transports/sendSSE.js';
import type { AgentEvent } from '../../../lib/protocol/agentEvent.js';
import { toAgui } from '../../../operators/toAgui.js';
import { runWithOracle } from '../../support/oracle.js';

const PROTO = 'application/vnd.ag-ui.event+proto';

const S: Event = { type: EventType.RUN_STARTED, threadId: 't1', runId: 'r1' };
const F: Event = { type: EventType.RUN_FINISHED, threadId: 't1', runId: 'r1' };
const text = (delta: string): Event => ({ type: EventType.TEXT_MESSAGE_CONTENT, messageId: 'm1', delta });
const runError = (message: string, code?: string): Event => ({ type: EventType.RUN_ERROR, message, ...(code === undefined ? {} : { code }) });
const sendBufferFull = (maxBufferedBytes: number) =>
  runError(
    `The run produced events faster than the connection could send them: more than ${maxBufferedBytes} bytes waited unsent, so the run was stopped. Raise maxBufferedBytes, or have the agent emit less at once.`,
    'SEND_BUFFER_FULL',
  );

const frame = (event: Event) => `data: ${JSON.stringify(event)}\n\n`;
const bytes = (event: Event) => Buffer.byteLength(frame(event));
const PING = ': ping\n\n';

/** Exactly the headers sendSSE sends for SSE. */
const sseHeaders = { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache', 'X-Accel-Buffering': 'no' };

/**
 * A stand-in for `http.ServerResponse` that records what is written and applies backpressure on
 * demand: while `accepting` is false, `write()` returns false, as Node's does when its buffer is full.
 */
// The real one, taken before any spec fakes timers: the fake socket's cork is not one of the stream's timers.
const uncorkAtTickEnd = process.nextTick;

class FakeResponse extends EventEmitter {
  statusCode: number | undefined;
  headers: Record<string, string> | undefined;
  headersSent = false;
  headersFlushed = false;
  destroyed = false;
  writableEnded = false;
  /** What `write()` returns: false asks the writer to wait for 'drain'. */
  accepting = true;
  readonly chunks: (string | Uint8Array)[] = [];
  /** As Node's: a write corks the socket, and `res.write` uncorks it in a `process.nextTick`. */
  writableCorked = 0;

  writeHead(statusCode: number, headers: Record<string, string>): this {
    this.statusCode = statusCode;
    this.headers = headers;
    this.headersSent = true;
    return this;
  }

  flushHeaders(): void {
    this.headersFlushed = true;
  }

  write(chunk: string | Uint8Array): boolean {
    // Node reports a write after end as an error; here it fails the spec.
    if (this.writableEnded) throw new Error('write after end');
    this.chunks.push(chunk);
    if (this.writableCorked === 0) {
      this.writableCorked = 1;
      uncorkAtTickEnd(() => (this.writableCorked = 0));
    }
    return this.accepting;
  }

  end(): this {
    this.writableEnded = true;
    return this;
  }

  /** The client read what was buffered: 'drain' fires, and `write()` returns `accepting` from now on. */
  drain(accepting = true): void {
    this.accepting = accepting;
    this.emit('drain');
  }

  /** What sendSSE does to a stalled client: the socket is destroyed, and 'close' follows. */
  destroy(): this {
    this.disconnect();
    return this;
  }

  /** The client went away. */
  disconnect(): void {
    this.destroyed = true;
    this.emit('close');
  }

  /** Everything written, as text. */
  text(): string {
    // Decoded as a whole: a piece of a large frame may end inside a character.
    return Buffer.concat(this.chunks.map((chunk) => (typeof chunk === 'string' ? Buffer.from(chunk) : chunk))).toString('utf8');
  }

  get res(): ServerResponse {
    return this as unknown as ServerResponse;
  }
}

/**
 * The SSE frames written, whatever writes they came in: frames after the first of a tick share one
 * write (issue 17), so the frame, not the write, is the unit the specs read.
 */
function framesOf(fake: FakeResponse): string[] {
  return fake.chunks.flatMap((chunk) => {
    expect(typeof chunk === 'string' && chunk.endsWith('\n\n')).toBe(true);
    return (chunk as string).split(/(?<=\n\n)/);
  });
}

/** What each frame written carries: its event, or PING for the heartbeat (so key order does not matter). */
function written(fake: FakeResponse): unknown[] {
  return framesOf(fake).map((chunk) => {
    if (chunk === PING) return PING;
    expect(/^data: [^\n]*\n\n$/.test(chunk)).toBe(true);
    return JSON.parse(chunk.slice('data: '.length));
  });
}

/** `events$` with a flag that says whether it was unsubscribed (or ended). */
function watched(events$: Observable<Event>): { events$: Observable<Event>; finalized: () => boolean } {
  let done = false;
  return { events$: events$.pipe(finalize(() => (done = true))), finalized: () => done };
}

/** The events of a length-prefixed protobuf body (4-byte big-endian length, then the message). */
function decodeProtoBody(body: Uint8Array): unknown[] {
  const events: unknown[] = [];
  let offset = 0;
  while (offset < body.byteLength) {
    const length = new DataView(body.buffer, body.byteOffset + offset, 4).getUint32(0, false);
    events.push(decode(body.subarray(offset + 4, offset + 4 + length)));
    offset += 4 + length;
  }
  expect(offset).toBe(body.byteLength);
  return events;
}

/** The events in SSE text: each frame must be one `data:` line. */
function sseEvents(body: string): unknown[] {
  expect(body.endsWith('\n\n')).toBe(true);
  return body
    .slice(0, -2)
    .split('\n\n')
    .map((block) => {
      expect(block.startsWith('data: ')).toBe(true);
      expect(block).not.toContain('\n');
      return JSON.parse(block.slice('data: '.length));
    });
}

async function listen(handler: RequestListener): Promise<{ server: Server; url: string }> {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/agent` };
}

function close(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}

/** GETs `url` without a pooled connection; resolves with the status, headers and whole body. */
function getAll(url: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: IncomingHttpHeaders; rawHeaders: string[]; body: Buffer }> {
  return new Promise((resolve, reject) => {
    httpGet(url, { agent: false, headers }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve({ status: response.statusCode!, headers: response.headers, rawHeaders: response.rawHeaders, body: Buffer.concat(chunks) }));
      response.on('error', reject);
    }).on('error', reject);
  });
}

/** A promise and the function that resolves it. */
function signal(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((done) => (resolve = done));
  return { promise, resolve };
}

afterEach(() => {
  jest.useRealTimers();
});

describe('sendSSE', () => {
  describe('over node:http', () => {
    let server: Server | undefined;

    afterEach(async () => {
      if (server) await close(server);
      server = undefined;
    });

    it('should answer 200 with exactly the three event-stream headers and one frame per event', async () => {
      let url: string;
      ({ server, url } = await listen((_req, res) => void sendSSE(res, of(S, text('a\nb'), F))));

      const response = await getAll(url);

      expect(response.status).toBe(200);
      const pairs = response.rawHeaders.flatMap((value, index, all) => (index % 2 === 0 ? [[value, all[index + 1]]] : []));
      // Date, Transfer-Encoding and Connection are node:http's own (Connection from the request).
      expect(pairs.filter(([name]) => name !== 'Date' && name !== 'Transfer-Encoding' && name !== 'Connection')).toEqual(Object.entries(sseHeaders));
      expect(response.headers['transfer-encoding']).toBe('chunked');
      expect(response.body.toString('utf8')).toBe(frame(S) + frame(text('a\nb')) + frame(F));
    });

    it("should send a tick's frames in one socket write, a lone frame in one of its own, and leave a kept-alive socket uncorked for the next response", async () => {
      const events$ = new Subject<Event>();
      let writes = 0;
      let socket: Socket | undefined;
      let served = 0;
      let url: string;
      ({ server, url } = await listen((_req, res) => {
        served++;
        if (served === 2) return void sendSSE(res, of(S, F), { heartbeatMs: 0 });
        socket = res.socket as Socket;
        // Counted where the socket hands its (corked) chunks to the kernel: one call per write.
        const own = socket as unknown as { _write: (...args: unknown[]) => void; _writev: (...args: unknown[]) => void };
        const write = own._write;
        const writev = own._writev;
        own._write = (...args) => (writes++, write.apply(socket, args));
        own._writev = (...args) => (writes++, writev.apply(socket, args));
        sendSSE(res, events$, { heartbeatMs: 0 });
      }));
      const pool = new HttpAgentPool({ keepAlive: true, maxSockets: 1 });
      let body = '';
      let arrived: (() => void) | undefined;
      const until = (text: string) => new Promise<void>((resolve) => (body.includes(text) ? resolve() : (arrived = () => body.includes(text) && resolve())));
      const first = new Promise<void>((resolve, reject) => {
        httpGet(url, { agent: pool }, (response) => {
          response.setEncoding('utf8');
          response.on('data', (chunk: string) => ((body += chunk), arrived?.()));
          response.on('end', resolve);
        }).on('error', reject);
      });
      await new Promise<void>((resolve) => server!.once('request', () => setImmediate(resolve)));
      // The headers went at the end of the request's tick (no frame came in it): counted from here.
      expect(writes).toBe(1);
      writes = 0;

      const end: Event = { type: EventType.TEXT_MESSAGE_END, messageId: 'm1' };
      events$.next(S);
      events$.next(text('a'));
      events$.next(text('b'));
      events$.next(end);
      await until(frame(end));
      const afterFirstTick = writes;
      events$.next(text('c'));
      await until(frame(text('c')));
      const afterLoneFrame = writes;
      events$.next(text('d'));
      events$.next(F);
      events$.complete();
      await first;

      expect(afterFirstTick).toBe(1);
      expect(afterLoneFrame).toBe(2);
      expect(sseEvents(body)).toEqual([S, text('ab'), end, text('c'), text('d'), F]);
      expect(socket!.writableCorked).toBe(0);
      // The same connection serves the next response: no cork was left on it.
      const second = await new Promise<string>((resolve, reject) => {
        httpGet(url, { agent: pool }, (response) => {
          let text = '';
          response.setEncoding('utf8');
          response.on('data', (chunk: string) => (text += chunk));
          response.on('end', () => resolve(text));
        }).on('error', reject);
      });
      pool.destroy();
      expect(served).toBe(2);
      expect(sseEvents(second)).toEqual([S, F]);
    });

    it('should stream events that arrive later, readable with fetch', async () => {
      let url: string;
      ({ server, url } = await listen((_req, res) => void sendSSE(res, concat(of(S), defer(() => Promise.resolve(text('later'))), of(F)))));

      const response = await fetch(url);

      expect(response.headers.get('content-type')).toBe('text/event-stream');
      expect(sseEvents(await response.text())).toEqual([S, text('later'), F]);
    });

    it('should send protobuf frames with the protobuf media type when Accept asks for them', async () => {
      let url: string;
      ({ server, url } = await listen((req, res) => void sendSSE(res, of(S, text('hi'), F), { accept: req.headers.accept })));

      const response = await getAll(url, { Accept: PROTO });

      expect(response.headers['content-type']).toBe(PROTO);
      expect(decodeProtoBody(new Uint8Array(response.body))).toEqual([S, text('hi'), F]);
    });

    it('should send SSE to Accept: */*', async () => {
      let url: string;
      ({ server, url } = await listen((req, res) => void sendSSE(res, of(S, F), { accept: req.headers.accept })));

      const response = await getAll(url, { Accept: '*/*' });

      expect(response.headers['content-type']).toBe('text/event-stream');
      expect(sseEvents(response.body.toString('utf8'))).toEqual([S, F]);
    });

    it('should send the headers while the agent has sent nothing yet, so that the client sees the stream start', async () => {
      let url: string;
      ({ server, url } = await listen((_req, res) => void sendSSE(res, NEVER, { heartbeatMs: 0 })));
      const abort = new AbortController();

      // fetch resolves on the status line and headers; no event ever comes.
      const response = await fetch(url, { signal: abort.signal });
      abort.abort();

      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe('text/event-stream');
    });

    it('should unsubscribe events$ when the client disconnects mid-stream', async () => {
      const unsubscribed = signal();
      let url: string;
      ({ server, url } = await listen((_req, res) => void sendSSE(res, concat(of(S), NEVER).pipe(finalize(unsubscribed.resolve)))));
      const abort = new AbortController();

      const response = await fetch(url, { signal: abort.signal });
      const reader = response.body!.getReader();
      const first = await reader.read();
      abort.abort();
      await reader.read().catch(() => undefined);

      expect(new TextDecoder().decode(first.value)).toBe(frame(S));
      await unsubscribed.promise;
    });

    it('should unsubscribe events$ at once when the client left before sendSSE was called', async () => {
      const arrived = signal();
      const unsubscribed = signal();
      let subscribed = false;
      let url: string;
      ({ server, url } = await listen((_req, res) => {
        arrived.resolve();
        // The handler was still busy (reading the body, say) when the client left.
        res.once('close', () => {
          const events$ = defer(() => {
            subscribed = true;
            return NEVER;
          }).pipe(finalize(unsubscribed.resolve));
          sendSSE(res, events$);
        });
      }));
      const abort = new AbortController();

      const request = fetch(url, { method: 'POST', body: '{}', signal: abort.signal }).catch((error: Error) => error.name);
      await arrived.promise;
      abort.abort();

      expect(await request).toBe('AbortError');
      await unsubscribed.promise;
      expect(subscribed).toBe(true);
    });
  });

  describe('with a fake ServerResponse', () => {
    it('should send status 200 and exactly the three headers, flushed at the end of the tick when no event came in it', async () => {
      const fake = new FakeResponse();

      const subscription = sendSSE(fake.res, NEVER, { heartbeatMs: 0 });

      expect(fake.statusCode).toBe(200);
      expect(fake.headers).toStrictEqual(sseHeaders);
      // Not yet: a frame in this tick would carry them.
      expect(fake.headersFlushed).toBe(false);
      await Promise.resolve();
      expect(fake.headersFlushed).toBe(true);
      expect(fake.chunks).toEqual([]);
      subscription.unsubscribe();
    });

    it('should send the headers with the first frame when it comes in the same tick, not flushed on their own', async () => {
      const fake = new FakeResponse();

      const subscription = sendSSE(fake.res, concat(of(S), NEVER), { heartbeatMs: 0 });
      await Promise.resolve();

      expect(fake.headers).toStrictEqual(sseHeaders);
      expect(fake.headersFlushed).toBe(false);
      expect(fake.chunks).toEqual([`data: ${JSON.stringify(S)}\n\n`]);
      subscription.unsubscribe();
    });

    it('should send the protobuf media type and protobuf frames when accept asks for them', () => {
      jest.useFakeTimers();
      const fake = new FakeResponse();

      sendSSE(fake.res, concat(of(S, text('hi')), NEVER), { accept: PROTO, heartbeatMs: 1000 });
      // The tick ends: what followed its first frame goes out.
      jest.runAllTicks();

      expect(fake.headers).toStrictEqual({ ...sseHeaders, 'Content-Type': PROTO });
      expect(fake.chunks.every((chunk) => chunk instanceof Uint8Array)).toBe(true);
      expect(decodeProtoBody(Buffer.concat(fake.chunks as Uint8Array[]))).toEqual([S, text('hi')]);
      // Protobuf has no comment frame, so no heartbeat.
      expect(jest.getTimerCount()).toBe(0);
      fake.disconnect();
    });

    // Until issue 17 each frame was its own write; now the frames after a tick's first share one.
    it("should write the tick's first frame at once, the frames after it in one write, and end when events$ completes", () => {
      const fake = new FakeResponse();

      sendSSE(fake.res, of(S, text('hi'), F));

      expect(fake.chunks).toEqual([frame(S), frame(text('hi')) + frame(F)]);
      expect(fake.writableEnded).toBe(true);
    });

    it('should send `: ping` after heartbeatMs of silence and none while events flow', () => {
      jest.useFakeTimers();
      const fake = new FakeResponse();
      const events$ = new Subject<Event>();

      sendSSE(fake.res, events$, { heartbeatMs: 1000 });
      events$.next(S);
      jest.advanceTimersByTime(999);
      events$.next(text('a'));
      jest.advanceTimersByTime(999);
      events$.next(text('b'));
      jest.advanceTimersByTime(1000);
      events$.next(F);
      events$.complete();

      expect(framesOf(fake)).toEqual([frame(S), frame(text('a')), frame(text('b')), PING, frame(F)]);
      // No heartbeat timer is left (a tick's end is no timer).
      jest.runAllTicks();
      expect(jest.getTimerCount()).toBe(0);
    });

    it('should queue frames while write() returns false and write them in order on drain', () => {
      jest.useFakeTimers();
      const fake = new FakeResponse();
      const events$ = new Subject<Event>();
      fake.accepting = false;

      sendSSE(fake.res, events$, { heartbeatMs: 0, coalesce: false });
      events$.next(S);
      events$.next(text('a'));
      events$.next(text('b'));
      const beforeDrain = [...fake.chunks];
      fake.drain();
      events$.next(text('c'));

      // c came in the tick of the drain, after its first frame: it goes at the tick's end.
      jest.runAllTicks();

      expect(beforeDrain).toEqual([frame(S)]);
      expect(fake.chunks).toEqual([frame(S), frame(text('a')), frame(text('b')), frame(text('c'))]);
    });

    it('should send the deltas of one message that waited for a drain, over several ticks, as one frame once the socket drains', () => {
      jest.useFakeTimers();
      const fake = new FakeResponse();
      const events$ = new Subject<Event>();
      fake.accepting = false;

      sendSSE(fake.res, events$, { heartbeatMs: 0 });
      events$.next(S);
      jest.runAllTicks();
      events$.next(text('a'));
      jest.runAllTicks();
      events$.next(text('b'));
      jest.runAllTicks();
      const beforeDrain = [...fake.chunks];
      fake.drain();

      expect(beforeDrain).toEqual([frame(S)]);
      expect(fake.chunks).toEqual([frame(S), frame(text('ab'))]);
    });

    it('should wait for the next drain when a write during the flush returns false', () => {
      const fake = new FakeResponse();
      const events$ = new Subject<Event>();
      fake.accepting = false;

      sendSSE(fake.res, events$, { heartbeatMs: 0, coalesce: false });
      events$.next(S);
      events$.next(text('a'));
      events$.next(text('b'));
      fake.drain(false);
      const afterFirstDrain = [...fake.chunks];
      events$.next(text('c'));
      fake.drain();

      expect(afterFirstDrain).toEqual([frame(S), frame(text('a'))]);
      expect(fake.chunks).toEqual([frame(S), frame(text('a')), frame(text('b')), frame(text('c'))]);
    });

    it('should write a long queue in order and whole over many partial drains (the queue is compacted as it goes)', () => {
      const fake = new FakeResponse();
      // Like a socket: every 500th write fills the buffer, and the writer must wait for the next drain.
      let writes = 0;
      const write = fake.write.bind(fake);
      fake.write = (chunk) => write(chunk) && ++writes % 500 !== 0;
      const events = [S, ...Array.from({ length: 20_000 }, (_, i) => text(`w${i}`)), F];
      fake.accepting = false;

      sendSSE(fake.res, from(events), { heartbeatMs: 0, maxBufferedBytes: Infinity, coalesce: false });
      fake.accepting = true;
      let drains = 0;
      while (!fake.writableEnded && drains++ < 1000) fake.drain();

      expect(drains).toBeGreaterThan(30);
      expect(fake.chunks).toEqual(events.map(frame));
      expect(fake.writableEnded).toBe(true);
    });

    it('should end the response only after the waiting frames are written', () => {
      const fake = new FakeResponse();
      fake.accepting = false;

      sendSSE(fake.res, of(S, text('a'), F));
      const endedBeforeDrain = fake.writableEnded;
      fake.drain();

      expect(endedBeforeDrain).toBe(false);
      expect(fake.chunks).toEqual([frame(S), frame(text('a')), frame(F)]);
      expect(fake.writableEnded).toBe(true);
    });

    // The rule until issue 14 was: more than maxBufferedBytes queued at once (4 MiB by default) is a
    // slow client, SLOW_CLIENT. Now a burst a client drains is never cut: SLOW_CLIENT is a stall in
    // time (stallTimeoutMs), and maxBufferedBytes (64 MiB by default) a separate bound on memory,
    // SEND_BUFFER_FULL, whose RUN_ERROR replaces the frame that did not fit.
    it('should stop events$ and queue a SEND_BUFFER_FULL RUN_ERROR after the waiting frames, instead of the frame that does not fit, when more than maxBufferedBytes would wait', () => {
      const fake = new FakeResponse();
      const source$ = new Subject<Event>();
      const { events$, finalized } = watched(source$);
      fake.accepting = false;
      // Room for exactly the second and third frames; the fourth does not fit.
      const maxBufferedBytes = bytes(text('a')) + bytes(text('b'));

      sendSSE(fake.res, events$, { heartbeatMs: 0, maxBufferedBytes, coalesce: false });
      source$.next(S);
      source$.next(text('a'));
      source$.next(text('b'));
      const stoppedAtTheBound = finalized();
      source$.next(text('c'));

      expect(stoppedAtTheBound).toBe(false);
      expect(finalized()).toBe(true);
      expect(source$.observed).toBe(false);
      expect(fake.writableEnded).toBe(false);

      fake.drain();

      expect(written(fake)).toEqual([S, text('a'), text('b'), sendBufferFull(maxBufferedBytes)]);
      expect(fake.writableEnded).toBe(true);
    });

    it('should never take the terminal event itself for an overflow', () => {
      const fake = new FakeResponse();
      const finished: Event = { ...F, result: 'x'.repeat(1000) };
      fake.accepting = false;

      sendSSE(fake.res, of(S, text('a'), finished), { maxBufferedBytes: 10 });
      fake.drain();

      expect(fake.chunks).toEqual([frame(S), frame(text('a')), frame(finished)]);
      expect(fake.writableEnded).toBe(true);
    });

    it('should never take a terminal RUN_ERROR for an overflow', () => {
      const fake = new FakeResponse();
      const failed = runError('x'.repeat(1000), 'UPSTREAM');
      fake.accepting = false;

      sendSSE(fake.res, of(S, text('a'), failed), { maxBufferedBytes: 10 });
      fake.drain();

      expect(fake.chunks).toEqual([frame(S), frame(text('a')), frame(failed)]);
      expect(fake.writableEnded).toBe(true);
    });

    it('should take a frame larger than maxBufferedBytes when nothing waits before it', () => {
      const fake = new FakeResponse();
      const large = text('x'.repeat(1000));
      fake.accepting = false;

      // S made the socket refuse more, but no frame waits in the queue: the large one is taken.
      sendSSE(fake.res, of(S, large, F), { maxBufferedBytes: 10 });
      fake.drain();

      expect(written(fake)).toEqual([S, large, F]);
      expect(fake.writableEnded).toBe(true);
    });

    it('should write every frame of a burst far larger than maxBufferedBytes used to allow, to a client that drains', () => {
      const fake = new FakeResponse();
      const events = [S, ...Array.from({ length: 5000 }, (_, i) => text(`burst ${i} `.repeat(100))), F];
      let writes = 0;
      const write = fake.write.bind(fake);
      // A socket that takes 16 frames, then asks to wait for 'drain'.
      fake.write = (chunk) => write(chunk) && ++writes % 16 !== 0;

      sendSSE(fake.res, from(events), { heartbeatMs: 0, coalesce: false });
      let drains = 0;
      while (!fake.writableEnded && drains++ < 10_000) fake.drain();

      expect(events.reduce((total, event) => total + bytes(event), 0)).toBeGreaterThan(4 * 1024 * 1024);
      expect(written(fake)).toEqual(events);
    });

    it('should queue the SEND_BUFFER_FULL RUN_ERROR as protobuf when accept asks for it', () => {
      const fake = new FakeResponse();
      const events$ = new Subject<Event>();
      fake.accepting = false;

      sendSSE(fake.res, events$, { accept: PROTO, maxBufferedBytes: 1, coalesce: false });
      events$.next(S);
      events$.next(text('a'));
      events$.next(text('b'));
      fake.drain();

      expect(decodeProtoBody(Buffer.concat(fake.chunks as Uint8Array[]))).toEqual([S, text('a'), sendBufferFull(1)]);
      expect(fake.writableEnded).toBe(true);
    });

    it('should send nothing after the SEND_BUFFER_FULL RUN_ERROR when a synchronous source overflows', () => {
      const fake = new FakeResponse();
      fake.accepting = false;
      const maxBufferedBytes = bytes(text('a'));

      sendSSE(fake.res, of(S, text('a'), text('b'), text('c'), text('d'), F), { maxBufferedBytes, coalesce: false });
      fake.drain();

      expect(written(fake)).toEqual([S, text('a'), sendBufferFull(maxBufferedBytes)]);
      expect(fake.writableEnded).toBe(true);
    });

    it('should write no heartbeat while frames wait, so that a quiet run is never stopped for its heartbeats (the stall clock ends one whose client reads nothing)', () => {
      jest.useFakeTimers();
      const fake = new FakeResponse();
      const events$ = new Subject<Event>();
      fake.accepting = false;
      const maxBufferedBytes = Buffer.byteLength(PING);

      sendSSE(fake.res, events$, { heartbeatMs: 1000, maxBufferedBytes, stallTimeoutMs: 60_000 });
      events$.next(S);
      jest.advanceTimersByTime(10_000);

      // Ten heartbeats were due: none was queued behind the waiting frame, none counted against maxBufferedBytes.
      expect(events$.observed).toBe(true);
      expect(written(fake)).toEqual([S]);
      jest.advanceTimersByTime(50_000);
      expect(events$.observed).toBe(false);
      expect(fake.destroyed).toBe(true);
      expect(written(fake)).toEqual([S]);
      expect(jest.getTimerCount()).toBe(0);
    });

    it('should write a frame over 64 KiB in 64 KiB pieces, each after the previous one drained', () => {
      const fake = new FakeResponse();
      const large = text('é'.repeat(100_000));
      fake.accepting = false;

      sendSSE(fake.res, of(S, large, F), { heartbeatMs: 0 });
      const pieces: number[] = [];
      while (!fake.writableEnded && pieces.length < 100) {
        fake.drain(false);
        pieces.push(fake.chunks.length);
      }

      const sizes = fake.chunks.slice(1, -1).map((chunk) => Buffer.byteLength(chunk));
      expect(sizes).toEqual([65536, 65536, 65536, bytes(large) - 3 * 65536]);
      // One piece per drain.
      expect(pieces.slice(0, 4)).toEqual([2, 3, 4, 5]);
      expect(sseEvents(fake.text())).toEqual([S, large, F]);
    });

    it('should destroy the response, stop events$ and drop the queue once frames waited stallTimeoutMs without a drain', () => {
      jest.useFakeTimers();
      const fake = new FakeResponse();
      const source$ = new Subject<Event>();
      const { events$, finalized } = watched(source$);
      fake.accepting = false;

      sendSSE(fake.res, events$, { heartbeatMs: 0, stallTimeoutMs: 1000 });
      source$.next(S);
      source$.next(text('a'));
      source$.next(text('b'));
      jest.advanceTimersByTime(999);
      const cutEarly = fake.destroyed || finalized();
      jest.advanceTimersByTime(1);

      expect(cutEarly).toBe(false);
      expect(fake.destroyed).toBe(true);
      expect(finalized()).toBe(true);
      expect(source$.observed).toBe(false);
      // Nothing waits on the socket any more, and no timer is left.
      expect(fake.listenerCount('drain')).toBe(0);
      expect(fake.listenerCount('close')).toBe(0);
      expect(jest.getTimerCount()).toBe(0);
      expect(fake.chunks).toEqual([frame(S)]);
    });

    /** What onFailure was told, by code, when a client that takes nothing is sent `events` and `ms` pass. */
    function failuresOf(events: Event[], ms: number, options: SendSSEOptions = {}): { codes: (string | undefined)[]; destroyed: boolean } {
      jest.useFakeTimers();
      const fake = new FakeResponse();
      const source$ = new Subject<Event>();
      const failures: unknown[] = [];
      fake.accepting = false;
      sendSSE(fake.res, source$, { heartbeatMs: 0, stallTimeoutMs: 1000, coalesce: false, ...options, onFailure: (error) => void failures.push(error) });
      for (const event of events) source$.next(event);
      jest.advanceTimersByTime(ms);
      return { codes: failures.map((error) => (error as { code?: string }).code), destroyed: fake.destroyed };
    }

    it('should tell onFailure once when a run stopped with SEND_BUFFER_FULL then stalls: the cut is no second failure', () => {
      expect(failuresOf([S, text('a'), text('b')], 1000, { maxBufferedBytes: bytes(text('a')) })).toEqual({ codes: ['SEND_BUFFER_FULL'], destroyed: true });
    });

    it('should tell onFailure SLOW_CLIENT once when frames waited stallTimeoutMs without a drain', () => {
      expect(failuresOf([S, text('a')], 5000)).toEqual({ codes: ['SLOW_CLIENT'], destroyed: true });
    });

    it('should restart the stall clock on every drain: a client that reads slowly is never cut', () => {
      jest.useFakeTimers();
      const fake = new FakeResponse();
      const events$ = new Subject<Event>();
      fake.accepting = false;

      sendSSE(fake.res, events$, { heartbeatMs: 0, stallTimeoutMs: 1000, coalesce: false });
      events$.next(S);
      for (const delta of ['a', 'b', 'c', 'd']) events$.next(text(delta));
      for (let i = 0; i < 3; i++) {
        jest.advanceTimersByTime(900);
        // The client took one frame; the socket is full again.
        fake.drain(false);
      }
      jest.advanceTimersByTime(900);
      fake.drain();
      jest.advanceTimersByTime(60_000);
      events$.next(F);
      events$.complete();

      expect(fake.destroyed).toBe(false);
      expect(written(fake)).toEqual([S, text('a'), text('b'), text('c'), text('d'), F]);
      expect(fake.writableEnded).toBe(true);
      jest.runAllTicks();
      expect(jest.getTimerCount()).toBe(0);
    });

    it("should restart the stall clock when the response's own buffer shrank without a drain: a client reading behind a large kernel buffer is not cut", () => {
      jest.useFakeTimers();
      const fake = new FakeResponse() as FakeResponse & { writableLength: number };
      const events$ = new Subject<Event>();
      fake.accepting = false;
      // What Node still holds for the socket: each piece handed to the kernel in full leaves it.
      fake.writableLength = 10 * 64 * 1024;

      sendSSE(fake.res, events$, { heartbeatMs: 0, stallTimeoutMs: 1000, coalesce: false });
      events$.next(S);
      events$.next(text('a'));
      // The client takes a piece in each stallTimeoutMs, never all that waits (no 'drain').
      for (let i = 0; i < 5; i++) {
        jest.advanceTimersByTime(600);
        fake.writableLength -= 64 * 1024;
        jest.advanceTimersByTime(400);
      }
      const cutWhileReading = fake.destroyed;
      // Then the client stops reading altogether: cut within two stallTimeoutMs.
      jest.advanceTimersByTime(2000);

      expect(cutWhileReading).toBe(false);
      expect(fake.destroyed).toBe(true);
      expect(events$.observed).toBe(false);
    });

    it('should run no stall clock while nothing waits, however long the run is silent', () => {
      jest.useFakeTimers();
      const fake = new FakeResponse();
      const events$ = new Subject<Event>();

      sendSSE(fake.res, events$, { heartbeatMs: 0, stallTimeoutMs: 1000 });
      events$.next(S);
      jest.advanceTimersByTime(60_000);

      expect(jest.getTimerCount()).toBe(0);
      expect(fake.destroyed).toBe(false);
      expect(events$.observed).toBe(true);
      fake.disconnect();
    });

    it('should cut a client that stalls while the last frames of a finished run wait', () => {
      jest.useFakeTimers();
      const fake = new FakeResponse();
      fake.accepting = false;

      sendSSE(fake.res, of(S, text('a'), F), { heartbeatMs: 0, stallTimeoutMs: 1000 });
      jest.advanceTimersByTime(1000);

      expect(fake.destroyed).toBe(true);
      expect(fake.writableEnded).toBe(false);
      expect(jest.getTimerCount()).toBe(0);
    });

    it('should never cut a stalled client with stallTimeoutMs: Infinity', () => {
      jest.useFakeTimers();
      const fake = new FakeResponse();
      fake.accepting = false;
      const events$ = new Subject<Event>();

      sendSSE(fake.res, events$, { heartbeatMs: 0, stallTimeoutMs: Infinity, coalesce: false });
      events$.next(S);
      events$.next(text('a'));

      jest.runAllTicks();
      expect(jest.getTimerCount()).toBe(0);
      fake.drain();
      expect(written(fake)).toEqual([S, text('a')]);
      fake.disconnect();
    });

    it('should wait the whole stallTimeoutMs when it is longer than setTimeout can wait at once', () => {
      jest.useFakeTimers();
      const fake = new FakeResponse();
      fake.accepting = false;
      const events$ = new Subject<Event>();
      const stallTimeoutMs = 3 * 2 ** 31;

      sendSSE(fake.res, events$, { heartbeatMs: 0, stallTimeoutMs });
      events$.next(S);
      jest.advanceTimersByTime(stallTimeoutMs - 1);
      const cutEarly = fake.destroyed;
      jest.advanceTimersByTime(1);

      expect(cutEarly).toBe(false);
      expect(fake.destroyed).toBe(true);
    });

    it("should drop the queue and the stall clock on the response's 'close' while frames wait", () => {
      jest.useFakeTimers();
      const fake = new FakeResponse();
      fake.accepting = false;
      const events$ = new Subject<Event>();

      sendSSE(fake.res, events$, { heartbeatMs: 0, stallTimeoutMs: 1000 });
      events$.next(S);
      events$.next(text('a'));
      fake.disconnect();

      jest.runAllTicks();
      expect(jest.getTimerCount()).toBe(0);
      expect(fake.listenerCount('drain')).toBe(0);
    });

    it.each([
      [{ maxBufferedBytes: -1 }, "'maxBufferedBytes' must be a number of bytes ≥ 0 (or Infinity), not -1."],
      [{ maxBufferedBytes: NaN }, "'maxBufferedBytes' must be a number of bytes ≥ 0 (or Infinity), not NaN."],
      [{ maxBufferedBytes: '1024' as unknown as number }, "'maxBufferedBytes' must be a number of bytes ≥ 0 (or Infinity), not 1024."],
      [{ stallTimeoutMs: 0 }, "'stallTimeoutMs' must be a number of ms > 0 (or Infinity), not 0."],
      [{ stallTimeoutMs: NaN }, "'stallTimeoutMs' must be a number of ms > 0 (or Infinity), not NaN."],
    ])('should throw a RangeError naming the option for %o, before writing anything', (options, message) => {
      const fake = new FakeResponse();

      expect(() => sendSSE(fake.res, of(S, F), options)).toThrow(new RangeError(message));
      expect(fake.headersSent).toBe(false);
    });

    it("should unsubscribe events$ and clear the heartbeat timer on the response's 'close'", () => {
      jest.useFakeTimers();
      const fake = new FakeResponse();
      const source$ = new Subject<Event>();
      const { events$, finalized } = watched(source$);

      sendSSE(fake.res, events$, { heartbeatMs: 1000 });
      source$.next(S);
      jest.runAllTicks();
      expect(jest.getTimerCount()).toBe(1);
      fake.disconnect();

      expect(finalized()).toBe(true);
      expect(source$.observed).toBe(false);
      expect(jest.getTimerCount()).toBe(0);
      expect(fake.listenerCount('close')).toBe(0);
      jest.advanceTimersByTime(10_000);
      expect(fake.chunks).toEqual([frame(S)]);
    });

    it("should unsubscribe events$ on 'close' while frames wait for drain, and write nothing more", () => {
      const fake = new FakeResponse();
      const source$ = new Subject<Event>();
      const { events$, finalized } = watched(source$);
      fake.accepting = false;

      sendSSE(fake.res, events$, { heartbeatMs: 0 });
      source$.next(S);
      source$.next(text('a'));
      fake.disconnect();
      source$.next(text('b'));
      source$.complete();

      expect(finalized()).toBe(true);
      expect(fake.chunks).toEqual([frame(S)]);
      expect(fake.writableEnded).toBe(false);
    });

    it('should not start the run when the response is already closed', () => {
      jest.useFakeTimers();
      const fake = new FakeResponse();
      fake.destroyed = true;
      const source$ = new Subject<Event>();
      const { events$, finalized } = watched(source$);

      const subscription = sendSSE(fake.res, events$, { heartbeatMs: 1000 });

      expect(subscription.closed).toBe(true);
      expect(finalized()).toBe(true);
      expect(source$.observed).toBe(false);
      expect(jest.getTimerCount()).toBe(0);
      expect(fake.listenerCount('close')).toBe(0);
    });

    it('should stop the run and leave the response open when the returned subscription is unsubscribed', () => {
      jest.useFakeTimers();
      const fake = new FakeResponse();
      const source$ = new Subject<Event>();
      const { events$, finalized } = watched(source$);

      const subscription = sendSSE(fake.res, events$, { heartbeatMs: 1000 });
      source$.next(S);
      subscription.unsubscribe();

      expect(finalized()).toBe(true);
      jest.runAllTicks();
      expect(jest.getTimerCount()).toBe(0);
      expect(fake.listenerCount('close')).toBe(0);
      expect(fake.writableEnded).toBe(false);
      expect(fake.chunks).toEqual([frame(S)]);
    });

    it("should end with a RUN_ERROR carrying the error's message when events$ errors before its terminal event", () => {
      const fake = new FakeResponse();

      sendSSE(fake.res, concat(of(S), throwError(() => new Error('Model overloaded'))));

      expect(fake.chunks).toEqual([frame(S), frame(runError('Model overloaded'))]);
      expect(fake.writableEnded).toBe(true);
    });

    it('should add no frame when events$ errors after RUN_FINISHED', () => {
      const fake = new FakeResponse();

      sendSSE(fake.res, concat(of(S, F), throwError(() => new Error('late'))));

      expect(fake.chunks).toEqual([frame(S), frame(F)]);
      expect(fake.writableEnded).toBe(true);
    });

    it('should end with a RUN_ERROR naming the event when an event cannot be encoded as JSON', () => {
      const fake = new FakeResponse();

      sendSSE(fake.res, of<Event[]>(S, { type: EventType.CUSTOM, name: 'n', value: BigInt(7) }, F));

      expect(written(fake)).toEqual([
        S,
        runError(
          'The CUSTOM event cannot be encoded: Do not know how to serialize a BigInt. Events must be plain JSON: convert BigInts to strings or numbers, break reference cycles and flatten values nested thousands deep.',
        ),
      ]);
      expect(fake.writableEnded).toBe(true);
    });

    describe("an event that cannot be encoded, from toAgui's chain", () => {
      const big = { n: BigInt(7) };
      const agentEvents = (bad: AgentEvent): AgentEvent[] => [
        { type: EventType.TEXT_MESSAGE_CHUNK, messageId: 'm1', delta: 'Hello' },
        { type: EventType.TOOL_CALL_CHUNK, toolCallId: 'c1', toolCallName: 'lookup', parentMessageId: 'm1', delta: '{"a":' },
        bad,
        { type: EventType.TOOL_CALL_CHUNK, toolCallId: 'c1', delta: '1}' },
      ];
      // A message with a call in it, both closed before the RUN_ERROR.
      const closedThenError = [
        EventType.RUN_STARTED,
        EventType.TEXT_MESSAGE_START,
        EventType.TEXT_MESSAGE_CONTENT,
        EventType.TOOL_CALL_START,
        EventType.TOOL_CALL_ARGS,
        EventType.TOOL_CALL_END,
        EventType.TEXT_MESSAGE_END,
        EventType.RUN_ERROR,
      ];
      const aguiOf = (events: AgentEvent[]) => from(events).pipe(toAgui({ threadId: 't1', runId: 'r1', onError: () => {} }));

      it('should close the message and the call it interrupts before its RUN_ERROR, which the official client takes', async () => {
        const fake = new FakeResponse();

        sendSSE(fake.res, aguiOf(agentEvents({ type: EventType.CUSTOM, name: 'n', value: big })));

        const events = written(fake) as Event[];
        expect(events.map((event) => event.type)).toEqual(closedThenError);
        expect(events.at(-1)).toMatchObject({
          code: 'INVALID_EVENT',
          message:
            'The CUSTOM event cannot be encoded: Do not know how to serialize a BigInt. Events must be plain JSON: convert BigInts to strings or numbers, break reference cycles and flatten values nested thousands deep.',
        });
        expect(fake.writableEnded).toBe(true);
        const run = await runWithOracle(from(events), { runId: 'r1' });
        expect(run.messages).toEqual([{ id: 'm1', role: 'assistant', content: 'Hello', toolCalls: [{ id: 'c1', type: 'function', function: { name: 'lookup', arguments: '{"a":' } }] }]);
      });

      it('should not send the closer of an opener that could not be sent', async () => {
        const fake = new FakeResponse();

        sendSSE(fake.res, aguiOf(agentEvents({ type: EventType.TOOL_CALL_START, toolCallId: 'c2', toolCallName: 'other', rawEvent: big } as AgentEvent)));

        const events = written(fake) as Event[];
        expect(events.filter((event) => 'toolCallId' in event && event.toolCallId === 'c2')).toEqual([]);
        expect(events.at(-1)).toMatchObject({ type: EventType.RUN_ERROR, message: expect.stringContaining('The TOOL_CALL_START event cannot be encoded') });
        await expect(runWithOracle(from(events), { runId: 'r1' })).resolves.toBeDefined();
      });

      it('should still close a message whose own closer cannot be encoded: the closer goes bare, then RUN_ERROR', async () => {
        const fake = new FakeResponse();

        sendSSE(
          fake.res,
          aguiOf([
            { type: EventType.TEXT_MESSAGE_START, messageId: 'm1', role: 'assistant' },
            { type: EventType.TEXT_MESSAGE_CONTENT, messageId: 'm1', delta: 'hi' },
            { type: EventType.TEXT_MESSAGE_END, messageId: 'm1', rawEvent: big },
          ]),
        );

        const events = written(fake) as Event[];
        expect(events.slice(1)).toEqual([
          { type: EventType.TEXT_MESSAGE_START, messageId: 'm1', role: 'assistant' },
          { type: EventType.TEXT_MESSAGE_CONTENT, messageId: 'm1', delta: 'hi' },
          { type: EventType.TEXT_MESSAGE_END, messageId: 'm1' },
          expect.objectContaining({ type: EventType.RUN_ERROR, code: 'INVALID_EVENT', message: expect.stringContaining('The TEXT_MESSAGE_END event cannot be encoded') }),
        ]);
        expect((await runWithOracle(from(events), { runId: 'r1' })).messages).toEqual([{ id: 'm1', role: 'assistant', content: 'hi' }]);
      });

      it('should close what is open when a delta of a burst (held to join the next ones) cannot be encoded', async () => {
        const fake = new FakeResponse();

        sendSSE(
          fake.res,
          aguiOf([
            { type: EventType.TEXT_MESSAGE_START, messageId: 'm1', role: 'assistant' },
            { type: EventType.TEXT_MESSAGE_CONTENT, messageId: 'm1', delta: 'a' },
            { type: EventType.TOOL_CALL_START, toolCallId: 'c1', toolCallName: 'lookup', parentMessageId: 'm1' },
            { type: EventType.TOOL_CALL_ARGS, toolCallId: 'c1', delta: '{' },
            { type: EventType.TOOL_CALL_ARGS, toolCallId: 'c1', delta: '}', rawEvent: big },
            { type: EventType.TOOL_CALL_ARGS, toolCallId: 'c1', delta: ' ' },
          ]),
        );

        const events = written(fake) as Event[];
        expect(events.map((event) => event.type)).toEqual(closedThenError);
        expect(events.at(-1)).toMatchObject({ code: 'INVALID_EVENT', message: expect.stringContaining('The TOOL_CALL_ARGS event cannot be encoded') });
        expect((await runWithOracle(from(events), { runId: 'r1' })).messages).toEqual([
          { id: 'm1', role: 'assistant', content: 'a', toolCalls: [{ id: 'c1', type: 'function', function: { name: 'lookup', arguments: '{' } }] },
        ]);
      });

      it('should end at once, throwing nothing back, when events$ is not a chain of ours (a Subject)', () => {
        const fake = new FakeResponse();
        const events$ = new Subject<Event>();
        sendSSE(fake.res, events$);

        events$.next(S);
        events$.next({ type: EventType.TEXT_MESSAGE_START, messageId: 'm1', role: 'assistant' });
        expect(() => events$.next({ type: EventType.CUSTOM, name: 'n', value: big })).not.toThrow();

        expect((written(fake) as Event[]).map((event) => event.type)).toEqual([EventType.RUN_STARTED, EventType.TEXT_MESSAGE_START, EventType.RUN_ERROR]);
        expect(fake.writableEnded).toBe(true);
        expect(events$.observed).toBe(false);
      });
    });
  });
});
