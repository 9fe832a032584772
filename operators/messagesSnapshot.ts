import { EventType, type Event, type RunAgentInput } from '@ag-ui/core';
import type { OperatorFunction } from 'rxjs';
import { eventTypeOf, type AgentEvent } from '../lib/protocol/agentEvent.js';
import { createOperator } from '../lib/protocol/createOperator.js';
import { trackConversation } from '../lib/tracking/conversation.js';

/** Options of {@link messagesSnapshot}. */
export interface MessagesSnapshotOptions {
  /** The run's input: its `messages` are the conversation the snapshot starts from. */
  input?: Pick<RunAgentInput, 'messages'> | undefined;
}

/**
 * Sends the run's whole conversation as one MESSAGES_SNAPSHOT just before the run finishes.
 *
 * Opt-in, because it keeps every streamed message in memory. It builds the messages as the official
 * client does, so a client that joins late, or reloads, gets exactly what a streaming client holds.
 *
 * ```text
 * source:  --S--C--E--t--r--F|     S/C/E = TEXT_MESSAGE_START/CONTENT/END, t = TOOL_CALL_START…END,
 * output:  --S--C--E--t--r--(MF|)  r = TOOL_CALL_RESULT, F = RUN_FINISHED, M = MESSAGES_SNAPSHOT
 * ```
 *
 * Rules:
 * 1. The conversation starts from `input.messages`, plus the `input.messages` of a RUN_STARTED
 *    passing through that are not there yet (by id).
 * 2. TEXT_MESSAGE_START and REASONING_MESSAGE_START add a message under the streamed id (role,
 *    `name`, `subagentRunId` kept); their CONTENT appends to it. TOOL_CALL_START adds a tool call
 *    under the streamed id to the assistant message `parentMessageId` names, creating that message
 *    when there is none; TOOL_CALL_ARGS appends to its arguments. TOOL_CALL_RESULT adds a tool
 *    message right after the assistant message that made the call (after its earlier results).
 *    ACTIVITY_SNAPSHOT / ACTIVITY_DELTA build activity messages; REASONING_ENCRYPTED_VALUE is kept
 *    on its message or tool call; `metadata` is merged into what the event builds. An upstream
 *    MESSAGES_SNAPSHOT replaces the conversation, keeping reasoning and activity messages when it
 *    carries none of that role. These are the official client's rules.
 * 3. MESSAGES_SNAPSHOT is sent just before RUN_FINISHED passes through, or, when the source
 *    completes without one (the operator is placed before `mapRunLifecycle`), just before it
 *    completes. Nothing is sent after RUN_ERROR or a source error.
 * 4. Every other event passes through untouched; it expects wire events, so place it after the
 *    operators that produce START / CONTENT / END (`openMessageStartContentEnd`, `toolCallCorrelator`).
 * 5. An ACTIVITY_DELTA whose patch goes through `__proto__`, `constructor` or `prototype` is an
 *    `INVALID_PATCH` error; one that does not apply is an `INVALID_ACTIVITY_DELTA` error.
 *
 * ## Example
 *
 * ```ts
 * of<AgentEvent[]>(
 *   { type: EventType.TEXT_MESSAGE_START, messageId: 'm1', role: 'assistant' },
 *   { type: EventType.TEXT_MESSAGE_CONTENT, messageId: 'm1', delta: 'Hi' },
 *   { type: EventType.TEXT_MESSAGE_END, messageId: 'm1' },
 *   { type: EventType.RUN_FINISHED },
 * ).pipe(messagesSnapshot()).subscribe((e) => console.log(e.type === EventType.MESSAGES_SNAPSHOT ? JSON.stringify(e.messages) : e.type));
 * // results: TEXT_MESSAGE_START, TEXT_MESSAGE_CONTENT, TEXT_MESSAGE_END, [{"id":"m1","role":"assistant","content":"Hi"}], RUN_FINISHED
 * ```
 *
 * @param options The run's input, whose messages start the conversation.
 * @return A function that returns an Observable of the source's events with a MESSAGES_SNAPSHOT of
 * the whole conversation before RUN_FINISHED.
 */
export function messagesSnapshot<T extends AgentEvent | Event = AgentEvent>(options: MessagesSnapshotOptions = {}): OperatorFunction<T, T> {
  // The events keep their type: after toAgui they are wire events (`Event`), and so is the snapshot.
  return createOperator<T, T>((subscriber) => {
    // The conversation so far, built as the client builds it.
    const conversation = trackConversation(options.input?.messages);
    // Whether the snapshot was sent, or the run failed: either way nothing more is sent.
    let done = false;

    const sendSnapshot = () => {
      done = true;
      subscriber.next({ type: EventType.MESSAGES_SNAPSHOT, messages: conversation.messages() } as T);
    };

    return {
      next(event) {
        if (done) return subscriber.next(event);
        const type = eventTypeOf(event);
        if (type === EventType.RUN_FINISHED) sendSnapshot();
        else if (type === EventType.RUN_ERROR) done = true;
        else conversation.observe(event as unknown as Record<string, unknown>, type);
        subscriber.next(event);
      },
      complete() {
        if (!done) sendSnapshot();
        subscriber.complete();
      },
      teardown() {
        conversation.clear();
      },
    };
  });
}
