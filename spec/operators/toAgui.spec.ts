import { transformChunks } from '@ag-ui/client';
import { EventType, type Event, type Message } from '@ag-ui/core';
import { concat, defer, from, map, of, pipe, retry, take, throwError, type Observable, type OperatorFunction } from 'rxjs';
import type { AgentEvent } from '../../lib/protocol/agentEvent.js';
import { mapRunLifecycle } from '../../operators/mapRunLifecycle.js';
import { openMessageStartContentEnd } from '../../operators/openMessageStartContentEnd.js';
import { stateDelta } from '../../operators/stateDelta.js';
import { toAgui } from '../../operators/toAgui.js';
import { toolCallCorrelator } from '../../operators/toolCallCorrelator.js';
import { collect, createTestScheduler, diagnosticsSink, sequentialIds, terminals, typesOf } from '../support/helpers.js';
import { runWithOracle, type OracleRun } from '../support/oracle.js';

const run = { threadId: 'thread-1', runId: 'run-1' };

/** A step of the mixed scenario: an event, or a change to the agent's state that it then emits whole. */
type Step = AgentEvent | ((state: { step: number; todos: string[] }) => void);

const mixedSteps: Step[] = [
  { type: EventType.REASONING_MESSAGE_CHUNK, delta: 'The user wants ' },
  { type: EventType.REASONING_MESSAGE_CHUNK, delta: 'weather and time.' },
  () => undefined,
  { type: EventType.TEXT_MESSAGE_CHUNK, delta: 'Let me ' },
  { type: EventType.TEXT_MESSAGE_CHUNK, delta: 'check.' },
  { type: EventType.TOOL_CALL_CHUNK, toolCallId: 'call-a', toolCallName: 'weather', delta: '{"city":' },
  { type: EventType.TOOL_CALL_CHUNK, toolCallId: 'call-b', toolCallName: 'time', delta: '{"tz":' },
  { type: EventType.TOOL_CALL_CHUNK, toolCallId: 'call-a', delta: '"Oslo"}' },
  { type: EventType.TOOL_CALL_CHUNK, toolCallId: 'call-b', delta: '"CET"}' },
  { type: EventType.TOOL_CALL_RESULT, toolCallId: 'call-a', content: { celsius: -3 } },
  { type: EventType.TOOL_CALL_RESULT, toolCallId: 'call-b', content: '09:00' },
  (state) => {
    state.step = 1;
    state.todos.push('answer');
  },
  { type: EventType.TEXT_MESSAGE_CHUNK, delta: 'It is -3°C in Oslo at 09:00.' },
  (state) => {
    state.step = 2;
  },
];

/**
 * A mixed agent turn: reasoning, text, two parallel tool calls with interleaved arguments, their
 * results, and state changes made in place on one object that is re-emitted whole, as many agents do.
 */
function mixedScenario$(): Observable<AgentEvent> {
  return defer(() => {
    const state = { step: 0, todos: [] as string[] };
    return from(mixedSteps).pipe(
      map((step): AgentEvent => {
        if (typeof step !== 'function') return step;
        step(state);
        return { type: EventType.STATE_SNAPSHOT, snapshot: state };
      }),
    );
  });
}

/** What the client built, independent of which ids were minted. */
function projection(result: OracleRun) {
  const messages = result.messages as Message[];
  const byRole = (role: string) => messages.filter((message) => message.role === role);
  return {
    reasoning: byRole('reasoning').map((message) => (message as { content: string }).content).join(''),
    text: byRole('assistant').map((message) => (message as { content?: string }).content ?? '').join(''),
    toolCalls: byRole('assistant')
      .flatMap((message) => (message as { toolCalls?: { id: string; function: { name: string; arguments: string } }[] }).toolCalls ?? [])
      .map((call) => [call.id, call.function.name, call.function.arguments]),
    toolResults: byRole('tool').map((message) => [(message as { toolCallId: string }).toolCallId, (message as { content: unknown }).content]),
    state: result.state,
  };
}

/** Each message the client built, as [role, content, the ids of its tool calls]. */
function messageSummary(result: OracleRun): [string, unknown, string[]][] {
  return (result.messages as Message[]).map((message) => [
    message.role,
    (message as { content?: unknown }).content,
    ((message as { toolCalls?: { id: string }[] }).toolCalls ?? []).map((call) => call.id),
  ]);
}

const expectedProjection = {
  reasoning: 'The user wants weather and time.',
  text: 'Let me check.It is -3°C in Oslo at 09:00.',
  toolCalls: [
    ['call-a', 'weather', '{"city":"Oslo"}'],
    ['call-b', 'time', '{"tz":"CET"}'],
  ],
  toolResults: [
    ['call-a', '{"celsius":-3}'],
    ['call-b', '09:00'],
  ],
  state: { step: 2, todos: ['answer'] },
};

type Stage = { name: string; create: () => OperatorFunction<AgentEvent, AgentEvent> };

function stages(): Stage[] {
  const generateId = sequentialIds();
  const { onDiagnostic } = diagnosticsSink();
  return [
    { name: 'openMessageStartContentEnd', create: () => openMessageStartContentEnd({ generateId, onDiagnostic }) },
    { name: 'toolCallCorrelator', create: () => toolCallCorrelator({ generateId, onDiagnostic }) },
    { name: 'stateDelta', create: () => stateDelta() },
    { name: 'mapRunLifecycle', create: () => mapRunLifecycle(run) as unknown as OperatorFunction<AgentEvent, AgentEvent> },
  ];
}

function permutations<T>(items: readonly T[]): T[][] {
  if (items.length <= 1) return [[...items]];
  return items.flatMap((item, index) => permutations([...items.slice(0, index), ...items.slice(index + 1)]).map((rest) => [item, ...rest]));
}

const orders = permutations([0, 1, 2, 3]);

function composed(order: readonly number[]): OperatorFunction<AgentEvent, Event> {
  const all = stages();
  const operators = order.map((index) => all[index].create());
  return (pipe as (...fns: OperatorFunction<AgentEvent, AgentEvent>[]) => OperatorFunction<AgentEvent, Event>)(...operators);
}

const orderName = (order: readonly number[]) => order.map((index) => stages()[index].name).join(' → ');

