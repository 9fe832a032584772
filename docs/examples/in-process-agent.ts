/**
 * An agui-rx pipeline as an `AbstractAgent` of `@ag-ui/client`, so that CopilotKit (or any code that
 * takes an AG-UI agent object) can run it in the same process, without HTTP.
 *
 * `AbstractAgent.runAgent()` calls `run(input)` and runs the Observable it returns through the
 * official client's checks (`verifyEvents`) and message/state builder: `toAgui` makes the stream
 * pass them. Unsubscribing (`agent.abortRun()`, a component unmounting) aborts `signal`.
 *
 * Run it: `npm run build && npx tsc -p docs/examples && node .scratch/examples/in-process-agent.js`
 * prints the messages and state the client built. spec/docs/examples.spec.ts runs it too.
 * In your project: `npm install @ag-ui/client` (CopilotKit already depends on it).
 */
import { AbstractAgent, type AgentConfig, type BaseEvent, type RunAgentInput } from '@ag-ui/client';
import { toAgui, type AguiAgent, type ToAguiOptions } from 'agui-rx';
import { Observable, defer } from 'rxjs';
import { weatherAgent } from './agent.js';

/** Options of {@link RxAgent}: the client's agent config plus `toAgui`'s per-agent options. */
export interface RxAgentConfig extends AgentConfig {
  /** Passed to `toAgui` on every run (ids, diagnostics); the run's ids and input come from `run()`. */
  aguiOptions?: Omit<ToAguiOptions, 'threadId' | 'runId' | 'parentRunId' | 'input' | 'signal'>;
}

/** An AG-UI agent object whose runs are an agui-rx agent piped through `toAgui`. */
export class RxAgent extends AbstractAgent {
  constructor(
    private readonly agent: AguiAgent,
    private readonly config: RxAgentConfig = {},
  ) {
    super(config);
  }

  /** One run: the agent's events for `input`, as one well-formed AG-UI run. */
  run(input: RunAgentInput): Observable<BaseEvent> {
    return new Observable<BaseEvent>((subscriber) => {
      const controller = new AbortController();
      const { signal } = controller;
      const subscription = defer(() => this.agent(input, { signal }))
        .pipe(toAgui({ ...this.config.aguiOptions, threadId: input.threadId, runId: input.runId, parentRunId: input.parentRunId, input, signal }))
        .subscribe(subscriber);
      return () => {
        subscription.unsubscribe();
        controller.abort();
      };
    });
  }

  /** A copy for another run or thread (hosts such as CopilotKit call `clone()`): it keeps the agent function and options, which `AbstractAgent.clone()` does not copy. */
  override clone(): RxAgent {
    const copy = super.clone() as RxAgent;
    Object.assign(copy, { agent: this.agent, config: this.config });
    return copy;
  }
}

/** Asks the weather agent one question in process and returns what the official client built. */
export async function main(): Promise<{ messages: unknown[]; state: unknown }> {
  const agent = new RxAgent(weatherAgent, {
    threadId: 'thread-1',
    initialMessages: [{ id: 'u1', role: 'user', content: 'Weather in Paris?' }],
    initialState: { units: 'metric' },
  });
  await agent.runAgent({ runId: 'run-1' });
  return { messages: agent.messages, state: agent.state };
}

if (process.argv[1]?.endsWith('in-process-agent.js')) void main().then((result) => console.log(JSON.stringify(result, null, 2)));
