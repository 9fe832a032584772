import { EventType, type RunFinishedOutcome } from '@ag-ui/core';
import {
  copyBaseFields,
  describeLane,
  laneFields,
  laneOf,
  optionalString,
  parentMessageIdOf,
  requiredString,
  stringField,
  type AgentEvent,
  type Lane,
} from '../protocol/agentEvent.js';
import type { DiagnosticHandler } from '../protocol/diagnostics.js';
import { AguiRxError } from '../protocol/errors.js';
import { mintUnused, type IdGenerator } from '../protocol/generateId.js';
import { withPendingToolCalls } from '../protocol/pendingToolCalls.js';
import { closesCompleteCallsOnly, entityEvents, entityKind, turnBoundaries } from '../protocol/table.js';
import { unfinishedArgumentsError, type StreamedCall } from '../protocol/cutToolCalls.js';
import { toolResultContent } from '../protocol/toolResultContent.js';
import { createEntityIds, type EntityIds } from './ids.js';
import { createIdTable, type IdTable } from './idTable.js';
import { appendArguments, createArgumentsText, isArgumentsComplete, isCompleteJson, type ArgumentsText } from './json.js';
import { recordType } from '../protocol/recordType.js';
import { copyWith } from '../protocol/values.js';

/** An input event, read by field name. */
type Fields = Record<string, unknown>;

/** What {@link trackToolCalls} needs: where its output and its reports go, and how ids are made. */
export interface ToolCallTrackerOptions {
  /** Mints tool call ids, parent message ids and TOOL_CALL_RESULT message ids. */
  mint: IdGenerator;
  /** Receives every event to send, in order: the input events, completed, and the closers of calls. */
  out: { next(event: AgentEvent): void };
  /** Told about each event dropped to keep the stream valid (a late TOOL_CALL_ARGS, say). */
  diagnose: DiagnosticHandler;
}

/**
 * The tool calls of one subscription: takes each input event and sends what goes on the wire in
 * its place through `emit`. Every method throws an `INVALID_EVENT` {@link AguiRxError} for an
 * event that cannot be repaired; the events sent before the throw stay sent. Call them as methods
 * (`calls.pass(type, event)`): they are shared, and read the state of the tracker they are called on.
 */
export interface ToolCallTracker {
  /** TOOL_CALL_CHUNK: opens a call (START, then ARGS for a non-empty delta) or continues one (ARGS). */
  chunk(event: Fields): void;
  /** TOOL_CALL_START: opens a call, under a fresh id when the producer's was used; a second START for an open call is dropped. */
  start(event: Fields): void;
  /** TOOL_CALL_ARGS: sent for an open call, dropped after its end, an error for a call never started. */
  args(event: Fields): void;
  /** TOOL_CALL_END: closes the call (ARGS `"{}"` first if it got none); dropped when no such call is open (in silence when the toolkit already ended it at a boundary). */
  end(event: Fields): void;
  /** TOOL_CALL_RESULT: closes its call and the lane's turn, and gets a `messageId` and text content. */
  result(event: Fields): void;
  /** Any other event of type `type`: closes the calls and turns it ends, then sends it (RUN_FINISHED with the run's pending ids). */
  pass(type: string, event: Fields): void;
  /** Closes every open call: upstream failed. */
  closeAll(): void;
  /** Whether a call is open: until none is, text and reasoning content may close one. */
  hasOpenCalls(): boolean;
  /**
   * Closes every open call, then throws an `INCOMPLETE_STREAM` {@link AguiRxError} when a call
   * waiting for a result has arguments that are not complete JSON: upstream completed.
   */
  finish(): void;
}

/** An open tool call. */
interface OpenCall {
  lane: Lane;
  /** Whether any TOOL_CALL_ARGS was sent. */
  hasArgs: boolean;
  /** The tool's name, for the error that names a cut call. */
  name: string;
  /** The arguments sent so far: a call whose arguments are complete JSON cannot be continued by a new named chunk. */
  args: ArgumentsText;
}

// The events that end their lane's complete tool calls (text and reasoning, by the table's
// closesInLane and closesCompleteCallsOnly): a start always, content and chunks only when they carry content.
const callClosers = new Map<string, 'start' | 'content'>();
for (const [type, { kind, role }] of entityEvents) {
  if (role !== 'end' && kind.closesInLane.includes('toolCall')) callClosers.set(type, role === 'start' ? 'start' : 'content');
}
const messageStart = entityKind.textMessage.start;
const textContent = entityKind.textMessage.content;

