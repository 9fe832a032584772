import {
  EventType,
  aggregateTokenUsage,
  type Event,
  type RunAgentInput,
  type RunErrorEvent,
  type RunFinishedEvent,
  type RunFinishedOutcome,
  type RunStartedEvent,
  type TokenUsage,
} from '@ag-ui/core';
import { RunAgentInputSchema, TokenUsageSchema } from '@ag-ui/core/schemas';
import { checkedInput, type CheckedInputOption } from '../protocol/checkedInput.js';
import { hintForUnknownType, isAgentEventType } from '../protocol/agentEvent.js';
import type { AguiDiagnostic } from '../protocol/diagnostics.js';
import { AguiRxError, describeValue } from '../protocol/errors.js';
import { withPendingToolCalls } from '../protocol/pendingToolCalls.js';
import { assertAgentEventFields, assertWireEvent, describeIssue, isPlainTextStartOrEnd } from '../protocol/validate.js';
import { trackOpenEntities, type OpenEntities } from './openEntities.js';
import { keepShapes, recordType } from '../protocol/recordType.js';
import { copyWith, copyWithout } from '../protocol/values.js';

/** Any event, read field by field. */
type Fields = Record<string, unknown>;

/** The run a {@link RunLifecycle} wraps events in (the options of `mapRunLifecycle`, checked already). */
export interface RunIdentity {
  /** The thread and run ids, sent on RUN_STARTED and RUN_FINISHED whatever upstream says. */
  threadId: string;
  runId: string;
  /** The run this one continues, if any; else upstream's RUN_STARTED `parentRunId` is kept. */
  parentRunId?: string | undefined;
  /** The run's input; else upstream's RUN_STARTED `input` is kept. */
  input?: RunAgentInput | undefined;
  /** Whether RUN_ERROR carries the failing error's stack trace as `metadata: { stack }`. Default: false. */
  exposeErrorStack?: boolean | undefined;
}

/**
 * The run's identity from `mapRunLifecycle`'s options, checked: what every RUN_STARTED and
 * RUN_FINISHED of the run carries.
 *
 * @throws {AguiRxError} `INVALID_OPTIONS` when `threadId` or `runId` is not a non-empty string,
 * `parentRunId` is not a string, or `input` is not a valid `RunAgentInput` (AG-UI's
 * `RunAgentInputSchema`; not checked again when a handler marked it as checked, `checkedInput`).
 */
export function runIdentityOf(options: RunIdentity & CheckedInputOption): RunIdentity & { exposeErrorStack: boolean } {
  const { threadId, runId, parentRunId, input } = options ?? ({} as RunIdentity);
  for (const [name, value] of [['threadId', threadId], ['runId', runId]] as const) {
    if (typeof value !== 'string' || value === '') {
      throw new AguiRxError('INVALID_OPTIONS', `The run needs a non-empty string '${name}' option (got ${describeValue(value)}). Pass the ids of the run, e.g. { threadId: input.threadId, runId: input.runId } from RunAgentInput.`);
    }
  }
  if (parentRunId !== undefined && typeof parentRunId !== 'string') {
    throw new AguiRxError('INVALID_OPTIONS', `mapRunLifecycle 'parentRunId' must be a string (got ${describeValue(parentRunId)}). Omit it when this run continues no other run.`);
  }
  if (input !== undefined && options[checkedInput] !== input) {
    const result = RunAgentInputSchema.safeParse(input);
    if (!result.success) {
      throw new AguiRxError('INVALID_OPTIONS', `mapRunLifecycle 'input' is not a valid RunAgentInput: ${describeIssue(result.error)}. Pass the RunAgentInput the client posted, or omit it.`);
    }
  }
  return { threadId, runId, parentRunId, input, exposeErrorStack: Boolean(options?.exposeErrorStack) };
}

