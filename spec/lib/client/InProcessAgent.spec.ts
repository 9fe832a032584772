import type { AgentSubscriber } from '@ag-ui/client';
import { EventType, type BaseEvent, type Event, type RunAgentInput } from '@ag-ui/core';
import { NEVER, Observable, concat, lastValueFrom, of, throwError, toArray } from 'rxjs';
import { InProcessAgent } from '../../../lib/client/index.js';
import { createRunBroker, type RunBroker } from '../../../lib/broker/createRunBroker.js';
import type { AgentEvent } from '../../../lib/protocol/agentEvent.js';
import type { AguiAgent } from '../../../lib/transports/createAguiHandler.js';
import { runWithOracle } from '../../support/oracle.js';

const weather: AguiAgent = () =>
  of<AgentEvent[]>(
    { type: EventType.TEXT_MESSAGE_CHUNK, messageId: 'm1', delta: 'Let me ' },
    { type: EventType.TEXT_MESSAGE_CHUNK, messageId: 'm1', delta: 'check.' },
    { type: EventType.TOOL_CALL_CHUNK, toolCallId: 'c1', toolCallName: 'getWeather', delta: '{"city":"Paris"}' },
    { type: EventType.TOOL_CALL_RESULT, toolCallId: 'c1', messageId: 't1', content: '18°C' },
    { type: EventType.STATE_SNAPSHOT, snapshot: { units: 'metric', city: 'Paris' } },
    { type: EventType.TEXT_MESSAGE_CHUNK, messageId: 'm2', delta: 'It is 18°C.' },
  );

const user = { id: 'u1', role: 'user' as const, content: 'Weather in Paris?' };

/** The events of one run of `agent`, as `runAgent()` applies them. */
function recorder(): { events: BaseEvent[]; subscriber: AgentSubscriber } {
  const events: BaseEvent[] = [];
  return { events, subscriber: { onEvent: ({ event }) => void events.push(event) } };
}

