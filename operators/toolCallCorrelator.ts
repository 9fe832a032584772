import { EventType } from '@ag-ui/core';
import type { OperatorFunction } from 'rxjs';
import { eventTypeOf, type AgentEvent } from '../lib/protocol/agentEvent.js';
import { createOperator, type OperatorContext, type OperatorHandlers, type OperatorSink } from '../lib/protocol/createOperator.js';
import { keepShapes, recordType } from '../lib/protocol/recordType.js';
import { warnDiagnostic, type DiagnosticHandler } from '../lib/protocol/diagnostics.js';
import { generateId as defaultGenerateId, type IdGenerator } from '../lib/protocol/generateId.js';
import { entityKind } from '../lib/protocol/table.js';
import { trackToolCalls, type ToolCallTracker } from '../lib/tracking/toolCalls.js';

/** Options of {@link toolCallCorrelator}. */
export interface ToolCallCorrelatorOptions {
  /** Mints tool call ids, parent message ids and TOOL_CALL_RESULT message ids. Default: nanoid. */
  generateId?: IdGenerator | undefined;
  /** Told about each event dropped or repaired to keep the stream valid (a late TOOL_CALL_ARGS, say). Default: `console.warn`. */
  onDiagnostic?: DiagnosticHandler | undefined;
}

// The events handed to the tracker's own methods, read off the protocol table.
const toolCall = entityKind.toolCall;
const [toolCallEnd] = toolCall.end;
const textContent = entityKind.textMessage.content;

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
 *    TOOL_CALL_START (id minted when absent), then TOOL_CALL_ARGS for its non-empty `delta`; its
 *    `metadata` goes on both (as the official client's chunk expansion puts it), so that it reaches
 *    the call when the chunk has no `delta`.
 *    Opening a call needs a `toolCallName`. A chunk without id continues the lane's latest call.
 *    A chunk naming the tool for an open id continues that call, unless the call's arguments are
 *    already complete JSON: then it starts a second call under a fresh id (providers that use the
 *    function name as the call id of parallel calls).
 * 2. A chunk's `parentMessageId` defaults to the current turn's assistant message: the last
 *    TEXT_MESSAGE_START of the lane, else the first `parentMessageId` given in the turn, else an id
 *    minted for the turn. An explicit TOOL_CALL_START is sent as it is: without `parentMessageId`,
 *    the client puts its call in a new assistant message named after the call.
 * 3. A call ends (TOOL_CALL_END) at its TOOL_CALL_RESULT, at its subagent's end, at
 *    RUN_FINISHED/RUN_ERROR and when upstream completes or errors. The next text or reasoning in
 *    its lane, and a step boundary (STEP_STARTED/STEP_FINISHED), end it only once its arguments
 *    are complete JSON (an object or array that parses): AG-UI closes calls before RUN_FINISHED,
 *    not before a message or step ends, and an END is final, so fragments that arrive between
 *    them stay in their call. Completeness is read as the fragments arrive (each character once),
 *    so these checks stay linear in the arguments' length. A call that
 *    got no arguments (no TOOL_CALL_ARGS, or only empty deltas: `""` is not JSON) is sent
 *    `"{}"` first: tool arguments are a JSON object.
 * 4. TOOL_CALL_RESULT gets a minted `messageId` when absent; content that is not a string or a
 *    list of AG-UI content parts is serialised to JSON text.
 * 5. TOOL_CALL_ARGS after the call's END (or a chunk without id after the lane's latest call ended)
 *    is dropped and reported through `onDiagnostic`.
 * 6. Calls of the run without a result are added to RUN_FINISHED `outcome.pendingToolCallIds`.
 * 7. A run cannot finish with a call waiting for a result whose arguments are not JSON (a cut
 *    output: `{"q":`): at RUN_FINISHED, or when upstream completes, the calls are ended and the
 *    output fails with `INCOMPLETE_STREAM` naming each such call (RUN_ERROR under
 *    `mapRunLifecycle`; the text before is kept). A call answered by a TOOL_CALL_RESULT is not
 *    checked: its tool has run; nor is any call of a run whose RUN_FINISHED is `cancelled` (the
 *    cancel cut it, and a cancelled run runs no call), which passes with the calls ended.
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
 * content that cannot be serialised is an `INVALID_EVENT` error, a run ending with a cut call an
 * `INCOMPLETE_STREAM` error (RUN_ERROR under `mapRunLifecycle`).
 */
export function toolCallCorrelator(options: ToolCallCorrelatorOptions = {}): OperatorFunction<AgentEvent, AgentEvent> {
  const mint = options.generateId ?? defaultGenerateId;
  const diagnose = options.onDiagnostic ?? warnDiagnostic;
  return createOperator<AgentEvent, AgentEvent>((subscriber, context) => {
    // The decisions are the tracker's (lib/tracking/toolCalls.ts): this wires events to its rules.
    const calls = trackToolCalls({ mint, diagnose, out: subscriber });
    // With no call open, text and reasoning content close nothing and pass unchanged: a fused chain sends them past.
    context.passMessageContent(true);
    const correlator = new CorrelatorRecord();
    correlator.calls = calls;
    correlator.subscriber = subscriber;
    correlator.context = context;
    return CorrelatorRecord.shaped(correlator);
  }, { readsAgentEvents: diagnose, passesMessageContentWhenIdle: true });
}

// The objects a call and a subscription make once, one of each kept (see keepShapes).
keepShapes({ mint: undefined, diagnose: undefined, out: undefined }, { readsAgentEvents: undefined, passesMessageContentWhenIdle: true });

/** One subscription of {@link toolCallCorrelator}: its handlers, with methods every subscription shares. */
interface Correlator extends OperatorHandlers<AgentEvent> {
  readonly calls: ToolCallTracker;
  readonly subscriber: OperatorSink<AgentEvent>;
  readonly context: OperatorContext;
}

const correlatorMethods: Pick<Correlator, 'next' | 'flush' | 'complete'> = Object.freeze({
  next(this: Correlator, event: AgentEvent) {
    handle(this.calls, event);
    this.context.passMessageContent(!this.calls.hasOpenCalls());
  },
  flush(this: Correlator) {
    this.calls.closeAll();
  },
  complete(this: Correlator) {
    // A call left with arguments that are not JSON fails the run (INCOMPLETE_STREAM) after its END.
    this.calls.finish();
    this.subscriber.complete();
  },
});
const CorrelatorRecord = recordType<Correlator>(correlatorMethods);

// Hands one event to the tracker's rule for it (a module function: nothing per subscription).
function handle(calls: ToolCallTracker, event: AgentEvent): void {
  const type = eventTypeOf(event);
  const fields = event as unknown as Record<string, unknown>;
  switch (type) {
    // Text first: after openMessageStartContentEnd, most events are TEXT_MESSAGE_CONTENT.
    case textContent:
      return calls.pass(type, fields);
    case toolCall.chunk:
      return calls.chunk(fields);
    case toolCall.content:
      return calls.args(fields);
    case toolCall.start:
      return calls.start(fields);
    case toolCallEnd:
      return calls.end(fields);
    case EventType.TOOL_CALL_RESULT:
      return calls.result(fields);
    default:
      // Text and reasoning close the lane's calls, boundaries end turns, the rest passes.
      return calls.pass(type, fields);
  }
}
