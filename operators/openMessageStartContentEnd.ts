import { EventType } from '@ag-ui/core';
import type { OperatorFunction } from 'rxjs';
import {
  copyBaseFields,
  describeLane,
  eventTypeOf,
  laneFields,
  laneOf,
  optionalString,
  requiredString,
  stringField,
  type AgentEvent,
  type Lane,
} from '../lib/protocol/agentEvent.js';
import { warnDiagnostic, type DiagnosticHandler } from '../lib/protocol/diagnostics.js';
import { AguiRxError } from '../lib/protocol/errors.js';
import { generateId as defaultGenerateId, type IdGenerator } from '../lib/protocol/generateId.js';
import { createOperator } from '../lib/protocol/createOperator.js';

/** Options of {@link openMessageStartContentEnd}. */
export interface OpenMessageStartContentEndOptions {
  /** Mints ids for messages whose chunks carry none, or whose id was already closed. Default: nanoid. */
  generateId?: IdGenerator;
  /** Told about each explicit event dropped or repaired to keep the stream valid. Default: `console.warn`. */
  onDiagnostic?: DiagnosticHandler;
}

/** The events of one kind of streamed message: text or reasoning. */
interface MessageKind {
  name: 'text' | 'reasoning';
  start: EventType.TEXT_MESSAGE_START | EventType.REASONING_MESSAGE_START;
  content: EventType.TEXT_MESSAGE_CONTENT | EventType.REASONING_MESSAGE_CONTENT;
  end: EventType.TEXT_MESSAGE_END | EventType.REASONING_MESSAGE_END;
}

const text: MessageKind = {
  name: 'text',
  start: EventType.TEXT_MESSAGE_START,
  content: EventType.TEXT_MESSAGE_CONTENT,
  end: EventType.TEXT_MESSAGE_END,
};
const reasoning: MessageKind = {
  name: 'reasoning',
  start: EventType.REASONING_MESSAGE_START,
  content: EventType.REASONING_MESSAGE_CONTENT,
  end: EventType.REASONING_MESSAGE_END,
};

/** What is open in one lane (the parent agent, or one subagent). */
interface LaneState {
  text: string | undefined;
  reasoning: string | undefined;
  /** The open REASONING_START span. */
  span: string | undefined;
}


/**
 * Turns streamed text and reasoning chunks into START / CONTENT / END, minting ids where missing.
 *
 * Each lane (a `subagentRunId`; absent = the parent agent) has at most one open text message and
 * one open reasoning message; whatever ends the turn closes them.
 *
 * ```text
 * source:  --c1--c1--c2--r----|     c1, c2 = TEXT_MESSAGE_CHUNK of messages 1 and 2
 * output:  --(SC)-C--(ESC)-(Er)-|  r = TOOL_CALL_RESULT (ends the turn)
 *          S = TEXT_MESSAGE_START, C = TEXT_MESSAGE_CONTENT, E = TEXT_MESSAGE_END
 * ```
 *
 * Rules:
 * 1. TEXT_MESSAGE_CHUNK opens a message (START, `role` default `assistant`, id minted when absent)
 *    and sends CONTENT; a chunk with another id closes the lane's open message first.
 * 2. REASONING_MESSAGE_CHUNK does the same with REASONING_START, REASONING_MESSAGE_START/CONTENT,
 *    and closes with REASONING_MESSAGE_END, REASONING_END. REASONING_ENCRYPTED_VALUE passes through.
 * 3. Text closes the lane's reasoning and reasoning closes its text; a tool call closes reasoning.
 * 4. TOOL_CALL_RESULT, STEP_STARTED/FINISHED and SUBAGENT_FINISHED/ERROR close the lane;
 *    RUN_STARTED/FINISHED/ERROR, MESSAGES_SNAPSHOT and upstream completion or error close every lane.
 * 5. Empty deltas open nothing and send nothing.
 * 6. Explicit START/CONTENT/END pass through unchanged and are tracked. An id is never reused once
 *    ended: content for it opens a new message with a minted id. A duplicate START, or an END for
 *    nothing open, is dropped and reported through `onDiagnostic`.
 * 7. A non-string `delta` or `messageId`, or content for a message open in another lane, is an
 *    `INVALID_EVENT` error (RUN_ERROR under `mapRunLifecycle`).
 *
 * ## Example
 *
 * ```ts
 * of<AgentEvent[]>(
 *   { type: EventType.TEXT_MESSAGE_CHUNK, delta: 'Hel' },
 *   { type: EventType.TEXT_MESSAGE_CHUNK, delta: 'lo' },
 * ).pipe(openMessageStartContentEnd()).subscribe((e) => console.log(e.type));
 * // results: TEXT_MESSAGE_START, TEXT_MESSAGE_CONTENT, TEXT_MESSAGE_CONTENT, TEXT_MESSAGE_END
 * ```
 *
 * @param options Id generator and diagnostics handler.
 * @return A function that returns an Observable in which every text and reasoning message is
 * started, streamed and ended explicitly; other events pass through.
 */
