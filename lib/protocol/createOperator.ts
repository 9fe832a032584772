import { Observable, Subscription, pipe, type Observer, type OperatorFunction, type Subscriber, type Unsubscribable } from 'rxjs';
import { warnDiagnostic, type DiagnosticHandler } from './diagnostics.js';
import { createAgentEventReader, type AgentEventReader } from './normalizeAgentEvent.js';
import { keepShapes, recordType } from './recordType.js';
import { entityKind, isTokenEventType } from './table.js';

/**
 * Unsubscribes, and reports (through `console.warn`) a teardown that throws instead of letting it
 * escape: unsubscription happens in event listeners and timers, where an error would crash the
 * process, and a source's failed cleanup must not keep a run from ending.
 */
export function safeUnsubscribe(subscription: Unsubscribable | undefined): void {
  try {
    subscription?.unsubscribe();
  } catch (error) {
    reportTeardownError(error);
  }
}

/** Reports (through `console.warn`) a teardown that threw: what {@link safeUnsubscribe} does with it. */
export function reportTeardownError(error: unknown): void {
  // RxJS wraps teardown errors in an UnsubscriptionError that lists them.
  const causes = (error as { errors?: unknown[] } | null)?.errors ?? [error];
  const message = causes.map((cause) => (cause as Error | null)?.message ?? String(cause)).join('; ');
  warnDiagnostic({ message: `A source's teardown threw while it was unsubscribed: ${message}. Fix the cleanup function your Observable returns.`, event: error });
}

/** Where an operator sends its output: the subscriber, or the next operator of a fused chain. */
export interface OperatorSink<R> {
  next(value: R): void;
  error(error: unknown): void;
  complete(): void;
  /** Whether the receiver takes no more notifications. */
  readonly closed: boolean;
}

/**
 * What an operator does with each notification of its source, for one subscription. Each method
 * is called on the handlers object, so an operator may hold its subscription's state in that
 * object and give it methods shared by every subscription (less per run than a closure each).
 */
export interface OperatorHandlers<T> {
  /** Handles one source value. May throw: the throw is routed to `error`. */
  next(value: T): void;
  /** Sends the closers of what is still open; called before completion or error passes on. */
  flush?(): void;
  /** Source completed. Default: `flush`, then complete the subscriber. */
  complete?(): void;
  /** Source errored, or a handler threw. Default: `flush`, then error the subscriber. */
  error?(error: unknown): void;
  /** Called once the source subscription is set up (its synchronous emissions are done). */
  subscribed?(): void;
  /** Releases resources (listeners); never emits. */
  teardown?(): void;
  /**
   * For the first operator of a chain: the one event `next(value)` would send, when sending it is
   * all `next` would do (a chunk continuing the open message, say: its TEXT_MESSAGE_CONTENT), else
   * `undefined`. Changes nothing. `value` is the source's, not read yet: an operator that reads
   * agent events (`readsAgentEvents`) answers only for a value that reading leaves as it is. With
   * {@link passesAsIs} on the operators that read that event after it, a chain sends it to its
   * subscriber without going through them.
   */
  contentFor?(value: T): unknown;
  /**
   * Whether `next(event)` would send `event` on unchanged and do nothing else (a lifecycle passing
   * a plain TEXT_MESSAGE_CONTENT of a started run). Changes nothing.
   */
  passesAsIs?(event: unknown): boolean;
}

/** Lets handlers stop the source early, after they have sent a terminal notification. */
export interface OperatorContext {
  /** Unsubscribes the source; later source notifications are ignored. */
  unsubscribeSource(): void;
  /**
   * For an operator built with `passesMessageContentWhenIdle`: says whether, from now on, it sends
   * every TEXT_MESSAGE_CONTENT and REASONING_MESSAGE_CONTENT on unchanged without reading it (it
   * starts out not). While it does, a fused chain hands those events straight to the next operator
   * that reads them. Cheap when nothing changes: call it after each event the operator handles.
   */
  passMessageContent(passing: boolean): void;
}

