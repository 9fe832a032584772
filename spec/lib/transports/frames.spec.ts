import { EventType, type Event } from '@ag-ui/core';
import { decode } from '@ag-ui/proto';
import { NEVER, Observable, Subject, Subscriber, concat, finalize, of, throwError } from 'rxjs';
import { HEARTBEAT, contentTypeFor, frameEncoderFor, pipeFrames, refusesEveryStreamType, streamHeaders, type FrameSink } from '../../../lib/transports/frames.js';

const SSE = 'text/event-stream';
const PROTO = 'application/vnd.ag-ui.event+proto';

const S: Event = { type: EventType.RUN_STARTED, threadId: 't1', runId: 'r1' };
const F: Event = { type: EventType.RUN_FINISHED, threadId: 't1', runId: 'r1' };
const text = (delta: string): Event => ({ type: EventType.TEXT_MESSAGE_CONTENT, messageId: 'm1', delta });

/** The event in a length-prefixed protobuf frame; the prefix must be the message's length, big-endian. */
function decodeProtoFrame(frame: Uint8Array): unknown {
  const length = new DataView(frame.buffer, frame.byteOffset, 4).getUint32(0, false);
  expect(length).toBe(frame.byteLength - 4);
  return decode(frame.subarray(4));
}

/** A sink that records what pipeFrames writes, as frames as written and `end` calls. */
function recordingSink(onWrite?: (frame: string | Uint8Array, event?: Event) => void): FrameSink & { writes: [string | Uint8Array, Event | undefined][]; ends: number } {
  const sink = {
    writes: [] as [string | Uint8Array, Event | undefined][],
    ends: 0,
    write(frame: string | Uint8Array, event?: Event) {
      sink.writes.push([frame, event]);
      onWrite?.(frame, event);
    },
    end() {
      sink.ends++;
    },
  };
  return sink;
}

