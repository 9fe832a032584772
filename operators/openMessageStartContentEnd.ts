import type { OperatorFunction } from 'rxjs';
import type { AgentEvent } from '../lib/protocol/agentEvent.js';
import { createOperator } from '../lib/protocol/createOperator.js';
import { keepShapes } from '../lib/protocol/recordType.js';
import { warnDiagnostic, type DiagnosticHandler } from '../lib/protocol/diagnostics.js';
import { generateId as defaultGenerateId, type IdGenerator } from '../lib/protocol/generateId.js';
import { trackMessageLanes } from '../lib/tracking/messageLanes.js';

/** Options of {@link openMessageStartContentEnd}. */
export interface OpenMessageStartContentEndOptions {
  /** Mints ids for messages whose chunks carry none, or whose id is taken (an ended message of another role, kind or lane). Default: nanoid. */
  generateId?: IdGenerator | undefined;
  /** Told about each explicit event dropped or repaired to keep the stream valid. Default: `console.warn`. */
  onDiagnostic?: DiagnosticHandler | undefined;
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
 * 6. Explicit START/CONTENT/END pass through unchanged and are tracked. A START, chunk or content
 *    for an ended message of the same lane, kind and role reopens it under its id (AG-UI's
 *    processing rules: the client appends to the message it holds); content without a START gets
 *    one first, with a diagnostic. An ended id reused by another role, kind or lane gets a minted
 *    id, with a diagnostic for an explicit event; the producer's id goes on naming its first
 *    message in that message's lane and kind (a text message is reopened under its id after a
 *    reasoning message used it), and so does a tool call's `parentMessageId` that names it. A
 *    `parentMessageId` naming no message yet is the message the client makes for the call: text
 *    of its lane under that id joins it; another kind or lane gets another id. A duplicate START,
 *    or an END for nothing open, is dropped and reported through `onDiagnostic`.
 * 7. A non-string `delta` or `messageId`, or content for a message open in another lane (of its
 *    kind: another kind's open id gets a minted one), is an `INVALID_EVENT` error (RUN_ERROR under
 *    `mapRunLifecycle`).
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
  // One tracker per subscription, its own handlers (`next`, `flush`): its decisions go straight out.
  return createOperator<AgentEvent, AgentEvent>((subscriber) => trackMessageLanes({ mint, diagnose, out: subscriber }), { readsAgentEvents: diagnose });
}

// The objects a call and a subscription make once, one of each kept (see keepShapes).
keepShapes({ mint: undefined, diagnose: undefined, out: undefined }, { readsAgentEvents: undefined });