/** Sets up one subscription's state of an operator and returns its handlers. */
export type OperatorInit<T, R> = (subscriber: OperatorSink<R>, context: OperatorContext) => OperatorHandlers<T>;

/** How an operator built by `createOperator` treats events, for `fuse`. */
export interface CreateOperatorOptions {
  /**
   * The operator sends every per-token event (the protocol table's `tokenEventTypes`:
   * TEXT_MESSAGE_CONTENT, TOOL_CALL_ARGS, REASONING_MESSAGE_CONTENT) on unchanged, and neither
   * reads nor counts them: in a fused chain they go past it. Default: false.
   */
  passesTokenEvents?: boolean | undefined;
  /**
   * The operator reads agent events: when it is the first of a chain (alone, or first in `fuse`),
   * each source event is read once through `normalizeAgentEvent` (snake_case field names as
   * camelCase, `null` in an optional field as absent), and what was read differently is reported
   * here, once per run. Operators further down the chain get the events as read. Default: events
   * are read as they come.
   */
  readsAgentEvents?: DiagnosticHandler | undefined;
  /**
   * The operator tells, through `context.passMessageContent`, when it passes the message content
   * events (TEXT_MESSAGE_CONTENT, REASONING_MESSAGE_CONTENT) on unchanged: a tool call correlator
   * with no call open, say. In a fused chain they then go past it. Default: false.
   */
  passesMessageContentWhenIdle?: boolean | undefined;
}

// Where an operator built by `createOperator` keeps its recipe, so that `fuse` can chain the handlers directly.
const recipeKey = Symbol('agui-rx createOperator recipe');

interface Recipe {
  init: OperatorInit<unknown, unknown>;
  passesTokenEvents: boolean;
  readsAgentEvents: DiagnosticHandler | undefined;
  passesMessageContentWhenIdle: boolean;
}

type FusableOperator<T, R> = OperatorFunction<T, R> & { [recipeKey]?: Recipe };

/**
 * The Observable of a chain of `createOperator` operators (and of the handlers' agent run, whose
 * only stage after the chain passes values on as they are): a throw from its subscriber's `next`
 * goes to the chain's error path, where each operator's `flush` closes what it opened, and
 * `mapRunLifecycle` ends the run with RUN_ERROR. A transport that cannot encode an event throws it
 * back into such a source, so that the run ends closed (no message left open on the wire); into
 * any other it must not throw (a Subject's caller, a timer's callback would get the throw).
 */
export class ChainObservable<T> extends Observable<T> {}

/**
 * Builds an operator whose state lives in the closure `init` creates for each subscription,
 * the public recipe from RxJS's guide: two subscribers (or a `retry`) never share state.
 *
 * Unlike a bare `new Observable`, a handler that throws does not escape as an unhandled error:
 * it is routed to the error path, where `flush` closes what the operator opened first.
 */
export function createOperator<T, R>(init: OperatorInit<T, R>, options: CreateOperatorOptions = {}): OperatorFunction<T, R> {
  const recipes: Recipe[] = [
    {
      init: init as OperatorInit<unknown, unknown>,
      passesTokenEvents: options.passesTokenEvents === true,
      readsAgentEvents: options.readsAgentEvents,
      passesMessageContentWhenIdle: options.passesMessageContentWhenIdle === true,
    },
  ];
  const operator: FusableOperator<T, R> = (source) => new ChainObservable<R>((subscriber) => subscribeChain(source, subscriber, recipes));
  operator[recipeKey] = recipes[0];
  return operator;
}

// An operator made by a call, kept (see keepShapes): its recipe field is a hidden class of its own.
keepShapes(createOperator(() => ({ next: ignore })));

