import { EventType, type Message } from '@ag-ui/core';
import { describeLane, type Lane } from '../protocol/agentEvent.js';
import { AguiRxError, describeValue } from '../protocol/errors.js';
import { chunkStreamClosers, entityEvents, entityKind, entityKinds, lifecycleRules, stillOpenOrder, tokenKindOf, type EntityEvent, type EntityKind } from '../protocol/table.js';
import { describeStripped, stripUnrecognised, type UnrecognisedMember } from '../protocol/unrecognised.js';
import { assertWireEvent } from '../protocol/validate.js';
import { createConversationIds, describeKnownMessage, type ConversationIds, type MessageStart } from './conversationIds.js';
import { trackStepsAndSubagents, type LifecycleProblem } from './steps.js';

/** Options of {@link createAguiVerifier}. */
export interface AguiVerifierOptions {
  /**
   * The conversation the client holds before each run (RunAgentInput `messages`). Given (`[]` for
   * none), the `id-collision` rule is on: an id a run starts must not name one of its messages or
   * tool calls (nor those of a RUN_STARTED `input` or MESSAGES_SNAPSHOT in the stream), nor a
   * message of another kind in the run. Default: absent, the rule off: ids are checked only as
   * the client checks them (it accepts such collisions, and corrupts its messages with them).
   */
  messages?: readonly Message[] | undefined;
}

/**
 * How bad a finding is. `violation`: the AG-UI specification makes it fatal (a consumer MUST reject
 * the stream). `warning`: the specification tolerates it (a consumer drops or strips it, with a
 * warning), or it is one of this verifier's own stricter checks (a value that is not an event, a
 * run cut off, an empty stream).
 */
export type AguiSeverity = 'violation' | 'warning';

/** One way an AG-UI stream breaks the protocol, or strays from it, as found by {@link createAguiVerifier}. */
export interface AguiViolation {
  /** Position of the offending event in the stream, from 0; for what `end()` finds, the position just past the last event. */
  index: number;
  /** The offending event's `type`; absent for what `end()` finds and for a value that is not an event. */
  type?: string | undefined;
  /** Short, stable name of the rule broken, e.g. `content-without-start` (see {@link createAguiVerifier}). */
  rule: string;
  /** Whether the specification makes it fatal (`violation`) or tolerates it (`warning`); see {@link aguiRuleSeverity}. */
  severity: AguiSeverity;
  /** What is wrong, why, and what to do about it. */
  message: string;
}

/**
 * The rules that are warnings, each with the AG-UI specification page (1.1) that says a consumer
 * survives it; every other rule is a violation.
 */
const warningRules: ReadonlyMap<string, string> = new Map([
  // Processing Model: an event of an unrecognised type MUST NOT abort the run; it is dropped, with a warning.
  ['unknown-type', 'Processing Model'],
  // Runs and Steps: an unrecognised outcome is stripped (absent means success).
  ['unknown-outcome', 'Runs and Steps'],
  // Processing Model: an unrecognised element of a list (a content part) is dropped, the list kept.
  ['unknown-content-part', 'Processing Model'],
  // Snapshots and Deltas: an operation of an op RFC 6902 does not define is dropped, the others apply.
  ['unknown-patch-op', 'Snapshots and Deltas'],
  // Our own stricter checks. Processing Model: a frame that maps to no event is the reader's decode failure.
  ['not-an-event', 'Processing Model'],
  // Transports, truncation: a run whose ending never arrived is truncated, not malformed.
  ['no-terminal-event', 'Runs and Steps'],
  ['open-at-end', 'Runs and Steps'],
  ['no-run', 'Runs and Steps'],
]);

/** The severity of a rule of {@link createAguiVerifier}: `warning` for what the specification tolerates and our own stricter checks, else `violation`. */
export function aguiRuleSeverity(rule: string): AguiSeverity {
  return warningRules.has(rule) ? 'warning' : 'violation';
}

/** The checker {@link createAguiVerifier} returns: feed it every event in order, then call `end()` once. */
export interface AguiVerifier {
  /**
   * Checks the event at `index` (the caller's count, from 0); returns what it breaks, an empty
   * array when nothing (one shared, frozen array: copy it before adding to it).
   */
  verify(event: unknown, index: number): readonly AguiViolation[];
  /** What the end of the stream leaves wrong: a run still going, entities still open, or no run at all. */
  end(): AguiViolation[];
}

// Owners are kept per id space: a reasoning span and its message share one, as the client does.
type OwnerSpace = 'message' | 'toolCall' | 'reasoning' | 'activity';

// What each message kind's start creates in the client's message list.
const messageStarts: ReadonlyMap<EntityKind, MessageStart> = new Map([
  [entityKind.textMessage, 'text'],
  [entityKind.reasoningMessage, 'reasoning'],
  [entityKind.reasoning, 'reasoning'],
]);
const collisionAdvice = 'The client finds messages and tool calls by id and would change the one it holds: give every message and tool call a run starts an id of its own.';

