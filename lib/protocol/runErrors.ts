import type { RunAgentInput, RunErrorEvent } from '@ag-ui/core';
import { unreportedInput, type CheckedInputOption } from './checkedInput.js';
import { AguiRxError, errorMessage } from './errors.js';
import { generateId } from './generateId.js';
import { recordType } from './recordType.js';
import { copyWith } from './values.js';

/** What {@link RunErrorHandler} is told about the run that ended in RUN_ERROR. */
export interface RunErrorReport {
  /** The run's input, when the run was given one. */
  readonly input?: RunAgentInput | undefined;
  readonly threadId: string;
  readonly runId: string;
  /**
   * A fresh id (nanoid) for this failure. A redacted RUN_ERROR message quotes it, so that a user's
   * "reference V1St…" finds this report in the server's log.
   */
  readonly reference: string;
}

/** Told once per run that ends in RUN_ERROR (not a cancelled one): the error, and which run. */
export type RunErrorHandler<Report extends RunErrorReport = RunErrorReport> = (error: unknown, report: Report) => void;

/**
 * What a client is told in RUN_ERROR `message`:
 * - `'expose'`: every error's own message.
 * - `'redact'`: the message of the toolkit's own errors (`AguiRxError`: INVALID_EVENT,
 *   PROVIDER_ERROR, …) and of errors marked safe to show (`expose: true`, as `http-errors` marks
 *   them) as it is; any other error's message is replaced by a generic text quoting the reference.
 * - a function `(error, reference) => message`: the message to send (a non-string or empty result
 *   is taken as `'redact'` would word it).
 */
export type ErrorMessagePolicy = 'expose' | 'redact' | ((error: unknown, reference: string) => string);

/** The RUN_ERROR `code` of an error whose message was withheld from the client. */
export const INTERNAL_ERROR = 'INTERNAL_ERROR';

/**
 * The policy used when none is given: `'redact'` when `process.env.NODE_ENV === 'production'`,
 * else `'expose'` (as Express shows stack traces outside production). Read when the operator or
 * handler is made; a runtime without `process` (a browser) exposes.
 */
export function defaultErrorMessages(): 'expose' | 'redact' {
  const env = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env;
  return env?.NODE_ENV === 'production' ? 'redact' : 'expose';
}

/** Whether an error's message may go to the client under `'redact'`: the toolkit's own, or marked `expose: true`. */
export function isSafeToShow(error: unknown): boolean {
  if (error instanceof AguiRxError) return true;
  try {
    return (error as { expose?: unknown } | null | undefined)?.expose === true;
  } catch {
    return false;
  }
}

/** The text that stands in for a withheld message of a run's error. */
export const redactedMessage = (reference: string): string =>
  `The agent failed on the server. Its log has the details under reference ${reference}; quote it when reporting the problem.`;

/** The text that stands in for a withheld message of a request refused before any run (a hook of the server's own failed). */
export const redactedRequestMessage = (reference: string): string =>
  `The server failed to serve this request. Its log has the details under reference ${reference}; quote it when reporting the problem.`;

/**
 * The RUN_ERROR `failed` built for `error`, with its message (and code, and stack) as `policy`
 * allows: a withheld message leaves no trace of the error on the wire (code INTERNAL_ERROR, no
 * stack), and `withheld(reference)` stands in for it.
 */
export function applyMessagePolicy(event: RunErrorEvent, error: unknown, policy: ErrorMessagePolicy, reference: string, withheld = redactedMessage): RunErrorEvent {
  if (policy === 'expose') return event;
  if (typeof policy === 'function') {
    let message: unknown;
    try {
      message = policy(error, reference);
    } catch {
      message = undefined;
    }
    if (typeof message === 'string' && message !== '') return message === event.message ? event : { ...withoutStack(event), message };
  } else if (isSafeToShow(error)) {
    return event;
  }
  return copyWith(withoutStack(event), { code: INTERNAL_ERROR, message: withheld(reference) });
}