/** What it takes to end the run with a terminal event (see {@link RunLifecycle.end}). */
export interface RunEnding {
  /** The closing events of what is still open, innermost first: sent before the terminal event. */
  closers: Event[];
  /** Set when the usage was left out of the terminal event: to be reported. */
  diagnostic?: AguiDiagnostic | undefined;
}

/** The state of one run and the decisions that keep it one well-formed AG-UI run. Call its functions as methods: they are shared, and read the record they are called on. */
export interface RunLifecycle {
  /** Whether RUN_STARTED was made, and whether the terminal event was (nothing is sent after it). */
  readonly started: boolean;
  readonly ended: boolean;
  /**
   * This run's RUN_STARTED, merged with upstream's own when given (its fields kept; the ids, and
   * `parentRunId` / `input` when the run has them, are this run's), and marks the run started.
   * @throws {AguiRxError} `INVALID_EVENT` when the merged event is not valid AG-UI (the run is not started then).
   */
  start(upstream?: Fields): RunStartedEvent;
  /**
   * Whether an upstream event (not per-token, not terminal, not TOKEN_USAGE) passes once the run
   * has started: `undefined` when it is sent (and recorded as open or closed), else the message of
   * the diagnostic it is dropped with (a late RUN_STARTED, a step finished twice, an unknown type).
   * @throws {AguiRxError} `INVALID_EVENT` for bad fields, or a fatal sequence problem.
   */
  admit(fields: Fields, type: string): string | undefined;
  /**
   * Records a TOKEN_USAGE event's `usage` (one report or a list), for the terminal event's sums.
   * @throws {AguiRxError} `INVALID_EVENT` when a report is not a valid TokenUsage.
   */
  addUsage(reported: unknown): void;
  /**
   * RUN_FINISHED merged with upstream's (its `result`, `outcome` kept, its `usage` added to the
   * sums), or `outcome` when given (`cancelled`); a success outcome lists the pending tool calls.
   * @throws {AguiRxError} `INVALID_EVENT` when upstream's fields or outcome are not valid.
   */
  finished(upstream?: Fields, outcome?: RunFinishedOutcome): RunFinishedEvent;
  /**
   * Upstream's RUN_ERROR, validated, its `usage` added to the sums, an empty message given one.
   * @throws {AguiRxError} `INVALID_EVENT` when it is not valid AG-UI.
   */
  upstreamError(fields: Fields): RunErrorEvent;
  /** RUN_ERROR for an error upstream threw or signalled (see {@link runErrorOf}). */
  failed(error: unknown): RunErrorEvent;
  /**
   * Ends the run with `terminal`: marks it ended, closes what is open (subagents with
   * SUBAGENT_ERROR when it is RUN_ERROR) and sets `terminal.usage` to the sums of the run's usage.
   */
  end(terminal: RunFinishedEvent | RunErrorEvent): RunEnding;
}

/** The message of an upstream RUN_ERROR sent without one (or with an empty one). */
export const noMessage = 'The agent reported an error without a message.';

const lateRunStarted =
  'Dropped an upstream RUN_STARTED that came after the run had started. Pass parentRunId and input as options of mapRunLifecycle (or toAgui), or emit RUN_STARTED as the agent\'s first, synchronous event.';

/**
 * Tracks one AG-UI run: whether it started and ended, what is open, and the usage reported, and
 * makes its RUN_STARTED and terminal event. Pure bookkeeping, no RxJS; one per subscription.
 *
 * The rules it keeps (AG-UI's): one RUN_STARTED first, one terminal event last, everything open
 * closed before it, the terminal event carrying this run's ids.
 */
export function trackRunLifecycle(run: RunIdentity): RunLifecycle {
  // Its methods on a shared prototype (`lifecycleMethods`): a record holds only its fields.
  const lifecycle = new LifecycleRecord();
  lifecycle.started = false;
  lifecycle.ended = false;
  lifecycle.run = run;
  lifecycle.open = trackOpenEntities();
  lifecycle.usage = undefined;
  return LifecycleRecord.shaped(lifecycle);
}

