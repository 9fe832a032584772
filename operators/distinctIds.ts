import type { Message } from '@ag-ui/core';
import type { OperatorFunction } from 'rxjs';
import type { AgentEvent } from '../lib/protocol/agentEvent.js';
import { createOperator, type OperatorContext, type OperatorHandlers } from '../lib/protocol/createOperator.js';
import { keepShapes, recordType } from '../lib/protocol/recordType.js';
import { warnDiagnostic, type DiagnosticHandler } from '../lib/protocol/diagnostics.js';
import { AguiRxError, describeValue } from '../lib/protocol/errors.js';
import { generateId as defaultGenerateId, type IdGenerator } from '../lib/protocol/generateId.js';
import { trackIdCollisions, type IdCollisions } from '../lib/tracking/idCollisions.js';

/** Options of {@link distinctIds}. */
export interface DistinctIdsOptions {
  /** The conversation before the run (RunAgentInput `messages`): its message ids and tool call ids are taken. Default: none. */
  messages?: readonly Message[] | undefined;
  /** Mints the fresh ids given to colliding starts. Default: nanoid. */
  generateId?: IdGenerator | undefined;
  /** Told about each id replaced, naming the id, what it started and what it collided with. Default: `console.warn`. */
  onDiagnostic?: DiagnosticHandler | undefined;
}

/**
 * Gives every message and tool call the run starts an id that names nothing the client already
 * holds: not a message or tool call of the conversation history, not a message of another kind.
 *
 * The official client finds messages by `id` (one list, whatever the role) and tool calls by id
 * across messages, so a reused id makes it change what it holds: the reply is appended to the
 * user's message, new arguments to an old call, a text message replaced by an activity.
 *
 * ```text
 * history: [ { id: 'u1', role: 'user' } ]
 * source:  --s--c--e--|      s = TEXT_MESSAGE_START 'u1', c = ..._CONTENT 'u1', e = ..._END 'u1'
 * output:  --s--c--e--|      the same events under id 'id-1' (one diagnostic, at s)
 * ```
 *
 * Rules:
 * 1. A start is TEXT_MESSAGE_START, REASONING_START, REASONING_MESSAGE_START, TOOL_CALL_START,
 *    TOOL_CALL_RESULT's `messageId`, and an activity's first ACTIVITY_SNAPSHOT. A start whose id
 *    names a message of the history (`messages`, or a MESSAGES_SNAPSHOT or RUN_STARTED `input` that
 *    passed), a tool call of the history, or a message of the run of another kind (text,
 *    reasoning, tool result, activity) is sent under a fresh id, and reported through
 *    `onDiagnostic` with the id, what it started and what it collided with.
 * 2. Every later event of that entity follows it in the same frame: CONTENT / ARGS / END,
 *    REASONING_END, ACTIVITY_DELTA and later snapshots, TOOL_CALL_RESULT `toolCallId`,
 *    `parentMessageId`, REASONING_ENCRYPTED_VALUE `entityId`, RUN_FINISHED `pendingToolCallIds`.
 * 3. Not collisions (the id is kept): an ACTIVITY_SNAPSHOT for an activity of the same
 *    `activityType` (the history's included: an A2UI surface updated across runs); a
 *    TOOL_CALL_RESULT whose `toolCallId` names a call of the history (a client tool, an
 *    approval); text streamed into the assistant message its tool calls created; a START that
 *    reopens an ended text message of the run (AG-UI: the client appends to it). A text start
 *    under the id of a run message of another role is a collision: the client keeps the first role.
 * 4. A tool call whose `parentMessageId` names a history message goes into a new assistant
 *    message (fresh id) instead of changing the history's; one naming a message of the run that is
 *    no assistant message (reasoning, a tool result, an activity) is sent without `parentMessageId`,
 *    with a diagnostic. The client names a call's message after the call when it has no assistant
 *    parent: that id must then be free among messages too.
 * 5. Ids reused within one kind (content for an ended message, a second call under an ended id) are
 *    `openMessageStartContentEnd`'s and `toolCallCorrelator`'s to repair; chunk events pass as they
 *    are: put this operator after those two, as `toAgui` does.
 *
 * ## Example
 *
 * ```ts
 * const messages: Message[] = [{ id: 'u1', role: 'user', content: 'Hi' }];
 * of<AgentEvent[]>(
 *   { type: EventType.TEXT_MESSAGE_START, messageId: 'u1', role: 'assistant' },
 *   { type: EventType.TEXT_MESSAGE_CONTENT, messageId: 'u1', delta: 'Hello' },
 *   { type: EventType.TEXT_MESSAGE_END, messageId: 'u1' },
 * ).pipe(distinctIds({ messages, generateId: () => 'm1', onDiagnostic: () => {} })).subscribe((e) => console.log(e.type, 'messageId' in e ? e.messageId : ''));
 * // results: TEXT_MESSAGE_START m1, TEXT_MESSAGE_CONTENT m1, TEXT_MESSAGE_END m1
 * ```
 *
 * @param options The history, the id generator and the diagnostics handler.
 * @return A function that returns an Observable of the same events, under ids that collide with nothing the client holds.
 * @throws {AguiRxError} `INVALID_OPTIONS` at call time when `messages` is not an array.
 */
export function distinctIds(options: DistinctIdsOptions = {}): OperatorFunction<AgentEvent, AgentEvent> {
  const history = options?.messages;
  if (history !== undefined && !Array.isArray(history)) {
    throw new AguiRxError('INVALID_OPTIONS', `distinctIds 'messages' must be the conversation's messages, an array (got ${describeValue(history)}). Pass RunAgentInput 'messages', or omit it.`);
  }
  const mint = options?.generateId ?? defaultGenerateId;
  const diagnose = options?.onDiagnostic ?? warnDiagnostic;
  return createOperator<AgentEvent, AgentEvent>((subscriber, context) => {
    // While nothing is renamed, content passes unchanged: a fused chain sends it past.
    context.passMessageContent(true);
    // The ids taken, and the fresh ids given, live in this subscription's tracker.
    const stage = new DistinctIdsRecord();
    stage.collisions = trackIdCollisions({ history, mint, diagnose, out: subscriber });
    stage.context = context;
    return DistinctIdsRecord.shaped(stage);
  }, { readsAgentEvents: diagnose, passesMessageContentWhenIdle: true });
}

// The objects a call and a subscription make once, one of each kept (see keepShapes).
keepShapes({ history: undefined, mint: undefined, diagnose: undefined, out: undefined }, { readsAgentEvents: undefined, passesMessageContentWhenIdle: true });

/** One subscription of {@link distinctIds}: its handlers, with a method every subscription shares. */
interface DistinctIds extends OperatorHandlers<AgentEvent> {
  readonly collisions: IdCollisions;
  readonly context: OperatorContext;
}

const distinctIdsMethods: Pick<DistinctIds, 'next'> = Object.freeze({
  next(this: DistinctIds, event: AgentEvent) {
    this.collisions.next(event);
    this.context.passMessageContent(!this.collisions.renamesAny());
  },
});
const DistinctIdsRecord = recordType<DistinctIds>(distinctIdsMethods);
