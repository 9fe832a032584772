import { HttpAgent } from '@ag-ui/client';
import { EventType, type Event, type RunAgentInput } from '@ag-ui/core';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Observable, Subject, from } from 'rxjs';
import { createRunBroker, type RunBroker } from '../../../lib/broker/createRunBroker.js';
import type { AgentEvent } from '../../../lib/protocol/agentEvent.js';
import { createAguiHandler, type AnyAguiAgent } from '../../../lib/transports/createAguiHandler.js';
import { pipeFrames, type FrameSink } from '../../../lib/transports/frames.js';
import { sendSSE } from '../../../lib/transports/sendSSE.js';
import { toSSEResponse } from '../../../lib/transports/toSSEStream.js';
import { runWithOracle } from '../../support/oracle.js';
import { agentHarness } from './brokerHarness.js';
import { framesOf, open, runInput, serveNode, type Loopback } from './brokerHttp.js';

/*
 * Adversarial cases for the write path's coalescing (issue 17): what merging and batching must
 * never do — lose, duplicate, reorder or corrupt an event, hold an unbounded amount, or send
 * anything after the end — through the public transports and the official client as the oracle.
 */

const S: Event = { type: EventType.RUN_STARTED, threadId: 'thread-1', runId: 'run-1' };
const START: Event = { type: EventType.TEXT_MESSAGE_START, messageId: 'm1', role: 'assistant' };
const END: Event = { type: EventType.TEXT_MESSAGE_END, messageId: 'm1' };
const F: Event = { type: EventType.RUN_FINISHED, threadId: 'thread-1', runId: 'run-1' };
const text = (delta: string, messageId = 'm1'): Event => ({ type: EventType.TEXT_MESSAGE_CONTENT, messageId, delta });
const PROTO = 'application/vnd.ag-ui.event+proto';

const input = (runId = 'run-1'): RunAgentInput => ({ threadId: 'thread-1', runId, state: {}, messages: [], tools: [], context: [], forwardedProps: {} });

let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise<void>((resolve) => (server === undefined ? resolve() : server.close(() => resolve())));
  server = undefined;
});

