import * as official from '@ag-ui/client';
import { HttpAgent, runHttpRequest, transformHttpEventStream, type AgentSubscriber, type HttpAgentConfig, type RunAgentParameters, type RunAgentResult } from '@ag-ui/client';
import { EventType, type BaseEvent, type RunAgentInput } from '@ag-ui/core';
import { Observable, defer, from, identity, merge, retry, switchMap, throwError, timeout, timer, finalize } from 'rxjs';
import { AguiRxError, describeValue } from '../protocol/errors.js';
import { terminalEventTypes } from '../protocol/table.js';
import { MAX_TIMER_MS } from '../protocol/values.js';
import { parseSSE, type SSEMessage } from '../transports/parseSSE.js';

/** How {@link ResumableHttpAgent} retries a dropped stream, and when it takes one as dropped. Times are in ms. */
export interface ResumeOptions {
  /** Reconnection attempts in a row (without a frame received in between) before giving up. Default: 5. */
  maxRetries?: number | undefined;
  /** The delay before the first attempt; it doubles with each attempt after it. Default: 250. */
  initialDelayMs?: number | undefined;
  /** The longest delay between two attempts. Default: 5000. */
  maxDelayMs?: number | undefined;
  /** The share of each delay drawn at random, 0..1 (1 = "full jitter": anywhere from 0 to the delay). Default: 1. */
  jitter?: number | undefined;
  /**
   * How long a resume request waits for its response (its status and headers) before the attempt
   * counts as failed and the next one is made; `Infinity`: no bound. The body may then take as
   * long as the run does. The first request is not bounded (a slow agent's server may answer only
   * at its first event, and that request is not sent again anyway). Default: 10000.
   */
  responseTimeoutMs?: number | undefined;
  /**
   * How long an event stream may stay silent (no byte at all, not even a heartbeat comment) before
   * the connection is taken as dead: resumed when it can be, else failed. Set it to a few times the
   * server's heartbeat (createAguiHandler's `heartbeatMs`, 15 s by default). Default: `Infinity`
   * (off: a server without heartbeats may be silent while its agent thinks).
   */
  idleTimeoutMs?: number | undefined;
}

/** What {@link ResumableHttpAgentConfig.onReconnecting} is told before each attempt. */
export interface ReconnectingInfo {
  /** The attempt about to be made, from 1 (it starts again at 1 after a frame arrives). */
  attempt: number;
  /** How long the agent waits before making it, in ms. */
  delayMs: number;
  /** Why the stream needs resuming: the network error, or the answer of the last attempt. */
  error: Error;
}

/** The configuration of {@link ResumableHttpAgent}: `HttpAgent`'s, plus how to resume. */
export interface ResumableHttpAgentConfig extends HttpAgentConfig {
  /** Retries, backoff and timeouts. Default: 5 retries, 250 ms doubling up to 5000 ms, full jitter; a resume answers within 10 s; no idle bound. */
  resume?: ResumeOptions | undefined;
  /** Told before each reconnection attempt (to show "reconnecting…"). */
  onReconnecting?: ((info: ReconnectingInfo) => void) | undefined;
}

/** `RESUME_FAILED` (attempts exhausted) or `RESUME_REFUSED` (a 4xx, or an answer that is not an event stream). */
export class ResumeError extends AguiRxError {
  /** The HTTP status of the last answer, when there was one. */
  readonly status: number | undefined;
  /** Reconnection attempts made before giving up. */
  readonly attempts: number;

  constructor(code: 'RESUME_FAILED' | 'RESUME_REFUSED' | 'STOP_REFUSED', message: string, attempts: number, status?: number) {
    super(code, message);
    this.name = 'ResumeError';
    this.attempts = attempts;
    this.status = status;
  }
}

/** A drop that another attempt may repair: the connection broke, or a resume answered 5xx. */
class Interruption extends Error {
  readonly status: number | undefined;