/**
 * Composes operators built by `createOperator` into one that behaves as `pipe(...operators)` but runs
 * them in one subscription: each operator's output is handed straight to the next one's handlers,
 * with no Subscriber in between, and per-token events skip the operators that declare
 * `passesTokenEvents`, and message content the operators that say (`context.passMessageContent`)
 * they pass it unchanged for now: a token goes from the operator that sends it straight to the next
 * one that reads it. What it buys: the per-event cost of a long pipeline is mostly those hops;
 * `toAgui`'s six operators fused run about 1.2x as fast as the same six in a `pipe` on 1M mixed
 * events (docs/performance.md). Falls back to `pipe` when an operator was not built by `createOperator`.
 *
 * Typed as `pipe` is: each operator's input is the previous one's output.
 */
export function fuse<T, A>(op1: OperatorFunction<T, A>): OperatorFunction<T, A>;
export function fuse<T, A, B>(op1: OperatorFunction<T, A>, op2: OperatorFunction<A, B>): OperatorFunction<T, B>;
export function fuse<T, A, B, C>(op1: OperatorFunction<T, A>, op2: OperatorFunction<A, B>, op3: OperatorFunction<B, C>): OperatorFunction<T, C>;
export function fuse<T, A, B, C, D>(op1: OperatorFunction<T, A>, op2: OperatorFunction<A, B>, op3: OperatorFunction<B, C>, op4: OperatorFunction<C, D>): OperatorFunction<T, D>;
export function fuse<T, A, B, C, D, E>(
  op1: OperatorFunction<T, A>,
  op2: OperatorFunction<A, B>,
  op3: OperatorFunction<B, C>,
  op4: OperatorFunction<C, D>,
  op5: OperatorFunction<D, E>,
): OperatorFunction<T, E>;
export function fuse<T, A, B, C, D, E, F>(
  op1: OperatorFunction<T, A>,
  op2: OperatorFunction<A, B>,
  op3: OperatorFunction<B, C>,
  op4: OperatorFunction<C, D>,
  op5: OperatorFunction<D, E>,
  op6: OperatorFunction<E, F>,
): OperatorFunction<T, F>;
export function fuse<T, A, B, C, D, E, F, G>(
  op1: OperatorFunction<T, A>,
  op2: OperatorFunction<A, B>,
  op3: OperatorFunction<B, C>,
  op4: OperatorFunction<C, D>,
  op5: OperatorFunction<D, E>,
  op6: OperatorFunction<E, F>,
  op7: OperatorFunction<F, G>,
): OperatorFunction<T, G>;
export function fuse(...operators: OperatorFunction<unknown, unknown>[]): OperatorFunction<unknown, unknown>;
export function fuse(...operators: OperatorFunction<unknown, unknown>[]): OperatorFunction<unknown, unknown> {
  const recipes = operators.map((operator) => (operator as FusableOperator<unknown, unknown>)[recipeKey]);
  if (recipes.some((recipe) => recipe === undefined)) return (pipe as (...fns: OperatorFunction<unknown, unknown>[]) => OperatorFunction<unknown, unknown>)(...operators);
  return (source) => new ChainObservable<unknown>((subscriber) => subscribeChain(source, subscriber, recipes as Recipe[]));
}

// The message content events, which a stage declaring `passesMessageContentWhenIdle` may let go past it.
const textContent: string = entityKind.textMessage.content!;
const reasoningContent: string = entityKind.reasoningMessage.content!;

/**
 * One operator of a chain, for one subscription: the sink the operator before it writes to, and the
 * context its handlers get. A plain record whose methods are the shared module functions below,
 * on one frozen method table (`stageMethods`, its prototype): a few fields per stage instead of a
 * closure per method, and every stage has this one shape, so that the operators'
 * `subscriber.next(…)` calls stay monomorphic.
 */
