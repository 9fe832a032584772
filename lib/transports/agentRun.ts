import type { Event, RunAgentInput } from '@ag-ui/core';
import { EventType } from '@ag-ui/core';
import { Observable, Subscription, defer, type Observer, type Subscriber, type Unsubscribable } from 'rxjs';
import { toAgui, type ToAguiOptions } from '../../operators/toAgui.js';
import type { CancelSignal } from '../protocol/cancelSignal.js';
import type { AgentResult } from './fromAgentResult.js';
import { fromAgentResult, type SliceOptions } from './fromAgentResult.js';
import { checkedInput, unreportedInput, type CheckedInputOption } from '../protocol/checkedInput.js';
import { ChainObservable, reportTeardownError } from '../protocol/createOperator.js';
import { keepShapes } from '../protocol/recordType.js';

/** `toAgui`'s options that every run of a handler (or agent) shares: the run's ids, input and signal are its own. */
type SharedToAguiOptions = Omit<ToAguiOptions, 'threadId' | 'runId' | 'parentRunId' | 'input' | 'signal'>;

/**
 * `toAgui`'s options as `agentRun` takes them: the shared ones, this run's `onError` and
 * validated input when the caller has them (they win over the shared ones), whether that `onError`
 * leaves the report's `input` unread (`inputUnreported`: the run's failures then keep no input; the
 * lifecycle drops it after RUN_STARTED in any case), and how an iterable agent is sliced.
 */
export type AgentRunOptions = {
  toAgui: SharedToAguiOptions & CheckedInputOption;
  onError?: ToAguiOptions['onError'];
  checked?: RunAgentInput | undefined;
  inputUnreported?: boolean | undefined;
  slice: SliceOptions;
};

/**
 * One run of an agent: what it returns for `input` (an Observable, or an iterable pulled in
 * slices) piped through `toAgui` with the run's ids, input and `cancel`. The agent's `signal` is
 * aborted only for a run cancelled before its terminal event (unsubscribed, or `cancel` aborted),
 * never after a run that ended by itself, so post-run work may still use it; aborting `cancel`
 * before the end ends the run with RUN_FINISHED `cancelled`. Shared by the HTTP handlers and
 * `InProcessAgent`; not part of the public API.
 *
 * The agent's signal is made when `start` first asks for it: an open run whose agent never reads
 * it holds no AbortController (most of what an idle stream would otherwise hold besides toAgui).
 * When the agent reads it after a cancellation, it comes already aborted.
 *
 * @param start Calls the agent; `signal()` gives its signal (made on the first call).
 * @param input The run's RunAgentInput (its `threadId`, `runId`, `parentRunId` name the run).
 * @param options `toAgui`'s other options, and how an iterable agent is sliced.
 * @param cancel Aborting it cancels the run (a broker's cancel, `abortRun()`).
 */
export function agentRun(start: (signal: () => AbortSignal) => AgentResult<unknown>, input: RunAgentInput, options: AgentRunOptions, cancel?: CancelSignal): Observable<Event> {
  // Its subscriber's throw reaches toAgui's chain through the run's state: a ChainObservable too.
  return new ChainObservable<Event>((subscriber) => runAgent(subscriber, start, input, options, cancel));
}

/**
 * One subscription of {@link agentRun}: the subscriber of the run's events through toAgui, a
 * `Subscription` that is also their `Observer`, which RxJS takes as the subscriber itself (no
 * `SafeSubscriber` between toAgui and it: two objects fewer per run, one hop fewer per event); and
 * the teardown of the outer subscription (its `unsubscribe`). A class, as it must be a `Subscription`.
 */
class AgentRunState extends Subscription implements Observer<Event> {
  /** Made when the agent first reads its signal. */
  controller: AbortController | undefined = undefined;
  /** `cancel`'s listener, made with the controller (only then does `cancel` get a listener of ours). */
  onCancel: (() => void) | undefined = undefined;
  /** The run's terminal event went by (or it completed, or failed): nothing aborts the agent after… */
  ended = false;
  /** …unless that terminal event was the lifecycle's answer to `cancel` (it came while `cancel` was aborted). */
  endedByCancel = false;
  /** The agent's signal is (or, made later, comes) aborted. */
  aborted = false;

  constructor(
    readonly subscriber: Subscriber<Event>,
    readonly cancel: CancelSignal | undefined,
  ) {
    super();
  }

