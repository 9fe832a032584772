import {
  copyBaseFields,
  describeLane,
  eventTypeOf,
  laneFields,
  laneOf,
  namedParentId,
  requiredString,
  stringField,
  type AgentEvent,
  type Lane,
} from '../protocol/agentEvent.js';
import type { DiagnosticHandler } from '../protocol/diagnostics.js';
import { AguiRxError } from '../protocol/errors.js';
import { mintUnused, type IdGenerator } from '../protocol/generateId.js';
import { entityEvents, entityKind, entityKinds, turnBoundaries, type EntityKind, type EntityRole } from '../protocol/table.js';
import { createEntityIds, type EntityIds } from './ids.js';
import { createIdTable, type IdTable } from './idTable.js';
import { recordType } from '../protocol/recordType.js';
import { isPlainTextChunk } from '../protocol/normalizeAgentEvent.js';
import { copyWith } from '../protocol/values.js';

/** What {@link trackMessageLanes} needs: where its decisions go. */
export interface MessageLanesOptions {
  /** Mints ids for messages whose chunks carry none, or whose id was already taken. */
  mint: IdGenerator;
  /** Told about each explicit event dropped or repaired. */
  diagnose: DiagnosticHandler;
  /** Receives every event to send, in order: the input's own, rewritten ones and added STARTs and ENDs. */
  out: { next(event: AgentEvent): void };
}

/** The message lanes of one subscription. */
export interface MessageLanes {
  /**
   * Takes one input event and emits what it becomes (see `openMessageStartContentEnd`'s rules).
   *
   * @throws {AguiRxError} `INVALID_EVENT` for a non-string `delta` or `messageId`, content for a
   * message open in another lane, or a span id another lane uses.
   */
  next(event: AgentEvent): void;
  /** Emits the closers of every open message and span: lane by lane, in the order lanes first appeared. */
  closeAll(): void;
  /** The same as `closeAll`: the name an operator's handlers give it. */
  flush(): void;
  /** Before `event` is read: the content event `next` would send for it when that is all it would do (a plain chunk continuing the open text message: see `isPlainTextChunk`), else `undefined`; changes nothing. */
  contentFor(event: AgentEvent): AgentEvent | undefined;
}

const text = entityKind.textMessage;
const thought = entityKind.reasoningMessage;
const span = entityKind.reasoning;

/** The kinds each lane keeps open, in the order the table closes them (innermost first). */
const laneKinds = entityKinds.filter((kind) => kind === text || kind === thought || kind === span);
// Their slots in a lane's state.
const TEXT = laneKinds.indexOf(text);
const THOUGHT = laneKinds.indexOf(thought);
const SPAN = laneKinds.indexOf(span);

/**
 * What is open in one lane (the parent agent, or one subagent): the open id of each of
 * {@link laneKinds}, by slot. An array, so that the per-token checks are element reads.
 */
type LaneState = (string | undefined)[];

/**
 * A text or reasoning message of the run: open, or ended (then what a START under its id must
 * match to reopen it).
 */
interface MessageRecord {
  readonly lane: Lane;
  readonly kind: EntityKind;
  /**
   * The client's role for it (`assistant`, `user`, …; `reasoning`); `undefined` for the assistant
   * message a tool call named (its `parentMessageId`) before any text under its id, which text of
   * its lane starts (the client made it for the call: the text joins it).
   */
  role: unknown;
  /**
   * The producer's id it was opened under (which its wire id replaced when taken), or `undefined`
   * for one opened without an id, under a minted one: only that producer id reopens it. A producer
   * whose own ids come from a counter, as `generateId`'s may, can name a new message with an id the
   * toolkit minted: that is another message.
   */
  readonly producerId: string | undefined;
  /** Open now; else ended, and reopened by a START (or content) under its producer's id, of the same lane, kind and role. */
  open: boolean;
}

/** One lane's renames: by slot of {@link laneKinds}, producer id -> the fresh id its message of that kind was given. */
type LaneRenames = (Map<string, string> | undefined)[];

