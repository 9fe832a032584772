import {
  copyBaseFields,
  describeLane,
  eventTypeOf,
  laneFields,
  laneOf,
  requiredString,
  stringField,
  type AgentEvent,
  type Lane,
} from '../protocol/agentEvent.js';
import type { DiagnosticHandler } from '../protocol/diagnostics.js';
import { AguiRxError } from '../protocol/errors.js';
import type { IdGenerator } from '../protocol/generateId.js';
import { entityEvents, entityKind, entityKinds, turnBoundaries, type EntityKind } from '../protocol/table.js';
import { createEntityIds } from './ids.js';

/** What {@link createMessageLanes} needs: where its decisions go. */
export interface MessageLanesOptions {
  /** Mints ids for messages whose chunks carry none, or whose id was already taken. */
  mint: IdGenerator;
  /** Told about each explicit event dropped or repaired. */
  diagnose: DiagnosticHandler;
  /** Receives every event to send, in order: the input's own, rewritten ones and added STARTs and ENDs. */
  emit: (event: AgentEvent) => void;
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
}

const text = entityKind.textMessage;
const thought = entityKind.reasoningMessage;
const span = entityKind.reasoning;
type Slot = 'textMessage' | 'reasoningMessage' | 'reasoning';

/** The kinds each lane keeps open, in the order the table closes them (innermost first). */
const laneKinds = entityKinds.filter((kind) => kind === text || kind === thought || kind === span);

/** For each kind, the lane's kinds that starting or streaming one closes (the table's `closesInLane`). */
const closedBy = new Map(entityKinds.map((kind) => [kind, laneKinds.filter((open) => kind.closesInLane.includes(open.name))] as const));

/** What is open in one lane (the parent agent, or one subagent): an id per kind, the span's included. */
type LaneState = Record<Slot, string | undefined>;

/**
 * Creates the message-lane tracker of one subscription: each lane (a `subagentRunId`) has at most
 * one open text message, one open reasoning message and one reasoning span; chunks open and stream
 * them, turn boundaries close them, and message ids are never reused nor shared between lanes
 * (one id namespace for text, reasoning messages and spans, as `@ag-ui/client` checks them).
 * Pure bookkeeping, no RxJS: decisions go out through `emit` and `diagnose`, or are thrown.
 */