describe('contentTypeFor', () => {
  it.each<[string, string | undefined, string]>([
    ['no Accept header', undefined, SSE],
    ['an empty Accept header', '', SSE],
    ['text/event-stream', 'text/event-stream', SSE],
    ['the protobuf type alone', PROTO, PROTO],
    ['the protobuf type in capitals', PROTO.toUpperCase(), PROTO],
    ['the protobuf type with a q-value', `${PROTO};q=0.9`, PROTO],
    ['the protobuf type with q=0 (not acceptable)', `${PROTO};q=0`, SSE],
    ['text/event-stream first, the protobuf type second, equal q', `text/event-stream, ${PROTO}`, SSE],
    ['the protobuf type first, text/event-stream second, equal q', `${PROTO}, text/event-stream`, PROTO],
    ['the protobuf type with the higher q', `text/event-stream;q=0.5, ${PROTO}`, PROTO],
    ['text/event-stream with the higher q', `${PROTO};q=0.5, text/event-stream`, SSE],
    ['text/event-stream refused (q=0)', `text/event-stream;q=0, ${PROTO};q=0.1`, PROTO],
    ['*/* (the default of curl and fetch)', '*/*', SSE],
    ['application/* (a wildcard does not ask for protobuf)', 'application/*', SSE],
    ["a browser's navigation Accept header", 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8', SSE],
    ['the protobuf type named beside */*', `*/*, ${PROTO}`, PROTO],
    ['the protobuf type named beside a preferred */*', `*/*;q=1, ${PROTO};q=0.5`, SSE],
    ['text/* above the protobuf type', `text/*, ${PROTO};q=0.9`, SSE],
    ['a header that is not a media range', 'nonsense', SSE],
    ['the protobuf type with a media type parameter', `${PROTO}; charset=utf-8`, PROTO],
    ['the protobuf type with parameters and a q-value', `text/event-stream;q=0.5, ${PROTO}; charset=utf-8; q=0.9`, PROTO],
    ['the protobuf type with a parameter and q=0', `${PROTO}; charset=utf-8; q=0`, SSE],
    ['text/event-stream refused alone (the other type is not refused)', 'text/event-stream;q=0', PROTO],
    ['text/event-stream refused beside */*', 'text/event-stream;q=0, */*', PROTO],
    ['text/event-stream refused beside application/json', 'text/event-stream;q=0, application/json', PROTO],
    ['text/* refused', 'text/*;q=0', PROTO],
  ])('should pick the right type for %s', (_name, accept, expected) => {
    expect(contentTypeFor(accept)).toBe(expected);
  });
});

describe('refusesEveryStreamType', () => {
  it.each<[string | undefined, boolean]>([
    [undefined, false],
    ['', false],
    ['*/*', false],
    ['application/json', false],
    [`${PROTO};q=0`, false],
    ['text/event-stream;q=0', false],
    [`${PROTO};q=0, text/event-stream;q=0`, true],
    [`${PROTO}; q=0.000, text/event-stream ; Q=0`, true],
    [`${PROTO};q=0, text/event-stream;q=0, application/json`, true],
    [`${PROTO};q=0, text/event-stream;q=0.1`, false],
    ['text/*;q=0, application/*;q=0', true],
    ['*/*;q=0', true],
    [`*/*;q=0, ${PROTO}`, false],
    [`text/*;q=0, text/event-stream, ${PROTO};q=0`, false],
    [`${PROTO};charset=utf-8;q=0, text/event-stream;q=0`, true],
  ])('should decide for Accept %p: %p', (accept, expected) => {
    expect(refusesEveryStreamType(accept)).toBe(expected);
  });
});

describe('frameEncoderFor', () => {
  it.each<[string, string | undefined]>([
    ['no Accept header', undefined],
    ['text/event-stream', 'text/event-stream'],
    ['text/event-stream listed before the protobuf type', `text/event-stream, ${PROTO}`],
    ['*/*', '*/*'],
  ])('should give `data: <json>\\n\\n` frames for %s', (_name, accept) => {
    const encode = frameEncoderFor(accept);

    expect(encode(text('a\nb'))).toBe('data: {"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"a\\nb"}\n\n');
  });

  it.each<[string, string]>([
    ['the protobuf type', PROTO],
    ['the protobuf type with a q-value', `${PROTO};q=0.8`],
    ['the protobuf type ranked above text/event-stream', `text/event-stream;q=0.5, ${PROTO}`],
  ])('should give length-prefixed protobuf frames for %s', (_name, accept) => {
    const encode = frameEncoderFor(accept);

    const frames = [S, text('a\nb'), F].map(encode);

    expect(frames.every((frame) => frame instanceof Uint8Array)).toBe(true);
    expect(frames.map((frame) => decodeProtoFrame(frame as Uint8Array))).toEqual([S, text('a\nb'), F]);
  });
});

describe('streamHeaders', () => {
  it('should give exactly the three event-stream headers, and no Connection (the server decides it from the request)', () => {
    expect(streamHeaders(SSE)).toStrictEqual({ 'Content-Type': SSE, 'Cache-Control': 'no-cache', 'X-Accel-Buffering': 'no' });
    expect(streamHeaders(PROTO)['Content-Type']).toBe(PROTO);
  });

  it('should define the heartbeat as the SSE comment `: ping`', () => {
    expect(HEARTBEAT).toBe(': ping\n\n');
  });
});

describe('pipeFrames', () => {
  beforeEach(() => {
    jest.useFakeTimers();
  });

  afterEach(() => {
    jest.useRealTimers();
  });

  it('should write one frame per event, with the event, then end', () => {
    const sink = recordingSink();

    pipeFrames(of(S, F), sink);

    expect(sink.writes).toEqual([
      ['data: {"type":"RUN_STARTED","threadId":"t1","runId":"r1"}\n\n', S],
      ['data: {"type":"RUN_FINISHED","threadId":"t1","runId":"r1"}\n\n', F],
    ]);
    expect(sink.ends).toBe(1);
    // No heartbeat timer is left (a tick's end is no timer).
    jest.runAllTicks();
    expect(jest.getTimerCount()).toBe(0);
  });

  // No SafeSubscriber between the source and the stream: two objects fewer per open stream, one hop fewer per event.
  it("should be the source's subscriber itself, and take nothing a source sends once it is unsubscribed or ended", () => {
    const sink = recordingSink();
    let given: Subscriber<Event> | undefined;

    const subscription = pipeFrames(new Observable<Event>((subscriber) => void (given = subscriber)), sink);
    given!.next(S);
    subscription.unsubscribe();
    given!.next(text('late'));
    given!.complete();

    expect(given).toBe(subscription);
    // The stream's own Subscription, not an RxJS Subscriber wrapping it.
    expect(given).not.toBeInstanceOf(Subscriber);
    expect(sink.writes).toEqual([['data: {"type":"RUN_STARTED","threadId":"t1","runId":"r1"}\n\n', S]]);
    expect(sink.ends).toBe(0);

    const ended = recordingSink();
    pipeFrames(new Observable<Event>((subscriber) => void (given = subscriber)), ended);
    given!.complete();
    given!.next(S);
    given!.error(new Error('late'));

    expect(ended.writes).toEqual([]);
    expect(ended.ends).toBe(1);
  });

  it('should run the source\'s teardown when the stream ends by itself, and when the source ends while it is subscribed', () => {
    const teardowns: string[] = [];
    pipeFrames(new Observable<Event>(() => () => void teardowns.push('open')), recordingSink()).unsubscribe();
    pipeFrames(new Observable<Event>((subscriber) => (subscriber.complete(), () => void teardowns.push('sync'))), recordingSink());
    let given: Subscriber<Event> | undefined;
    pipeFrames(new Observable<Event>((subscriber) => ((given = subscriber), () => void teardowns.push('later'))), recordingSink());
    given!.next(F);
    given!.complete();

    expect(teardowns).toEqual(['open', 'sync', 'later']);
  });

  it('should write the heartbeat without an event, after heartbeatMs of silence', () => {
    const sink = recordingSink();

    const subscription = pipeFrames(NEVER, sink, { heartbeatMs: 1000 });
    jest.advanceTimersByTime(999);
    const before = sink.writes.length;
    jest.advanceTimersByTime(1);

    expect(before).toBe(0);
    expect(sink.writes).toEqual([[HEARTBEAT, undefined]]);
    subscription.unsubscribe();
    expect(jest.getTimerCount()).toBe(0);
  });

  it('should send no heartbeat while frames wait for the client (the connection is not idle), and beat again once it took them', () => {
    const sink = recordingSink();
    let busy = true;

    const subscription = pipeFrames(NEVER, { ...sink, busy: () => busy }, { heartbeatMs: 1000 });
    jest.advanceTimersByTime(3000);
    const whileBusy = sink.writes.length;
    busy = false;
    jest.advanceTimersByTime(1000);

    expect(whileBusy).toBe(0);
    expect(sink.writes).toEqual([[HEARTBEAT, undefined]]);
    subscription.unsubscribe();
  });

  it.each([Infinity, Number.NaN, 1e10])('should send no heartbeat, and arm no timer, for heartbeatMs %p (no timer holds it)', (heartbeatMs) => {
    const sink = recordingSink();

    const subscription = pipeFrames(NEVER, sink, { heartbeatMs });
    jest.advanceTimersByTime(60_000);

    expect(sink.writes).toEqual([]);
    expect(jest.getTimerCount()).toBe(0);
    subscription.unsubscribe();
  });

  it('should not re-arm the heartbeat when the sink stops the run from inside write', () => {
    const events$ = new Subject<Event>();
    let stop = () => {};
    const sink = recordingSink((_frame, event) => {
      if (event?.type === EventType.TEXT_MESSAGE_CONTENT) stop();
    });

    const subscription = pipeFrames(events$, sink, { heartbeatMs: 1000 });
    stop = () => subscription.unsubscribe();
    events$.next(S);
    events$.next(text('hi'));
    // 'hi' followed the tick's first frame: it is written, and the run stopped, at the tick's end.
    jest.runAllTicks();

    expect(events$.observed).toBe(false);
    expect(jest.getTimerCount()).toBe(0);
    jest.advanceTimersByTime(10_000);
    expect(sink.writes.map(([, event]) => event)).toEqual([S, text('hi')]);
    expect(sink.ends).toBe(0);
  });

  it('should not re-arm the heartbeat when the sink stops the run from inside a heartbeat write', () => {
    let stop = () => {};
    const sink = recordingSink((frame) => {
      if (frame === HEARTBEAT) stop();
    });

    const subscription = pipeFrames(NEVER, sink, { heartbeatMs: 1000 });
    stop = () => subscription.unsubscribe();
    jest.advanceTimersByTime(1000);

    expect(jest.getTimerCount()).toBe(0);
    jest.advanceTimersByTime(10_000);
    expect(sink.writes).toEqual([[HEARTBEAT, undefined]]);
  });

  it('should send no heartbeat for protobuf frames', () => {
    const sink = recordingSink();

    const subscription = pipeFrames(NEVER, sink, { heartbeatMs: 1000, accept: PROTO });

    expect(jest.getTimerCount()).toBe(0);
    jest.advanceTimersByTime(10_000);
    expect(sink.writes).toEqual([]);
    subscription.unsubscribe();
  });

  it('should end with RUN_ERROR "The event stream failed." when the error has no readable message', () => {
    const hostile = {
      get message(): string {
        throw new Error('no reading me');
      },
    };
    let finalized = false;
    const sink = recordingSink();

    pipeFrames(concat(of(S), throwError(() => hostile)).pipe(finalize(() => (finalized = true))), sink, { heartbeatMs: 1000 });

    expect(sink.writes.map(([, event]) => event)).toEqual([S, { type: EventType.RUN_ERROR, message: 'The event stream failed.' }]);
    expect(sink.ends).toBe(1);
    expect(finalized).toBe(true);
    jest.runAllTicks();
    expect(jest.getTimerCount()).toBe(0);
  });

  it('should end with a RUN_ERROR that names the event that cannot be encoded as protobuf', () => {
    const sink = recordingSink();

    pipeFrames(of<Event[]>(S, { type: EventType.RAW, event: {}, rawEvent: { n: BigInt(1) } }, F), sink, { accept: PROTO });

    expect(sink.writes.map(([frame]) => decodeProtoFrame(frame as Uint8Array))).toEqual([
      S,
      {
        type: EventType.RUN_ERROR,
        message:
          'The RAW event cannot be encoded: Unsupported any value type: bigint. Events must be plain JSON: convert BigInts to strings or numbers, break reference cycles and flatten values nested thousands deep.',
      },
    ]);
    expect(sink.ends).toBe(1);
  });
});