// What a turn holds (text and reasoning messages, reasoning spans, tool calls): opened, continued and closed by id.
const turnKinds: readonly EntityKind[] = entityKinds.filter((kind) => kind.inTurn);
// What each of their start, content and end events does to its entity.
const turnEvents = new Map([...entityEvents].filter(([, entry]) => entry.kind.inTurn && entry.role !== 'chunk')) as ReadonlyMap<string, EntityEvent & { role: 'start' | 'content' | 'end' }>;
// The chunk shorthands, by the kind they stream.
const chunkKinds: ReadonlyMap<string, EntityKind> = new Map([...entityEvents].filter(([, entry]) => entry.role === 'chunk').map(([type, entry]) => [type, entry.kind]));

const knownTypes: ReadonlySet<string> = new Set<string>([...Object.values(EventType), ...entityEvents.keys()]);

/** A message, tool call or reasoning message being assembled from chunks in one lane. */
interface ChunkStream {
  kind: EntityKind;
  id: string;
  role?: string;
  name?: string;
  toolCallName?: string;
  parentMessageId?: string;
}

/** Everything one run tracks; a new RUN_STARTED after a terminal event starts from a fresh one. */
function newRunState() {
  return {
    // Open entities of each kind a turn holds: id -> index of the event that opened it.
    open: new Map<EntityKind, Map<string, number>>(turnKinds.map((kind) => [kind, new Map()])),
    // Who opened each id in the run (undefined = the parent agent); kept after the close, as a reopen must agree too.
    owners: { message: new Map<string, Lane>(), toolCall: new Map<string, Lane>(), reasoning: new Map<string, Lane>(), activity: new Map<string, Lane>() },
    // Running steps and subagents, and the subagent ids that have ended (never reused in a run).
    lifecycles: trackStepsAndSubagents(),
    // The chunk stream each lane is assembling.
    lanes: new Map<Lane, ChunkStream>(),
  };
}

type RunState = ReturnType<typeof newRunState>;

const str = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

// What verify() returns for a valid event: one array, not a new one per event.
const none: readonly AguiViolation[] = Object.freeze([]);
const quote = (value: unknown): string => (typeof value === 'string' ? `'${value}'` : describeValue(value));

/**
 * One verifier's state, in a record that the module-level functions below take rather than in
 * closures made per verifier: a closure's optimized code lives only as long as the closure, so
 * each verifier made after a garbage collection would check its first ~100k events in
 * unoptimized code (several times slower); these functions stay optimized for the life of the
 * module. The record is made by {@link createAguiVerifier} and reached only through the verifier
 * it returns: one per stream, as before.
 */
interface VerifierState {
  /** The history (when given, the id-collision rule is on). */
  readonly history: readonly Message[] | undefined;
  /** Every message and tool call id the client holds in the run. */
  conversation: ConversationIds;
  /** Where the stream is: nothing yet, in a run, or after the run's terminal event. */
  phase: 'idle' | 'running' | 'finished' | 'errored';
  /** The run being checked (its id, if its RUN_STARTED gave one, and where it started), and where it ended. */
  runId: string | undefined;
  runStartedAt: number;
  endedAt: number;
  /** Whether an event after the terminal one was reported (once per ended run). */
  strayReported: boolean;
  /** What the current run has open, and who owns which id. */
  run: RunState;
  /** The violations of the event being checked (`none` until one is found), and its index and type. */
  out: readonly AguiViolation[];
  at: number;
  type: string;
  /** The lane a chunk stream of `kind` named `id` is in, found by laneHolding(). */
  heldBy: Lane;
  /** What the run has open, when a plain token may pass on it alone (in a run, no chunk stream pending); else undefined. */
  open: ReadonlyMap<EntityKind, ReadonlyMap<string, number>> | undefined;
  /** The entity the last plain token continued: the next token for it needs no lookup. */
  lastKind: EntityKind | undefined;
  lastId: string | undefined;
  /** One past the highest index seen: where `end()` reports. */
  nextIndex: number;
}

/** What `verify` returns for an event that cannot be read (a getter that throws, a revoked Proxy): a warning, not a crash. */
const unreadable = (index: number, error: unknown): AguiViolation[] => [
  { index, rule: 'not-an-event', severity: 'warning', message: `The event could not be read: ${(error as Error)?.message ?? String(error)}. Send plain data objects.` },
];

/** `verify` of a verifier: the per-token fast path, else the general path. */
function verifyThrough(v: VerifierState, event: unknown, index: number): readonly AguiViolation[] {
  if (index >= v.nextIndex) v.nextIndex = index + 1;
  try {
    if (isPlainToken(v, event)) return none;
    // What is open may change: the fast path waits until the event is checked.
    v.open = undefined;
    v.lastKind = undefined;
    try {
      return verifyEvent(v, event, index);
    } finally {
      v.open = v.phase === 'running' && v.run.lanes.size === 0 ? v.run.open : undefined;
    }
  } catch (error) {
    // A getter that throws, a revoked Proxy: the event cannot be read, which is a violation, not a crash.
    return unreadable(index, error);
  }
}

/**
 * The common case of a per-token event, checked without the general path: CONTENT / ARGS with
 * string id and delta, no optional fields, for an entity the run has open, and no chunk stream
 * pending. Anything else returns false and takes the general path. It reads the event by name
 * and changes nothing but the last token it remembers.
 */
