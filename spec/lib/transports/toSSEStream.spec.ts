import { EventType, type Event } from '@ag-ui/core';
import { decode } from '@ag-ui/proto';
import { Subject, concat, defer, finalize, from, of, throwError, type Observable } from 'rxjs';
import { toSSEResponse, toSSEStream } from '../../../lib/transports/toSSEStream.js';

const PROTO = 'application/vnd.ag-ui.event+proto';

const S: Event = { type: EventType.RUN_STARTED, threadId: 't1', runId: 'r1' };
const F: Event = { type: EventType.RUN_FINISHED, threadId: 't1', runId: 'r1' };
const text = (delta: string): Event => ({ type: EventType.TEXT_MESSAGE_CONTENT, messageId: 'm1', delta });
const runError = (message: string): Event => ({ type: EventType.RUN_ERROR, message });

const frame = (event: Event) => `data: ${JSON.stringify(event)}\n\n`;
const PING = ': ping\n\n';

/** Every chunk of a stream, read to its end. */
async function readAll(stream: ReadableStream<Uint8Array>): Promise<Uint8Array[]> {
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return chunks;
    chunks.push(value);
  }
}

function concatBytes(chunks: Uint8Array[]): Uint8Array {
  const bytes = new Uint8Array(chunks.reduce((total, chunk) => total + chunk.byteLength, 0));
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return bytes;
}

/** A stream's whole body as text. */
async function readText(stream: ReadableStream<Uint8Array>): Promise<string> {
  return new TextDecoder().decode(concatBytes(await readAll(stream)));
}

