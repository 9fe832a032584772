import { EventType, type Event } from '@ag-ui/core';
import { EMPTY, Observable, concat, merge, mergeMap, of, retry, take, throwError } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import type { AgentEvent } from '../../lib/protocol/agentEvent.js';
import { AguiRxError } from '../../lib/protocol/errors.js';
import { mapSubagentLifecycle } from '../../operators/mapSubagentLifecycle.js';
import { toAgui } from '../../operators/toAgui.js';
import { collect, createTestScheduler, sequentialIds, typesOf } from '../support/helpers.js';
import { runWithOracle } from '../support/oracle.js';

type Fields = Record<string, unknown>;

const chunk = (delta: string, fields: Fields = {}) => ({ type: EventType.TEXT_MESSAGE_CHUNK, delta, ...fields }) as AgentEvent;
const started = (subagentRunId: string, fields: Fields = {}) => ({ type: EventType.SUBAGENT_STARTED, subagentRunId, name: 'a', ...fields }) as AgentEvent;
const finished = (subagentRunId: string, fields: Fields = {}) =>
  ({ type: EventType.SUBAGENT_FINISHED, subagentRunId, outcome: { type: 'success' }, ...fields }) as AgentEvent;
const failed = (subagentRunId: string, message: string, fields: Fields = {}) => ({ type: EventType.SUBAGENT_ERROR, subagentRunId, message, ...fields }) as AgentEvent;