function isPlainToken(v: VerifierState, event: unknown): boolean {
  if (typeof event !== 'object' || event === null || Array.isArray(event)) return false;
  const fields = event as Record<string, unknown>;
  const kind = tokenKindOf(fields.type);
  if (kind === undefined) return false;
  // Read by name: a read through a variable key is slow.
  const id = kind.idField === 'toolCallId' ? fields.toolCallId : fields.messageId;
  if (
    typeof id !== 'string' ||
    typeof fields.delta !== 'string' ||
    fields.subagentRunId !== undefined ||
    fields.timestamp !== undefined ||
    fields.metadata !== undefined ||
    fields.rawEvent !== undefined
  ) {
    return false;
  }
  if (kind === v.lastKind && id === v.lastId) return true;
  if (v.open === undefined || !v.open.get(kind)!.has(id)) return false;
  v.lastKind = kind;
  v.lastId = id;
  return true;
}

/**
 * Creates a checker for one AG-UI event stream: each event is checked against the `@ag-ui/core`
 * schema and against the protocol's sequence rules (the rules `@ag-ui/client`'s `verifyEvents`
 * enforces), and every violation is reported with the event's index and a stable rule name.
 *
 * Unlike the client, which fails the run at the first problem, the checker reports and goes on:
 * an offending event is treated as if it had not been sent, so one mistake is reported once
 * rather than again at every later event. State lives in the returned closure (Maps and Sets,
 * no per-event schema parse for the per-token events), so a checker serves one stream: an
 * operator creates one per subscription, calls `verify` for each event and `end` on completion.
 *
 * Each finding has a `severity`, after the AG-UI specification's processing rules (1.1, "Processing
 * Model": unrecognised material is not an error, a malformed known value is): `violation` for what
 * a consumer MUST reject, `warning` for what it drops or strips with a warning, and for our own
 * stricter checks (marked *warning* below). A checked event that had unrecognised members stripped
 * is checked further as the consumer sees it, without them.
 *
 * Rules (`rule` names):
 * 1. `invalid-event`: the event fails the `@ag-ui/core/schemas` validator (the message names the
 *    field; `null` is never valid for an optional field): a malformed known value is fatal
 *    (Processing Model). *Warnings*: `not-an-event`, a value that is not an object with a string
 *    `type` (a reader's decode failure); `unknown-type`, a type that is not an AG-UI 1.0 event type
 *    (Processing Model: dropped with a warning, the run goes on); `unknown-outcome`, a RUN_FINISHED
 *    or SUBAGENT_FINISHED `outcome` of an unknown `type` (Runs and Steps: stripped, an absent outcome
 *    means success); `unknown-content-part`, a content part (or a media part's `source`) of an
 *    unknown `type` in a message of a MESSAGES_SNAPSHOT or RUN_STARTED `input`, or in a
 *    TOOL_CALL_RESULT (Processing Model: the list element is dropped, the message kept);
 *    `unknown-patch-op`, a STATE_DELTA or ACTIVITY_DELTA operation whose `op` RFC 6902 does not
 *    define (Snapshots and Deltas: dropped from the patch, the others apply).
 * 2. `first-event`: the stream starts with something other than RUN_STARTED (or RUN_ERROR); the
 *    rest is checked as if RUN_STARTED had been sent.
 * 3. `run-already-started`: RUN_STARTED while a run is going. `event-after-run-finished` /
 *    `event-after-run-error`: anything but a new RUN_STARTED after the run ended (RUN_ERROR may
 *    still follow RUN_FINISHED); reported for the first such event, the rest until the next
 *    RUN_STARTED only get their schema checked.
 * 4. `duplicate-start`: TEXT_MESSAGE_START, TOOL_CALL_START, REASONING_START or
 *    REASONING_MESSAGE_START (or a chunk that opens one) for an id already open.
 *    `content-without-start` / `end-without-start`: TEXT_MESSAGE_CONTENT/END, TOOL_CALL_ARGS/END,
 *    REASONING_MESSAGE_CONTENT/END or REASONING_END for an id not open.
 * 5. `duplicate-step`, `step-not-started`, `step-owner-mismatch`: STEP_STARTED for a running step,
 *    STEP_FINISHED for none, or for one running in another lane (a lane is a `subagentRunId`).
 * 6. `subagent-already-active`, `subagent-id-reused`, `subagent-parent-unknown`,
 *    `subagent-not-active`: a SUBAGENT_STARTED id is one invocation, its parent must have
 *    started, and SUBAGENT_FINISHED/ERROR end a running subagent once. Rules 5 and 6 are the
 *    protocol table's `lifecycleRules`, in its wording, which the operators give too.
 * 7. `subagent-mismatch`: an event that continues, closes or reopens an entity names a
 *    `subagentRunId` other than its opener's (no tag is always fine). `parent-message-mismatch`:
 *    a tool call's lane disagrees with its `parentMessageId` message's.
 * 8. `chunk-without-id`, `chunk-without-name`, `chunk-mismatch`, `ambiguous-chunk`: the chunk
 *    shorthands as the client expands them (the first chunk names its id, and a tool's name; a
 *    later chunk repeats opener fields unchanged; an untagged chunk must have one stream to continue).
 * 9. `open-at-run-finished`: RUN_FINISHED while steps, text or reasoning messages, reasoning spans,
 *    tool calls or subagents are still open (the run still ends there).
 * 10. From `end()`, *warnings*: `no-terminal-event` and `open-at-end` when the stream stops mid-run
 *    (a truncated run: Runs and Steps, a consumer must not make up its ending), `no-run` when it
 *    holds no run at all.
 * 11. `id-collision` (only when `options.messages` is given): a start (TEXT_MESSAGE_START, REASONING_START, REASONING_MESSAGE_START,
 *    TOOL_CALL_START or a chunk that opens one, a TOOL_CALL_RESULT's `messageId`, an activity's
 *    first ACTIVITY_SNAPSHOT) under an id that names a message or tool call of the history
 *    (`options.messages`, a RUN_STARTED `input`, a MESSAGES_SNAPSHOT) or a message of another kind in the run; a tool call whose `parentMessageId` names a
 *    history message. Not collisions: a snapshot of an activity of the same `activityType`, a
 *    TOOL_CALL_RESULT answering a history call, text in the assistant message its tool calls created.
 *
 * The run's `runId` on RUN_FINISHED is not compared with RUN_STARTED's, as the client does not. A
 * well-formed STATE_DELTA that does not apply to the state is not reported: the checker keeps no
 * state, and the specification has the consumer warn and keep its state (Snapshots and Deltas).
 *
 * ## Example
 *
 * ```ts
 * const verifier = createAguiVerifier();
 * const events = [
 *   { type: 'RUN_STARTED', threadId: 't1', runId: 'r1' },
 *   { type: 'TEXT_MESSAGE_CONTENT', messageId: 'm1', delta: 'Hi' },
 *   { type: 'RUN_FINISHED', threadId: 't1', runId: 'r1' },
 * ];
 * const violations = [...events.flatMap((event, index) => verifier.verify(event, index)), ...verifier.end()];
 * console.log(violations.map((violation) => `#${violation.index} ${violation.rule}`));
 * // results: [ '#1 content-without-start' ]
 * ```
 *
 * @param options The conversation before the stream, for `id-collision`.
 * @return A fresh {@link AguiVerifier}, with no run seen yet.
 */
