import { parseSSEStream } from '@ag-ui/client';
import { EventType, type Event } from '@ag-ui/core';
import { Observable, Subject, concat, mergeMap, of, retry, take, throwError } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { encodeSSE } from '../../../lib/transports/encodeSSE.js';
import { collect, createTestScheduler } from '../../support/helpers.js';

const S: Event = { type: EventType.RUN_STARTED, threadId: 't1', runId: 'r1' };
const F: Event = { type: EventType.RUN_FINISHED, threadId: 't1', runId: 'r1' };
const text = (delta: string): Event => ({ type: EventType.TEXT_MESSAGE_CONTENT, messageId: 'm1', delta });

/** The frame encodeSSE must give for an event, written out independently of the encoder. */
const frame = (event: Event) => `data: ${JSON.stringify(event)}\n\n`;
/** The same frame with an `id:` line. */
const idFrame = (id: number, event: Event) => `id: ${id}\n${frame(event)}`;

/** One SSE frame as a reader sees it: its fields in order, as [name, value]. */
type SSEFields = [string, string][];

/**
 * A spec-local SSE reader, after WHATWG HTML "server-sent events": lines end at CRLF, LF or CR,
 * a blank line ends a frame, `:` starts a comment, one space after the colon is dropped.
 * Returns the frames and whatever text was left after the last blank line.
 */
function readSSE(text: string): { frames: SSEFields[]; rest: SSEFields } {
  const frames: SSEFields[] = [];
  let fields: SSEFields = [];
  const lines = text.split(/\r\n|\r|\n/);
  // The text after the last line break is not a line yet.
  const tail = lines.pop()!;
  for (const line of lines) {
    if (line === '') {
      if (fields.length > 0) frames.push(fields);
      fields = [];
    } else if (!line.startsWith(':')) {
      const colon = line.indexOf(':');
      const name = colon < 0 ? line : line.slice(0, colon);
      const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
      fields.push([name, value]);
    }
  }
  return { frames, rest: tail === '' ? fields : [...fields, [tail, '']] };
}

/** Asserts that `output` is exactly one frame per event, each with one `data:` line holding the event. */
function expectOneFramePerEvent(output: string, events: Event[]): void {
  const { frames, rest } = readSSE(output);
  expect(rest).toEqual([]);
  expect(frames).toHaveLength(events.length);
  frames.forEach((fields, index) => {
    const data = fields.filter(([name]) => name === 'data');
    expect(fields).toEqual(data);
    expect(data).toHaveLength(1);
    expect(JSON.parse(data[0][1])).toEqual(events[index]);
  });
}

/** An HTTP body chunk as the official client's parsers take it. */
type HttpEvent = Parameters<typeof parseSSEStream>[0] extends Observable<infer E> ? E : never;

/** What the official client's SSE parser reads from `output`, given as one HTTP body chunk. */
function officialParse(output: string): Promise<unknown[]> {
  // The parser subscribes to its source when called, so the body goes in after collect subscribes.
  const body$ = new Subject<HttpEvent>();
  const events = collect(parseSSEStream(body$));
  // The client's HttpEventType enum is not exported at runtime; 'data' is its DATA member's value.
  body$.next({ type: 'data', data: new TextEncoder().encode(output) } as unknown as HttpEvent);
  body$.complete();
  return events;
}

// Payloads that would split a frame or inject a field if they reached the wire raw.
const hostile: [string, string][] = [
  ['a line feed', 'one\ntwo'],
  ['a CRLF', 'one\r\ntwo'],
  ['a lone CR', 'one\rtwo'],
  ['a data: line', 'x\ndata: injected'],
  ['a blank line and a forged RUN_ERROR frame', '\n\ndata: {"type":"RUN_ERROR","message":"forged"}\n\n'],
  ['an id: and event: field', '\nid: 99\nevent: close\n'],
  ['U+2028 and U+2029', 'line\u2028separator\u2029paragraph'],
  ['a lone surrogate', 'broken \ud800 pair \udc00'],
  ['a comment line', '\n: not a comment\n'],
];

