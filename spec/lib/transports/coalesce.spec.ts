import { HttpAgent } from '@ag-ui/client';
import { EventType, type Event, type RunAgentInput } from '@ag-ui/core';
import { decode } from '@ag-ui/proto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Observable, Subject } from 'rxjs';
import type { AgentEvent } from '../../../lib/protocol/agentEvent.js';
import type { BrokerFrame } from '../../../lib/transports/brokerRoutes.js';
import { createAguiFetchHandler, createAguiHandler, type AnyAguiAgent } from '../../../lib/transports/createAguiHandler.js';
import { pipeFrames, type FrameOptions, type FrameSink } from '../../../lib/transports/frames.js';
import { runWithOracle } from '../../support/oracle.js';
import { eventsOf } from './pipelinedClient.js';

/*
 * Adaptive coalescing (issue 17): consecutive deltas of one text message, tool call or reasoning
 * message that wait for the socket anyway (after a tick's first frame, or while the sink is busy)
 * go as one frame; nothing waits past the tick's end, and nothing the socket could take at once waits.
 */

const S: Event = { type: EventType.RUN_STARTED, threadId: 't1', runId: 'r1' };
const text = (delta: string, messageId = 'm1'): Event => ({ type: EventType.TEXT_MESSAGE_CONTENT, messageId, delta });
const args = (delta: string, toolCallId = 'c1'): Event => ({ type: EventType.TOOL_CALL_ARGS, toolCallId, delta });
const thought = (delta: string, messageId = 'r1'): Event => ({ type: EventType.REASONING_MESSAGE_CONTENT, messageId, delta });
const frame = (event: Event) => `data: ${JSON.stringify(event)}\n\n`;
const PROTO = 'application/vnd.ag-ui.event+proto';

/** A sink that records each write, and can say it is busy (frames wait) until `takeAll()`. */
function sink() {
  let ready: (() => void) | undefined;
  const recorded = {
    writes: [] as (string | Uint8Array)[],
    busy: false,
    write(chunk: string | Uint8Array) {
      recorded.writes.push(chunk);
    },
    end() {},
    /** The client took what waited: no longer busy, and pipeFrames is told. */
    takeAll() {
      recorded.busy = false;
      const callback = ready;
      ready = undefined;
      callback?.();
    },
    /** Each SSE frame written, whatever write it came in. */
    frames(): string[] {
      return recorded.writes.flatMap((chunk) => (chunk as string).split(/(?<=\n\n)/));
    },
  };
  const frameSink: FrameSink = { write: recorded.write, end: recorded.end, busy: () => recorded.busy, whenReady: (callback) => void (ready = callback) };
  return { recorded, frameSink };
}

/** Feeds `events` to pipeFrames in one tick, ends the tick, and returns the sink's record. */
function oneTick(events: Event[], options: FrameOptions = {}) {
  const events$ = new Subject<Event>();
  const { recorded, frameSink } = sink();
  pipeFrames(events$, frameSink, { heartbeatMs: 0, ...options });
  for (const event of events) events$.next(event);
  jest.runAllTicks();
  return recorded;
}