interface Stage extends OperatorSink<unknown>, OperatorContext {
  /**
   * What it is and its state, as bits (`ENTRY`, `ROUTES`, `PASSES_ALL`, `PASSING_CONTENT`,
   * `CLOSED`, `TORN_DOWN`): one field instead of six, 40 bytes less per stage of every open
   * stream. `closed` reads its bit.
   */
  flags: number;
  readonly chain: Chain;
  /** Where its operator sends its output. */
  readonly out: OperatorSink<unknown>;
  /** Its operator's handlers; `handleNext` is copied out of them, so the per-event read sees one shape. */
  handlers: OperatorHandlers<unknown> | undefined;
  handleNext: (value: unknown) => void;
  /** Where TEXT_MESSAGE_CONTENT and REASONING_MESSAGE_CONTENT sent to it go: itself, or the next one that reads them. */
  content: OperatorSink<unknown>;
  /** Where the other per-token events (TOOL_CALL_ARGS) sent to it go. */
  token: OperatorSink<unknown>;
  /** Closes it and releases its resources, once. */
  tearDown(): void;
  /** Tells the operator its source subscription is set up. */
  subscribed(): void;
}

// A stage's flags.
/** Its operator is the chain's first: it reads the source. */
const ENTRY = 32;
/** Its input takes nothing more. */
const CLOSED = 1;
/** Its resources are released. */
const TORN_DOWN = 2;
/** It lets per-token events go past it (always, or when it says so): `content` and `token` say where. */
const ROUTES = 4;
/** It sends every per-token event on unchanged (`passesTokenEvents`, not the first stage). */
const PASSES_ALL = 8;
/** It said it passes the message content events on unchanged, for now. */
const PASSING_CONTENT = 16;

/** One subscription of a chain: what its stages share. */
interface Chain {
  readonly subscriber: Subscriber<unknown>;
  /** The source's subscriber; set before any stage is. */
  upstream: Upstream;
  /**
   * Where source events go: the first stage set up (stages are set up from the subscriber's end,
   * and the ones before a stage that ended at once never are). The stages are reached from it
   * through each one's `out`, up to the subscriber: no array of them per open stream.
   */
  head: OperatorSink<unknown>;
  /** Reads agent events as AG-UI spells them (the entry declared `readsAgentEvents`). */
  readonly reader: AgentEventReader | undefined;
  /** A handler is running: a notification that arrives now waits in `queued`. */
  busy: boolean;
  queued: (() => void)[] | undefined;
  /** The routes are set up: a stage's change of `passingContent` recomputes them. */
  routed: boolean;
  /**
   * The first stage's operator tells `contentFor`, and every stage its content reaches on the way
   * to the subscriber tells `passesAsIs`: a continuing token may take the way without hops (see
   * `nextFast`). A flag, not the list of those stages: an open stream holds one array fewer.
   */
  fast: boolean;
  /** Teardown of the subscriber: stops the source, releases every stage. */
  unsubscribe(): void;
}

function stageNext(this: Stage, value: unknown): void {
  const flags = this.flags;
  if ((flags & CLOSED) !== 0) return;
  if ((flags & ROUTES) !== 0 && typeof value === 'object' && value !== null) {
    const type = (value as { type?: unknown }).type;
    // Compared by value: the operators' own content events carry the table's strings. Going past
    // is safe: closing a stage closes every stage before it, so the stages skipped are open while this one is.
    if (type === textContent || type === reasoningContent) {
      if (this.content !== this) return this.content.next(value);
    } else if (this.token !== this && isTokenEventType(type)) return this.token.next(value);
  }
  const handleNext = this.handleNext;
  try {
    // Called on its handlers: an operator may keep its state in the handlers record and share its methods.
    handleNext.call(this.handlers, value);
  } catch (error) {
    stageError.call(this, error);
  }
}

function stageError(this: Stage, error: unknown): void {
  if ((this.flags & CLOSED) !== 0) return;
  closeUpstream(this);
  const handlers = this.handlers!;
  try {
    if (handlers.error) handlers.error(error);
    else {
      handlers.flush?.();
      this.out.error(error);
    }
  } catch (secondError) {
    this.out.error(secondError);
  }
}

function stageComplete(this: Stage): void {
  if ((this.flags & CLOSED) !== 0) return;
  closeUpstream(this);
  const handlers = this.handlers!;
  try {
    if (handlers.complete) handlers.complete();
    else {
      handlers.flush?.();
      this.out.complete();
    }
  } catch (error) {
    this.out.error(error);
  }
}

