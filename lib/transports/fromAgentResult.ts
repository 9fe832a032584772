import { Observable, from, isObservable, mergeMap, of, type ObservableInput } from 'rxjs';
import { AguiRxError, describeValue } from '../protocol/errors.js';

/** What an agent may return: an Observable, or an iterable or async iterable (a generator, an array) pulled in slices. */
export type AgentResult<T> = Observable<T> | Iterable<T> | AsyncIterable<T>;

/** How an iterable agent is pulled: the size of a slice, after which the event loop gets a turn. */
export interface SliceOptions {
  /** An iterable agent: events pulled in one slice before yielding to the event loop, a count (at least 1). Default: 256. */
  sliceEvents?: number | undefined;
  /** An iterable agent: time one slice may take before yielding to the event loop, in ms. Default: 5. */
  sliceMs?: number | undefined;
  /**
   * Asked before each slice: a promise to wait for before pulling (the response's `'drain'`), or
   * undefined to go on. The Node handler passes one so that an iterable agent is pulled only as fast
   * as its client reads.
   */
  ready?: (() => Promise<void> | undefined) | undefined;
}

/** Default slice: 256 events or 5 ms, whichever comes first. */
const DEFAULT_SLICE_EVENTS = 256;
const DEFAULT_SLICE_MS = 5;

const now = () => performance.now();
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * An agent's result as an Observable: an Observable as is; an iterable or async iterable pulled in
 * slices, so that one agent never holds the event loop (see {@link fromIterableInSlices}); what else
 * RxJS's `from` takes (a promise, an interop Observable) through `from`.
 *
 * @throws AguiRxError `INVALID_AGENT_RESULT` (which the run turns into RUN_ERROR) for anything else:
 * `undefined`, a string, a number, a plain object.
 */
export function fromAgentResult<T>(result: AgentResult<T>, options: SliceOptions = {}): Observable<T> {
  if (isObservable(result)) return result;
  const isObject = result !== null && (typeof result === 'object' || typeof result === 'function');
  if (isObject && (Symbol.asyncIterator in result || Symbol.iterator in result)) return fromIterableInSlices(result, options);
  // An `async` agent returns a promise: of an Observable or an iterable, which is what it meant (not one event).
  if (isObject && typeof (result as PromiseLike<unknown>).then === 'function') {
    return from(result as PromiseLike<unknown>).pipe(
      mergeMap((value) => (value !== null && typeof value === 'object' && 'type' in value ? of(value as T) : fromAgentResult(value as AgentResult<T>, options))),
    );
  }
  try {
    if (isObject) return from(result as ObservableInput<T>);
  } catch {
    // Not an ObservableInput either: refused below, by us, with what to return instead.
  }
  throw new AguiRxError(
    'INVALID_AGENT_RESULT',
    `The agent returned ${describeValue(result)}, not events: return an Observable, an iterable (an array, a generator) or an async iterable (an async generator) of AgentEvents.`,
  );
}

/**
 * Pulls an iterable or async iterable into an Observable in slices: `sliceEvents` values or
 * `sliceMs` milliseconds (the clock is read every 16 values), whichever comes first, then a turn of
 * the event loop (`setImmediate`), so that timers, sockets and other streams run between slices.
 *
 * The first slice is pulled at once: a short synchronous iterable completes during `subscribe`, as
 * `from(array)` does. Rules:
 * 1. Values are emitted in order, each when pulled; the iterator's end completes, its throw errors.
 * 2. Unsubscribing stops the pull before the next value and calls the iterator's `return()` (a
 *    generator's `finally` runs); never after it ended or threw.
 * 3. `ready()`, asked before each slice, may hold the next slice back until its promise settles.
 *
 * @param source The values: an array, a generator, any iterable or async iterable.
 * @param options `sliceEvents` (count, default 256), `sliceMs` (ms, default 5), `ready`.
 * @return An Observable of the source's values.
 */
export function fromIterableInSlices<T>(source: Iterable<T> | AsyncIterable<T>, options: SliceOptions = {}): Observable<T> {
  const sliceEvents = Math.max(1, options.sliceEvents ?? DEFAULT_SLICE_EVENTS);
  const sliceMs = options.sliceMs ?? DEFAULT_SLICE_MS;
  const { ready } = options;
  return new Observable<T>((subscriber) => {
    const async = Symbol.asyncIterator in source;
    const iterator = async ? (source as AsyncIterable<T>)[Symbol.asyncIterator]() : (source as Iterable<T>)[Symbol.iterator]();
    // Whether the iterator is finished (ended, threw, or was returned): return() is called at most once, and never after.
    let finished = false;

    /** Hands on one step's result. @return false once the iterator ended or the subscriber closed. */
    const settle = (result: IteratorResult<T>): boolean => {
      if (result.done) {
        finished = true;
        subscriber.complete();
        return false;
      }
      subscriber.next(result.value);
      return !subscriber.closed;
    };
    const fail = (error: unknown) => {
      finished = true;
      subscriber.error(error);
    };

    const pull = async (): Promise<void> => {
      for (let sliceIndex = 0; ; sliceIndex++) {
        if (sliceIndex > 0) {
          await nextTurn();
          const wait = ready?.();
          if (wait !== undefined) await wait;
          if (subscriber.closed) return;
        }
        const deadline = now() + sliceMs;
        for (let count = 0; count < sliceEvents; count++) {
          let result: IteratorResult<T>;
          try {
            // An async iterator's values arrive in microtasks, which never let I/O run: it is sliced too.
            result = async ? await (iterator as AsyncIterator<T>).next() : (iterator as Iterator<T>).next();
          } catch (error) {
            return fail(error);
          }
          if (subscriber.closed) return;
          if (!settle(result)) return;
          // The clock is read every 16 values: a value costs far less than a clock read's worth of precision.
          if ((count & 15) === 15 && now() >= deadline) break;
        }
      }
    };

    void pull().catch(fail);
    return () => {
      if (finished) return;
      finished = true;
      // A generator's `finally` runs; its errors have nobody to go to.
      try {
        const returned = iterator.return?.();
        if (returned !== undefined && typeof (returned as Promise<unknown>).then === 'function') (returned as Promise<unknown>).then(undefined, () => undefined);
      } catch {
        // ignored: see above
      }
    };
  });
}