describe('toAgui', () => {
  it('should give a run the official client accepts, with the messages and state the agent meant', async () => {
    const result = await runWithOracle(mixedScenario$().pipe(toAgui({ ...run, generateId: sequentialIds() })));
    expect(projection(result)).toEqual(expectedProjection);
    const events = result.events as Event[];
    expect(events[0]).toMatchObject({ type: EventType.RUN_STARTED, ...run, protocolVersion: '1.0' });
    expect(terminals(events)).toEqual([events[events.length - 1]]);
  });

  it('should emit each output in the frame of the input that caused it', () => {
    const testScheduler = createTestScheduler();
    testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
      const values = {
        a: { type: EventType.TEXT_MESSAGE_CHUNK, delta: 'Hi' } as AgentEvent,
        b: { type: EventType.TEXT_MESSAGE_CHUNK, delta: ' there' } as AgentEvent,
      };
      // prettier-ignore
      const e1 =  cold('--a-----b--|', values);
      const e1subs =   '^----------!';
      const expected = 's-(xy)--z--(ef|)';
      expectObservable(e1.pipe(toAgui({ ...run, generateId: sequentialIds() }))).toBe(expected, {
        s: { type: EventType.RUN_STARTED, ...run, protocolVersion: '1.0' },
        x: { type: EventType.TEXT_MESSAGE_START, messageId: 'id-1', role: 'assistant' },
        y: { type: EventType.TEXT_MESSAGE_CONTENT, messageId: 'id-1', delta: 'Hi' },
        z: { type: EventType.TEXT_MESSAGE_CONTENT, messageId: 'id-1', delta: ' there' },
        e: { type: EventType.TEXT_MESSAGE_END, messageId: 'id-1' },
        f: { type: EventType.RUN_FINISHED, ...run, outcome: { type: 'success' } },
      });
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    });
  });

  it('should unsubscribe the source when the output is unsubscribed', () => {
    const testScheduler = createTestScheduler();
    testScheduler.run(({ hot, expectObservable, expectSubscriptions }) => {
      const values = { a: { type: EventType.TEXT_MESSAGE_CHUNK, delta: 'Hi' } as AgentEvent };
      // prettier-ignore
      const e1 =   hot('--a---a---a--|', values);
      const e1subs =   '^-----!';
      const unsub =    '------!';
      const expected = 's-(xy)';
      expectObservable(e1.pipe(toAgui({ ...run, generateId: sequentialIds() })), unsub).toBe(expected, {
        s: { type: EventType.RUN_STARTED, ...run, protocolVersion: '1.0' },
        x: { type: EventType.TEXT_MESSAGE_START, messageId: 'id-1', role: 'assistant' },
        y: { type: EventType.TEXT_MESSAGE_CONTENT, messageId: 'id-1', delta: 'Hi' },
      });
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    });
  });

  it('should close what is open when the source completes, where the official transformChunks loses the END', async () => {
    const chunk: AgentEvent = { type: EventType.TEXT_MESSAGE_CHUNK, messageId: 'm1', delta: 'Hi' };
    const official = await collect((of(chunk) as Observable<never>).pipe(transformChunks()));
    expect(typesOf(official)).toEqual([EventType.TEXT_MESSAGE_START, EventType.TEXT_MESSAGE_CONTENT]);

    const ours = await collect(of(chunk).pipe(toAgui(run)));
    expect(typesOf(ours)).toEqual([
      EventType.RUN_STARTED,
      EventType.TEXT_MESSAGE_START,
      EventType.TEXT_MESSAGE_CONTENT,
      EventType.TEXT_MESSAGE_END,
      EventType.RUN_FINISHED,
    ]);
  });

  it('should give each subscription to one piped observable a fresh run', async () => {
    const generateId = sequentialIds();
    const piped$ = mixedScenario$().pipe(toAgui({ ...run, generateId }));
    const first = await runWithOracle(piped$);
    const second = await runWithOracle(piped$);
    expect(projection(first)).toEqual(expectedProjection);
    expect(projection(second)).toEqual(expectedProjection);
    const ids = (result: OracleRun) => result.messages.map((message) => message.id);
    // Fresh ids: nothing of the first run's minted ids is reused by the second.
    expect(ids(second).filter((id) => ids(first).includes(id) && !id.startsWith('call-'))).toEqual([]);
    // Fresh state: the second run starts with a whole snapshot again.
    expect((second.events as Event[]).find((event) => event.type.startsWith('STATE_'))?.type).toBe(EventType.STATE_SNAPSHOT);
  });

  it('should give a retry() a fresh run of every operator', async () => {
    let attempt = 0;
    const agent$ = defer(() =>
      attempt++ === 0
        ? concat(
            of<AgentEvent[]>({ type: EventType.TEXT_MESSAGE_CHUNK, delta: 'lost ' }, { type: EventType.STATE_SNAPSHOT, snapshot: { n: 1 } }),
            throwError(() => new Error('flaky')),
          )
        : of<AgentEvent[]>({ type: EventType.TEXT_MESSAGE_CHUNK, delta: 'kept' }, { type: EventType.STATE_SNAPSHOT, snapshot: { n: 2 } }),
    );
    const generateId = sequentialIds();
    const events$ = agent$.pipe(
      openMessageStartContentEnd({ generateId }),
      toolCallCorrelator({ generateId }),
      stateDelta(),
      retry(1),
      mapRunLifecycle(run),
    );
    const result = await runWithOracle(events$);
    const events = result.events as Event[];
    // The failed attempt's message was closed before the retry; the retry opened a new one.
    expect(events.filter((event) => event.type === EventType.TEXT_MESSAGE_START).map((event) => (event as { messageId: string }).messageId)).toEqual(['id-1', 'id-2']);
    // The retry's stateDelta starts from scratch: a whole snapshot, not a delta against attempt 1.
    expect(events.filter((event) => event.type.startsWith('STATE_')).map((event) => event.type)).toEqual([EventType.STATE_SNAPSHOT, EventType.STATE_SNAPSHOT]);
    expect(result.state).toEqual({ n: 2 });
    expect(terminals(events)).toEqual([expect.objectContaining({ type: EventType.RUN_FINISHED })]);
  });

  describe('order independence', () => {
    it('should try all 24 orders', () => {
      expect(new Set(orders.map((order) => order.join(''))).size).toBe(24);
    });

    it.each(orders.map((order) => [orderName(order), order] as const))('should give an oracle-accepted run in the order %s', async (_name, order) => {
      const result = await runWithOracle(mixedScenario$().pipe(composed(order)));
      expect(projection(result)).toEqual(expectedProjection);
      const events = result.events as Event[];
      expect(terminals(events)).toEqual([events[events.length - 1]]);
      expect(events[events.length - 1].type).toBe(EventType.RUN_FINISHED);
    });

    const lifecycleOutermost = orders.filter((order) => order[3] === 3);

    it.each(lifecycleOutermost.map((order) => [orderName(order), order] as const))(
      'should turn an upstream error into RUN_ERROR, after closing what is open, in the order %s',
      async (_name, order) => {
        const failing$ = concat(mixedScenario$().pipe(take(8)), throwError(() => Object.assign(new Error('model overloaded'), { code: 'OVERLOADED' })));
        const events = (await runWithOracle(failing$.pipe(composed(order)))).events as Event[];
        expect(events[events.length - 1]).toEqual({ type: EventType.RUN_ERROR, message: 'model overloaded', code: 'OVERLOADED' });
        expect(terminals(events)).toHaveLength(1);
      },
    );

    it.each(lifecycleOutermost.map((order) => [orderName(order), order] as const))(
      'should turn an error raised inside one of the operators into RUN_ERROR in the order %s',
      async (_name, order) => {
        const bad$ = of<AgentEvent[]>(
          { type: EventType.TEXT_MESSAGE_CHUNK, delta: 'Hi' },
          { type: EventType.TOOL_CALL_CHUNK, toolCallId: 'c1', delta: '{}' },
        );
        const events = (await runWithOracle(bad$.pipe(composed(order)))).events as Event[];
        expect(events[events.length - 1]).toEqual({
          type: EventType.RUN_ERROR,
          code: 'INVALID_EVENT',
          message: "TOOL_CALL_CHUNK opens tool call 'c1' without a toolCallName. Put the tool's name on the first chunk of each call.",
        });
      },
    );
  });

  describe('snake_case and null fields, read at the entry', () => {
    /** `event` as a Python serialiser without aliases sends it: snake_case names, unset base fields null (payloads untouched). */
    const pythonic = (event: AgentEvent): AgentEvent =>
      Object.fromEntries([
        ...Object.entries(event).map(([key, value]) => [key.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`), value]),
        ['timestamp', null],
        ['raw_event', null],
      ]) as AgentEvent;
    const SNAKE = "names its fields in snake_case ('";

    it('should give the same run for snake_case events with null base fields, with one snake_case diagnostic per run', async () => {
      const sink = diagnosticsSink();
      const events$ = mixedScenario$().pipe(map(pythonic), toAgui({ ...run, generateId: sequentialIds(), onDiagnostic: sink.onDiagnostic }));
      const first = await runWithOracle(events$);
      const second = await runWithOracle(events$);
      expect(projection(first)).toEqual(expectedProjection);
      expect(projection(second)).toEqual(expectedProjection);
      // Each subscription is a run of its own: it reports again, once.
      expect(sink.messages.filter((message) => message.includes(SNAKE))).toHaveLength(2);
      expect(sink.messages.filter((message) => message.startsWith("STATE_SNAPSHOT has 'timestamp: null'"))).toHaveLength(0);
      expect(sink.messages.filter((message) => message.includes("'timestamp: null'"))).toHaveLength(2);
    });

    it('should emit in the same frames as for camelCase events', () => {
      const testScheduler = createTestScheduler();
      testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
        const values = {
          a: pythonic({ type: EventType.TEXT_MESSAGE_CHUNK, messageId: 'm1', delta: 'Hi' }),
          b: pythonic({ type: EventType.TOOL_CALL_CHUNK, toolCallId: 'c1', toolCallName: 'search', parentMessageId: 'm1', delta: '{}' }),
          r: pythonic({ type: EventType.TOOL_CALL_RESULT, messageId: 't1', toolCallId: 'c1', content: 'ok' }),
        };
        // prettier-ignore
        const e1 =  cold('--a-----b-------r-----|', values);
        const e1subs =   '^---------------------!';
        const expected = 's-(xy)--(ka)----(zER)-(f|)';
        expectObservable(e1.pipe(toAgui({ ...run, generateId: sequentialIds(), onDiagnostic: () => {} }))).toBe(expected, {
          s: { type: EventType.RUN_STARTED, ...run, protocolVersion: '1.0' },
          x: { type: EventType.TEXT_MESSAGE_START, messageId: 'm1', role: 'assistant' },
          y: { type: EventType.TEXT_MESSAGE_CONTENT, messageId: 'm1', delta: 'Hi' },
          z: { type: EventType.TEXT_MESSAGE_END, messageId: 'm1' },
          k: { type: EventType.TOOL_CALL_START, toolCallId: 'c1', toolCallName: 'search', parentMessageId: 'm1' },
          a: { type: EventType.TOOL_CALL_ARGS, toolCallId: 'c1', delta: '{}' },
          E: { type: EventType.TOOL_CALL_END, toolCallId: 'c1' },
          R: { type: EventType.TOOL_CALL_RESULT, messageId: 't1', toolCallId: 'c1', content: 'ok' },
          f: { type: EventType.RUN_FINISHED, ...run, outcome: { type: 'success' } },
        });
        expectSubscriptions(e1.subscriptions).toBe(e1subs);
      });
    });

    it.each<[string, AgentEvent[]]>([
      [
        'subagent_run_id and raw_event on text chunks',
        [
          { type: EventType.SUBAGENT_STARTED, subagentRunId: 's1', name: 'helper' },
          { type: EventType.TEXT_MESSAGE_CHUNK, messageId: 'm1', subagent_run_id: 's1', delta: 'Hi', raw_event: { id: 1 } } as unknown as AgentEvent,
          { type: EventType.TEXT_MESSAGE_CHUNK, messageId: 'm1', subagent_run_id: 's1', delta: ' there' } as unknown as AgentEvent,
          { type: EventType.SUBAGENT_FINISHED, subagentRunId: 's1' },
        ],
      ],
      [
        'tool_call_name and parent_message_id on a tool call chunk',
        [
          { type: EventType.TEXT_MESSAGE_CHUNK, messageId: 'm1', delta: 'Looking' },
          { type: EventType.TEXT_MESSAGE_CHUNK, messageId: 'm2', delta: 'Found' },
          { type: EventType.TOOL_CALL_CHUNK, toolCallId: 'c1', tool_call_name: 'search', parent_message_id: 'm1', delta: '{}' } as unknown as AgentEvent,
        ],
      ],
      [
        'subagent_run_id on tool call arguments and reasoning',
        [
          { type: EventType.SUBAGENT_STARTED, subagentRunId: 's1', name: 'helper' },
          { type: EventType.REASONING_MESSAGE_CHUNK, messageId: 'r1', subagent_run_id: 's1', delta: 'Hm' } as unknown as AgentEvent,
          { type: EventType.TOOL_CALL_START, toolCallId: 'c1', toolCallName: 'search', subagentRunId: 's1' },
          { type: EventType.TOOL_CALL_ARGS, toolCallId: 'c1', subagent_run_id: 's1', delta: '{}' } as unknown as AgentEvent,
          { type: EventType.TOOL_CALL_END, toolCallId: 'c1', subagentRunId: 's1' },
          { type: EventType.SUBAGENT_FINISHED, subagentRunId: 's1' },
        ],
      ],
    ])('should read the snake_case fields of per-token events beside their id, as their camelCase twins (%s)', async (_name, events) => {
      const camel = events.map((event) => Object.fromEntries(Object.entries(event).map(([key, value]) => [key.replace(/_([a-z])/g, (_m, letter: string) => letter.toUpperCase()), value]))) as AgentEvent[];
      const sink = diagnosticsSink();
      const read = await collect(from(events).pipe(toAgui({ ...run, generateId: sequentialIds(), onDiagnostic: sink.onDiagnostic })));
      const expected = await collect(from(camel).pipe(toAgui({ ...run, generateId: sequentialIds(), onDiagnostic: () => {} })));
      expect(read).toEqual(expected);
      expect(sink.messages.filter((message) => message.includes(SNAKE))).toHaveLength(1);
      await runWithOracle(from(events).pipe(toAgui({ ...run, generateId: sequentialIds(), onDiagnostic: () => {} })));
    });

    it('should keep the fields a class gives through getters when an event is read into a copy', async () => {
      class Chunk {
        constructor(
          readonly messageId: string,
          readonly delta: string,
          readonly role?: null,
        ) {}
        get type(): string {
          return EventType.TEXT_MESSAGE_CHUNK;
        }
      }
      const events = [new Chunk('m1', 'Hi'), new Chunk('m1', ' there', null)] as unknown as AgentEvent[];
      const result = await runWithOracle(from(events).pipe(toAgui({ ...run, generateId: sequentialIds(), onDiagnostic: () => {} })));
      expect(result.messages).toEqual([{ id: 'm1', role: 'assistant', content: 'Hi there' }]);
    });

    it('should send the delta it checked, read once, when a getter answers differently at each read', async () => {
      let reads = 0;
      const fickle = Object.defineProperty({ type: EventType.TEXT_MESSAGE_CHUNK, messageId: 'm1' }, 'delta', { enumerable: true, get: () => (++reads === 1 ? 'b' : '') });
      const events = await collect(from([{ type: EventType.TEXT_MESSAGE_CHUNK, messageId: 'm1', delta: 'a' }, fickle] as AgentEvent[]).pipe(toAgui({ ...run, generateId: sequentialIds(), onDiagnostic: () => {} })));
      const contents = events.filter((event) => event.type === EventType.TEXT_MESSAGE_CONTENT);
      expect(contents).toEqual([
        { type: EventType.TEXT_MESSAGE_CONTENT, messageId: 'm1', delta: 'a' },
        { type: EventType.TEXT_MESSAGE_CONTENT, messageId: 'm1', delta: 'b' },
      ]);
    });

    it('should end the run with RUN_ERROR when the diagnostic handler throws while reading an event, closing what is open', async () => {
      let calls = 0;
      const onDiagnostic = () => {
        if (++calls === 1) throw new Error('handler broke');
      };
      const events = await collect(
        of<AgentEvent[]>({ type: EventType.TEXT_MESSAGE_CHUNK, delta: 'Hi' }, pythonic({ type: EventType.STEP_STARTED, stepName: 's' })).pipe(toAgui({ ...run, generateId: sequentialIds(), onDiagnostic })),
      );
      expect(typesOf(events)).toEqual([EventType.RUN_STARTED, EventType.TEXT_MESSAGE_START, EventType.TEXT_MESSAGE_CONTENT, EventType.TEXT_MESSAGE_END, EventType.RUN_ERROR]);
      expect(events[events.length - 1]).toMatchObject({ message: 'handler broke' });
    });
  });

  describe('empty ids', () => {
    it.each([
      ['text chunks', (id: string) => [{ type: EventType.TEXT_MESSAGE_CHUNK, messageId: id, delta: 'Let me look.' }]],
      ['an explicit START, CONTENT and END', (id: string) => [{ type: EventType.TEXT_MESSAGE_START, messageId: id, role: 'assistant' }, { type: EventType.TEXT_MESSAGE_CONTENT, messageId: id, delta: 'Let me look.' }, { type: EventType.TEXT_MESSAGE_END, messageId: id }]],
    ])('should build with an empty messageId the messages a non-empty one builds: its tool call in the same assistant message (%s)', async (_name, text) => {
      const events = (id: string) =>
        [
          ...text(id),
          { type: EventType.TOOL_CALL_CHUNK, toolCallId: 'c1', toolCallName: 'search', delta: '{}' },
          { type: EventType.TOOL_CALL_RESULT, toolCallId: 'c1', content: 'ok' },
          { type: EventType.TEXT_MESSAGE_CHUNK, messageId: `${id}2`, delta: 'Found it.' },
        ] as AgentEvent[];
      const sink = diagnosticsSink();
      const named = await runWithOracle(from(events('m')).pipe(toAgui({ ...run, generateId: sequentialIds(), onDiagnostic: () => {} })));
      const empty = await runWithOracle(from(events('')).pipe(toAgui({ ...run, generateId: sequentialIds(), onDiagnostic: sink.onDiagnostic })));
      const shape = (messages: OracleRun['messages']) => messages.map((m) => [m.role, 'content' in m ? m.content : undefined, 'toolCalls' in m ? m.toolCalls?.map((c) => c.id) : undefined]);
      expect(shape(empty.messages)).toEqual(shape(named.messages));
      expect(shape(empty.messages)[0]).toEqual(['assistant', 'Let me look.', ['c1']]);
      expect(empty.messages.map((m) => m.id)).not.toContain('');
      expect(sink.messages.filter((message) => message.includes('empty messageId'))).toHaveLength(1);
    });
  });

  describe('a generateId that repeats itself', () => {
    const input = { threadId: 'thread-1', runId: 'run-1', state: {}, messages: [{ id: 'u1', role: 'user' as const, content: 'Hi' }], tools: [], context: [], forwardedProps: {} };
    const cases: [string, () => unknown, AgentEvent[], object, RegExp][] = [
      [
        'a constant, for two messages without ids',
        () => 'm1',
        [
          { type: EventType.TEXT_MESSAGE_CHUNK, delta: 'Looking' },
          { type: EventType.TEXT_MESSAGE_END, messageId: 'm1' },
          { type: EventType.TEXT_MESSAGE_CHUNK, delta: 'Found' },
        ],
        {},
        /^generateId returned 'm1' again, an id this run or its conversation history already uses/,
      ],
      [
        'a constant, for a rename away from the history and a message without an id',
        () => 'm1',
        [
          { type: EventType.TEXT_MESSAGE_CHUNK, messageId: 'u1', subagentRunId: 's1', delta: 'x' },
          { type: EventType.TEXT_MESSAGE_CHUNK, delta: 'y' },
        ],
        { input },
        /^generateId returned 'm1' again, an id this run or its conversation history already uses/,
      ],
      ['a number', () => 42, [{ type: EventType.TEXT_MESSAGE_CHUNK, delta: 'Hi' }], {}, /^generateId returned number 42, not an id/],
    ];

    it("should send a producer's message under a fresh id when its own id is one the run gave a renamed message", async () => {
      const { onDiagnostic, messages } = diagnosticsSink();
      const events: AgentEvent[] = [
        // 'u1' names the history's user message: this one goes out as 'id-1' ...
        { type: EventType.TEXT_MESSAGE_START, messageId: 'u1', role: 'assistant' },
        { type: EventType.TEXT_MESSAGE_CONTENT, messageId: 'u1', delta: 'one' },
        { type: EventType.TEXT_MESSAGE_END, messageId: 'u1' },
        // ... and the producer's own 'id-1' is another message.
        { type: EventType.TEXT_MESSAGE_START, messageId: 'id-1', role: 'assistant' },
        { type: EventType.TEXT_MESSAGE_CONTENT, messageId: 'id-1', delta: 'two' },
        { type: EventType.TEXT_MESSAGE_END, messageId: 'id-1' },
      ];
      const result = await runWithOracle(from(events).pipe(toAgui({ ...run, input, generateId: sequentialIds(), onDiagnostic })), { initialMessages: input.messages });

      expect(result.messages).toEqual([input.messages[0], { id: 'id-1', role: 'assistant', content: 'one' }, { id: 'id-2', role: 'assistant', content: 'two' }]);
      expect(messages.filter((message) => message.includes("it was sent as 'id-2'"))).toHaveLength(1);
    });

    it.each(cases)('should end the run with RUN_ERROR naming generateId, never a second START under one id (%s)', async (_name, generateId, events, options, message) => {
      const events$ = from(events).pipe(toAgui({ ...run, ...options, generateId: generateId as () => string, onDiagnostic: () => {}, onError: () => {} }));
      const result = await runWithOracle(events$, { initialMessages: 'input' in options ? input.messages : [] });
      const last = result.events[result.events.length - 1] as { type: string; code?: string; message?: string };

      expect(last).toMatchObject({ type: EventType.RUN_ERROR, code: 'INVALID_OPTIONS' });
      expect(last.message).toMatch(message);
    });
  });

  describe('a counter generateId whose ids the producer or the history also uses', () => {
    const T = (delta: string, messageId?: string): AgentEvent => ({ type: EventType.TEXT_MESSAGE_CHUNK, delta, ...(messageId === undefined ? {} : { messageId }) });
    const history = (...messages: [string, 'user' | 'assistant', string][]) => messages.map(([id, role, content]) => ({ id, role, content }));
    const cases: [string, AgentEvent[], ReturnType<typeof history>, [string, string][]][] = [
      [
        'text without an id after the producer named its own text id-1',
        [
          T('A', 'id-1'),
          { type: EventType.TOOL_CALL_CHUNK, toolCallId: 'c1', toolCallName: 'f', delta: '{}' },
          { type: EventType.TOOL_CALL_RESULT, toolCallId: 'c1', messageId: 'r1', content: 'ok' },
          T('B'),
        ],
        [],
        [['assistant', 'A'], ['tool', 'ok'], ['assistant', 'B']],
      ],
      ['text without an id after a reasoning message id-1', [{ type: EventType.REASONING_MESSAGE_CHUNK, messageId: 'id-1', delta: 'think' }, T('hello')], [], [['reasoning', 'think'], ['assistant', 'hello']]],
      [
        'a tool call without an id after the producer named its call id-1',
        [
          { type: EventType.TOOL_CALL_START, toolCallId: 'id-1', toolCallName: 'f', parentMessageId: 'p' },
          { type: EventType.TOOL_CALL_ARGS, toolCallId: 'id-1', delta: '{}' },
          { type: EventType.TOOL_CALL_END, toolCallId: 'id-1' },
          { type: EventType.TOOL_CALL_CHUNK, toolCallName: 'g', delta: '{}' },
        ],
        [],
        [['assistant', 'f,g']],
      ],
      [
        'a tool result without a messageId after the producer named its text id-1',
        [T('Calling', 'id-1'), { type: EventType.TOOL_CALL_CHUNK, toolCallId: 'c1', toolCallName: 'f', delta: '{}' }, { type: EventType.TOOL_CALL_RESULT, toolCallId: 'c1', content: 'ok' }],
        [],
        [['assistant', 'Calling'], ['tool', 'ok']],
      ],
      [
        "a message renamed away from the history's id-1",
        [
          { type: EventType.TEXT_MESSAGE_START, messageId: 'id-1', role: 'assistant' },
          { type: EventType.TEXT_MESSAGE_CONTENT, messageId: 'id-1', delta: 'Answer' },
          { type: EventType.TEXT_MESSAGE_END, messageId: 'id-1' },
        ],
        history(['id-1', 'user', 'Hi']),
        [['user', 'Hi'], ['assistant', 'Answer']],
      ],
      [
        "text without an id in a run whose history holds the counter's first ids (an earlier run's)",
        [T('Second answer')],
        history(['id-1', 'user', 'Hi'], ['id-2', 'assistant', 'First answer'], ['u2', 'user', 'Again']),
        [['user', 'Hi'], ['assistant', 'First answer'], ['user', 'Again'], ['assistant', 'Second answer']],
      ],
    ];

    it("should send the parent agent's text under a fresh id when its id is one the run minted for a subagent's open message", async () => {
      const events: AgentEvent[] = [T('sub'), T('parent', 'id-1')].map((event, i) => (i === 0 ? ({ ...event, subagentRunId: 's1' } as AgentEvent) : event));
      const result = await runWithOracle(from(events).pipe(toAgui({ ...run, generateId: sequentialIds(), onDiagnostic: () => {} })));

      expect(result.events[result.events.length - 1]).toMatchObject({ type: EventType.RUN_FINISHED });
      expect(messageSummary(result)).toEqual([
        ['assistant', 'sub', []],
        ['assistant', 'parent', []],
      ]);
    });

    it.each(cases)('should mint past the ids in use and build every message once (%s)', async (_name, events, messages, expected) => {
      const input = { threadId: run.threadId, runId: run.runId, state: {}, messages, tools: [], context: [], forwardedProps: {} };
      const result = await runWithOracle(from(events).pipe(toAgui({ ...run, input, generateId: sequentialIds(), onDiagnostic: () => {}, onError: () => {} })), { initialMessages: messages });
      const built = result.messages as Message[];
      const summary = built.map((message): [string, string] => {
        const calls = (message as { toolCalls?: { function: { name: string } }[] }).toolCalls;
        const content = (message as { content?: unknown }).content;
        return [message.role, calls !== undefined && content === undefined ? calls.map((call) => call.function.name).join(',') : String(content)];
      });

      expect(result.events[result.events.length - 1]).toMatchObject({ type: EventType.RUN_FINISHED });
      expect(summary).toEqual(expected);
      expect(new Set(built.map((message) => message.id)).size).toBe(built.length);
    });
  });

  describe('a producer id reused by another kind or lane', () => {
    const T = (delta: string, messageId: string, subagentRunId?: string): AgentEvent => ({ type: EventType.TEXT_MESSAGE_CHUNK, delta, messageId, ...(subagentRunId === undefined ? {} : { subagentRunId }) });
    const explicit = (messageId: string, delta: string, subagentRunId?: string, end = true): AgentEvent[] => {
      const lane = subagentRunId === undefined ? {} : { subagentRunId };
      return [
        { type: EventType.TEXT_MESSAGE_START, messageId, role: 'assistant', ...lane },
        { type: EventType.TEXT_MESSAGE_CONTENT, messageId, delta, ...lane },
        ...(end ? [{ type: EventType.TEXT_MESSAGE_END, messageId, ...lane } as AgentEvent] : []),
      ];
    };
    const cases: [string, AgentEvent[], [string, string][]][] = [
      ["text, then reasoning under the text's id, then text again under it", [T('Hi', 'm1'), { type: EventType.REASONING_MESSAGE_CHUNK, messageId: 'm1', delta: 'think' }, T(' more', 'm1')], [['assistant', 'Hi more'], ['reasoning', 'think']]],
      [
        'the same with explicit events',
        [
          ...explicit('m1', 'Hi'),
          { type: EventType.REASONING_MESSAGE_START, messageId: 'm1', role: 'reasoning' },
          { type: EventType.REASONING_MESSAGE_CONTENT, messageId: 'm1', delta: 'think' },
          { type: EventType.REASONING_MESSAGE_END, messageId: 'm1' },
          ...explicit('m1', ' more'),
        ],
        [['assistant', 'Hi more'], ['reasoning', 'think']],
      ],
      [
        "the parent agent's ended message, then a subagent's under its id, then the parent's again",
        [T('Hi', 'm1'), { type: EventType.TEXT_MESSAGE_END, messageId: 'm1' }, T('sub', 'm1', 's1'), { type: EventType.TEXT_MESSAGE_END, messageId: 'm1', subagentRunId: 's1' }, T(' more', 'm1')],
        [['assistant', 'Hi more'], ['assistant', 'sub']],
      ],
      [
        "the parent agent's ended message reopened while a subagent's under its id is open",
        [...explicit('m1', 'Hi'), ...explicit('m1', 'sub', 's1', false), ...explicit('m1', ' more'), { type: EventType.TEXT_MESSAGE_CONTENT, messageId: 'm1', delta: ' too', subagentRunId: 's1' }],
        [['assistant', 'Hi more'], ['assistant', 'sub too']],
      ],
    ];

    it.each(cases)('should reopen each message under the id the producer gave it in its own lane and kind (%s)', async (_name, events, expected) => {
      const { onDiagnostic, messages: diagnostics } = diagnosticsSink();
      const result = await runWithOracle(from(events).pipe(toAgui({ ...run, generateId: sequentialIds(), onDiagnostic })));
      const built = result.messages as Message[];

      expect(result.events[result.events.length - 1]).toMatchObject({ type: EventType.RUN_FINISHED });
      expect(built.map((message) => [message.role, (message as { content?: unknown }).content])).toEqual(expected);
      expect(built[0].id).toBe('m1');
      expect(new Set(built.map((message) => message.id)).size).toBe(built.length);
      // The second message of the id was renamed (a diagnostic for explicit events), the first reopened without one.
      expect(diagnostics.filter((message) => message.includes('reopened'))).toEqual([]);
    });

    const call = (parentMessageId: string, fields: object = {}): AgentEvent => ({ type: EventType.TOOL_CALL_CHUNK, toolCallId: 'c1', toolCallName: 'f', parentMessageId, delta: '{}', ...fields });
    const parentCases: [string, AgentEvent[], () => (() => string) | undefined, [string, string, string[]][]][] = [
      [
        'a reasoning message took the id first',
        [{ type: EventType.REASONING_MESSAGE_CHUNK, messageId: 'x', delta: 'think' }, T('Calling', 'x'), call('x')],
        () => undefined,
        [['reasoning', 'think', []], ['assistant', 'Calling', ['c1']]],
      ],
      [
        'a counter generateId had minted the id for an earlier message',
        [
          { type: EventType.TEXT_MESSAGE_CHUNK, delta: 'First' },
          { type: EventType.TOOL_CALL_CHUNK, toolCallId: 'c0', toolCallName: 'g', delta: '{}' },
          { type: EventType.TOOL_CALL_RESULT, toolCallId: 'c0', messageId: 'r0', content: 'ok' },
          T('Second', 'id-1'),
          call('id-1'),
        ],
        () => sequentialIds(),
        [['assistant', 'First', ['c0']], ['tool', 'ok', []], ['assistant', 'Second', ['c1']]],
      ],
      [
        "a subagent's message took the id first",
        [T('sub', 'x', 's1'), { type: EventType.TEXT_MESSAGE_END, messageId: 'x', subagentRunId: 's1' }, T('parent', 'x'), call('x')],
        () => undefined,
        [['assistant', 'sub', []], ['assistant', 'parent', ['c1']]],
      ],
    ];

    it('should send under a fresh id, never end the run, a message whose id another lane has open or used as another kind, and a call naming it', async () => {
      const R = (delta: string, messageId: string, subagentRunId?: string): AgentEvent => ({ type: EventType.REASONING_MESSAGE_CHUNK, delta, messageId, ...(subagentRunId === undefined ? {} : { subagentRunId }) });
      const endIn = (messageId: string, subagentRunId: string): AgentEvent => ({ type: EventType.TEXT_MESSAGE_END, messageId, subagentRunId });
      const cases: [AgentEvent[], [string, unknown, string[]][], number][] = [
        // A subagent's reasoning is open under 'x' while the parent agent's text uses it, and the other way round.
        [[R('think', 'x', 's1'), T('p', 'x')], [['reasoning', 'think', []], ['assistant', 'p', []]], 0],
        [[R('think', 'x'), T('s', 'x', 's1')], [['reasoning', 'think', []], ['assistant', 's', []]], 0],
        // The parent agent's own user message or reasoning under 'x', which a subagent used first, named as a call's parent: no parent, said so.
        [
          [T('sub', 'x', 's1'), endIn('x', 's1'), ...explicit('x', 'u').map((e) => (e.type === EventType.TEXT_MESSAGE_START ? { ...e, role: 'user' } : e) as AgentEvent), call('x')],
          [['assistant', 'sub', []], ['user', 'u', []], ['assistant', undefined, ['c1']]],
          1,
        ],
        [[T('sub', 'x', 's1'), endIn('x', 's1'), R('think', 'x'), call('x')], [['assistant', 'sub', []], ['reasoning', 'think', []], ['assistant', undefined, ['c1']]], 1],
      ];
      for (const [events, expected, parentDiagnostics] of cases) {
        const { onDiagnostic, messages: diagnostics } = diagnosticsSink();
        const result = await runWithOracle(from(events).pipe(toAgui({ ...run, onDiagnostic })));
        expect(result.events[result.events.length - 1]).toMatchObject({ type: EventType.RUN_FINISHED });
        expect(messageSummary(result)).toEqual(expected);
        expect(diagnostics.filter((message) => message.includes('not an assistant message'))).toHaveLength(parentDiagnostics);
      }
    });

    it("should keep a tool call's message for the text of its lane that names it, when a reasoning message or a subagent uses its id", async () => {
      const cases: [AgentEvent[], [string, unknown, string[]][]][] = [
        [
          [call('x'), { type: EventType.REASONING_MESSAGE_CHUNK, messageId: 'x', delta: 'think' }, T('Done', 'x'), call('x', { toolCallId: 'c2' })],
          [['assistant', 'Done', ['c1', 'c2']], ['reasoning', 'think', []]],
        ],
        [
          [call('x'), { type: EventType.TOOL_CALL_RESULT, toolCallId: 'c1', messageId: 'r1', content: 'ok' }, T('sub', 'x', 's1')],
          [['assistant', undefined, ['c1']], ['tool', 'ok', []], ['assistant', 'sub', []]],
        ],
      ];
      for (const [events, expected] of cases) {
        const result = await runWithOracle(from(events).pipe(toAgui({ ...run, onDiagnostic: () => {} })));
        const built = result.messages as Message[];
        expect(result.events[result.events.length - 1]).toMatchObject({ type: EventType.RUN_FINISHED });
        expect(messageSummary(result)).toEqual(expected);
        expect(built[0].id).toBe('x');
      }
    });

    it.each(parentCases)("should put a tool call into the text message its parentMessageId names by the producer's id, sent under a fresh id because %s", async (_name, events, generateId, expected) => {
      const result = await runWithOracle(from(events).pipe(toAgui({ ...run, generateId: generateId(), onDiagnostic: () => {} })));
      const built = result.messages as Message[];

      expect(result.events[result.events.length - 1]).toMatchObject({ type: EventType.RUN_FINISHED });
      expect(messageSummary(result)).toEqual(expected);
      expect(new Set(built.map((message) => message.id)).size).toBe(built.length);
    });
  });

  describe('streaming events without delta', () => {
    it("should name a chunk's undefined field and the one it likely meant, once per run and field, and run on", async () => {
      const sink = diagnosticsSink();
      const events$ = of<AgentEvent[]>(
        { type: 'TEXT_MESSAGE_CHUNK', text: 'lost' } as unknown as AgentEvent,
        { type: EventType.TEXT_MESSAGE_CHUNK, delta: 'Hi' },
        { type: 'TEXT_MESSAGE_CHUNK', text: 'lost again' } as unknown as AgentEvent,
        { type: EventType.TOOL_CALL_CHUNK, toolCallId: 'c1', toolCallName: 'search', args: '{"q":"x"}' } as unknown as AgentEvent,
      ).pipe(toAgui({ ...run, generateId: sequentialIds(), onDiagnostic: sink.onDiagnostic }));
      const result = await runWithOracle(events$);
      expect(result.messages).toEqual([
        { id: 'id-1', role: 'assistant', content: 'Hi', toolCalls: [{ id: 'c1', type: 'function', function: { name: 'search', arguments: '{}' } }] },
      ]);
      expect(sink.messages).toEqual([
        "TEXT_MESSAGE_CHUNK has no 'delta' but has 'text', which AG-UI does not define for it: 'text' was ignored, so the event streams nothing. Did you mean 'delta'? (Reported once per run.)",
        "TOOL_CALL_CHUNK has no 'delta' but has 'args', which AG-UI does not define for it: 'args' was ignored, so the event streams nothing. Did you mean 'delta'? (Reported once per run.)",
      ]);
    });

    it("should name a content event's undefined field before its missing delta ends the run with RUN_ERROR", async () => {
      const sink = diagnosticsSink();
      const events = await collect(
        of<AgentEvent[]>(
          { type: EventType.TEXT_MESSAGE_START, messageId: 'm1', role: 'assistant' },
          { type: EventType.TEXT_MESSAGE_CONTENT, messageId: 'm1', content: 'Hi' } as unknown as AgentEvent,
        ).pipe(toAgui({ ...run, generateId: sequentialIds(), onDiagnostic: sink.onDiagnostic })),
      );
      expect(typesOf(events)).toEqual([EventType.RUN_STARTED, EventType.TEXT_MESSAGE_START, EventType.TEXT_MESSAGE_END, EventType.RUN_ERROR]);
      expect(events[events.length - 1]).toMatchObject({ message: "TEXT_MESSAGE_CONTENT has no 'delta'. Add 'delta' (a string) to the event.", code: 'INVALID_EVENT' });
      expect(sink.messages).toEqual([
        "TEXT_MESSAGE_CONTENT has no 'delta' but has 'content', which AG-UI does not define for it: 'content' was ignored, so the event streams nothing. Did you mean 'delta'? (Reported once per run.)",
      ]);
    });
  });

  describe('tool call arguments around text', () => {
    const calls = (result: OracleRun) => projection(result).toolCalls.map(([, name, args]) => [name, args]);

    it('should keep the fragments that come after text or reasoning in their call, as the official client applies them', async () => {
      const sink = diagnosticsSink();
      const result = await runWithOracle(() =>
        of<AgentEvent[]>(
          { type: EventType.TOOL_CALL_CHUNK, toolCallId: 'c1', toolCallName: 'add', delta: '{"a":' },
          { type: EventType.TEXT_MESSAGE_CHUNK, delta: 'Adding.' },
          { type: EventType.TOOL_CALL_CHUNK, delta: ' 1, "b"' },
          { type: EventType.REASONING_MESSAGE_CHUNK, delta: 'Two numbers.' },
          { type: EventType.TOOL_CALL_CHUNK, toolCallId: 'c1', delta: ': 2}' },
          { type: EventType.TEXT_MESSAGE_CHUNK, delta: ' Done.' },
        ).pipe(toAgui({ ...run, generateId: sequentialIds(), onDiagnostic: sink.onDiagnostic })),
      );
      expect(calls(result)).toEqual([['add', '{"a": 1, "b": 2}']]);
      expect(projection(result).text).toBe('Adding. Done.');
      expect(projection(result).reasoning).toBe('Two numbers.');
      expect(result.events[result.events.length - 1]).toMatchObject({ type: EventType.RUN_FINISHED, outcome: { type: 'success', pendingToolCallIds: ['c1'] } });
      expect(sink.messages).toEqual([]);
    });

    for (const [name, ending] of [
      ['the source completes', []],
      ['upstream sends RUN_FINISHED', [{ type: EventType.RUN_FINISHED, threadId: run.threadId, runId: run.runId }]],
      ['upstream ends the call and sends RUN_FINISHED', [{ type: EventType.TOOL_CALL_END, toolCallId: 'c1' }, { type: EventType.RUN_FINISHED, threadId: run.threadId, runId: run.runId }]],
    ] as [string, AgentEvent[]][]) {
      it(`should end the run in RUN_ERROR INCOMPLETE_STREAM, keeping the text, when ${name} with a call whose arguments are cut`, async () => {
        const result = await runWithOracle(() =>
          of<AgentEvent[]>(
            { type: EventType.TEXT_MESSAGE_CHUNK, delta: 'Searching.' },
            { type: EventType.TOOL_CALL_CHUNK, toolCallId: 'c1', toolCallName: 'search', delta: '{"q": "tra' },
            ...ending,
          ).pipe(toAgui({ ...run, generateId: sequentialIds(), onDiagnostic: diagnosticsSink().onDiagnostic })),
        );
        // The call and the text are ended before RUN_ERROR: nothing is left half-open on the wire.
        const types = typesOf(result.events);
        expect(types.filter((type) => type === EventType.TOOL_CALL_END || type === EventType.TEXT_MESSAGE_END)).toHaveLength(2);
        expect(types.indexOf(EventType.RUN_ERROR)).toBe(types.length - 1);
        expect(result.events[result.events.length - 1]).toMatchObject({
          code: 'INCOMPLETE_STREAM',
          message: expect.stringContaining(`The run ended with tool call 'c1' (search, arguments ending "{\\"q\\": \\"tra") waiting for a result, but its arguments are not complete JSON, so the call must not run.`),
        });
        expect(projection(result).text).toBe('Searching.');
        expect(calls(result)).toEqual([['search', '{"q": "tra']]);
      });
    }

    // A cancel cuts what the agent was writing: the run ends cancelled whichever way the cancel comes.
    it('should end the run RUN_FINISHED cancelled, not INCOMPLETE_STREAM, when upstream cancels it with a call whose arguments are cut', async () => {
      const onError = jest.fn();
      const sink = diagnosticsSink();
      const result = await runWithOracle(() =>
        of<AgentEvent[]>(
          { type: EventType.TEXT_MESSAGE_CHUNK, delta: 'Searching.' },
          { type: EventType.TOOL_CALL_CHUNK, toolCallId: 'c1', toolCallName: 'search', delta: '{"q": "tra' },
          { type: EventType.RUN_FINISHED, threadId: run.threadId, runId: run.runId, outcome: { type: 'cancelled' } } as AgentEvent,
        ).pipe(toAgui({ ...run, generateId: sequentialIds(), onDiagnostic: sink.onDiagnostic, onError })),
      );
      const types = typesOf(result.events);
      expect(types.filter((type) => type === EventType.TOOL_CALL_END || type === EventType.TEXT_MESSAGE_END)).toHaveLength(2);
      expect(types).not.toContain(EventType.RUN_ERROR);
      expect(result.events[result.events.length - 1]).toEqual({ type: EventType.RUN_FINISHED, threadId: run.threadId, runId: run.runId, outcome: { type: 'cancelled' } });
      expect(projection(result).text).toBe('Searching.');
      expect(onError).not.toHaveBeenCalled();
      expect(sink.messages).toEqual([]);
    });

    it('should end the run cancelled when upstream ends a cut call itself, then cancels the run', async () => {
      const result = await runWithOracle(() =>
        of<AgentEvent[]>(
          { type: EventType.TOOL_CALL_CHUNK, toolCallId: 'c1', toolCallName: 'search', delta: '{"q": ' },
          { type: EventType.TOOL_CALL_END, toolCallId: 'c1' },
          { type: EventType.RUN_FINISHED, threadId: run.threadId, runId: run.runId, outcome: { type: 'cancelled' } } as AgentEvent,
        ).pipe(toAgui({ ...run, generateId: sequentialIds(), onDiagnostic: diagnosticsSink().onDiagnostic })),
      );
      expect(result.events[result.events.length - 1]).toMatchObject({ type: EventType.RUN_FINISHED, outcome: { type: 'cancelled' } });
    });
  });

  it('should say what is missing when called without options', () => {
    expect(() => toAgui(undefined as unknown as Parameters<typeof toAgui>[0])).toThrow(
      "The run needs a non-empty string 'threadId' option (got undefined). Pass the ids of the run, e.g. { threadId: input.threadId, runId: input.runId } from RunAgentInput.",
    );
  });

  it('should accept event types written as plain strings', async () => {
    const events = await collect(
      of<AgentEvent[]>({ type: 'TEXT_MESSAGE_CHUNK', delta: 'Hi' }, { type: 'STATE_SNAPSHOT', snapshot: { n: 1 } }).pipe(toAgui({ ...run, generateId: sequentialIds() })),
    );
    expect(typesOf(events)).toEqual([
      EventType.RUN_STARTED,
      EventType.TEXT_MESSAGE_START,
      EventType.TEXT_MESSAGE_CONTENT,
      EventType.STATE_SNAPSHOT,
      EventType.TEXT_MESSAGE_END,
      EventType.RUN_FINISHED,
    ]);
  });

  describe('immutableState', () => {
    // A producer that breaks the promise: the shared `todos` array is changed in place between emissions.
    const breakingPromise$ = () =>
      defer(() => {
        const todos = ['write'];
        // Long enough that a patch is smaller than the whole state (stateDelta rule 2).
        const notes = 'n'.repeat(500);
        const first = { todos, count: 1, notes };
        return concat(
          of<AgentEvent[]>({ type: EventType.STATE_SNAPSHOT, snapshot: first }),
          defer(() => {
            todos.push('ship');
            return of<AgentEvent[]>({ type: EventType.STATE_SNAPSHOT, snapshot: { todos, count: 2, notes } });
          }),
        );
      });

    it('should give the client every immutable update, sending the changed field only', async () => {
      const base = { records: Array.from({ length: 50 }, (_, id) => ({ id, done: false })) };
      const second = { ...base, records: base.records.map((record, index) => (index === 7 ? { ...record, done: true } : record)) };
      const result = await runWithOracle(
        of<AgentEvent[]>({ type: EventType.STATE_SNAPSHOT, snapshot: base }, { type: EventType.STATE_SNAPSHOT, snapshot: second }).pipe(toAgui({ ...run, immutableState: true })),
      );
      expect(result.state).toEqual(second);
      const delta = (result.events as Event[]).find((event) => event.type === EventType.STATE_DELTA);
      expect(delta).toMatchObject({ delta: [{ op: 'replace', path: '/records/7/done', value: true }] });
    });

    it('should pass the promise on to stateDelta: a change made in place to a shared subtree goes unseen, as documented', async () => {
      const deltaOf = async (options: Parameters<typeof toAgui>[0]) =>
        (await collect(breakingPromise$().pipe(toAgui(options)))).find((event) => event.type === EventType.STATE_DELTA);
      expect(await deltaOf(run)).toMatchObject({ delta: [{ op: 'replace', path: '/count', value: 2 }, { op: 'add', path: '/todos/1', value: 'ship' }] });
      expect(await deltaOf({ ...run, immutableState: true })).toMatchObject({ delta: [{ op: 'replace', path: '/count', value: 2 }] });
    });
  });
});