/** One subscription's tool calls: the state the functions below share (one record, not a closure per helper). */
interface ToolCalls {
  readonly mint: IdGenerator;
  readonly out: { next(event: AgentEvent): void };
  readonly diagnose: DiagnosticHandler;
  /**
   * Open calls by wire id, in open order.
   * It and the other tables of calls are made at the first call: most runs never open one.
   */
  open: Map<string, OpenCall> | undefined;
  /** Every call id sent (an ended one is used and not open), and the fresh ids of reused ones. Made at the first call, as the tables are. */
  ids: EntityIds | undefined;
  /** Calls started in this run and not yet answered by a TOOL_CALL_RESULT. */
  pending: Set<string> | undefined;
  /** The lane's latest call, continued by chunks without an id (kept once ended: their late ARGS are dropped). */
  latest: Map<Lane, string> | undefined;
  /** The assistant message of the parent agent's current turn, parent of its tool calls. */
  turnMessage: string | undefined;
  /** The same for each subagent lane, made for the first one: most runs have none. */
  subagentTurnMessages: Map<string, string> | undefined;
  /** The lane of each message seen: a call's parent must be a message of the call's own lane. Made at the first message. */
  messageLane: IdTable<Lane> | undefined;
  /** Calls the toolkit ended before their producer did (at a boundary): the producer's own END, when it comes, is already sent. */
  endedEarly: Set<string> | undefined;
  /** Ended calls of this run whose arguments are not JSON, until their result: a run cannot finish with one waiting. */
  unfinished: Map<string, StreamedCall> | undefined;
}

/**
 * Creates the tool call bookkeeping of one subscription (the rules are `toolCallCorrelator`'s):
 * open calls and the ids used in the run, the lane's latest call (continued by chunks without an
 * id), the turn's parent message, and the calls still waiting for a result.
 */
export function trackToolCalls({ mint, out, diagnose }: ToolCallTrackerOptions): ToolCallTracker {
  // A plain record of its state; the methods are on its prototype (`trackerMethods`).
  const t = new ToolCallsRecord();
  t.mint = mint;
  t.out = out;
  t.diagnose = diagnose;
  t.open = undefined;
  t.ids = undefined;
  t.pending = undefined;
  t.latest = undefined;
  t.turnMessage = undefined;
  t.subagentTurnMessages = undefined;
  t.messageLane = undefined;
  t.endedEarly = undefined;
  t.unfinished = undefined;
  return ToolCallsRecord.shaped(t) as unknown as ToolCallTracker;
}

