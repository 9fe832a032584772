import { AGUIError } from '@ag-ui/core';

/**
 * The one error agui-rx raises. Its message says what failed, why, and what to do;
 * `code` is a stable machine-readable name that `mapRunLifecycle` copies onto RUN_ERROR.
 *
 * Thrown synchronously only for bad operator options; everything else reaches the
 * subscriber as an `error` notification, which `mapRunLifecycle` turns into RUN_ERROR.
 */
export class AguiRxError extends AGUIError {
  /** Stable error code, e.g. `INVALID_EVENT`, `INVALID_STATE_DELTA`. Sent as RUN_ERROR `code`. */
  readonly code: string;

  constructor(code: string, message: string) {
    super(message);
    this.name = 'AguiRxError';
    this.code = code;
  }
}

/** Short, bounded description of a value for error messages (never the whole payload). */
export function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (value === undefined) return 'undefined';
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? value.slice(0, 40) + '…' : value);
  if (typeof value === 'bigint') return `a BigInt (${value}n)`;
  // Array.isArray throws on a revoked Proxy: a description must never throw.
  try {
    if (Array.isArray(value)) return `an array of ${value.length}`;
  } catch {
    return 'an unreadable object';
  }
  if (typeof value === 'object') return 'an object';
  if (typeof value === 'function') return 'a function';
  if (typeof value === 'symbol') return 'a symbol';
  return `${typeof value} ${String(value)}`;
}

/**
 * The message of whatever was thrown: a string, an Error (of any realm) or an object with a
 * `message`, anything else as JSON; `fallback` when there is nothing to say (absent, null, empty).
 * Never throws (a hostile getter, a revoked Proxy), since it is what error paths call.
 */
export function errorMessage(error: unknown, fallback: string): string {
  try {
    if (typeof error === 'string') return error === '' ? fallback : error;
    if (error === undefined || error === null) return fallback;
    const message = (error as { message?: unknown }).message;
    if (typeof message === 'string' && message !== '') return message;
    if (typeof error !== 'object') return String(error);
    return JSON.stringify(error) ?? String(error);
  } catch {
    return describeValue(error);
  }
}

/**
 * Refuses, where a handler, broker or store is made, a numeric option that would silently do
 * something else: `NaN` from an unset environment variable, a negative time, a fraction of a count.
 * An absent option (`undefined`) takes its default and passes.
 * @throws RangeError naming the option, what it takes and what it got.
 */
export function assertNumberOption(options: object, name: string, ok: (value: number) => boolean, takes: string): void {
  const value = (options as Record<string, unknown>)[name];
  if (value !== undefined && (typeof value !== 'number' || !ok(value))) throw new RangeError(`'${name}' must be ${takes}, not ${typeof value === 'number' ? String(value) : describeValue(value)}.`);
}

/**
 * Refuses an option that must be a function (a hook) and is something else, which would fail every
 * request that calls it. An absent option passes.
 * @throws AguiRxError `INVALID_OPTIONS` naming the option and what it got.
 */
export function assertFunctionOption(options: object, name: string, what: string): void {
  const value = (options as Record<string, unknown>)[name];
  if (value !== undefined && typeof value !== 'function') throw new AguiRxError('INVALID_OPTIONS', `'${name}' must be a function ${what}, not ${describeValue(value)}.`);
}