/** What the tracker does with one event type, read off the protocol table once. */
interface Route {
  /** The slot of the lane kind the event starts, streams, chunks or ends; -1 for other kinds' events. */
  readonly slot: number;
  readonly role: EntityRole | undefined;
  /** The slots the event closes before it passes (the table's `closesInLane` of its kind), in closing order. */
  readonly closes: readonly number[];
  /** How far the event ends the turn (the table's `turnBoundaries`). */
  readonly boundary: 'lane' | 'subagent' | 'run' | undefined;
}

/**
 * The route of every event type the tracker acts on; other events pass untouched. What starts,
 * streams or chunks a kind closes what the table says, except a tool call's ARGS: only what opens
 * a tool call (its START or a chunk) does. No END closes anything but its own entity.
 */
const routes: ReadonlyMap<string, Route> = new Map(
  [...new Set([...entityEvents.keys(), ...turnBoundaries.keys()])].map((type): [string, Route] => {
    const entity = entityEvents.get(type);
    const slot = entity === undefined ? -1 : laneKinds.indexOf(entity.kind);
    const opens = entity !== undefined && entity.role !== 'end' && (slot >= 0 || entity.role !== 'content');
    const closes = opens ? laneKinds.flatMap((open, i) => (entity.kind.closesInLane.includes(open.name) ? [i] : [])) : [];
    return [type, { slot, role: slot >= 0 ? entity!.role : undefined, closes, boundary: turnBoundaries.get(type) }];
  }),
);
// The most frequent event, and what it closes, at hand.
const TEXT_CHUNK: string = text.chunk!;
const textCloses = routes.get(TEXT_CHUNK)!.closes;
// The content event type of each slot.
const contentTypes = laneKinds.map((kind) => kind.content);
const textContent = text.content!;
/** Every slot, in closing order. */
const allSlots = laneKinds.map((_, i) => i);

/** One subscription's lanes: the state the functions below share (one record, not a closure per helper). */
interface Lanes {
  readonly mint: IdGenerator;
  readonly diagnose: DiagnosticHandler;
  readonly out: { next(event: AgentEvent): void };
  /**
   * What is open in each lane, in the order lanes first appeared: made when a subagent's lane
   * first appears (most runs have only the parent agent's, `parentLane`), then holds every lane.
   */
  lanes: Map<Lane, LaneState> | undefined;
  /**
   * Message id -> its lane, kind, role and whether it is open, across lanes and kinds: one table
   * for open and ended messages, so that a message costs one entry. A START (or content) for an
   * ended one of the same lane, kind and role reopens it under its id (AG-UI: the client appends
   * to the message it holds). Made at the first message.
   */
  messages: IdTable<MessageRecord> | undefined;
  /** Used ids and their owner lanes. */
  readonly ids: EntityIds;
  /**
   * By lane, then kind: producer id -> the fresh id it was given for a message of that lane and
   * kind, because the id was taken when the message opened: the producer's later events for the
   * message name it by its own id. Per lane and kind, so that the same producer id still names its
   * first message elsewhere (a text message and then a reasoning message under one id, each
   * reopened under its own). Made at the first rename.
   */
  renames: Map<Lane, LaneRenames> | undefined;
  /** Producer id -> the fresh id it was given last, in any lane and kind: where an untagged event naming a subagent's renamed message finds it. */
  lastRenames: Map<string, string> | undefined;
  /** The parent agent's lane, once it appeared: nearly every event is its. */
  parentLane: LaneState | undefined;
}

/**
 * Creates the message-lane tracker of one subscription: each lane (a `subagentRunId`) has at most
 * one open text message, one open reasoning message and one reasoning span; chunks open and stream
 * them, turn boundaries close them. A start (or content) under the id of an ended message of the
 * same lane, kind and role reopens it under that id, as AG-UI's processing rules say (the client
 * appends to the message it holds); any other reuse of an id, or an id of another lane, gets a
 * fresh one (one id namespace for text, reasoning messages and spans).
 * Pure bookkeeping, no RxJS: decisions go out through `emit` and `diagnose`, or are thrown.
 */