/** The events of a length-prefixed protobuf body (4-byte big-endian length, then the message). */
function decodeProtoBody(bytes: Uint8Array): unknown[] {
  const events: unknown[] = [];
  let offset = 0;
  while (offset < bytes.byteLength) {
    const length = new DataView(bytes.buffer, bytes.byteOffset + offset, 4).getUint32(0, false);
    events.push(decode(bytes.subarray(offset + 4, offset + 4 + length)));
    offset += 4 + length;
  }
  expect(offset).toBe(bytes.byteLength);
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

/** `events$` with a flag that says whether it was unsubscribed (or ended). */
function watched(events$: Observable<Event>): { events$: Observable<Event>; finalized: () => boolean } {
  let done = false;
  return { events$: events$.pipe(finalize(() => (done = true))), finalized: () => done };
}

afterEach(() => {
  jest.useRealTimers();
});

describe('toSSEStream', () => {
  it('should stream one `data: <json>\\n\\n` frame per event, then close', async () => {
    const body = await readText(toSSEStream(of(S, text('a\nb'), F)));

    expect(body).toBe(frame(S) + frame(text('a\nb')) + frame(F));
    expect(sseEvents(body)).toEqual([S, text('a\nb'), F]);
  });

  it('should stream events that arrive later, in order', async () => {
    const events$ = new Subject<Event>();
    const stream = toSSEStream(events$);

    const body = readText(stream);
    events$.next(S);
    await Promise.resolve();
    events$.next(F);
    events$.complete();

    expect(await body).toBe(frame(S) + frame(F));
  });

  it('should close at once, with no frames, for an empty source', async () => {
    expect(await readAll(toSSEStream(of()))).toEqual([]);
  });

  it('should stream length-prefixed protobuf frames when accept asks for them', async () => {
    const chunks = await readAll(toSSEStream(of(S, text('a\nb'), F), { accept: PROTO }));

    expect(chunks).toHaveLength(3);
    expect(decodeProtoBody(concatBytes(chunks))).toEqual([S, text('a\nb'), F]);
  });

  it('should send `: ping\\n\\n` after heartbeatMs of silence', async () => {
    jest.useFakeTimers();
    const events$ = new Subject<Event>();
    const stream = toSSEStream(events$, { heartbeatMs: 1000 });

    events$.next(S);
    jest.advanceTimersByTime(999);
    events$.next(text('a'));
    jest.advanceTimersByTime(1000);
    jest.advanceTimersByTime(1000);
    events$.next(F);
    events$.complete();

    // No ping 999 ms after S; two pings during the 2000 ms of silence after 'a'.
    expect(await readText(stream)).toBe(frame(S) + frame(text('a')) + PING + PING + frame(F));
    jest.runAllTicks();
    expect(jest.getTimerCount()).toBe(0);
  });

  it('should send the heartbeat after 15000 ms by default', async () => {
    jest.useFakeTimers();
    const events$ = new Subject<Event>();
    const stream = toSSEStream(events$);

    jest.advanceTimersByTime(14_999);
    events$.next(S);
    jest.advanceTimersByTime(15_000);
    events$.complete();

    expect(await readText(stream)).toBe(frame(S) + PING);
  });

  it('should send no heartbeat while events flow', async () => {
    jest.useFakeTimers();
    const events$ = new Subject<Event>();
    const stream = toSSEStream(events$, { heartbeatMs: 1000 });
    const deltas = ['a', 'b', 'c', 'd', 'e'];

    events$.next(S);
    for (const delta of deltas) {
      jest.advanceTimersByTime(999);
      events$.next(text(delta));
    }
    jest.advanceTimersByTime(999);
    events$.next(F);
    events$.complete();

    expect(await readText(stream)).toBe([S, ...deltas.map(text), F].map(frame).join(''));
  });

  it('should send no heartbeat with heartbeatMs: 0', async () => {
    jest.useFakeTimers();
    const events$ = new Subject<Event>();
    const stream = toSSEStream(events$, { heartbeatMs: 0 });

    expect(jest.getTimerCount()).toBe(0);
    events$.next(S);
    jest.runAllTicks();
    expect(jest.getTimerCount()).toBe(0);
    jest.advanceTimersByTime(1_000_000);
    events$.complete();

    expect(await readText(stream)).toBe(frame(S));
  });

  it('should send no heartbeat for protobuf frames', async () => {
    jest.useFakeTimers();
    const events$ = new Subject<Event>();
    const stream = toSSEStream(events$, { heartbeatMs: 1000, accept: PROTO });

    events$.next(S);
    jest.runAllTicks();
    expect(jest.getTimerCount()).toBe(0);
    jest.advanceTimersByTime(10_000);
    events$.complete();

    expect(decodeProtoBody(concatBytes(await readAll(stream)))).toEqual([S]);
  });

  it('should unsubscribe events$ and clear the heartbeat timer on cancel()', async () => {
    jest.useFakeTimers();
    const source$ = new Subject<Event>();
    const { events$, finalized } = watched(source$);
    const stream = toSSEStream(events$, { heartbeatMs: 1000 });
    const reader = stream.getReader();
    source$.next(S);
    jest.runAllTicks();
    expect(jest.getTimerCount()).toBe(1);

    await reader.cancel();

    expect(finalized()).toBe(true);
    expect(source$.observed).toBe(false);
    expect(jest.getTimerCount()).toBe(0);
    // A timer left behind would enqueue into the cancelled stream, which throws.
    jest.advanceTimersByTime(10_000);
    expect(jest.getTimerCount()).toBe(0);
    expect(await reader.read()).toEqual({ done: true, value: undefined });
  });

  it('should unsubscribe events$ when the reader cancels mid-stream, after reading frames', async () => {
    const source$ = new Subject<Event>();
    const { events$, finalized } = watched(source$);
    const reader = toSSEStream(events$, { heartbeatMs: 0 }).getReader();

    source$.next(S);
    const first = await reader.read();
    await reader.cancel();

    expect(new TextDecoder().decode(first.value)).toBe(frame(S));
    expect(finalized()).toBe(true);
    expect(source$.observed).toBe(false);
  });

  it("should end with a RUN_ERROR carrying the error's message when events$ errors before its terminal event", async () => {
    const { events$, finalized } = watched(concat(of(S, text('a')), throwError(() => new Error('Model overloaded'))));

    const body = await readText(toSSEStream(events$, { heartbeatMs: 1000 }));

    expect(sseEvents(body)).toEqual([S, text('a'), runError('Model overloaded')]);
    expect(finalized()).toBe(true);
  });

  it('should end with RUN_ERROR "The event stream failed." for an error without a message', async () => {
    const body = await readText(toSSEStream(concat(of(S), throwError(() => ({ code: 500 })))));

    expect(sseEvents(body)).toEqual([S, runError('The event stream failed.')]);
  });

  it('should add no frame when events$ errors after RUN_FINISHED', async () => {
    const body = await readText(toSSEStream(concat(of(S, F), throwError(() => new Error('late')))));

    expect(sseEvents(body)).toEqual([S, F]);
  });

  it('should add no frame when events$ errors after RUN_ERROR', async () => {
    const body = await readText(toSSEStream(concat(of(S, runError('quota')), throwError(() => new Error('late')))));

    expect(sseEvents(body)).toEqual([S, runError('quota')]);
  });

  it('should end with a protobuf RUN_ERROR when events$ errors before its terminal event', async () => {
    const chunks = await readAll(toSSEStream(concat(of(S), throwError(() => new Error('Model overloaded'))), { accept: PROTO }));

    expect(decodeProtoBody(concatBytes(chunks))).toEqual([S, runError('Model overloaded')]);
  });

  it('should end with a RUN_ERROR naming the event, and stop events$, when an event cannot be encoded as JSON', async () => {
    const source$ = new Subject<Event>();
    const { events$, finalized } = watched(source$);
    const body = readText(toSSEStream(events$));

    source$.next(S);
    source$.next({ type: EventType.RAW, event: {}, rawEvent: { n: BigInt(1) } });

    expect(sseEvents(await body)).toEqual([
      S,
      runError(
        'The RAW event cannot be encoded: Do not know how to serialize a BigInt. Events must be plain JSON: convert BigInts to strings or numbers, break reference cycles and flatten values nested thousands deep.',
      ),
    ]);
    expect(finalized()).toBe(true);
    expect(source$.observed).toBe(false);
  });

  it('should subscribe events$ once, when the stream is created', async () => {
    let subscriptions = 0;
    const events$ = defer(() => {
      subscriptions++;
      return of(S);
    });

    const stream = toSSEStream(events$);
    const subscribedAtCreation = subscriptions;

    expect(await readText(stream)).toBe(frame(S));
    expect(subscribedAtCreation).toBe(1);
    expect(subscriptions).toBe(1);
  });
});

describe('toSSEStream backpressure', () => {
  const sendBufferFull = (maxBufferedBytes: number): Event => ({
    type: EventType.RUN_ERROR,
    code: 'SEND_BUFFER_FULL',
    message: `The run produced events faster than the connection could send them: more than ${maxBufferedBytes} bytes waited unsent, so the run was stopped. Raise maxBufferedBytes, or have the agent emit less at once.`,
  });
  const delta = (i: number) => text(`delta ${i} `.repeat(50));

  it('should give a consumer that reads every frame of a burst, however large', async () => {
    const events = [S, ...Array.from({ length: 50_000 }, (_, i) => delta(i)), F];

    const body = await readText(toSSEStream(from(events), { heartbeatMs: 0, coalesce: false }));

    expect(body.length).toBeGreaterThan(20 * 1024 * 1024);
    expect(sseEvents(body)).toEqual(events);
  });

  it("should hold frames back while the stream's desiredSize is 0, and enqueue them as the consumer pulls", async () => {
    const source$ = new Subject<Event>();
    const stream = toSSEStream(source$, { heartbeatMs: 0, coalesce: false });
    const reader = stream.getReader();
    const big = text('x'.repeat(100 * 1024));

    source$.next(S);
    source$.next(big);
    source$.next(text('after'));
    source$.next(F);
    source$.complete();

    // The stream's queue took S and the large frame (whatever its size); the rest wait in ours.
    const chunks: Uint8Array[] = [];
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
    }
    expect(sseEvents(new TextDecoder().decode(concatBytes(chunks)))).toEqual([S, big, text('after'), F]);
  });

  it('should stop events$ and end with a SEND_BUFFER_FULL RUN_ERROR, after the waiting frames, when more than maxBufferedBytes would wait', async () => {
    const source$ = new Subject<Event>();
    const { events$, finalized } = watched(source$);
    const stream = toSSEStream(events$, { heartbeatMs: 0, coalesce: false, maxBufferedBytes: 1000 });
    const fill = text('f'.repeat(70 * 1024));

    source$.next(S);
    // Fills the stream's own queue (64 KiB): what follows waits in ours.
    source$.next(fill);
    source$.next(text('a'.repeat(600)));
    const stoppedEarly = finalized();
    source$.next(text('b'.repeat(600)));

    expect(stoppedEarly).toBe(false);
    expect(finalized()).toBe(true);
    expect(source$.observed).toBe(false);
    expect(sseEvents(await readText(stream))).toEqual([S, fill, text('a'.repeat(600)), sendBufferFull(1000)]);
  });

  it('should never take the terminal event for an overflow', async () => {
    const fill = text('f'.repeat(70 * 1024));
    const finished: Event = { ...F, result: 'r'.repeat(2000) };

    const body = await readText(toSSEStream(of(S, fill, text('a'), finished), { heartbeatMs: 0, coalesce: false, maxBufferedBytes: 10 }));

    expect(sseEvents(body)).toEqual([S, fill, text('a'), finished]);
  });

  it('should stop events$, drop what waits and error the stream once frames waited stallTimeoutMs with nothing pulled', async () => {
    jest.useFakeTimers();
    const source$ = new Subject<Event>();
    const { events$, finalized } = watched(source$);
    const stream = toSSEStream(events$, { heartbeatMs: 0, coalesce: false, stallTimeoutMs: 1000 });

    source$.next(S);
    source$.next(text('f'.repeat(70 * 1024)));
    source$.next(text('waits'));
    jest.advanceTimersByTime(999);
    const stoppedEarly = finalized();
    jest.advanceTimersByTime(1);

    expect(stoppedEarly).toBe(false);
    expect(finalized()).toBe(true);
    expect(source$.observed).toBe(false);
    jest.runAllTicks();
    expect(jest.getTimerCount()).toBe(0);
    const reader = stream.getReader();
    await expect(reader.read()).rejects.toMatchObject({
      code: 'SLOW_CLIENT',
      message: 'The client did not read the stream: it took no bytes for 1000 ms while frames waited, so the run was stopped (raise stallTimeoutMs to wait longer).',
    });
  });

  it('should tell onFailure once when a run stopped with SEND_BUFFER_FULL then stalls: the cut is no second failure', async () => {
    jest.useFakeTimers();
    const source$ = new Subject<Event>();
    const failures: unknown[] = [];
    const stream = toSSEStream(source$, { heartbeatMs: 0, coalesce: false, stallTimeoutMs: 1000, maxBufferedBytes: 1000, onFailure: (error) => void failures.push(error) });

    source$.next(S);
    // Fills the stream's own queue (64 KiB): what follows waits in ours, then overflows it.
    source$.next(text('f'.repeat(70 * 1024)));
    source$.next(text('a'.repeat(600)));
    source$.next(text('b'.repeat(600)));
    jest.advanceTimersByTime(1000);

    await expect(stream.getReader().read()).rejects.toMatchObject({ code: 'SLOW_CLIENT' });
    expect(failures.map((error) => (error as { code?: string }).code)).toEqual(['SEND_BUFFER_FULL']);
  });

  it("should count a frame that fills the stream's own queue as waiting: a consumer that never pulls is cut", async () => {
    jest.useFakeTimers();
    const source$ = new Subject<Event>();
    const { events$, finalized } = watched(source$);
    const stream = toSSEStream(events$, { heartbeatMs: 0, coalesce: false, stallTimeoutMs: 1000 });

    source$.next(S);
    source$.next(text('x'.repeat(5 * 1024 * 1024)));
    jest.advanceTimersByTime(1000);

    expect(finalized()).toBe(true);
    await expect(stream.getReader().read()).rejects.toMatchObject({ code: 'SLOW_CLIENT' });
  });

  it('should restart the stall clock on every pull: a consumer that reads slowly gets everything', async () => {
    jest.useFakeTimers();
    const events = [S, ...Array.from({ length: 400 }, (_, i) => delta(i)), F];
    const stream = toSSEStream(from(events), { heartbeatMs: 0, coalesce: false, stallTimeoutMs: 1000 });
    const reader = stream.getReader();
    const chunks: Uint8Array[] = [];

    for (;;) {
      // 900 ms between reads: never 1000 ms without progress.
      jest.advanceTimersByTime(900);
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
    }

    expect(sseEvents(new TextDecoder().decode(concatBytes(chunks)))).toEqual(events);
    jest.runAllTicks();
    expect(jest.getTimerCount()).toBe(0);
  });

  it('should run no stall clock while nothing waits', () => {
    jest.useFakeTimers();
    const source$ = new Subject<Event>();
    const stream = toSSEStream(source$, { heartbeatMs: 0, coalesce: false, stallTimeoutMs: 1000 });

    source$.next(S);
    jest.advanceTimersByTime(60_000);

    jest.runAllTicks();
    expect(jest.getTimerCount()).toBe(0);
    expect(source$.observed).toBe(true);
    void stream.cancel();
  });

  it('should drop what waits and the stall clock on cancel()', async () => {
    jest.useFakeTimers();
    const source$ = new Subject<Event>();
    const stream = toSSEStream(source$, { heartbeatMs: 0, coalesce: false, stallTimeoutMs: 1000 });
    source$.next(S);
    source$.next(text('f'.repeat(70 * 1024)));
    source$.next(text('waits'));
    jest.runAllTicks();
    expect(jest.getTimerCount()).toBe(1);

    await stream.cancel();

    jest.runAllTicks();
    expect(jest.getTimerCount()).toBe(0);
    expect(source$.observed).toBe(false);
  });

  it('should stop events$, drop what waits and close at once when `signal` aborts (the client went away)', async () => {
    const source$ = new Subject<Event>();
    const controller = new AbortController();
    const stream = toSSEStream(source$, { heartbeatMs: 0, coalesce: false, signal: controller.signal });
    source$.next(S);
    // Far more than the stream's own queue takes: the rest waits in ours.
    for (let i = 0; i < 20; i++) source$.next(text(`${i}`.repeat(70 * 1024)));
    const reader = stream.getReader();
    const first = await reader.read();
    expect(first.done).toBe(false);

    controller.abort();

    expect(source$.observed).toBe(false);
    // What the stream's own queue held may still be read; then it is closed, the waiting frames gone.
    let read = first.value!.byteLength;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      read += value.byteLength;
    }
    expect(read).toBeLessThan(3 * 70 * 1024);
  });

  it('should close at once, with no frames, when `signal` aborted before the stream was made', async () => {
    const controller = new AbortController();
    controller.abort();
    const source$ = new Subject<Event>();

    const stream = toSSEStream(source$, { heartbeatMs: 0, coalesce: false, signal: controller.signal });

    expect(source$.observed).toBe(false);
    expect(await stream.getReader().read()).toEqual({ done: true, value: undefined });
  });

  it('should pass maxBufferedBytes and stallTimeoutMs through toSSEResponse', async () => {
    const fill = text('f'.repeat(70 * 1024));

    const response = toSSEResponse(of(S, fill, text('a'), text('b'), F), { heartbeatMs: 0, coalesce: false, maxBufferedBytes: 1, stallTimeoutMs: 5000 });

    expect(sseEvents(await response.text())).toEqual([S, fill, text('a'), sendBufferFull(1)]);
  });

  it.each([
    [{ maxBufferedBytes: -5 }, "'maxBufferedBytes' must be a number of bytes ≥ 0 (or Infinity), not -5."],
    [{ stallTimeoutMs: -1 }, "'stallTimeoutMs' must be a number of ms > 0 (or Infinity), not -1."],
  ])('should throw a RangeError naming the option for %o', (options, message) => {
    expect(() => toSSEStream(of(S), options)).toThrow(new RangeError(message));
  });
});

