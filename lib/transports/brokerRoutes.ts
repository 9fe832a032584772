import type { Event, RunAgentInput } from '@ag-ui/core';
import type { Observable } from 'rxjs';
import type { CancelSignal } from '../protocol/cancelSignal.js';

/** Who asks: the request as the server received it (node `IncomingMessage` or Web `Request`), and what the server made of it. */
export interface BrokerAccess {
  /** The HTTP request (node `IncomingMessage`, or Web `Request`). */
  readonly request: unknown;
  /** Whatever the handler's `context(request)` returned (the user, the tenant), if it has one. */
  readonly context?: unknown;
}

/** One frame of a brokered stream: an event and, for events of the run log, its cursor (the SSE `id:`). */
export interface BrokerFrame {
  /** The log entry's cursor; absent for frames that are not in the log (a compacted history, a reader's own RUN_ERROR). */
  readonly cursor?: string | undefined;
  /** The AG-UI event, as the run log holds it. */
  readonly event: Event;
}

/** The key of a broker's type-only `Context` mark (never set at run time): see {@link RunBrokerApi}. */
declare const authorizesContext: unique symbol;

/**
 * What the handlers need of a run broker (`createRunBroker` in lib/broker implements it). Every
 * method rejects with an `AguiRxError` before any stream starts when the request cannot be
 * served: `FORBIDDEN`, `RUN_NOT_FOUND`, `INVALID_CURSOR`, `TOO_MANY_SUBSCRIBERS`, `STORE_UNAVAILABLE`.
 *
 * `Context` is what its `authorize` reads as `context` (`createRunBroker<Caller>`): a handler given
 * the broker must make one (its `context` option), else it does not compile (with
 * `strictFunctionTypes`, part of `strict`). A broker of `unknown` context fits every handler; the
 * type without an argument (`RunBrokerApi`, `RunBroker`) is any broker, its context not tracked.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a broker whose context is not tracked
export interface RunBrokerApi<Context = any> {
  /** Type only, never set: the `Context` the broker's `authorize` reads. */
  readonly [authorizesContext]?: ((context: Context) => void) | undefined;
  /**
   * Starts run `input.runId` with `start` unless it exists (then attaches); the run's frames strictly
   * after `after`, then live. `start`'s signal aborts when the run is cancelled (stopped, detached past
   * its grace, the broker closed, the run lost), never after its terminal event was stored.
   */
  run(input: RunAgentInput, start: (signal: AbortSignal) => Observable<Event>, access: BrokerAccess, after?: string): Promise<Observable<BrokerFrame>>;
  /**
   * `run` for a `start` whose run is cancelled through a {@link CancelSignal} (`aborted` and 'abort'
   * listeners, as `toAgui`'s `signal` takes it) rather than an `AbortSignal`: the broker need not
   * make an `AbortSignal` per run (about 0.9 KB in Node). Optional: the handlers use `run` without it.
   */
  runWithCancel?(input: RunAgentInput, start: (cancel: CancelSignal) => Observable<Event>, access: BrokerAccess, after?: string): Promise<Observable<BrokerFrame>>;
  /** A run's frames strictly after `after`, then live; never starts anything. */
  events(threadId: string, runId: string, after: string | undefined, access: BrokerAccess): Promise<Observable<BrokerFrame>>;
  /** The thread rebuilt (finished runs compacted), then its running runs live. */
  connect(input: RunAgentInput, access: BrokerAccess): Promise<Observable<BrokerFrame>>;
  /**
   * Cancels the run wherever it runs. Resolves `'finished'` when the run had ended already (there
   * was nothing to cancel), else `'stopping'`; a broker that resolves nothing is read as `'stopping'`.
   */
  stop(threadId: string, runId: string, access: BrokerAccess): Promise<RunStopStatus | void>;
}

/** What stopping a run found: it was running and is being cancelled, or it had finished already. */
export type RunStopStatus = 'stopping' | 'finished';

/** Starts (or attaches to) a run through `broker.runWithCancel` when the broker has it, else `broker.run`: `start` works with either. */
export function runThroughBroker(broker: RunBrokerApi, input: RunAgentInput, start: (cancel: CancelSignal) => Observable<Event>, access: BrokerAccess, after?: string): Promise<Observable<BrokerFrame>> {
  return broker.runWithCancel !== undefined ? broker.runWithCancel(input, start, access, after) : broker.run(input, start, access, after);
}