  constructor(message: string, cause?: unknown, status?: number) {
    super(message, { cause });
    this.name = 'Interruption';
    this.status = status;
  }
}

/** What one subscription to {@link ResumableHttpAgent.run} or `connect` knows about its stream. */
interface Session {
  readonly kind: 'run' | 'connect';
  threadId: string;
  /** The run to resume: the input's for `run`, the last RUN_STARTED's for `connect`. */
  runId: string | undefined;
  /** The `id:` of the last frame of the current run that carried one (an opaque cursor). */
  cursor: string | undefined;
  /** An event stream answered, and no frame of the current run came without an id before the first one with an id: a drop can be resumed. */
  resumable: boolean;
  /** The events received without an id after the cursor (as {@link eventKey}s): a resume from the cursor replays them first. */
  unconfirmed: string[];
  /** While a resumed stream replays {@link unconfirmed}: how many of them it has replayed so far; undefined once it is past them. */
  replayed: number | undefined;
  /** A RUN_STARTED came and its terminal event has not. */
  open: boolean;
  /** A terminal event came. */
  ended: boolean;
  /** The first request has answered with an event stream: later attempts resume. */
  streaming: boolean;
}

const SSE_MEDIA_TYPE = 'text/event-stream';

// Typed by the base class of the user's @ag-ui/client, not by our imports: a second copy of rxjs
// (or of @ag-ui/core) under the client does not make these overrides incompatible.
type RunInput = Parameters<HttpAgent['run']>[0];
type RunEvents = ReturnType<HttpAgent['run']>;

/**
 * The input as `HttpAgent` sends it: checked by the client's `enforceOutgoingInput` (1.0). Read from
 * the namespace because @ag-ui/client 0.0.59 (CopilotKit's) has none; its HttpAgent sends the input as is.
 */
const enforceOutgoingInput: (input: RunAgentInput) => RunAgentInput =
  (official as { enforceOutgoingInput?: (input: RunAgentInput) => RunAgentInput }).enforceOutgoingInput ?? ((input) => input);

function validResumeOptions(options: ResumeOptions = {}): Required<ResumeOptions> {
  // An option given as undefined takes its default, as one left out does.
  const given = Object.fromEntries(Object.entries(options).filter(([, value]) => value !== undefined));
  const resolved: Required<ResumeOptions> = { maxRetries: 5, initialDelayMs: 250, maxDelayMs: 5000, jitter: 1, responseTimeoutMs: 10_000, idleTimeoutMs: Infinity, ...given };
  const bad = (name: string, value: unknown, expected: string) =>
    new AguiRxError('INVALID_OPTIONS', `ResumableHttpAgent's resume.${name} is ${describeValue(value)}; it must be ${expected}.`);
  if (!Number.isInteger(resolved.maxRetries) || resolved.maxRetries < 0) throw bad('maxRetries', resolved.maxRetries, 'a whole number ≥ 0');
  for (const name of ['initialDelayMs', 'maxDelayMs'] as const) {
    if (typeof resolved[name] !== 'number' || !(resolved[name] >= 0)) throw bad(name, resolved[name], 'a number of ms ≥ 0');
  }
  if (typeof resolved.jitter !== 'number' || !(resolved.jitter >= 0 && resolved.jitter <= 1)) throw bad('jitter', resolved.jitter, 'a number from 0 to 1');
  for (const name of ['responseTimeoutMs', 'idleTimeoutMs'] as const) {
    const value = resolved[name];
    if (typeof value !== 'number' || !((value > 0 && value <= MAX_TIMER_MS) || value === Infinity)) {
      throw bad(name, value, `a number of ms > 0, at most ${MAX_TIMER_MS} (what a timer holds), or Infinity (no bound)`);
    }
  }
  return resolved;
}

/** The error an aborted signal stands for: its reason, or an `AbortError` (which `runAgent()` ignores). */
function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('This operation was aborted', 'AbortError');
}

