import { EventType, type Event, type RunAgentInput } from '@ag-ui/core';
import { RunAgentInputSchema } from '@ag-ui/core/schemas';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Observable, isObservable, tap } from 'rxjs';
import { toAgui, type ToAguiOptions } from '../../operators/toAgui.js';
import type { CancelSignal } from '../protocol/cancelSignal.js';
import type { AgentEvent } from '../protocol/agentEvent.js';
import { AguiRxError, assertFunctionOption, assertNumberOption, describeValue, errorMessage } from '../protocol/errors.js';
import { applyMessagePolicy, defaultErrorMessages, errorOfRunErrorEvent, logRunError, newReference, redactedRequestMessage, reportRunError, type RunErrorReport } from '../protocol/runErrors.js';
import { createCors, type CorsAnswer, type CorsOptions } from './cors.js';
import { matchBrokerRoute, runThroughBroker, statusOfBrokerError, type BrokerFrame, type BrokerRoute, type RunBrokerApi, type RunStopStatus } from './brokerRoutes.js';
import { closeGate, createDemandGate, flowLimitsOf, openGate, type DemandGate, type GateState } from './flowControl.js';
import { sendBrokerFrames, sendSSE, type SendSSEOptions } from './sendSSE.js';
import { toBrokerFramesResponse, toSSEResponse } from './toSSEStream.js';
import { createResponseTurns } from './responseTurns.js';
import type { AgentResult, SliceOptions } from './fromAgentResult.js';
import { agentRun, type AgentRunOptions } from './agentRun.js';
import { bodyText, checkState, contentTypeRefusal, invalidRunInput, runInputProblems, withCheckedState } from './checkInput.js';
import type { StandardSchemaV1 } from '../state/decodeState.js';
import { STREAM_MEDIA_TYPES, refusesEveryStreamType, type FramedOptions } from './frames.js';
import { recordType, type RecordType } from '../protocol/recordType.js';
import { copyWith, missingMethods } from '../protocol/values.js';

/**
 * An agent as the handlers run it: the run's input in, the agent's events out. `ctx.signal` aborts
 * when the run is cancelled — without a run broker when the client goes away (or is cut off as a
 * slow client); with one when the run is stopped, left without readers past its grace, or its
 * broker closes — so that the agent can cancel its model request (`fetch(url, { signal })`).
 * Unsubscription stops it too. It never aborts after a run that ended by itself (its RUN_FINISHED or
 * RUN_ERROR emitted, its Observable completed): work after the run may use it.
 *
 * An Observable that emits synchronously cannot be sliced from outside: until it yields, nothing
 * else runs on the server. An agent that has many events at hand returns them as an iterable
 * instead ({@link AnyAguiAgent}), or emits them on a scheduler (`observeOn(asapScheduler)` does not
 * yield to I/O; `subscribeOn`/`observeOn` with `asyncScheduler` does).
 */
export type AguiAgent<Context = unknown> = (input: RunAgentInput, ctx: AgentContext<Context>) => Observable<AgentEvent>;

/**
 * What an agent is given besides its input: `signal` (see {@link AguiAgent}); from the handlers,
 * also the HTTP `request` (node `IncomingMessage` or Web `Request`) and what the handler's
 * `context(request)` made of it (the user, the tenant). With a `Context` type
 * (`createAguiHandler<Caller>(agent, { context })`, which then needs that option), `context` is
 * that type and always there; without one it is `unknown`, and `undefined` without the option.
 */
export type AgentContext<Context = unknown> = {
  /** Aborts when the run is cancelled (without a broker: when the client goes away). */
  signal: AbortSignal;
  /** The HTTP request the run came from, from the handlers; absent elsewhere (in process, say). */
  request?: IncomingMessage | Request | undefined;
} & (unknown extends Context ? { context?: Context | undefined } : { context: Context });

/**
 * The handlers' options argument: optional, unless `Context` names a type; then the options must
 * hold the `context` function that makes it, which the agent and `authorize` rely on.
 */
export type HandlerOptionsArgument<Req, Context> = unknown extends Context
  ? [options?: AguiHandlerOptions<Req, Context>]
  : [options: AguiHandlerOptions<Req, Context> & { context: (request: Req) => Context | Promise<Context> }];

/** What a handler's `onError` is told: the run's (absent when `context` failed, before the body was read), the reference and the request. */
export interface HandlerErrorReport<Req = IncomingMessage | Request> extends Partial<Omit<RunErrorReport, 'reference'>> {
  readonly reference: string;
  readonly request: Req;
}

/**
 * An agent as the handlers take it: an {@link AguiAgent}, or one that returns its events as an
 * iterable (an array, a generator) or async iterable (an async generator). The handler pulls an
 * iterable in slices — `sliceEvents` events or `sliceMs` ms, whichever comes first — with a turn of
 * the event loop between them, so that other streams keep flowing; a client that goes away stops
 * the pull at the next slice and the iterator's `return()` is called (a generator's `finally` runs).
 * Without a broker, node:http pulls no faster than the client reads (the response's `'drain'`).
 */
export type AnyAguiAgent<Context = unknown> = (input: RunAgentInput, ctx: AgentContext<Context>) => AgentResult<AgentEvent>;