/**
 * One run's state; the methods are the shared functions below (no closures per run). Plain data
 * properties, not getters: `ended` is read on every event.
 */
interface Lifecycle extends RunLifecycle {
  started: boolean;
  ended: boolean;
  /** The run's identity; its `input` only until RUN_STARTED has echoed it. */
  run: RunIdentity;
  /** What is open on the output, so that the run can always end cleanly. */
  readonly open: OpenEntities;
  /** Usage reported during the run, upstream's terminal event's first; made at the first report (most runs have none). */
  usage: TokenUsage[] | undefined;
}

// The events and answers a run makes once, one of each kept (see keepShapes): made as the functions
// below make them, so that theirs are the same hidden classes.
const finishedFields = { type: EventType.RUN_FINISHED, threadId: '', runId: '' };
const finishedEvent = copyWith(undefined, finishedFields) as Fields;
finishedEvent.outcome = undefined;
keepShapes(
  { type: EventType.RUN_STARTED, threadId: '', runId: '', protocolVersion: '1.0' },
  finishedFields,
  finishedEvent,
  { closers: [] },
  { closers: [], diagnostic: undefined },
);

function start(this: Lifecycle, upstream?: Fields): RunStartedEvent {
  const { threadId, runId, parentRunId, input } = this.run;
  const event: RunStartedEvent = { type: EventType.RUN_STARTED, threadId, runId, protocolVersion: '1.0' };
  // Upstream's other fields (its metadata, its parentRunId and input unless the run has its own)
  // added one by one rather than spread: a spread of objects of many shapes makes a new hidden
  // class for each event, which every open run then holds.
  if (upstream !== undefined) {
    const own = Object.prototype.hasOwnProperty;
    // `__proto__` would set the prototype, not a field: it is no AG-UI field, and is left out.
    for (const key in upstream) {
      if (key !== '__proto__' && !(key === 'input' && input !== undefined) && !own.call(event, key) && own.call(upstream, key)) (event as unknown as Fields)[key] = upstream[key];
    }
  }
  if (parentRunId !== undefined) event.parentRunId = parentRunId;
  // Upstream's input is checked with the event; the run's was checked when the operator was made, and is set after.
  assertWireEvent(event as unknown as Fields);
  if (input !== undefined) {
    event.input = input;
    // Echoed: nothing reads it again (a late RUN_STARTED is dropped), and an open run would hold the
    // client's whole history until it ends. This run's own identity, without it.
    this.run = { threadId, runId, parentRunId, input: undefined, exposeErrorStack: this.run.exposeErrorStack };
  }
  // Set only once valid: an invalid upstream RUN_STARTED still gets our own RUN_STARTED before the RUN_ERROR.
  this.started = true;
  this.open.observe(event);
  return event;
}

function admit(this: Lifecycle, fields: Fields, type: string): string | undefined {
  // A message's plain START or END, with the contents most of a text stream: valid as it is, and no step or subagent rule applies.
  if (isPlainTextStartOrEnd(type, fields)) {
    this.open.observe(fields as unknown as Event);
    return undefined;
  }
  // Ours went out at subscription: a RUN_STARTED that comes later can no longer be merged.
  if (type === EventType.RUN_STARTED) return lateRunStarted;
  // AG-UI spec 1.1, Processing Model: an event of a type the protocol does not describe MUST NOT abort the run; it is dropped, with a warning.
  if (!isAgentEventType(type)) {
    return `Dropped an event of unknown type '${type}': AG-UI 1.0 does not describe it, and a consumer drops it. Emit one of the AG-UI 1.0 event types (EventType from @ag-ui/core), or wrap provider data in a RAW or CUSTOM event.${hintForUnknownType(type)}`;
  }
  // Relaxed fields pass: an operator after this one may still fill them in.
  assertAgentEventFields(fields);
  const event = fields as unknown as Event;
  const problem = this.open.sequenceProblem(event);
  if (problem?.fatal) throw new AguiRxError('INVALID_EVENT', problem.message);
  if (problem) return problem.message;
  this.open.observe(event);
  return undefined;
}