const withoutStack = (event: RunErrorEvent): RunErrorEvent => {
  const { metadata: _metadata, ...rest } = event as RunErrorEvent & { metadata?: unknown };
  return rest as RunErrorEvent;
};

/** A fresh reference id. */
export const newReference = (): string => generateId();

/**
 * The default {@link RunErrorHandler}: one `console.error` line (reference, code, message), so
 * that a failure whose message the client does not see is in the server's log.
 */
export const logRunError = (error: unknown, report: { readonly threadId?: string | undefined; readonly runId?: string | undefined; readonly reference: string }): void => {
  const code = codeOf(error);
  const what = report.runId === undefined ? (report.threadId === undefined ? 'a request' : `thread ${report.threadId}`) : `run ${report.runId} (thread ${report.threadId})`;
  const line = `[agui-rx] ${what} failed, reference ${report.reference}${code === undefined ? '' : `, code ${code}`}: ${errorMessage(error, 'no message')}`;
  // Ids and messages may come from the client or a provider: control characters (terminal escapes, line breaks that forge log lines) are written as \xNN.
  console.error(line.replace(/[\u0000-\u001f\u007f-\u009f]/g, (char) => `\\x${char.charCodeAt(0).toString(16).padStart(2, '0')}`));
};

function codeOf(error: unknown): string | undefined {
  try {
    const code = (error as { code?: unknown } | null | undefined)?.code;
    return typeof code === 'string' || typeof code === 'number' ? String(code) : undefined;
  } catch {
    return undefined;
  }
}

/** Calls `onError`, which must not break the stream: a throwing handler is logged, with the error it was given. */
export function reportRunError<Report extends { readonly reference: string }>(onError: (error: unknown, report: Report) => void, error: unknown, report: Report): void {
  try {
    onError(error, report);
  } catch (thrown) {
    console.error(`[agui-rx] onError threw (${errorMessage(thrown, 'no message')}) while reporting reference ${report.reference}:`, error);
  }
}

/**
 * The error an upstream RUN_ERROR event stands for, when it comes with none (an agent or adapter
 * that emitted RUN_ERROR itself): its own message, shown as it is (the agent wrote it for the client).
 */
export function errorOfRunErrorEvent(event: RunErrorEvent): AguiRxError {
  return new AguiRxError(event.code ?? 'RUN_ERROR', event.message);
}

/**
 * Carried (non-enumerable, never on the wire) by a RUN_ERROR a lifecycle emitted for an error: the
 * error, and `claim()`, which an outer lifecycle (the handler's around an agent that runs `toAgui`
 * itself) calls to report it instead. Whoever claims first reports; `claim()` is false after that.
 */
export const RUN_ERROR_CLAIM: unique symbol = Symbol('agui-rx.runErrorClaim');

export interface RunErrorClaim {
  readonly error: unknown;
  /** The reference the event's message may quote: the outer report keeps it. */
  readonly reference: string;
  claim(): boolean;
}

/** Marks `event` with its error; the returned claim is the emitter's own. */
export function markRunError(event: RunErrorEvent, error: unknown, reference: string): RunErrorClaim {
  let claimed = false;
  const claim: RunErrorClaim = {
    error,
    reference,
    claim: () => {
      if (claimed) return false;
      claimed = true;
      return true;
    },
  };
  Object.defineProperty(event, RUN_ERROR_CLAIM, { value: claim, enumerable: false });
  return claim;
}

/** The claim a RUN_ERROR carries, if a lifecycle marked it. */
export function claimOf(event: unknown): RunErrorClaim | undefined {
  try {
    return (event as { [RUN_ERROR_CLAIM]?: RunErrorClaim } | null)?.[RUN_ERROR_CLAIM];
  } catch {
    return undefined;
  }
}

/** A run's RUN_ERROR, and what to do once it went out: report it, unless a lifecycle downstream claimed it meanwhile. */
export interface RunFailure {
  readonly terminal: RunErrorEvent;
  settle(): void;
}