/** Options of {@link createAguiHandler} and {@link createAguiFetchHandler}. */
export interface AguiHandlerOptions<Req = IncomingMessage | Request, Context = unknown> extends Omit<ToAguiOptions, 'threadId' | 'runId' | 'input' | 'signal' | 'parentRunId' | 'onError'>, Omit<SliceOptions, 'ready'> {
  /**
   * Told once per run that ends in RUN_ERROR, whatever the cause (the agent, a stalled or
   * overflowing client, RUN_LOST; not a cancelled run), and for a `context` that failed (500):
   * the error and `{ input, threadId, runId, request, reference }`. It replaces `toAgui`'s
   * `onError`: an agent that runs `toAgui` with its own `onError` inside is reported here only.
   * Default: one `console.error` line (reference, code, message).
   */
  onError?: ((error: unknown, report: HandlerErrorReport<Req>) => void) | undefined;
  /**
   * Makes what the agent and the run broker's `authorize` get as `context` from the request (the
   * user, the tenant); may be async. It runs before the body is read. A throw with a `status` (or
   * `statusCode`), as `http-errors` makes them (401, 403), is answered with that status and its
   * message (`{ "error": message }`); any other throw is 500, its message worded by `errorMessages`.
   */
  context?: ((request: Req) => Context | Promise<Context>) | undefined;
  /** Cross-origin calls from browsers: preflights answered 204 with the Access-Control-* headers (see {@link CorsOptions}). Default: none (OPTIONS is 405). */
  cors?: CorsOptions | undefined;
  /** The largest request body accepted, in bytes; a larger one is answered 413 before it is parsed. Default: 1 MiB. */
  maxBodyBytes?: number | undefined;
  /** Idle time before an SSE heartbeat comment, in ms (0 = none). Default: 15000. */
  heartbeatMs?: number | undefined;
  /**
   * Adaptive coalescing: consecutive deltas of one message, tool call or reasoning message produced
   * in the same tick go out as one SSE frame (deltas joined; nothing waits longer for it). Default:
   * true without a broker; with a broker false (its log is sent as stored), and when true a merged
   * frame carries the cursor of the last event it holds, so a reconnect resumes after it.
   */
  coalesce?: boolean | undefined;
  /**
   * The most bytes of frames one response may queue for its client, in bytes. Default: 64 MiB. A
   * bound against an agent far faster than any network, not a limit on slow clients: past it the
   * stream ends with RUN_ERROR `code: "SEND_BUFFER_FULL"` after the frames already queued (without
   * a broker the run is stopped; with one, only this reader leaves). A single event is never
   * refused for its size when nothing waits. `Infinity`: no bound.
   */
  maxBufferedBytes?: number | undefined;
  /**
   * How long frames may wait while the client takes no bytes at all before it is declared stalled,
   * in ms. Default: 30000. Then its connection is closed and what waited for it freed at once
   * (without a broker the run is stopped; with one, only this reader leaves). On node:http a
   * client is seen reading when the kernel takes more of what waits, which Linux allows once about
   * a third of the connection's send buffer (up to 4 MB) is read: the default keeps clients of a
   * few tens of KB/s behind a large burst; a few seconds cut even one reading 128 KiB/s there
   * (`FlowOptions.stallTimeoutMs`, docs/transports.md). `Infinity`: never.
   */
  stallTimeoutMs?: number | undefined;
  /**
   * node:http: how many pipelined requests may wait on one connection (each holds its body, up to
   * `maxBodyBytes`, until its turn); one more closes the connection. Default: 16.
   */
  maxPipelinedRequests?: number | undefined;
  /**
   * A run broker (`createRunBroker`): runs outlive their connections, and the handler serves the
   * broker's routes (resume, connect, stop) besides POST. Without one a run lives in its response
   * and ends when the client goes away.
   */
  broker?: RunBrokerApi<Context> | undefined;
  /**
   * With a broker: the path the handler is mounted at, e.g. `/agent` (the routes are relative to
   * it). Default: '' (for frameworks that strip the mount point, such as Express's `app.use`).
   */
  basePath?: string | undefined;
  /**
   * A Standard Schema validator of the run's `state` (zod 3.24+, valibot, arktype, sync or async),
   * checked before the stream starts: a state it refuses is answered 400 naming each failing path
   * (500 if the validator itself fails). A valid one reaches the agent as the client sent it (the
   * client's copy, which state deltas are computed against): call `decodeState(input, schema)` in
   * the agent for the typed value. Default: the state is not checked.
   */
  stateSchema?: StandardSchemaV1 | undefined;
}

/** A request the handler refuses: its HTTP status and the reason, sent as `{ "error": reason }`. */
interface Refusal {
  status: number;
  reason: string;
  allow?: string | undefined;
}

const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;

const notAcceptable: Refusal = {
  status: 406,
  reason: `The Accept header refuses every type this endpoint streams a run as (${STREAM_MEDIA_TYPES.join(', ')}). Accept one of them.`,
};

const tooLarge = (maxBodyBytes: number): Refusal => ({
  status: 413,
  reason: `The request body is larger than ${maxBodyBytes} bytes, the limit of this endpoint. Send less history, or raise maxBodyBytes.`,
});

/** The RunAgentInput in a request body, or why there is none (invalid JSON, or a field the schema refuses). */
/** {@link parseRunAgentInput} of a body's bytes, which must be UTF-8. */
function parseBody(bytes: Uint8Array): RunAgentInput | Refusal {
  const text = bodyText(bytes);
  return typeof text === 'string' ? parseRunAgentInput(text) : text;
}

function parseRunAgentInput(body: string): RunAgentInput | Refusal {
  if (body.trim() === '') return { status: 400, reason: 'The request body is empty: POST a RunAgentInput as JSON.' };
  let json: unknown;
  try {
    // A UTF-8 byte order mark (some Windows tools write one) is not part of the JSON text (RFC 8259 §8.1 lets a parser ignore it).
    json = JSON.parse(body.charCodeAt(0) === 0xfeff ? body.slice(1) : body);
  } catch (error) {
    return { status: 400, reason: `The request body is not valid JSON: ${(error as Error).message}. POST a RunAgentInput as JSON.` };
  }
  return validateRunAgentInput(json);
}

/** The RunAgentInput a parsed JSON value is, or why it is not one (a field the schema refuses, an empty id, a value too deep to serialise). */
function validateRunAgentInput(json: unknown): RunAgentInput | Refusal {
  // Validated, never evaluated: the schema only reads the fields it knows.
  let result: ReturnType<typeof RunAgentInputSchema.safeParse>;
  try {
    result = RunAgentInputSchema.safeParse(json);
  } catch (error) {
    return { status: 400, reason: `The request body could not be validated as a RunAgentInput: ${(error as Error).message}.` };
  }
  // Every problem, in our own words (zod's change between majors).
  const problems = runInputProblems(json, result.success ? [] : result.error.issues);
  if (problems.length > 0) return invalidRunInput(problems);
  const input = json as RunAgentInput;
  // The run echoes its input and serialises its state: a field nested past what JSON.stringify can
  // walk would fail mid-stream, so it is refused here, by name.
  for (const [field, value] of Object.entries(input)) {
    try {
      JSON.stringify(value);
    } catch (error) {
      return { status: 400, reason: `The request body's '${field}' cannot be handled: ${(error as Error).message}. Send it less deeply nested.` };
    }
  }
  return input;
}

/** What every run of a handler shares: `toAgui`'s options (the handler's own taken out) and the slice of an iterable agent. Made once per handler. */
interface RunSetup {
  toAgui: AgentRunOptions['toAgui'];
  sliceEvents: number | undefined;
  sliceMs: number | undefined;
  /** No `onError` of the user's: failures are logged with the ids, so a run drops its input once RUN_STARTED has echoed it. */
  inputUnreported: boolean;
}

function runSetupOf(options: AguiHandlerOptions<any, any>): RunSetup {
  const { maxBodyBytes: _max, heartbeatMs: _heartbeat, coalesce: _coalesce, maxBufferedBytes: _buffered, stallTimeoutMs: _stall, maxPipelinedRequests: _pipelined, broker: _broker, basePath: _base, onError: _onError, context: _context, cors: _cors, stateSchema: _stateSchema, sliceEvents, sliceMs, ...aguiOptions } = options;
  // Each run reads the options it needs by name (agentRun's runOptionsOf): no copy per run, nor here.
  return { toAgui: aguiOptions, sliceEvents, sliceMs, inputUnreported: options.onError === undefined };
}