describe('toSSEResponse', () => {
  it('should answer 200 with exactly the three event-stream headers', async () => {
    const response = toSSEResponse(of(S, F));

    expect(response.status).toBe(200);
    expect([...response.headers].sort()).toEqual([
      ['cache-control', 'no-cache'],
      ['content-type', 'text/event-stream'],
      ['x-accel-buffering', 'no'],
    ]);
    expect(sseEvents(await response.text())).toEqual([S, F]);
  });

  it("should keep the caller's headers and status, and set the three stream headers over theirs", async () => {
    const response = toSSEResponse(of(S, F), {
      status: 201,
      statusText: 'Created',
      headers: { 'X-Request-Id': 'req-7', 'Content-Type': 'text/plain', 'Cache-Control': 'max-age=60' },
    });

    expect(response.status).toBe(201);
    expect(response.statusText).toBe('Created');
    expect([...response.headers].sort()).toEqual([
      ['cache-control', 'no-cache'],
      ['content-type', 'text/event-stream'],
      ['x-accel-buffering', 'no'],
      ['x-request-id', 'req-7'],
    ]);
    await response.body!.cancel();
  });

  it('should answer with the protobuf media type and protobuf frames when accept asks for them', async () => {
    const response = toSSEResponse(of(S, text('hi'), F), { accept: PROTO });

    expect(response.headers.get('content-type')).toBe(PROTO);
    expect(decodeProtoBody(new Uint8Array(await response.arrayBuffer()))).toEqual([S, text('hi'), F]);
  });

  it('should answer SSE to Accept: */*', async () => {
    const response = toSSEResponse(of(S, F), { accept: '*/*' });

    expect(response.headers.get('content-type')).toBe('text/event-stream');
    expect(sseEvents(await response.text())).toEqual([S, F]);
  });

  it('should unsubscribe events$ and clear the heartbeat timer when the body is cancelled', async () => {
    jest.useFakeTimers();
    const source$ = new Subject<Event>();
    const { events$, finalized } = watched(source$);
    const response = toSSEResponse(events$, { heartbeatMs: 1000 });

    await response.body!.cancel();

    expect(finalized()).toBe(true);
    expect(jest.getTimerCount()).toBe(0);
  });

  it('should pass heartbeatMs to the stream', async () => {
    jest.useFakeTimers();
    const events$ = new Subject<Event>();
    const response = toSSEResponse(events$, { heartbeatMs: 500 });

    jest.advanceTimersByTime(500);
    events$.complete();

    expect(await response.text()).toBe(PING);
  });
});