/** Errors (with the abort reason) when `signal` aborts; never emits. */
function aborted$(signal: AbortSignal): Observable<never> {
  return new Observable<never>((subscriber) => {
    const onAbort = () => subscriber.error(abortReason(signal));
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    return () => signal.removeEventListener('abort', onAbort);
  });
}

/** The chunks of a response body, as they are read; cancelling the subscription cancels the read. */
function readBody(response: Response): Observable<Uint8Array> {
  return new Observable<Uint8Array>((subscriber) => {
    const body = response.body;
    if (body === null) return subscriber.complete();
    const reader = body.getReader();
    (async () => {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return subscriber.complete();
        subscriber.next(value);
        if (subscriber.closed) return;
      }
    })().catch((error: unknown) => subscriber.error(error));
    return () => void reader.cancel().catch(() => undefined);
  });
}

/** A short description of a failure for messages: the error's message and its cause's (undici says "terminated: other side closed"). */
function describeFailure(error: unknown): string {
  // Read by shape: an error from another realm (a worker, a test sandbox) is no `instanceof Error` here.
  const messageOf = (value: unknown) => (typeof (value as { message?: unknown } | null)?.message === 'string' ? (value as { message: string }).message : undefined);
  const message = messageOf(error);
  if (message === undefined) return describeValue(error);
  const cause = messageOf((error as { cause?: unknown }).cause);
  return cause === undefined ? message : `${message}: ${cause}`;
}

/**
 * Whether `fetch` failed because the server refused the connection (ECONNREFUSED: nothing listens on
 * its port), so the request was never sent. Node's fetch puts the socket's error in `cause`, or, having
 * tried each address of the host, an AggregateError of them there. A browser's fetch tells nothing: false.
 */
function isConnectionRefused(error: unknown): boolean {
  try {
    const cause = (error as { cause?: { code?: unknown; errors?: unknown } } | null)?.cause;
    if (cause?.code === 'ECONNREFUSED') return true;
    const each = cause?.errors;
    return Array.isArray(each) && each.length > 0 && each.every((one) => (one as { code?: unknown } | null)?.code === 'ECONNREFUSED');
  } catch {
    return false;
  }
}

/** The `error` reason of a JSON error body (`{ "error": "…" }`), else the body's text, shortened. */
async function readReason(response: Response): Promise<string> {
  const text = await response.text().catch(() => '');
  try {
    const json: unknown = JSON.parse(text);
    const reason = (json as { error?: unknown } | null)?.error;
    if (typeof reason === 'string') return reason;
  } catch {
    // Not JSON: the text itself is the reason.
  }
  return text.length > 200 ? `${text.slice(0, 200)}…` : text || 'no reason given';
}

/**
 * An event as JSON with the keys of every object sorted: the same event encoded twice (from the
 * owner's memory, then from the log) gives the same key whatever order its keys came in.
 */
function eventKey(event: unknown): string {
  return JSON.stringify(event, (_key, value: unknown) =>
    value !== null && typeof value === 'object' && !Array.isArray(value) ? Object.fromEntries(Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) : value,
  );
}

/**
 * Whether a resumed stream's event is one the session delivered without an id before the drop:
 * the log keeps the stream's order, so a resume from the cursor replays those first. Each one that
 * comes again is skipped (its id, when it has one now, becomes the cursor); the first event that
 * differs ends the replay, and the unconfirmed events it did not repeat are forgotten (the log never
 * got them).
 */
function replayedAlready(session: Session, event: BaseEvent, id: string | undefined): boolean {
  const count = session.replayed;
  if (count === undefined) return false;
  if (count < session.unconfirmed.length && eventKey(event) === session.unconfirmed[count]) {
    if (id === undefined) {
      session.replayed = count + 1;
    } else {
      session.cursor = id;
      session.unconfirmed = session.unconfirmed.slice(count + 1);
      session.replayed = 0;
    }
    return true;
  }
  session.unconfirmed.length = count;
  session.replayed = undefined;
  return false;
}