/** A route of the broker's wire contract, or why the path matches none. */
export type BrokerRoute =
  | { readonly kind: 'run' }
  | { readonly kind: 'connect' }
  | { readonly kind: 'events'; readonly threadId: string; readonly runId: string }
  | { readonly kind: 'stop'; readonly threadId: string; readonly runId: string }
  | { readonly kind: 'refused'; readonly status: 400 | 404 | 405; readonly reason: string; readonly allow?: string | undefined };

const RUN_PATH = /^\/threads\/([^/]+)\/runs\/([^/]+)\/(events|stop)\/?$/;

/**
 * Matches a request to the broker routes, relative to `basePath` (where the handler is mounted;
 * '' when the framework strips the mount point, as Express's `app.use` does; a missing leading or
 * an extra trailing slash is read as meant: 'agent/' is '/agent'):
 *
 * 1. `POST <base>`: start or attach to a run.
 * 2. `GET <base>/threads/<threadId>/runs/<runId>/events`: replay then live.
 * 3. `POST <base>/connect`: rebuild the thread.
 * 4. `POST <base>/threads/<threadId>/runs/<runId>/stop`: cancel.
 *
 * Ids are URL-decoded path segments. Anything else is 404 (a path) or 405 (a method, with `Allow`).
 */
export function matchBrokerRoute(method: string | undefined, url: string, basePath: string): BrokerRoute {
  // A request's path always starts with '/': 'agent' means '/agent', as 'agent/' does.
  const trimmed = basePath.replace(/\/+$/, '');
  const base = trimmed === '' || trimmed.startsWith('/') ? trimmed : `/${trimmed}`;
  const path = url.split('?')[0].split('#')[0];
  if (path !== base && !path.startsWith(`${base}/`)) return notFound(path, base);
  const rest = path.slice(base.length);
  if (rest === '' || rest === '/') return method === 'POST' ? { kind: 'run' } : notAllowed(method, 'POST', 'POST a RunAgentInput to start or attach to a run');
  if (rest === '/connect' || rest === '/connect/') return method === 'POST' ? { kind: 'connect' } : notAllowed(method, 'POST', 'POST a RunAgentInput to connect to its thread');
  const match = RUN_PATH.exec(rest);
  if (match === null) return notFound(path, base);
  let threadId: string;
  let runId: string;
  try {
    threadId = decodeURIComponent(match[1]);
    runId = decodeURIComponent(match[2]);
  } catch {
    return { kind: 'refused', status: 400, reason: `The path '${path.slice(0, 200)}' has a malformed percent-encoding in its thread or run id.` };
  }
  if (match[3] === 'events') return method === 'GET' ? { kind: 'events', threadId, runId } : notAllowed(method, 'GET', 'GET this path to read the run');
  return method === 'POST' ? { kind: 'stop', threadId, runId } : notAllowed(method, 'POST', 'POST this path to stop the run');
}

const notFound = (path: string, base: string): BrokerRoute => ({
  kind: 'refused',
  status: 404,
  reason: `Nothing is served at '${path.slice(0, 200)}'. This agent serves POST ${base || '/'} (run), POST ${base}/connect, GET ${base}/threads/<threadId>/runs/<runId>/events and POST ${base}/threads/<threadId>/runs/<runId>/stop; set the handler's basePath to where it is mounted.`,
});

const notAllowed = (method: string | undefined, allow: string, what: string): BrokerRoute => ({
  kind: 'refused',
  status: 405,
  reason: `${method} is not supported here: ${what}.`,
  allow,
});

/** The HTTP status for a broker error's code: 403, 404, 400, 429, 503, else 500. */
export function statusOfBrokerError(error: unknown): number {
  switch ((error as { code?: unknown } | null)?.code) {
    case 'FORBIDDEN':
      return 403;
    case 'RUN_NOT_FOUND':
      return 404;
    case 'INVALID_CURSOR':
    case 'INVALID_ARGUMENT':
      return 400;
    case 'TOO_MANY_SUBSCRIBERS':
      return 429;
    case 'STORE_UNAVAILABLE':
      return 503;
    default:
      return 500;
  }
}