function stageTearDown(this: Stage): void {
  if ((this.flags & TORN_DOWN) !== 0) return;
  this.flags |= TORN_DOWN | CLOSED;
  this.handlers?.teardown?.();
}

function stageSubscribed(this: Stage): void {
  const handlers = this.handlers!;
  if ((this.flags & CLOSED) !== 0 || handlers.subscribed === undefined) return;
  try {
    handlers.subscribed();
  } catch (error) {
    deliver(this.chain, () => stageError.call(this, error));
  }
}

function stageUnsubscribeSource(this: Stage): void {
  closeUpstream(this);
}

function stagePassMessageContent(this: Stage, passing: boolean): void {
  if (((this.flags & PASSING_CONTENT) !== 0) === passing) return;
  this.flags ^= PASSING_CONTENT;
  if (this.chain.routed) reroute(this.chain);
}

// `stage` takes nothing more: the source and every stage before it stop too, as each operator's
// own source subscription would in a `pipe`.
function closeUpstream(stage: Stage): void {
  stage.flags |= CLOSED;
  const chain = stage.chain;
  safeUnsubscribe(chain.upstream);
  // A stage whose operator's `init` is running has none set up before it (set up from the subscriber's end).
  if (stage.handlers === undefined) return;
  for (let before = chain.head; before !== stage; before = (before as Stage).out) (before as Stage).tearDown();
}

// Recomputes every route: rare (a stage's declaration changed).
function reroute(chain: Chain): void {
  for (let sink = chain.head; sink !== chain.subscriber; sink = (sink as Stage).out) {
    const stage = sink as Stage;
    if ((stage.flags & ROUTES) !== 0) {
      stage.content = readerFrom(chain, stage, true);
      stage.token = readerFrom(chain, stage, false);
    }
  }
  chain.fast = hasFastPath(chain);
}

// The first of `stage` and the stages after it that reads the message content events (`content`),
// or the other per-token events; the subscriber when none does.
function readerFrom(chain: Chain, stage: Stage, content: boolean): OperatorSink<unknown> {
  let sink: OperatorSink<unknown> = stage;
  while (sink !== chain.subscriber) {
    const flags = (sink as Stage).flags;
    if ((flags & PASSES_ALL) === 0 && !(content && (flags & (PASSING_CONTENT | ENTRY)) === PASSING_CONTENT)) return sink;
    sink = (sink as Stage).out;
  }
  return sink;
}

// Where the content a stage's operator sends is first read: the next stage, or the one its routes send it to.
function contentReader(chain: Chain, stage: Stage): OperatorSink<unknown> {
  const next = stage.out;
  if (next === chain.subscriber) return next;
  return ((next as Stage).flags & ROUTES) !== 0 ? (next as Stage).content : next;
}

// `Chain.fast`: the first stage tells `contentFor`, and every stage its content reaches tells `passesAsIs`.
function hasFastPath(chain: Chain): boolean {
  const head = chain.head;
  if (head === chain.subscriber || ((head as Stage).flags & ENTRY) === 0 || (head as Stage).handlers?.contentFor === undefined) return false;
  for (let reader = contentReader(chain, head as Stage); reader !== chain.subscriber; reader = contentReader(chain, reader as Stage)) {
    if ((reader as Stage).handlers?.passesAsIs === undefined) return false;
  }
  return true;
}

/**
 * Sends a source value the way {@link Chain.fast} says there is, when the first operator's whole
 * answer to it is one event that every stage on the way passes as it is (a token continuing the
 * open message, most tokens of a run, which reading leaves as they are), straight to the
 * subscriber, without the reader's pass, each stage's `next` and the routing between them. What
 * the stages would have done is the same: `contentFor` and `passesAsIs` change nothing, a throw
 * from the subscriber goes to the last stage's error path, as its `next` would send it, and one
 * from reading the value to the first stage's. Returns false, having done nothing, for any other
 * value.
 *
 * Kept small, with what no continuing token takes in functions of their own (`queueNext` in the
 * caller, `readFailed`, and `sendFrom`, which the way of a declining stage shares): V8 inlines a hot
 * path whole only while its bytecode fits one budget (about 920 bytes, from the source's loop to the
 * subscriber), and a call left out of it costs a token more than the checks do.
 */