export function trackMessageLanes({ mint, diagnose, out }: MessageLanesOptions): MessageLanes {
  // A plain record of its state; the methods are on its prototype (`lanesMethods`), shared by every subscription.
  const t = new LanesRecord();
  t.mint = mint;
  t.diagnose = diagnose;
  t.out = out;
  t.lanes = undefined;
  t.messages = undefined;
  t.ids = createEntityIds(mint);
  t.renames = undefined;
  t.lastRenames = undefined;
  t.parentLane = undefined;
  return LanesRecord.shaped(t) as unknown as MessageLanes;
}

/**
 * For a fused chain, before the event is read: the TEXT_MESSAGE_CONTENT of a plain text chunk (see
 * `isPlainTextChunk`: none of the base fields, which a plain content does not carry either) of the
 * parent agent that names the open text message it continues (the most frequent event of a run),
 * else `undefined`. Sending it is all `next` does with that chunk.
 */
function contentFor(this: Lanes, event: AgentEvent): AgentEvent | undefined {
  const fields = event as unknown as Record<string, unknown>;
  if (typeof event !== 'object' || event === null || fields.type !== TEXT_CHUNK) return undefined;
  // Read once, and what is sent is what was checked: a getter may answer differently at each read.
  const delta = fields.delta;
  const producerId = fields.messageId;
  if (delta === '' || !isPlainTextChunk(fields, delta, producerId)) return undefined;
  const current = continuingId(this, producerId as string);
  return current === undefined ? undefined : ({ type: textContent, messageId: current, delta: delta as string } as AgentEvent);
}

/**
 * The parent agent's open text message when a text chunk under `producerId` (or under none)
 * continues it, onChunk's first case; else `undefined`.
 */
function continuingId(t: Lanes, producerId: string | undefined): string | undefined {
  const lane = t.parentLane;
  const current = lane === undefined ? undefined : lane[TEXT];
  return current !== undefined && (producerId === undefined || wireId(t, producerId, undefined, TEXT) === current) ? current : undefined;
}

/** The wire id of a message of `slot` in `lane` that the producer names `producerId`: the fresh id it was given there, else its own. */
function wireId(t: Lanes, producerId: string, lane: Lane, slot: number): string {
  // Two lookups however many lanes and kinds renamed the id (a run of many subagents that each number their messages from 1).
  const renamed = t.renames?.get(lane)?.[slot];
  return renamed === undefined ? producerId : (renamed.get(producerId) ?? producerId);
}

// From now on the producer's `producerId` names `id` for the messages of `slot` in `lane`.
function rename(t: Lanes, producerId: string, lane: Lane, slot: number, id: string): void {
  const renames = (t.renames ??= new Map());
  let laneRenames = renames.get(lane);
  if (laneRenames === undefined) renames.set(lane, (laneRenames = laneKinds.map(() => undefined)));
  (laneRenames[slot] ??= new Map()).set(producerId, id);
  (t.lastRenames ??= new Map()).set(producerId, id);
}

function next(this: Lanes, event: AgentEvent): void {
  const t = this;
  const type = eventTypeOf(event);
  const fields = event as unknown as Record<string, unknown>;
  // The most frequent event first, without a lookup; most often it continues the parent
  // agent's open text message: that case is onChunk's first, with its fields read by name.
  if (type === TEXT_CHUNK) {
    const producerId = fields.messageId;
    const delta = fields.delta;
    if (fields.subagentRunId === undefined && typeof delta === 'string' && delta !== '' && (producerId === undefined || typeof producerId === 'string')) {
      const current = continuingId(t, producerId);
      if (current !== undefined) return t.out.next(copyBaseFields(fields, { type: textContent, messageId: current, delta }) as AgentEvent);
    }
    return onChunk(t, fields, TEXT, textCloses, type, false);
  }
  const route = routes.get(type);
  if (route === undefined) return t.out.next(event);
  const slot = route.slot;
  if (slot === SPAN) return route.role === 'start' ? onSpanStart(t, fields, route.closes) : onSpanEnd(t, fields);
  if (slot >= 0) {
    switch (route.role) {
      case 'chunk':
        return onChunk(t, fields, slot, route.closes, type, false);
      case 'content':
        return onChunk(t, fields, slot, route.closes, type, true);
      case 'start':
        return onStart(t, fields, slot, route.closes, type);
      case 'end':
        return onEnd(t, fields, slot, type);
    }
  }
  // Another kind's event (a tool call opening, a step): it may close what is open in its lane.
  if (route.closes.length > 0) {
    const lane = laneOf(fields);
    const state = existingLane(t, lane);
    if (state !== undefined) closeSlots(t, lane, state, route.closes);
  }
  // A subagent's SUBAGENT_FINISHED / ERROR names its own lane in `subagentRunId`.
  if (route.boundary === 'run') closeAll(t);
  else if (route.boundary !== undefined) closeLane(t, laneOf(fields));
  const parentId = namedParentId(fields.parentMessageId);
  t.out.next(parentId === undefined ? event : withParent(t, fields, event, parentId));
}