function addUsage(this: Lifecycle, reported: unknown): void {
  (this.usage ??= []).push(...usageReports(reported));
}

function finished(this: Lifecycle, upstream?: Fields, outcome?: RunFinishedOutcome): RunFinishedEvent {
  const { threadId, runId } = this.run;
  // Validated before it is taken apart: a null outcome or a bad usage entry is INVALID_EVENT, not a TypeError or a hang.
  // Copied (see copyWith), and copied again without its usage only when it has one: an agent's
  // RUN_FINISHED rarely has our ids, and a spread given new fields, or a `delete`, leaves each event a hidden class of its own.
  const checked = assertWireEvent(copyWith(upstream, { type: EventType.RUN_FINISHED, threadId, runId })) as RunFinishedEvent;
  let event = checked;
  if (checked.usage !== undefined) {
    (this.usage ??= []).unshift(...checked.usage);
    event = copyWithout(checked, ['usage']) as RunFinishedEvent;
  }
  event.outcome = outcome ?? withPendingToolCalls(event.outcome, this.open.pendingToolCallIds());
  return event;
}

function upstreamError(this: Lifecycle, fields: Fields): RunErrorEvent {
  // Validated whole first, so that a bad `usage` is reported rather than dropped. Some servers
  // (ag2, google-adk) leave `message` out: read as an empty one, which gets the wording below.
  const { usage: reported, ...event } = assertWireEvent(fields.message === undefined ? copyWith(fields, { message: '' }) : fields) as RunErrorEvent;
  if (reported !== undefined) (this.usage ??= []).unshift(...reported);
  if (event.message.trim() === '') event.message = noMessage;
  return event;
}

function failed(this: Lifecycle, error: unknown): RunErrorEvent {
  return runErrorOf(error, this.run.exposeErrorStack === true);
}

function end(this: Lifecycle, terminal: RunFinishedEvent | RunErrorEvent): RunEnding {
  this.ended = true;
  const closers = this.open.closeAll(terminal.type === EventType.RUN_ERROR ? { type: 'error', message: terminal.message } : { type: 'finished' });
  const usage = this.usage;
  if (usage === undefined || usage.length === 0) return { closers };
  const sums = sumTokenUsage(usage);
  if (sums !== undefined) {
    (terminal as { usage?: TokenUsage[] }).usage = sums;
    return { closers };
  }
  // Each report was valid, but their sum is not: send none rather than an invalid terminal event.
  const message = `Left out the run's token usage: its sum is past ${Number.MAX_SAFE_INTEGER} tokens, more than AG-UI can carry. Check the counts your agent reports.`;
  return { closers, diagnostic: { message, event: usage } };
}

/**
 * The reports of a TOKEN_USAGE event's `usage`: one TokenUsage object or a list of them, each valid
 * (the sums land on the terminal event: a bad count must fail here, not make RUN_FINISHED invalid).
 * @throws {AguiRxError} `INVALID_EVENT` when a report is not an object or not a valid TokenUsage.
 */
export function usageReports(reported: unknown): TokenUsage[] {
  const entries: unknown[] = Array.isArray(reported) ? reported : [reported];
  for (const entry of entries) {
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) {
      throw new AguiRxError('INVALID_EVENT', `TOKEN_USAGE has 'usage: ${describeValue(entry)}', but usage must be a TokenUsage object (or an array of them), e.g. { inputTokens: 12, outputTokens: 30 }.`);
    }
    const result = TokenUsageSchema.safeParse(entry);
    if (!result.success) {
      throw new AguiRxError('INVALID_EVENT', `TOKEN_USAGE has an invalid usage entry: ${describeIssue(result.error)}. Counts are non-negative integers, e.g. { inputTokens: 12, outputTokens: 30 }.`);
    }
  }
  return entries as TokenUsage[];
}