/**
 * The run's events: the agent piped through `toAgui`, aborting `ctx.signal` when unsubscribed before
 * the run's terminal event. With `cancel` (the broker's), aborting it before then ends the run with
 * RUN_FINISHED `cancelled` and aborts the agent. `ctx.signal` is made when the agent first reads it.
 */
function runEvents(agent: AnyAguiAgent<any>, input: RunAgentInput, setup: RunSetup, served: Served, cancel?: CancelSignal, ready?: SliceOptions['ready']): Observable<Event> {
  const { request, context, report } = served;
  return agentRun(
    (signal) =>
      agent(input, {
        get signal() {
          return signal();
        },
        request,
        context,
      }),
    input,
    // The input was validated with the request (parseRunAgentInput): the run need not validate it again.
    { toAgui: setup.toAgui, onError: report, checked: input, inputUnreported: setup.inputUnreported, slice: { sliceEvents: setup.sliceEvents, sliceMs: setup.sliceMs, ready } },
    cancel,
  );
}

/**
 * How a handler's node responses stream: what `sendSSE` is given that every response of the
 * handler shares (heartbeat, coalescing, flow limits), on the prototypes of the records each
 * response is given as its options ({@link RunResponse}, {@link FramesResponse}), with their
 * methods. Made once per handler.
 */
interface StreamSetup {
  readonly Runs: RecordType<RunResponse>;
  readonly Frames: RecordType<FramesResponse>;
}

function streamSetupOf(options: AguiHandlerOptions<any, any>, maxBufferedBytes: number, stallTimeoutMs: number): StreamSetup {
  const shared = { heartbeatMs: options.heartbeatMs, coalesce: options.coalesce, maxBufferedBytes, stallTimeoutMs };
  return {
    Runs: recordType<RunResponse>(Object.freeze(Object.assign(Object.create(runResponseMethods) as SendSSEOptions, shared))),
    Frames: recordType<FramesResponse>(Object.freeze(Object.assign(Object.create(framesResponseMethods) as SendSSEOptions, shared))),
  };
}

/**
 * One run served without a broker on a node response: `sendSSE`'s options (the handler's shared
 * ones on its prototype), its failure report (`onFailure`, a method) and the demand gate an
 * iterable agent is pulled through (the record itself, its state a {@link GateState}: `ready`,
 * `close`, `open` are its methods). One record, so that an open stream holds no closure per run for these.
 */
interface RunResponse extends SendSSEOptions, DemandGate, GateState {
  readonly accept: string | undefined;
  demand: DemandGate | undefined;
  readonly report: Served['report'];
  readonly threadId: string;
  readonly runId: string;
  /** Only for an `onError` of the user's, which is given it: else the open stream holds none of the client's history. */
  readonly input: RunAgentInput | undefined;
}

// The methods every run's record shares (the handler's options are on a prototype of their own, made from it).
const runResponseMethods = Object.freeze({
  onFailure(this: RunResponse, error: unknown) {
    // The report is made when needed: nothing per run is kept for it but the ids (and the input, for an `onError` of the user's).
    this.report(error, { input: this.input, threadId: this.threadId, runId: this.runId });
  },
  ready(this: RunResponse) {
    return this.waiting?.promise;
  },
  close(this: RunResponse) {
    closeGate(this);
  },
  open(this: RunResponse) {
    openGate(this);
  },
});

/**
 * Serves one run without a broker on a node response, from a function of its own so that what the
 * open stream holds does not keep the request's whole setup alive.
 */
function sendRun(res: ServerResponse, agent: AnyAguiAgent<any>, input: RunAgentInput, setup: RunSetup, served: Served, streams: StreamSetup, accept: string | undefined): void {
  const r = new streams.Runs();
  r.accept = accept;
  // An iterable agent is pulled no faster than the client reads: the record is its gate.
  r.demand = r;
  r.waiting = undefined;
  r.report = served.report;
  r.threadId = input.threadId;
  r.runId = input.runId;
  r.input = setup.inputUnreported ? undefined : input;
  streams.Runs.shaped(r);
  // `ready` is called as a plain function: bound here (kept only by an iterable agent's pull).
  sendSSE(res, runEvents(agent, input, setup, served, undefined, runResponseMethods.ready.bind(r)), r);
}

/**
 * A brokered stream served on a node response: `sendBrokerFrames`' options (the handler's shared
 * ones on its prototype) and its failure reports, methods: `onFailure`, and `onFrame` for a
 * RUN_LOST frame (the Web handler's {@link reportedFrames} does the same with a `tap`).
 */
interface FramesResponse extends SendSSEOptions, FramedOptions {
  readonly accept: string | undefined;
  readonly report: Served['report'];
  readonly run: Partial<RunErrorReport>;
}

const framesResponseMethods = Object.freeze({
  onFailure(this: FramesResponse, error: unknown) {
    this.report(error, this.run);
  },
  onFrame(this: FramesResponse, frame: BrokerFrame) {
    reportIfLost(frame, this.report, this.run);
  },
});

/** Serves a brokered stream on a node response, from a function of its own so that the open stream does not keep the request's whole setup alive. */
function sendFrames(res: ServerResponse, frames$: Observable<BrokerFrame>, report: Served['report'], run: Partial<RunErrorReport>, streams: StreamSetup, accept: string | undefined): void {
  const r = new streams.Frames();
  r.accept = accept;
  r.report = report;
  r.run = run;
  streams.Frames.shaped(r);
  sendBrokerFrames(res, frames$, r);
}

/** A request being served: itself, what `context` made of it, and how its failures are reported. */
interface Served {
  request: IncomingMessage | Request;
  context: unknown;
  report: (error: unknown, run: Partial<RunErrorReport>) => void;
}

/**
 * The run's fields of a stream's failure report: its `input` only for an `onError` of the user's
 * (`RunSetup.inputUnreported`), so that an open stream holds none of the history its request posted.
 */
function reportedRun(setup: RunSetup, input: RunAgentInput, run: 'run' | 'thread'): Partial<RunErrorReport> {
  const reported = setup.inputUnreported ? undefined : input;
  return run === 'run' ? { input: reported, threadId: input.threadId, runId: input.runId } : { input: reported, threadId: input.threadId };
}

/** How a handler reports a failure: to `onError`, or logged; with the request and a reference. */
function reporterOf(options: AguiHandlerOptions<any, any>, request: IncomingMessage | Request): Served['report'] {
  const onError = options.onError ?? logRunError;
  return (error, run) => reportRunError(onError, error, { ...run, reference: run.reference ?? newReference(), request });
}