async function listen(handler: Parameters<typeof createServer>[1]): Promise<string> {
  server = createServer(handler);
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/agent`;
}

/** The assistant text the official client builds from a run served at `url`. */
/**
 * The official client asking for protobuf frames: `HttpAgent` sends `Accept: text/event-stream`
 * whatever its `headers` say (its request's own Accept comes last), so the header is set here.
 */
class ProtobufHttpAgent extends HttpAgent {
  override requestInit(input: RunAgentInput): RequestInit {
    const init = super.requestInit(input);
    return { ...init, headers: { ...(init.headers as Record<string, string>), Accept: PROTO } };
  }
}

/** The official client, over protobuf when `headers` asks for it (`Accept: PROTO`), else over SSE. */
const clientFor = (url: string, headers: Record<string, string>) => (headers.Accept === PROTO ? new ProtobufHttpAgent({ url, threadId: 'thread-1' }) : new HttpAgent({ url, threadId: 'thread-1', headers }));

async function clientText(url: string, headers: Record<string, string> = {}): Promise<string[]> {
  const client = clientFor(url, headers);
  await client.runAgent({ runId: 'run-1' });
  return client.messages.filter((message) => message.role === 'assistant').map((message) => message.content as string);
}

/** An agent that emits `bursts`, each in one tick (a macrotask apart), then completes. */
const bursty =
  (bursts: AgentEvent[][]): AnyAguiAgent =>
  () =>
    new Observable<AgentEvent>((subscriber) => {
      let i = 0;
      const next = () => {
        if (i === bursts.length) return subscriber.complete();
        bursts[i++].forEach((event) => subscriber.next(event));
        timer = setTimeout(next, 1);
      };
      let timer = setTimeout(next, 1);
      return () => clearTimeout(timer);
    });

describe('coalescing, adversarial', () => {
  // Surrogate pairs and multibyte characters split across deltas, and deltas far over every batch bound.
  const emoji = '😀👍🏽🇳🇴';
  const big = 'é'.repeat(40_000) + '😀'.repeat(20_000);
  const pieces = [...emoji.split(''), 'ﬃ', big, ...'ab😀c'.split(''), '', 'z'];

  it.each([
    ['SSE', {}],
    ['protobuf', { Accept: PROTO }],
  ])('should deliver deltas that split surrogate pairs, or are larger than every batch bound, intact (%s)', async (_name, headers) => {
    const chunks: AgentEvent[] = pieces.filter((delta) => delta !== '').map((delta) => ({ type: 'TEXT_MESSAGE_CHUNK', messageId: 'm1', delta }));
    const url = await listen(createAguiHandler(bursty([chunks.slice(0, 3), chunks.slice(3)]), { heartbeatMs: 0 }));

    const texts = await clientText(url, headers);

    // Protobuf carries strings as UTF-8, which has no lone surrogate: a pair split across deltas is kept whole, merged or not.
    expect(texts).toEqual([pieces.join('')]);
  });

  it.each<[string, Record<string, string>]>([
    ['SSE', {}],
    ['protobuf', { Accept: PROTO }],
  ])('should keep a surrogate pair whole when its halves come in two ticks, each the first frame of its tick (%s)', async (_name, headers) => {
    // A producer that slices text by UTF-16 units: nothing merges the halves, each goes out at once.
    const pieces = ['a', '\uD83D', '\uDE00', 'b\uD83D', '\uDC4D\uD83C', '\uDFFD'];
    const args = ['{"q":"', '\uD83D', '\uDE00"}'];
    const bursts: AgentEvent[][] = [
      ...pieces.map((delta): AgentEvent[] => [{ type: 'TEXT_MESSAGE_CHUNK', messageId: 'm1', delta }]),
      ...args.map((delta): AgentEvent[] => [{ type: 'TOOL_CALL_CHUNK', toolCallId: 'c1', toolCallName: 'search', parentMessageId: 'm1', delta }]),
      // A message that ends on a lone first half: it goes out as it can (U+FFFD over protobuf), before the message's end.
      [{ type: 'TEXT_MESSAGE_CHUNK', messageId: 'm2', delta: 'x\uD83D' }],
    ];
    const url = await listen(createAguiHandler(bursty(bursts), { heartbeatMs: 0 }));
    const client = clientFor(url, headers);
    await client.runAgent({ runId: 'run-1' });

    const [first, second] = client.messages;
    expect(first).toMatchObject({ id: 'm1', content: 'a😀b👍🏽', toolCalls: [{ id: 'c1', function: { arguments: '{"q":"😀"}' } }] });
    expect([...(second.content as string)].map((c) => c.codePointAt(0)!.toString(16))).toEqual(headers.Accept === PROTO ? ['78', 'fffd'] : ['78', 'd83d']);
    expect(second.id).toBe('m2');
  });

  it('should send deltas, then the RUN_ERROR, when the agent errors in the tick of its deltas', async () => {
    const url = await listen(
      createAguiHandler(
        () =>
          new Observable<AgentEvent>((subscriber) => {
            setTimeout(() => {
              subscriber.next({ type: 'TEXT_MESSAGE_CHUNK', messageId: 'm1', delta: 'a' });
              subscriber.next({ type: 'TEXT_MESSAGE_CHUNK', messageId: 'm1', delta: 'b' });
              subscriber.next({ type: 'TEXT_MESSAGE_CHUNK', messageId: 'm1', delta: 'c' });
              subscriber.error(new Error('boom'));
            }, 1);
          }),
        { heartbeatMs: 0, onError: () => undefined },
      ),
    );
    const response = await fetch(url, { method: 'POST', body: JSON.stringify(input()), headers: { 'Content-Type': 'application/json' } });
    const types = framesOf(await response.text()).map((frame) => [frame.event.type, (frame.event as { delta?: string }).delta]);

    expect(types.filter(([type]) => type === EventType.TEXT_MESSAGE_CONTENT).map(([, delta]) => delta).join('')).toBe('abc');
    expect(types.at(-1)![0]).toBe(EventType.RUN_ERROR);
  });

  it('should hold a bounded number of deltas however many empty ones arrive in one tick', () => {
    const events$ = new Subject<Event>();
    const writes: string[] = [];
    // A client that takes nothing: held deltas wait for it, each piece written as soon as it is cut.
    const sink: FrameSink = { write: (frame) => void writes.push(frame as string), end: () => undefined, busy: () => true, whenReady: () => undefined };
    pipeFrames(events$, sink, { heartbeatMs: 0 });
    events$.next(S);
    events$.next(START);
    for (let i = 0; i < 100_000; i++) events$.next(text(''));
    // Still the same tick: a run of deltas is cut into pieces as it goes, whatever their length.
    expect(writes.length).toBeGreaterThan(3);
    expect(writes.slice(2).every((frame) => frame === `data: ${JSON.stringify(text(''))}\n\n`)).toBe(true);
  });

  it('should keep every write of a synchronous burst of a million deltas bounded, and lose none', () => {
    const events$ = new Subject<Event>();
    let largest = 0;
    let chars = 0;
    const sink: FrameSink = {
      write: (frame) => {
        const body = frame as string;
        largest = Math.max(largest, body.length);
        for (const part of body.split('\n\n')) if (part.startsWith('data: ')) chars += ((JSON.parse(part.slice(6)) as { delta?: string }).delta ?? '').length;
      },
      end: () => undefined,
    };
    pipeFrames(events$, sink, { heartbeatMs: 0 });
    events$.next(S);
    for (let i = 0; i < 1_000_000; i++) events$.next(text('x'));
    events$.complete();

    expect(chars).toBe(1_000_000);
    expect(largest).toBeLessThan(64 * 1024);
  });

  it('should merge only deltas with equal fields: per-delta timestamps and rawEvent objects each keep their frame', async () => {
    const raw = { provider: 'x' };
    const events$ = new Subject<Event>();
    const writes: string[] = [];
    pipeFrames(events$, { write: (frame) => void writes.push(frame as string), end: () => undefined }, { heartbeatMs: 0 });
    const deltas: Event[] = [
      { ...text('a'), timestamp: 1 },
      { ...text('b'), timestamp: 2 },
      { ...text('c'), rawEvent: { provider: 'x' } },
      { ...text('d'), rawEvent: { provider: 'x' } },
      { ...text('e'), rawEvent: raw },
      { ...text('f'), rawEvent: raw },
    ];
    events$.next(S);
    deltas.forEach((event) => events$.next(event));
    events$.complete();
    const events = writes.flatMap((body) => body.split('\n\n').filter((part) => part !== '').map((part) => JSON.parse(part.slice(6)) as Event));

    expect(events).toEqual([S, deltas[0], deltas[1], deltas[2], deltas[3], { ...text('ef'), rawEvent: raw }]);
  });

  it('should send nothing after the response when the client leaves in the middle of a tick, and stop the agent', async () => {
    let unsubscribed = false;
    let sent = 0;
    // Resolved by the agent's teardown with what it had sent by then: the test waits on the stream, not on a clock.
    let stopped!: (sentThen: number) => void;
    const stop = new Promise<number>((resolve) => (stopped = resolve));
    const url = await listen((req, res) => {
      const events$ = new Observable<Event>((subscriber) => {
        const timer = setInterval(() => {
          for (let i = 0; i < 50 && !subscriber.closed; i++) (sent++, subscriber.next(text('x'.repeat(100))));
        }, 1);
        return () => {
          unsubscribed = true;
          clearInterval(timer);
          stopped(sent);
        };
      });
      sendSSE(res, events$, { heartbeatMs: 0, accept: req.headers.accept });
    });
    await new Promise<void>((resolve, reject) => {
      const req = httpRequest(url, { method: 'POST' }, (res) => {
        res.once('data', () => {
          req.on('error', () => undefined);
          req.destroy();
          res.destroy();
          resolve();
        });
      });
      req.on('error', reject);
      req.end();
    });
    const sentThen = await stop;
    // One more turn of the event loop, where an interval that outlived the teardown would run.
    await new Promise((resolve) => setImmediate(resolve));

    expect(unsubscribed).toBe(true);
    expect(sent).toBe(sentThen);
  });

  it('should stop a stalled client with deltas held (stall timeout while held)', async () => {
    const failures: unknown[] = [];
    let unsubscribed = false;
    const url = await listen((req, res) => {
      const events$ = new Observable<Event>((subscriber) => {
        subscriber.next(S);
        subscriber.next(START);
        const timer = setInterval(() => {
          for (let i = 0; i < 200; i++) subscriber.next(text('y'.repeat(1000)));
        }, 1);
        return () => {
          unsubscribed = true;
          clearInterval(timer);
        };
      });
      sendSSE(res, events$, { heartbeatMs: 5, stallTimeoutMs: 100, maxBufferedBytes: Infinity, onFailure: (error) => (failures.push(error), failed()) });
    });
    let failed!: () => void;
    const failure = new Promise<void>((resolve) => (failed = resolve));
    const req = httpRequest(url, { method: 'POST' }, (res) => res.pause());
    req.on('error', () => undefined);
    req.end();
    await failure;
    req.destroy();

    expect(failures).toEqual([expect.objectContaining({ code: 'SLOW_CLIENT' })]);
    expect(unsubscribed).toBe(true);
  });

  it('should stop a consumer that stopped reading while deltas are held, and the source with it (toSSEResponse)', async () => {
    const failures: unknown[] = [];
    let unsubscribed = false;
    const events$ = new Observable<Event>((subscriber) => {
      subscriber.next(S);
      subscriber.next(START);
      const timer = setInterval(() => {
        for (let i = 0; i < 50; i++) subscriber.next(text('w'.repeat(1000)));
      }, 1);
      return () => {
        unsubscribed = true;
        clearInterval(timer);
      };
    });
    let failed!: () => void;
    const failure = new Promise<void>((resolve) => (failed = resolve));
    const reader = toSSEResponse(events$, { heartbeatMs: 5, stallTimeoutMs: 50, maxBufferedBytes: Infinity, onFailure: (error) => (failures.push(error), failed()) }).body!.getReader();
    await reader.read();
    await failure;

    expect(failures).toEqual([expect.objectContaining({ code: 'SLOW_CLIENT' })]);
    expect(unsubscribed).toBe(true);
    await expect(reader.read()).rejects.toMatchObject({ code: 'SLOW_CLIENT' });
  });

  it('should end with SEND_BUFFER_FULL, after every delta it sent and none after, while deltas are held (toSSEResponse)', async () => {
    const events$ = new Observable<Event>((subscriber) => {
      subscriber.next(S);
      subscriber.next(START);
      const timer = setInterval(() => {
        for (let i = 0; i < 100; i++) subscriber.next(text('z'.repeat(1000)));
      }, 1);
      return () => (clearInterval(timer), overran());
    });
    let overran!: () => void;
    const stopped = new Promise<void>((resolve) => (overran = resolve));
    const response = toSSEResponse(events$, { heartbeatMs: 0, maxBufferedBytes: 256 * 1024 });
    const reader = response.body!.getReader();
    // A slow consumer: it reads, but only after the run overran the buffer (and the source was stopped for it).
    await stopped;
    let body = '';
    const decoder = new TextDecoder();
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) body += decoder.decode(chunk.value, { stream: true });
    const frames = framesOf(body);

    expect(frames.at(-1)!.event).toMatchObject({ type: EventType.RUN_ERROR, code: 'SEND_BUFFER_FULL' });
    expect(frames.slice(2, -1).every((frame) => frame.event.type === EventType.TEXT_MESSAGE_CONTENT)).toBe(true);
    expect(frames.filter((frame) => frame.event.type === EventType.RUN_ERROR)).toHaveLength(1);
  });

  it('should end with one SEND_BUFFER_FULL after an unbroken prefix of the deltas, for a client that paused (sendSSE)', async () => {
    let sent = '';
    const url = await listen((req, res) => {
      const events$ = new Observable<Event>((subscriber) => {
        subscriber.next(S);
        subscriber.next(START);
        let n = 0;
        const timer = setInterval(() => {
          for (let i = 0; i < 100; i++) {
            const delta = `${n++},${'p'.repeat(1000)}`;
            sent += delta;
            subscriber.next(text(delta));
          }
        }, 1);
        return () => (clearInterval(timer), overran());
      });
      sendSSE(res, events$, { heartbeatMs: 0, maxBufferedBytes: 128 * 1024, onFailure: () => undefined });
    });
    let overran!: () => void;
    const stopped = new Promise<void>((resolve) => (overran = resolve));
    const body = await new Promise<string>((resolve, reject) => {
      const req = httpRequest(url, { method: 'POST' }, (res) => {
        res.pause();
        let chunks = '';
        // The client reads again once the run overran what may wait for it (and the agent was stopped for it).
        void stopped.then(() => {
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => (chunks += chunk));
          res.on('end', () => resolve(chunks));
          res.resume();
        });
      });
      req.on('error', reject);
      req.end();
    });
    const frames = framesOf(body);
    const content = frames.filter((frame) => frame.event.type === EventType.TEXT_MESSAGE_CONTENT).map((frame) => (frame.event as { delta: string }).delta).join('');

    expect(frames.at(-1)!.event).toMatchObject({ type: EventType.RUN_ERROR, code: 'SEND_BUFFER_FULL' });
    expect(frames.filter((frame) => frame.event.type === EventType.RUN_ERROR)).toHaveLength(1);
    expect(content.length).toBeGreaterThan(0);
    expect(sent.startsWith(content)).toBe(true);
  });

  it('should send what is held when the heartbeat is due, and the heartbeat itself only once the client took what waited', async () => {
    jest.useFakeTimers();
    const events$ = new Subject<Event>();
    const writes: string[] = [];
    let busy = true;
    let whileBusy = '';
    try {
      pipeFrames(events$, { write: (frame) => void writes.push(frame as string), end: () => undefined, busy: () => busy, whenReady: () => undefined }, { heartbeatMs: 20 });
      events$.next(S);
      events$.next(text('a'));
      events$.next(text('b'));
      jest.advanceTimersByTime(60);
      whileBusy = writes.join('');
      busy = false;
      jest.advanceTimersByTime(20);
      events$.complete();
    } finally {
      jest.useRealTimers();
    }
    const body = writes.join('');

    expect(whileBusy.indexOf('"delta":"ab"')).toBeGreaterThan(0);
    expect(whileBusy).not.toContain(': ping');
    expect(body.indexOf('"delta":"ab"')).toBeLessThan(body.indexOf(': ping'));
  });

  it('should write nothing after the end when a held delta cannot be encoded and the heartbeat releases it', async () => {
    const events$ = new Subject<Event>();
    const writes: string[] = [];
    let endedAt: number | undefined;
    const sink: FrameSink = {
      write: (frame) => void writes.push(frame as string),
      end: () => void (endedAt = writes.length),
      busy: () => true,
      whenReady: () => undefined,
    };
    jest.useFakeTimers();
    try {
      pipeFrames(events$, sink, { heartbeatMs: 10, onFailure: () => undefined });
      events$.next(S);
      events$.next(START);
      // Held for the busy sink, not yet encoded: the heartbeat is what sends it.
      events$.next({ ...text('a'), rawEvent: { big: BigInt(1) } } as Event);
      jest.advanceTimersByTime(50);
    } finally {
      jest.useRealTimers();
    }

    expect(endedAt).toBe(writes.length);
    expect(writes.at(-1)).toMatch(/^data: \{"type":"RUN_ERROR","message":"The TEXT_MESSAGE_CONTENT event cannot be encoded/);
  });

  it('should give a slow reader every delta of interleaved messages, in order and accepted by the official client (toSSEResponse)', async () => {
    const sent = { m1: '', m2: '' };
    const events$ = new Observable<Event>((subscriber) => {
      subscriber.next(S);
      subscriber.next(START);
      subscriber.next({ type: EventType.TOOL_CALL_START, toolCallId: 'c1', toolCallName: 'f', parentMessageId: 'm1' });
      let tick = 0;
      const timer = setInterval(() => {
        for (let i = 0; i < 100; i++) {
          const delta = `${tick}.${i}😀é${'x'.repeat(i * 7)}|`;
          if (i % 10 === 9) subscriber.next({ type: EventType.CUSTOM, name: 'n', value: i });
          else if (i % 3 === 0) (sent.m2 += delta, subscriber.next({ type: EventType.TOOL_CALL_ARGS, toolCallId: 'c1', delta }));
          else (sent.m1 += delta, subscriber.next(text(delta)));
        }
        if (++tick === 40) {
          clearInterval(timer);
          subscriber.next({ type: EventType.TOOL_CALL_END, toolCallId: 'c1' });
          subscriber.next(END);
          subscriber.next(F);
          subscriber.complete();
          produced = true;
        }
        producerTicked?.();
      }, 1);
      return () => clearInterval(timer);
    });
    // The reader is slow by waiting, after each chunk, for the producer's next burst (or its end).
    let produced = false;
    let producerTicked: (() => void) | undefined;
    const nextBurst = () => (produced ? Promise.resolve() : new Promise<void>((resolve) => (producerTicked = resolve)));
    const reader = toSSEResponse(events$, { heartbeatMs: 0 }).body!.getReader();
    const decoder = new TextDecoder();
    let body = '';
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) {
      body += decoder.decode(chunk.value, { stream: true });
      await nextBurst();
    }
    const events = framesOf(body).map((frame) => frame.event);
    const oracle = await runWithOracle(new Observable<Event>((subscriber) => (events.forEach((event) => subscriber.next(event)), subscriber.complete())));

    expect(events.filter((event) => event.type === EventType.TEXT_MESSAGE_CONTENT).map((event) => (event as { delta: string }).delta).join('')).toBe(sent.m1);
    expect(events.filter((event) => event.type === EventType.TOOL_CALL_ARGS).map((event) => (event as { delta: string }).delta).join('')).toBe(sent.m2);
    expect(events.filter((event) => event.type === EventType.CUSTOM)).toHaveLength(400);
    expect(oracle.messages).toEqual([expect.objectContaining({ id: 'm1', content: sent.m1, toolCalls: [expect.objectContaining({ function: { name: 'f', arguments: sent.m2 } })] })]);
  });

  it("should merge an async iterable's deltas that arrive in the microtasks of one tick (its end waits for them all)", async () => {
    async function* deltas() {
      yield S;
      for (let i = 0; i < 200; i++) {
        await null;
        yield text('x');
      }
    }
    const writes: string[] = [];
    await new Promise<void>((resolve) => pipeFrames(from(deltas()), { write: (frame) => void writes.push(frame as string), end: resolve }, { heartbeatMs: 0 }));

    expect(writes).toEqual([`data: ${JSON.stringify(S)}\n\n`, `data: ${JSON.stringify(text('x'.repeat(200)))}\n\n`]);
  });

  describe("under Jest's default fake timers (process.nextTick and queueMicrotask faked)", () => {
    afterEach(() => {
      jest.useRealTimers();
    });

    it("should still write a tick's later frames once the tick is over, without being told to run the ticks", async () => {
      const events$ = new Subject<Event>();
      const url = await listen((_req, res) => void sendSSE(res, events$, { heartbeatMs: 0 }));
      let body = '';
      await new Promise<void>((resolve, reject) => {
        const req = httpRequest(url, { method: 'POST' }, (res) => {
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => (body += chunk));
          resolve();
        });
        req.on('error', reject);
        req.end();
      });
      // Faked from here on (but setImmediate and the clock, for this spec's own wait): the network and promises still run.
      jest.useFakeTimers({ doNotFake: ['setImmediate', 'performance'] });
      events$.next(S);
      events$.next(START);
      events$.next(text('a'));
      events$.next(text('b'));
      const deadline = performance.now() + 2000;
      while (!body.includes('"delta":"ab"') && performance.now() < deadline) await new Promise<void>((resolve) => setImmediate(resolve));
      const seen = body;
      jest.useRealTimers();
      events$.complete();

      expect(seen).toBe([S, START, text('ab')].map((event) => `data: ${JSON.stringify(event)}\n\n`).join(''));
    });
  });

  describe('through a run broker with coalesce: true', () => {
    let broker: RunBroker | undefined;
    let loop: Loopback | undefined;
    afterEach(async () => {
      await broker?.close();
      await loop?.close();
      broker = undefined;
      loop = undefined;
    });

    it('should resume after a merged frame from its cursor with nothing lost or repeated', async () => {
      const h = agentHarness();
      const first = Array.from({ length: 30 }, (_, i) => ({ type: 'TEXT_MESSAGE_CHUNK', messageId: 'm1', delta: `a${i} ` }) as AgentEvent);
      const second = Array.from({ length: 30 }, (_, i) => ({ type: 'TEXT_MESSAGE_CHUNK', messageId: 'm1', delta: `b${i} ` }) as AgentEvent);
      h.hold('r1', first, second);
      broker = createRunBroker({ detachGraceMs: Infinity, authorize: () => true });
      loop = await serveNode(createAguiHandler(h.agent, { broker, basePath: '/agent', heartbeatMs: 0, coalesce: true }));
      const base = `${loop.origin}/agent`;
      const reader = await open(base, { body: runInput('t1', 'r1') });
      const early = await reader.until((frame) => ((frame.event as { delta?: string }).delta ?? '').includes('a29'));
      reader.leave();
      h.release('r1');
      const resumed = await open(base, { body: runInput('t1', 'r1'), headers: { 'Last-Event-ID': early.at(-1)!.id! } });
      const rest = await resumed.ended;
      const all = [...early, ...rest];
      const content = all.filter((frame) => frame.event.type === EventType.TEXT_MESSAGE_CONTENT).map((frame) => (frame.event as { delta: string }).delta).join('');

      expect(content).toBe([...first, ...second].map((event) => (event as { delta: string }).delta).join(''));
      expect(all.at(-1)!.event.type).toBe(EventType.RUN_FINISHED);
      expect(new Set(all.map((frame) => frame.id)).size).toBe(all.length);
    });
  });
});
