import { EventType, mergeMetadata, type ActivityMessage, type AssistantMessage, type Message, type Metadata, type ToolCall, type ToolMessage } from '@ag-ui/core';
import jsonpatch, { type Operation } from 'fast-json-patch';
import { AguiRxError } from '../protocol/errors.js';
import { assertSafePatch } from '../state/jsonPatch.js';
import { copyWith } from '../protocol/values.js';
import { namedParentId } from '../protocol/agentEvent.js';

/** Any event, read field by field. */
type Fields = Record<string, any>;

/** The conversation a stream of AG-UI events builds, message by message, as the official client builds it. */
export interface Conversation {
  /**
   * Applies one event's change (events that change no message are ignored; see
   * {@link trackConversation} for the rules).
   * @throws {AguiRxError} `INVALID_PATCH` for an ACTIVITY_DELTA through `__proto__`, `constructor`
   * or `prototype`; `INVALID_ACTIVITY_DELTA` for one that does not apply to its activity's content.
   */
  observe(event: Fields, type: string): void;
  /** A copy of the messages so far, in conversation order. */
  messages(): Message[];
  /** Forgets the conversation (frees its memory). */
  clear(): void;
}

/**
 * Tracks the conversation an AG-UI stream builds, from `initial` (copied, never shared with the
 * caller). Pure bookkeeping, no RxJS; one per subscription. Each event finds its message through
 * an index, not a scan: a million events cost well under a second.
 *
 * The rules (the official client's):
 * 1. A RUN_STARTED adds the `input.messages` not there yet (by id).
 * 2. TEXT_MESSAGE_START and REASONING_MESSAGE_START add a message under the streamed id (role,
 *    `name`, `subagentRunId` kept) unless one exists; CONTENT appends to it. Activities are never
 *    written to by them.
 * 3. TOOL_CALL_START adds a call to the assistant message `parentMessageId` names (created when
 *    none; a parent id taken by another role gives way to the call's id), or renames a known
 *    call; TOOL_CALL_ARGS appends to its arguments.
 * 4. TOOL_CALL_RESULT adds a tool message right after the assistant message that made the call
 *    and its earlier results, or at the end when no message made it.
 * 5. ACTIVITY_SNAPSHOT adds an activity or replaces it (`replace`, default true, keeping its
 *    metadata); ACTIVITY_DELTA patches an activity's content.
 * 6. REASONING_ENCRYPTED_VALUE is kept on its message or tool call; each event's `metadata` is
 *    merged, key by key, into what it builds.
 * 7. MESSAGES_SNAPSHOT replaces the conversation, keeping reasoning and activity messages when it
 *    carries none of that role.
 */
export function trackConversation(initial: readonly Message[] = []): Conversation {
  // Our own copies, never shared with the producer or the wire.
  let messages: Message[] = structuredClone(initial as Message[]);

  // Indexes of `messages`: the first message with an id, and the first assistant message holding
  // a tool call. Rebuilt after any change other than an append (undefined: stale).
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
    // As the client: an empty parentMessageId names no message.
    const parentId = namedParentId(event.parentMessageId);
    const parent = parentId === undefined ? undefined : byId(parentId);
    let owner = parent?.role === 'assistant' ? parent : undefined;
    if (owner === undefined) {
      // As the client: a parent id taken by another role falls back to the tool call's id.
      owner = { id: parent === undefined ? (parentId ?? event.toolCallId) : event.toolCallId, role: 'assistant', toolCalls: [] };
      if (event.subagentRunId != null) owner.subagentRunId = event.subagentRunId;
      append(owner);
    }
    const call: ToolCall = { id: event.toolCallId, type: 'function', function: { name: event.toolCallName, arguments: '' } };
    (owner.toolCalls ??= []).push(call);
    // No message held this call (toolCall() found none): the owner is its first holder.
    callIndex?.set(call.id, owner);
    mergeInto(call, event);
  };

  const onToolCallArgs = (event: Fields) => {
    const call = toolCall(event.toolCallId);
    if (call === undefined) return;
    call.function.arguments += event.delta;
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
      messages[index] = existing.metadata === undefined ? activity : copyWith(activity, { metadata: existing.metadata });
    } else if (replace) {
      invalidate();
      messages[index] = activity;
    } else if (existing.role !== 'activity') return;
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

  return {
    observe(event, type) {
      switch (type) {
        case EventType.RUN_STARTED:
          for (const message of (event.input?.messages ?? []) as Message[]) {
            if (byId(message.id) === undefined) append(structuredClone(message));
          }
          return;
        case EventType.TEXT_MESSAGE_START:
          return onStart(event, event.role ?? 'assistant');
        case EventType.REASONING_MESSAGE_START:
          return onStart(event, 'reasoning');
        case EventType.TEXT_MESSAGE_CONTENT:
        case EventType.REASONING_MESSAGE_CONTENT:
          return onContent(event);
        case EventType.TEXT_MESSAGE_END:
        case EventType.REASONING_MESSAGE_END: {
          const target = byId(event.messageId);
          if (target?.role !== 'activity') mergeInto(target, event);
          return;
        }
        case EventType.TOOL_CALL_START:
          return onToolCallStart(event);
        case EventType.TOOL_CALL_ARGS:
          return onToolCallArgs(event);
        case EventType.TOOL_CALL_END:
          return mergeInto(toolCall(event.toolCallId), event);
        case EventType.TOOL_CALL_RESULT:
          return onToolCallResult(event);
        case EventType.ACTIVITY_SNAPSHOT:
          return onActivitySnapshot(event);
        case EventType.ACTIVITY_DELTA:
          return onActivityDelta(event);
        case EventType.REASONING_ENCRYPTED_VALUE:
          return onEncryptedValue(event);
        case EventType.MESSAGES_SNAPSHOT:
          return onMessagesSnapshot(event);
      }
    },
    messages: () => structuredClone(messages),
    clear() {
      messages = [];
      invalidate();
    },
  };
}

/** Merges an event's `metadata` into what it builds, key by key, last write wins (as the client does). */
function mergeInto(target: { metadata?: Metadata } | undefined, event: Fields): void {
  if (target === undefined || event.metadata === undefined) return;
  target.metadata = mergeMetadata(target.metadata, structuredClone(event.metadata));
}
