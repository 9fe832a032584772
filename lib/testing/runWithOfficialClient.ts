import type { BaseEvent, Context, Message, RunAgentInput, State, Tool } from '@ag-ui/core';
import { from, throwError, type Observable, type ObservableInput } from 'rxjs';
import { AguiRxError, describeValue } from '../protocol/errors.js';

/** Options of {@link runWithOfficialClient}: the agent's starting point and the run's input. */
export interface RunWithOfficialClientOptions {
  /** The thread the client runs in (`RunAgentInput.threadId`). Default: `'thread-1'`. */
  threadId?: string | undefined;
  /** The run's id (`RunAgentInput.runId`). Default: `'run-1'`. */
  runId?: string | undefined;
  /** The conversation before the run: the client's `messages` start with these. Default: none. */
  initialMessages?: Message[] | undefined;
  /** The client's state before the run. Default: `{}`. */
  initialState?: State | undefined;
  /** Tools the client offers (`RunAgentInput.tools`). Default: none. */
  tools?: Tool[] | undefined;
  /** Context the client sends (`RunAgentInput.context`). Default: none. */
  context?: Context[] | undefined;
  /** Extra properties the client forwards (`RunAgentInput.forwardedProps`). Default: `{}`. */
  forwardedProps?: Record<string, unknown> | undefined;
}

/** What the official client built from a run, as {@link runWithOfficialClient} resolves it. */
export interface OfficialClientRun {
  /** The agent's messages after the run: `initialMessages` plus what the stream built. */
  messages: Message[];
  /** The agent's state after the run. */
  state: State;
  /** The messages the run added (`runAgent()`'s `newMessages`). */
  newMessages: Message[];
  /** RUN_FINISHED `result`, when the run sent one. */
  result?: unknown;
  /** Every event the client applied, in order, after its own chunk expansion. */
  events: BaseEvent[];
}

type OfficialClient = typeof import('@ag-ui/client');

// Loaded on first use: @ag-ui/client is an optional peer dependency, needed only here.
let officialClient: Promise<OfficialClient> | undefined;

/**
 * The client, as this build of agui-rx loads modules: `require` in the CommonJS build (jest runs
 * CommonJS and cannot `import()` without a flag; and one copy of @ag-ui/core's classes is kept),
 * `import()` in the ES module build.
 */
function importOfficialClient(): Promise<OfficialClient> {
  if (typeof require === 'function') return new Promise((resolve) => resolve(require('@ag-ui/client') as OfficialClient));
  return import('@ag-ui/client') as Promise<unknown> as Promise<OfficialClient>;
}

function loadOfficialClient(): Promise<OfficialClient> {
  officialClient ??= importOfficialClient().catch((error: unknown) => {
    officialClient = undefined;
    const code = (error as { code?: unknown } | null)?.code;
    if (code !== 'MODULE_NOT_FOUND' && code !== 'ERR_MODULE_NOT_FOUND') throw error;
    throw new AguiRxError(
      'MISSING_PEER_DEPENDENCY',
      `runWithOfficialClient needs the official AG-UI client, '@ag-ui/client', which could not be loaded (${(error as Error).message.split('\n')[0]}). It is an optional peer dependency of agui-rx: install it with \`npm install -D @ag-ui/client\`.`,
    );
  });
  return officialClient;
}

/**
 * Runs an AG-UI event stream through the official client, `@ag-ui/client`'s
 * `AbstractAgent.runAgent()`, and resolves with the messages and state the client built from it:
 * the end-to-end check that a real AG-UI frontend understands what your pipeline sends.
 *
 * The client applies its whole inbound pipeline: schema enforcement, chunk expansion
 * (`transformChunks`), sequence verification (`verifyEvents`) and event application.
 *
 * Rules:
 * 1. `events$` (an Observable, or an array, promise or async iterable of events) is subscribed
 *    once, when the client starts the run; a function gets the client's `RunAgentInput` (with
 *    `threadId`, `runId`, `initialMessages`, `initialState` from `options`) and returns one.
 * 2. Resolves with `{ messages, state, newMessages, result?, events }` when the run completes.
 * 3. Rejects with the client's own error (an `AGUIError` from `@ag-ui/core`, message as the client
 *    words it) when the stream breaks the protocol, and with the stream's error when it errors;
 *    the client's `console.error` for a failed run is not printed.
 * 4. `@ag-ui/client` is an optional peer dependency, loaded on first call: without it the promise
 *    rejects with `AguiRxError` `MISSING_PEER_DEPENDENCY` saying `npm install -D @ag-ui/client`.
 * 5. Anything else as `events$` (or returned by the function) rejects with `AguiRxError` `INVALID_ARGUMENT`.
 *
 * ## Example
 *
 * ```ts
 * const run = await runWithOfficialClient(of<AgentEvent[]>({ type: 'TEXT_MESSAGE_CHUNK', delta: 'Hi' }, { type: 'STATE_SNAPSHOT', snapshot: { n: 1 } })
 *   .pipe(toAgui({ threadId: 'thread-1', runId: 'run-1', generateId: () => 'm1' })));
 * console.log(run.messages, run.state);
 * // results: [ { id: 'm1', role: 'assistant', content: 'Hi' } ] { n: 1 }
 * ```
 *
 * @param events$ The stream under test, or a function of the client's `RunAgentInput` that returns it.
 * @param options The thread and run ids, the conversation and state before the run, tools, context.
 * @return A promise of the {@link OfficialClientRun}; it never settles if `events$` never ends (an endless synchronous source blocks the thread: bound it with `take`).
 * @throws {AguiRxError} `MISSING_PEER_DEPENDENCY` (as a rejection) when `@ag-ui/client` is not installed.
 */
export async function runWithOfficialClient(
  events$: ObservableInput<object> | ((input: RunAgentInput) => ObservableInput<object>),
  options: RunWithOfficialClientOptions = {},
): Promise<OfficialClientRun> {
  const { AbstractAgent } = await loadOfficialClient();
  const stream = (input: RunAgentInput): Observable<object> => {
    const events = typeof events$ === 'function' ? events$(input) : events$;
    try {
      return from(events);
    } catch {
      throw new AguiRxError(
        'INVALID_ARGUMENT',
        `runWithOfficialClient needs an Observable of AG-UI events (or an array, promise or async iterable of them), or a function of RunAgentInput that returns one; got ${describeValue(events)}.`,
      );
    }
  };
  // Checked now, so that a bad argument rejects with its own message rather than inside the client.
  if (typeof events$ !== 'function') stream({} as RunAgentInput);

  /** An official-client agent whose `run()` returns the stream under test. */
  class StreamAgent extends AbstractAgent {
    run(input: RunAgentInput): Observable<BaseEvent> {
      return stream(input) as Observable<BaseEvent>;
    }

    // The default logs the failure with console.error before rethrowing it: the rejection says it all.
    protected override onError(_input: RunAgentInput, error: Error) {
      return throwError(() => error);
    }
  }

  const agent = new StreamAgent({ threadId: options.threadId ?? 'thread-1', initialMessages: options.initialMessages, initialState: options.initialState });
  const events: BaseEvent[] = [];
  const { result, newMessages } = await agent.runAgent(
    { runId: options.runId ?? 'run-1', tools: options.tools, context: options.context, forwardedProps: options.forwardedProps },
    { onEvent: ({ event }) => void events.push(event) },
  );
  return { messages: agent.messages, state: agent.state, newMessages, ...(result === undefined ? {} : { result }), events };
}