describe('pipeFrames coalescing', () => {
  beforeEach(() => {
    jest.useFakeTimers();
  });

  afterEach(() => {
    jest.useRealTimers();
  });

  it("should write a tick's first frame at once, and the deltas of one message after it as one frame at the tick's end", () => {
    const events$ = new Subject<Event>();
    const { recorded, frameSink } = sink();

    pipeFrames(events$, frameSink, { heartbeatMs: 0 });
    events$.next(S);
    events$.next(text('Hel'));
    events$.next(text('lo'));
    events$.next(text('!'));
    const beforeTickEnd = [...recorded.writes];
    jest.runAllTicks();

    expect(beforeTickEnd).toEqual([frame(S)]);
    expect(recorded.writes).toEqual([frame(S), frame(text('Hello!'))]);
  });

  it('should hold nothing back when a delta is the first frame of its tick', () => {
    const events$ = new Subject<Event>();
    const { recorded, frameSink } = sink();

    pipeFrames(events$, frameSink, { heartbeatMs: 0 });
    events$.next(text('a'));

    expect(recorded.writes).toEqual([frame(text('a'))]);
  });

  it('should merge tool call arguments and reasoning deltas the same way', () => {
    const recorded = oneTick([S, args('{"ci'), args('ty":'), args('"Oslo"}'), thought('Let me '), thought('think.')]);

    expect(recorded.frames()).toEqual([frame(S), frame(args('{"city":"Oslo"}')), frame(thought('Let me think.'))]);
  });

  it('should not merge deltas of different ids, types or lanes', () => {
    const inLane = (event: Event, subagentRunId: string) => ({ ...event, subagentRunId }) as Event;
    const recorded = oneTick([S, text('a', 'm1'), text('b', 'm2'), args('c', 'm2'), inLane(args('d', 'm2'), 'sub-1'), inLane(args('e', 'm2'), 'sub-2')]);

    expect(recorded.frames()).toEqual([S, text('a', 'm1'), text('b', 'm2'), args('c', 'm2'), inLane(args('d', 'm2'), 'sub-1'), inLane(args('e', 'm2'), 'sub-2')].map(frame));
  });

  it('should only merge consecutive deltas: interleaved ids keep their order, one frame per run of one id', () => {
    const recorded = oneTick([S, text('a', 'm1'), text('b', 'm1'), text('c', 'm2'), text('d', 'm1'), text('e', 'm2'), text('f', 'm2')]);

    expect(recorded.frames()).toEqual([S, text('ab', 'm1'), text('c', 'm2'), text('d', 'm1'), text('ef', 'm2')].map(frame));
  });

  it("should never merge a message's END (or any other event) into its content", () => {
    const end: Event = { type: EventType.TEXT_MESSAGE_END, messageId: 'm1' };
    const toolEnd: Event = { type: EventType.TOOL_CALL_END, toolCallId: 'c1' };
    const recorded = oneTick([S, text('a'), text('b'), end, toolEnd]);

    expect(recorded.frames()).toEqual([S, text('ab'), end, toolEnd].map(frame));
  });

  it('should only merge deltas whose other fields (timestamp, rawEvent, metadata) are the same, so that merging loses nothing', () => {
    const at = (event: Event, fields: Record<string, unknown>) => ({ ...event, ...fields }) as Event;
    const raw = { chunk: 1 };
    const recorded = oneTick([
      S,
      at(text('a'), { timestamp: 1 }),
      at(text('b'), { timestamp: 1 }),
      at(text('c'), { timestamp: 2 }),
      text('d'),
      at(text('e'), { rawEvent: raw }),
      at(text('f'), { rawEvent: raw }),
      at(text('g'), { rawEvent: { chunk: 1 } }),
    ]);

    expect(recorded.frames()).toEqual(
      [S, at(text('ab'), { timestamp: 1 }), at(text('c'), { timestamp: 2 }), text('d'), at(text('ef'), { rawEvent: raw }), at(text('g'), { rawEvent: { chunk: 1 } })].map(frame),
    );
  });

  it('should leave the events it merges unchanged', () => {
    const first = text('a');
    const copy = { ...first };

    oneTick([S, first, text('b')]);

    expect(first).toEqual(copy);
  });

  it('should never make a frame longer than the longest delta it holds or 16K characters: a client bounds what it buffers per frame', () => {
    const big = 'x'.repeat(20_000);
    const half = 'y'.repeat(9_000);
    const recorded = oneTick([S, text(big), text(big), text(half), text(half), text('a'), text('b')]);

    // Two large deltas stay two frames; two that together pass 16K characters stay two; small ones after them merge.
    expect(recorded.frames()).toEqual([S, text(big), text(big), text(half), text(half + 'ab')].map(frame));
    for (const written of recorded.frames().slice(1)) expect(written.length).toBeLessThan(big.length + 100);
  });

  it('should send a held delta as it was when it came, whatever the producer does with its object after', () => {
    const events$ = new Subject<Event>();
    const { recorded, frameSink } = sink();
    pipeFrames(events$, frameSink, { heartbeatMs: 0 });
    events$.next(S);
    const reused = { type: EventType.TEXT_MESSAGE_CONTENT, messageId: 'm1', delta: 'Hello' } as Event & { delta: string; messageId: string };
    events$.next(reused);
    // The producer reuses its object for the next message's first token.
    reused.delta = 'Other';
    reused.messageId = 'm2';
    events$.next(reused);
    jest.runAllTicks();

    expect(recorded.frames()).toEqual([S, text('Hello', 'm1'), text('Other', 'm2')].map(frame));
  });

  it('should write one frame per event with coalesce: false (the frames after the first still in one write)', () => {
    const recorded = oneTick([S, text('a'), text('b')], { coalesce: false });

    expect(recorded.writes).toEqual([frame(S), frame(text('a')) + frame(text('b'))]);
  });

  it('should merge protobuf frames too', () => {
    const recorded = oneTick([S, text('a'), text('b')], { accept: PROTO });

    expect(recorded.writes.map((chunk) => decode((chunk as Uint8Array).subarray(4)))).toEqual([S, text('ab')]);
  });

  it('should keep merging the deltas that arrive while the sink is busy, until it takes what waited, then send them as one frame', () => {
    const events$ = new Subject<Event>();
    const { recorded, frameSink } = sink();

    pipeFrames(events$, frameSink, { heartbeatMs: 0 });
    events$.next(S);
    recorded.busy = true;
    events$.next(text('a'));
    jest.runAllTicks();
    // Later ticks, the socket still full.
    events$.next(text('b'));
    jest.runAllTicks();
    events$.next(text('c'));
    jest.runAllTicks();
    const whileBusy = [...recorded.writes];
    recorded.takeAll();

    expect(whileBusy).toEqual([frame(S)]);
    expect(recorded.writes).toEqual([frame(S), frame(text('abc'))]);
  });

  it('should send the deltas held for a busy sink before an event that does not join them, in order', () => {
    const events$ = new Subject<Event>();
    const { recorded, frameSink } = sink();
    const end: Event = { type: EventType.TEXT_MESSAGE_END, messageId: 'm1' };

    pipeFrames(events$, frameSink, { heartbeatMs: 0 });
    events$.next(S);
    recorded.busy = true;
    events$.next(text('a'));
    jest.runAllTicks();
    events$.next(text('b'));
    events$.next(end);
    jest.runAllTicks();

    expect(recorded.frames()).toEqual([frame(S), frame(text('ab')), frame(end)]);
  });

  it('should send what is held when the stream ends, before the end', () => {
    const events$ = new Subject<Event>();
    const { recorded, frameSink } = sink();
    let ends = 0;

    pipeFrames(events$, { ...frameSink, end: () => (ends = recorded.frames().length) }, { heartbeatMs: 0 });
    events$.next(S);
    events$.next(text('a'));
    events$.next(text('b'));
    events$.complete();

    expect(ends).toBe(2);
    expect(recorded.frames()).toEqual([frame(S), frame(text('ab'))]);
  });

  describe("with a sink that says when its tick's writes are corked (as Node's response does)", () => {
    // The real nextTick, taken before the specs fake timers: the sink's cork is not one of the stream's own timers.
    const realNextTick = process.nextTick;
    /**
     * The sink above as Node's socket: a write corks it and uncorks it at the tick's end (by default
     * the real nextTick; the faked one to queue it before the framer's, as Node's comes first), and
     * what it holds goes out, as one flush, when its last level is released.
     */
    function corkingSink(uncorkAtTickEnd: (callback: () => void) => void = realNextTick) {
      const { recorded, frameSink } = sink();
      const state = { level: 0, held: [] as string[], flushes: [] as string[][] };
      const release = () => {
        if (--state.level === 0) (state.flushes.push(state.held), (state.held = []));
      };
      const write = (chunk: string | Uint8Array) => {
        recorded.write(chunk);
        state.held.push(chunk as string);
        if (state.level === 0) {
          state.level = 1;
          uncorkAtTickEnd(release);
        }
      };
      const corking: FrameSink = { ...frameSink, write, corked: () => state.level > 0, cork: () => void state.level++, uncork: release };
      return { recorded, frameSink: corking, state };
    }

    it("should schedule no tick end of its own for a tick whose only frame went to the sink at once", () => {
      const events$ = new Subject<Event>();
      const { recorded, frameSink } = corkingSink();

      pipeFrames(events$, frameSink, { heartbeatMs: 0 });
      events$.next(text('a'));

      expect(recorded.writes).toEqual([frame(text('a'))]);
      expect(jest.getTimerCount()).toBe(0);
    });

    it('should schedule the tick end without it (a sink that cannot tell)', () => {
      const events$ = new Subject<Event>();
      const { recorded, frameSink } = sink();

      pipeFrames(events$, frameSink, { heartbeatMs: 0 });
      events$.next(text('a'));

      expect(recorded.writes).toEqual([frame(text('a'))]);
      expect(jest.getTimerCount()).toBe(1);
    });

    it("should join the frames after the tick's first one, merging deltas, in one write at the tick's end", () => {
      const events$ = new Subject<Event>();
      const { recorded, frameSink } = corkingSink();
      const end: Event = { type: EventType.TEXT_MESSAGE_END, messageId: 'm1' };

      pipeFrames(events$, frameSink, { heartbeatMs: 0 });
      events$.next(S);
      events$.next(text('Hel'));
      events$.next(text('lo'));
      events$.next(end);
      const beforeTickEnd = [...recorded.writes];
      jest.runAllTicks();

      expect(beforeTickEnd).toEqual([frame(S)]);
      expect(recorded.writes).toEqual([frame(S), frame(text('Hello')) + frame(end)]);
    });

    it("should hold the sink one level more from the tick's second frame to its end, so that the tick goes in one flush", () => {
      const { frameSink, state } = corkingSink((callback) => process.nextTick(callback));
      const events$ = new Subject<Event>();

      pipeFrames(events$, frameSink, { heartbeatMs: 0 });
      events$.next(S);
      events$.next(text('a'));
      events$.next(text('b'));
      jest.runAllTicks();
      events$.next(text('c'));
      jest.runAllTicks();

      expect(state.flushes).toEqual([[frame(S), frame(text('ab'))], [frame(text('c'))]]);
      expect(state.level).toBe(0);
    });

    it('should treat a tick the sink is corked in by another write as one whose first frame went already', () => {
      const events$ = new Subject<Event>();
      const { recorded, frameSink } = corkingSink();

      pipeFrames(events$, frameSink, { heartbeatMs: 0 });
      frameSink.write(': another writer\n\n');
      events$.next(text('a'));
      events$.next(text('b'));
      jest.runAllTicks();

      expect(recorded.writes).toEqual([': another writer\n\n', frame(text('ab'))]);
    });
  });

  describe('for a brokered stream', () => {
    const framed = (events: Event[], options: FrameOptions) => {
      const frames$ = new Subject<BrokerFrame>();
      const { recorded, frameSink } = sink();
      pipeFrames(frames$, frameSink, { heartbeatMs: 0, ...options }, true);
      events.forEach((event, i) => frames$.next({ event, cursor: `c${i + 1}` } as BrokerFrame));
      jest.runAllTicks();
      return recorded.frames();
    };

    it('should send the log as stored by default: one frame per event, each with its cursor', () => {
      expect(framed([S, text('a'), text('b')], {})).toEqual([`id: c1\n${frame(S)}`, `id: c2\n${frame(text('a'))}`, `id: c3\n${frame(text('b'))}`]);
    });

    it('should merge with coalesce: true, the merged frame carrying the cursor of the last event it holds', () => {
      expect(framed([S, text('a'), text('b'), text('c'), { type: EventType.TEXT_MESSAGE_END, messageId: 'm1' }], { coalesce: true })).toEqual([
        `id: c1\n${frame(S)}`,
        `id: c4\n${frame(text('abc'))}`,
        `id: c5\n${frame({ type: EventType.TEXT_MESSAGE_END, messageId: 'm1' })}`,
      ]);
    });
  });
});