export function createAguiVerifier(options: AguiVerifierOptions = {}): AguiVerifier {
  const history = options?.messages;
  const v: VerifierState = {
    history,
    conversation: createConversationIds(history),
    phase: 'idle',
    runId: undefined,
    runStartedAt: 0,
    endedAt: 0,
    strayReported: false,
    run: newRunState(),
    out: none,
    at: 0,
    type: '',
    heldBy: undefined,
    open: undefined,
    lastKind: undefined,
    lastId: undefined,
    nextIndex: 0,
  };
  return {
    verify: (event, index) => verifyThrough(v, event, index),
    end: () => endOf(v),
  };
}

// The checks of the general path, on one verifier's state (see VerifierState for why not closures).

/** Records a finding of the event being checked. */
function report(v: VerifierState, rule: string, message: string) {
  if (v.out === none) v.out = [];
  (v.out as AguiViolation[]).push({ index: v.at, type: v.type, rule, severity: aguiRuleSeverity(rule), message });
}

function reportLifecycle(v: VerifierState, { rule, facts }: LifecycleProblem) {
  report(v, rule, lifecycleRules[rule].message(facts));
}

/** Reports (and returns true for) a tag that is not the owner of the entity it names. */
function ownerMismatch(v: VerifierState, space: OwnerSpace, id: string, tag: Lane, noun: string): boolean {
  const owners = v.run.owners[space];
  if (tag === undefined || !owners.has(id)) return false;
  const owner = owners.get(id);
  if (owner === tag) return false;
  report(v, 'subagent-mismatch', `${v.type} for ${noun} '${id}' has subagentRunId '${tag}', but the ${noun} belongs to ${describeLane(owner)}. Tag every event of an entity with the subagentRunId it was opened with, or leave the tag out.`);
  return true;
}

/** Reports a message start whose id names what the client holds (see `id-collision`), and records it. */
function checkMessageStart(v: VerifierState, id: string, start: MessageStart, role: string, activityType?: string) {
  if (v.history === undefined) return;
  const collision = v.conversation.messageCollision(id, start, activityType);
  if (collision !== undefined) report(v, 'id-collision', `${v.type} starts a message under id '${id}', which names ${collision}. ${collisionAdvice}`);
  if (collision !== undefined || v.conversation.message(id)?.history !== false) v.conversation.addMessage(id, start, role, activityType);
}

