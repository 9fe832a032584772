import { Observable, Subscription, type Observer, type OperatorFunction, type Subscriber, type Unsubscribable } from 'rxjs';
import { warnDiagnostic } from './diagnostics.js';

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

/** What an operator does with each notification of its source, for one subscription. */
export interface OperateHandlers<T> {
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
export interface OperateContext {
  /** Unsubscribes the source; later source notifications are ignored. */
  unsubscribeSource(): void;
}

/**
 * Builds an operator whose state lives in the closure `init` creates for each subscription,
 * the public recipe from RxJS's guide: two subscribers (or a `retry`) never share state.
 *
 * Unlike a bare `new Observable`, a handler that throws does not escape as an unhandled error:
 * it is routed to the error path, where `flush` closes what the operator opened first.
 */
export function operate<T, R>(
  init: (subscriber: Subscriber<R>, context: OperateContext) => OperateHandlers<T>,
): OperatorFunction<T, R> {
  return (source) =>
    new Observable<R>((subscriber) => {
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
      const handleNext = (value: T) => {
        if (upstream.closed) return;
        try {
          handlers.next(value);
        } catch (error) {
          handleError(error);
        }
      };
      const handleComplete = () => {
        if (upstream.closed) return;
        safeUnsubscribe(upstream);
        try {
          if (handlers.complete) handlers.complete();
          else {
            handlers.flush?.();
            subscriber.complete();
          }
        } catch (error) {
          subscriber.error(error);
        }
      };
      const handleError = (error: unknown) => {
        if (upstream.closed) return;
        safeUnsubscribe(upstream);
        try {
          if (handlers.error) handlers.error(error);
          else {
            handlers.flush?.();
            subscriber.error(error);
          }
        } catch (secondError) {
          subscriber.error(secondError);
        }
      };
      // The source's subscriber is a Subscription that is also an Observer, which RxJS uses as the
      // subscriber itself: closing it stops even a synchronous source that is still emitting
      // (`of`, a loop checking `closed`), as a `take` downstream expects.
      const upstream = Object.assign(new Subscription(), {
        next(value: T) {
          if (!busy) {
            // The common case, without a closure per value.
            busy = true;
            try {
              handleNext(value);
              drain();
            } finally {
              busy = false;
            }
          } else (queued ??= []).push(() => handleNext(value));
        },
        error: (error: unknown) => deliver(() => handleError(error)),
        complete: () => deliver(handleComplete),
      }) as Subscription & Observer<T>;
      const fail = (error: unknown) => deliver(() => handleError(error));
      const handlers = init(subscriber, { unsubscribeSource: () => safeUnsubscribe(upstream) });
      // Linked before subscribing, so that a subscriber gone mid-emission stops the source at once.
      subscriber.add(() => {
        safeUnsubscribe(upstream);
        handlers.teardown?.();
      });
      // `init` may end the output at once (an already aborted signal): then never subscribe.
      if (!upstream.closed) {
        try {
          source.subscribe(upstream);
        } catch (error) {
          // A source that already ended runs its teardown at once, inside subscribe: a throw there
          // is a failed cleanup, not a failed run.
          if (upstream.closed) reportTeardownError(error);
          else fail(error);
        }
      }
      if (!upstream.closed && handlers.subscribed) {
        try {
          handlers.subscribed();
        } catch (error) {
          fail(error);
        }
      }
    });
}