describe('InProcessAgent', () => {
  it('should run an agui-rx agent through the official client and build its messages and state', async () => {
    const agent = new InProcessAgent(weather, { threadId: 'thread-1', initialMessages: [user], initialState: { units: 'metric' } });
    const { newMessages } = await agent.runAgent({ runId: 'run-1' });
    const expected = [
      user,
      { id: 'm1', role: 'assistant', content: 'Let me check.', toolCalls: [{ id: 'c1', type: 'function', function: { name: 'getWeather', arguments: '{"city":"Paris"}' } }] },
      { id: 't1', role: 'tool', toolCallId: 'c1', content: '18°C' },
      { id: 'm2', role: 'assistant', content: 'It is 18°C.' },
    ];
    expect(agent.messages).toEqual(expected);
    expect(newMessages).toEqual(expected.slice(1));
    expect(agent.state).toEqual({ units: 'metric', city: 'Paris' });
    // The oracle agrees on run()'s stream taken alone.
    const oracle = await runWithOracle((input) => agent.run(input) as Observable<Event>, { initialMessages: [user], initialState: { units: 'metric' } });
    expect(oracle.messages).toEqual(expected);
    expect(oracle.state).toEqual({ units: 'metric', city: 'Paris' });
  });

  it("should send the run's input to the agent and its ids on RUN_STARTED", async () => {
    let seen: RunAgentInput | undefined;
    const agent = new InProcessAgent((input) => {
      seen = input;
      return of({ type: EventType.TEXT_MESSAGE_CHUNK, delta: 'Hi' });
    }, { threadId: 'thread-7', initialMessages: [user] });
    const { events, subscriber } = recorder();
    await agent.runAgent({ runId: 'run-7', forwardedProps: { mode: 'fast' } }, subscriber);
    expect(seen).toMatchObject({ threadId: 'thread-7', runId: 'run-7', messages: [user], forwardedProps: { mode: 'fast' } });
    expect(events[0]).toMatchObject({ type: EventType.RUN_STARTED, threadId: 'thread-7', runId: 'run-7' });
    expect(events.at(-1)).toMatchObject({ type: EventType.RUN_FINISHED, threadId: 'thread-7', runId: 'run-7' });
  });

  it('should pull an agent that returns an iterable (a generator)', async () => {
    const agent = new InProcessAgent(function* () {
      yield { type: EventType.TEXT_MESSAGE_CHUNK, messageId: 'm1', delta: 'one ' } as AgentEvent;
      yield { type: EventType.TEXT_MESSAGE_CHUNK, messageId: 'm1', delta: 'two' } as AgentEvent;
    });
    await agent.runAgent();
    expect(agent.messages).toEqual([{ id: 'm1', role: 'assistant', content: 'one two' }]);
  });

  it("should end the run with RUN_ERROR carrying the agent's error, after closing the open message", async () => {
    const failing: AguiAgent = () =>
      concat(
        of({ type: EventType.TEXT_MESSAGE_CHUNK, messageId: 'm1', delta: 'Half an ans' } as AgentEvent),
        throwError(() => Object.assign(new Error('The model provider answered 429: retry in 20 s.'), { code: 'RATE_LIMITED' })),
      );
    const agent = new InProcessAgent(failing);
    const run = await lastValueFrom((agent.run({ threadId: 't', runId: 'r', messages: [], tools: [], context: [], state: {}, forwardedProps: {} }) as Observable<Event>).pipe(toArray()));
    expect(run.map((event) => event.type)).toEqual([EventType.RUN_STARTED, EventType.TEXT_MESSAGE_START, EventType.TEXT_MESSAGE_CONTENT, EventType.TEXT_MESSAGE_END, EventType.RUN_ERROR]);
    expect(run.at(-1)).toMatchObject({ message: 'The model provider answered 429: retry in 20 s.', code: 'RATE_LIMITED' });
    // The official client applies it: the half message is kept, the RUN_ERROR reaches its subscribers.
    const { events, subscriber } = recorder();
    await agent.runAgent({}, subscriber).catch(() => undefined);
    expect(events.at(-1)).toMatchObject({ type: EventType.RUN_ERROR, code: 'RATE_LIMITED' });
    expect(agent.messages).toEqual([{ id: 'm1', role: 'assistant', content: 'Half an ans' }]);
  });

  it('should end the run with RUN_ERROR when the agent returns something that is not events', async () => {
    const agent = new InProcessAgent((() => 42) as unknown as AguiAgent);
    const { events, subscriber } = recorder();
    await agent.runAgent({}, subscriber).catch(() => undefined);
    expect(events.map((event) => event.type)).toEqual([EventType.RUN_STARTED, EventType.RUN_ERROR]);
    expect(events[1]).toMatchObject({ code: 'INVALID_AGENT_RESULT' });
  });

  it("should cancel a run on abortRun(): the agent's signal aborts and the run ends with RUN_FINISHED cancelled", async () => {
    let signal: AbortSignal | undefined;
    const agent = new InProcessAgent((_input, ctx) => {
      signal = ctx.signal;
      return concat(of({ type: EventType.TEXT_MESSAGE_CHUNK, messageId: 'm1', delta: 'Thinking' } as AgentEvent), NEVER);
    });
    const { events, subscriber } = recorder();
    const done = agent.runAgent({}, { ...subscriber, onTextMessageContentEvent: () => void setTimeout(() => agent.abortRun()) });
    await done;
    expect(signal?.aborted).toBe(true);
    expect(events.map((event) => event.type)).toEqual([EventType.RUN_STARTED, EventType.TEXT_MESSAGE_START, EventType.TEXT_MESSAGE_CONTENT, EventType.TEXT_MESSAGE_END, EventType.RUN_FINISHED]);
    expect(events.at(-1)).toMatchObject({ outcome: { type: 'cancelled' } });
    expect(agent.messages).toEqual([{ id: 'm1', role: 'assistant', content: 'Thinking' }]);
  });

  it("should abort the agent's signal when the run is unsubscribed, and never after a run that ended by itself", async () => {
    const signals: AbortSignal[] = [];
    const agent = new InProcessAgent((_input, ctx) => {
      signals.push(ctx.signal);
      return signals.length === 1 ? of({ type: EventType.TEXT_MESSAGE_CHUNK, delta: 'done' } as AgentEvent) : NEVER;
    });
    await agent.runAgent();
    const detached = agent.runAgent();
    await new Promise((resolve) => setTimeout(resolve));
    await agent.detachActiveRun();
    await detached;
    expect(signals.map((signal) => signal.aborted)).toEqual([false, true]);
  });

  it('should keep the agent function and config in a clone()', async () => {
    const agent = new InProcessAgent(weather, { threadId: 'thread-1', aguiOptions: { onDiagnostic: () => undefined } });
    const copy = agent.clone();
    expect(copy).toBeInstanceOf(InProcessAgent);
    expect(copy.config).toBe(agent.config);
    await copy.runAgent();
    expect(copy.messages.map((message) => message.id)).toEqual(['m1', 't1', 'm2']);
    expect(agent.messages).toEqual([]);
  });

  describe('getCapabilities()', () => {
    it('should declare what the pipeline guarantees: streaming, state snapshots and deltas, and its identity', async () => {
      const agent = new InProcessAgent(weather, { agentId: 'weather', description: 'Answers about the weather.' });
      expect(await agent.getCapabilities()).toEqual({
        identity: { name: 'weather', description: 'Answers about the weather.', type: 'agui-rx' },
        transport: { streaming: true },
        state: { snapshots: true, deltas: true },
      });
    });

    it('should declare resumable runs and persistent state with a broker', async () => {
      const broker = createRunBroker();
      try {
        const capabilities = await new InProcessAgent(weather, { broker }).getCapabilities();
        expect(capabilities.transport).toEqual({ streaming: true, resumable: true });
        expect(capabilities.state).toEqual({ snapshots: true, deltas: true, persistentState: true });
      } finally {
        await broker.close();
      }
    });

    it("should merge the declared capabilities over the derived ones, category by category", async () => {
      const agent = new InProcessAgent(weather, {
        capabilities: { state: { deltas: false, memory: true }, tools: { supported: true, parallelCalls: true }, reasoning: { supported: true, streaming: true }, custom: { region: 'eu' } },
      });
      expect(await agent.getCapabilities()).toEqual({
        identity: { type: 'agui-rx' },
        transport: { streaming: true },
        state: { snapshots: true, deltas: false, memory: true },
        tools: { supported: true, parallelCalls: true },
        reasoning: { supported: true, streaming: true },
        custom: { region: 'eu' },
      });
    });
  });

  describe('with a broker', () => {
    let broker: RunBroker;
    beforeEach(() => {
      broker = createRunBroker({ authorize: () => true });
    });
    afterEach(() => broker.close());

    it('should run through the broker, and rebuild the thread with connectAgent() in a fresh agent', async () => {
      const agent = new InProcessAgent(weather, { broker, threadId: 'thread-1', initialMessages: [user] });
      await agent.runAgent({ runId: 'run-1' });
      expect(agent.messages.map((message) => message.id)).toEqual(['u1', 'm1', 't1', 'm2']);
      const later = new InProcessAgent(weather, { broker, threadId: 'thread-1' });
      await later.connectAgent();
      expect(later.messages.map((message) => message.id)).toEqual(expect.arrayContaining(['m1', 't1', 'm2']));
      expect(later.state).toEqual({ units: 'metric', city: 'Paris' });
    });

    it('should stop the run in the broker on stopRun(): it ends with RUN_FINISHED cancelled', async () => {
      let signal: AbortSignal | undefined;
      const agent = new InProcessAgent((_input, ctx) => {
        signal = ctx.signal;
        return concat(of({ type: EventType.TEXT_MESSAGE_CHUNK, messageId: 'm1', delta: 'Working' } as AgentEvent), NEVER);
      }, { broker, threadId: 'thread-2' });
      const { events, subscriber } = recorder();
      const done = agent.runAgent({ runId: 'run-2' }, { ...subscriber, onTextMessageContentEvent: () => void setTimeout(() => void agent.stopRun()) });
      await done;
      expect(signal?.aborted).toBe(true);
      expect(events.at(-1)).toMatchObject({ type: EventType.RUN_FINISHED, outcome: { type: 'cancelled' } });
      expect(await new InProcessAgent(weather).stopRun('run-2')).toBe(false);
    });

    it("should error the run with the broker's refusal when its authorize hook refuses", async () => {
      const guarded = createRunBroker({ authorize: ({ context }) => context === 'alice' });
      try {
        const agent = new InProcessAgent(weather, { broker: guarded, context: 'mallory' });
        const error = await lastValueFrom(agent.run({ threadId: 't', runId: 'r', messages: [], tools: [], context: [], state: {}, forwardedProps: {} }) as Observable<Event>).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(Error);
        const allowed = new InProcessAgent(weather, { broker: guarded, context: 'alice' });
        await allowed.runAgent();
        expect(allowed.messages).toHaveLength(3);
      } finally {
        await guarded.close();
      }
    });
  });
});