/**
 * A tool call's event with its `parentMessageId` as the run sends it: the id of the message the
 * producer's id names in the call's lane. That is its assistant text message (one sent under a
 * fresh id because the id was taken included), else another message of the lane under that id
 * (its text of another role, its reasoning: `distinctIds` then sends the call without a parent, as
 * a tool call goes into an assistant message). An id naming no message of the run yet is the
 * message the client makes for the call: recorded as a text message of the call's lane, which
 * text of that lane under the id starts (joining the call's message), and which another kind or
 * lane cannot take. An id only another lane uses is left as it is (`toolCallCorrelator` refuses it).
 */
function withParent(t: Lanes, fields: Record<string, unknown>, event: AgentEvent, producerId: string): AgentEvent {
  const lane = laneOf(fields);
  const renamedText = wireId(t, producerId, lane, TEXT);
  if (renamedText !== producerId && isAssistantText(t.messages?.get(renamedText))) return parentNamed(fields, renamedText);
  const atId = t.messages?.get(producerId);
  const ownAtId = atId !== undefined && atId.lane === lane && atId.producerId === producerId;
  if (ownAtId && isAssistantText(atId)) return event;
  // Another message of the lane under the producer's id.
  const other = renamedText !== producerId ? renamedText : wireId(t, producerId, lane, THOUGHT);
  if (other !== producerId) return parentNamed(fields, other);
  if (atId === undefined && !t.ids.hasOwner(producerId)) {
    t.ids.claimId(producerId, lane, true);
    (t.messages ??= createIdTable()).set(producerId, { lane, kind: text, role: undefined, producerId, open: false });
  }
  return event;
}

// A text message the client holds as an assistant message (or will: a tool call's, not started yet).
const isAssistantText = (known: MessageRecord | undefined): boolean => known !== undefined && known.kind === text && (known.role === 'assistant' || known.role === undefined);

const parentNamed = (fields: Record<string, unknown>, messageId: string): AgentEvent => copyWith(fields, { parentMessageId: messageId }) as unknown as AgentEvent;

function closeEveryLane(this: Lanes): void {
  closeAll(this);
}

// `flush` is `closeAll` under the name an operator's handlers give it: the tracker is its operator's handlers.
const lanesMethods: MessageLanes = Object.freeze({ next, closeAll: closeEveryLane, flush: closeEveryLane, contentFor });
const LanesRecord = recordType<Lanes>(lanesMethods);

/** `lane`'s state, made at its first event. */
function laneState(t: Lanes, lane: Lane): LaneState {
  const existing = existingLane(t, lane);
  if (existing !== undefined) return existing;
  const state: LaneState = laneKinds.map(() => undefined);
  if (lane === undefined) t.parentLane = state;
  // The first subagent's lane: from now on every lane is listed, the parent agent's first if it came first.
  if (t.lanes === undefined && lane !== undefined) t.lanes = t.parentLane === undefined ? new Map() : new Map([[undefined, t.parentLane]]);
  t.lanes?.set(lane, state);
  return state;
}

/** `lane`'s state, if it has appeared. */
function existingLane(t: Lanes, lane: Lane): LaneState | undefined {
  return lane === undefined ? t.parentLane : t.lanes?.get(lane);
}