/** A brokered stream with its failures reported: RUN_LOST frames, and the stream's own (`onFailure`). */
function reportedFrames(frames$: Observable<BrokerFrame>, report: Served['report'], run: Partial<RunErrorReport>): Observable<BrokerFrame> {
  return frames$.pipe(tap((frame) => reportIfLost(frame, report, run)));
}

// A RUN_LOST frame (the broker's word that the run's instance is gone) is reported as the run's failure.
function reportIfLost({ event }: BrokerFrame, report: Served['report'], run: Partial<RunErrorReport>): void {
  if (event.type === EventType.RUN_ERROR && event.code === 'RUN_LOST') report(errorOfRunErrorEvent(event), run);
}

/**
 * The answer to a hook of the server's that threw (`context(request)`, the broker's `authorize`): a
 * status it carries (`status` or `statusCode`, 400–599, as `http-errors` sets them) with its
 * message; else 500. A 5xx is a failure of the server's own: told to `onError` with a reference,
 * and worded for the client by the same policy as a run's error.
 */
function hookRefusal(error: unknown, policy: NonNullable<AguiHandlerOptions['errorMessages']>, report: Served['report']): Refusal {
  let status: unknown;
  let shown: string | undefined;
  // An error's fields may throw when read (a getter, a Proxy): then it is a 500 like any other.
  try {
    status = (error as { status?: unknown }).status ?? (error as { statusCode?: unknown }).statusCode;
    // http-errors shows a 4xx message unless told `expose: false`.
    const own = (error as { message?: unknown }).message;
    shown = (error as { expose?: unknown }).expose === false ? undefined : typeof own === 'string' && own !== '' ? own : undefined;
  } catch {
    status = undefined;
  }
  if (typeof status === 'number' && Number.isInteger(status) && status >= 400 && status < 500) {
    return { status, reason: shown ?? `The request was refused (HTTP ${status}).` };
  }
  const message = errorMessage(error, 'The request was refused.');
  const reference = newReference();
  report(error, { reference });
  const worded = applyMessagePolicy({ type: EventType.RUN_ERROR, message }, error, policy, reference, redactedRequestMessage).message;
  return { status: typeof status === 'number' && Number.isInteger(status) && status >= 500 && status < 600 ? status : 500, reason: worded };
}

/**
 * A node:http request handler serving one agent over the AG-UI HTTP binding (and, with a run
 * broker, the routes that resume, reconnect to and stop its runs).
 *
 * Without `broker`:
 * - Anything but POST: 405 (with `Allow: POST`).
 * - An `Accept` that refuses (`q=0`) both `text/event-stream` and `application/vnd.ag-ui.event+proto`:
 *   406 (one that names neither, or only a wildcard, gets SSE).
 * - A `Content-Type` that is not JSON (`application/json`, `+json`), or none on a browser's request
 *   (with `Origin`): 415 (a browser sends those cross-site without a CORS preflight); so is a
 *   `charset` other than UTF-8, or a `Content-Encoding` (the body is not decompressed).
 * - A body over `maxBodyBytes` (default 1 MiB): 413, decided from `Content-Length` or while reading,
 *   before anything is parsed. With `Expect: 100-continue`, serve the handler for the server's
 *   `'checkContinue'` event too (`server.on('checkContinue', handler)`): it then sends `100 Continue`
 *   only when it reads the body, so an oversize one is refused before the client sends it.
 * - A body that is not UTF-8, not JSON (a UTF-8 BOM before it is fine), or not a RunAgentInput by the
 *   `@ag-ui/core/schemas` validator (an id holding half a surrogate pair included): 400; the reason names the field.
 * - A body a parser read first (`express.json()`; `text()`, `raw()` with a JSON `type`) is taken from `req.body` and
 *   validated the same way (the parser's own size limit applied); one read without leaving `req.body`
 *   is a 400 that says so.
 * - Otherwise `agent(input, { signal }).pipe(toAgui({ threadId, runId, input, signal }))` streams
 *   as SSE (or protobuf when `Accept` asks for `application/vnd.ag-ui.event+proto`) through
 *   {@link sendSSE}; a client that goes away unsubscribes the agent and aborts `signal` (a run that
 *   ended by itself leaves `signal` alone).
 *
 * With `broker` (`createRunBroker`), paths relative to `basePath` (where the handler is mounted;
 * '' where the framework strips the mount point, as Express's `app.use` does):
 * 1. `POST <base>` with a RunAgentInput starts run `runId`, or attaches to it when the broker has it
 *    (the agent is never started twice for one `runId`); with `Last-Event-ID`, only that run's
 *    events strictly after that cursor, then live.
 * 2. `GET <base>/threads/<threadId>/runs/<runId>/events`: the run's events after `Last-Event-ID`
 *    (all of them without), then live; never starts anything.
 * 3. `POST <base>/connect` with a RunAgentInput: events that rebuild the thread, then its running
 *    run live (what `connectAgent()` of `@ag-ui/client` expects); an unknown thread is an empty stream.
 * 4. `POST <base>/threads/<threadId>/runs/<runId>/stop`: cancels the run wherever it runs (its log
 *    ends RUN_FINISHED `outcome: { type: 'cancelled' }`); 202 `{ threadId, runId, status: 'stopping' }`,
 *    or `status: 'finished'` for a run that had ended already (nothing to cancel).
 *
 * Every SSE frame of a run's log carries its cursor as its own `id:` field, which `EventSource` sends
 * back as `Last-Event-ID` (WHATWG HTML, "Server-sent events"); protobuf frames carry none. Each
 * stream closes right after the run's terminal event (RUN_FINISHED or RUN_ERROR). A client that
 * goes away only leaves: the run goes on, and is cancelled `detachGraceMs` (the broker's option, in
 * ms) after its last reader left unless one came back. Refusals: 400 (a bad body, a
 * malformed `Last-Event-ID` or percent-encoding), 403 (the broker's `authorize` refused, or is not
 * configured: then only the POST that started a run reads it), 404 (an unknown run or path), 405
 * (with `Allow`), 406 (on the stream routes), 413, 415 (a body that is not JSON), 429 (the broker's `maxSubscribers`), 503 (the run
 * store is unreachable).
 *
 * Refusals are JSON `{ "error": reason }`; the server keeps serving after any of them.
 *
 * ## Example
 *
 * ```ts
 * createServer(createAguiHandler((input) => myAgent$(input.messages))).listen(8000);
 *
 * // Runs that outlive their connections: a run broker, its routes under /agent.
 * const broker = createRunBroker({ authorize: ({ request, threadId }) => ownsThread(request, threadId) });
 * createServer(createAguiHandler((input) => myAgent$(input.messages), { broker, basePath: '/agent' })).listen(8001);
 * ```
 *
 * @param agent The agent: `(input, { signal, request, context }) => Observable<AgentEvent>` (or an iterable or async
 * iterable of them, pulled in slices: {@link AnyAguiAgent}); `signal` aborts when the
 * run is cancelled (without a broker: when the client goes away).
 * Slow, stalled and vanished clients: a client that reads, however slowly, gets the whole run; one
 * that takes no bytes for `stallTimeoutMs` (default 30000 ms) while frames wait is cut (its socket
 * destroyed, its queue freed); `maxBufferedBytes` (default 64 MiB) bounds what one response queues
 * (RUN_ERROR `SEND_BUFFER_FULL` past it).
 *
 * @param options Body limit (bytes), heartbeat (ms), `maxBufferedBytes` (bytes), `stallTimeoutMs`
 * (ms), `broker` and `basePath`, an iterable agent's slice (`sliceEvents`, count; `sliceMs`, ms),
 * `onError` and `errorMessages` (RUN_ERROR reported once with a reference, unknown messages redacted
 * in production), `context` (the caller, for the agent and `authorize`; a throw with a 4xx `status`
 * is that answer, another is 500), `cors` (preflights 204 on every route), and `toAgui`'s options.
 * @return `(req, res) => void`, for `http.createServer` or an Express/Fastify route (with a broker,
 * mount it for every method under its path).
 * @throws RangeError when `maxBodyBytes`, `heartbeatMs`, `maxBufferedBytes`, `stallTimeoutMs`, `sliceEvents`, `sliceMs` or `maxPipelinedRequests` is not a valid number (`NaN`, negative, a fraction of an event);
 * AguiRxError `INVALID_OPTIONS` when `agent`, `context` or `onError` is not a function, `broker` is not a run broker, or `basePath` is not a path.
 */