// The tracker's methods, shared by every tracker: its prototype, so that a tracker holds only its fields (no closure per method).
const trackerMethods: ToolCallTracker = Object.freeze({
  chunk(this: ToolCalls, event: Fields) {
    const t = this;
    // Read by name: this runs once per token of the arguments.
    const producerId = stringField(event, 'toolCallId', event.toolCallId);
    const toolCallName = stringField(event, 'toolCallName', event.toolCallName);
    const delta = stringField(event, 'delta', event.delta);
    const lane = laneOf(event);
    const known = producerId === undefined ? (toolCallName === undefined ? t.latest?.get(lane) : undefined) : wireIdOf(t, producerId);
    if (known !== undefined) {
      const call = t.open?.get(known);
      // A named chunk for an open call whose arguments are already complete JSON is a second,
      // parallel call under the same id (providers that use the function name as the id).
      const parallel = call !== undefined && toolCallName !== undefined && isArgumentsComplete(call.args);
      if (call !== undefined && !parallel) {
        if (call.lane !== lane) {
          if (lane !== undefined) throw wrongLane('TOOL_CALL_CHUNK', known, call.lane, lane);
          // An untagged chunk continues the call in its opener's lane (AG-UI spec 1.1, Subagents, Ownership).
          return sendArgs(t, known, call, delta, copyWith(event, { subagentRunId: call.lane }));
        }
        return sendArgs(t, known, call, delta, event);
      }
      if (call === undefined && isUsed(t, known) && toolCallName === undefined) return lateArgs(t, 'TOOL_CALL_CHUNK', producerId ?? known, delta, event);
    }
    if (toolCallName === undefined) {
      throw new AguiRxError(
        'INVALID_EVENT',
        producerId === undefined
          ? `TOOL_CALL_CHUNK has no toolCallId and no tool call is open in ${describeLane(lane)}. The first chunk of a call needs a toolCallName (and ideally a toolCallId).`
          : `TOOL_CALL_CHUNK opens tool call '${producerId}' without a toolCallName. Put the tool's name on the first chunk of each call.`,
      );
    }
    const toolCallId = (t.ids ??= createEntityIds(t.mint)).claim(producerId, lane, false).id;
    const parentMessageId = parentOf(t, lane, parentMessageIdOf(event));
    const call = register(t, toolCallId, lane, toolCallName);
    const start: Fields = { type: EventType.TOOL_CALL_START, toolCallId, toolCallName, parentMessageId };
    if (event.timestamp !== undefined) start.timestamp = event.timestamp;
    // As the client's own chunk expansion does: a first chunk without arguments would lose it otherwise.
    if (event.metadata !== undefined) start.metadata = event.metadata;
    if (lane !== undefined) start.subagentRunId = lane;
    t.out.next(start as AgentEvent);
    sendArgs(t, toolCallId, call, delta, event);
  },

  start(this: ToolCalls, event: Fields) {
    const t = this;
    const producerId = requiredString(event, 'toolCallId');
    const toolCallName = requiredString(event, 'toolCallName');
    const lane = laneOf(event);
    if (t.open?.has(wireIdOf(t, producerId))) {
      return t.diagnose({ message: `Dropped a second TOOL_CALL_START for tool call '${producerId}', which is already open. Send one START per call.`, event });
    }
    const toolCallId = (t.ids ??= createEntityIds(t.mint)).claim(producerId, lane, false).id;
    const parentMessageId = parentMessageIdOf(event);
    if (parentMessageId !== undefined) assertParentLane(t, parentMessageId, lane);
    if (parentMessageId !== undefined && turnMessageOf(t, lane) === undefined) setTurnMessage(t, lane, parentMessageId);
    register(t, toolCallId, lane, toolCallName);
    t.out.next(withWireId(event, producerId, toolCallId));
  },

  args(this: ToolCalls, event: Fields) {
    const t = this;
    const producerId = requiredString(event, 'toolCallId');
    const delta = requiredString(event, 'delta');
    const toolCallId = wireIdOf(t, producerId);
    const call = t.open?.get(toolCallId);
    if (call !== undefined) {
      const lane = laneOf(event);
      if (call.lane !== lane && lane !== undefined) throw wrongLane('TOOL_CALL_ARGS', producerId, call.lane, lane);
      if (delta === '') return;
      call.hasArgs = true;
      appendArguments(call.args, delta);
      // An untagged continuation is the opener's (AG-UI spec 1.1, Subagents, Ownership): sent with its tag.
      return t.out.next(withWireId(call.lane === lane ? event : copyWith(event, { subagentRunId: call.lane }), producerId, toolCallId));
    }
    if (isUsed(t, toolCallId)) return lateArgs(t, 'TOOL_CALL_ARGS', producerId, delta, event);
    throw new AguiRxError('INVALID_EVENT', `TOOL_CALL_ARGS for tool call '${producerId}', which was never started. Send TOOL_CALL_START (or a TOOL_CALL_CHUNK with a toolCallName) first.`);
  },

  end(this: ToolCalls, event: Fields) {
    const t = this;
    const producerId = requiredString(event, 'toolCallId');
    const toolCallId = wireIdOf(t, producerId);
    const call = t.open?.get(toolCallId);
    if (call === undefined) {
      if (t.endedEarly?.delete(toolCallId)) return;
      return t.diagnose({ message: `Dropped TOOL_CALL_END for tool call '${producerId}': no such call is open. End a call once, after its START.`, event });
    }
    const lane = laneOf(event);
    if (call.lane !== lane && lane !== undefined) throw wrongLane('TOOL_CALL_END', producerId, call.lane, lane);
    close(t, toolCallId, call, withWireId(call.lane === lane ? event : copyWith(event, { subagentRunId: call.lane }), producerId, toolCallId));
  },

  result(this: ToolCalls, event: Fields) {
    const t = this;
    const producerId = requiredString(event, 'toolCallId');
    const lane = laneOf(event);
    const toolCallId = wireIdOf(t, producerId);
    const call = t.open?.get(toolCallId);
    if (call !== undefined) close(t, toolCallId, call);
    // A result means the model's turn is over: text after it is a new assistant message.
    setTurnMessage(t, lane, undefined);
    t.pending?.delete(toolCallId);
    // Answered: whatever its arguments were, the tool has run.
    t.unfinished?.delete(toolCallId);
    // Copied (see copyWith): the messageId minted below is a field the copy lacks.
    const result: Fields = copyWith(event, { toolCallId, content: toolResultContent(event.content, producerId) });
    if (optionalString(event, 'messageId') === undefined) result.messageId = mintMessageId(t);
    t.out.next(result as AgentEvent);
  },

  pass(this: ToolCalls, type: string, event: Fields) {
    const t = this;
    // The most frequent event, which only closes calls: with none open it passes without a lookup.
    t.out.next(type === textContent && (t.open === undefined || t.open.size === 0) ? (event as AgentEvent) : passing(t, type, event));
  },

  closeAll(this: ToolCalls) {
    closeAll(this);
  },

  hasOpenCalls(this: ToolCalls) {
    return this.open !== undefined && this.open.size > 0;
  },

  finish(this: ToolCalls) {
    const t = this;
    closeAll(t);
    assertArgumentsWhole(t);
  },
});
const ToolCallsRecord = recordType<ToolCalls>(trackerMethods);