function isEventStream(response: Response): boolean {
  return (response.headers.get('content-type') ?? '').toLowerCase().startsWith(SSE_MEDIA_TYPE);
}

/** What a refused resume should do next, by status. */
function refusalHint(status: number): string {
  if (status === 403) return "the server's authorize hook refused this reader: send the credentials it expects (the agent's headers), or configure authorize on the server";
  if (status === 404) return 'the server does not know this run (it never started there, or its log is past retention): call connectAgent() to rebuild the thread';
  return 'check the URL and the headers the agent sends';
}

/**
 * An `HttpAgent` whose runs survive a dropped connection: it resumes them from the last event it
 * received, and implements `connectAgent()`, against a server with a run broker.
 *
 * A drop is invisible to `runAgent()`: the events after the cut are spliced into the same stream.
 *
 * ```text
 * POST <url>          --a--b--c--X                    X = the connection drops after cursor c
 * GET  …/events                    (wait)  --d--e--F|  Last-Event-ID: c
 * run(input)          --a--b--c-------------d--e--F|
 * ```
 *
 * Rules (AG-UI HTTP binding; SSE `id:` and `Last-Event-ID` as in WHATWG HTML, "Server-sent events"):
 * 1. `run(input)` POSTs the input to `url` (as `HttpAgent`, `Accept: text/event-stream`) and reads
 *    the event stream itself, remembering the last `id:` a frame carried itself (an opaque cursor).
 * 2. When the body errors or ends before the run's RUN_FINISHED / RUN_ERROR, it waits (exponential
 *    backoff from `initialDelayMs`, doubling up to `maxDelayMs`, `jitter` of it random), then GETs
 *    `<url>/threads/<threadId>/runs/<runId>/events` with `Last-Event-ID: <cursor>` and continues with
 *    the events after the cursor. Each frame received resets the attempt count. A first request the
 *    server refused to connect (ECONNREFUSED, in Node: the request was never sent) is retried the
 *    same way; any other failure of it is final, as the agent may have started. A resume that gets
 *    no response (status and headers) within `responseTimeoutMs` (10 s) is a failed attempt; the
 *    first request has no such bound, as in `HttpAgent`. With `idleTimeoutMs` (off by default), a
 *    stream that sends no byte for that long, not even a heartbeat, counts as dropped.
 * 3. After `maxRetries` failed attempts in a row it gives up with a {@link ResumeError}
 *    `RESUME_FAILED`, which `runAgent()` rejects with. A 4xx answer to a resume (403: not
 *    authorized, 404: unknown run) is final at once: `RESUME_REFUSED`, with the status and the
 *    server's `error` reason. A 5xx or a network error is another attempt.
 * 4. An answer that is not `text/event-stream` (protobuf, or an HTTP error) to the first request is
 *    handled exactly as `HttpAgent` handles it, without resume; so is a drop in a run one of whose
 *    frames came without `id:` before any came with one (a server without a broker sends none).
 * 5. Frames without `id:` after the cursor (a broker's owner streams the events its store has not
 *    taken yet without one) are delivered and remembered: the log keeps the stream's order, so a
 *    resume from the cursor replays them first. Each replayed event equal to the next one remembered
 *    (the same JSON, whatever the key order) is skipped, its id becoming the cursor; the first event
 *    that differs, and everything after it, is delivered: nothing is delivered twice.
 * 6. `connect(input)` (what `connectAgent()` calls) POSTs the input to `<url>/connect`: the events
 *    that rebuild the thread, then the active run's live; a drop inside a run (after its
 *    RUN_STARTED, which names it) resumes as in rules 2 and 5. A drop between two runs cannot be
 *    resumed and errors: call `connectAgent()` again.
 * 7. `abortRun()` aborts the request as in `HttpAgent`; nothing is resumed after it, also not
 *    during a backoff wait.
 * 8. `stopRun(runId?)` asks the server to cancel a run (`POST …/runs/<runId>/stop`); the run's
 *    stream then ends with RUN_FINISHED `outcome: { type: 'cancelled' }`.
 *
 * ## Example
 *
 * ```ts
 * import { ResumableHttpAgent } from 'agui-rx/client';
 *
 * const agent = new ResumableHttpAgent({
 *   url: 'https://example.com/agent',
 *   resume: { maxRetries: 8, maxDelayMs: 10_000 },
 *   onReconnecting: ({ attempt, delayMs }) => console.log(`reconnecting (${attempt}) in ${delayMs} ms…`),
 * });
 * agent.addMessage({ id: 'u1', role: 'user', content: 'Hi' });
 * await agent.runAgent(); // the network drops twice meanwhile
 * console.log(agent.messages.at(-1)?.content);
 * // results: the whole answer, as if nothing had dropped
 * ```
 *
 * @throws {AguiRxError} `INVALID_OPTIONS` from the constructor when a `resume` option is out of range.
 *   `runAgent()` rejects with `STREAM_IDLE` when a stream it cannot resume stays silent for `idleTimeoutMs`.
 */