function close(t: Lanes, lane: Lane, state: LaneState, slot: number, explicitEnd?: AgentEvent): void {
  const messageId = state[slot] as string;
  state[slot] = undefined;
  if (slot !== SPAN) t.messages!.get(messageId)!.open = false;
  t.out.next(explicitEnd ?? ({ type: laneKinds[slot].end[0], messageId, ...laneFields(lane) } as AgentEvent));
}

// Closes, in order, whichever of `slots` is open in the lane.
function closeSlots(t: Lanes, lane: Lane, state: LaneState, slots: readonly number[]): void {
  for (let i = 0; i < slots.length; i++) if (state[slots[i]] !== undefined) close(t, lane, state, slots[i]);
}

function closeLane(t: Lanes, lane: Lane): void {
  const state = existingLane(t, lane);
  if (state !== undefined) closeSlots(t, lane, state, allSlots);
}

function closeAll(t: Lanes): void {
  if (t.lanes === undefined) closeLane(t, undefined);
  else for (const lane of t.lanes.keys()) closeLane(t, lane);
}

// `known`, if it is open.
const openOf = (known: MessageRecord | undefined): MessageRecord | undefined => (known?.open === true ? known : undefined);

// The message known under `messageId`, if it is open.
const openMessage = (t: Lanes, messageId: string): MessageRecord | undefined => openOf(t.messages?.get(messageId));

// `opener`: the message open under the id (see openMessage), which the event's lane cannot take.
function assertNotOpenElsewhere(type: string, producerId: string, opener: MessageRecord | undefined, lane: Lane): void {
  if (opener !== undefined) {
    throw new AguiRxError(
      'INVALID_EVENT',
      `${type} for message '${producerId}' comes from ${describeLane(lane)}, but that message is open as a ${opener.kind.noun} of ${describeLane(opener.lane)}. Give each message its own id, and set the same subagentRunId on every event of a message.`,
    );
  }
}

// A minted id no lane owns yet.
const freshId = (t: Lanes): string => mintUnused(t.mint, (id) => t.ids.hasOwner(id));

// Opens a message in `slot` of `lane` under the producer's id: an ended message of the same lane,
// kind and role is reopened under it; a fresh id replaces one that is absent or taken otherwise.
function open(t: Lanes, lane: Lane, state: LaneState, slot: number, type: string, producerId: string | undefined, source: Record<string, unknown>, explicitStart?: AgentEvent): string {
  const kind = laneKinds[slot];
  const candidate = producerId === undefined ? freshId(t) : wireId(t, producerId, lane, slot);
  // One lookup: the message known under the id is open (elsewhere: refused when the producer opened it of this kind under this id, else another message) or ended.
  const known = t.messages?.get(candidate);
  const opener = openOf(known);
  assertNotOpenElsewhere(type, producerId ?? candidate, opener?.kind === kind && opener.producerId === producerId ? opener : undefined, lane);
  // A chunk or content without a role continues the ended message's.
  const given = slot === TEXT ? source.role : 'reasoning';
  const previous = producerId === undefined || known?.producerId !== producerId ? undefined : known;
  // A tool call's message (no role yet) is the client's assistant message.
  const previousRole = previous?.role ?? 'assistant';
  const reopen = previous !== undefined && previous.kind === kind && previous.lane === lane && (given === undefined || given === previousRole);
  const role = reopen ? previousRole : (given ?? 'assistant');
  let messageId = candidate;
  if (reopen) {
    // A tool call's message (no role yet) is started by its first text, not reopened.
    const started = previous.role !== undefined;
    previous.open = true;
    previous.role = role;
    if (started && type === kind.content) {
      t.diagnose({ message: `${type} for message '${producerId}', which was already ended: it was reopened with ${kind.start} under its id, and the client appends to it. Send ${kind.start} before the content of a message you continue.`, event: source });
    }
  } else {
    // An empty id names nothing the client can point to (a tool call's parent: it reads '' as none): a fresh one, as for a taken id.
    const claim = t.ids.claimId(candidate === '' ? freshId(t) : candidate, lane, true);
    messageId = claim.id;
    if (candidate === '') {
      t.diagnose({ message: `${type} has an empty messageId: it was sent as message '${messageId}', and the producer's later events under '' go to it (the client reads an empty id as none, and would put a tool call of the message in a message of its own). Give each message a non-empty id, or leave messageId out of chunks.`, event: source });
    }
    if (producerId !== undefined && messageId !== candidate) rename(t, producerId, lane, slot, messageId);
    if (claim.conflict !== undefined && (explicitStart !== undefined || type === kind.content)) {
      const why =
        claim.conflict === 'owned'
          ? `which ${describeLane(claim.refusedOwner)} uses`
          : known !== undefined && known.producerId === undefined
            ? `which this run minted for a ${known.kind.noun} sent without an id (generateId makes ids the producer also uses)`
            : `which was ${describeEnded(known)}`;
      t.diagnose({ message: `${type} reuses message id '${candidate}', ${why}; it was sent as a new message '${messageId}'. Use a new messageId for each message.`, event: source });
    }
  }
  if (!reopen) (t.messages ??= createIdTable()).set(messageId, { lane, kind, role, producerId, open: true });
  state[slot] = messageId;
  // A reasoning message streams inside a span: chunks open one around it.
  if (slot === THOUGHT && state[SPAN] === undefined && explicitStart === undefined) {
    state[SPAN] = messageId;
    t.out.next({ type: span.start, messageId, ...laneFields(lane) } as AgentEvent);
  }
  if (explicitStart !== undefined) {
    t.out.next(messageId === producerId ? explicitStart : ({ ...explicitStart, messageId } as AgentEvent));
    return messageId;
  }
  const start: Record<string, unknown> = { type: kind.start, messageId, role };
  if (slot === TEXT && source.name !== undefined) start.name = source.name;
  if (source.timestamp !== undefined) start.timestamp = source.timestamp;
  if (lane !== undefined) start.subagentRunId = lane;
  t.out.next(start as AgentEvent);
  return messageId;
}

