import {
  EventType,
  mergeMetadata,
  type ActivityMessage,
  type AssistantMessage,
  type Event,
  type Message,
  type Metadata,
  type RunAgentInput,
  type ToolCall,
  type ToolMessage,
} from '@ag-ui/core';
import jsonpatch, { type Operation } from 'fast-json-patch';
import type { OperatorFunction } from 'rxjs';
import { eventTypeOf, type AgentEvent } from '../lib/protocol/agentEvent.js';
import { AguiRxError } from '../lib/protocol/errors.js';
import { assertSafePatch } from '../lib/state/jsonPatch.js';
import { createOperator } from '../lib/protocol/createOperator.js';

/** Options of {@link messagesSnapshot}. */
export interface MessagesSnapshotOptions {
  /** The run's input: its `messages` are the conversation the snapshot starts from. */
  input?: Pick<RunAgentInput, 'messages'>;
}

/** Any event, read field by field. */
type Fields = Record<string, any>;

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
    // The conversation so far: our own copies, never shared with the producer or the wire.
    let messages: Message[] = structuredClone(options.input?.messages ?? []);
    // Whether the snapshot was sent, or the run failed: either way nothing more is sent.
    let done = false;

    // Indexes of `messages`, so that each event finds its message without a scan: the first message
    // with an id, and the first assistant message holding a tool call. Rebuilt after any change
    // other than an append (undefined: stale).
    let idIndex: Map<string, Message> | undefined;
    let callIndex: Map<string, AssistantMessage> | undefined;
    const invalidate = () => {
      idIndex = undefined;
      callIndex = undefined;
    };
    const byId = (id: string): Message | undefined => {
      if (idIndex === undefined) {
        idIndex = new Map();
        for (const message of messages) if (!idIndex.has(message.id)) idIndex.set(message.id, message);
      }
      return idIndex.get(id);
    };
    const ownerOf = (toolCallId: string): AssistantMessage | undefined => {
      if (callIndex === undefined) {
        callIndex = new Map();
        for (const message of messages) {
          if (message.role !== 'assistant') continue;
          for (const call of message.toolCalls ?? []) if (!callIndex.has(call.id)) callIndex.set(call.id, message);
        }
      }
      return callIndex.get(toolCallId);
    };
    const toolCall = (toolCallId: string): ToolCall | undefined => ownerOf(toolCallId)?.toolCalls?.find((call) => call.id === toolCallId);
    /** Appends a message, keeping the indexes. */
    const append = (message: Message) => {
      messages.push(message);
      if (idIndex !== undefined && !idIndex.has(message.id)) idIndex.set(message.id, message);
      if (callIndex !== undefined && message.role === 'assistant') {
        for (const call of message.toolCalls ?? []) if (!callIndex.has(call.id)) callIndex.set(call.id, message);
      }
    };

    const onStart = (event: Fields, role: string) => {
      const existing = byId(event.messageId);
      if (existing?.role === 'activity') return;
      let target: Message | undefined = existing;
      if (target === undefined) {
        target = { id: event.messageId, role, content: '' } as Message;
        if (role !== 'reasoning' && event.name !== undefined) (target as { name?: string }).name = event.name;
        if (event.subagentRunId != null) target.subagentRunId = event.subagentRunId;
        append(target);
      }
      mergeInto(target, event);
    };

    const onContent = (event: Fields) => {
      const target = byId(event.messageId);
      if (target === undefined || target.role === 'activity') return;
      target.content = `${typeof target.content === 'string' ? target.content : ''}${event.delta}`;
      mergeInto(target, event);
    };

    const onToolCallStart = (event: Fields) => {
      const existing = toolCall(event.toolCallId);
      if (existing !== undefined) {
        existing.function.name = event.toolCallName;
        return mergeInto(existing, event);
      }
      const parent = event.parentMessageId === undefined ? undefined : byId(event.parentMessageId);
      let owner = parent?.role === 'assistant' ? parent : undefined;
      if (owner === undefined) {
        // As the client: a parent id taken by another role falls back to the tool call's id.
        owner = { id: parent === undefined ? (event.parentMessageId ?? event.toolCallId) : event.toolCallId, role: 'assistant', toolCalls: [] };
        if (event.subagentRunId != null) owner.subagentRunId = event.subagentRunId;
        append(owner);
      }
      const call: ToolCall = { id: event.toolCallId, type: 'function', function: { name: event.toolCallName, arguments: '' } };
      (owner.toolCalls ??= []).push(call);
      // No message held this call (toolCall() found none): the owner is its first holder.
      callIndex?.set(call.id, owner);
      mergeInto(call, event);
    };

    const onToolCallResult = (event: Fields) => {
      const message = { id: event.messageId, toolCallId: event.toolCallId, role: event.role || 'tool', content: event.content } as ToolMessage;
      if (event.subagentRunId != null) message.subagentRunId = event.subagentRunId;
      mergeInto(message, event);
      // Right after the call's assistant message and its earlier results: the order providers require.
      const owner = ownerOf(event.toolCallId);
      const ownerIndex = owner === undefined ? -1 : messages.indexOf(owner);
      if (ownerIndex === -1) return void append(message);
      let at = ownerIndex + 1;
      while (at < messages.length && messages[at].role === 'tool') at++;
      messages.splice(at, 0, message);
      // Inserted, not appended: only an id seen before can change which message is first.
      if (idIndex?.has(message.id)) invalidate();
      else idIndex?.set(message.id, message);
    };

    const onActivitySnapshot = (event: Fields) => {
      const index = messages.findIndex((message) => message.id === event.messageId);
      const existing = messages[index];
      const activity: ActivityMessage = { id: event.messageId, role: 'activity', activityType: event.activityType, content: structuredClone(event.content) };
      if (event.subagentRunId != null) activity.subagentRunId = event.subagentRunId;
      const replace = event.replace ?? true;
      if (index === -1) append(activity);
      else if (existing.role === 'activity' && replace) {
        invalidate();
        // A replacing snapshot keeps the metadata gathered so far, but brings its own owner.
        messages[index] = { ...activity, ...(existing.metadata !== undefined && { metadata: existing.metadata }) };
      } else if (replace) {
        invalidate();
        messages[index] = activity;
      }
      else if (existing.role !== 'activity') return;
      mergeInto(messages[index === -1 ? messages.length - 1 : index], event);
    };

    const onActivityDelta = (event: Fields) => {
      const index = messages.findIndex((message) => message.id === event.messageId);
      const existing = messages[index];
      if (existing?.role !== 'activity') return;
      assertSafePatch(event.patch, 'ACTIVITY_DELTA');
      mergeInto(existing, event);
      let content: unknown;
      try {
        content = jsonpatch.applyPatch(structuredClone(existing.content ?? {}), (event.patch ?? []) as Operation[], true, false).newDocument;
      } catch (error) {
        throw new AguiRxError(
          'INVALID_ACTIVITY_DELTA',
          `ACTIVITY_DELTA for activity '${event.messageId}' does not apply to its content: ${(error as Error).message.split('\n')[0]}. Send an ACTIVITY_SNAPSHOT first, or patch only paths the content has.`,
        );
      }
      invalidate();
      messages[index] = { ...existing, activityType: event.activityType, content: structuredClone(content) as ActivityMessage['content'] };
    };

    const onEncryptedValue = (event: Fields) => {
      const target = event.subtype === 'tool-call' ? toolCall(event.entityId) : byId(event.entityId);
      if (target !== undefined && (target as Message).role !== 'activity') (target as { encryptedValue?: string }).encryptedValue = event.encryptedValue;
    };

    const onMessagesSnapshot = (event: Fields) => {
      const incoming = structuredClone(event.messages as Message[]);
      const ids = new Set(incoming.map((message) => message.id));
      const hasRole = (role: string) => incoming.some((message) => message.role === role);
      // Streamed reasoning and activity stay when the snapshot carries none of that role, as in the client.
      const keep = (message: Message) => (message.role === 'reasoning' && !hasRole('reasoning')) || (message.role === 'activity' && !hasRole('activity'));
      const kept = messages.filter((message) => ids.has(message.id) || keep(message)).map((message) => incoming.find((m) => m.id === message.id) ?? message);
      const keptIds = new Set(kept.map((message) => message.id));
      messages = [...kept, ...incoming.filter((message) => !keptIds.has(message.id))];
      invalidate();
    };

    const sendSnapshot = () => {
      done = true;
      subscriber.next({ type: EventType.MESSAGES_SNAPSHOT, messages: structuredClone(messages) } as T);
    };

    return {
      next(event) {
        const fields = event as unknown as Fields;
        if (done) return subscriber.next(event);
        switch (eventTypeOf(event)) {
          case EventType.RUN_STARTED:
            for (const message of (fields.input?.messages ?? []) as Message[]) {
              if (byId(message.id) === undefined) append(structuredClone(message));
            }
            break;
          case EventType.TEXT_MESSAGE_START:
            onStart(fields, fields.role ?? 'assistant');
            break;
          case EventType.REASONING_MESSAGE_START:
            onStart(fields, 'reasoning');
            break;
          case EventType.TEXT_MESSAGE_CONTENT:
          case EventType.REASONING_MESSAGE_CONTENT:
            onContent(fields);
            break;
          case EventType.TEXT_MESSAGE_END:
          case EventType.REASONING_MESSAGE_END: {
            const target = byId(fields.messageId);
            if (target?.role !== 'activity') mergeInto(target, fields);
            break;
          }
          case EventType.TOOL_CALL_START:
            onToolCallStart(fields);
            break;
          case EventType.TOOL_CALL_ARGS: {
            const call = toolCall(fields.toolCallId);
            if (call !== undefined) {
              call.function.arguments += fields.delta;
              mergeInto(call, fields);
            }
            break;
          }
          case EventType.TOOL_CALL_END:
            mergeInto(toolCall(fields.toolCallId), fields);
            break;
          case EventType.TOOL_CALL_RESULT:
            onToolCallResult(fields);
            break;
          case EventType.ACTIVITY_SNAPSHOT:
            onActivitySnapshot(fields);
            break;
          case EventType.ACTIVITY_DELTA:
            onActivityDelta(fields);
            break;
          case EventType.REASONING_ENCRYPTED_VALUE:
            onEncryptedValue(fields);
            break;
          case EventType.MESSAGES_SNAPSHOT:
            onMessagesSnapshot(fields);
            break;
          case EventType.RUN_FINISHED:
            sendSnapshot();
            break;
          case EventType.RUN_ERROR:
            done = true;
            break;
        }
        subscriber.next(event);
      },
      complete() {
        if (!done) sendSnapshot();
        subscriber.complete();
      },
      teardown() {
        messages = [];
        invalidate();
      },
    };
  });
}

/** Merges an event's `metadata` into what it builds, key by key, last write wins (as the client does). */
function mergeInto(target: { metadata?: Metadata } | undefined, event: Fields): void {
  if (target === undefined || event.metadata === undefined) return;
  target.metadata = mergeMetadata(target.metadata, structuredClone(event.metadata));
}
