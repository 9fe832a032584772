import { AbstractAgent, type AgentCapabilities, type AgentConfig } from '@ag-ui/client';
import type { Event, RunAgentInput } from '@ag-ui/core';
import { Observable, defer, from, map, switchMap } from 'rxjs';
import { toAgui, type ToAguiOptions } from '../../operators/toAgui.js';
import type { CancelSignal } from '../protocol/cancelSignal.js';
import { safeUnsubscribe } from '../protocol/createOperator.js';
import { warnDiagnostic } from '../protocol/diagnostics.js';
import { errorMessage } from '../protocol/errors.js';
import type { AnyAguiAgent } from '../transports/createAguiHandler.js';
import { runThroughBroker, type BrokerAccess, type RunBrokerApi } from '../transports/brokerRoutes.js';
import { agentRun } from '../transports/agentRun.js';
import type { SliceOptions } from '../transports/fromAgentResult.js';

// Typed by the base class that the user's @ag-ui/client resolves to, not by our own imports: a
// project with a second copy of rxjs (or an older @ag-ui/core) under the client still type-checks.
type RunInput = Parameters<AbstractAgent['run']>[0];
type RunEvents = ReturnType<AbstractAgent['run']>;

/** The configuration of {@link InProcessAgent}: the client's agent config, plus how runs are made. */
export interface InProcessAgentConfig extends AgentConfig {
  /** `toAgui`'s options for every run (ids, diagnostics, state); the run's ids, input and signal come from the run. */
  aguiOptions?: Omit<ToAguiOptions, 'threadId' | 'runId' | 'parentRunId' | 'input' | 'signal'> | undefined;
  /** How an agent that returns an iterable is pulled (as the handlers do). Default: 256 events or 5 ms a slice. */
  slice?: Omit<SliceOptions, 'ready'> | undefined;
  /**
   * A run broker (`createRunBroker`): runs outlive their subscribers (`detachActiveRun()`, a
   * component unmounting), `connectAgent()` rebuilds the thread and rejoins its running run, and
   * `abortRun()`/`stopRun()` stop the run wherever it runs. Without one a run lives in its subscription.
   */
  broker?: RunBrokerApi | undefined;
  /** With a broker: what its `authorize` hook sees as `access.context` (the user, the tenant). `access.request` is `undefined`. */
  context?: unknown;
  /**
   * What the agent declares about itself, merged over what the pipeline guarantees (see
   * {@link InProcessAgent.getCapabilities}), category by category; a flag given here wins.
   */
  capabilities?: AgentCapabilities | undefined;
}

/**
 * An AG-UI agent object (`AbstractAgent` of `@ag-ui/client`) whose runs are an agui-rx agent piped
 * through `toAgui`, in the same process, without HTTP: what CopilotKit's `CopilotRuntime({ agents })`,
 * or any code that takes an agent object, runs.
 *
 * ```text
 * agent(input, { signal })   --t--u--c--r--|          the agent's events (AgentEvent), or an iterable of them
 * run(input)                 S-(mx)-y-(ka)-(eER)-(F|) one well-formed AG-UI run (see toAgui)
 * ```
 *
 * Rules:
 * 1. `run(input)` calls `agent(input, { signal })` on subscription and pipes its events through
 *    `toAgui({ ...aguiOptions, threadId, runId, parentRunId, input, signal })`: RUN_STARTED first,
 *    every message and tool call closed, RUN_FINISHED or RUN_ERROR last. An agent that throws,
 *    errors or returns something that is not events ends the run with RUN_ERROR (its message and
 *    code), never with an error of the Observable.
 * 2. An agent that returns an iterable or async iterable is pulled in slices (`slice`), with a
 *    turn of the event loop between them, as the HTTP handlers do.
 * 3. `abortRun()` cancels the runs in progress: the agent's `signal` aborts and each run ends with
 *    RUN_FINISHED `outcome: { type: 'cancelled' }` after closing what is open. Unsubscribing
 *    (`detachActiveRun()`) aborts `signal` too, without further events. `signal` never aborts
 *    after a run that ended by itself.
 * 4. With `broker`: `run(input)` starts (or attaches to) the run in the broker and streams its log;
 *    `connectAgent()` streams the thread rebuilt, then its running run live; `abortRun()` and
 *    `stopRun()` stop the run in the broker (RUN_FINISHED `cancelled`). A refusal of the broker
 *    (its `authorize` hook, an unknown run) errors the stream with the broker's error.
 * 5. `clone()` (hosts clone an agent per thread or request) keeps the agent function and config.
 *
 * Protocol: AG-UI 1.0 events, checked by the official client's `runAgent()` (schema, sequence,
 * messages and state). Works with `@ag-ui/client` 1.0 and 0.0.59 (CopilotKit's runtime 1.75).
 *
 * ## Example
 *
 * ```ts
 * import { InProcessAgent } from 'agui-rx/client';
 *
 * const agent = new InProcessAgent(weatherAgent, { threadId: 't1', initialMessages: [{ id: 'u1', role: 'user', content: 'Weather in Paris?' }] });
 * await agent.runAgent();
 * console.log(agent.messages.at(-1)?.content);
 * // CopilotKit: new CopilotRuntime({ agents: { weather: new InProcessAgent(weatherAgent) } })
 * ```
 */