export class ResumableHttpAgent extends HttpAgent {
  /** Retries and backoff, with the defaults filled in. */
  readonly resumeOptions: Readonly<Required<ResumeOptions>>;
  /** Told before each reconnection attempt. */
  onReconnecting: ((info: ReconnectingInfo) => void) | undefined;
  // The run `stopRun()` stops by default: the last one `run` or `connect` streamed.
  private currentRun: { threadId: string; runId: string } | undefined;

  constructor(config: ResumableHttpAgentConfig) {
    super(config);
    this.resumeOptions = Object.freeze(validResumeOptions(config.resume));
    this.onReconnecting = config.onReconnecting;
  }

  /**
   * Reconnects to the thread, as `HttpAgent.runAgent()` runs: with a fresh abort controller
   * (`abortRun()` aborts it) unless `parameters.abortController` is given.
   */
  override connectAgent(parameters?: RunAgentParameters & { abortController?: AbortController }, subscriber?: AgentSubscriber): Promise<RunAgentResult> {
    this.abortController = parameters?.abortController ?? new AbortController();
    return super.connectAgent(parameters, subscriber);
  }

  /** The run's events from `POST <url>`, resumed through `GET …/events` after a drop (rules 1–5). */
  override run(input: RunInput): RunEvents {
    return this.stream('run', this.url, input as RunAgentInput) as unknown as RunEvents;
  }

  /** The thread's events from `POST <url>/connect`, its active run resumed after a drop (rule 6). */
  protected override connect(input: RunInput): RunEvents {
    return this.stream('connect', `${this.base()}/connect`, input as RunAgentInput) as unknown as RunEvents;
  }

  /**
   * Asks the server to cancel a run wherever it runs: `POST <url>/threads/<threadId>/runs/<runId>/stop`.
   *
   * @param runId The run; default: the one this agent streamed last.
   * @return `true` when the server accepted (202: the run is being cancelled, or had finished);
   * `false` when there is no run to stop (no run streamed yet, or the server does not know it: 404).
   * @throws {ResumeError} `STOP_REFUSED` with the `status` and the server's reason for any other
   * answer (401 or 403: the server's `authorize` refused these credentials; 5xx: it failed), so
   * that a Stop button can tell "sign in again" from "nothing to stop"; the fetch's error when the
   * server cannot be reached.
   */
  async stopRun(runId?: string): Promise<boolean> {
    const run = this.currentRun;
    const target = runId ?? run?.runId;
    if (target === undefined) return false;
    const threadId = run !== undefined && run.runId === target ? run.threadId : this.threadId;
    const response = await this.fetch(this.runUrl(threadId, target, 'stop'), { method: 'POST', headers: { ...this.headers, 'Content-Type': 'application/json' } });
    if (response.status === 202 || response.status === 404) {
      await response.body?.cancel().catch(() => undefined);
      return response.status === 202;
    }
    const reason = await readReason(response);
    throw new ResumeError(
      'STOP_REFUSED',
      `Could not stop run '${target}' of thread '${threadId}': the server answered HTTP ${response.status} (${reason}). ${
        response.status === 401 || response.status === 403 ? "The server's authorize hook refused these credentials: send the ones it expects (the agent's headers)." : 'Check the URL and the server.'
      }`,
      0,
      response.status,
    );
  }