function content(t: Lanes, slot: number, messageId: string, delta: string, source: Record<string, unknown>): void {
  t.out.next(copyBaseFields(source, { type: contentTypes[slot], messageId, delta }) as AgentEvent);
}

// A chunk, or an explicit CONTENT (which is a chunk with an id). Runs once per token.
function onChunk(t: Lanes, event: Record<string, unknown>, slot: number, closes: readonly number[], type: string, explicit: boolean): void {
  // Read by name: a read through a variable key is slow.
  const producerId = explicit ? requiredString(event, 'messageId') : stringField(event, 'messageId', event.messageId);
  const delta = explicit ? requiredString(event, 'delta') : stringField(event, 'delta', event.delta);
  if (delta === undefined || delta === '') return;
  const lane = laneOf(event);
  const state = laneState(t, lane);
  const current = state[slot];
  // Nothing this kind closes is open beside its open message: opening either closes the other.
  if (current !== undefined && (producerId === undefined || wireId(t, producerId, lane, slot) === current)) {
    if (explicit && producerId === current) return t.out.next(event as AgentEvent);
    return content(t, slot, current, delta, event);
  }
  const owner = untaggedContinuation(t, lane, slot, producerId);
  if (owner !== undefined) return onChunk(t, copyWith(event, { subagentRunId: owner }), slot, closes, type, explicit);
  closeSlots(t, lane, state, closes);
  if (current !== undefined) close(t, lane, state, slot);
  const messageId = open(t, lane, state, slot, type, producerId, event);
  content(t, slot, messageId, delta, event);
}

/**
 * The subagent whose open message of `slot` an event without `subagentRunId` names by its id:
 * the event continues it there. AG-UI spec 1.1, Subagents, Ownership: "a continuation carrying
 * no tag is not a disagreement and MUST be accepted". An untagged chunk without an id is the
 * parent agent's, as every untagged input event is.
 */
function untaggedContinuation(t: Lanes, lane: Lane, slot: number, producerId: string | undefined): Lane {
  // No subagent has had a lane yet (`lanes` is made at the first): every message is the parent agent's.
  if (lane !== undefined || producerId === undefined || t.lanes === undefined) return undefined;
  // The message the producer opened under `producerId`: under that id, or under the fresh id it got last.
  return subagentOpening(t, producerId, producerId, slot) ?? subagentOpening(t, t.lastRenames?.get(producerId), producerId, slot);
}