// The wire id of the producer's call `producerId` (its own before the run's first call).
const wireIdOf = (t: ToolCalls, producerId: string): string => (t.ids === undefined ? producerId : t.ids.wireId(producerId));

// Whether the run sent a call under `toolCallId` already.
const isUsed = (t: ToolCalls, toolCallId: string): boolean => t.ids !== undefined && t.ids.isUsed(toolCallId);

// The input event, under the wire id its call was given.
function withWireId(event: Fields, producerId: string, toolCallId: string): AgentEvent {
  return (toolCallId === producerId ? event : { ...event, toolCallId }) as AgentEvent;
}

function close(t: ToolCalls, toolCallId: string, call: OpenCall, explicitEnd?: AgentEvent) {
  if (!call.hasArgs) t.out.next({ type: EventType.TOOL_CALL_ARGS, toolCallId, delta: '{}', ...laneFields(call.lane) });
  // Checked once per call, at its end: a scalar (or text after the value) is parsed here only.
  else if (!isArgumentsComplete(call.args) && !isCompleteJson(call.args.text)) (t.unfinished ??= new Map()).set(toolCallId, { id: toolCallId, name: call.name, args: call.args.text });
  t.open!.delete(toolCallId);
  if (explicitEnd === undefined) (t.endedEarly ??= new Set()).add(toolCallId);
  t.out.next(explicitEnd ?? { type: EventType.TOOL_CALL_END, toolCallId, ...laneFields(call.lane) });
}

// With `completeOnly` (a step boundary, text, reasoning), a call whose arguments are still incomplete stays open.
function closeLane(t: ToolCalls, lane: Lane, completeOnly: boolean) {
  if (t.open === undefined || t.open.size === 0) return;
  for (const [toolCallId, call] of t.open) if (call.lane === lane && (!completeOnly || isArgumentsComplete(call.args))) close(t, toolCallId, call);
}

function closeAll(t: ToolCalls) {
  if (t.open === undefined) return;
  for (const [toolCallId, call] of t.open) close(t, toolCallId, call);
}

const isCancelled = (outcome: unknown): boolean => typeof outcome === 'object' && outcome !== null && (outcome as { type?: unknown }).type === 'cancelled';

// The run is over: a call still waiting for a result must have arguments a tool can run on.
function assertArgumentsWhole(t: ToolCalls) {
  if (t.unfinished === undefined || t.unfinished.size === 0) return;
  const calls = [...t.unfinished.values()];
  t.unfinished.clear();
  throw unfinishedArgumentsError(calls);
}

function assertParentLane(t: ToolCalls, parentMessageId: string, lane: Lane) {
  const owner = t.messageLane?.get(parentMessageId);
  if (t.messageLane?.has(parentMessageId) === true && owner !== lane) {
    throw new AguiRxError(
      'INVALID_EVENT',
      `A tool call of ${describeLane(lane)} names parentMessageId '${parentMessageId}', a message of ${describeLane(owner)}. A tool call belongs to a message of its own lane: fix its subagentRunId or its parentMessageId.`,
    );
  }
}

function register(t: ToolCalls, toolCallId: string, lane: Lane, name: string) {
  const call: OpenCall = { lane, hasArgs: false, name, args: createArgumentsText() };
  (t.open ??= new Map()).set(toolCallId, call);
  (t.pending ??= new Set()).add(toolCallId);
  (t.latest ??= new Map()).set(lane, toolCallId);
  return call;
}

/** The assistant message of `lane`'s current turn, if any. */
function turnMessageOf(t: ToolCalls, lane: Lane): string | undefined {
  return lane === undefined ? t.turnMessage : t.subagentTurnMessages?.get(lane);
}