  /** A copy with the same URL, headers, fetch, messages, state and resume options, and no current run. */
  override clone(): ResumableHttpAgent {
    const cloned = super.clone() as ResumableHttpAgent;
    (cloned as { resumeOptions: Readonly<Required<ResumeOptions>> }).resumeOptions = this.resumeOptions;
    cloned.onReconnecting = this.onReconnecting;
    cloned.currentRun = undefined;
    return cloned;
  }

  private base(): string {
    return this.url.replace(/\/+$/, '');
  }

  private runUrl(threadId: string, runId: string, leaf: 'events' | 'stop'): string {
    return `${this.base()}/threads/${encodeURIComponent(threadId)}/runs/${encodeURIComponent(runId)}/${leaf}`;
  }

  /** One subscription's stream: the first request, then resumes until the run's terminal event (state per subscription). */
  private stream(kind: 'run' | 'connect', url: string, input: RunAgentInput): Observable<BaseEvent> {
    return defer(() => {
      // The abort controller of this run (runAgent and connectAgent replace it per run).
      const signal = this.abortController.signal;
      const session: Session = { kind, threadId: input.threadId, runId: kind === 'run' ? input.runId : undefined, cursor: undefined, resumable: false, unconfirmed: [], replayed: undefined, open: false, ended: false, streaming: false };
      if (kind === 'run') this.currentRun = { threadId: input.threadId, runId: input.runId };
      const attempt$ = defer(() => (session.streaming ? this.resumeOnce(session, signal) : this.requestOnce(url, input, session, signal)));
      return attempt$.pipe(retry({ resetOnSuccess: true, delay: (error: unknown, attempt: number) => this.backoff(error, attempt, session, signal) }));
    });
  }

  /**
   * The first request: the parent's handling unless the answer is an event stream. A connection the
   * server refused (nothing listening: it is restarting) is another attempt, as the request was
   * never sent; a failure after it may have been (then the agent may run) is final, as in `HttpAgent`.
   */
  private requestOnce(url: string, input: RunAgentInput, session: Session, signal: AbortSignal): Observable<BaseEvent> {
    const request = (fetchSignal: AbortSignal) =>
      this.fetch(url, { ...this.requestInit(enforceOutgoingInput(input)), signal: fetchSignal }).catch((error: unknown) => {
        throw !signal.aborted && isConnectionRefused(error) ? new Interruption(`the server refused the connection, so the request was not sent (${describeFailure(error)})`, error) : error;
      });
    return this.fetchOnce(signal, request, Infinity, undefined, (response) => {
      if (!response.ok || !isEventStream(response)) return transformHttpEventStream(runHttpRequest(() => Promise.resolve(response)), this.debugLogger);
      session.streaming = true;
      session.resumable = true;
      return this.readEvents(response, session, signal);
    });
  }