export class InProcessAgent extends AbstractAgent {
  /** The agent function each run calls. */
  readonly agent: AnyAguiAgent;
  /** The configuration given to the constructor. */
  readonly config: Readonly<InProcessAgentConfig>;
  // The runs in progress: abortRun() cancels them.
  private runs: Set<AbortController>;
  // With a broker, the run stopRun() stops by default: the last one run() started.
  private lastRun: { threadId: string; runId: string } | undefined;

  constructor(agent: AnyAguiAgent, config: InProcessAgentConfig = {}) {
    super(config);
    this.agent = agent;
    this.config = config;
    this.runs = new Set();
    this.lastRun = undefined;
  }

  /** One run: the agent's events for `input`, as one well-formed AG-UI run (rules 1–4). */
  run(input: RunInput): RunEvents {
    const events = defer(() => {
      const { broker } = this.config;
      const run = input as RunAgentInput;
      if (broker === undefined) return this.localRun(run);
      this.lastRun = { threadId: run.threadId, runId: run.runId };
      return this.cancellable(run, (cancel) =>
        from(runThroughBroker(broker, run, (cancel) => this.localRun(run, cancel), this.access())).pipe(
          switchMap((frames) => frames),
          map((frame) => frame.event),
        ),
      );
    });
    // Our rxjs and the client's may be two copies: the Observable works with either, only its declared type differs.
    return events as unknown as RunEvents;
  }

  /** With a broker: the thread rebuilt, then its running run live (what `connectAgent()` streams). Without: not implemented, as in `AbstractAgent`. */
  protected override connect(input: RunInput): RunEvents {
    const { broker } = this.config;
    if (broker === undefined) return super.connect(input);
    const events = defer(() => from(broker.connect(input as RunAgentInput, this.access()))).pipe(
      switchMap((frames) => frames),
      map((frame) => frame.event),
    );
    return events as unknown as RunEvents;
  }

  /** Cancels the runs in progress (rule 3; with a broker, rule 4). */
  override abortRun(): void {
    for (const run of this.runs) run.abort();
    super.abortRun();
  }

  /**
   * With a broker: stops a run wherever it runs; it ends with RUN_FINISHED `cancelled`.
   *
   * @param runId The run; default: the one this agent started last.
   * @return Whether there was a run to stop (`false` without a broker or a run).
   * @throws The broker's error (an unknown run, a refusal of its `authorize` hook).
   */
  async stopRun(runId?: string): Promise<boolean> {
    const { broker } = this.config;
    const target = runId ?? this.lastRun?.runId;
    if (broker === undefined || target === undefined) return false;
    const threadId = this.lastRun !== undefined && this.lastRun.runId === target ? this.lastRun.threadId : this.threadId;
    await broker.stop(threadId, target, this.access());
    return true;
  }