/** The same for a tool call: its id, its parent, and the message the client names after it when it has no assistant parent. */
function checkCallStart(v: VerifierState, id: string, parentMessageId: string | undefined) {
  if (v.history === undefined) return;
  let namedAfterCall = parentMessageId === undefined;
  if (parentMessageId !== undefined) {
    const parent = v.conversation.message(parentMessageId);
    if (parent === undefined) v.conversation.addMessage(parentMessageId, 'toolCallMessage', 'assistant');
    else if (parent.history) report(v, 'id-collision', `${v.type} for tool call '${id}' names parentMessageId '${parentMessageId}', which is ${describeKnownMessage(parent)}: the client would add the call to it. ${collisionAdvice}`);
    else namedAfterCall = parent.role !== 'assistant';
  }
  if (v.conversation.isRunCall(id)) return;
  const known = namedAfterCall ? v.conversation.message(id) : undefined;
  if (v.conversation.isHistoryCall(id)) report(v, 'id-collision', `${v.type} starts a tool call under id '${id}', which names a tool call of the conversation history. ${collisionAdvice}`);
  else if (known !== undefined) report(v, 'id-collision', `${v.type} starts a tool call under id '${id}' without an assistant parentMessageId, so the client names its message '${id}', which names ${describeKnownMessage(known)}. ${collisionAdvice}`);
  v.conversation.addCall(id);
  if (namedAfterCall) v.conversation.addMessage(id, 'toolCallMessage', 'assistant');
}

/** Opens a streamed entity; false (and reported) when it cannot be. */
function openEntity(v: VerifierState, kind: EntityKind, id: string, tag: Lane, parentMessageId?: string, role?: string): boolean {
  const open = v.run.open.get(kind)!;
  const openedAt = open.get(id);
  if (openedAt !== undefined) {
    report(v, 'duplicate-start', `${v.type} for ${kind.noun} '${id}', which is already open (since #${openedAt}). End it with ${kind.end[0]} before starting it again.`);
    return false;
  }
  const space = kind.idSpace as OwnerSpace;
  const owners = v.run.owners[space];
  // A tool call lives in its parent message, so it inherits (and must agree with) that message's lane.
  let inherited: Lane;
  let inherits = false;
  if (kind === entityKind.toolCall && parentMessageId !== undefined && v.run.owners.message.has(parentMessageId)) {
    inherited = v.run.owners.message.get(parentMessageId);
    inherits = true;
    if (tag !== undefined && tag !== inherited) {
      report(v, 'parent-message-mismatch', `${v.type} for tool call '${id}' has subagentRunId '${tag}', but its parent message '${parentMessageId}' belongs to ${describeLane(inherited)}. A tool call belongs to the message that carries it: give it that message's subagentRunId.`);
      return false;
    }
  }
  if (owners.has(id)) {
    if (ownerMismatch(v, space, id, tag, kind.noun)) return false;
    const owner = owners.get(id);
    if (tag === undefined && inherits && inherited !== owner) {
      report(v, 'parent-message-mismatch', `${v.type} reopens tool call '${id}' of ${describeLane(owner)} inside message '${parentMessageId}' of ${describeLane(inherited)}. A tool call belongs to the message that carries it: reuse an id only in the same lane.`);
      return false;
    }
  } else {
    owners.set(id, tag !== undefined ? tag : inherited);
  }
  if (kind === entityKind.toolCall) checkCallStart(v, id, parentMessageId);
  else checkMessageStart(v, id, messageStarts.get(kind)!, role ?? 'assistant');
  open.set(id, v.at);
  return true;
}

/** Continues (`content`) or closes (`end`) an open streamed entity. */
function continueEntity(v: VerifierState, kind: EntityKind, id: string, tag: Lane, role: 'content' | 'end') {
  const open = v.run.open.get(kind)!;
  if (!open.has(id)) {
    const rule = role === 'content' ? 'content-without-start' : 'end-without-start';
    report(v, rule, `${v.type} for ${kind.noun} '${id}', which is not open. Send ${kind.start} first, and nothing for the ${kind.noun} after its ${kind.end[0]}.`);
    return;
  }
  if (ownerMismatch(v, kind.idSpace as OwnerSpace, id, tag, kind.noun)) return;
  if (role === 'end') open.delete(id);
}

/** Ends the chunk stream of one lane, as the client's expansion does with a synthesized END. */
function closeLane(v: VerifierState, lane: Lane) {
  const pending = v.run.lanes.get(lane);
  if (pending === undefined) return;
  v.run.lanes.delete(lane);
  const { kind } = pending;
  if (v.run.open.get(kind)!.delete(pending.id)) return;
  // An explicit END from another lane closed the entity: the client's synthesized END now finds nothing open.
  report(v, 
    'end-without-start',
    `${v.type} ends the chunk stream of ${describeLane(lane)}, so the client sends ${kind.end[0]} for ${kind.noun} '${pending.id}', which an explicit ${kind.end[0]} without that subagentRunId already closed. Let the chunk stream end by itself, or tag the END with the chunks' subagentRunId.`,
  );
}

/** Ends every lane's chunk stream. */
function closeAllLanes(v: VerifierState) {
  for (const lane of [...v.run.lanes.keys()]) closeLane(v, lane);
}

/** Whether a lane streams `kind` named `id`; the lane goes to `v.heldBy`. */
function laneHolding(v: VerifierState, kind: EntityKind, id: string): boolean {
  for (const [lane, pending] of v.run.lanes) {
    if (pending.kind === kind && pending.id === id) {
      v.heldBy = lane;
      return true;
    }
  }
  return false;
}

