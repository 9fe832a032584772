import { EventType, type Event } from '@ag-ui/core';
import { Observable, concatMap, delay, from, mergeMap, of, retry, take, type SchedulerAction, type SchedulerLike, type Subscription } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import type { AgentEvent } from '../../lib/protocol/agentEvent.js';
import { AguiRxError } from '../../lib/protocol/errors.js';
import { coalesceDeltas } from '../../operators/coalesceDeltas.js';
import { toAgui } from '../../operators/toAgui.js';
import { collect, createTestScheduler, sequentialIds, typesOf } from '../support/helpers.js';
import { runWithOracle } from '../support/oracle.js';

const text = (delta: string, fields: Record<string, unknown> = {}): Event =>
  ({ type: EventType.TEXT_MESSAGE_CONTENT, messageId: 'm1', delta, ...fields }) as Event;
const args = (delta: string, fields: Record<string, unknown> = {}): Event => ({ type: EventType.TOOL_CALL_ARGS, toolCallId: 'c1', delta, ...fields }) as Event;
const reasoning = (delta: string, fields: Record<string, unknown> = {}): Event =>
  ({ type: EventType.REASONING_MESSAGE_CONTENT, messageId: 'r1', delta, ...fields }) as Event;

/**
 * A scheduler that runs its work on `inner` and knows which timers are still pending: scheduled,
 * neither run nor cancelled.
 */
function trackedScheduler(inner: SchedulerLike): { scheduler: SchedulerLike; pending: Set<Subscription>; ran: () => number } {
  const pending = new Set<Subscription>();
  let ran = 0;
  const scheduler: SchedulerLike = {
    now: () => inner.now(),
    schedule<T>(work: (this: SchedulerAction<T>, state?: T) => void, delayMs?: number, state?: T): Subscription {
      const subscription: Subscription = inner.schedule(
        function (this: SchedulerAction<T>, value?: T) {
          pending.delete(subscription);
          ran++;
          work.call(this, value);
        },
        delayMs,
        state,
      );
      pending.add(subscription);
      subscription.add(() => pending.delete(subscription));
      return subscription;
    },
  };
  return { scheduler, pending, ran: () => ran };
}

const optionsError = (message: string) => new AguiRxError('INVALID_OPTIONS', message);