/** Options of {@link runFailures}: a lifecycle's run and its error options. */
export interface RunFailuresOptions extends CheckedInputOption {
  readonly threadId: string;
  readonly runId: string;
  readonly input?: RunAgentInput | undefined;
  readonly onError?: RunErrorHandler | undefined;
  readonly errorMessages?: ErrorMessagePolicy | undefined;
}

/** The failures of one run, as {@link runFailures} makes them. */
export interface RunFailures {
  /** The run failed with `error` (thrown upstream, or an invalid event). */
  thrown(error: unknown): RunFailure;
  /** Upstream sent RUN_ERROR: an inner lifecycle's (its error claimed, worded by this policy) or the agent's own word, sent as it is. */
  upstream(upstream: RunErrorEvent, event: unknown): RunFailure;
}

/**
 * How a lifecycle ends a run in RUN_ERROR: the event worded by the message policy, reported once.
 * `worded(error)` is the RUN_ERROR carrying the error's own message (`runErrorOf`).
 * @throws {AguiRxError} `INVALID_OPTIONS` when `errorMessages` is not a policy.
 */
export function runFailures(options: RunFailuresOptions, worded: (error: unknown) => RunErrorEvent): RunFailures {
  const policy = options.errorMessages ?? defaultErrorMessages();
  if (policy !== 'expose' && policy !== 'redact' && typeof policy !== 'function') {
    throw new AguiRxError('INVALID_OPTIONS', `'errorMessages' must be 'expose', 'redact' or a function (error, reference) => message, not ${String(policy)}.`);
  }
  // One record per run, its methods on a shared prototype: an open run holds no closure for a failure it may never have.
  const failures = new Failures();
  failures.worded = worded;
  failures.policy = policy;
  failures.onError = options.onError ?? logRunError;
  failures.threadId = options.threadId;
  failures.runId = options.runId;
  // Kept only for an `onError` that is given it: the default log names the ids, and an open run would
  // otherwise hold the client's whole history for a report that never reads it.
  failures.input = options.onError === undefined || options[unreportedInput] === true ? undefined : options.input;
  return Failures.shaped(failures);
}

/** One run's {@link RunFailures}: what a failure is worded and reported with. */
interface FailuresRecord extends RunFailures {
  readonly worded: (error: unknown) => RunErrorEvent;
  readonly policy: ErrorMessagePolicy;
  readonly onError: RunErrorHandler;
  readonly threadId: string;
  readonly runId: string;
  readonly input: RunAgentInput | undefined;
}

function failureOf(failures: FailuresRecord, terminal: RunErrorEvent, error: unknown, reference: string): RunFailure {
  const claim = markRunError(terminal, error, reference);
  const { onError, input, threadId, runId } = failures;
  return {
    terminal,
    settle: () => {
      if (claim.claim()) reportRunError(onError, error, { input, threadId, runId, reference });
    },
  };
}

function failuresThrown(this: FailuresRecord, error: unknown): RunFailure {
  const reference = newReference();
  return failureOf(this, applyMessagePolicy(this.worded(error), error, this.policy, reference), error, reference);
}

function failuresUpstream(this: FailuresRecord, upstream: RunErrorEvent, event: unknown): RunFailure {
  const inner = claimOf(event);
  if (inner?.claim() !== true) return failureOf(this, upstream, errorOfRunErrorEvent(upstream), newReference());
  const { type: _type, ...own } = this.worded(inner.error);
  const { code: _code, metadata: _metadata, ...rest } = upstream as RunErrorEvent & { metadata?: unknown };
  return failureOf(this, applyMessagePolicy({ ...rest, ...own } as RunErrorEvent, inner.error, this.policy, inner.reference), inner.error, inner.reference);
}

// The methods every run's failures share: its prototype, so that the record holds only its fields.
const failuresMethods: RunFailures = Object.freeze({ thrown: failuresThrown, upstream: failuresUpstream });
const Failures = recordType<FailuresRecord>(failuresMethods);