export function createMessageLanes({ mint, diagnose, emit }: MessageLanesOptions): MessageLanes {
  const lanes = new Map<Lane, LaneState>();
  // Open message id -> its lane and kind, across lanes and kinds.
  const openMessages = new Map<string, { lane: Lane; kind: EntityKind }>();
  // Used ids, their owner lanes, and the fresh ids reused ones were given.
  const ids = createEntityIds(mint);

  // The parent agent's lane, kept at hand: nearly every event is its.
  let parentLane: LaneState | undefined;
  const laneState = (lane: Lane): LaneState => {
    if (lane === undefined && parentLane !== undefined) return parentLane;
    let state = lanes.get(lane);
    if (state === undefined) lanes.set(lane, (state = { textMessage: undefined, reasoningMessage: undefined, reasoning: undefined }));
    if (lane === undefined) parentLane = state;
    return state;
  };

  const close = (lane: Lane, state: LaneState, kind: EntityKind, explicitEnd?: AgentEvent) => {
    const messageId = state[kind.name as Slot] as string;
    state[kind.name as Slot] = undefined;
    if (kind !== span) openMessages.delete(messageId);
    emit(explicitEnd ?? ({ type: kind.end[0], messageId, ...laneFields(lane) } as AgentEvent));
  };

  // Closes, in order, whichever of `kinds` is open in the lane.
  const closeKinds = (lane: Lane, state: LaneState, kinds: readonly EntityKind[]) => {
    for (let i = 0; i < kinds.length; i++) if (state[kinds[i].name as Slot] !== undefined) close(lane, state, kinds[i]);
  };

  const closeLane = (lane: Lane) => {
    const state = lanes.get(lane);
    if (state !== undefined) closeKinds(lane, state, laneKinds);
  };

  const closeAll = () => {
    for (const lane of lanes.keys()) closeLane(lane);
  };

  const assertNotOpenElsewhere = (type: string, producerId: string, messageId: string, lane: Lane) => {
    const opener = openMessages.get(messageId);
    if (opener !== undefined) {
      throw new AguiRxError(
        'INVALID_EVENT',
        `${type} for message '${producerId}' comes from ${describeLane(lane)}, but that message is open as a ${opener.kind.noun} of ${describeLane(opener.lane)}. Give each message its own id, and set the same subagentRunId on every event of a message.`,
      );
    }
  };

  // Opens a message of `kind` in `lane` under the producer's id (or a fresh one if absent or taken).
  const open = (lane: Lane, state: LaneState, kind: EntityKind, type: string, producerId: string | undefined, source: Record<string, unknown>, explicitStart?: AgentEvent) => {
    const candidate = producerId === undefined ? mint() : ids.wireId(producerId);
    assertNotOpenElsewhere(type, producerId ?? candidate, candidate, lane);
    const claim = ids.claimId(candidate, producerId ?? candidate, lane, true);
    const messageId = claim.id;
    if (claim.conflict !== undefined && (explicitStart !== undefined || type === kind.content)) {
      const why = claim.conflict === 'used' ? 'which was already ended' : `which ${describeLane(claim.refusedOwner)} uses`;
      diagnose({ message: `${type} reuses message id '${candidate}', ${why}; it was sent as a new message '${messageId}'. Use a new messageId for each message.`, event: source });
    }
    openMessages.set(messageId, { lane, kind });
    state[kind.name as Slot] = messageId;
    if (kind === thought && state.reasoning === undefined && explicitStart === undefined) {
      state.reasoning = messageId;
      emit({ type: span.start, messageId, ...laneFields(lane) } as AgentEvent);
    }
    if (explicitStart !== undefined) {
      emit(messageId === producerId ? explicitStart : ({ ...explicitStart, messageId } as AgentEvent));
      return messageId;
    }
    const start: Record<string, unknown> = { type: kind.start, messageId, role: kind === text ? (source.role ?? 'assistant') : 'reasoning' };
    if (kind === text && source.name !== undefined) start.name = source.name;
    if (source.timestamp !== undefined) start.timestamp = source.timestamp;
    if (lane !== undefined) start.subagentRunId = lane;
    emit(start as AgentEvent);
    return messageId;
  };

  const content = (kind: EntityKind, messageId: string, delta: string, source: Record<string, unknown>) => {
    emit(copyBaseFields(source, { type: kind.content, messageId, delta }) as AgentEvent);
  };

  // A chunk, or an explicit CONTENT (which is a chunk with an id). Runs once per token.
  const onChunk = (event: Record<string, unknown>, kind: EntityKind, type: string, explicit: boolean) => {
    // Read by name: a read through a variable key is slow.
    const producerId = explicit ? requiredString(event, 'messageId') : stringField(event, 'messageId', event.messageId);
    const delta = explicit ? requiredString(event, 'delta') : stringField(event, 'delta', event.delta);
    if (delta === undefined || delta === '') return;
    const lane = laneOf(event);
    const state = laneState(lane);
    closeKinds(lane, state, closedBy.get(kind)!);
    const current = state[kind.name as Slot];
    if (current !== undefined && (producerId === undefined || ids.wireId(producerId) === current)) {
      if (explicit && producerId === current) return emit(event as AgentEvent);
      return content(kind, current, delta, event);
    }
    if (current !== undefined) close(lane, state, kind);
    const messageId = open(lane, state, kind, type, producerId, event);
    content(kind, messageId, delta, event);
  };

  const onStart = (event: Record<string, unknown>, kind: EntityKind, type: string) => {
    const producerId = requiredString(event, 'messageId');
    const lane = laneOf(event);
    const state = laneState(lane);
    closeKinds(lane, state, closedBy.get(kind)!);
    const current = state[kind.name as Slot];
    if (current !== undefined && current === ids.wireId(producerId)) {
      return diagnose({ message: `Dropped a second ${type} for message '${producerId}', which is already open. Send one START per message.`, event });
    }
    if (current !== undefined) close(lane, state, kind);
    open(lane, state, kind, type, producerId, event, event as AgentEvent);
  };

  const onEnd = (event: Record<string, unknown>, kind: EntityKind, type: string) => {
    const producerId = requiredString(event, 'messageId');
    const lane = laneOf(event);
    const state = laneState(lane);
    const messageId = ids.wireId(producerId);
    if (state[kind.name as Slot] === messageId) {
      return close(lane, state, kind, messageId === producerId ? (event as AgentEvent) : ({ ...event, messageId } as AgentEvent));
    }
    assertNotOpenElsewhere(type, producerId, messageId, lane);
    diagnose({ message: `Dropped ${type} for message '${producerId}': no such message is open in ${describeLane(lane)}. End a message once, after its START.`, event });
  };

  // An explicit REASONING_START: spans keep the producer's id, which must be the lane's own.
  const onSpanStart = (event: Record<string, unknown>) => {
    const messageId = requiredString(event, 'messageId');
    const lane = laneOf(event);
    const state = laneState(lane);
    if (state.reasoning === messageId) {
      return diagnose({ message: `Dropped a second REASONING_START for span '${messageId}', which is already open.`, event });
    }
    if (ids.hasOwner(messageId) && ids.ownerOf(messageId) !== lane) {
      throw new AguiRxError(
        'INVALID_EVENT',
        `REASONING_START from ${describeLane(lane)} opens span '${messageId}', an id ${describeLane(ids.ownerOf(messageId))} already uses. Give each lane's reasoning its own messageId.`,
      );
    }
    closeKinds(lane, state, closedBy.get(span)!);
    if (state.reasoning !== undefined) close(lane, state, span);
    ids.own(messageId, lane);
    state.reasoning = messageId;
    emit(event as AgentEvent);
  };

  const onSpanEnd = (event: Record<string, unknown>) => {
    const messageId = requiredString(event, 'messageId');
    const lane = laneOf(event);
    const state = laneState(lane);
    if (state.reasoning !== messageId) {
      return diagnose({ message: `Dropped REASONING_END for span '${messageId}': no such span is open in ${describeLane(lane)}.`, event });
    }
    if (state.reasoningMessage !== undefined) close(lane, state, thought);
    close(lane, state, span, event as AgentEvent);
  };

  return {
    next(event) {
      const type = eventTypeOf(event);
      const fields = event as unknown as Record<string, unknown>;
      const entity = entityEvents.get(type);
      if (entity !== undefined) {
        const kind = entity.kind;
        if (kind === text || kind === thought) {
          switch (entity.role) {
            case 'chunk':
              return onChunk(fields, kind, type, false);
            case 'content':
              return onChunk(fields, kind, type, true);
            case 'start':
              return onStart(fields, kind, type);
            case 'end':
              return onEnd(fields, kind, type);
          }
        }
        if (kind === span) return entity.role === 'start' ? onSpanStart(fields) : onSpanEnd(fields);
        // What opens a tool call (its START or a chunk) closes what the table says, if the lane has any.
        if (kind === entityKind.toolCall && (entity.role === 'start' || entity.role === 'chunk')) {
          const lane = laneOf(fields);
          const state = lanes.get(lane);
          if (state !== undefined) closeKinds(lane, state, closedBy.get(kind)!);
        }
      }
      const boundary = turnBoundaries.get(type);
      // A subagent's SUBAGENT_FINISHED / ERROR names its own lane in `subagentRunId`.
      if (boundary === 'run') closeAll();
      else if (boundary !== undefined) closeLane(laneOf(fields));
      emit(event);
    },
    closeAll,
  };
}