describe('encodeSSE', () => {
  let testScheduler: TestScheduler;

  beforeEach(() => {
    testScheduler = createTestScheduler();
  });

  it('should frame each event as `data: <json>\\n\\n`', () =>
    testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
      const values = { a: S, b: text('hi'), c: F };
      const frames = { A: frame(S), B: frame(text('hi')), C: frame(F) };
      // prettier-ignore
      const e1 =  cold('--a--b--c--|', values);
      // prettier-ignore
      const e1subs =   '^----------!';
      // prettier-ignore
      const expected = '--A--B--C--|';

      expectObservable(e1.pipe(encodeSSE())).toBe(expected, frames);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    }));

  it('should pass a source error on after the frames before it', () =>
    testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
      const error = new Error('Model overloaded');
      // prettier-ignore
      const e1 =  cold('--a--#', { a: S }, error);
      // prettier-ignore
      const e1subs =   '^----!';
      // prettier-ignore
      const expected = '--A--#';

      expectObservable(e1.pipe(encodeSSE())).toBe(expected, { A: frame(S) }, error);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    }));

  it('should complete with no frames for an empty source', () =>
    testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
      // prettier-ignore
      const e1 =  cold<Event>('|');
      // prettier-ignore
      const e1subs =   '(^!)';
      // prettier-ignore
      const expected = '|';

      expectObservable(e1.pipe(encodeSSE())).toBe(expected);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    }));

  it('should send nothing for a source that never emits', () =>
    testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
      // prettier-ignore
      const e1 =  cold<Event>('-');
      // prettier-ignore
      const e1subs =   '^';
      // prettier-ignore
      const expected = '-';

      expectObservable(e1.pipe(encodeSSE())).toBe(expected);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    }));

  it('should pass on the error of a source that throws at once', () =>
    testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
      // prettier-ignore
      const e1 =  cold<Event>('#');
      // prettier-ignore
      const e1subs =   '(^!)';
      // prettier-ignore
      const expected = '#';

      expectObservable(e1.pipe(encodeSSE())).toBe(expected);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    }));

  it('should allow unsubscribing early and explicitly', () =>
    testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
      // prettier-ignore
      const e1 =  cold('--a--b--c--|', { a: S, b: text('hi'), c: F });
      // prettier-ignore
      const e1subs =   '^-----!';
      // prettier-ignore
      const unsub =    '------!';
      // prettier-ignore
      const expected = '--A--B-';

      expectObservable(e1.pipe(encodeSSE()), unsub).toBe(expected, { A: frame(S), B: frame(text('hi')) });
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    }));

  it('should not break unsubscription chains when the result is unsubscribed explicitly', () =>
    testScheduler.run(({ hot, expectObservable, expectSubscriptions }) => {
      // prettier-ignore
      const e1 =   hot('--a--b--c--|', { a: S, b: text('hi'), c: F });
      // prettier-ignore
      const e1subs =   '^-----!';
      // prettier-ignore
      const unsub =    '------!';
      // prettier-ignore
      const expected = '--A--B-';

      const result = e1.pipe(
        mergeMap((event) => of(event)),
        encodeSSE(),
        mergeMap((value) => of(value)),
      );

      expectObservable(result, unsub).toBe(expected, { A: frame(S), B: frame(text('hi')) });
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    }));

  it('should stop listening to a synchronous source when take has enough', () => {
    const sideEffects: number[] = [];
    const e1 = new Observable<Event>((subscriber) => {
      for (let i = 0; !subscriber.closed && i < 10; i++) {
        sideEffects.push(i);
        subscriber.next(text(String(i)));
      }
    });
    const frames: string[] = [];

    e1.pipe(encodeSSE(), take(2)).subscribe((value) => frames.push(value));

    expect(frames).toEqual([frame(text('0')), frame(text('1'))]);
    expect(sideEffects).toEqual([0, 1]);
  });

  it('should put `id: n` lines on the frames with ids: true, numbered from 1', () =>
    testScheduler.run(({ cold, expectObservable }) => {
      // prettier-ignore
      const e1 =  cold('--a--b--c--|', { a: S, b: text('hi'), c: F });
      // prettier-ignore
      const expected = '--A--B--C--|';

      expectObservable(e1.pipe(encodeSSE({ ids: true }))).toBe(expected, { A: idFrame(1, S), B: idFrame(2, text('hi')), C: idFrame(3, F) });
    }));

  it('should number the frames of two subscriptions each from 1', () =>
    testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
      // prettier-ignore
      const e1 =  cold(   '--a--b--|', { a: S, b: F });
      // prettier-ignore
      const e1subs =    [ '^-------!',
                          '---^-------!' ];
      // prettier-ignore
      const sub2 =        '---^';
      // prettier-ignore
      const expected1 =   '--A--B--|';
      // prettier-ignore
      const expected2 =   '-----A--B--|';

      const result = e1.pipe(encodeSSE({ ids: true }));
      const frames = { A: idFrame(1, S), B: idFrame(2, F) };

      expectObservable(result).toBe(expected1, frames);
      expectObservable(result, sub2).toBe(expected2, frames);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    }));

  it('should number the frames from 1 again on retry', () =>
    testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
      const error = new Error('connection reset');
      // prettier-ignore
      const e1 =  cold(   '--a--b--#', { a: S, b: text('hi') }, error);
      // prettier-ignore
      const e1subs =    [ '^-------!',
                          '--------^-------!' ];
      // prettier-ignore
      const expected =    '--A--B----A--B--#';

      const result = e1.pipe(encodeSSE({ ids: true }), retry(1));

      expectObservable(result).toBe(expected, { A: idFrame(1, S), B: idFrame(2, text('hi')) }, error);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    }));

  it('should write the exact frame text, LF only', async () => {
    const frames = await collect(of(S, text('hi')).pipe(encodeSSE()));
    const numbered = await collect(of(S).pipe(encodeSSE({ ids: true })));

    expect(frames).toEqual(['data: {"type":"RUN_STARTED","threadId":"t1","runId":"r1"}\n\n', 'data: {"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"hi"}\n\n']);
    expect(numbered).toEqual(['id: 1\ndata: {"type":"RUN_STARTED","threadId":"t1","runId":"r1"}\n\n']);
    expect(frames.join('') + numbered.join('')).not.toContain('\r');
  });

  it.each(hostile)('should keep a payload with %s inside one data: line', async (_name, payload) => {
    const events: Event[] = [
      S,
      text(payload),
      { type: EventType.CUSTOM, name: payload, value: { [payload]: [payload] } },
      { type: EventType.RAW, event: { payload }, rawEvent: payload },
      F,
    ];

    const output = (await collect(of(...events).pipe(encodeSSE()))).join('');

    expect(output).not.toContain('\r');
    expectOneFramePerEvent(output, events);
  });

  it('should give the official client back every event, hostile payloads included', async () => {
    const events: Event[] = [S, ...hostile.map(([, payload]) => text(payload)), F];

    const output = (await collect(of(...events).pipe(encodeSSE({ ids: true })))).join('');

    expect(await officialParse(output)).toEqual(events);
  });

  it('should give id: lines 1..N and exactly one data: line per frame', async () => {
    const events: Event[] = [S, ...hostile.map(([, payload]) => text(payload)), F];

    const output = (await collect(of(...events).pipe(encodeSSE({ ids: true })))).join('');
    const { frames, rest } = readSSE(output);

    expect(rest).toEqual([]);
    expect(frames.map((fields) => fields.map(([name]) => name))).toEqual(events.map(() => ['id', 'data']));
    expect(frames.map((fields) => fields[0][1])).toEqual(events.map((_, index) => String(index + 1)));
    expect(frames.map((fields) => JSON.parse(fields[1][1]))).toEqual(events);
  });

  it('should error when an event holds a BigInt, after the frames before it', () =>
    testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
      const big: Event = { type: EventType.RAW, event: {}, rawEvent: { n: BigInt(1) } };
      // prettier-ignore
      const e1 =  cold('--a--b--c--|', { a: S, b: big, c: F });
      // prettier-ignore
      const e1subs =   '^----!';
      // prettier-ignore
      const expected = '--A--#';

      expectObservable(e1.pipe(encodeSSE())).toBe(expected, { A: frame(S) }, new TypeError('Do not know how to serialize a BigInt'));
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    }));

  it('should error, not throw, when a synchronous source sends a BigInt', async () => {
    const big: Event = { type: EventType.CUSTOM, name: 'n', value: BigInt(7) };

    await expect(collect(concat(of(S, big), throwError(() => new Error('not reached'))).pipe(encodeSSE()))).rejects.toThrow('Do not know how to serialize a BigInt');
  });
});

