import { getEventListeners } from 'node:events';
import { EventType, type Event, type RunAgentInput, type RunErrorEvent } from '@ag-ui/core';
import { NEVER, Observable, concat, defer, mergeMap, of, retry, take, tap, throwError } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import type { AgentEvent } from '../../lib/protocol/agentEvent.js';
import { RunAgentInputSchema } from '@ag-ui/core/schemas';
import { checkedInput } from '../../lib/protocol/checkedInput.js';
import { AguiRxError } from '../../lib/protocol/errors.js';
import { mapRunLifecycle } from '../../operators/mapRunLifecycle.js';
import { collect, createTestScheduler, diagnosticsSink, terminals, typesOf } from '../support/helpers.js';
import { runWithOracle } from '../support/oracle.js';

const LATE_RUN_STARTED =
  "Dropped an upstream RUN_STARTED that came after the run had started. Pass parentRunId and input as options of mapRunLifecycle (or toAgui), or emit RUN_STARTED as the agent's first, synchronous event.";

const threadId = 'thread-7';
const runId = 'run-7';
const options = { threadId, runId };

// What every run starts and (by default) ends with.
const S: Event = { type: EventType.RUN_STARTED, threadId, runId, protocolVersion: '1.0' };
const F: Event = { type: EventType.RUN_FINISHED, threadId, runId, outcome: { type: 'success' } };
const C: Event = { type: EventType.RUN_FINISHED, threadId, runId, outcome: { type: 'cancelled' } };

const tick = (value: number): Event => ({ type: EventType.CUSTOM, name: 'tick', value });
const runError = (message: string, code?: string): RunErrorEvent => ({ type: EventType.RUN_ERROR, message, ...(code === undefined ? {} : { code }) });
const invalid = (message: string): RunErrorEvent => runError(message, 'INVALID_EVENT');
/** Bad input, typed as input so that the spec can send it. */
const bad = (value: unknown) => value as AgentEvent;
/** A synchronous source of agent events. */
const source = (...events: AgentEvent[]): Observable<AgentEvent> => of(...events);

// A run with one of everything open: a step, a reasoning span and message, a text message with a
// tool call, and a subagent with a step of its own.
const nested: Record<'a' | 'b' | 'c' | 'd' | 'e' | 'f' | 'g', Event> = {
  a: { type: EventType.STEP_STARTED, stepName: 'plan' },
  b: { type: EventType.REASONING_START, messageId: 'rs1' },
  c: { type: EventType.REASONING_MESSAGE_START, messageId: 'rm1', role: 'reasoning' },
  d: { type: EventType.TEXT_MESSAGE_START, messageId: 'm1', role: 'assistant' },
  e: { type: EventType.TOOL_CALL_START, toolCallId: 'tc1', toolCallName: 'search', parentMessageId: 'm1' },
  f: { type: EventType.SUBAGENT_STARTED, subagentRunId: 'sub-1', name: 'researcher', parentToolCallId: 'tc1' },
  g: { type: EventType.STEP_STARTED, stepName: 'browse', subagentRunId: 'sub-1' },
};
// Their closers, innermost first.
const nestedClosers: Record<'t' | 'x' | 'y' | 'z' | 'q' | 'p', Event> = {
  t: { type: EventType.TOOL_CALL_END, toolCallId: 'tc1' },
  x: { type: EventType.TEXT_MESSAGE_END, messageId: 'm1' },
  y: { type: EventType.REASONING_MESSAGE_END, messageId: 'rm1' },
  z: { type: EventType.REASONING_END, messageId: 'rs1' },
  q: { type: EventType.STEP_FINISHED, stepName: 'browse', subagentRunId: 'sub-1' },
  p: { type: EventType.STEP_FINISHED, stepName: 'plan' },
};

