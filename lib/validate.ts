import { EventType, type Event } from '@ag-ui/core';
import { EventSchema } from '@ag-ui/core/schemas';
import { AguiRxError, describeValue } from './errors.js';

// The per-token events are checked by hand (a few typeof tests); every other event, which is
// rare by comparison, goes through the @ag-ui/core zod schema.
const tokenEventIdField: Partial<Record<string, 'messageId' | 'toolCallId'>> = {
  [EventType.TEXT_MESSAGE_CONTENT]: 'messageId',
  [EventType.REASONING_MESSAGE_CONTENT]: 'messageId',
  [EventType.TOOL_CALL_ARGS]: 'toolCallId',
};

/**
 * Checks that an outgoing event is a valid AG-UI 1.0 event (the `@ag-ui/core/schemas` rules,
 * including "never `null` for an optional field") and returns it typed.
 *
 * @throws {AguiRxError} `INVALID_EVENT`, naming the event type and the offending field.
 */
export function assertWireEvent(event: Record<string, unknown>): Event {
  const type = event.type as string;
  const idField = tokenEventIdField[type];
  if (idField !== undefined) {
    if (typeof event[idField] !== 'string') throw invalidField(type, idField, event[idField], 'a string');
    if (typeof event.delta !== 'string') throw invalidField(type, 'delta', event.delta, 'a string');
    for (const key in event) {
      if (event[key] === null) throw invalidField(type, key, null, 'absent or set');
    }
    // The base fields, as the schema has them: the hot path must not pass what the client rejects.
    const { subagentRunId, timestamp, metadata } = event;
    if (subagentRunId !== undefined && typeof subagentRunId !== 'string') throw invalidField(type, 'subagentRunId', subagentRunId, 'a string');
    if (timestamp !== undefined && !Number.isSafeInteger(timestamp)) throw invalidField(type, 'timestamp', timestamp, 'an integer');
    if (metadata !== undefined && (typeof metadata !== 'object' || Array.isArray(metadata))) throw invalidField(type, 'metadata', metadata, 'an object');
    return event as unknown as Event;
  }
  const result = EventSchema.safeParse(event);
  if (!result.success) {
    const issue = result.error.issues[0];
    throw new AguiRxError(
      'INVALID_EVENT',
      `${type} is not a valid AG-UI event: ${describeIssue(result.error)}. Fix the field in the event your agent emits${
        issue.path.length > 0 && valueAt(event, issue.path) === null ? ' (omit optional fields rather than sending null)' : ''
      }.`,
    );
  }
  return event as unknown as Event;
}

function invalidField(type: string, field: string, value: unknown, expected: string): AguiRxError {
  return new AguiRxError(
    'INVALID_EVENT',
    `${type} has '${field}: ${describeValue(value)}', but '${field}' must be ${expected}${value === null ? ': omit an optional field rather than sending null' : ''}.`,
  );
}

function valueAt(value: unknown, path: readonly PropertyKey[]): unknown {
  let current = value;
  for (const key of path) {
    if (typeof current !== 'object' || current === null) return undefined;
    current = (current as Record<PropertyKey, unknown>)[key];
  }
  return current;
}

/**
 * Checks an input event against the AG-UI schema with the toolkit's relaxations (see `AgentEvent`):
 * a TOOL_CALL_RESULT may lack `messageId` and carry structured `content`, which
 * `toolCallCorrelator` fills in and serialises downstream. Other events must be valid as they are.
 *
 * @throws {AguiRxError} `INVALID_EVENT`, as {@link assertWireEvent}.
 */
export function assertAgentEventFields(event: Record<string, unknown>): void {
  if (event.type === EventType.TOOL_CALL_RESULT && (event.messageId === undefined || typeof event.content !== 'string')) {
    // Check everything but the relaxed fields: a placeholder stands in for what is filled in later.
    const content = event.content;
    const contentIsParts = Array.isArray(content) && content.every((part) => typeof part === 'object' && part !== null && 'type' in part);
    assertWireEvent({ ...event, messageId: event.messageId ?? 'minted-later', content: contentIsParts || content === undefined ? content : '' });
    return;
  }
  assertWireEvent(event);
}

/** The first problem a zod schema of @ag-ui/core/schemas found, as `'field.path': what is wrong`. */
export function describeIssue(error: { issues: readonly { path: readonly PropertyKey[]; message: string }[] }): string {
  const issue = error.issues[0];
  const path = issue.path.map(String).join('.');
  return `${path === '' ? '' : `'${path}': `}${issue.message}`;
}