  /** One resume attempt: route 2 with the last cursor. */
  private resumeOnce(session: Session, signal: AbortSignal): Observable<BaseEvent> {
    const { threadId, runId, cursor } = session;
    const headers: Record<string, string> = { ...this.headers, Accept: SSE_MEDIA_TYPE };
    if (cursor !== undefined) headers['Last-Event-ID'] = cursor;
    const request = (fetchSignal: AbortSignal) =>
      this.fetch(this.runUrl(threadId, runId!, 'events'), { method: 'GET', headers, signal: fetchSignal }).catch((error: unknown) => {
        throw signal.aborted ? error : new Interruption(`the resume request failed (${describeFailure(error)})`, error);
      });
    const { responseTimeoutMs } = this.resumeOptions;
    const noAnswer = () => new Interruption(`the resume request got no answer within ${responseTimeoutMs} ms (resume.responseTimeoutMs)`);
    return this.fetchOnce(signal, request, responseTimeoutMs, noAnswer, (response) => {
      if (response.ok && isEventStream(response)) {
        // The replay starts with the events received without an id after the cursor.
        session.replayed = 0;
        return this.readEvents(response, session, signal);
      }
      return from(readReason(response)).pipe(
        switchMap((reason) => {
          const answer = `HTTP ${response.status} (${reason})`;
          if (response.status >= 500) throw new Interruption(`the resume request was answered ${answer}`, undefined, response.status);
          const why = response.ok ? `an answer that is not ${SSE_MEDIA_TYPE}: does ${this.base()} serve a run broker?` : refusalHint(response.status);
          throw new ResumeError(
            'RESUME_REFUSED',
            `Could not resume run '${runId}' of thread '${threadId}': the server answered ${answer}${response.ok ? ` with ${response.headers.get('content-type') ?? 'no content type'}` : ''}. This is final, no more attempts are made; ${why}.`,
            0,
            response.status,
          );
        }),
      );
    });
  }

  /**
   * Fetches, then hands the response over; the fetch and its body are cancelled with the
   * subscription. A response that has not come within `timeoutMs` fails with `late()`, its fetch aborted.
   */
  private fetchOnce(
    signal: AbortSignal,
    request: (signal: AbortSignal) => Promise<Response>,
    timeoutMs: number,
    late: (() => Error) | undefined,
    handle: (response: Response) => Observable<BaseEvent>,
  ): Observable<BaseEvent> {
    return defer(() => {
      // Cancels this attempt's fetch and body when it is unsubscribed (runAgent detached, or the run ended).
      const local = new AbortController();
      return from(request(AbortSignal.any([signal, local.signal]))).pipe(
        timeoutMs === Infinity ? identity : timeout({ first: timeoutMs, with: () => throwError(late ?? (() => new Error(`no answer within ${timeoutMs} ms`))) }),
        switchMap(handle),
        finalize(() => local.abort()),
      );
    });
  }