describe('mapRunLifecycle', () => {
  let testScheduler: TestScheduler;

  beforeEach(() => {
    testScheduler = createTestScheduler();
  });

  it('should send RUN_STARTED on subscribe, pass events through, and end with RUN_FINISHED when the source completes', () =>
    testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
      const values = { a: tick(1), b: tick(2), S, F };
      // prettier-ignore
      const e1 =  cold('--a--b--|', values);
      // prettier-ignore
      const e1subs =   '^-------!';
      // prettier-ignore
      const expected = 'S-a--b--(F|)';

      expectObservable(e1.pipe(mapRunLifecycle(options))).toBe(expected, values);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    }));

  it('should turn a source error into RUN_ERROR with its message and code, then complete', () =>
    testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
      const error = Object.assign(new Error('Too many requests'), { code: 'RATE_LIMITED' });
      const values = { a: tick(1), S, E: runError('Too many requests', 'RATE_LIMITED') };
      // prettier-ignore
      const e1 =  cold('--a--#', values, error);
      // prettier-ignore
      const e1subs =   '^----!';
      // prettier-ignore
      const expected = 'S-a--(E|)';

      expectObservable(e1.pipe(mapRunLifecycle(options))).toBe(expected, values);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    }));

  it('should copy the code of an AguiRxError onto RUN_ERROR', () =>
    testScheduler.run(({ cold, expectObservable }) => {
      const values = { S, E: runError('State patch does not apply.', 'INVALID_STATE_DELTA') };
      // prettier-ignore
      const e1 =  cold('---#', values, new AguiRxError('INVALID_STATE_DELTA', 'State patch does not apply.'));
      // prettier-ignore
      const expected = 'S--(E|)';

      expectObservable(e1.pipe(mapRunLifecycle(options))).toBe(expected, values);
    }));

  it('should send RUN_ERROR without a code when the error has no string code', async () => {
    const plain = await collect(throwError(() => new Error('boom')).pipe(mapRunLifecycle(options)));
    const objectCode = await collect(throwError(() => Object.assign(new Error('boom'), { code: { http: 500 } })).pipe(mapRunLifecycle(options)));

    expect(plain).toStrictEqual([S, { type: EventType.RUN_ERROR, message: 'boom' }]);
    expect(objectCode).toStrictEqual([S, { type: EventType.RUN_ERROR, message: 'boom' }]);
  });

  it('should send RUN_STARTED and RUN_FINISHED for an empty source', () =>
    testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
      const values = { S, F };
      // prettier-ignore
      const e1 =  cold<AgentEvent>('|');
      // prettier-ignore
      const e1subs =   '(^!)';
      // prettier-ignore
      const expected = '(SF|)';

      expectObservable(e1.pipe(mapRunLifecycle(options))).toBe(expected, values);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    }));

  it('should send only RUN_STARTED for a source that never emits', () =>
    testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
      const values = { S };
      // prettier-ignore
      const e1 =  cold<AgentEvent>('-');
      // prettier-ignore
      const e1subs =   '^';
      // prettier-ignore
      const expected = 'S-';

      expectObservable(e1.pipe(mapRunLifecycle(options))).toBe(expected, values);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    }));

  it('should send RUN_STARTED and RUN_ERROR for a source that throws at once', () =>
    testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
      // The TestScheduler's default error is the string 'error'.
      const values = { S, E: runError('error') };
      // prettier-ignore
      const e1 =  cold<AgentEvent>('#');
      // prettier-ignore
      const e1subs =   '(^!)';
      // prettier-ignore
      const expected = '(SE|)';

      expectObservable(e1.pipe(mapRunLifecycle(options))).toBe(expected, values);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    }));

  it('should allow unsubscribing early and explicitly', () =>
    testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
      const values = { a: tick(1), b: tick(2), c: tick(3), S };
      // prettier-ignore
      const e1 =  cold('--a--b--c--|', values);
      // prettier-ignore
      const e1subs =   '^-----!';
      // prettier-ignore
      const unsub =    '------!';
      // prettier-ignore
      const expected = 'S-a--b-';

      expectObservable(e1.pipe(mapRunLifecycle(options)), unsub).toBe(expected, values);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    }));

  it('should not break unsubscription chains when the result is unsubscribed explicitly', () =>
    testScheduler.run(({ hot, expectObservable, expectSubscriptions }) => {
      const values = { a: tick(1), b: tick(2), c: tick(3), S };
      // prettier-ignore
      const e1 =   hot('--a--b--c--|', values);
      // prettier-ignore
      const e1subs =   '^-----!';
      // prettier-ignore
      const unsub =    '------!';
      // prettier-ignore
      const expected = 'S-a--b-';

      const result = e1.pipe(
        mergeMap((event) => of(event)),
        mapRunLifecycle(options),
        mergeMap((event) => of(event)),
      );

      expectObservable(result, unsub).toBe(expected, values);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    }));

  it('should stop a source that emits in one frame when take has enough', () =>
    testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
      const values = { a: tick(1), b: tick(2), c: tick(3), S };
      // prettier-ignore
      const e1 =  cold('(abc|)', values);
      // prettier-ignore
      const e1subs =   '(^!)';
      // prettier-ignore
      const expected = '(Sa|)';

      expectObservable(e1.pipe(mapRunLifecycle(options), take(2))).toBe(expected, values);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    }));

  it('should stop listening to a synchronous source when take has enough', () => {
    const sideEffects: number[] = [];
    const e1 = new Observable<AgentEvent>((subscriber) => {
      for (let i = 0; !subscriber.closed && i < 10; i++) {
        sideEffects.push(i);
        subscriber.next(tick(i));
      }
    });
    const events: Event[] = [];

    e1.pipe(mapRunLifecycle(options), take(3)).subscribe((event) => events.push(event));

    // RUN_STARTED comes with the first event, so take(3) has enough after two.
    expect(events).toStrictEqual([S, tick(0), tick(1)]);
    expect(sideEffects).toEqual([0, 1]);
  });

  it('should stop a synchronous source at an upstream RUN_FINISHED', () => {
    const sideEffects: number[] = [];
    const e1 = new Observable<AgentEvent>((subscriber) => {
      for (let i = 0; !subscriber.closed && i < 10; i++) {
        sideEffects.push(i);
        subscriber.next(i === 2 ? { type: EventType.RUN_FINISHED } : tick(i));
      }
    });
    const events: Event[] = [];

    e1.pipe(mapRunLifecycle(options)).subscribe((event) => events.push(event));

    expect(events).toStrictEqual([S, tick(0), tick(1), F]);
    expect(sideEffects).toEqual([0, 1, 2]);
  });

  it('should keep the state of two subscriptions apart', () =>
    testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
      const values = {
        m: { type: EventType.TEXT_MESSAGE_START, messageId: 'm1', role: 'assistant' },
        x: { type: EventType.TEXT_MESSAGE_END, messageId: 'm1' },
        S,
        F,
      } satisfies Record<string, Event>;
      // prettier-ignore
      const e1 =  cold(   '--m--|', values);
      // prettier-ignore
      const e1subs =    [ '^----!',
                          '---^----!' ];
      // prettier-ignore
      const sub2 =        '---^';
      // prettier-ignore
      const expected1 =   'S-m--(xF|)';
      // prettier-ignore
      const expected2 =   '---S-m--(xF|)';

      const result = e1.pipe(mapRunLifecycle(options));

      // Each subscription closes its own open message, once, and sends its own RUN_STARTED.
      expectObservable(result).toBe(expected1, values);
      expectObservable(result, sub2).toBe(expected2, values);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    }));

  it('should start a fresh run on retry', () =>
    testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
      const values = {
        m: { type: EventType.TEXT_MESSAGE_START, messageId: 'm1', role: 'assistant' },
        x: { type: EventType.TEXT_MESSAGE_END, messageId: 'm1' },
        S,
        F,
      } satisfies Record<string, Event>;
      // prettier-ignore
      const e1 =  cold(   '-----m--|', values);
      // prettier-ignore
      const e1subs =    [ '^-------!',
                          '--------^-------!' ];
      // prettier-ignore
      const expected =    'S----m--(xS)-m--(xF|)';

      // The transport fails on the first attempt's RUN_FINISHED; retry subscribes again.
      let attempts = 0;
      const result = e1.pipe(
        mapRunLifecycle(options),
        tap((event) => {
          if (event.type === EventType.RUN_FINISHED && ++attempts === 1) throw new Error('connection reset');
        }),
        retry(1),
      );

      expectObservable(result).toBe(expected, values);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    }));

  it('should end at an upstream RUN_FINISHED, unsubscribe upstream, and send nothing after it', () =>
    testScheduler.run(({ hot, expectObservable, expectSubscriptions }) => {
      const values = { a: tick(1), b: tick(2), c: tick(3), f: { type: EventType.RUN_FINISHED }, S, F } satisfies Record<string, AgentEvent>;
      // prettier-ignore
      const e1 =   hot('-^-a-f-b-c-|', values);
      // prettier-ignore
      const e1subs =    '^---!';
      // prettier-ignore
      const expected =  'S-a-(F|)';

      expectObservable(e1.pipe(mapRunLifecycle(options))).toBe(expected, values);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    }));

  it('should end at an upstream RUN_ERROR, unsubscribe upstream, and send nothing after it', () =>
    testScheduler.run(({ hot, expectObservable, expectSubscriptions }) => {
      const values = { a: tick(1), b: tick(2), e: runError('Model overloaded', 'OVERLOADED'), S };
      // prettier-ignore
      const e1 =   hot('-^-a-e-b-|', values);
      // prettier-ignore
      const e1subs =    '^---!';
      // prettier-ignore
      const expected =  'S-a-(e|)';

      expectObservable(e1.pipe(mapRunLifecycle(options))).toBe(expected, values);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    }));

  it('should send exactly one terminal event, last, whatever follows upstream', () =>
    testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
      const values = { f: { type: EventType.RUN_FINISHED }, e: runError('late'), S, F } satisfies Record<string, AgentEvent>;
      // prettier-ignore
      const e1 =  cold('-f-e-f-#', values);
      // prettier-ignore
      const e1subs =   '^!';
      // prettier-ignore
      const expected = 'S(F|)';

      expectObservable(e1.pipe(mapRunLifecycle(options))).toBe(expected, values);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    }));

  it('should send RUN_STARTED with protocolVersion "1.0", the ids, parentRunId and input', () =>
    testScheduler.run(({ cold, expectObservable }) => {
      const input: RunAgentInput = {
        threadId,
        runId,
        messages: [{ id: 'u1', role: 'user', content: 'What is the weather?' }],
        tools: [],
        context: [],
      };
      const values = { a: tick(1), S: { ...S, parentRunId: 'run-6', input }, F };
      // prettier-ignore
      const e1 =  cold('--a--|', values);
      // prettier-ignore
      const expected = 'S-a--(F|)';

      expectObservable(e1.pipe(mapRunLifecycle({ ...options, parentRunId: 'run-6', input }))).toBe(expected, values);
    }));

  it('should leave parentRunId and input out of RUN_STARTED when not given', async () => {
    const [started] = await collect(of(tick(1)).pipe(mapRunLifecycle(options)));

    expect(started).toStrictEqual({ type: EventType.RUN_STARTED, threadId, runId, protocolVersion: '1.0' });
  });

  it('should merge an upstream RUN_STARTED sent first into the one RUN_STARTED, with its metadata and our ids', async () => {
    const upstream = {
      type: EventType.RUN_STARTED,
      threadId: 'agent-thread',
      runId: 'agent-run',
      metadata: { framework: 'langgraph' },
      timestamp: 1700000000000,
    } satisfies AgentEvent;

    const events = await collect(source(upstream, tick(1)).pipe(mapRunLifecycle(options)));

    expect(events).toStrictEqual([{ ...S, metadata: { framework: 'langgraph' }, timestamp: 1700000000000 }, tick(1), F]);
  });

  it("should keep an upstream RUN_STARTED's parentRunId and input unless the options give their own", async () => {
    const agentInput: RunAgentInput = { threadId, runId, messages: [], tools: [], context: [] };
    const ownInput: RunAgentInput = { ...agentInput, messages: [{ id: 'u1', role: 'user', content: 'Hi' }] };
    const upstream = { type: EventType.RUN_STARTED, parentRunId: 'run-5', input: agentInput } satisfies AgentEvent;

    const [fromUpstream] = await collect(source(upstream).pipe(mapRunLifecycle(options)));
    const [fromOptions] = await collect(source(upstream).pipe(mapRunLifecycle({ ...options, parentRunId: 'run-6', input: ownInput })));

    expect(fromUpstream).toStrictEqual({ ...S, parentRunId: 'run-5', input: agentInput });
    expect(fromOptions).toStrictEqual({ ...S, parentRunId: 'run-6', input: ownInput });
  });

  it("should take an upstream RUN_STARTED's own fields, but never its '__proto__', as its prototype or a field", async () => {
    // As JSON.parse makes it: '__proto__' and 'constructor' are own fields of the parsed object.
    const upstream = JSON.parse('{"type":"RUN_STARTED","threadId":"x","runId":"y","__proto__":{"polluted":true},"constructor":"c","metadata":{"k":1}}') as AgentEvent;

    const [started] = (await collect(source(upstream, tick(1)).pipe(mapRunLifecycle(options)))) as unknown as Record<string, unknown>[];
    // And the official client takes the stream.
    await runWithOracle(source(upstream, tick(1)).pipe(mapRunLifecycle(options)));

    expect(Object.getPrototypeOf(started)).toBe(Object.prototype);
    expect(started.polluted).toBeUndefined();
    expect(Object.keys(started)).not.toContain('__proto__');
    expect(started).toMatchObject({ ...S, constructor: 'c', metadata: { k: 1 } });
  });

  it("should check an upstream RUN_STARTED's own input, and not one the options replace", async () => {
    const ownInput: RunAgentInput = { threadId, runId, messages: [{ id: 'u1', role: 'user', content: 'Hi' }], tools: [], context: [] };
    // Not a RunAgentInput: `messages` is a string.
    const upstream = { type: EventType.RUN_STARTED, input: { threadId, runId, messages: 'Hi', tools: [], context: [] } } as unknown as AgentEvent;

    const kept = await collect(source(upstream).pipe(mapRunLifecycle(options)));
    const replaced = await runWithOracle(source(upstream, tick(1)).pipe(mapRunLifecycle({ ...options, input: ownInput })));

    expect(terminals(kept)).toMatchObject([{ type: EventType.RUN_ERROR, code: 'INVALID_EVENT', message: expect.stringContaining('RUN_STARTED is not a valid AG-UI event') }]);
    expect(replaced.events[0]).toStrictEqual({ ...S, input: ownInput });
    expect(typesOf(replaced.events)).toEqual([EventType.RUN_STARTED, EventType.CUSTOM, EventType.RUN_FINISHED]);
  });

  it('should not duplicate an upstream RUN_STARTED that arrives after the subscription, and say so', () => {
    const { onDiagnostic, messages } = diagnosticsSink();
    testScheduler.run(({ cold, expectObservable }) => {
      const values = { s: { type: EventType.RUN_STARTED }, a: tick(1), S, F } satisfies Record<string, AgentEvent>;
      // prettier-ignore
      const e1 =  cold('s-a-|', values);
      // prettier-ignore
      const expected = 'S-a-(F|)';

      expectObservable(e1.pipe(mapRunLifecycle({ ...options, onDiagnostic }))).toBe(expected, values);
    });
    expect(messages).toEqual([LATE_RUN_STARTED]);
  });

  it('should drop a later upstream RUN_STARTED, and say so', () => {
    const { onDiagnostic, messages } = diagnosticsSink();
    testScheduler.run(({ cold, expectObservable }) => {
      const values = { s: { type: EventType.RUN_STARTED, metadata: { again: true } }, a: tick(1), b: tick(2), S, F } satisfies Record<string, AgentEvent>;
      // prettier-ignore
      const e1 =  cold('--a-s-b-|', values);
      // prettier-ignore
      const expected = 'S-a---b-(F|)';

      expectObservable(e1.pipe(mapRunLifecycle({ ...options, onDiagnostic }))).toBe(expected, values);
    });
    expect(messages).toEqual([LATE_RUN_STARTED]);
  });

  it("should merge an upstream RUN_FINISHED: its result and outcome kept, threadId and runId the run's own", () =>
    testScheduler.run(({ cold, expectObservable }) => {
      const outcome = { type: 'interrupt' as const, interrupts: [{ id: 'i1', reason: 'approval', message: 'Send the email?' }] };
      const values = {
        a: tick(1),
        f: { type: EventType.RUN_FINISHED, threadId: 'agent-thread', runId: 'agent-run', result: { sent: false }, outcome },
        G: { type: EventType.RUN_FINISHED, threadId, runId, result: { sent: false }, outcome },
        S,
      } satisfies Record<string, AgentEvent>;
      // prettier-ignore
      const e1 =  cold('--a-f-|', values);
      // prettier-ignore
      const expected = 'S-a-(G|)';

      expectObservable(e1.pipe(mapRunLifecycle(options))).toBe(expected, values);
    }));

  it('should add the pending tool calls of the stream to an upstream success outcome', () =>
    testScheduler.run(({ cold, expectObservable }) => {
      const values = {
        k: { type: EventType.TOOL_CALL_START, toolCallId: 'tc1', toolCallName: 'confirm' },
        f: { type: EventType.RUN_FINISHED, result: 'waiting', outcome: { type: 'success', pendingToolCallIds: ['tc0'] } },
        l: { type: EventType.TOOL_CALL_END, toolCallId: 'tc1' },
        G: { type: EventType.RUN_FINISHED, threadId, runId, result: 'waiting', outcome: { type: 'success', pendingToolCallIds: ['tc0', 'tc1'] } },
        S,
      } satisfies Record<string, AgentEvent>;
      // prettier-ignore
      const e1 =  cold('-k-f-|', values);
      // prettier-ignore
      const expected = 'Sk-(lG|)';

      expectObservable(e1.pipe(mapRunLifecycle(options))).toBe(expected, values);
    }));

  it('should pass an upstream RUN_ERROR as the one terminal event, after closing what is open', () =>
    testScheduler.run(({ cold, expectObservable }) => {
      const values = {
        m: { type: EventType.TEXT_MESSAGE_START, messageId: 'm1', role: 'assistant' },
        e: runError('Model overloaded', 'OVERLOADED'),
        x: { type: EventType.TEXT_MESSAGE_END, messageId: 'm1' },
        S,
      } satisfies Record<string, AgentEvent>;
      // prettier-ignore
      const e1 =  cold('-m-e-|', values);
      // prettier-ignore
      const expected = 'Sm-(xe|)';

      expectObservable(e1.pipe(mapRunLifecycle(options))).toBe(expected, values);
    }));

  it('should close what is open, innermost first, before RUN_FINISHED', () =>
    testScheduler.run(({ cold, expectObservable }) => {
      const values = {
        ...nested,
        ...nestedClosers,
        w: { type: EventType.SUBAGENT_FINISHED, subagentRunId: 'sub-1', outcome: { type: 'success' } },
        S,
        P: { type: EventType.RUN_FINISHED, threadId, runId, outcome: { type: 'success', pendingToolCallIds: ['tc1'] } },
      } satisfies Record<string, Event>;
      // prettier-ignore
      const e1 =  cold('-abcdefg-|', values);
      // prettier-ignore
      const expected = 'Sabcdefg-(txyzqpwP|)';

      expectObservable(e1.pipe(mapRunLifecycle(options))).toBe(expected, values);
    }));

  it('should close what is open before RUN_ERROR, ending subagents with SUBAGENT_ERROR', () =>
    testScheduler.run(({ cold, expectObservable }) => {
      const values = {
        ...nested,
        ...nestedClosers,
        W: { type: EventType.SUBAGENT_ERROR, subagentRunId: 'sub-1', message: 'Search backend down' },
        S,
        E: runError('Search backend down'),
      } satisfies Record<string, Event>;
      // prettier-ignore
      const e1 =  cold('-abcdefg-#', values, new Error('Search backend down'));
      // prettier-ignore
      const expected = 'Sabcdefg-(txyzqpWE|)';

      expectObservable(e1.pipe(mapRunLifecycle(options))).toBe(expected, values);
    }));

  it('should not close again what upstream closed', () =>
    testScheduler.run(({ cold, expectObservable }) => {
      const values = {
        m: { type: EventType.TEXT_MESSAGE_START, messageId: 'm1', role: 'assistant' },
        x: { type: EventType.TEXT_MESSAGE_END, messageId: 'm1' },
        a: { type: EventType.STEP_STARTED, stepName: 'plan' },
        p: { type: EventType.STEP_FINISHED, stepName: 'plan' },
        S,
        F,
      } satisfies Record<string, Event>;
      // prettier-ignore
      const e1 =  cold('-amxp-|', values);
      // prettier-ignore
      const expected = 'Samxp-(F|)';

      expectObservable(e1.pipe(mapRunLifecycle(options))).toBe(expected, values);
    }));

  it('should list the tool calls left without a TOOL_CALL_RESULT as pendingToolCallIds', () =>
    testScheduler.run(({ cold, expectObservable }) => {
      const values = {
        k: { type: EventType.TOOL_CALL_START, toolCallId: 'tc1', toolCallName: 'search' },
        l: { type: EventType.TOOL_CALL_END, toolCallId: 'tc1' },
        n: { type: EventType.TOOL_CALL_START, toolCallId: 'tc2', toolCallName: 'ask_user' },
        o: { type: EventType.TOOL_CALL_END, toolCallId: 'tc2' },
        r: { type: EventType.TOOL_CALL_RESULT, messageId: 'res1', toolCallId: 'tc1', content: 'found 3 results' },
        S,
        P: { type: EventType.RUN_FINISHED, threadId, runId, outcome: { type: 'success', pendingToolCallIds: ['tc2'] } },
      } satisfies Record<string, Event>;
      // prettier-ignore
      const e1 =  cold('-klnor-|', values);
      // prettier-ignore
      const expected = 'Sklnor-(P|)';

      expectObservable(e1.pipe(mapRunLifecycle(options))).toBe(expected, values);
    }));

  it('should end with outcome { type: "success" } and no pendingToolCallIds when every call has a result', async () => {
    const events = await collect(
      source(
        { type: EventType.TOOL_CALL_START, toolCallId: 'tc1', toolCallName: 'search' },
        { type: EventType.TOOL_CALL_END, toolCallId: 'tc1' },
        { type: EventType.TOOL_CALL_RESULT, messageId: 'res1', toolCallId: 'tc1', content: 'ok' },
      ).pipe(mapRunLifecycle(options)),
    );

    expect(terminals(events)).toStrictEqual([{ type: EventType.RUN_FINISHED, threadId, runId, outcome: { type: 'success' } }]);
  });

  it('should consume TOKEN_USAGE events and sum them per provider and model onto RUN_FINISHED usage', () =>
    testScheduler.run(({ cold, expectObservable }) => {
      const values = {
        a: tick(1),
        u: { type: 'TOKEN_USAGE', usage: { provider: 'openai', model: 'gpt-4o', inputTokens: 10, outputTokens: 5, totalTokens: 15 } },
        v: {
          type: 'TOKEN_USAGE',
          usage: [
            { provider: 'openai', model: 'gpt-4o', inputTokens: 3, outputTokens: 2, totalTokens: 5 },
            { provider: 'anthropic', model: 'claude-sonnet-4', inputTokens: 7, outputTokens: 1 },
          ],
        },
        S,
        U: {
          ...F,
          usage: [
            { provider: 'openai', model: 'gpt-4o', inputTokens: 13, outputTokens: 7, totalTokens: 20 },
            { provider: 'anthropic', model: 'claude-sonnet-4', inputTokens: 7, outputTokens: 1 },
          ],
        },
      } satisfies Record<string, AgentEvent>;
      // prettier-ignore
      const e1 =  cold('-u-a-v-|', values);
      // prettier-ignore
      const expected = 'S--a---(U|)';

      expectObservable(e1.pipe(mapRunLifecycle(options))).toBe(expected, values);
    }));

  it('should include the usage of an upstream RUN_FINISHED in the sum', () =>
    testScheduler.run(({ cold, expectObservable }) => {
      const values = {
        u: { type: 'TOKEN_USAGE', usage: { provider: 'openai', model: 'gpt-4o', inputTokens: 10, outputTokens: 5 } },
        f: { type: EventType.RUN_FINISHED, result: 'done', usage: [{ provider: 'openai', model: 'gpt-4o', inputTokens: 1, outputTokens: 2 }] },
        S,
        U: { ...F, result: 'done', usage: [{ provider: 'openai', model: 'gpt-4o', inputTokens: 11, outputTokens: 7 }] },
      } satisfies Record<string, AgentEvent>;
      // prettier-ignore
      const e1 =  cold('-u-f-|', values);
      // prettier-ignore
      const expected = 'S--(U|)';

      expectObservable(e1.pipe(mapRunLifecycle(options))).toBe(expected, values);
    }));

  it('should put the usage reported so far on RUN_ERROR when the run errors', () =>
    testScheduler.run(({ cold, expectObservable }) => {
      const values = {
        u: { type: 'TOKEN_USAGE', usage: [{ provider: 'openai', model: 'gpt-4o', inputTokens: 10 }, { provider: 'openai', model: 'gpt-4o', inputTokens: 4 }] },
        S,
        E: { ...runError('error'), usage: [{ provider: 'openai', model: 'gpt-4o', inputTokens: 14 }] },
      } satisfies Record<string, AgentEvent>;
      // prettier-ignore
      const e1 =  cold('-u-#', values);
      // prettier-ignore
      const expected = 'S--(E|)';

      expectObservable(e1.pipe(mapRunLifecycle(options))).toBe(expected, values);
    }));

  it('should include the usage of an upstream RUN_ERROR in the sum', () =>
    testScheduler.run(({ cold, expectObservable }) => {
      const values = {
        u: { type: 'TOKEN_USAGE', usage: { model: 'llama-3', outputTokens: 9 } },
        e: { ...runError('Context window exceeded', 'CONTEXT_LENGTH'), usage: [{ model: 'llama-3', outputTokens: 1 }] },
        S,
        E: { ...runError('Context window exceeded', 'CONTEXT_LENGTH'), usage: [{ model: 'llama-3', outputTokens: 10 }] },
      } satisfies Record<string, AgentEvent>;
      // prettier-ignore
      const e1 =  cold('-u-e-|', values);
      // prettier-ignore
      const expected = 'S--(E|)';

      expectObservable(e1.pipe(mapRunLifecycle(options))).toBe(expected, values);
    }));

  it('should end with RUN_FINISHED cancelled when the signal aborts, after closing what is open, and unsubscribe upstream', () =>
    testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
      const controller = new AbortController();
      const values = {
        m: { type: EventType.TEXT_MESSAGE_START, messageId: 'm1', role: 'assistant' },
        k: { type: EventType.TOOL_CALL_START, toolCallId: 'tc1', toolCallName: 'search', parentMessageId: 'm1' },
        a: tick(1),
        t: { type: EventType.TOOL_CALL_END, toolCallId: 'tc1' },
        x: { type: EventType.TEXT_MESSAGE_END, messageId: 'm1' },
        S,
        C,
      } satisfies Record<string, Event>;
      // prettier-ignore
      const e1 =  cold('-m-k---a-|', values);
      // prettier-ignore
      const abort =    '-----x';
      // prettier-ignore
      const e1subs =   '^----!';
      // prettier-ignore
      const expected = 'Sm-k-(txC|)';

      cold(abort).subscribe(() => controller.abort());

      expectObservable(e1.pipe(mapRunLifecycle({ ...options, signal: controller.signal }))).toBe(expected, values);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    }));

  it('should send RUN_STARTED and RUN_FINISHED cancelled, never subscribing upstream, when the signal is already aborted', () =>
    testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
      const controller = new AbortController();
      controller.abort();
      const values = { a: tick(1), S, C };
      // prettier-ignore
      const e1 =  cold('--a--|', values);
      // prettier-ignore
      const expected = '(SC|)';

      expectObservable(e1.pipe(mapRunLifecycle({ ...options, signal: controller.signal }))).toBe(expected, values);
      expectSubscriptions(e1.subscriptions).toBe([]);
    }));

  it('should remove its abort listener on unsubscribe, so that a later abort does nothing', () => {
    const controller = new AbortController();
    const listeners: number[] = [];
    testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
      const values = { a: tick(1), b: tick(2), S };
      // prettier-ignore
      const e1 =  cold('--a--b--|', values);
      // prettier-ignore
      const unsub =    '---!';
      // prettier-ignore
      const probe =    '--x---x';
      // prettier-ignore
      const e1subs =   '^--!';
      // prettier-ignore
      const expected = 'S-a';

      cold(probe).subscribe(() => listeners.push(getEventListeners(controller.signal, 'abort').length));
      cold('-----x').subscribe(() => controller.abort());

      expectObservable(e1.pipe(mapRunLifecycle({ ...options, signal: controller.signal })), unsub).toBe(expected, values);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    });

    // One listener while the run was live, none after it (and after the abort).
    expect(listeners).toEqual([1, 0]);
  });

  it('should remove its abort listener when the run ends', async () => {
    const controller = new AbortController();

    const events = await collect(of(tick(1)).pipe(mapRunLifecycle({ ...options, signal: controller.signal })));
    controller.abort();

    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
    expect(events).toStrictEqual([S, tick(1), F]);
  });

  it('should omit provider and model from the summed usage when the reports had none', async () => {
    const events = await collect(
      source({ type: 'TOKEN_USAGE', usage: { inputTokens: 3 } }, { type: 'TOKEN_USAGE', usage: [{ inputTokens: 4, outputTokens: 2 }] }).pipe(
        mapRunLifecycle(options),
      ),
    );

    // Strict: no `provider: undefined` keys.
    expect(terminals(events)).toStrictEqual([{ ...F, usage: [{ inputTokens: 7, outputTokens: 2 }] }]);
  });

  // null in an optional field used to end the run with RUN_ERROR; it is now read as absent.
  describe('null in an optional field', () => {
    const nullDiagnostic = (type: string, field: string) =>
      `${type} has '${field}: null': read as absent, here and in the rest of the run. Omit an optional field rather than sending null (Python: exclude_none=True).`;

    it('should read it as absent on each kind of event, with one diagnostic per field', () => {
      const sink = diagnosticsSink();
      testScheduler.run(({ cold, expectObservable }) => {
        const values = {
          a: bad({ type: EventType.STEP_STARTED, stepName: 'plan', subagentRunId: null }),
          m: { type: EventType.TEXT_MESSAGE_START, messageId: 'm1', role: 'assistant' },
          c: bad({ type: EventType.TEXT_MESSAGE_CONTENT, messageId: 'm1', delta: 'Hi', metadata: null }),
          d: bad({ type: EventType.TEXT_MESSAGE_CONTENT, messageId: 'm1', delta: '!', metadata: null }),
          x: { type: EventType.TEXT_MESSAGE_END, messageId: 'm1' },
          f: bad({ type: EventType.RUN_FINISHED, outcome: null, result: null }),
          S,
          A: { type: EventType.STEP_STARTED, stepName: 'plan' },
          C: { type: EventType.TEXT_MESSAGE_CONTENT, messageId: 'm1', delta: 'Hi' },
          D: { type: EventType.TEXT_MESSAGE_CONTENT, messageId: 'm1', delta: '!' },
          p: { type: EventType.STEP_FINISHED, stepName: 'plan' },
          F,
        } satisfies Record<string, AgentEvent>;
        // prettier-ignore
        const e1 =  cold('--a-m-c-d-x-f', values);
        // prettier-ignore
        const expected = 'S-A-m-C-D-x-(pF|)';

        expectObservable(e1.pipe(mapRunLifecycle({ ...options, onDiagnostic: sink.onDiagnostic }))).toBe(expected, values);
      });
      expect(sink.messages).toEqual([
        nullDiagnostic('STEP_STARTED', 'subagentRunId'),
        nullDiagnostic('TEXT_MESSAGE_CONTENT', 'metadata'),
        nullDiagnostic('RUN_FINISHED', 'outcome'),
        nullDiagnostic('RUN_FINISHED', 'result'),
      ]);
    });

    it('should read null fields of an upstream RUN_STARTED as absent and merge it', async () => {
      const sink = diagnosticsSink();
      const events = await collect(source(bad({ type: EventType.RUN_STARTED, parentRunId: null, input: null, timestamp: 5 })).pipe(mapRunLifecycle({ ...options, onDiagnostic: sink.onDiagnostic })));
      expect(events).toStrictEqual([{ ...S, timestamp: 5 }, F]);
      expect(sink.messages).toEqual([nullDiagnostic('RUN_STARTED', 'parentRunId'), nullDiagnostic('RUN_STARTED', 'input')]);
    });

    it('should read a null usage of an upstream RUN_ERROR as absent, keeping its message and code', async () => {
      const sink = diagnosticsSink();
      const events = await collect(source(bad({ type: EventType.RUN_ERROR, message: 'Model overloaded', code: 'overloaded', usage: null })).pipe(mapRunLifecycle({ ...options, onDiagnostic: sink.onDiagnostic })));
      expect(events).toStrictEqual([S, runError('Model overloaded', 'overloaded')]);
      expect(sink.messages).toEqual([nullDiagnostic('RUN_ERROR', 'usage')]);
    });

    it('should keep null where a value is required an error, with its message', () =>
      testScheduler.run(({ cold, expectObservable }) => {
        const values = {
          c: bad({ type: EventType.CUSTOM, name: null, value: 1 }),
          S,
          E: invalid("CUSTOM is not a valid AG-UI event: 'name': Invalid input: expected string, received null. Fix the field in the event your agent emits (omit optional fields rather than sending null)."),
        } satisfies Record<string, AgentEvent>;
        // prettier-ignore
        const e1 =  cold('--c--|', values);
        // prettier-ignore
        const expected = 'S-(E|)';
        expectObservable(e1.pipe(mapRunLifecycle(options))).toBe(expected, values);
      }));

    it('should never put null on the wire for it, judged by the official client', async () => {
      const result = await runWithOracle(
        source(
          bad({ type: EventType.TEXT_MESSAGE_START, messageId: 'm1', role: 'assistant', name: null, timestamp: null }),
          bad({ type: EventType.TEXT_MESSAGE_CONTENT, messageId: 'm1', delta: 'Hi', rawEvent: null, subagentRunId: null }),
          bad({ type: EventType.TEXT_MESSAGE_END, messageId: 'm1', metadata: null }),
        ).pipe(mapRunLifecycle({ ...options, onDiagnostic: diagnosticsSink().onDiagnostic })),
      );
      expect(JSON.stringify(result.events)).not.toContain('null');
      expect(result.messages).toEqual([{ id: 'm1', role: 'assistant', content: 'Hi' }]);
    });
  });

  describe('upstream RUN_ERROR without a message', () => {
    const noMessage = "An upstream RUN_ERROR has no message: sent as 'The agent reported an error without a message.'. Say what went wrong in RUN_ERROR's message.";

    it('should supply one saying none was given, keeping its code, with a diagnostic', async () => {
      for (const message of [undefined, '', '  ']) {
        const { onDiagnostic, messages } = diagnosticsSink();
        const events = await collect(source(bad({ type: EventType.RUN_ERROR, code: 'AGENT_ERROR', ...(message === undefined ? {} : { message }) })).pipe(mapRunLifecycle({ ...options, onDiagnostic })));
        expect(events).toStrictEqual([S, runError('The agent reported an error without a message.', 'AGENT_ERROR')]);
        expect(messages).toEqual([noMessage]);
      }
    });

    it('should read message: null as none given, with a diagnostic', async () => {
      const { onDiagnostic, messages } = diagnosticsSink();
      const events = await collect(source(bad({ type: EventType.RUN_ERROR, message: null, code: 'AGENT_ERROR' })).pipe(mapRunLifecycle({ ...options, onDiagnostic })));
      expect(events).toStrictEqual([S, runError('The agent reported an error without a message.', 'AGENT_ERROR')]);
      expect(messages).toEqual([expect.stringContaining("RUN_ERROR has 'message: null': read as absent"), noMessage]);
    });

    it('should be accepted by the official client', async () => {
      const { onDiagnostic, messages } = diagnosticsSink();
      const result = await runWithOracle(source(bad({ type: EventType.RUN_ERROR })).pipe(mapRunLifecycle({ ...options, onDiagnostic })));
      expect(result.events[result.events.length - 1]).toEqual(runError('The agent reported an error without a message.'));
      expect(messages).toEqual([noMessage]);
    });
  });

  describe('bad input', () => {
    /** Sends `event` at frame 2 and expects RUN_ERROR with `message` and code INVALID_EVENT there, upstream unsubscribed. */
    const expectRunError = (event: AgentEvent, message: string) =>
      testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
        const values = { x: event, S, E: invalid(message) };
        // prettier-ignore
        const e1 =  cold('--x--|', values);
        // prettier-ignore
        const e1subs =   '^-!';
        // prettier-ignore
        const expected = 'S-(E|)';

        expectObservable(e1.pipe(mapRunLifecycle(options))).toBe(expected, values);
        expectSubscriptions(e1.subscriptions).toBe(e1subs);
      });

    it('should end with RUN_ERROR for an event without a type', () =>
      expectRunError(
        bad({ delta: 'Hi' }),
        "Received an event without a string 'type' (got undefined). Every event needs a type, e.g. 'TEXT_MESSAGE_CHUNK'.",
      ));

    it('should end with RUN_ERROR for null as an event', () =>
      expectRunError(bad(null), "Received null where an AG-UI event object was expected. Emit objects such as { type: 'TEXT_MESSAGE_CHUNK', delta: 'Hi' }."));

    // AG-UI spec 1.1, Processing Model: an event of an unrecognised type MUST NOT abort the run; it is dropped, with a warning.
    it('should drop an event of an unknown type, with a diagnostic, and go on', () => {
      const { onDiagnostic, messages } = diagnosticsSink();
      testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
        const values = { x: bad({ type: 'TEXT_DELTA', delta: 'Hi' }), a: tick(1), S, F };
        // prettier-ignore
        const e1 =  cold('--x--a--|', values);
        // prettier-ignore
        const e1subs =   '^-------!';
        // prettier-ignore
        const expected = 'S----a--(F|)';

        expectObservable(e1.pipe(mapRunLifecycle({ ...options, onDiagnostic }))).toBe(expected, values);
        expectSubscriptions(e1.subscriptions).toBe(e1subs);
      });
      expect(messages).toEqual(["Dropped an event of unknown type 'TEXT_DELTA': AG-UI 1.0 does not describe it, and a consumer drops it. Emit one of the AG-UI 1.0 event types (EventType from @ag-ui/core), or wrap provider data in a RAW or CUSTOM event."]);
    });

    // AG-UI spec 1.1, Runs and Steps and Processing Model: an unrecognised union member is stripped, the event kept.
    it('should strip a RUN_FINISHED outcome of an unknown type, with a diagnostic, and finish as a success', () => {
      const { onDiagnostic, messages } = diagnosticsSink();
      testScheduler.run(({ cold, expectObservable }) => {
        const values = { x: bad({ type: EventType.RUN_FINISHED, outcome: { type: 'handoff', to: 'billing' } }), S, F };
        // prettier-ignore
        const e1 =  cold('--x--|', values);
        // prettier-ignore
        const expected = 'S-(F|)';

        expectObservable(e1.pipe(mapRunLifecycle({ ...options, onDiagnostic }))).toBe(expected, values);
      });
      expect(messages).toEqual([expect.stringMatching(/^Stripped what AG-UI does not describe from RUN_FINISHED: at \/outcome, the outcome of type 'handoff', which AG-UI does not describe, was removed \(AG-UI spec 1\.1, Runs and Steps/)]);
    });

    it('should drop the content parts of an unknown type from a MESSAGES_SNAPSHOT, keep the messages, and say so', () => {
      const { onDiagnostic, messages } = diagnosticsSink();
      const parts = [{ type: 'text', text: 'look' }, { type: 'hologram', frames: 3 }, { type: 'image', source: { type: 'url', value: 'https://example.com/a.png' } }];
      testScheduler.run(({ cold, expectObservable }) => {
        const values = {
          x: bad({ type: EventType.MESSAGES_SNAPSHOT, messages: [{ id: 'u1', role: 'user', content: parts }, { id: 'a1', role: 'assistant', content: 'Hi' }] }),
          X: { type: EventType.MESSAGES_SNAPSHOT, messages: [{ id: 'u1', role: 'user', content: [parts[0], parts[2]] }, { id: 'a1', role: 'assistant', content: 'Hi' }] } as Event,
          S,
          F,
        };
        // prettier-ignore
        const e1 =  cold('--x--|', values);
        // prettier-ignore
        const expected = 'S-X--(F|)';

        expectObservable(e1.pipe(mapRunLifecycle({ ...options, onDiagnostic }))).toBe(expected, values);
      });
      expect(messages).toEqual([expect.stringContaining("MESSAGES_SNAPSHOT: at /messages/0/content/1, a content part of type 'hologram', which AG-UI does not describe, was dropped and the message kept")]);
    });

    it('should still end with RUN_ERROR for a malformed value beside an unrecognised one', () =>
      expectRunError(
        bad({ type: EventType.STATE_DELTA, delta: [{ op: 'merge', path: '/a' }, { op: 'add', path: 5, value: 1 }] }),
        "STATE_DELTA is not a valid AG-UI event: 'delta.0.path': Invalid input: expected string, received number. Fix the field in the event your agent emits.",
      ));

    it('should end with RUN_ERROR for a field of the wrong type', () =>
      expectRunError(
        bad({ type: EventType.STEP_STARTED, stepName: 5 }),
        "STEP_STARTED is not a valid AG-UI event: 'stepName': Invalid input: expected string, received number. Fix the field in the event your agent emits.",
      ));

    it('should end with RUN_ERROR for TOKEN_USAGE with a usage that is not an object', () =>
      expectRunError(
        bad({ type: 'TOKEN_USAGE', usage: 42 }),
        "TOKEN_USAGE has 'usage: number 42', but usage must be a TokenUsage object (or an array of them), e.g. { inputTokens: 12, outputTokens: 30 }.",
      ));

    it('should end with RUN_ERROR for TOKEN_USAGE with a count that is not a non-negative integer', () =>
      expectRunError(
        bad({ type: 'TOKEN_USAGE', usage: [{ inputTokens: 12 }, { outputTokens: '30' }] }),
        "TOKEN_USAGE has an invalid usage entry: 'outputTokens': Invalid input: expected number, received string. Counts are non-negative integers, e.g. { inputTokens: 12, outputTokens: 30 }.",
      ));

    it('should end with RUN_ERROR for an upstream RUN_FINISHED with a bad usage entry', () =>
      expectRunError(
        bad({ type: EventType.RUN_FINISHED, usage: [null] }),
        "RUN_FINISHED is not a valid AG-UI event: 'usage.0': Invalid input: expected object, received null. Fix the field in the event your agent emits (omit optional fields rather than sending null).",
      ));

    it('should end with RUN_ERROR for a TEXT_MESSAGE_CONTENT whose subagentRunId is not a string', () =>
      testScheduler.run(({ cold, expectObservable }) => {
        const values = {
          m: { type: EventType.TEXT_MESSAGE_START, messageId: 'm1', role: 'assistant' },
          c: bad({ type: EventType.TEXT_MESSAGE_CONTENT, messageId: 'm1', delta: 'Hi', subagentRunId: 7 }),
          x: { type: EventType.TEXT_MESSAGE_END, messageId: 'm1' },
          S,
          E: invalid("TEXT_MESSAGE_CONTENT has 'subagentRunId: number 7', but 'subagentRunId' must be a string."),
        } satisfies Record<string, AgentEvent>;
        // prettier-ignore
        const e1 =  cold('-m-c-|', values);
        // prettier-ignore
        const expected = 'Sm-(xE|)';

        expectObservable(e1.pipe(mapRunLifecycle(options))).toBe(expected, values);
      }));

    it('should still send its own RUN_STARTED first when an upstream RUN_STARTED is invalid', async () => {
      const events = await collect(of(bad({ type: EventType.RUN_STARTED, parentRunId: 5 }), tick(1)).pipe(mapRunLifecycle(options)));

      expect(events).toStrictEqual([
        S,
        invalid("RUN_STARTED is not a valid AG-UI event: 'parentRunId': Invalid input: expected string, received number. Fix the field in the event your agent emits."),
      ]);
    });

    it('should never notify an error for bad input, even from a synchronous source', async () => {
      const outputs = await Promise.all([
        collect(of(bad(undefined)).pipe(mapRunLifecycle(options))),
        collect(of(bad({ type: 'TOKEN_USAGE' })).pipe(mapRunLifecycle(options))),
        collect(of(bad({ type: EventType.RUN_FINISHED, usage: [{ inputTokens: -1 }] })).pipe(mapRunLifecycle(options))),
      ]);

      expect(outputs.map(typesOf)).toEqual([
        ['RUN_STARTED', 'RUN_ERROR'],
        ['RUN_STARTED', 'RUN_ERROR'],
        ['RUN_STARTED', 'RUN_ERROR'],
      ]);
      expect(outputs.map((events) => (events[1] as { code?: string }).code)).toEqual(['INVALID_EVENT', 'INVALID_EVENT', 'INVALID_EVENT']);
    });
  });

  describe('bad options', () => {
    const thrownBy = (call: () => unknown): AguiRxError => {
      try {
        call();
      } catch (error) {
        return error as AguiRxError;
      }
      throw new Error('expected the call to throw');
    };

    it("should throw INVALID_OPTIONS at call time for an empty threadId", () => {
      const error = thrownBy(() => mapRunLifecycle({ threadId: '', runId }));

      expect(error).toBeInstanceOf(AguiRxError);
      expect(error.code).toBe('INVALID_OPTIONS');
      expect(error.message).toBe(`The run needs a non-empty string 'threadId' option (got ""). Pass the ids of the run, e.g. { threadId: input.threadId, runId: input.runId } from RunAgentInput.`);
    });

    it('should throw INVALID_OPTIONS at call time for a missing runId', () => {
      const error = thrownBy(() => mapRunLifecycle({ threadId } as never));

      expect(error).toBeInstanceOf(AguiRxError);
      expect(error.code).toBe('INVALID_OPTIONS');
      expect(error.message).toBe(`The run needs a non-empty string 'runId' option (got undefined). Pass the ids of the run, e.g. { threadId: input.threadId, runId: input.runId } from RunAgentInput.`);
    });

    it('should throw INVALID_OPTIONS at call time for a parentRunId that is not a string', () => {
      const error = thrownBy(() => mapRunLifecycle({ ...options, parentRunId: 6 as never }));

      expect(error.code).toBe('INVALID_OPTIONS');
      expect(error.message).toBe("mapRunLifecycle 'parentRunId' must be a string (got number 6). Omit it when this run continues no other run.");
    });

    it('should throw INVALID_OPTIONS at call time for an input that is not a RunAgentInput', () => {
      const error = thrownBy(() => mapRunLifecycle({ ...options, input: { threadId, messages: [] } as never }));

      expect(error.code).toBe('INVALID_OPTIONS');
      expect(error.message).toBe(
        "mapRunLifecycle 'input' is not a valid RunAgentInput: 'runId': Invalid input: expected string, received undefined. Pass the RunAgentInput the client posted, or omit it.",
      );
    });

    it('should not validate again the input a handler marked as validated, and validate any other', () => {
      const valid: RunAgentInput = { threadId, runId: 'r1', messages: [], tools: [], context: [], state: {}, forwardedProps: {} };
      const parse = jest.spyOn(RunAgentInputSchema, 'safeParse');
      try {
        mapRunLifecycle({ ...options, input: valid, [checkedInput]: valid } as never);
        expect(parse).not.toHaveBeenCalled();

        // The mark names one object: another input is validated, and refused when invalid.
        const error = thrownBy(() => mapRunLifecycle({ ...options, input: { threadId, messages: [] } as never, [checkedInput]: valid } as never));
        expect(parse).toHaveBeenCalledTimes(1);
        expect(error.code).toBe('INVALID_OPTIONS');
      } finally {
        parse.mockRestore();
      }
    });
  });

  describe('error messages', () => {
    it('should send the error message only, never the stack trace', async () => {
      const error = new Error('The model provider returned 503');
      expect(error.stack).toContain('mapRunLifecycle.spec');

      const events = await collect(concat(of(tick(1)), throwError(() => error)).pipe(mapRunLifecycle(options)));

      expect(terminals(events)).toStrictEqual([{ type: EventType.RUN_ERROR, message: 'The model provider returned 503' }]);
      expect(JSON.stringify(events)).not.toContain('mapRunLifecycle.spec');
    });

    it('should take message and code from a thrown plain object', async () => {
      const events = await collect(throwError(() => ({ message: 'Rate limited', code: 'RATE_LIMITED' })).pipe(mapRunLifecycle(options)));

      expect(terminals(events)).toStrictEqual([runError('Rate limited', 'RATE_LIMITED')]);
    });

    it('should describe an error that has no message', async () => {
      const [empty, numeric] = await Promise.all([
        collect(throwError(() => new Error('')).pipe(mapRunLifecycle(options))),
        collect(throwError(() => 42).pipe(mapRunLifecycle(options))),
      ]);

      expect(terminals(empty)).toStrictEqual([runError('The agent failed without an error message.')]);
      expect(terminals(numeric)).toStrictEqual([runError('Agent failed with number 42')]);
    });
  });

  describe('conformance', () => {
    const lifecycle = (events$: Observable<AgentEvent>, extra: Partial<Parameters<typeof mapRunLifecycle>[0]> = {}) =>
      runWithOracle(events$.pipe(mapRunLifecycle({ ...options, ...extra })));
    const text = (messageId: string, ...deltas: string[]): AgentEvent[] => [
      { type: EventType.TEXT_MESSAGE_START, messageId, role: 'assistant' },
      ...deltas.map((delta): AgentEvent => ({ type: EventType.TEXT_MESSAGE_CONTENT, messageId, delta })),
      { type: EventType.TEXT_MESSAGE_END, messageId },
    ];
    const lastOf = (events: readonly { type: string }[]) => events[events.length - 1];

    it('should be accepted when the source completes, with our threadId and runId on RUN_FINISHED', async () => {
      const run = await lifecycle(of(...text('m1', 'Hello', ', world')));

      expect(run.messages).toEqual([{ id: 'm1', role: 'assistant', content: 'Hello, world' }]);
      expect(typesOf(run.events)).toEqual(['RUN_STARTED', 'TEXT_MESSAGE_START', 'TEXT_MESSAGE_CONTENT', 'TEXT_MESSAGE_CONTENT', 'TEXT_MESSAGE_END', 'RUN_FINISHED']);
      expect(lastOf(run.events)).toEqual({ type: EventType.RUN_FINISHED, threadId, runId, outcome: { type: 'success' } });
    });

    it('should be accepted when the source errors with a message left open', async () => {
      const open = text('m1', 'Let me check').slice(0, 2);

      const run = await lifecycle(concat(of(...open), throwError(() => new Error('Upstream timed out'))));

      expect(run.messages).toEqual([{ id: 'm1', role: 'assistant', content: 'Let me check' }]);
      expect(typesOf(run.events).slice(-2)).toEqual(['TEXT_MESSAGE_END', 'RUN_ERROR']);
      expect(lastOf(run.events)).toEqual({ type: EventType.RUN_ERROR, message: 'Upstream timed out' });
    });

    it('should be accepted with an upstream RUN_FINISHED, whose result the client reads', async () => {
      const run = await lifecycle(
        source(...text('m1', 'Done.'), { type: EventType.RUN_FINISHED, threadId: 'agent-thread', runId: 'agent-run', result: { answer: 42 } }, tick(1)),
      );

      expect(run.result).toEqual({ answer: 42 });
      expect(run.messages).toEqual([{ id: 'm1', role: 'assistant', content: 'Done.' }]);
      expect(lastOf(run.events)).toEqual({ type: EventType.RUN_FINISHED, threadId, runId, result: { answer: 42 }, outcome: { type: 'success' } });
    });

    it('should be accepted with an upstream RUN_ERROR', async () => {
      const run = await lifecycle(source(text('m1', 'Partial')[0], runError('Model overloaded', 'OVERLOADED'), tick(1)));

      expect(run.messages).toEqual([{ id: 'm1', role: 'assistant', content: '' }]);
      expect(typesOf(run.events)).toEqual(['RUN_STARTED', 'TEXT_MESSAGE_START', 'TEXT_MESSAGE_END', 'RUN_ERROR']);
      expect(lastOf(run.events)).toEqual(runError('Model overloaded', 'OVERLOADED'));
    });

    it('should be accepted when the run is aborted with things open', async () => {
      const controller = new AbortController();
      const events$ = concat(
        source(text('m1')[0], { type: EventType.TEXT_MESSAGE_CONTENT, messageId: 'm1', delta: 'Thinking' }, nested.a),
        defer(() => {
          controller.abort();
          return NEVER;
        }),
      );

      const run = await lifecycle(events$, { signal: controller.signal });

      expect(run.messages).toEqual([{ id: 'm1', role: 'assistant', content: 'Thinking' }]);
      expect(typesOf(run.events).slice(-3)).toEqual(['TEXT_MESSAGE_END', 'STEP_FINISHED', 'RUN_FINISHED']);
      expect(lastOf(run.events)).toEqual(C);
    });

    it('should be accepted when the signal was aborted before the run', async () => {
      const controller = new AbortController();
      controller.abort();

      const run = await lifecycle(of(...text('m1', 'never sent')), { signal: controller.signal });

      expect(run.messages).toEqual([]);
      expect(run.events).toEqual([S, C]);
    });

    it('should be accepted when everything is left open and the source completes', async () => {
      const run = await lifecycle(source(...Object.values(nested)));

      expect(typesOf(run.events)).toEqual([
        'RUN_STARTED',
        ...Object.values(nested).map((event) => event.type),
        'TOOL_CALL_END',
        'TEXT_MESSAGE_END',
        'REASONING_MESSAGE_END',
        'REASONING_END',
        'STEP_FINISHED',
        'STEP_FINISHED',
        'SUBAGENT_FINISHED',
        'RUN_FINISHED',
      ]);
      expect(run.messages).toEqual([
        { id: 'rm1', role: 'reasoning', content: '' },
        { id: 'm1', role: 'assistant', content: '', toolCalls: [{ id: 'tc1', type: 'function', function: { name: 'search', arguments: '' } }] },
      ]);
      expect(lastOf(run.events)).toEqual({ type: EventType.RUN_FINISHED, threadId, runId, outcome: { type: 'success', pendingToolCallIds: ['tc1'] } });
    });

    it('should be accepted when everything is left open and the source errors', async () => {
      const run = await lifecycle(concat(source(...Object.values(nested)), throwError(() => new Error('Search backend down'))));

      expect(typesOf(run.events).slice(-3)).toEqual(['STEP_FINISHED', 'SUBAGENT_ERROR', 'RUN_ERROR']);
      expect(lastOf(run.events)).toEqual(runError('Search backend down'));
    });

    it('should report pending tool calls that match what the client saw', async () => {
      const run = await lifecycle(
        source(
          ...text('m1', 'Checking two things.'),
          { type: EventType.TOOL_CALL_START, toolCallId: 'tc1', toolCallName: 'search', parentMessageId: 'm1' },
          { type: EventType.TOOL_CALL_ARGS, toolCallId: 'tc1', delta: '{"q":"weather"}' },
          { type: EventType.TOOL_CALL_END, toolCallId: 'tc1' },
          { type: EventType.TOOL_CALL_START, toolCallId: 'tc2', toolCallName: 'confirm', parentMessageId: 'm1' },
          { type: EventType.TOOL_CALL_RESULT, messageId: 'res1', toolCallId: 'tc1', content: 'sunny' },
        ),
      );

      expect(lastOf(run.events)).toEqual({ type: EventType.RUN_FINISHED, threadId, runId, outcome: { type: 'success', pendingToolCallIds: ['tc2'] } });
      expect(run.messages).toEqual([
        {
          id: 'm1',
          role: 'assistant',
          content: 'Checking two things.',
          toolCalls: [
            { id: 'tc1', type: 'function', function: { name: 'search', arguments: '{"q":"weather"}' } },
            { id: 'tc2', type: 'function', function: { name: 'confirm', arguments: '' } },
          ],
        },
        { id: 'res1', role: 'tool', toolCallId: 'tc1', content: 'sunny' },
      ]);
    });

    it('should be accepted with aggregated usage and an echoed input', async () => {
      const input: RunAgentInput = { threadId, runId, messages: [{ id: 'u1', role: 'user', content: 'Hi' }], tools: [], context: [] };

      const run = await lifecycle(
        source({ type: 'TOKEN_USAGE', usage: { provider: 'openai', model: 'gpt-4o', inputTokens: 5 } }, ...text('m1', 'Hello'), {
          type: 'TOKEN_USAGE',
          usage: { provider: 'openai', model: 'gpt-4o', inputTokens: 2, outputTokens: 1 },
        }),
        { input },
      );

      expect(run.messages).toEqual([
        { id: 'u1', role: 'user', content: 'Hi' },
        { id: 'm1', role: 'assistant', content: 'Hello' },
      ]);
      expect(lastOf(run.events)).toEqual({ ...F, usage: [{ provider: 'openai', model: 'gpt-4o', inputTokens: 7, outputTokens: 1 }] });
    });
  });

  describe('error details', () => {
    it('should send the stack trace only when the server opts in', async () => {
      const failing$ = throwError(() => new Error('database down'));
      const [, hidden] = await collect(failing$.pipe(mapRunLifecycle(options)));
      expect(hidden).toEqual({ type: EventType.RUN_ERROR, message: 'database down' });
      const [, shown] = await collect(failing$.pipe(mapRunLifecycle({ ...options, exposeErrorStack: true })));
      expect(shown).toMatchObject({ type: EventType.RUN_ERROR, message: 'database down', metadata: { stack: expect.stringMatching(/^Error: database down\n\s+at /) } });
      await expect(runWithOracle(failing$.pipe(mapRunLifecycle({ ...options, exposeErrorStack: true })))).resolves.toBeDefined();
    });
  });
});