describe('mapSubagentLifecycle', () => {
  let testScheduler: TestScheduler;

  beforeEach(() => {
    testScheduler = createTestScheduler();
  });

  const values = {
    a: chunk('Hel'),
    b: chunk('lo'),
    A: chunk('Hel', { subagentRunId: 's1' }),
    B: chunk('lo', { subagentRunId: 's1' }),
    S: started('s1'),
    F: finished('s1'),
  };
  const operator = () => mapSubagentLifecycle({ name: 'a', subagentRunId: 's1' });

  describe('marbles', () => {
    it('should start, tag every event and finish on completion', () =>
      testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
        // prettier-ignore
        const e1 =  cold('---a---b---|', values);
        // prettier-ignore
        const e1subs =   '^----------!';
        // prettier-ignore
        const expected = 'S--A---B---(F|)';

        expectObservable(e1.pipe(operator())).toBe(expected, values);
        expectSubscriptions(e1.subscriptions).toBe(e1subs);
      }));

    it('should end with SUBAGENT_ERROR and complete when the source errors', () =>
      testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
        // prettier-ignore
        const e1 =  cold('---a---#', values, new AguiRxError('BOOM', 'model down'));
        // prettier-ignore
        const e1subs =   '^------!';
        // prettier-ignore
        const expected = 'S--A---(E|)';

        expectObservable(e1.pipe(operator())).toBe(expected, { ...values, E: failed('s1', 'model down', { code: 'BOOM' }) });
        expectSubscriptions(e1.subscriptions).toBe(e1subs);
      }));

    it('should start and finish an empty source', () =>
      testScheduler.run(({ cold, expectObservable }) => {
        expectObservable(cold<AgentEvent>('|').pipe(operator())).toBe('(SF|)', values);
      }));

    it('should start and stay open on a never source', () =>
      testScheduler.run(({ cold, expectObservable }) => {
        expectObservable(cold<AgentEvent>('-').pipe(operator())).toBe('S', values);
      }));

    it('should start and fail on a throw source', () =>
      testScheduler.run(({ cold, expectObservable }) => {
        expectObservable(cold<AgentEvent>('#', {}, new Error('no key')).pipe(operator())).toBe('(SE|)', { ...values, E: failed('s1', 'no key') });
      }));

    it('should unsubscribe early without a closer', () =>
      testScheduler.run(({ hot, expectObservable, expectSubscriptions }) => {
        // prettier-ignore
        const e1 =   hot('---a---b---|', values);
        // prettier-ignore
        const unsub =    '-----!';
        // prettier-ignore
        const e1subs =   '^----!';
        // prettier-ignore
        const expected = 'S--A--';

        expectObservable(e1.pipe(operator()), unsub).toBe(expected, values);
        expectSubscriptions(e1.subscriptions).toBe(e1subs);
      }));

    it('should unsubscribe the source through a chain', () =>
      testScheduler.run(({ hot, expectObservable, expectSubscriptions }) => {
        // prettier-ignore
        const e1 =   hot('---a---b---|', values);
        // prettier-ignore
        const unsub =    '-----!';
        // prettier-ignore
        const e1subs =   '^----!';
        // prettier-ignore
        const expected = 'S--A--';

        expectObservable(e1.pipe(mergeMap((x) => of(x)), operator(), mergeMap((x) => of(x))), unsub).toBe(expected, values);
        expectSubscriptions(e1.subscriptions).toBe(e1subs);
      }));

    it('should stop a synchronous source taken from', async () => {
      let emitted = 0;
      const source$ = new Observable<AgentEvent>((subscriber) => {
        for (let i = 0; i < 100 && !subscriber.closed; i++) {
          emitted++;
          subscriber.next(chunk(`${i}`));
        }
        subscriber.complete();
      });

      const events = await collect(source$.pipe(operator(), take(3)));

      expect(typesOf(events)).toEqual(['SUBAGENT_STARTED', 'TEXT_MESSAGE_CHUNK', 'TEXT_MESSAGE_CHUNK']);
      expect(emitted).toBe(2);
    });

    it('should mint a fresh id for each subscription and each retry', async () => {
      let attempt = 0;
      const source$ = new Observable<AgentEvent>((subscriber) => {
        subscriber.next(chunk('x'));
        if (attempt++ === 0) subscriber.error(new Error('flaky'));
        else subscriber.complete();
      });
      const wrapped$ = source$.pipe(mapSubagentLifecycle({ name: 'a', generateId: sequentialIds('sub-') }));

      const first = await collect(wrapped$);
      const second = await collect(wrapped$);

      expect(first.map((e) => (e as Fields).subagentRunId)).toEqual(['sub-1', 'sub-1', 'sub-1']);
      expect(second.map((e) => (e as Fields).subagentRunId)).toEqual(['sub-2', 'sub-2', 'sub-2']);
      // An error in the subagent completes the output: a retry above it has nothing to retry.
      expect(typesOf(first)).toEqual(['SUBAGENT_STARTED', 'TEXT_MESSAGE_CHUNK', 'SUBAGENT_ERROR']);
    });

    it('should run a retry inside the wrapper as one invocation', async () => {
      let attempt = 0;
      const source$ = new Observable<AgentEvent>((subscriber) => {
        if (attempt++ === 0) subscriber.error(new Error('flaky'));
        else subscriber.complete();
      });

      const events = await collect(source$.pipe(retry(1), operator()));

      expect(events).toEqual([started('s1'), finished('s1')]);
    });
  });

  describe('rules', () => {
    it('should send every option given and omit the absent ones', async () => {
      const full = await collect(
        EMPTY.pipe(
          mapSubagentLifecycle({ name: 'r', subagentRunId: 's1', description: 'searches', parentToolCallId: 'tc-1', parentMessageId: 'm-1', parentSubagentRunId: 'p-1' }),
        ),
      );
      const bare = await collect(EMPTY.pipe(mapSubagentLifecycle({ name: 'r', generateId: () => 'g-1' })));

      expect(full[0]).toEqual({
        type: EventType.SUBAGENT_STARTED,
        subagentRunId: 's1',
        name: 'r',
        description: 'searches',
        parentToolCallId: 'tc-1',
        parentMessageId: 'm-1',
        parentSubagentRunId: 'p-1',
      });
      expect(bare[0]).toStrictEqual({ type: EventType.SUBAGENT_STARTED, subagentRunId: 'g-1', name: 'r' });
    });

    it('should mint the id with nanoid by default', async () => {
      const [first] = await collect(EMPTY.pipe(mapSubagentLifecycle({ name: 'r' })));

      expect((first as Fields).subagentRunId).toMatch(/^[A-Za-z0-9_-]{21}$/);
    });

    it("should keep a nested subagent's own id and make this one its parent", async () => {
      const events = await collect(
        of(started('n1', { name: 'inner' }), chunk('x', { subagentRunId: 'n1' }), finished('n1'), started('n2', { parentSubagentRunId: 'elsewhere' }), chunk('y')).pipe(operator()),
      );

      expect(events).toEqual([
        started('s1'),
        started('n1', { name: 'inner', parentSubagentRunId: 's1' }),
        chunk('x', { subagentRunId: 'n1' }),
        finished('n1'),
        started('n2', { parentSubagentRunId: 'elsewhere' }),
        chunk('y', { subagentRunId: 's1' }),
        finished('s1'),
      ]);
    });

    it('should pass CUSTOM, RAW, MESSAGES_SNAPSHOT and TOKEN_USAGE untagged and untouched', async () => {
      const custom = { type: EventType.CUSTOM, name: 'progress', value: 1 } as AgentEvent;
      const raw = { type: EventType.RAW, event: { any: 'thing' } } as AgentEvent;
      const snapshot = { type: EventType.MESSAGES_SNAPSHOT, messages: [] } as AgentEvent;
      const usage = { type: 'TOKEN_USAGE', usage: { inputTokens: 1 } } as AgentEvent;

      const events = await collect(of(custom, raw, snapshot, usage).pipe(operator()));

      expect(events.slice(1, -1)).toEqual([custom, raw, snapshot, usage]);
      expect(events[1]).toBe(custom);
    });

    it('should tag other events without mutating them', async () => {
      const state = { type: EventType.STATE_SNAPSHOT, snapshot: { n: 1 } } as AgentEvent;

      const events = await collect(of(state).pipe(operator()));

      expect(events[1]).toEqual({ ...state, subagentRunId: 's1' });
      expect(state).not.toHaveProperty('subagentRunId');
    });

    it("should consume the inner run's RUN_STARTED and end at its RUN_FINISHED, keeping the result", async () => {
      let unsubscribed = false;
      const source$ = concat(
        of<AgentEvent[]>({ type: EventType.RUN_STARTED }, chunk('x'), { type: EventType.RUN_FINISHED, result: { answer: 42 } }, chunk('late')),
        new Observable<AgentEvent>(() => () => void (unsubscribed = true)),
      );

      const events = await collect(source$.pipe(operator()));

      expect(events).toEqual([started('s1'), chunk('x', { subagentRunId: 's1' }), finished('s1', { result: { answer: 42 } })]);
      expect(unsubscribed).toBe(false);
    });

    it('should finish suspended with the interrupt ids of an inner interrupt outcome', async () => {
      const interrupts = [
        { id: 'i-1', reason: 'tool_call' },
        { id: 'i-2', reason: 'input_required' },
      ];

      const events = await collect(of({ type: EventType.RUN_FINISHED, outcome: { type: 'interrupt', interrupts } } as AgentEvent).pipe(operator()));

      expect(events).toEqual([started('s1'), finished('s1', { outcome: { type: 'suspended', interruptIds: ['i-1', 'i-2'] } })]);
    });

    it('should turn an inner RUN_ERROR into SUBAGENT_ERROR and stop the inner stream', async () => {
      let later = false;
      const source$ = new Observable<AgentEvent>((subscriber) => {
        subscriber.next({ type: EventType.RUN_ERROR, message: 'rate limited', code: 'RATE_LIMIT' } as AgentEvent);
        later = !subscriber.closed;
      });

      const events = await collect(source$.pipe(operator()));

      expect(events).toEqual([started('s1'), failed('s1', 'rate limited', { code: 'RATE_LIMIT' })]);
      expect(later).toBe(false);
    });

    it('should turn an inner cancelled outcome into SUBAGENT_ERROR CANCELLED', async () => {
      const events = await collect(of({ type: EventType.RUN_FINISHED, outcome: { type: 'cancelled' } } as AgentEvent).pipe(operator()));

      expect(events[1]).toEqual(failed('s1', 'The subagent run was cancelled.', { code: 'CANCELLED' }));
    });

    it('should describe errors without a message', async () => {
      const fromValue = await collect(throwError(() => 42).pipe(operator()));
      const fromString = await collect(throwError(() => 'quota').pipe(operator()));
      const fromEmpty = await collect(throwError(() => new Error('  ')).pipe(operator()));

      expect(fromValue[1]).toEqual(failed('s1', 'Subagent failed with number 42'));
      expect(fromString[1]).toEqual(failed('s1', 'quota'));
      expect(fromEmpty[1]).toEqual(failed('s1', 'The subagent failed without an error message.'));
    });

    it('should end a subagent that sends a bad event with SUBAGENT_ERROR INVALID_EVENT', async () => {
      const events = await collect(of(null as unknown as AgentEvent, chunk('x', { subagentRunId: 7 })).pipe(operator()));
      const badLane = await collect(of(chunk('x', { subagentRunId: 7 })).pipe(operator()));

      expect(events[1]).toMatchObject({ type: EventType.SUBAGENT_ERROR, code: 'INVALID_EVENT' });
      expect(badLane[1]).toEqual(failed('s1', "TEXT_MESSAGE_CHUNK has 'subagentRunId: number 7', but 'subagentRunId' must be a string.", { code: 'INVALID_EVENT' }));
    });

    // A null subagentRunId used to end the subagent with SUBAGENT_ERROR; it is now read as absent.
    it('should read a null subagentRunId as absent and tag the event with its own', async () => {
      const warn = jest.spyOn(console, 'warn').mockImplementation(() => {});
      try {
        const events = await collect(of(chunk('x', { subagentRunId: null })).pipe(operator()));
        expect(events[1]).toEqual(chunk('x', { subagentRunId: 's1' }));
        expect(events[2]).toMatchObject({ type: EventType.SUBAGENT_FINISHED, subagentRunId: 's1' });
        expect(warn.mock.calls).toEqual([
          ["[agui-rx] TEXT_MESSAGE_CHUNK has 'subagentRunId: null': read as absent, here and in the rest of the run. Omit an optional field rather than sending null (Python: exclude_none=True)."],
        ]);
      } finally {
        warn.mockRestore();
      }
    });

    it.each([
      [{ name: '' }, `mapSubagentLifecycle needs a non-empty string 'name' option (got ""). Name the subagent, e.g. { name: 'researcher' }.`],
      [undefined, `mapSubagentLifecycle needs a non-empty string 'name' option (got undefined). Name the subagent, e.g. { name: 'researcher' }.`],
      [{ name: 'a', subagentRunId: '' }, `mapSubagentLifecycle 'subagentRunId' must be a non-empty string (got ""). Omit it to leave it out.`],
      [{ name: 'a', description: null }, `mapSubagentLifecycle 'description' must be a string (got null). Omit it to leave it out.`],
    ])('should reject bad options %j', (options, message) => {
      expect(() => mapSubagentLifecycle(options as never)).toThrow(new AguiRxError('INVALID_OPTIONS', message));
    });
  });

  describe('conformance (official client)', () => {
    const run = (events$: Observable<AgentEvent>) =>
      runWithOracle(events$.pipe(toAgui({ threadId: 'thread-1', runId: 'run-1', generateId: sequentialIds(), onDiagnostic: () => undefined })));

    it('should let two merged subagents stream text at once, each message with its subagentRunId', async () => {
      const a$ = testInterleaved(['Hel', 'lo'], 'a');
      const b$ = testInterleaved(['Wor', 'ld'], 'b');

      const { messages, events } = await run(
        concat(of(chunk('Starting.')), merge(a$.pipe(mapSubagentLifecycle({ name: 'a', subagentRunId: 'sa' })), b$.pipe(mapSubagentLifecycle({ name: 'b', subagentRunId: 'sb' })))),
      );

      expect(messages).toEqual([
        { id: 'id-1', role: 'assistant', content: 'Starting.' },
        { id: 'id-2', role: 'assistant', content: 'Hello', subagentRunId: 'sa' },
        { id: 'id-3', role: 'assistant', content: 'World', subagentRunId: 'sb' },
      ]);
      // Interleaved: b's message starts before a's ends.
      const types = events.map((e) => `${e.type}${(e as Fields).subagentRunId ? `:${(e as Fields).subagentRunId}` : ''}`);
      expect(types.indexOf('TEXT_MESSAGE_START:sb')).toBeLessThan(types.indexOf('TEXT_MESSAGE_END:sa'));
      expect(types.at(-1)).toBe('RUN_FINISHED');
    });

    it('should carry parentSubagentRunId for nested subagents', async () => {
      const inner$ = of(chunk('deep'));
      const outer$ = concat(of(chunk('shallow')), inner$.pipe(mapSubagentLifecycle({ name: 'inner', subagentRunId: 'n1' })));

      const { messages, events } = await run(outer$.pipe(mapSubagentLifecycle({ name: 'outer', subagentRunId: 'o1' })));

      expect(events.filter((e) => e.type === EventType.SUBAGENT_STARTED)).toEqual([
        { type: EventType.SUBAGENT_STARTED, subagentRunId: 'o1', name: 'outer' },
        { type: EventType.SUBAGENT_STARTED, subagentRunId: 'n1', name: 'inner', parentSubagentRunId: 'o1' },
      ]);
      expect(messages).toEqual([
        { id: 'id-1', role: 'assistant', content: 'shallow', subagentRunId: 'o1' },
        { id: 'id-2', role: 'assistant', content: 'deep', subagentRunId: 'n1' },
      ]);
    });

    it('should report an erroring subagent with SUBAGENT_ERROR and still finish the run', async () => {
      const failing$ = concat(of(chunk('half a thou')), throwError(() => new AguiRxError('UPSTREAM', 'model down')));

      const { messages, events } = await run(concat(failing$.pipe(mapSubagentLifecycle({ name: 'a', subagentRunId: 's1' })), of(chunk('Recovered.'))));

      expect(typesOf(events as Event[])).toEqual([
        'RUN_STARTED',
        'SUBAGENT_STARTED',
        'TEXT_MESSAGE_START',
        'TEXT_MESSAGE_CONTENT',
        'TEXT_MESSAGE_END',
        'SUBAGENT_ERROR',
        'TEXT_MESSAGE_START',
        'TEXT_MESSAGE_CONTENT',
        'TEXT_MESSAGE_END',
        'RUN_FINISHED',
      ]);
      expect(events.find((e) => e.type === EventType.SUBAGENT_ERROR)).toEqual(failed('s1', 'model down', { code: 'UPSTREAM' }));
      expect(messages).toEqual([
        { id: 'id-1', role: 'assistant', content: 'half a thou', subagentRunId: 's1' },
        { id: 'id-2', role: 'assistant', content: 'Recovered.' },
      ]);
    });

    it('should close a suspended subagent and the run', async () => {
      const inner$ = of<AgentEvent[]>(chunk('Approve?'), { type: EventType.RUN_FINISHED, outcome: { type: 'interrupt', interrupts: [{ id: 'i-1', reason: 'tool_call' }] } } as AgentEvent);

      const { events } = await run(inner$.pipe(mapSubagentLifecycle({ name: 'a', subagentRunId: 's1' })));

      expect(events.find((e) => e.type === EventType.SUBAGENT_FINISHED)).toEqual(finished('s1', { outcome: { type: 'suspended', interruptIds: ['i-1'] } }));
      expect(events.at(-1)?.type).toBe('RUN_FINISHED');
    });
  });
});

/** A subagent whose deltas are spread over microtasks, so that two merged subagents interleave. */
function testInterleaved(deltas: string[], _lane: string): Observable<AgentEvent> {
  return new Observable<AgentEvent>((subscriber) => {
    let cancelled = false;
    void (async () => {
      for (const delta of deltas) {
        await Promise.resolve();
        if (cancelled) return;
        subscriber.next(chunk(delta));
      }
      await Promise.resolve();
      subscriber.complete();
    })();
    return () => void (cancelled = true);
  });
}