/** Sets (or, with `undefined`, ends) `lane`'s current turn message. */
function setTurnMessage(t: ToolCalls, lane: Lane, messageId: string | undefined): void {
  if (lane === undefined) t.turnMessage = messageId;
  else if (messageId !== undefined) (t.subagentTurnMessages ??= new Map()).set(lane, messageId);
  else t.subagentTurnMessages?.delete(lane);
}

// A message id for what the run did not name (a result's message, a call's parent): none of the run's messages has it.
const mintMessageId = (t: ToolCalls): string => mintUnused(t.mint, (id) => t.messageLane?.has(id) === true);

function parentOf(t: ToolCalls, lane: Lane, given: string | undefined) {
  if (given !== undefined) assertParentLane(t, given, lane);
  let parent = turnMessageOf(t, lane);
  // A given parent names a turn that had no message yet, so the turn's later calls join it.
  if (parent === undefined) setTurnMessage(t, lane, (parent = given ?? mintMessageId(t)));
  return given ?? parent;
}

function sendArgs(t: ToolCalls, toolCallId: string, call: OpenCall, delta: string | undefined, source: Fields) {
  if (delta === undefined || delta === '') return;
  call.hasArgs = true;
  appendArguments(call.args, delta);
  t.out.next(copyBaseFields(source, { type: EventType.TOOL_CALL_ARGS, toolCallId, delta }) as AgentEvent);
}

function lateArgs(t: ToolCalls, type: string, producerId: string, delta: string | undefined, event: Fields) {
  if (delta === undefined || delta === '') return;
  t.diagnose({ message: `Dropped ${type} for tool call '${producerId}': the call already ended (its arguments were closed). Send all arguments before TOOL_CALL_END or the call's result.`, event });
}

// What an event other than a tool call's closes and ends, and the event to send in its place.
function passing(t: ToolCalls, type: string, event: Fields): AgentEvent {
  const closer = callClosers.get(type);
  if (closer !== undefined) {
    // Only content ends the calls: an empty chunk says nothing. A call still being written stays open.
    if (t.open !== undefined && t.open.size > 0 && (closer === 'start' || (typeof event.delta === 'string' && event.delta !== ''))) closeLane(t, laneOf(event), closesCompleteCallsOnly.has(type));
    if (type === messageStart) {
      const lane = laneOf(event);
      const messageId = requiredString(event, 'messageId');
      (t.messageLane ??= createIdTable()).set(messageId, lane);
      if (event.role === undefined || event.role === 'assistant') setTurnMessage(t, lane, messageId);
    }
    return event as AgentEvent;
  }
  const boundary = turnBoundaries.get(type);
  if (boundary === 'lane' || boundary === 'subagent') {
    // A step's or subagent's end ends the turn of its lane (a subagent's lane is its subagentRunId).
    const lane = laneOf(event);
    closeLane(t, lane, closesCompleteCallsOnly.has(type));
    setTurnMessage(t, lane, undefined);
  } else if (boundary === 'run') {
    closeAll(t);
    t.turnMessage = undefined;
    t.subagentTurnMessages = undefined;
    if (type === EventType.RUN_FINISHED) {
      // A cancelled run runs none of its calls (no result is awaited): a call cut by the cancel is
      // no broken output, as when the run's signal cancels it (mapRunLifecycle).
      if (isCancelled(event.outcome)) t.unfinished?.clear();
      else assertArgumentsWhole(t);
      const outcome = withPendingToolCalls(event.outcome as RunFinishedOutcome | undefined, t.pending === undefined ? [] : [...t.pending]);
      // Pending calls are the run's: a next run reports its own.
      t.pending?.clear();
      return copyWith(event, { outcome }) as AgentEvent;
    }
    // A run's start or failure forgets its calls; a MESSAGES_SNAPSHOT only ends the turn.
    if (type !== EventType.MESSAGES_SNAPSHOT) {
      t.pending?.clear();
      t.latest?.clear();
      t.unfinished?.clear();
    }
  }
  return event as AgentEvent;
}

function wrongLane(type: string, toolCallId: string, opener: Lane, lane: Lane): AguiRxError {
  return new AguiRxError(
    'INVALID_EVENT',
    `${type} for tool call '${toolCallId}' comes from ${describeLane(lane)}, but the call was started by ${describeLane(opener)}. Set the same subagentRunId on every event of a call.`,
  );
}