  /** The events of an event-stream response, with the session kept up to date; a drop becomes an {@link Interruption} when it can be resumed. */
  private readEvents(response: Response, session: Session, signal: AbortSignal): Observable<BaseEvent> {
    return new Observable<BaseEvent>((subscriber) => {
      const needsMore = () => (session.kind === 'run' ? !session.ended : session.open);
      const onMessage = (message: SSEMessage) => {
        // Only a frame's own `id:` is its cursor: parseSSE carries the last one over to later frames.
        const id = message.ownId === true ? message.id : undefined;
        let event: BaseEvent;
        try {
          event = JSON.parse(message.data) as BaseEvent;
        } catch (error) {
          return subscriber.error(
            new AguiRxError('INVALID_EVENT', `ResumableHttpAgent received a frame whose data is not JSON (${describeValue(message.data)}: ${(error as Error).message}). The server must send one AG-UI event as JSON per frame.`),
          );
        }
        if (replayedAlready(session, event, id)) return;
        if (event?.type === EventType.RUN_STARTED) {
          const started = event as BaseEvent & { threadId?: unknown; runId?: unknown };
          if (typeof started.runId === 'string') session.runId = started.runId;
          if (typeof started.threadId === 'string') session.threadId = started.threadId;
          if (session.kind === 'connect' && session.runId !== undefined) this.currentRun = { threadId: session.threadId, runId: session.runId };
          session.open = true;
          // Per run: a connect stream's compacted history has no ids, its running run has.
          session.cursor = undefined;
          session.unconfirmed = [];
        } else if (terminalEventTypes.has(event?.type)) {
          session.open = false;
          session.ended = true;
        }
        if (id !== undefined) {
          session.cursor = id;
          session.unconfirmed = [];
          session.resumable = true;
        } else if (session.cursor !== undefined) {
          // Not in the log yet (its store was unreachable): a resume from the cursor replays it first.
          session.unconfirmed.push(eventKey(event));
        } else {
          // No cursor to resume after (a server without ids, a connect stream's history).
          session.resumable = false;
        }
        subscriber.next(event);
        // A run's stream is over at its terminal event, whatever the connection does next.
        if (session.kind === 'run' && session.ended) subscriber.complete();
      };
      const onDrop = (error: unknown, ended: string) => {
        if (signal.aborted || !needsMore()) return error === undefined ? subscriber.complete() : subscriber.error(error);
        // Frames without ids cannot be resumed from: the drop ends the stream as it does for HttpAgent.
        if (!session.resumable || session.runId === undefined) return error === undefined ? subscriber.complete() : subscriber.error(error);
        subscriber.error(new Interruption(ended, error));
      };
      const { idleTimeoutMs } = this.resumeOptions;
      const silent = new AguiRxError(
        'STREAM_IDLE',
        `ResumableHttpAgent received nothing for ${idleTimeoutMs} ms, not even a heartbeat (resume.idleTimeoutMs), and cannot resume this stream (no frame of a running run carried an id to resume after). Raise resume.idleTimeoutMs above the server's heartbeat interval, or have the server send heartbeats.`,
      );
      const sub = readBody(response)
        .pipe(
          idleTimeoutMs === Infinity ? identity : timeout({ each: idleTimeoutMs, with: () => throwError(() => silent) }),
          parseSSE({ onDiagnostic: () => undefined, flagOwnIds: true }),
        )
        .subscribe({
          next: onMessage,
          error: (error: unknown) => onDrop(error, error === silent ? `nothing came for ${idleTimeoutMs} ms, not even a heartbeat (resume.idleTimeoutMs)` : `the connection dropped (${describeFailure(error)})`),
          complete: () => onDrop(undefined, "the stream ended before the run's terminal event"),
        });
      return () => sub.unsubscribe();
    });
  }

  /** The wait before the next attempt, or the error that ends the stream (abort, a final answer, attempts exhausted). */
  private backoff(error: unknown, attempt: number, session: Session, signal: AbortSignal): Observable<unknown> {
    if (signal.aborted) throw abortReason(signal);
    if (!(error instanceof Interruption)) throw error;
    const { maxRetries, initialDelayMs, maxDelayMs, jitter } = this.resumeOptions;
    if (attempt > maxRetries && !session.streaming) {
      throw new ResumeError(
        'RESUME_FAILED',
        `Gave up ${session.kind === 'run' ? `starting run '${session.runId}' of` : 'connecting to'} thread '${session.threadId}' after ${maxRetries} attempt${maxRetries === 1 ? '' : 's'}: ${error.message}. Nothing was sent to the server: check that it is running at ${this.url}, or allow it more time to start with resume.maxRetries and resume.maxDelayMs.`,
        maxRetries,
      );
    }
    if (attempt > maxRetries) {
      throw new ResumeError(
        'RESUME_FAILED',
        `Gave up resuming run '${session.runId}' of thread '${session.threadId}' after ${maxRetries} attempt${maxRetries === 1 ? '' : 's'}: ${error.message}. The run may still be going on the server: call connectAgent() to catch up once it is reachable, or allow more time with resume.maxRetries and resume.maxDelayMs.`,
        maxRetries,
        error.status,
      );
    }
    const ceiling = Math.min(maxDelayMs, initialDelayMs * 2 ** (attempt - 1));
    const delayMs = Math.round(ceiling * (1 - jitter * Math.random()));
    this.onReconnecting?.({ attempt, delayMs, error });
    return merge(timer(delayMs), aborted$(signal));
  }
}