describe('coalescing, by the official client over loopback HTTP', () => {
  const input = (runId: string): RunAgentInput => ({
    threadId: 'thread-1',
    runId,
    state: {},
    messages: [{ id: 'u1', role: 'user', content: 'Weather in Oslo?' }],
    tools: [],
    context: [],
    forwardedProps: {},
  });
  const words = Array.from({ length: 200 }, (_, i) => `word${i} `);
  // Bursts in one tick (each merges) and single tokens in their own ticks (none do), of every per-token kind.
  const agent: AnyAguiAgent = () =>
    new Observable<AgentEvent>((subscriber) => {
      const burst = (events: AgentEvent[]) => events.forEach((event) => subscriber.next(event));
      burst([{ type: 'REASONING_MESSAGE_CHUNK', messageId: 'think-1', delta: 'Let me ' }, { type: 'REASONING_MESSAGE_CHUNK', messageId: 'think-1', delta: 'think.' }]);
      burst(words.map((delta) => ({ type: 'TEXT_MESSAGE_CHUNK', messageId: 'm1', delta })));
      const later = setTimeout(() => {
        burst(['{"ci', 'ty":', '"Os', 'lo"}'].map((delta) => ({ type: 'TOOL_CALL_CHUNK', toolCallId: 'call-1', toolCallName: 'weather', parentMessageId: 'm1', delta })));
        burst([{ type: 'TOOL_CALL_RESULT', messageId: 'tool-1', toolCallId: 'call-1', content: '-3°C' }]);
        burst(words.slice(0, 3).map((delta) => ({ type: 'TEXT_MESSAGE_CHUNK', messageId: 'm2', delta })));
        subscriber.complete();
      }, 5);
      return () => clearTimeout(later);
    });

  let server: Server | undefined;
  afterEach(async () => {
    server?.closeAllConnections();
    await new Promise<void>((resolve) => (server === undefined ? resolve() : server.close(() => resolve())));
    server = undefined;
  });

  async function serve(coalesce: boolean | undefined): Promise<string> {
    server = createServer(createAguiHandler(agent, { heartbeatMs: 0, ...(coalesce === undefined ? {} : { coalesce }) }));
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}/agent`;
  }

  /** What the official client builds, and the raw body's frames, for one run against `url`. */
  async function run(url: string) {
    const client = new HttpAgent({ url, threadId: 'thread-1', initialMessages: input('run-1').messages });
    await client.runAgent({ runId: 'run-1' });
    const response = await fetch(url, { method: 'POST', body: JSON.stringify(input('run-2')), headers: { 'Content-Type': 'application/json', Accept: 'text/event-stream' } });
    const body = await response.text();
    return { messages: client.messages, frames: body.split('\n\n').length - 1, bytes: Buffer.byteLength(body) };
  }

  it('should build the same messages with and without coalescing, from fewer frames and bytes with it (createAguiHandler)', async () => {
    const merged = await run(await serve(undefined));
    await new Promise<void>((resolve) => server!.close(() => resolve()));
    const separate = await run(await serve(false));

    expect(merged.messages).toEqual(separate.messages);
    expect(merged.messages.map((message) => message.role)).toEqual(['user', 'reasoning', 'assistant', 'tool', 'assistant']);
    expect(merged.messages[2]).toMatchObject({ content: words.join(''), toolCalls: [{ function: { name: 'weather', arguments: '{"city":"Oslo"}' } }] });
    // 200 text deltas in one tick: at most the tick's first alone, the rest one frame.
    expect(separate.frames - merged.frames).toBeGreaterThanOrEqual(200);
    expect(merged.bytes).toBeLessThan(separate.bytes);
  });

  it('should build the same messages with and without coalescing (createAguiFetchHandler)', async () => {
    const answer = async (coalesce: boolean) => {
      const handle = createAguiFetchHandler(agent, { heartbeatMs: 0, coalesce });
      const response = await handle(new Request('http://127.0.0.1/agent', { method: 'POST', body: JSON.stringify(input('run-1')), headers: { 'Content-Type': 'application/json' } }));
      const body = await response.text();
      const oracle = await runWithOracle(new Observable<Event>((subscriber) => void eventsOf(body).then((events) => (events.forEach((event) => subscriber.next(event)), subscriber.complete()))), {
        initialMessages: input('run-1').messages,
      });
      return { messages: oracle.messages, frames: body.split('\n\n').length - 1 };
    };

    const merged = await answer(true);
    const separate = await answer(false);

    expect(merged.messages).toEqual(separate.messages);
    expect(merged.messages[2]).toMatchObject({ content: words.join('') });
    expect(separate.frames - merged.frames).toBeGreaterThanOrEqual(200);
  });
});