export function createAguiHandler<Context = unknown>(agent: AnyAguiAgent<Context>, ...[options = {}]: HandlerOptionsArgument<IncomingMessage, Context>): (req: IncomingMessage, res: ServerResponse) => void {
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  // Checked here, where a mistake surfaces at startup, rather than in every response.
  assertHandlerOptions(agent, options);
  const { maxBufferedBytes, stallTimeoutMs } = flowLimitsOf(options);
  const { broker } = options;
  const basePath = options.basePath ?? '';
  // Decided once, when the handler is made (NODE_ENV read now), for the runs and the refusals alike.
  const errorMessages = options.errorMessages ?? defaultErrorMessages();
  const runSetup = runSetupOf({ ...options, errorMessages });
  const streamSetup = streamSetupOf(options as AguiHandlerOptions<any, any>, maxBufferedBytes, stallTimeoutMs);
  const methods = broker === undefined ? 'POST' : 'GET, POST';
  const cors = options.cors === undefined ? undefined : createCors(options.cors, methods);
  // Pipelined requests are served one at a time, in order: a run starts when its response owns the connection.
  const inTurn = createResponseTurns();
  const maxPipelinedRequests = options.maxPipelinedRequests ?? 16;
  return (req, res) => {
    if (!inTurn.admit(res, maxPipelinedRequests)) {
      // No answer can go out before the ones ahead of it: the connection is closed.
      req.socket.destroy();
      return;
    }
    const refuse = ({ status, reason, allow }: Refusal) =>
      inTurn(res, () => {
        if (res.headersSent) return;
        res.writeHead(status, { 'Content-Type': 'application/json', ...(allow !== undefined ? { Allow: allow } : {}), ...(status === 413 ? { Connection: 'close' } : {}) });
        res.end(JSON.stringify({ error: reason }));
        // An oversize body is not read to its end: close the connection once the answer is out.
        if (status === 413) res.once('finish', () => req.destroy());
      });
    const report = reporterOf(options as AguiHandlerOptions<any, any>, req);
    // With `context`, what it makes of the request (before the body is read), or the refusal when it throws.
    const withContext = (then: (context: Context | undefined) => void) => {
      if (options.context === undefined) return then(undefined);
      const make = options.context;
      new Promise<Context>((resolve) => resolve(make(req))).then(then, (error: unknown) => {
        req.resume();
        refuse(hookRefusal(error, errorMessages, report));
      });
    };
    const serve = () => {
      const accept = req.headers.accept;
      if (broker === undefined) {
        if (req.method !== 'POST') {
          req.resume();
          return refuse({ status: 405, allow: 'POST', reason: `${req.method} is not supported here: POST a RunAgentInput (the AG-UI HTTP binding).` });
        }
        if (refusesEveryStreamType(req.headers.accept)) {
          req.resume();
          return refuse(notAcceptable);
        }
        const wrongType = contentTypeRefusal(req.headers['content-type'], req.headers.origin, req.headers['content-encoding']);
        if (wrongType !== undefined) {
          req.resume();
          return refuse(wrongType);
        }
        return withContext((context) =>
          readNodeBody(req, res, maxBodyBytes, refuse, withCheckedState(options.stateSchema, refuse, (input) =>
            inTurn(res, () => sendRun(res, agent, input, runSetup, { request: req, context, report }, streamSetup, accept))),
          ),
        );
      }
      const route = matchBrokerRoute(req.method, req.url ?? '/', basePath);
      if (streams(route.kind) && refusesEveryStreamType(req.headers.accept)) {
        req.resume();
        return refuse(notAcceptable);
      }
      if (route.kind === 'refused') {
        req.resume();
        return refuse(route);
      }
      // Every POST route (run, connect, stop) changes state, with a body or without.
      const wrongType = route.kind === 'events' ? undefined : contentTypeRefusal(req.headers['content-type'], req.headers.origin, req.headers['content-encoding']);
      if (wrongType !== undefined) {
        req.resume();
        return refuse(wrongType);
      }
      const lastEventId = lastEventIdOf(req.headers['last-event-id']);
      withContext((context) => {
        const access = { request: req, context };
        const served = { request: req, context, report };
        const send = (frames: Promise<Observable<BrokerFrame>>, run: Partial<RunErrorReport>) =>
          frames.then(
            (frames$) => sendFrames(res, frames$, report, run, streamSetup, accept),
            (error: unknown) => refuse(brokerRefusal(error, errorMessages, report)),
          );
        switch (route.kind) {
          case 'events':
            req.resume();
            return inTurn(res, () => void send(broker.events(route.threadId, route.runId, lastEventId, access), route));
          case 'stop':
            req.resume();
            return void broker.stop(route.threadId, route.runId, access).then(
              // The stop acts at once (it may end the run this connection waits on); its answer waits its turn.
              (status) =>
                inTurn(res, () => {
                  res.writeHead(202, { 'Content-Type': 'application/json' });
                  res.end(stopAnswer(route.threadId, route.runId, status));
                }),
              (error: unknown) => refuse(brokerRefusal(error, errorMessages, report)),
            );
          case 'connect':
            return readNodeBody(req, res, maxBodyBytes, refuse, (input) => inTurn(res, () => void send(broker.connect(input, access), reportedRun(runSetup, input, 'thread'))));
          case 'run':
            return readNodeBody(req, res, maxBodyBytes, refuse, withCheckedState(options.stateSchema, refuse, (input) =>
              inTurn(res, () => void send(runThroughBroker(broker, input, (cancel) => runEvents(agent, input, runSetup, served, cancel), access, lastEventId), reportedRun(runSetup, input, 'run'))),
            ));
        }
      });
    };
    if (cors === undefined) return serve();
    // CORS first: a preflight carries no credentials, and every answer (a refusal too) needs the headers for the browser to read it.
    const header = (name: string) => {
      const value = req.headers[name];
      return Array.isArray(value) ? value[0] : value;
    };
    void cors(req.method, header).then((answer: CorsAnswer) => {
      for (const [name, value] of Object.entries(answer.headers)) res.setHeader(name, value);
      if (req.method !== 'OPTIONS') return serve();
      req.resume();
      inTurn(res, () => {
        res.writeHead(204, answer.preflight ? { 'Content-Length': '0' } : { Allow: `${methods}, OPTIONS`, 'Content-Length': '0' });
        res.end();
      });
    });
  };
}