  /**
   * The AG-UI 1.0 capabilities of this agent: what the pipeline guarantees, with `config.capabilities`
   * merged over it category by category.
   *
   * - `identity`: `name` = `agentId`, `description`, `type: 'agui-rx'`;
   * - `transport`: `streaming: true` (events are delivered as they are made), `resumable: true`
   *   with a broker (its runs outlive their readers and `connectAgent()` rejoins them);
   * - `state`: `snapshots: true, deltas: true` (the first state whole, then JSON Patch deltas),
   *   `persistentState: true` with a broker (it keeps the thread's state between runs).
   *
   * Everything else (tools, reasoning, human in the loop…) depends on the agent: declare it in
   * `capabilities`.
   */
  override async getCapabilities(): Promise<AgentCapabilities> {
    const withBroker = this.config.broker !== undefined;
    const declared = this.config.capabilities ?? {};
    const identity = { ...(this.agentId === undefined ? {} : { name: this.agentId }), ...(this.description ? { description: this.description } : {}), type: 'agui-rx' };
    const derived: AgentCapabilities = {
      identity,
      transport: { streaming: true, ...(withBroker ? { resumable: true } : {}) },
      state: { snapshots: true, deltas: true, ...(withBroker ? { persistentState: true } : {}) },
    };
    return mergeCapabilities(derived, declared);
  }

  /** A copy for another run or thread: the same agent function and config, no runs in progress. */
  override clone(): InProcessAgent {
    const copy = super.clone() as InProcessAgent;
    Object.assign(copy, { agent: this.agent, config: this.config, runs: new Set(), lastRun: undefined });
    return copy;
  }

  private access(): BrokerAccess {
    return { request: undefined, context: this.config.context };
  }

  /** Registers a run for abortRun() while it is subscribed; `cancel` aborts when abortRun() is called. */
  private cancellable<T>(input: RunAgentInput, events: (cancel: AbortSignal) => Observable<T>): Observable<T> {
    return new Observable<T>((subscriber) => {
      const cancel = new AbortController();
      this.runs.add(cancel);
      const { broker } = this.config;
      // With a broker the run lives there: abortRun() stops it there, and its log brings RUN_FINISHED cancelled.
      const stop = () =>
        void broker?.stop(input.threadId, input.runId, this.access()).catch((error: unknown) => {
          (this.config.aguiOptions?.onDiagnostic ?? warnDiagnostic)({ message: `abortRun() could not stop run '${input.runId}' of thread '${input.threadId}' in the broker: ${errorMessage(error, 'an error without a message')}.`, event: undefined });
        });
      if (broker !== undefined) cancel.signal.addEventListener('abort', stop, { once: true });
      const subscription = events(cancel.signal).subscribe(subscriber);
      return () => {
        this.runs.delete(cancel);
        cancel.signal.removeEventListener('abort', stop);
        safeUnsubscribe(subscription);
      };
    });
  }

  /** The agent's events through toAgui, here; `brokerCancel` is the broker's signal for a run it holds. */
  private localRun(input: RunAgentInput, brokerCancel?: CancelSignal): Observable<Event> {
    const { aguiOptions = {}, slice = {}, broker } = this.config;
    const run = (cancel: CancelSignal | undefined) => agentRun(
        (signal) =>
          this.agent(input, {
            // Made when the agent first reads it.
            get signal() {
              return signal();
            },
          }),
        input, { toAgui: aguiOptions, slice }, cancel);
    // In a broker the broker's cancel signal cancels; here abortRun() does.
    return broker === undefined ? this.cancellable(input, run) : run(brokerCancel);
  }
}

/** `declared` over `derived`, category by category (`custom` and unknown keys as declared). */
function mergeCapabilities(derived: AgentCapabilities, declared: AgentCapabilities): AgentCapabilities {
  const merged: Record<string, unknown> = { ...derived };
  for (const [key, value] of Object.entries(declared)) {
    const base = merged[key];
    const isObject = (x: unknown) => x !== null && typeof x === 'object' && !Array.isArray(x);
    merged[key] = isObject(base) && isObject(value) && key !== 'custom' ? { ...(base as object), ...(value as object) } : value;
  }
  return merged as AgentCapabilities;
}
