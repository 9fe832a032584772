import { AbstractAgent, type AgentSubscriber } from '@ag-ui/client';
import type { BaseEvent, Event, Message, RunAgentInput, State } from '@ag-ui/core';
import { Observable } from 'rxjs';

/** What the official client built from a stream. */
export interface OracleRun {
  /** The agent's messages after the run (initial messages plus what the stream built). */
  messages: Message[];
  /** The agent's state after the run. */
  state: State;
  /** Every event the client received, in order. */
  events: BaseEvent[];
  /** RUN_FINISHED `result`, if any. */
  result: unknown;
}

/** An official-client agent whose `run()` returns the stream under test. */
class StreamAgent extends AbstractAgent {
  constructor(
    private readonly stream: (input: RunAgentInput) => Observable<BaseEvent>,
    config: { initialState?: State; initialMessages?: Message[] },
  ) {
    super({ threadId: 'thread-1', ...config });
  }

  run(input: RunAgentInput): Observable<BaseEvent> {
    return this.stream(input);
  }
}

/**
 * The oracle: runs `events$` through `@ag-ui/client`'s `AbstractAgent.runAgent()` (schema
 * enforcement, chunk transform, sequence verification, event application) and resolves with the
 * messages and state it built. Rejects with the client's error when the stream is not well-formed.
 */
export async function runWithOracle(
  events$: Observable<Event> | ((input: RunAgentInput) => Observable<Event>),
  config: { initialState?: State; initialMessages?: Message[]; runId?: string } = {},
): Promise<OracleRun> {
  const stream = typeof events$ === 'function' ? events$ : () => events$;
  const agent = new StreamAgent(stream as (input: RunAgentInput) => Observable<BaseEvent>, config);
  const events: BaseEvent[] = [];
  const subscriber: AgentSubscriber = { onEvent: ({ event }) => void events.push(event) };
  // The client logs a failed run with console.error before rethrowing it; the rejection is what we assert on.
  const consoleError = console.error;
  console.error = () => undefined;
  try {
    const { result } = await agent.runAgent({ runId: config.runId ?? 'run-1' }, subscriber);
    return { messages: agent.messages, state: agent.state, events, result };
  } finally {
    console.error = consoleError;
  }
}