/** A TEXT_MESSAGE_CHUNK, TOOL_CALL_CHUNK or REASONING_MESSAGE_CHUNK: opens or continues its lane's stream. */
function chunk(v: VerifierState, fields: Record<string, unknown>, kind: EntityKind) {
  const id = str(fields[kind.idField]);
  const tag = str(fields.subagentRunId);
  let lane: Lane;
  if (id !== undefined && laneHolding(v, kind, id)) {
    if (tag !== undefined && tag !== v.heldBy) {
      report(v, 'subagent-mismatch', `${v.type} for ${kind.noun} '${id}' has subagentRunId '${tag}', but ${describeLane(v.heldBy)} is streaming that ${kind.noun}. Tag every chunk of an entity with its opener's subagentRunId, or leave the tag out.`);
      return;
    }
    lane = v.heldBy;
  } else if (id !== undefined || tag !== undefined) {
    lane = tag;
  } else if (v.run.lanes.get(undefined)?.kind === kind) {
    lane = undefined;
  } else {
    // An untagged, id-less chunk continues the one stream of its kind, wherever it is.
    const candidates = [...v.run.lanes].filter(([, pending]) => pending.kind === kind).map(([candidate]) => candidate);
    if (candidates.length > 1) {
      report(v, 'ambiguous-chunk', `${v.type} has neither ${kind.idField} nor subagentRunId, but ${candidates.length} lanes (${candidates.map(describeLane).join(', ')}) are streaming a ${kind.noun}. Tag the chunk with the subagentRunId it belongs to.`);
      return;
    }
    lane = candidates[0];
  }
  const current = v.run.lanes.get(lane);
  if (current !== undefined && current.kind === kind && (id === undefined || id === current.id)) {
    for (const field of kind.chunkAgrees ?? []) {
      const value = fields[field];
      if (value !== undefined && value !== current[field]) {
        report(v, 'chunk-mismatch', `${v.type} for ${kind.noun} '${current.id}' has ${field} ${quote(value)}, but the ${kind.noun} started with ${current[field] === undefined ? `no ${field}` : `${field} ${quote(current[field])}`}. Repeat a field on a later chunk only with the value it started with.`);
        return;
      }
    }
    return;
  }
  closeLane(v, lane);
  if (id === undefined) {
    report(v, 'chunk-without-id', `${v.type} has no ${kind.idField}, and ${describeLane(lane)} is not streaming a ${kind.noun} to continue. Give the first chunk of each ${kind.noun} its ${kind.idField}.`);
    return;
  }
  const toolCallName = str(fields.toolCallName);
  if (kind === entityKind.toolCall && toolCallName === undefined) {
    report(v, 'chunk-without-name', `${v.type} starts tool call '${id}' without a toolCallName. Name the tool on the first chunk of each call.`);
    return;
  }
  const parentMessageId = str(fields.parentMessageId);
  if (!openEntity(v, kind, id, tag, parentMessageId, str(fields.role))) return;
  v.run.lanes.set(lane, { kind, id, role: str(fields.role) ?? 'assistant', name: str(fields.name), toolCallName, parentMessageId });
}

/** Records who owns the messages (and their tool calls) that a snapshot or an input echo puts on the wire. */
function seedOwners(v: VerifierState, messages: unknown, replace: boolean) {
  if (!Array.isArray(messages)) return;
  for (const message of messages as { id?: unknown; role?: unknown; subagentRunId?: unknown; toolCalls?: unknown }[]) {
    if (typeof message !== 'object' || message === null || typeof message.id !== 'string') continue;
    const owner = str(message.subagentRunId);
    const owners = v.run.owners[message.role === 'reasoning' ? 'reasoning' : message.role === 'activity' ? 'activity' : 'message'];
    if (replace || !owners.has(message.id)) owners.set(message.id, owner);
    if (!Array.isArray(message.toolCalls)) continue;
    for (const call of message.toolCalls as { id?: unknown }[]) {
      if (typeof call?.id === 'string' && (replace || !v.run.owners.toolCall.has(call.id))) v.run.owners.toolCall.set(call.id, owner);
    }
  }
}

/** RUN_STARTED: a fresh run, checked afresh against the history and its input. */
function startRun(v: VerifierState, fields: Record<string, unknown>) {
  v.run = newRunState();
  v.phase = 'running';
  v.runId = str(fields.runId);
  v.runStartedAt = v.at;
  v.strayReported = false;
  seedOwners(v, (fields.input as { messages?: unknown } | undefined)?.messages, false);
  // Each run is checked afresh against the history, and the input the client sent.
  v.conversation = createConversationIds(v.history);
  v.conversation.seed((fields.input as { messages?: unknown } | undefined)?.messages);
}

/** What is still open, one entry per kind in the order the client checks them: quoted ids and the event that closes them. */
function openEntities(v: VerifierState): { kinds: string; labels: string[]; closer: string }[] {
  const found: { kinds: string; labels: string[]; closer: string }[] = [];
  const add = (noun: string, nouns: string, labels: string[], closer: string) => {
    if (labels.length > 0) found.push({ kinds: labels.length === 1 ? noun : nouns, labels, closer });
  };
  for (const kind of stillOpenOrder) {
    let labels: string[];
    if (kind === entityKind.step) labels = v.run.lifecycles.runningSteps().map(({ lane, name }) => (lane === undefined ? `'${name}'` : `'${name}' (subagent '${lane}')`));
    else if (kind === entityKind.subagent) labels = v.run.lifecycles.runningSubagents().map(({ id }) => `'${id}'`);
    else labels = [...(v.run.open.get(kind)?.keys() ?? [])].map((id) => `'${id}'`);
    add(kind.noun, kind.nouns, labels, kind.end.join(' or '));
  }
  return found;
}

