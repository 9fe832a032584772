/**
 * An agui-rx pipeline as an `AbstractAgent` of `@ag-ui/client`, so that CopilotKit (or any code that
 * takes an AG-UI agent object) can run it in the same process, without HTTP: `InProcessAgent`.
 *
 * `AbstractAgent.runAgent()` calls `run(input)`, which calls the agent and pipes its events through
 * `toAgui`, then runs them through the official client's checks and message/state builder.
 * `abortRun()` ends the run with RUN_FINISHED `cancelled`; unsubscribing (a component unmounting)
 * aborts the agent's `signal`. With CopilotKit:
 *
 * ```ts
 * const runtime = new CopilotRuntime({ agents: { weather: new InProcessAgent(weatherAgent) } });
 * ```
 *
 * Run it: `npm run build && npx tsc -p docs/examples && node .scratch/examples/in-process-agent.js`
 * prints the messages and state the client built. spec/docs/examples.spec.ts runs it too.
 * In your project: `npm install @ag-ui/client` (CopilotKit already depends on it; see
 * docs/versions.md for the versions that fit together).
 */
import { InProcessAgent } from 'agui-rx/client';
import { weatherAgent } from './agent.js';

/** Asks the weather agent one question in process and returns what the official client built. */
export async function main(): Promise<{ messages: unknown[]; state: unknown }> {
  const agent = new InProcessAgent(weatherAgent, {
    agentId: 'weather',
    threadId: 'thread-1',
    initialMessages: [{ id: 'u1', role: 'user', content: 'Weather in Paris?' }],
    initialState: { units: 'metric' },
    capabilities: { tools: { supported: true } },
  });
  await agent.runAgent({ runId: 'run-1' });
  return { messages: agent.messages, state: agent.state };
}

if (process.argv[1]?.endsWith('in-process-agent.js')) void main().then((result) => console.log(JSON.stringify(result, null, 2)));