function nextFast(chain: Chain, value: unknown): boolean {
  const head = chain.head as Stage;
  if ((head.flags & CLOSED) !== 0) return false;
  let content: unknown;
  try {
    // Given the value as the source sent it: `contentFor` answers only for one the chain's reader leaves as it is.
    content = head.handlers!.contentFor!(value);
  } catch (error) {
    return readFailed(head, error);
  }
  if (content === undefined) return false;
  const subscriber = chain.subscriber;
  let sender = head;
  for (;;) {
    const reader = contentReader(chain, sender);
    if (reader === subscriber) return sendFrom(sender, subscriber, content);
    const stage = reader as Stage;
    // That stage does more with it: the way the first operator's `next` would send it.
    if ((stage.flags & CLOSED) !== 0 || !stage.handlers!.passesAsIs!(content)) return sendFrom(head, head.out, content);
    sender = stage;
  }
}

// A field that throws when read (a hostile getter): where reading it at the chain's entry sends it.
function readFailed(head: Stage, error: unknown): true {
  stageError.call(head, error);
  return true;
}

// `content` to `out`, as `sender`'s operator would send it: a throw goes to that stage's error path.
function sendFrom(sender: Stage, out: OperatorSink<unknown>, content: unknown): true {
  try {
    out.next(content);
  } catch (error) {
    stageError.call(sender, error);
  }
  return true;
}

// A notification that arrives while a handler is still running (a subscriber that feeds the
// source synchronously, say a tool executor answering TOOL_CALL_START) waits its turn, so
// that each input's outputs stay together and in order.
function deliver(chain: Chain, task: () => void): void {
  if (chain.busy) {
    (chain.queued ??= []).push(task);
    return;
  }
  chain.busy = true;
  try {
    task();
    drain(chain);
  } finally {
    chain.busy = false;
  }
}

function drain(chain: Chain): void {
  while (chain.queued !== undefined && chain.queued.length > 0) chain.queued.shift()!();
}

// A source value that arrives while a handler is still running: see deliver.
function queueNext(chain: Chain, value: unknown): void {
  (chain.queued ??= []).push(() => enter(chain, value));
}

// The chain's entry reads agent events as AG-UI spells them, once, with its state for this subscription.
function enter(chain: Chain, value: unknown): void {
  const reader = chain.reader;
  if (reader === undefined) return chain.head.next(value);
  let input: unknown;
  try {
    input = reader.read(value);
  } catch (error) {
    // A diagnostic handler that throws (or a hostile object) fails the run as a handler that throws does.
    return chain.head.error(error);
  }
  chain.head.next(input);
}

/**
 * The source's subscriber is a Subscription that is also an Observer, which RxJS uses as the
 * subscriber itself: closing it stops even a synchronous source that is still emitting (`of`, a
 * loop checking `closed`), as a `take` downstream expects. A class, as it must be a Subscription.
 */
class Upstream extends Subscription implements Observer<unknown> {
  constructor(readonly chain: Chain) {
    super();
  }

  next(value: unknown): void {
    const chain = this.chain;
    if (chain.busy) return queueNext(chain, value);
    // The common case, without a closure per value (and small: see nextFast).
    chain.busy = true;
    try {
      if (!chain.fast || !nextFast(chain, value)) enter(chain, value);
      if (chain.queued !== undefined) drain(chain);
    } finally {
      chain.busy = false;
    }
  }

  error(error: unknown): void {
    const chain = this.chain;
    deliver(chain, () => chain.head.error(error));
  }