/** Whether a broker route answers with a run's stream (406 applies), rather than JSON or a refusal. */
const streams = (kind: BrokerRoute['kind']) => kind === 'run' || kind === 'events' || kind === 'connect';

/** A `Last-Event-ID` header's value, or undefined when absent or empty (an empty one means "from the start"). */
function lastEventIdOf(header: string | string[] | null | undefined): string | undefined {
  const value = Array.isArray(header) ? header[0] : header;
  return value === undefined || value === null || value.trim() === '' ? undefined : value.trim();
}

/** Route 4's answer: the run's ids and what stopping it found (a broker that tells nothing: stopping). */
function stopAnswer(threadId: string, runId: string, status: RunStopStatus | void): string {
  return JSON.stringify({ threadId, runId, status: status === 'finished' ? 'finished' : 'stopping' });
}

/**
 * The answer to a broker error raised before a stream starts: its status and message (403, 404,
 * 400, 429, 503); any other error (an `authorize` hook that throws, a broken store) is answered as
 * a hook's ({@link hookRefusal}: its own 4xx status, else a 500 that `onError` is told of).
 */
function brokerRefusal(error: unknown, policy: NonNullable<AguiHandlerOptions['errorMessages']>, report: Served['report']): Refusal {
  const status = statusOfBrokerError(error);
  if (status === 500) return hookRefusal(error, policy, report);
  const message = (error as Error | undefined)?.message;
  return { status, reason: typeof message === 'string' ? message : 'The run broker refused this request.' };
}

/** Whether the client waits for `100 Continue` before sending its body, and Node has not sent it (the server's 'checkContinue' event leaves it to us). */
function expectsContinue(req: IncomingMessage, res: ServerResponse): boolean {
  const expect = req.headers.expect;
  // `_sent100` is node:http's own record of it; without a 'checkContinue' listener Node sent it before calling us.
  return typeof expect === 'string' && /(?:^|\W)100-continue(?:$|\W)/i.test(expect) && req.httpVersion === '1.1' && (res as ServerResponse & { _sent100?: boolean })._sent100 !== true;
}

/**
 * Refuses, when a handler is made, a limit that would silently do something else: `NaN` from an
 * unset environment variable would lift the body limit, flood heartbeats or stall every iterable
 * run; and an agent or a broker of the wrong kind, which would fail every request (JavaScript
 * lets both through).
 * @throws RangeError naming the limit and what it takes; AguiRxError `INVALID_OPTIONS` for the agent, the hooks, the broker or the base path.
 */