  next(event: Event): void {
    if (this.closed) return;
    // Its terminal event delivered, the run is over, whatever the reader does next.
    if (!this.ended && (event.type === EventType.RUN_FINISHED || event.type === EventType.RUN_ERROR)) {
      this.ended = true;
      this.endedByCancel = this.cancel?.aborted === true;
    }
    this.subscriber.next(event);
  }

  error(error: unknown): void {
    if (this.closed) return;
    this.ended = true;
    this.subscriber.error(error);
  }

  complete(): void {
    if (this.closed) return;
    this.ended = true;
    this.subscriber.complete();
  }

  override unsubscribe(): void {
    if (this.closed) return;
    if (this.onCancel !== undefined) this.cancel?.removeEventListener('abort', this.onCancel);
    // Unsubscribed first (toAgui's chain is its finalizer), so that the lifecycle sends nothing for the abort; then the agent's own work is aborted.
    try {
      super.unsubscribe();
    } catch (error) {
      reportTeardownError(error);
    }
    abort(this);
  }
}
// Keeps the class's hidden class when no run is open (see recordType: the class of a constructor's
// objects dies with the last of them, and the code that reads them is deoptimised). Held by
// keepShapes: a module's variable that nothing reads is no root for V8's GC.
keepShapes(new AgentRunState(undefined as unknown as Subscriber<Event>, undefined));

function runAgent(subscriber: Subscriber<Event>, start: (signal: () => AbortSignal) => AgentResult<unknown>, input: RunAgentInput, options: AgentRunOptions, cancel: CancelSignal | undefined): Unsubscribable {
  const run = new AgentRunState(subscriber, cancel);
  agentEvents(start, () => signalOf(run), input, options, cancel).subscribe(run);
  // The run is its own teardown (its `unsubscribe`): no closure per run for it.
  return run;
}

function abort(run: AgentRunState): void {
  if (run.aborted || (run.ended && !run.endedByCancel)) return;
  run.aborted = true;
  if (run.onCancel !== undefined) run.cancel?.removeEventListener('abort', run.onCancel);
  run.controller?.abort();
}

// Made when the agent first reads its signal; only then does `cancel` get a listener of ours, after
// the lifecycle's own (added when it was subscribed): a cancel ends the run first, then aborts the agent.
function signalOf(run: AgentRunState): AbortSignal {
  if (run.controller === undefined) {
    const controller = (run.controller = new AbortController());
    if (run.aborted) controller.abort();
    else if (run.cancel?.aborted === true) abort(run);
    else if (!run.ended && run.cancel !== undefined) run.cancel.addEventListener('abort', (run.onCancel = () => abort(run)));
  }
  return run.controller.signal;
}

/**
 * The agent's events through toAgui. The lifecycle listens to `cancel` itself, and so ends the run
 * (RUN_FINISHED `cancelled`) before the agent hears of it; without `cancel` it needs no signal: the
 * agent is aborted only once unsubscribed. Made apart from {@link runAgent} so that the open run's
 * closures do not hold `start` and the options.
 */
function agentEvents(start: (signal: () => AbortSignal) => AgentResult<unknown>, signal: () => AbortSignal, input: RunAgentInput, options: AgentRunOptions, cancel: CancelSignal | undefined): Observable<Event> {
  return defer(() => fromAgentResult(start(signal), options.slice) as Observable<never>).pipe(toAgui(runOptionsOf(options, input, cancel)));
}

/**
 * One run's `toAgui` options as one literal of one shape, every key named (the type makes a key
 * `toAgui` gains a compile error here). Not spreads: the two this replaced (the caller's options
 * with a symbol key, then again with the run's ids) cost 2–3 µs per run in a warm loop against
 * 0.3 µs for this literal, and a copy takes its source's shape, which differs from caller to caller.
 */
function runOptionsOf({ toAgui: shared, onError, checked, inputUnreported }: AgentRunOptions, input: RunAgentInput, cancel: CancelSignal | undefined): ToAguiOptions & CheckedInputOption {
  const options: { [K in keyof Required<ToAguiOptions>]: ToAguiOptions[K] } & CheckedInputOption = {
    threadId: input.threadId,
    runId: input.runId,
    parentRunId: input.parentRunId,
    input,
    signal: cancel,
    generateId: shared.generateId,
    onDiagnostic: shared.onDiagnostic,
    initialState: shared.initialState,
    immutableState: shared.immutableState,
    exposeErrorStack: shared.exposeErrorStack,
    onError: onError ?? shared.onError,
    errorMessages: shared.errorMessages,
    [checkedInput]: checked ?? shared[checkedInput],
    [unreportedInput]: inputUnreported ?? shared[unreportedInput],
  };
  return options;
}
