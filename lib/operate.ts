import { Observable, Subscription, type OperatorFunction, type Subscriber } from 'rxjs';

/** What an operator does with each notification of its source, for one subscription. */
export interface OperateHandlers<T> {
  /** Handles one source value. May throw: the throw is routed to `error`. */
  next(value: T): void;
  /** Source completed: flush what is open, then complete the subscriber. */
  complete(): void;
  /** Source errored, or a handler threw: flush what is open, then error the subscriber. */
  error(error: unknown): void;
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
 * it is routed to the `error` handler, so the operator can close what it opened first.
 */
export function operate<T, R>(
  init: (subscriber: Subscriber<R>, context: OperateContext) => OperateHandlers<T>,
): OperatorFunction<T, R> {
  return (source) =>
    new Observable<R>((subscriber) => {
      const sourceSubscription = new Subscription();
      let stopped = false;
      const context: OperateContext = {
        unsubscribeSource() {
          stopped = true;
          sourceSubscription.unsubscribe();
        },
      };
      const handlers = init(subscriber, context);
      const fail = (error: unknown) => {
        if (stopped) return;
        stopped = true;
        sourceSubscription.unsubscribe();
        try {
          handlers.error(error);
        } catch (secondError) {
          subscriber.error(secondError);
        }
      };
      // `init` may end the output at once (an already aborted signal): then never subscribe.
      if (stopped) return () => handlers.teardown?.();
      sourceSubscription.add(
        source.subscribe({
          next(value) {
            if (stopped) return;
            try {
              handlers.next(value);
            } catch (error) {
              fail(error);
            }
          },
          error: fail,
          complete() {
            if (stopped) return;
            stopped = true;
            try {
              handlers.complete();
            } catch (error) {
              subscriber.error(error);
            }
          },
        }),
      );
      if (!stopped && handlers.subscribed) {
        try {
          handlers.subscribed();
        } catch (error) {
          fail(error);
        }
      }
      return () => {
        stopped = true;
        sourceSubscription.unsubscribe();
        handlers.teardown?.();
      };
    });
}