// The subagent whose open message of `slot` went out under `messageId`, opened under `producerId`.
function subagentOpening(t: Lanes, messageId: string | undefined, producerId: string, slot: number): Lane {
  const known = messageId === undefined ? undefined : openMessage(t, messageId);
  return known !== undefined && known.kind === laneKinds[slot] && known.producerId === producerId ? known.lane : undefined;
}

function onStart(t: Lanes, event: Record<string, unknown>, slot: number, closes: readonly number[], type: string): void {
  const producerId = requiredString(event, 'messageId');
  const lane = laneOf(event);
  const state = laneState(t, lane);
  closeSlots(t, lane, state, closes);
  const current = state[slot];
  if (current !== undefined && current === wireId(t, producerId, lane, slot)) {
    return t.diagnose({ message: `Dropped a second ${type} for message '${producerId}', which is already open. Send one START per message.`, event });
  }
  if (current !== undefined) close(t, lane, state, slot);
  open(t, lane, state, slot, type, producerId, event, event as AgentEvent);
}

function onEnd(t: Lanes, event: Record<string, unknown>, slot: number, type: string): void {
  const producerId = requiredString(event, 'messageId');
  const lane = laneOf(event);
  const state = laneState(t, lane);
  const messageId = wireId(t, producerId, lane, slot);
  if (state[slot] === messageId) {
    return close(t, lane, state, slot, messageId === producerId ? (event as AgentEvent) : ({ ...event, messageId } as AgentEvent));
  }
  const owner = untaggedContinuation(t, lane, slot, producerId);
  if (owner !== undefined) return onEnd(t, copyWith(event, { subagentRunId: owner }), slot, type);
  assertNotOpenElsewhere(type, producerId, openMessage(t, messageId), lane);
  t.diagnose({ message: `Dropped ${type} for message '${producerId}': no such message is open in ${describeLane(lane)}. End a message once, after its START.`, event });
}

// An explicit REASONING_START: spans keep the producer's id, which must be the lane's own.
function onSpanStart(t: Lanes, event: Record<string, unknown>, closes: readonly number[]): void {
  const messageId = requiredString(event, 'messageId');
  const lane = laneOf(event);
  const state = laneState(t, lane);
  if (state[SPAN] === messageId) {
    return t.diagnose({ message: `Dropped a second REASONING_START for span '${messageId}', which is already open.`, event });
  }
  if (t.ids.hasOwner(messageId) && t.ids.ownerOf(messageId) !== lane) {
    throw new AguiRxError(
      'INVALID_EVENT',
      `REASONING_START from ${describeLane(lane)} opens span '${messageId}', an id ${describeLane(t.ids.ownerOf(messageId))} already uses. Give each lane's reasoning its own messageId.`,
    );
  }
  closeSlots(t, lane, state, closes);
  if (state[SPAN] !== undefined) close(t, lane, state, SPAN);
  t.ids.own(messageId, lane);
  state[SPAN] = messageId;
  t.out.next(event as AgentEvent);
}

function onSpanEnd(t: Lanes, event: Record<string, unknown>): void {
  const messageId = requiredString(event, 'messageId');
  const lane = laneOf(event);
  const state = laneState(t, lane);
  if (state[SPAN] !== messageId) {
    return t.diagnose({ message: `Dropped REASONING_END for span '${messageId}': no such span is open in ${describeLane(lane)}.`, event });
  }
  if (state[THOUGHT] !== undefined) close(t, lane, state, THOUGHT);
  close(t, lane, state, SPAN, event as AgentEvent);
}

/** Why an ended message's id cannot be reopened by another start, for a person: `already ended as a text message with role 'user' of the parent agent`. */
function describeEnded(record: MessageRecord | undefined): string {
  if (record === undefined) return 'already used';
  if (record.role === undefined) return `the assistant message of a tool call of ${describeLane(record.lane)}`;
  return `already ended as a ${record.kind.noun}${record.kind === text ? ` with role '${String(record.role)}'` : ''} of ${describeLane(record.lane)}`;
}