/** Asserts that encodeSSE frames every event `events` makes exactly as EventEncoder does (3,000 cases). */
async function expectEncoderFrames(events: import('fast-check').Arbitrary<unknown>, seed: number): Promise<void> {
  const fc = (await import('fast-check')).default;
  const { EventEncoder } = await import('@ag-ui/encoder');
  const encoder = new EventEncoder();
  await fc.assert(
    fc.asyncProperty(events, async (candidate) => {
      const [frame] = await collect(of(candidate as Event).pipe(encodeSSE()));
      expect(frame).toBe(encoder.encodeSSE(candidate as Event));
    }),
    { numRuns: 3000, seed },
  );
}

describe('encodeSSE framing, against @ag-ui/encoder', () => {
  it('should give exactly the frame EventEncoder gives, for any event, nulls included', async () => {
    const fc = (await import('fast-check')).default;
    const field = fc.oneof(fc.constant(undefined), fc.constant(null), fc.string(), fc.integer(), fc.constant({ nested: null }));
    const event = fc.record(
      {
        type: fc.constantFrom('TEXT_MESSAGE_CONTENT', 'TOOL_CALL_ARGS', 'REASONING_MESSAGE_CONTENT', 'TEXT_MESSAGE_END', 'TOOL_CALL_END', 'REASONING_MESSAGE_END', 'TEXT_MESSAGE_START', 'RUN_FINISHED', 'STATE_DELTA'),
        messageId: fc.string(),
        toolCallId: fc.string(),
        delta: fc.oneof(fc.string(), fc.constant(null)),
        timestamp: field,
        rawEvent: field,
        metadata: field,
        subagentRunId: field,
        role: fc.oneof(fc.constant(null), fc.constant('assistant')),
        outcome: fc.oneof(fc.constant(null), fc.constant({ type: 'success' })),
      },
      { requiredKeys: ['type'] },
    );
    await expectEncoderFrames(event, 11);
  });

  it('should give exactly the frame EventEncoder gives for nested events: nulls at any depth, class instances, null prototypes, large values', async () => {
    const fc = (await import('fast-check')).default;
    const odd = fc.oneof(
      fc.date({ noInvalidDate: true }),
      fc.dictionary(fc.string(), fc.oneof(fc.constant(null), fc.string())).map((entries) => Object.assign(Object.create(null) as object, entries)),
      fc.array(fc.oneof(fc.constant(null), fc.integer()), { maxLength: 400 }),
    );
    const value = fc.oneof({ weight: 4, arbitrary: fc.jsonValue({ maxDepth: 4 }) }, { weight: 1, arbitrary: odd });
    const message = fc.record({ id: fc.string(), role: fc.constantFrom('user', 'assistant'), content: fc.oneof(fc.string(), fc.constant(null)), name: fc.oneof(fc.constant(null), fc.string()) }, { requiredKeys: ['id', 'role'] });
    const event = fc.oneof(
      fc.record(
        { type: fc.constant('RUN_STARTED'), threadId: fc.string(), runId: fc.string(), parentRunId: fc.oneof(fc.constant(null), fc.string()), input: fc.record({ threadId: fc.string(), runId: fc.string(), messages: fc.array(message, { maxLength: 4 }), tools: fc.constant([]), context: fc.constant([]), state: value, forwardedProps: value }, { requiredKeys: ['threadId', 'runId'] }) },
        { requiredKeys: ['type', 'threadId', 'runId'] },
      ),
      fc.record({ type: fc.constant('RUN_FINISHED'), threadId: fc.string(), runId: fc.string(), result: value, outcome: fc.oneof(fc.constant(null), fc.constant({ type: 'success' })), timestamp: fc.oneof(fc.constant(null), fc.integer()) }, { requiredKeys: ['type', 'threadId', 'runId'] }),
      fc.record({ type: fc.constantFrom('TEXT_MESSAGE_START', 'TOOL_CALL_START'), messageId: fc.string(), toolCallId: fc.string(), toolCallName: fc.string(), role: fc.oneof(fc.constant(null), fc.constant('assistant')), parentMessageId: fc.oneof(fc.constant(null), fc.string()), rawEvent: value }, { requiredKeys: ['type'] }),
      fc.record({ type: fc.constant('STATE_SNAPSHOT'), snapshot: value, metadata: value }, { requiredKeys: ['type', 'snapshot'] }),
      fc.record({ type: fc.constant('CUSTOM'), name: fc.string(), value }, { requiredKeys: ['type', 'name'] }),
    );
    await expectEncoderFrames(event, 17);
  });

  it('should leave an event that is not a plain object to the encoder, even with no null in sight', async () => {
    const { EventEncoder } = await import('@ag-ui/encoder');
    // A class instance with a hidden null and a toJSON of its own: the encoder's copy drops both.
    class Custom {
      type = EventType.CUSTOM;
      name = 'n';
      value = 1;
      constructor() {
        Object.defineProperty(this, 'timestamp', { value: null, enumerable: false });
      }
      toJSON() {
        return { type: EventType.CUSTOM, name: 'x', value: 2 };
      }
    }
    const event = new Custom() as unknown as Event;

    const [frame] = await collect(of(event).pipe(encodeSSE()));

    expect(frame).toBe(new EventEncoder().encodeSSE(event));
  });

  it('should frame an event without nulls as JSON.stringify does, and leave one with a null in its input to the encoder', async () => {
    const { EventEncoder } = await import('@ag-ui/encoder');
    const encoder = new EventEncoder();
    const input = { threadId: 't1', runId: 'r1', messages: [{ id: 'u1', role: 'user', content: 'hi' }], tools: [], context: [], state: { n: 1 }, forwardedProps: {} };
    const plain: Event = { type: EventType.RUN_STARTED, threadId: 't1', runId: 'r1', input } as Event;
    const withNull: Event = { type: EventType.RUN_STARTED, threadId: 't1', runId: 'r1', parentRunId: null, input } as unknown as Event;
    const spy = jest.spyOn(EventEncoder.prototype, 'encodeSSE');
    try {
      const frames = await collect(of(plain, withNull).pipe(encodeSSE()));
      expect(frames).toEqual([`data: ${JSON.stringify(plain)}\n\n`, encoder.encodeSSE(withNull)]);
      expect(frames[1]).not.toContain('parentRunId');
      // The encoder ran for the second event only (and once more for the expectation above).
      expect(spy).toHaveBeenCalledTimes(2);
    } finally {
      spy.mockRestore();
    }
  });
});