describe('coalesceDeltas', () => {
  let testScheduler: TestScheduler;

  beforeEach(() => {
    testScheduler = createTestScheduler();
  });

  const values = {
    a: text('Hel', { timestamp: 1 }),
    b: text('lo', { timestamp: 2 }),
    c: text(' world', { timestamp: 3 }),
    n: text('Bye', { messageId: 'm2' }),
    s: text('sub', { subagentRunId: 'sub-1' }),
    t: args('{"q":'),
    u: args('"rxjs"}'),
    r: reasoning('Think'),
    q: reasoning('ing.'),
    E: { type: EventType.TEXT_MESSAGE_END, messageId: 'm1' } as Event,
    x: { type: EventType.CUSTOM, name: 'progress', value: 50 } as Event,
    w: { type: EventType.RAW, event: { any: 'thing' } } as Event,
    F: { type: EventType.RUN_FINISHED, threadId: 'thread-1', runId: 'run-1' } as Event,
    // Merged: the first delta's fields, the deltas concatenated.
    M: text('Hello', { timestamp: 1 }),
    A: text('Hello world', { timestamp: 1 }),
    T: args('{"q":"rxjs"}'),
    R: reasoning('Thinking.'),
  };

  it('should merge the deltas of one message and send them when the window ends', () =>
    testScheduler.run(({ hot, expectObservable, expectSubscriptions }) => {
      // prettier-ignore
      const e1 =  hot('--a-b-c------|', values);
      // prettier-ignore
      const e1subs =  '^------------!';
      // prettier-ignore
      const expected ='-------A-----|';

      expectObservable(e1.pipe(coalesceDeltas({ intervalMs: 5, scheduler: testScheduler }))).toBe(expected, values);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    }));

  it('should run its timer on asyncScheduler by default, which run mode drives', () =>
    testScheduler.run(({ hot, expectObservable }) => {
      // prettier-ignore
      const e1 =  hot('--a-b-c------|', values);
      // prettier-ignore
      const expected ='-------A-----|';

      expectObservable(e1.pipe(coalesceDeltas({ intervalMs: 5 }))).toBe(expected, values);
    }));

  it('should start the window at the first delta held, not restart it on each delta', () =>
    testScheduler.run(({ hot, expectObservable }) => {
      // prettier-ignore
      const e1 =  hot('--a---b---c-------|', values);
      // prettier-ignore
      const expected ='-------M-------c--|';

      expectObservable(e1.pipe(coalesceDeltas({ intervalMs: 5, scheduler: testScheduler }))).toBe(expected, values);
    }));

  it('should merge tool-call arguments and reasoning deltas the same way', () =>
    testScheduler.run(({ hot, expectObservable }) => {
      // prettier-ignore
      const e1 =  hot('--t-u------r-q------|', values);
      // prettier-ignore
      const expected ='-------T--------R---|';

      expectObservable(e1.pipe(coalesceDeltas({ intervalMs: 5, scheduler: testScheduler }))).toBe(expected, values);
    }));

  it('should send what is held as soon as it reaches maxChars', () =>
    testScheduler.run(({ hot, expectObservable }) => {
      // prettier-ignore
      const e1 =  hot('--a-b-c-a-b--------|', values);
      // prettier-ignore
      const expected ='------A-------M----|';

      // 'Hel' + 'lo' = 5 < 8; + ' world' = 11 >= 8: sent at once. The next window ends at 8 + 6.
      expectObservable(e1.pipe(coalesceDeltas({ intervalMs: 6, maxChars: 8, scheduler: testScheduler }))).toBe(expected, values);
    }));

  it('should send a delta of maxChars or more at once, whole and as it came', () => {
    const long = text('Hello world');
    testScheduler.run(({ hot, expectObservable }) => {
      // prettier-ignore
      const e1 =  hot('--l--a--|', { ...values, l: long });
      // prettier-ignore
      const expected ='--l-----(a|)';

      expectObservable(e1.pipe(coalesceDeltas({ intervalMs: 10, maxChars: 4, scheduler: testScheduler }))).toBe(expected, { ...values, l: long });
    });
    // The same object: a single delta is not copied.
    let sent: Event | undefined;
    of(long)
      .pipe(coalesceDeltas({ intervalMs: 10, maxChars: 4 }))
      .subscribe((event) => (sent = event));
    expect(sent).toBe(long);
  });

  it('should send what is held when a delta of another id arrives', () =>
    testScheduler.run(({ hot, expectObservable }) => {
      // prettier-ignore
      const e1 =  hot('--a-b-n-a---|', values);
      // prettier-ignore
      const expected ='------M-n---(a|)';

      expectObservable(e1.pipe(coalesceDeltas({ intervalMs: 20, scheduler: testScheduler }))).toBe(expected, values);
    }));

  it('should send what is held when a delta of another type arrives', () =>
    testScheduler.run(({ hot, expectObservable }) => {
      // prettier-ignore
      const e1 =  hot('--a-b-t-u-r-q---|', values);
      // prettier-ignore
      const expected ='------M---T-----(R|)';

      expectObservable(e1.pipe(coalesceDeltas({ intervalMs: 20, scheduler: testScheduler }))).toBe(expected, values);
    }));

  it('should not merge deltas of one id from different lanes (subagentRunId)', () =>
    testScheduler.run(({ hot, expectObservable }) => {
      // prettier-ignore
      const e1 =  hot('--a-s-b---|', values);
      // prettier-ignore
      const expected ='----a-s---(b|)';

      expectObservable(e1.pipe(coalesceDeltas({ intervalMs: 20, scheduler: testScheduler }))).toBe(expected, values);
    }));

  it('should send what is held before a lifecycle or structural event, which passes at once', () =>
    testScheduler.run(({ hot, expectObservable }) => {
      // prettier-ignore
      const e1 =  hot('--a-b-E---t-F---|', values);
      // prettier-ignore
      const expected ='------(ME)--(tF)|';

      expectObservable(e1.pipe(coalesceDeltas({ intervalMs: 20, scheduler: testScheduler }))).toBe(expected, values);
    }));

  it('should pass CUSTOM and RAW untouched, after what is held', () =>
    testScheduler.run(({ hot, expectObservable }) => {
      // prettier-ignore
      const e1 =  hot('--a-b-x----w--|', values);
      // prettier-ignore
      const expected ='------(Mx)-w--|';

      expectObservable(e1.pipe(coalesceDeltas({ intervalMs: 20, scheduler: testScheduler }))).toBe(expected, values);
    }));

  it('should keep the first delta’s other fields (timestamp, metadata, rawEvent)', async () => {
    const first = text('Hel', { timestamp: 10, metadata: { model: 'm' }, rawEvent: { id: 1 } });
    const second = text('lo', { timestamp: 20, metadata: { model: 'other' }, rawEvent: { id: 2 } });
    const events = await collect(of(first, second).pipe(coalesceDeltas({ intervalMs: 50 })));
    expect(events).toEqual([text('Hello', { timestamp: 10, metadata: { model: 'm' }, rawEvent: { id: 1 } })]);
    // The inputs are left as they came.
    expect(first).toEqual(text('Hel', { timestamp: 10, metadata: { model: 'm' }, rawEvent: { id: 1 } }));
  });

  it('should send what is held when the source completes', () =>
    testScheduler.run(({ hot, expectObservable, expectSubscriptions }) => {
      // prettier-ignore
      const e1 =  hot('--a-b-|', values);
      // prettier-ignore
      const e1subs =  '^-----!';
      // prettier-ignore
      const expected ='------(M|)';

      expectObservable(e1.pipe(coalesceDeltas({ intervalMs: 20, scheduler: testScheduler }))).toBe(expected, values);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    }));

  it('should send what is held, then raise the error, when the source raises an error', () =>
    testScheduler.run(({ hot, expectObservable, expectSubscriptions }) => {
      // prettier-ignore
      const e1 =  hot('--a-b-#', values);
      // prettier-ignore
      const e1subs =  '^-----!';
      // prettier-ignore
      const expected ='------(M#)';

      expectObservable(e1.pipe(coalesceDeltas({ intervalMs: 20, scheduler: testScheduler }))).toBe(expected, values);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    }));

  it('should complete with an empty source', () =>
    testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
      // prettier-ignore
      const e1 =  cold<Event>('|');
      // prettier-ignore
      const e1subs =   '(^!)';
      // prettier-ignore
      const expected = '|';

      expectObservable(e1.pipe(coalesceDeltas({ intervalMs: 5, scheduler: testScheduler }))).toBe(expected);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    }));

  it('should not complete with a never source', () =>
    testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
      // prettier-ignore
      const e1 =  cold<Event>('-');
      // prettier-ignore
      const e1subs =   '^';
      // prettier-ignore
      const expected = '-';

      expectObservable(e1.pipe(coalesceDeltas({ intervalMs: 5, scheduler: testScheduler }))).toBe(expected);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    }));

  it('should raise an error with a throw source', () =>
    testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
      // prettier-ignore
      const e1 =  cold<Event>('#');
      // prettier-ignore
      const e1subs =   '(^!)';
      // prettier-ignore
      const expected = '#';

      expectObservable(e1.pipe(coalesceDeltas({ intervalMs: 5, scheduler: testScheduler }))).toBe(expected);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    }));

  it('should allow unsubscribing early and explicitly, and cancel the timer', () => {
    const { scheduler, pending, ran } = trackedScheduler(testScheduler);
    testScheduler.run(({ hot, expectObservable, expectSubscriptions }) => {
      // prettier-ignore
      const e1 =  hot('--a-b----------|', values);
      // prettier-ignore
      const unsub =   '-----!          ';
      // prettier-ignore
      const e1subs =  '^----!          ';
      // prettier-ignore
      const expected ='------          ';

      expectObservable(e1.pipe(coalesceDeltas({ intervalMs: 5, scheduler })), unsub).toBe(expected, values);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    });
    // The window would have ended at frame 7: its timer was cancelled, not run into a closed subscriber.
    expect(ran()).toBe(0);
    expect(pending.size).toBe(0);
  });

  it('should not break unsubscription chains when unsubscribed explicitly', () => {
    const { scheduler, pending, ran } = trackedScheduler(testScheduler);
    testScheduler.run(({ hot, expectObservable, expectSubscriptions }) => {
      // prettier-ignore
      const e1 =  hot('--a-b-n--------|', values);
      // prettier-ignore
      const unsub =   '-------!        ';
      // prettier-ignore
      const e1subs =  '^------!        ';
      // prettier-ignore
      const expected ='------M-        ';

      const result = e1.pipe(
        mergeMap((event) => of(event)),
        coalesceDeltas({ intervalMs: 5, scheduler }),
        mergeMap((event) => of(event)),
      );

      expectObservable(result, unsub).toBe(expected, values);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    });
    expect(ran()).toBe(0);
    expect(pending.size).toBe(0);
  });

  it('should cancel the timer of a window that ended early (maxChars, another event)', () => {
    const { scheduler, pending, ran } = trackedScheduler(testScheduler);
    testScheduler.run(({ hot, expectObservable }) => {
      // prettier-ignore
      const e1 =  hot('--a-b-c--a-b-x---|', values);
      // prettier-ignore
      const expected ='------A------(Mx)|';

      expectObservable(e1.pipe(coalesceDeltas({ intervalMs: 20, maxChars: 8, scheduler }))).toBe(expected, values);
    });
    expect(ran()).toBe(0);
    expect(pending.size).toBe(0);
  });

  it('should give the first events of a synchronous source and complete when take ends the output', () => {
    let subscriptions = 0;
    const { scheduler, pending, ran } = trackedScheduler(testScheduler);
    const synchronousObservable = new Observable<Event>((subscriber) => {
      subscriptions++;
      for (let count = 0; !subscriber.closed && count < 10; count++) subscriber.next(text(`${count}`, { messageId: `m${count}` }));
    });

    testScheduler.run(({ expectObservable }) => {
      // prettier-ignore
      const expected = '(ABC|)';

      expectObservable(synchronousObservable.pipe(coalesceDeltas({ intervalMs: 5, scheduler }), take(3))).toBe(expected, {
        A: text('0', { messageId: 'm0' }),
        B: text('1', { messageId: 'm1' }),
        C: text('2', { messageId: 'm2' }),
      });
    });

    expect(subscriptions).toBe(1);
    // The fourth delta's window was cancelled with the subscription.
    expect(ran()).toBe(0);
    expect(pending.size).toBe(0);
  });

  it('should keep a separate buffer for each subscription', () =>
    testScheduler.run(({ hot, expectObservable, expectSubscriptions }) => {
      // prettier-ignore
      const e1 =  hot('--a-b-c---------|', values);
      // prettier-ignore
      const sub2 =    '---^-------------';
      // prettier-ignore
      const e1subs = ['^---------------!',
                      '---^------------!'];
      // prettier-ignore
      const expected1='-------A--------|';
      // prettier-ignore
      const expected2='---------P------|';

      const result = e1.pipe(coalesceDeltas({ intervalMs: 5, scheduler: testScheduler }));

      expectObservable(result).toBe(expected1, values);
      // The late subscriber's window opens at its own first delta, b: b + c at 4 + 5.
      expectObservable(result, sub2).toBe(expected2, { ...values, P: text('lo world', { timestamp: 2 }) });
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    }));

  it('should start from an empty buffer when retried', () =>
    testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
      // prettier-ignore
      const e1 =  cold('--a-b-#           ', values);
      // prettier-ignore
      const e1subs =  ['^-----!           ',
                       '------^-----!     '];
      // prettier-ignore
      const expected = '------M-----(M#)  ';

      expectObservable(e1.pipe(coalesceDeltas({ intervalMs: 20, scheduler: testScheduler }), retry(1))).toBe(expected, values);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    }));

  it('should send what is held, then raise INVALID_EVENT, for an input that is not an event', () =>
    testScheduler.run(({ hot, expectObservable, expectSubscriptions }) => {
      // prettier-ignore
      const e1 =  hot('--a-b-z--|', { ...values, z: null as unknown as Event });
      // prettier-ignore
      const e1subs =  '^-----!   ';
      // prettier-ignore
      const expected ='------(M#)';

      expectObservable(e1.pipe(coalesceDeltas({ intervalMs: 20, scheduler: testScheduler }))).toBe(
        expected,
        values,
        new AguiRxError('INVALID_EVENT', "Received null where an AG-UI event object was expected. Emit objects such as { type: 'TEXT_MESSAGE_CHUNK', delta: 'Hi' }."),
      );
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    }));

  it('should reject bad options at call time with the exact message', () => {
    expect(() => coalesceDeltas({ intervalMs: -1 })).toThrow(
      optionsError("coalesceDeltas 'intervalMs' must be a finite number of milliseconds ≥ 0 (got number -1). Pass how long a delta may wait, e.g. { intervalMs: 50 }."),
    );
    expect(() => coalesceDeltas(undefined as never)).toThrow(/coalesceDeltas 'intervalMs' must be a finite number of milliseconds ≥ 0 \(got undefined\)/);
    expect(() => coalesceDeltas({ intervalMs: Infinity })).toThrow(/'intervalMs' must be a finite number/);
    expect(() => coalesceDeltas({ intervalMs: 5, maxChars: 0 })).toThrow(
      optionsError("coalesceDeltas 'maxChars' must be a whole number ≥ 1 (got number 0). Omit it for no size limit."),
    );
    expect(() => coalesceDeltas({ intervalMs: 5, maxChars: 2.5 })).toThrow(/'maxChars' must be a whole number ≥ 1 \(got number 2.5\)/);
    try {
      coalesceDeltas({ intervalMs: Number.NaN });
    } catch (error) {
      expect(error).toBeInstanceOf(AguiRxError);
      expect((error as AguiRxError).code).toBe('INVALID_OPTIONS');
    }
    expect.assertions(7);
  });

  describe('conformance', () => {
    const run = { threadId: 'thread-1', runId: 'run-1' };
    const agentEvents: AgentEvent[] = [
      { type: EventType.REASONING_MESSAGE_CHUNK, delta: 'The user wants ' },
      { type: EventType.REASONING_MESSAGE_CHUNK, delta: 'the weather ' },
      { type: EventType.REASONING_MESSAGE_CHUNK, delta: 'in Oslo.' },
      { type: EventType.TEXT_MESSAGE_CHUNK, delta: 'Let me ' },
      { type: EventType.TEXT_MESSAGE_CHUNK, delta: 'check ' },
      { type: EventType.TEXT_MESSAGE_CHUNK, delta: 'that.' },
      { type: EventType.TOOL_CALL_CHUNK, toolCallId: 'call-a', toolCallName: 'weather', delta: '{"city":' },
      { type: EventType.TOOL_CALL_CHUNK, toolCallId: 'call-a', delta: '"Oslo"' },
      { type: EventType.TOOL_CALL_CHUNK, toolCallId: 'call-b', toolCallName: 'time', delta: '{"tz":' },
      { type: EventType.TOOL_CALL_CHUNK, toolCallId: 'call-a', delta: '}' },
      { type: EventType.TOOL_CALL_CHUNK, toolCallId: 'call-b', delta: '"CET"}' },
      { type: EventType.TOOL_CALL_RESULT, toolCallId: 'call-a', content: { celsius: -3 } },
      { type: EventType.TOOL_CALL_RESULT, toolCallId: 'call-b', content: '09:00' },
      { type: EventType.TEXT_MESSAGE_CHUNK, delta: 'It is -3 °C ' },
      { type: EventType.TEXT_MESSAGE_CHUNK, delta: 'at 09:00.' },
    ];

    it('should give a run the official client accepts, with the messages it gets without coalescing', async () => {
      const plain = await runWithOracle(from(agentEvents).pipe(toAgui({ ...run, generateId: sequentialIds() })));
      const coalesced = await runWithOracle(from(agentEvents).pipe(toAgui({ ...run, generateId: sequentialIds() }), coalesceDeltas({ intervalMs: 50 })));

      expect(coalesced.messages).toEqual(plain.messages);
      // One content event per message, and the parallel calls' interleaved arguments left as they are.
      const count = (events: readonly { type: string }[], type: string) => typesOf(events).filter((t) => t === type).length;
      expect(count(coalesced.events, EventType.REASONING_MESSAGE_CONTENT)).toBe(1);
      expect(count(coalesced.events, EventType.TEXT_MESSAGE_CONTENT)).toBe(2);
      expect(count(coalesced.events, EventType.TOOL_CALL_ARGS)).toBe(count(plain.events, EventType.TOOL_CALL_ARGS) - 1);
      expect(coalesced.events.length).toBeLessThan(plain.events.length);
    });

    it('should give the same messages when windows end between spaced-out deltas, and when maxChars splits them', async () => {
      const spaced$ = () => from(agentEvents).pipe(concatMap((event) => of(event).pipe(delay(2))));
      const plain = await runWithOracle(spaced$().pipe(toAgui({ ...run, generateId: sequentialIds() })));
      const windowed = await runWithOracle(spaced$().pipe(toAgui({ ...run, generateId: sequentialIds() }), coalesceDeltas({ intervalMs: 1 })));
      const capped = await runWithOracle(from(agentEvents).pipe(toAgui({ ...run, generateId: sequentialIds() }), coalesceDeltas({ intervalMs: 50, maxChars: 10 })));

      expect(windowed.messages).toEqual(plain.messages);
      expect(capped.messages).toEqual(plain.messages);
    });

    it('should pass a run that ends in RUN_ERROR with everything held sent before it', async () => {
      const failing$ = new Observable<AgentEvent>((subscriber) => {
        subscriber.next({ type: EventType.TEXT_MESSAGE_CHUNK, messageId: 'm1', delta: 'Half ' });
        subscriber.next({ type: EventType.TEXT_MESSAGE_CHUNK, messageId: 'm1', delta: 'a sentence' });
        subscriber.error(new Error('model overloaded'));
      });
      const events = await collect(failing$.pipe(toAgui({ ...run, generateId: sequentialIds() }), coalesceDeltas({ intervalMs: 50 })));
      expect(typesOf(events)).toEqual([EventType.RUN_STARTED, EventType.TEXT_MESSAGE_START, EventType.TEXT_MESSAGE_CONTENT, EventType.TEXT_MESSAGE_END, EventType.RUN_ERROR]);
      expect(events[2]).toMatchObject({ delta: 'Half a sentence' });
    });
  });
});