const describeOpen = (entry: { kinds: string; labels: string[] }) => `${entry.kinds} ${entry.labels.join(', ')} ${entry.labels.length === 1 ? 'is' : 'are'} still open`;

/** The sequence rules for one event that has a known type. */
function check(v: VerifierState, fields: Record<string, unknown>) {
  // Where the run is: the lifecycle rules decide whether the event is looked at further.
  if (v.phase === 'finished' || v.phase === 'errored') {
    if (v.type === EventType.RUN_STARTED) return startRun(v, fields);
    if (v.type === EventType.RUN_ERROR && v.phase === 'finished') {
      v.phase = 'errored';
      return;
    }
    if (!v.strayReported) {
      v.strayReported = true;
      const ender = v.phase === 'finished' ? EventType.RUN_FINISHED : EventType.RUN_ERROR;
      report(v, v.phase === 'finished' ? 'event-after-run-finished' : 'event-after-run-error', `${v.type} after ${ender} (at #${v.endedAt}) ended the run. Send nothing after ${ender} but a new RUN_STARTED; until one comes, later events are only checked against the schema.`);
    }
    return;
  }
  if (v.phase === 'idle') {
    if (v.type === EventType.RUN_STARTED) return startRun(v, fields);
    if (v.type === EventType.RUN_ERROR) {
      v.phase = 'errored';
      v.endedAt = v.at;
      return;
    }
    report(v, 'first-event', `The stream starts with ${v.type}, but an AG-UI run starts with RUN_STARTED. Send RUN_STARTED first; the rest is checked as if it had been sent.`);
    v.phase = 'running';
    v.runId = undefined;
    v.runStartedAt = v.at;
  }

  const tag = str(fields.subagentRunId);
  const role = turnEvents.get(v.type);
  if (role !== undefined) {
    if (v.run.lanes.size > 0) closeLane(v, tag);
    const id = str(fields[role.kind.idField]);
    if (id === undefined) return;
    if (role.role === 'start') openEntity(v, role.kind, id, tag, str(fields.parentMessageId), str(fields.role));
    else continueEntity(v, role.kind, id, tag, role.role);
    return;
  }
  const chunkKind = chunkKinds.get(v.type);
  if (chunkKind !== undefined) return chunk(v, fields, chunkKind);
  if (chunkStreamClosers.has(v.type) && v.run.lanes.size > 0) closeLane(v, tag);

  switch (v.type) {
    case EventType.RUN_STARTED:
      report(v, 'run-already-started', `RUN_STARTED while ${v.runId === undefined ? 'a run' : `run '${v.runId}'`} (started at #${v.runStartedAt}) is still going. End a run with RUN_FINISHED or RUN_ERROR before starting the next.`);
      return;
    case EventType.RUN_FINISHED:
      closeAllLanes(v);
      for (const entry of openEntities(v)) {
        report(v, 'open-at-run-finished', `RUN_FINISHED while ${describeOpen(entry)}. End ${entry.labels.length === 1 ? 'it' : 'them'} with ${entry.closer} before RUN_FINISHED.`);
      }
      v.phase = 'finished';
      v.endedAt = v.at;
      return;
    case EventType.RUN_ERROR:
      closeAllLanes(v);
      v.phase = 'errored';
      v.endedAt = v.at;
      return;
    case EventType.MESSAGES_SNAPSHOT:
      closeAllLanes(v);
      seedOwners(v, fields.messages, true);
      v.conversation.seed(fields.messages);
      return;
    case EventType.STEP_STARTED:
    case EventType.STEP_FINISHED: {
      const name = str(fields.stepName);
      if (name === undefined) return;
      const problem = v.run.lifecycles.stepProblem(v.type, tag, name);
      if (problem !== undefined) return reportLifecycle(v, problem);
      v.run.lifecycles.recordStep(v.type, tag, name, v.at);
      return;
    }
    case EventType.SUBAGENT_STARTED: {
      if (tag === undefined) return;
      const problem = v.run.lifecycles.subagentProblem(v.type, tag, str(fields.parentSubagentRunId));
      if (problem !== undefined) return reportLifecycle(v, problem);
      v.run.lifecycles.recordSubagent(v.type, tag, v.at);
      return;
    }
    case EventType.SUBAGENT_FINISHED:
    case EventType.SUBAGENT_ERROR: {
      if (tag === undefined) return;
      closeLane(v, tag);
      const problem = v.run.lifecycles.subagentProblem(v.type, tag);
      if (problem !== undefined) return reportLifecycle(v, problem);
      v.run.lifecycles.recordSubagent(v.type, tag, v.at);
      return;
    }
    case EventType.TOOL_CALL_RESULT: {
      // The result mints a tool message: its id is on record, owned by whoever sent the result.
      const messageId = str(fields.messageId);
      if (messageId !== undefined) v.run.owners.message.set(messageId, tag);
      if (messageId !== undefined) checkMessageStart(v, messageId, 'toolResult', str(fields.role) ?? 'tool');
      return;
    }
    case EventType.ACTIVITY_SNAPSHOT: {
      const messageId = str(fields.messageId);
      // Only a new or replacing snapshot (re)defines who owns the activity.
      if (messageId !== undefined && (!v.run.owners.activity.has(messageId) || fields.replace !== false)) v.run.owners.activity.set(messageId, tag);
      if (messageId !== undefined) checkMessageStart(v, messageId, 'activity', 'activity', str(fields.activityType));
      return;
    }
    case EventType.ACTIVITY_DELTA: {
      const messageId = str(fields.messageId);
      if (messageId !== undefined) ownerMismatch(v, 'activity', messageId, tag, 'activity');
      return;
    }
    case EventType.REASONING_ENCRYPTED_VALUE: {
      const entityId = str(fields.entityId);
      if (entityId === undefined) return;
      if (fields.subtype === 'tool-call') ownerMismatch(v, 'toolCall', entityId, tag, 'tool call');
      else if (fields.subtype === 'message' && v.run.owners.message.has(entityId)) ownerMismatch(v, 'message', entityId, tag, 'message');
      else ownerMismatch(v, 'reasoning', entityId, tag, fields.subtype === 'message' ? 'message' : 'reasoning message');
      return;
    }
    default:
      return;
  }
}

