/** A Redis command that got no answer within its deadline (the store turns it into `STORE_UNAVAILABLE`). */
export class DeadlineExceeded extends Error {
  constructor(ms: number) {
    super(`no answer within ${ms} ms`);
    this.name = 'DeadlineExceeded';
  }
}

/**
 * `promise`, or a rejection with {@link DeadlineExceeded} when it has not settled within `ms`.
 * What it settles with later is ignored (handled: never an unhandled rejection).
 */
export function withDeadline<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new DeadlineExceeded(ms)), ms);
    // A pending command keeps nothing alive on its own.
    timer.unref?.();
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

/**
 * `client` with a client-side deadline on every command: each method that returns a promise
 * rejects with {@link DeadlineExceeded} after `ms` without an answer.
 *
 * node-redis's own `timeout` command option stops counting once the command is written to the
 * socket, so a Redis that is frozen (SIGSTOP) or behind a network blackhole, with the connection
 * still open, would leave every command pending for as long as it lasts. The connection is kept:
 * node-redis matches replies to commands in the order it sent them, so an answer that comes after
 * its deadline settles its own (ignored) promise, never another command's.
 */
export function withDeadlines<Client extends object>(client: Client, ms: number): Client {
  return new Proxy(client, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property, target);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        const result: unknown = Reflect.apply(value, target, args);
        return result instanceof Promise ? withDeadline(result, ms) : result;
      };
    },
  });
}
