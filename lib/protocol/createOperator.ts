import { Observable, Subscription, pipe, type Observer, type OperatorFunction, type Subscriber, type Unsubscribable } from 'rxjs';
import { warnDiagnostic, type DiagnosticHandler } from './diagnostics.js';
import { createAgentEventReader } from './normalizeAgentEvent.js';
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

function reportTeardownError(error: unknown): void {
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

/** What an operator does with each notification of its source, for one subscription. */
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
  const operator: FusableOperator<T, R> = (source) => new Observable<R>((subscriber) => subscribeChain(source, subscriber, recipes));
  operator[recipeKey] = recipes[0];
  return operator;
}

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
  return (source) => new Observable<unknown>((subscriber) => subscribeChain(source, subscriber, recipes as Recipe[]));
}

// The message content events, which a stage declaring `passesMessageContentWhenIdle` may let go past it.
const textContent: string = entityKind.textMessage.content!;
const reasoningContent: string = entityKind.reasoningMessage.content!;

/** Where the per-token events sent to one stage's input go: the stage, or past it to the next one that reads them. */
interface Route {
  /** Where TEXT_MESSAGE_CONTENT and REASONING_MESSAGE_CONTENT go. */
  content: OperatorSink<unknown>;
  /** Where the other per-token events (TOOL_CALL_ARGS) go. */
  token: OperatorSink<unknown>;
}

/**
 * The sink in front of `stage`, an operator that (now or at times) passes per-token events on
 * unchanged: those go straight where `route` says, where the stage would have sent them (unless
 * the stage has closed: closing a stage closes every stage before it, so the stages skipped are
 * open while `stage` is).
 */
function routingTokenEvents(stage: Stage, route: Route): OperatorSink<unknown> {
  const sink = {
    next(value: unknown) {
      if (typeof value === 'object' && value !== null) {
        const type = (value as { type?: unknown }).type;
        // Compared by value: the operators' own content events carry the table's strings.
        if (type === textContent || type === reasoningContent) {
          if (!stage.closed) route.content.next(value);
          return;
        }
        if (isTokenEventType(type)) {
          if (!stage.closed) route.token.next(value);
          return;
        }
      }
      stage.next(value);
    },
    error: (error: unknown) => stage.error(error),
    complete: () => stage.complete(),
  };
  // Defined afterwards: V8 makes an object literal with a getter a dictionary (~400 bytes per open stream).
  return Object.defineProperty(sink, 'closed', { get: () => stage.closed }) as typeof sink & { readonly closed: boolean };
}

/**
 * One operator of a chain, for one subscription: the sink the operator before it writes to.
 * Every stage has this one shape (`closed` is a data property, not a getter), so that the
 * operators' `subscriber.next(…)` calls stay monomorphic.
 */
interface Stage extends OperatorSink<unknown> {
  /** Its input takes nothing more. */
  closed: boolean;
  /** Closes it and releases its resources, once. */
  tearDown(): void;
  /** Tells the operator its source subscription is set up. */
  subscribed(): void;
}