/**
 * The usage reports summed per (provider, model), in first-seen order, or `undefined` when a sum
 * is no longer a valid TokenUsage (past `Number.MAX_SAFE_INTEGER` tokens).
 */
export function sumTokenUsage(reports: readonly TokenUsage[]): TokenUsage[] | undefined {
  const sums = aggregateTokenUsage([...reports]).map(omitUndefined);
  return sums.every((entry) => TokenUsageSchema.safeParse(entry).success) ? sums : undefined;
}

// aggregateTokenUsage sets `provider`/`model` even when a report had none: omit them rather than send undefined.
const omitUndefined = (entry: TokenUsage): TokenUsage =>
  Object.fromEntries(Object.entries(entry).filter(([, value]) => value !== undefined)) as TokenUsage;

/**
 * The RUN_ERROR for a thrown or signalled error: its `message` (a string error is the message; an
 * empty one is given a message), its `code` when a string or number, and its `stack` as
 * `metadata: { stack }` only when `exposeStack`. Duck-typed: errors from another realm, and plain
 * `{ message, code }` objects, keep their message. A SyntaxError about `"[DONE]"` (an OpenAI
 * stream's end given to `JSON.parse`) also says how to pass it on.
 */
export function runErrorOf(error: unknown, exposeStack: boolean): RunErrorEvent {
  const reported = readField(error, 'message');
  const stated = typeof reported === 'string' ? reported : typeof error === 'string' ? error : `Agent failed with ${describeValue(error)}`;
  const message = stated.includes('"[DONE]"') && isSyntaxError(error) ? `${stated}${/[.!?]$/.test(stated) ? '' : '.'}${DONE_ADVICE}` : stated;
  const code = readField(error, 'code');
  const stack = exposeStack ? readField(error, 'stack') : undefined;
  return {
    type: EventType.RUN_ERROR,
    message: message === '' ? 'The agent failed without an error message.' : message,
    ...(typeof code === 'string' || typeof code === 'number' ? { code: String(code) } : {}),
    ...(typeof stack === 'string' ? { metadata: { stack } } : {}),
  };
}

// JSON.parse('[DONE]') fails with `Unexpected token 'D', "[DONE]" is not valid JSON`: the end of an OpenAI stream parsed as an event.
const DONE_ADVICE =
  " It looks like the `data: [DONE]` that ends an OpenAI Chat Completions stream went to JSON.parse: pass it on as the string, map((message) => (message.data === '[DONE]' ? '[DONE]' : JSON.parse(message.data))), and fromOpenAIChatCompletions() reads it as the stream's end.";

/** {@link runErrorOf} with the stack, as a function of the error alone: shared, so that a run holds no closure of its own for it. */
export const runErrorWithStack = (error: unknown): RunErrorEvent => runErrorOf(error, true);
/** {@link runErrorOf} without the stack, as a function of the error alone (see {@link runErrorWithStack}). */
export const runErrorWithoutStack = (error: unknown): RunErrorEvent => runErrorOf(error, false);

/** Whether a thrown value is a SyntaxError; false when asking throws (a revoked Proxy). */
function isSyntaxError(value: unknown): boolean {
  try {
    return value instanceof SyntaxError;
  } catch {
    return false;
  }
}

/** A field of a thrown value, or undefined when reading it throws (a getter, a revoked Proxy). */
function readField(value: unknown, field: 'message' | 'code' | 'stack'): unknown {
  try {
    return (value as Record<string, unknown> | null | undefined)?.[field];
  } catch {
    return undefined;
  }
}

const lifecycleMethods: Omit<RunLifecycle, 'started' | 'ended'> = Object.freeze({ start, admit, addUsage, finished, upstreamError, failed, end });
const LifecycleRecord = recordType<Lifecycle>(lifecycleMethods);