function assertHandlerOptions(agent: unknown, options: AguiHandlerOptions<any, any>): void {
  if (typeof agent !== 'function') {
    const wrap = isObservable(agent) ? ': wrap it, (input) => events$, so that each request runs the agent anew' : '';
    throw new AguiRxError('INVALID_OPTIONS', `The agent must be a function of the request's RunAgentInput that returns its events, not ${describeValue(agent)}${wrap}.`);
  }
  const { broker } = options as { broker?: unknown };
  if (broker !== undefined && !isRunBroker(broker)) {
    const call = typeof broker === 'function' ? ': call it, broker: createRunBroker({ … })' : '';
    throw new AguiRxError('INVALID_OPTIONS', `'broker' must be a run broker made by createRunBroker() (with run, events, connect and stop), not ${describeValue(broker)}${call}.`);
  }
  const check = (name: keyof AguiHandlerOptions<any, any>, ok: (value: number) => boolean, takes: string) => assertNumberOption(options, name, ok, takes);
  assertFunctionOption(options, 'context', 'of the request, returning what the agent and authorize get as context (may be async)');
  assertFunctionOption(options, 'onError', 'of the error and its report');
  const { basePath } = options;
  if (basePath !== undefined && (typeof basePath !== 'string' || /[?#]/.test(basePath) || /^[a-z][a-z\d+.-]*:/i.test(basePath))) {
    throw new AguiRxError('INVALID_OPTIONS', `'basePath' must be the path the handler is mounted at, such as '/agent' (no origin, query or fragment), not ${describeValue(basePath)}.`);
  }
  check('maxBodyBytes', (value) => value >= 0, 'a number of bytes ≥ 0 (or Infinity)');
  check('heartbeatMs', (value) => value >= 0, 'a number of ms ≥ 0 (0 or Infinity: no heartbeat)');
  check('sliceEvents', (value) => value >= 1 && Number.isInteger(value), 'a whole number of events ≥ 1');
  check('sliceMs', (value) => value >= 0, 'a number of ms ≥ 0');
  check('maxPipelinedRequests', (value) => value >= 0 && (Number.isInteger(value) || value === Infinity), 'a whole number of requests ≥ 0 (or Infinity)');
}

/** Whether `value` has a run broker's methods (what the routes call). */
const isRunBroker = (value: unknown): boolean => typeof value === 'object' && value !== null && missingMethods(value, ['run', 'events', 'connect', 'stop']).length === 0;

/** A request's late 'error' (a reset after its body was read) is the response's business: without a listener it would crash the process. */
const ignoreError = () => undefined;

const bodyConsumed: Refusal = {
  status: 400,
  reason:
    'The request body was already read before this handler, and nothing left it in req.body (a body parser or middleware consumed it). Remove the body parser from this route, or use one that sets req.body (express.json()).',
};

const bodyPartlyConsumed: Refusal = {
  status: 400,
  reason:
    'Part of the request body was read before this handler (a middleware read from the request stream), so what is left cannot be parsed. Let the handler read the body, or use a body parser that sets req.body (express.json()).',
};

/** A body parser's result (`req.body` of express.json(), text(), raw()): the RunAgentInput it holds, or why not. */
function parsedBodyInput(body: unknown): RunAgentInput | Refusal {
  if (typeof body === 'string') return parseRunAgentInput(body);
  if (body instanceof Uint8Array) return parseBody(body);
  return validateRunAgentInput(body);
}

/**
 * Reads a node request's body within `maxBodyBytes` and hands on the RunAgentInput in it, or refuses
 * (413, 400). A body a parser already read is taken from `req.body` (the parser's size limit applied).
 */
function readNodeBody(req: IncomingMessage, res: ServerResponse, maxBodyBytes: number, refuse: (refusal: Refusal) => void, then: (input: RunAgentInput) => void): void {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > maxBodyBytes) {
    // Discarded as it comes: an unread body would stop Node reading the connection (a waiting pipelined request's too).
    req.resume();
    return refuse(tooLarge(maxBodyBytes));
  }
  // Read by a body parser ('end' already emitted, or the stream done): its 'data' and 'end' will never come again.
  if (req.readableEnded || !req.readable) {
    const { body } = req as IncomingMessage & { body?: unknown };
    const parsed = body === undefined || body === null ? bodyConsumed : parsedBodyInput(body);
    return 'status' in parsed ? refuse(parsed) : then(parsed);
  }
  // Partly read by a middleware (its 'data' went elsewhere): what is left is no body to parse.
  if (req.readableDidRead && (req as IncomingMessage & { body?: unknown }).body === undefined) return refuse(bodyPartlyConsumed);
  // Served for a 'checkContinue' event, Node has not sent `100 Continue`: the client waits for it to send the body.
  if (expectsContinue(req, res)) res.writeContinue();
  const chunks: Buffer[] = [];
  let received = 0;
  let refused = false;
  const onData = (chunk: Buffer) => {
    if (refused) return;
    received += chunk.length;
    if (received > maxBodyBytes) {
      refused = true;
      chunks.length = 0;
      return refuse(tooLarge(maxBodyBytes));
    }
    chunks.push(chunk);
  };
  const onError = () => {
    refused = true;
  };
  req.on('data', onData);
  req.on('error', onError);
  req.once('end', () => {
    // What the listeners hold (the body, `then` and all it holds) is not kept for the response's lifetime.
    req.removeListener('data', onData);
    req.removeListener('error', onError).on('error', ignoreError);
    if (refused) return;
    const parsed = parseBody(Buffer.concat(chunks));
    if ('status' in parsed) return refuse(parsed);
    then(parsed);
  });
}

/**
 * The Web twin of {@link createAguiHandler}: `(request: Request) => Promise<Response>`, for Deno,
 * Bun, Cloudflare Workers, Hono or a Next.js route handler. The same refusals (405, 406, 415, 413, 400
 * with the field; 400 too for a body middleware already read), then a streaming {@link toSSEResponse}.
 * When the response stream is cancelled, or `request.signal` aborts, the agent is unsubscribed and
 * its `signal` aborted (not after a run that ended by itself); an abort also closes the response
 * body, so that its reader is not left waiting.
 *
 * With `broker`, the same four routes under `basePath` as {@link createAguiHandler} (matched on the
 * request URL's path, so `basePath` is the full mount path, e.g. '/agent'), with the same `id:`s,
 * statuses (202, 400, 403, 404, 405, 406, 413, 415, 429, 503) and detached runs: a cancelled response
 * stream or an aborted `request.signal` only removes that reader (and closes its body). In Next.js, serve them from an optional
 * catch-all route (`app/agent/[[...path]]/route.ts`) exporting both GET and POST.
 *
 * ## Example
 *
 * ```ts
 * export const POST = createAguiFetchHandler((input) => myAgent$(input.messages)); // Next.js app router
 *
 * // With a run broker, in app/agent/[[...path]]/route.ts instead:
 * //   const handle = createAguiFetchHandler((input) => myAgent$(input.messages), { broker, basePath: '/agent' });
 * //   export { handle as GET, handle as POST };
 * ```
 *
 * @param agent The agent: `(input, { signal, request, context }) => Observable<AgentEvent>` (or an iterable or async
 * iterable of them, pulled in slices: {@link AnyAguiAgent}); `signal` aborts when the
 * run is cancelled (without a broker: when the client goes away).
 * The response streams honour backpressure the same way (see {@link toSSEStream}): `maxBufferedBytes`
 * (bytes) and `stallTimeoutMs` (ms) as for {@link createAguiHandler}.
 *
 * @param options Body limit (bytes), heartbeat (ms), `maxBufferedBytes` (bytes), `stallTimeoutMs`
 * (ms), `broker` and `basePath`, an iterable agent's slice (`sliceEvents`, count; `sliceMs`, ms),
 * `onError` and `errorMessages` (RUN_ERROR reported once with a reference, unknown messages redacted
 * in production), `context` (the caller, for the agent and `authorize`; a throw with a 4xx `status`
 * is that answer, another is 500), `cors` (preflights 204 on every route), and `toAgui`'s options.
 * @return `(request) => Promise<Response>`.
 * @throws RangeError when `maxBodyBytes`, `heartbeatMs`, `maxBufferedBytes`, `stallTimeoutMs`, `sliceEvents`, `sliceMs` or `maxPipelinedRequests` is not a valid number (`NaN`, negative, a fraction of an event);
 * AguiRxError `INVALID_OPTIONS` when `agent`, `context` or `onError` is not a function, `broker` is not a run broker, or `basePath` is not a path.
 */
export function createAguiFetchHandler<Context = unknown>(agent: AnyAguiAgent<Context>, ...[options = {}]: HandlerOptionsArgument<Request, Context>): (request: Request) => Promise<Response> {
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  assertHandlerOptions(agent, options);
  const { maxBufferedBytes, stallTimeoutMs } = flowLimitsOf(options);
  const { broker } = options;
  const basePath = options.basePath ?? '';
  // Decided once, when the handler is made (NODE_ENV read now), for the runs and the refusals alike.
  const errorMessages = options.errorMessages ?? defaultErrorMessages();
  const runSetup = runSetupOf({ ...options, errorMessages });
  const methods = broker === undefined ? 'POST' : 'GET, POST';
  const cors = options.cors === undefined ? undefined : createCors(options.cors, methods);
  const refuse = ({ status, reason, allow }: Refusal) =>
    new Response(JSON.stringify({ error: reason }), {
      status,
      headers: { 'Content-Type': 'application/json', ...(allow !== undefined ? { Allow: allow } : {}) },
    });
  /** The request's RunAgentInput, or the refusal to answer with. */
  const readInput = async (request: Request): Promise<RunAgentInput | Refusal> => {
    const declared = Number(request.headers.get('content-length'));
    if (Number.isFinite(declared) && declared > maxBodyBytes) return tooLarge(maxBodyBytes);
    // Read by middleware before us (Hono's `c.req.json()` on the raw request …): reading again would throw "Body is unusable".
    if (request.bodyUsed) return { status: 400, reason: 'The request body was already read before this handler (by middleware or a body parser). Pass the handler a request whose body is unread, e.g. request.clone() taken before reading it.' };
    let body: Uint8Array | undefined;
    try {
      body = await readBounded(request, maxBodyBytes);
    } catch (error) {
      return { status: 400, reason: `The request body could not be read: ${errorMessage(error, 'no reason given')}.` };
    }
    if (body === undefined) return tooLarge(maxBodyBytes);
    return parseBody(body);
  };
  /** With `context`, what it makes of the request, or the refusal when it throws. */
  const contextOf = async (request: Request, report: Served['report']): Promise<{ context: Context | undefined } | Refusal> => {
    if (options.context === undefined) return { context: undefined };
    try {
      return { context: await options.context(request) };
    } catch (error) {
      return hookRefusal(error, errorMessages, report);
    }
  };
  const answer = async (request: Request): Promise<Response> => {
    // The request's signal stops the run (or, with a broker, this reader) and drops what waits for it.
    const stream = { heartbeatMs: options.heartbeatMs, coalesce: options.coalesce, accept: request.headers.get('accept') ?? undefined, maxBufferedBytes, stallTimeoutMs, signal: request.signal };
    const report = reporterOf(options as AguiHandlerOptions<any, any>, request);
    if (broker === undefined) {
      if (request.method !== 'POST') return refuse({ status: 405, allow: 'POST', reason: `${request.method} is not supported here: POST a RunAgentInput (the AG-UI HTTP binding).` });
      if (refusesEveryStreamType(stream.accept)) return refuse(notAcceptable);
      const wrongType = typeRefusalOf(request);
      if (wrongType !== undefined) return refuse(wrongType);
      const made = await contextOf(request, report);
      if ('status' in made) return refuse(made);
      const parsed = await readInput(request);
      if ('status' in parsed) return refuse(parsed);
      const checked = await checkState(parsed, options.stateSchema);
      if (checked.refusal !== undefined) return refuse(checked.refusal);
      // An iterable agent is pulled no faster than the response stream is read.
      const demand = createDemandGate();
      const input = checked.input;
      const run = reportedRun(runSetup, input, 'run');
      const served = { request, context: made.context, report };
      return toSSEResponse(runEvents(agent, input, runSetup, served, undefined, demand.ready), copyWith(stream, { demand, onFailure: (error: unknown) => report(error, run) }));
    }
    let pathname: string;
    try {
      pathname = new URL(request.url).pathname;
    } catch {
      pathname = request.url;
    }
    const route = matchBrokerRoute(request.method, pathname, basePath);
    if (streams(route.kind) && refusesEveryStreamType(stream.accept)) return refuse(notAcceptable);
    if (route.kind === 'refused') return refuse(route);
    // Every POST route (run, connect, stop) changes state, with a body or without.
    const wrongType = route.kind === 'events' ? undefined : typeRefusalOf(request);
    if (wrongType !== undefined) return refuse(wrongType);
    const made = await contextOf(request, report);
    if ('status' in made) return refuse(made);
    const access = { request, context: made.context };
    const served = { request, context: made.context, report };
    const lastEventId = lastEventIdOf(request.headers.get('last-event-id'));
    const serve = async (frames: Promise<Observable<BrokerFrame>>, run: Partial<RunErrorReport>) => {
      try {
        return toBrokerFramesResponse(reportedFrames(await frames, report, run), copyWith(stream, { onFailure: (error: unknown) => report(error, run) }));
      } catch (error) {
        return refuse(brokerRefusal(error, errorMessages, report));
      }
    };
    switch (route.kind) {
      case 'events':
        return serve(broker.events(route.threadId, route.runId, lastEventId, access), route);
      case 'stop':
        let status: RunStopStatus | void;
        try {
          status = await broker.stop(route.threadId, route.runId, access);
        } catch (error) {
          return refuse(brokerRefusal(error, errorMessages, report));
        }
        return new Response(stopAnswer(route.threadId, route.runId, status), { status: 202, headers: { 'Content-Type': 'application/json' } });
      case 'connect':
      case 'run': {
        const parsed = await readInput(request);
        if ('status' in parsed) return refuse(parsed);
        if (route.kind === 'connect') return serve(broker.connect(parsed, access), reportedRun(runSetup, parsed, 'thread'));
        const checked = await checkState(parsed, options.stateSchema);
        if (checked.refusal !== undefined) return refuse(checked.refusal);
        const input = checked.input;
        return serve(runThroughBroker(broker, input, (cancel) => runEvents(agent, input, runSetup, served, cancel), access, lastEventId), reportedRun(runSetup, input, 'run'));
      }
    }
  };
  return async (request) => {
    if (cors === undefined) return answer(request);
    // CORS first: a preflight carries no credentials, and every answer (a refusal too) needs the headers for the browser to read it.
    const { headers, preflight } = await cors(request.method, (name) => request.headers.get(name) ?? undefined);
    const response = request.method === 'OPTIONS' ? new Response(null, { status: 204, headers: preflight ? {} : { Allow: `${methods}, OPTIONS` } }) : await answer(request);
    for (const [name, value] of Object.entries(headers)) response.headers.set(name, value);
    return response;
  };
}

/** {@link contentTypeRefusal} of a Web request's headers. */
const typeRefusalOf = (request: Request) =>
  contentTypeRefusal(request.headers.get('content-type') ?? undefined, request.headers.get('origin') ?? undefined, request.headers.get('content-encoding') ?? undefined);

/** The body of a request, or undefined once it passes `maxBytes` (reading stops there). */
async function readBounded(request: Request, maxBytes: number): Promise<Uint8Array | undefined> {
  if (request.body === null) return new Uint8Array(0);
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let received = 0;
  // A client that goes away while sending: stop waiting for the rest of its body.
  const onAbort = () => void reader.cancel().catch(() => undefined);
  request.signal?.addEventListener('abort', onAbort);
  try {
    if (request.signal?.aborted) throw new Error('the client went away before sending it');
    for (;;) {
      const { done, value } = await reader.read();
      if (request.signal?.aborted) throw new Error('the client went away while sending it');
      if (done) break;
      received += value.byteLength;
      if (received > maxBytes) {
        await reader.cancel();
        return undefined;
      }
      chunks.push(value);
    }
  } finally {
    request.signal?.removeEventListener('abort', onAbort);
  }
  // No Buffer: Web runtimes may not have it.
  const bytes = new Uint8Array(received);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return bytes;
}