export function openMessageStartContentEnd(options: OpenMessageStartContentEndOptions = {}): OperatorFunction<AgentEvent, AgentEvent> {
  const mint = options.generateId ?? defaultGenerateId;
  const diagnose = options.onDiagnostic ?? warnDiagnostic;
  return createOperator<AgentEvent, AgentEvent>((subscriber) => {
    const lanes = new Map<Lane, LaneState>();
    // Open message id -> its lane and kind, across lanes and kinds.
    const openLane = new Map<string, { lane: Lane; kind: MessageKind }>();
    // Every message id sent so far: an ended id is never opened again.
    const used = new Set<string>();
    // Every message and span id sent so far, with its lane: an id belongs to one lane for the whole
    // run, as the client checks (a span and the message inside it may share an id).
    const owners = new Map<string, Lane>();
    // Producer id -> the fresh id it was given because the producer's id was already used.
    const remap = new Map<string, string>();
    const emit = (event: AgentEvent) => subscriber.next(event);

    // The parent agent's lane, kept at hand: nearly every event is its.
    let parentLane: LaneState | undefined;
    const laneState = (lane: Lane): LaneState => {
      if (lane === undefined && parentLane !== undefined) return parentLane;
      let state = lanes.get(lane);
      if (state === undefined) lanes.set(lane, (state = { text: undefined, reasoning: undefined, span: undefined }));
      if (lane === undefined) parentLane = state;
      return state;
    };

    const closeMessage = (lane: Lane, state: LaneState, kind: MessageKind, explicitEnd?: AgentEvent) => {
      const messageId = state[kind.name] as string;
      state[kind.name] = undefined;
      openLane.delete(messageId);
      emit(explicitEnd ?? ({ type: kind.end, messageId, ...laneFields(lane) } as AgentEvent));
    };

    const closeReasoning = (lane: Lane, state: LaneState) => {
      if (state.reasoning !== undefined) closeMessage(lane, state, reasoning);
      if (state.span !== undefined) {
        emit({ type: EventType.REASONING_END, messageId: state.span, ...laneFields(lane) });
        state.span = undefined;
      }
    };

    const closeLane = (lane: Lane) => {
      const state = lanes.get(lane);
      if (state === undefined) return;
      if (state.text !== undefined) closeMessage(lane, state, text);
      closeReasoning(lane, state);
    };

    const closeAll = () => {
      for (const lane of lanes.keys()) closeLane(lane);
    };

    // Closes what a new message of `kind` ends in its lane: text ends reasoning and vice versa.
    const closeOtherKind = (lane: Lane, state: LaneState, kind: MessageKind) => {
      if (kind === text) closeReasoning(lane, state);
      else if (state.text !== undefined) closeMessage(lane, state, text);
    };

    const wireId = (producerId: string) => (remap.size === 0 ? producerId : (remap.get(producerId) ?? producerId));

    const assertNotOpenElsewhere = (type: string, producerId: string, messageId: string, lane: Lane) => {
      const opener = openLane.get(messageId);
      if (opener !== undefined) {
        throw new AguiRxError(
          'INVALID_EVENT',
          `${type} for message '${producerId}' comes from ${describeLane(lane)}, but that message is open as a ${opener.kind.name} message of ${describeLane(opener.lane)}. Give each message its own id, and set the same subagentRunId on every event of a message.`,
        );
      }
    };

    // Opens a message of `kind` in `lane` under the producer's id (or a fresh one if absent or used).
    const open = (lane: Lane, state: LaneState, kind: MessageKind, type: string, producerId: string | undefined, source: Record<string, unknown>, explicitStart?: AgentEvent) => {
      let messageId = producerId === undefined ? mint() : wireId(producerId);
      assertNotOpenElsewhere(type, producerId ?? messageId, messageId, lane);
      const owner = owners.get(messageId);
      if (used.has(messageId) || (owners.has(messageId) && owner !== lane)) {
        const fresh = mint();
        remap.set(producerId ?? messageId, fresh);
        if (explicitStart !== undefined || type === kind.content) {
          const why = used.has(messageId) ? 'which was already ended' : `which ${describeLane(owner)} uses`;
          diagnose({ message: `${type} reuses message id '${messageId}', ${why}; it was sent as a new message '${fresh}'. Use a new messageId for each message.`, event: source });
        }
        messageId = fresh;
      }
      used.add(messageId);
      owners.set(messageId, lane);
      openLane.set(messageId, { lane, kind });
      state[kind.name] = messageId;
      if (kind === reasoning && state.span === undefined && explicitStart === undefined) {
        state.span = messageId;
        emit({ type: EventType.REASONING_START, messageId, ...laneFields(lane) });
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

    const content = (kind: MessageKind, messageId: string, delta: string, source: Record<string, unknown>) => {
      emit(copyBaseFields(source, { type: kind.content, messageId, delta }) as AgentEvent);
    };

    // TEXT_MESSAGE_CHUNK / REASONING_MESSAGE_CHUNK, and explicit CONTENT (which is a chunk with an id).
    const onChunk = (event: Record<string, unknown>, kind: MessageKind, type: string, explicit: boolean) => {
      // Read by name: this runs once per token.
      const producerId = explicit ? requiredString(event, 'messageId') : stringField(event, 'messageId', event.messageId);
      const delta = explicit ? requiredString(event, 'delta') : stringField(event, 'delta', event.delta);
      if (delta === undefined || delta === '') return;
      const lane = laneOf(event);
      const state = laneState(lane);
      closeOtherKind(lane, state, kind);
      const current = state[kind.name];
      if (current !== undefined && (producerId === undefined || wireId(producerId) === current)) {
        if (explicit && producerId === current) return emit(event as AgentEvent);
        return content(kind, current, delta, event);
      }
      if (current !== undefined) closeMessage(lane, state, kind);
      const messageId = open(lane, state, kind, type, producerId, event);
      content(kind, messageId, delta, event);
    };

    const onStart = (event: Record<string, unknown>, kind: MessageKind, type: string) => {
      const producerId = requiredString(event, 'messageId');
      const lane = laneOf(event);
      const state = laneState(lane);
      closeOtherKind(lane, state, kind);
      if (state[kind.name] !== undefined && state[kind.name] === wireId(producerId)) {
        return diagnose({ message: `Dropped a second ${type} for message '${producerId}', which is already open. Send one START per message.`, event });
      }
      if (state[kind.name] !== undefined) closeMessage(lane, state, kind);
      open(lane, state, kind, type, producerId, event, event as AgentEvent);
    };

    const onEnd = (event: Record<string, unknown>, kind: MessageKind, type: string) => {
      const producerId = requiredString(event, 'messageId');
      const lane = laneOf(event);
      const state = laneState(lane);
      const messageId = wireId(producerId);
      if (state[kind.name] === messageId) {
        return closeMessage(lane, state, kind, messageId === producerId ? (event as AgentEvent) : ({ ...event, messageId } as AgentEvent));
      }
      assertNotOpenElsewhere(type, producerId, messageId, lane);
      diagnose({ message: `Dropped ${type} for message '${producerId}': no such message is open in ${describeLane(lane)}. End a message once, after its START.`, event });
    };

    return {
      next(event) {
        const type = eventTypeOf(event);
        const fields = event as unknown as Record<string, unknown>;
        switch (type) {
          case EventType.TEXT_MESSAGE_CHUNK:
            return onChunk(fields, text, type, false);
          case EventType.TEXT_MESSAGE_CONTENT:
            return onChunk(fields, text, type, true);
          case EventType.TEXT_MESSAGE_START:
            return onStart(fields, text, type);
          case EventType.TEXT_MESSAGE_END:
            return onEnd(fields, text, type);
          case EventType.REASONING_MESSAGE_CHUNK:
            return onChunk(fields, reasoning, type, false);
          case EventType.REASONING_MESSAGE_CONTENT:
            return onChunk(fields, reasoning, type, true);
          case EventType.REASONING_MESSAGE_START:
            return onStart(fields, reasoning, type);
          case EventType.REASONING_MESSAGE_END:
            return onEnd(fields, reasoning, type);
          case EventType.REASONING_START: {
            const messageId = requiredString(fields, 'messageId');
            const lane = laneOf(fields);
            const state = laneState(lane);
            if (state.span === messageId) {
              return diagnose({ message: `Dropped a second REASONING_START for span '${messageId}', which is already open.`, event });
            }
            if (owners.has(messageId) && owners.get(messageId) !== lane) {
              throw new AguiRxError(
                'INVALID_EVENT',
                `REASONING_START from ${describeLane(lane)} opens span '${messageId}', an id ${describeLane(owners.get(messageId))} already uses. Give each lane's reasoning its own messageId.`,
              );
            }
            if (state.text !== undefined) closeMessage(lane, state, text);
            closeReasoning(lane, state);
            owners.set(messageId, lane);
            state.span = messageId;
            return emit(event);
          }
          case EventType.REASONING_END: {
            const messageId = requiredString(fields, 'messageId');
            const lane = laneOf(fields);
            const state = laneState(lane);
            if (state.span !== messageId) {
              return diagnose({ message: `Dropped REASONING_END for span '${messageId}': no such span is open in ${describeLane(lane)}.`, event });
            }
            if (state.reasoning !== undefined) closeMessage(lane, state, reasoning);
            state.span = undefined;
            return emit(event);
          }
          case EventType.TOOL_CALL_START:
          case EventType.TOOL_CALL_CHUNK: {
            const lane = laneOf(fields);
            const state = lanes.get(lane);
            if (state !== undefined) closeReasoning(lane, state);
            return emit(event);
          }
          case EventType.TOOL_CALL_RESULT:
          case EventType.STEP_STARTED:
          case EventType.STEP_FINISHED:
            closeLane(laneOf(fields));
            return emit(event);
          case EventType.SUBAGENT_FINISHED:
          case EventType.SUBAGENT_ERROR:
            closeLane(optionalString(fields, 'subagentRunId'));
            return emit(event);
          case EventType.RUN_STARTED:
          case EventType.RUN_FINISHED:
          case EventType.RUN_ERROR:
          case EventType.MESSAGES_SNAPSHOT:
            closeAll();
            return emit(event);
          default:
            return emit(event);
        }
      },
      flush: closeAll,
    };
  });
}