/** Warns about each unrecognised member stripped from the event, then checks what is left against the schema. */
function reportStripped(v: VerifierState, stripped: Record<string, unknown>, removed: readonly UnrecognisedMember[]) {
  for (const member of removed) {
    report(v, member.kind, `${describeStripped(v.type, [member])} Send only what AG-UI ${v.type === EventType.STATE_DELTA || v.type === EventType.ACTIVITY_DELTA ? 'and RFC 6902 define' : 'defines'}; a consumer that predates it sees the event without it.`);
  }
  try {
    assertWireEvent(stripped);
  } catch (error) {
    if (!(error instanceof AguiRxError)) throw error;
    report(v, 'invalid-event', error.message);
  }
  return stripped;
}

/** The general path: every event that is not a plain token. */
function verifyEvent(v: VerifierState, event: unknown, index: number): readonly AguiViolation[] {
  v.out = none;
  v.at = index;
  if (typeof event !== 'object' || event === null || Array.isArray(event)) {
    v.type = '';
    return [{ index, rule: 'not-an-event', severity: 'warning', message: `Expected an AG-UI event object, got ${describeValue(event)}; a consumer cannot read it as an event.` }];
  }
  const fields = event as Record<string, unknown>;
  if (typeof fields.type !== 'string') {
    return [{ index, rule: 'not-an-event', severity: 'warning', message: `The event has no string 'type' (got ${describeValue(fields.type)}). Every AG-UI event names its type, e.g. 'TEXT_MESSAGE_START'.` }];
  }
  v.type = fields.type;
  if (!knownTypes.has(v.type)) {
    report(v, 'unknown-type', `'${v.type}' is not an AG-UI 1.0 event type: a consumer drops it with a warning (AG-UI spec 1.1, Processing Model). Send one of the EventType values of @ag-ui/core, or carry other data in a CUSTOM or RAW event.`);
    return v.out;
  }
  let checked = fields;
  try {
    assertWireEvent(fields);
  } catch (error) {
    if (!(error instanceof AguiRxError)) throw error;
    // A union member the schema does not know (an outcome, a content part, a patch op) is stripped, not fatal.
    const stripped = stripUnrecognised(fields);
    if (stripped === undefined) report(v, 'invalid-event', error.message);
    else checked = reportStripped(v, stripped.event, stripped.removed);
  }
  // Checked even when the schema failed, as far as its ids allow: a bad role must not make every CONTENT after it an error too.
  check(v, checked);
  return v.out;
}

/** What the end of the stream leaves wrong: a run still going, entities still open, or no run at all. */
function endOf(v: VerifierState): AguiViolation[] {
  const found: AguiViolation[] = [];
  if (v.phase === 'idle') {
    found.push({ index: v.nextIndex, rule: 'no-run', severity: 'warning', message: `The stream holds no run. An AG-UI stream starts with RUN_STARTED and ends each run with RUN_FINISHED or RUN_ERROR.` });
  } else if (v.phase === 'running') {
    found.push({
      index: v.nextIndex,
      rule: 'no-terminal-event',
      severity: 'warning',
      message: `The stream ended during ${v.runId === undefined ? 'the run' : `run '${v.runId}'`} (started at #${v.runStartedAt}) without RUN_FINISHED or RUN_ERROR. End every run with one of them.`,
    });
    for (const entry of openEntities(v)) {
      found.push({ index: v.nextIndex, rule: 'open-at-end', severity: 'warning', message: `The stream ended while ${describeOpen(entry)}. End ${entry.labels.length === 1 ? 'it' : 'them'} with ${entry.closer}, then end the run.` });
    }
  }
  return found;
}
