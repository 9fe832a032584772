import { EventType, type RunFinishedOutcome } from '@ag-ui/core';
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
import { withPendingToolCalls } from '../lib/protocol/pendingToolCalls.js';
import { toolResultContent } from '../lib/protocol/toolResultContent.js';

/** Options of {@link toolCallCorrelator}. */
export interface ToolCallCorrelatorOptions {
  /** Mints tool call ids, parent message ids and TOOL_CALL_RESULT message ids. Default: nanoid. */
  generateId?: IdGenerator;
  /** Told about each event dropped or repaired to keep the stream valid (a late TOOL_CALL_ARGS, say). Default: `console.warn`. */
  onDiagnostic?: DiagnosticHandler;
}

/** An open tool call. */
interface OpenCall {
  lane: Lane;
  /** Whether any TOOL_CALL_ARGS was sent. */
  hasArgs: boolean;
  /** The arguments sent so far: a call whose arguments are complete JSON cannot be continued by a new named chunk. */
  args: string;
}

/** Whether a call's arguments so far are a complete JSON value. */
function isCompleteJson(text: string): boolean {
  // Most calls are checked on every named chunk while their arguments stream in: a text that
  // cannot end a JSON value is refused without the cost of a failed parse.
  if (!mayEndJsonValue(text)) return false;
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** Whether `text`, once trimmed, begins and ends as one JSON value could (`{`…`}`, `[`…`]`, or a scalar). */
function mayEndJsonValue(text: string): boolean {
  let start = 0;
  let end = text.length - 1;
  while (start <= end && isJsonWhitespace(text.charCodeAt(start))) start++;
  while (end > start && isJsonWhitespace(text.charCodeAt(end))) end--;
  if (start > end) return false;
  const first = text.charCodeAt(start);
  const last = text.charCodeAt(end);
  if (first === 0x7b) return last === 0x7d; // { … }
  if (first === 0x5b) return last === 0x5d; // [ … ]
  return true;
}

function isJsonWhitespace(code: number): boolean {
  return code === 0x20 || code === 0x0a || code === 0x0d || code === 0x09;
}

/**
 * Turns tool-call chunks and results into TOOL_CALL_START / ARGS / END / RESULT with ids and parents.
 *
 * Several calls may be open at once (parallel tool calls), keyed by `toolCallId`; each closes at
 * its result or at the end of the turn.
 *
 * ```text
 * source:  --a1--b1--a2--b2--ra---|     a, b = TOOL_CALL_CHUNK of calls A and B (1 = first)
 * output:  --(SA)-(SB)-A--B--(ER)-(E|)  S = START (+ARGS), A/B = ARGS, E = END, R = RESULT
 * ```
 *
 * Rules:
 * 1. A TOOL_CALL_CHUNK with a new `toolCallId` (or none, with a `toolCallName`) opens a call:
 *    TOOL_CALL_START (id minted when absent), then TOOL_CALL_ARGS for its non-empty `delta`.
 *    Opening a call needs a `toolCallName`. A chunk without id continues the lane's latest call.
 *    A chunk naming the tool for an open id continues that call, unless the call's arguments are
 *    already complete JSON: then it starts a second call under a fresh id (providers that use the
 *    function name as the call id of parallel calls).
 * 2. `parentMessageId` defaults to the current turn's assistant message: the last TEXT_MESSAGE_START
 *    of the lane, else the first `parentMessageId` given in the turn, else an id minted for the turn.
 * 3. A call ends (TOOL_CALL_END) at its TOOL_CALL_RESULT, at the next text or reasoning in its lane,
 *    at a step boundary, at RUN_FINISHED/RUN_ERROR and when upstream completes or errors. A call
 *    that got no arguments is sent `"{}"` first: tool arguments are a JSON object.
 * 4. TOOL_CALL_RESULT gets a minted `messageId` when absent; content that is not a string or a
 *    list of AG-UI content parts is serialised to JSON text.
 * 5. TOOL_CALL_ARGS after the call's END (or a chunk without id after the lane's latest call ended)
 *    is dropped and reported through `onDiagnostic`.
 * 6. Calls of the run without a result are added to RUN_FINISHED `outcome.pendingToolCallIds`.
 *
 * ## Example
 *
 * ```ts
 * of<AgentEvent[]>(
 *   { type: EventType.TOOL_CALL_CHUNK, toolCallId: 'c1', toolCallName: 'search', delta: '{"q":' },
 *   { type: EventType.TOOL_CALL_CHUNK, toolCallId: 'c1', delta: '"rxjs"}' },
 *   { type: EventType.TOOL_CALL_RESULT, toolCallId: 'c1', content: { hits: 3 } },
 * ).pipe(toolCallCorrelator()).subscribe((e) => console.log(e.type));
 * // results: TOOL_CALL_START, TOOL_CALL_ARGS, TOOL_CALL_ARGS, TOOL_CALL_END, TOOL_CALL_RESULT
 * ```
 *
 * @param options Id generator and diagnostics handler.
 * @return A function that returns an Observable in which every tool call is started, streamed,
 * ended and answered explicitly; other events pass through.
 * @throws Nothing synchronously; a chunk that opens a call without a name, a non-string field or
 * content that cannot be serialised is an `INVALID_EVENT` error (RUN_ERROR under `mapRunLifecycle`).
 */
export function toolCallCorrelator(options: ToolCallCorrelatorOptions = {}): OperatorFunction<AgentEvent, AgentEvent> {
  const mint = options.generateId ?? defaultGenerateId;
  const diagnose = options.onDiagnostic ?? warnDiagnostic;
  return createOperator<AgentEvent, AgentEvent>((subscriber) => {
    // Open calls by id, in open order.
    const calls = new Map<string, OpenCall>();
    // Calls already ended: their late ARGS are dropped.
    const ended = new Set<string>();
    // Calls started in this run and not yet answered by a TOOL_CALL_RESULT.
    const pending = new Set<string>();
    // Producer id -> the fresh id of a new call that reused an ended call's id.
    const remap = new Map<string, string>();
    const wireId = (producerId: string) => (remap.size === 0 ? producerId : (remap.get(producerId) ?? producerId));
    // The lane's latest call, continued by chunks without an id (kept once ended: their late ARGS are dropped).
    const latest = new Map<Lane, string>();
    // The assistant message of the lane's current turn, parent of its tool calls.
    const turnMessage = new Map<Lane, string>();
    // The lane of each message seen: a call's parent must be a message of the call's own lane.
    const messageLane = new Map<string, Lane>();
    const emit = (event: AgentEvent) => subscriber.next(event);

    const close = (toolCallId: string, call: OpenCall, explicitEnd?: AgentEvent) => {
      if (!call.hasArgs) emit({ type: EventType.TOOL_CALL_ARGS, toolCallId, delta: '{}', ...laneFields(call.lane) });
      calls.delete(toolCallId);
      ended.add(toolCallId);
      emit(explicitEnd ?? { type: EventType.TOOL_CALL_END, toolCallId, ...laneFields(call.lane) });
    };

    const closeLane = (lane: Lane) => {
      if (calls.size === 0) return;
      for (const [toolCallId, call] of calls) if (call.lane === lane) close(toolCallId, call);
    };

    const closeAll = () => {
      for (const [toolCallId, call] of calls) close(toolCallId, call);
    };

    const endTurn = (lane: Lane) => {
      closeLane(lane);
      turnMessage.delete(lane);
    };

    const assertParentLane = (parentMessageId: string, lane: Lane) => {
      const owner = messageLane.get(parentMessageId);
      if (messageLane.has(parentMessageId) && owner !== lane) {
        throw new AguiRxError(
          'INVALID_EVENT',
          `A tool call of ${describeLane(lane)} names parentMessageId '${parentMessageId}', a message of ${describeLane(owner)}. A tool call belongs to a message of its own lane: fix its subagentRunId or its parentMessageId.`,
        );
      }
    };

    const register = (toolCallId: string, lane: Lane) => {
      const call: OpenCall = { lane, hasArgs: false, args: '' };
      calls.set(toolCallId, call);
      pending.add(toolCallId);
      latest.set(lane, toolCallId);
      return call;
    };

    // The id a new call is sent under: the producer's, unless absent or already used.
    const newCallId = (producerId: string | undefined) => {
      if (producerId === undefined) return mint();
      const toolCallId = wireId(producerId);
      if (!ended.has(toolCallId) && !calls.has(toolCallId)) return toolCallId;
      const fresh = mint();
      remap.set(producerId, fresh);
      return fresh;
    };

    const parentOf = (lane: Lane, given: string | undefined) => {
      if (given !== undefined) assertParentLane(given, lane);
      let parent = turnMessage.get(lane);
      // A given parent names a turn that had no message yet, so the turn's later calls join it.
      if (parent === undefined) turnMessage.set(lane, (parent = given ?? mint()));
      return given ?? parent;
    };

    const args = (toolCallId: string, call: OpenCall, delta: string | undefined, source: Record<string, unknown>) => {
      if (delta === undefined || delta === '') return;
      call.hasArgs = true;
      call.args += delta;
      emit(copyBaseFields(source, { type: EventType.TOOL_CALL_ARGS, toolCallId, delta }) as AgentEvent);
    };

    const onChunk = (event: Record<string, unknown>) => {
      // Read by name: this runs once per token of the arguments.
      const producerId = stringField(event, 'toolCallId', event.toolCallId);
      const toolCallName = stringField(event, 'toolCallName', event.toolCallName);
      const delta = stringField(event, 'delta', event.delta);
      const lane = laneOf(event);
      const known = producerId === undefined ? (toolCallName === undefined ? latest.get(lane) : undefined) : wireId(producerId);
      if (known !== undefined) {
        const call = calls.get(known);
        // A named chunk for an open call whose arguments are already complete JSON is a second,
        // parallel call under the same id (providers that use the function name as the id).
        const parallel = call !== undefined && toolCallName !== undefined && call.hasArgs && isCompleteJson(call.args);
        if (call !== undefined && !parallel) {
          if (call.lane !== lane) throw wrongLane('TOOL_CALL_CHUNK', known, call.lane, lane);
          return args(known, call, delta, event);
        }
        if (ended.has(known) && toolCallName === undefined) return lateArgs('TOOL_CALL_CHUNK', producerId ?? known, delta, event);
      }
      if (toolCallName === undefined) {
        throw new AguiRxError(
          'INVALID_EVENT',
          producerId === undefined
            ? `TOOL_CALL_CHUNK has no toolCallId and no tool call is open in ${describeLane(lane)}. The first chunk of a call needs a toolCallName (and ideally a toolCallId).`
            : `TOOL_CALL_CHUNK opens tool call '${producerId}' without a toolCallName. Put the tool's name on the first chunk of each call.`,
        );
      }
      const toolCallId = newCallId(producerId);
      const parentMessageId = parentOf(lane, optionalString(event, 'parentMessageId'));
      const call = register(toolCallId, lane);
      const start: Record<string, unknown> = { type: EventType.TOOL_CALL_START, toolCallId, toolCallName, parentMessageId };
      if (event.timestamp !== undefined) start.timestamp = event.timestamp;
      if (lane !== undefined) start.subagentRunId = lane;
      emit(start as AgentEvent);
      args(toolCallId, call, delta, event);
    };

    const lateArgs = (type: string, producerId: string, delta: string | undefined, event: Record<string, unknown>) => {
      if (delta === undefined || delta === '') return;
      diagnose({ message: `Dropped ${type} for tool call '${producerId}': the call already ended (its arguments were closed). Send all arguments before TOOL_CALL_END or the call's result.`, event });
    };

    const onStart = (event: Record<string, unknown>) => {
      const producerId = requiredString(event, 'toolCallId');
      requiredString(event, 'toolCallName');
      const lane = laneOf(event);
      if (calls.has(wireId(producerId))) {
        return diagnose({ message: `Dropped a second TOOL_CALL_START for tool call '${producerId}', which is already open. Send one START per call.`, event });
      }
      const toolCallId = newCallId(producerId);
      const parentMessageId = optionalString(event, 'parentMessageId');
      if (parentMessageId !== undefined) assertParentLane(parentMessageId, lane);
      if (parentMessageId !== undefined && !turnMessage.has(lane)) turnMessage.set(lane, parentMessageId);
      register(toolCallId, lane);
      emit(toolCallId === producerId ? (event as AgentEvent) : ({ ...event, toolCallId } as AgentEvent));
    };

    const onArgs = (event: Record<string, unknown>) => {
      const producerId = requiredString(event, 'toolCallId');
      const delta = requiredString(event, 'delta');
      const toolCallId = wireId(producerId);
      const call = calls.get(toolCallId);
      if (call !== undefined) {
        if (call.lane !== laneOf(event)) throw wrongLane('TOOL_CALL_ARGS', producerId, call.lane, laneOf(event));
        if (delta === '') return;
        call.hasArgs = true;
        call.args += delta;
        return emit(toolCallId === producerId ? (event as AgentEvent) : ({ ...event, toolCallId } as AgentEvent));
      }
      if (ended.has(toolCallId)) return lateArgs('TOOL_CALL_ARGS', producerId, delta, event);
      throw new AguiRxError('INVALID_EVENT', `TOOL_CALL_ARGS for tool call '${producerId}', which was never started. Send TOOL_CALL_START (or a TOOL_CALL_CHUNK with a toolCallName) first.`);
    };

    const onEnd = (event: Record<string, unknown>) => {
      const producerId = requiredString(event, 'toolCallId');
      const toolCallId = wireId(producerId);
      const call = calls.get(toolCallId);
      if (call === undefined) {
        return diagnose({ message: `Dropped TOOL_CALL_END for tool call '${producerId}': no such call is open. End a call once, after its START.`, event });
      }
      if (call.lane !== laneOf(event)) throw wrongLane('TOOL_CALL_END', producerId, call.lane, laneOf(event));
      close(toolCallId, call, toolCallId === producerId ? (event as AgentEvent) : ({ ...event, toolCallId } as AgentEvent));
    };

    const onResult = (event: Record<string, unknown>) => {
      const producerId = requiredString(event, 'toolCallId');
      const lane = laneOf(event);
      const toolCallId = wireId(producerId);
      const call = calls.get(toolCallId);
      if (call !== undefined) close(toolCallId, call);
      // A result means the model's turn is over: text after it is a new assistant message.
      turnMessage.delete(lane);
      pending.delete(toolCallId);
      const result: Record<string, unknown> = { ...event, toolCallId, content: toolResultContent(event.content, producerId) };
      if (optionalString(event, 'messageId') === undefined) result.messageId = mint();
      emit(result as AgentEvent);
    };

    return {
      next(event) {
        const type = eventTypeOf(event);
        const fields = event as unknown as Record<string, unknown>;
        switch (type) {
          // Text first: after openMessageStartContentEnd, most events are TEXT_MESSAGE_CONTENT.
          case EventType.TEXT_MESSAGE_CHUNK:
          case EventType.TEXT_MESSAGE_CONTENT:
          case EventType.REASONING_MESSAGE_CHUNK:
          case EventType.REASONING_MESSAGE_CONTENT:
          case EventType.REASONING_MESSAGE_START:
          case EventType.REASONING_START:
            // Only content ends the calls: an empty chunk says nothing.
            if (calls.size > 0 && ((typeof fields.delta === 'string' && fields.delta !== '') || type.endsWith('START'))) closeLane(laneOf(fields));
            return emit(event);
          case EventType.TOOL_CALL_CHUNK:
            return onChunk(fields);
          case EventType.TOOL_CALL_START:
            return onStart(fields);
          case EventType.TOOL_CALL_ARGS:
            return onArgs(fields);
          case EventType.TOOL_CALL_END:
            return onEnd(fields);
          case EventType.TOOL_CALL_RESULT:
            return onResult(fields);
          case EventType.TEXT_MESSAGE_START: {
            const lane = laneOf(fields);
            closeLane(lane);
            const role = fields.role;
            const messageId = requiredString(fields, 'messageId');
            messageLane.set(messageId, lane);
            if (role === undefined || role === 'assistant') turnMessage.set(lane, messageId);
            return emit(event);
          }
          case EventType.STEP_STARTED:
          case EventType.STEP_FINISHED:
            endTurn(laneOf(fields));
            return emit(event);
          case EventType.SUBAGENT_FINISHED:
          case EventType.SUBAGENT_ERROR:
            endTurn(optionalString(fields, 'subagentRunId'));
            return emit(event);
          case EventType.RUN_FINISHED: {
            closeAll();
            turnMessage.clear();
            const outcome = withPendingToolCalls(fields.outcome as RunFinishedOutcome | undefined, [...pending]);
            // Pending calls are the run's: a next run reports its own.
            pending.clear();
            return emit({ ...event, outcome } as AgentEvent);
          }
          case EventType.RUN_STARTED:
          case EventType.RUN_ERROR:
            closeAll();
            turnMessage.clear();
            pending.clear();
            latest.clear();
            return emit(event);
          case EventType.MESSAGES_SNAPSHOT:
            closeAll();
            turnMessage.clear();
            return emit(event);
          default:
            return emit(event);
        }
      },
      flush: closeAll,
    };
  });
}


function wrongLane(type: string, toolCallId: string, opener: Lane, lane: Lane): AguiRxError {
  return new AguiRxError(
    'INVALID_EVENT',
    `${type} for tool call '${toolCallId}' comes from ${describeLane(lane)}, but the call was started by ${describeLane(opener)}. Set the same subagentRunId on every event of a call.`,
  );
}