function subscribeChain(source: Observable<unknown>, subscriber: Subscriber<unknown>, recipes: readonly Recipe[]): void {
  // stages[0] reads the source; the last one writes to the subscriber.
  const stages: Stage[] = new Array(recipes.length);
  let first = recipes.length;

  // Stage `index` takes nothing more: the source and every stage before it stop too, as each
  // operator's own source subscription would in a `pipe`.
  const closeUpstream = (index: number) => {
    stages[index].closed = true;
    safeUnsubscribe(upstream);
    for (let i = first; i < index; i++) stages[i].tearDown();
  };

  const createStage = (index: number, out: OperatorSink<unknown>): Stage => {
    // Handlers live in this closure, not on the stage: the stages share one body, and a property
    // read there would see every operator's handler shape.
    let handlers: OperatorHandlers<unknown> | undefined;
    let handleNext: (value: unknown) => void = () => {};
    let tornDown = false;
    const fail = (error: unknown) => {
      if (stage.closed) return;
      closeUpstream(index);
      try {
        if (handlers!.error) handlers!.error(error);
        else {
          handlers!.flush?.();
          out.error(error);
        }
      } catch (secondError) {
        out.error(secondError);
      }
    };
    const stage: Stage = {
      next(value) {
        if (stage.closed) return;
        try {
          handleNext(value);
        } catch (error) {
          fail(error);
        }
      },
      error: fail,
      complete() {
        if (stage.closed) return;
        closeUpstream(index);
        try {
          if (handlers!.complete) handlers!.complete();
          else {
            handlers!.flush?.();
            out.complete();
          }
        } catch (error) {
          out.error(error);
        }
      },
      closed: false,
      tearDown() {
        if (tornDown) return;
        tornDown = true;
        stage.closed = true;
        handlers?.teardown?.();
      },
      subscribed() {
        if (stage.closed || handlers!.subscribed === undefined) return;
        try {
          handlers!.subscribed();
        } catch (error) {
          deliver(() => fail(error));
        }
      },
    };
    stages[index] = stage;
    const passMessageContent = (passing: boolean) => {
      if (passingContent[index] === passing) return;
      passingContent[index] = passing;
      if (routed) reroute();
    };
    handlers = recipes[index].init(out, { unsubscribeSource: () => closeUpstream(index), passMessageContent });
    handleNext = handlers.next;
    return stage;
  };

  // A notification that arrives while a handler is still running (a subscriber that feeds the
  // source synchronously, say a tool executor answering TOOL_CALL_START) waits its turn, so
  // that each input's outputs stay together and in order.
  let busy = false;
  let queued: (() => void)[] | undefined;
  const drain = () => {
    while (queued !== undefined && queued.length > 0) queued.shift()!();
  };
  const deliver = (task: () => void) => {
    if (busy) {
      (queued ??= []).push(task);
      return;
    }
    busy = true;
    try {
      task();
      drain();
    } finally {
      busy = false;
    }
  };
  let head: OperatorSink<unknown>;
  // The chain's entry reads agent events as AG-UI spells them, once, with its state for this subscription.
  const diagnoseEntry = recipes[0].readsAgentEvents;
  const read = diagnoseEntry === undefined ? undefined : createAgentEventReader(diagnoseEntry);
  const enter = (value: unknown) => {
    if (read === undefined) return head.next(value);
    let input: unknown;
    try {
      input = read(value);
    } catch (error) {
      // A diagnostic handler that throws (or a hostile object) fails the run as a handler that throws does.
      return head.error(error);
    }
    head.next(input);
  };
  // The source's subscriber is a Subscription that is also an Observer, which RxJS uses as the
  // subscriber itself: closing it stops even a synchronous source that is still emitting
  // (`of`, a loop checking `closed`), as a `take` downstream expects.
  const upstream = Object.assign(new Subscription(), {
    next(value: unknown) {
      if (!busy) {
        // The common case, without a closure per value.
        busy = true;
        try {
          enter(value);
          drain();
        } finally {
          busy = false;
        }
      } else (queued ??= []).push(() => enter(value));
    },
    error: (error: unknown) => deliver(() => head.error(error)),
    complete: () => deliver(() => head.complete()),
  }) as Subscription & Observer<unknown>;

  // Set up from the subscriber's end, as nested subscriptions would: an operator whose `init`
  // ends the output at once (an already aborted signal) leaves the ones before it unsubscribed.
  // Each stage after the first that passes per-token events (always, or when it says so) gets a
  // routing sink in front: a token event goes from the stage that sends it straight to the next
  // one that reads it.
  const passingContent: boolean[] = new Array(recipes.length).fill(false);
  const routes: (Route | undefined)[] = new Array(recipes.length);
  let routed = false;
  // Recomputes every route, from the subscriber's end: rare (a stage's declaration changed).
  const reroute = () => {
    let content: OperatorSink<unknown> = subscriber;
    let token: OperatorSink<unknown> = subscriber;
    for (let index = recipes.length - 1; index >= first; index--) {
      const stage = stages[index];
      const route = routes[index];
      const passesAll = recipes[index].passesTokenEvents && index > 0;
      if (!passesAll) token = stage;
      if (!passesAll && !(passingContent[index] && index > 0)) content = stage;
      if (route !== undefined) {
        route.content = content;
        route.token = token;
      }
    }
  };
  let out: OperatorSink<unknown> = subscriber;
  let endedEarly = false;
  for (let index = recipes.length - 1; index >= 0; index--) {
    const stage = createStage(index, out);
    first = index;
    if (stage.closed) {
      endedEarly = true;
      break;
    }
    const recipe = recipes[index];
    if (index > 0 && (recipe.passesTokenEvents || recipe.passesMessageContentWhenIdle)) {
      const route: Route = { content: stage, token: stage };
      routes[index] = route;
      out = routingTokenEvents(stage, route);
    } else out = stage;
  }
  reroute();
  routed = true;
  // Linked before subscribing, so that a subscriber gone mid-emission stops the source at once
  // (and run at once when the subscriber has already ended).
  subscriber.add(() => {
    safeUnsubscribe(upstream);
    for (let i = first; i < stages.length; i++) stages[i].tearDown();
  });
  if (endedEarly) return;
  head = out;
  try {
    source.subscribe(upstream);
  } catch (error) {
    // A source that already ended runs its teardown at once, inside subscribe: a throw there
    // is a failed cleanup, not a failed run.
    if (upstream.closed) reportTeardownError(error);
    else deliver(() => head.error(error));
  }
  for (let i = first; i < stages.length; i++) {
    stages[i].subscribed();
  }
}