  complete(): void {
    const chain = this.chain;
    deliver(chain, () => chain.head.complete());
  }
}
// Keeps the class's hidden class when no run is open (see recordType: the class of a constructor's
// records dies with the last of them, and the code that reads them is deoptimised). Held by
// keepShapes: a module's variable that nothing reads is no root for V8's GC.
keepShapes(new Upstream(undefined as unknown as Chain));

function chainUnsubscribe(this: Chain): void {
  safeUnsubscribe(this.upstream);
  for (let sink = this.head; sink !== this.subscriber; sink = (sink as Stage).out) (sink as Stage).tearDown();
}

function ignore(): void {}

// The methods every stage shares: its prototype, so that a stage holds only its fields (one shape).
const stageMethods: Pick<Stage, 'closed' | 'next' | 'error' | 'complete' | 'tearDown' | 'subscribed' | 'unsubscribeSource' | 'passMessageContent'> = Object.freeze({
  // What an operator reads of its sink (`OperatorSink.closed`), from the stage's flags.
  get closed(): boolean {
    return ((this as unknown as Stage).flags & CLOSED) !== 0;
  },
  next: stageNext,
  error: stageError,
  complete: stageComplete,
  tearDown: stageTearDown,
  subscribed: stageSubscribed,
  unsubscribeSource: stageUnsubscribeSource,
  passMessageContent: stagePassMessageContent,
});
const StageRecord = recordType<Stage>(stageMethods);

function subscribeChain(source: Observable<unknown>, subscriber: Subscriber<unknown>, recipes: readonly Recipe[]): void {
  const diagnoseEntry = recipes[0].readsAgentEvents;
  const chain: Chain = {
    subscriber,
    upstream: undefined as unknown as Upstream,
    head: subscriber,
    reader: diagnoseEntry === undefined ? undefined : createAgentEventReader(diagnoseEntry),
    busy: false,
    queued: undefined,
    routed: false,
    fast: false,
    unsubscribe: chainUnsubscribe,
  };
  chain.upstream = new Upstream(chain);

  // Set up from the subscriber's end, as nested subscriptions would: an operator whose `init`
  // ends the output at once (an already aborted signal) leaves the ones before it unsubscribed.
  // Each stage after the first that passes per-token events (always, or when it says so) routes
  // them: a token event goes from the stage that sends it straight to the next one that reads it.
  let out: OperatorSink<unknown> = subscriber;
  let endedEarly = false;
  for (let index = recipes.length - 1; index >= 0; index--) {
    const recipe = recipes[index];
    const routes = index > 0 && (recipe.passesTokenEvents || recipe.passesMessageContentWhenIdle);
    const passesAll = recipe.passesTokenEvents && index > 0;
    const stage = new StageRecord();
    stage.flags = (index === 0 ? ENTRY : 0) | (routes ? ROUTES : 0) | (passesAll ? PASSES_ALL : 0);
    stage.chain = chain;
    stage.out = out;
    stage.handlers = undefined;
    stage.handleNext = ignore;
    stage.content = stage;
    stage.token = stage;
    StageRecord.shaped(stage);
    const handlers = recipe.init(out, stage);
    stage.handlers = handlers;
    stage.handleNext = handlers.next;
    chain.head = stage as Stage;
    if ((stage.flags & CLOSED) !== 0) {
      endedEarly = true;
      break;
    }
    out = stage;
  }
  reroute(chain);
  chain.routed = true;
  // Linked before subscribing, so that a subscriber gone mid-emission stops the source at once
  // (and run at once when the subscriber has already ended).
  subscriber.add(chain);
  if (endedEarly) return;
  try {
    source.subscribe(chain.upstream);
  } catch (error) {
    // A source that already ended runs its teardown at once, inside subscribe: a throw there
    // is a failed cleanup, not a failed run.
    if (chain.upstream.closed) reportTeardownError(error);
    else deliver(chain, () => chain.head.error(error));
  }
  for (let sink = chain.head; sink !== subscriber; sink = (sink as Stage).out) (sink as Stage).subscribed();
}
