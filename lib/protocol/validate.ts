import { EventType, type Event } from '@ag-ui/core';
import { EventSchema, TextMessageRoleSchema } from '@ag-ui/core/schemas';
import { AguiRxError, describeValue } from './errors.js';
import { hasNoBaseFields } from './agentEvent.js';
import { snakeOf } from './normalizeAgentEvent.js';
import { tokenIdFieldOf } from './table.js';

/**
 * Checks that an outgoing event is a valid AG-UI 1.0 event (the `@ag-ui/core/schemas` rules,
 * including "never `null` for an optional field") and returns it typed.
 *
 * @throws {AguiRxError} `INVALID_EVENT`, naming the event type and the offending field.
 */
export function assertWireEvent(event: Record<string, unknown>): Event {
  const type = event.type as string;
  // The per-token events are checked by hand (a few typeof tests, fields read by name); every
  // other event, rare by comparison, is accepted by hand when plain, else by the zod schema.
  const idField = tokenIdFieldOf(type);
  if (idField !== undefined) {
    const id = idField === 'toolCallId' ? event.toolCallId : event.messageId;
    if (typeof id !== 'string') throw invalidField(type, idField, id, 'a string', snakeCaseHint(event, idField));
    return assertTokenFields(type, event);
  }
  if (isPlainValid(type, event)) return event as unknown as Event;
  const result = EventSchema.safeParse(event);
  if (!result.success) {
    const issue = result.error.issues[0];
    throw new AguiRxError(
      'INVALID_EVENT',
      `${type} is not a valid AG-UI event: ${describeIssue(result.error)}. Fix the field in the event your agent emits${
        issue.path.length > 0 && valueAt(event, issue.path) === null ? ' (omit optional fields rather than sending null)' : ''
      }.${issue.path.length === 1 && typeof issue.path[0] === 'string' ? snakeCaseHint(event, issue.path[0]) : ''}`,
    );
  }
  return event as unknown as Event;
}

// Frequent events that are accepted after a few typeof tests. Each shape is a subset of what the
// @ag-ui/core schema accepts; anything these tests do not accept goes to the schema, which either
// accepts it after all or gives the error message. Fields are read by name: a read through a
// variable key, on events of every shape, is slow.

/** Whether the string fields a frequent `type` requires are strings; undefined for any other type. */
function hasRequiredStrings(type: string, event: Record<string, unknown>): boolean | undefined {
  switch (type) {
    case EventType.TEXT_MESSAGE_START:
    case EventType.TEXT_MESSAGE_END:
    case EventType.REASONING_START:
    case EventType.REASONING_MESSAGE_START:
    case EventType.REASONING_MESSAGE_END:
    case EventType.REASONING_END:
      return typeof event.messageId === 'string';
    case EventType.TOOL_CALL_START:
      return typeof event.toolCallId === 'string' && typeof event.toolCallName === 'string';
    case EventType.TOOL_CALL_END:
      return typeof event.toolCallId === 'string';
    case EventType.TOOL_CALL_RESULT:
      return typeof event.messageId === 'string' && typeof event.toolCallId === 'string' && typeof event.content === 'string';
    case EventType.STATE_SNAPSHOT:
    case EventType.STATE_DELTA:
      return true;
    case EventType.RUN_STARTED:
    case EventType.RUN_FINISHED:
      return typeof event.threadId === 'string' && typeof event.runId === 'string';
    default:
      return undefined;
  }
}
const textRoles: ReadonlySet<unknown> = new Set(TextMessageRoleSchema.options);
const patchOps: ReadonlySet<unknown> = new Set(['add', 'remove', 'replace', 'move', 'copy', 'test']);

/**
 * RFC 6901, as the schema's own pattern `^(\/([^/~]|~[01])*)*$` has it: '' or '/'-prefixed tokens
 * in which '~' is only ever '~0' or '~1'. Tested without the regex: it runs on every path of every patch.
 */
function isJsonPointer(path: string): boolean {
  if (path.length > 0 && path.charCodeAt(0) !== 0x2f /* / */) return false;
  for (let tilde = path.indexOf('~'); tilde !== -1; tilde = path.indexOf('~', tilde + 1)) {
    const escaped = path.charCodeAt(tilde + 1);
    if (escaped !== 0x30 /* 0 */ && escaped !== 0x31 /* 1 */) return false;
  }
  return true;
}

/** Whether `event` of a frequent `type` is valid by the schema's rules, tested by hand (false: ask the schema). */
function isPlainValid(type: string, event: Record<string, unknown>): boolean {
  if (hasRequiredStrings(type, event) !== true) return false;
  const { timestamp, rawEvent, metadata, subagentRunId } = event;
  if (timestamp !== undefined && !Number.isSafeInteger(timestamp)) return false;
  if (rawEvent === null) return false;
  if (metadata !== undefined && (typeof metadata !== 'object' || metadata === null || Array.isArray(metadata))) return false;
  if (subagentRunId !== undefined && typeof subagentRunId !== 'string') return false;
  switch (type) {
    case EventType.TEXT_MESSAGE_START:
      return (event.role === undefined || textRoles.has(event.role)) && (event.name === undefined || typeof event.name === 'string');
    case EventType.REASONING_MESSAGE_START:
      return event.role === 'reasoning';
    case EventType.TOOL_CALL_START:
      return event.parentMessageId === undefined || typeof event.parentMessageId === 'string';
    case EventType.TOOL_CALL_RESULT:
      return event.role === undefined || event.role === 'tool';
    case EventType.STATE_SNAPSHOT:
      return event.snapshot !== undefined;
    case EventType.STATE_DELTA:
      return isPlainPatch(event.delta);
    case EventType.RUN_STARTED:
      // An `input` is a whole RunAgentInput: the schema's to check.
      return (event.parentRunId === undefined || typeof event.parentRunId === 'string') && (event.protocolVersion === undefined || typeof event.protocolVersion === 'string') && event.input === undefined;
    case EventType.RUN_FINISHED:
      // Usage entries and interrupts have shapes of their own: the schema's to check.
      return event.result !== null && event.usage === undefined && (event.outcome === undefined || isPlainOutcome(event.outcome));
    default:
      return true;
  }
}

/** A RUN_FINISHED `outcome` of `success` (its `pendingToolCallIds` strings) or `cancelled`. */
function isPlainOutcome(outcome: unknown): boolean {
  if (typeof outcome !== 'object' || outcome === null || Array.isArray(outcome)) return false;
  const { type, pendingToolCallIds } = outcome as { type?: unknown; pendingToolCallIds?: unknown };
  if (type === 'cancelled') return true;
  if (type !== 'success') return false;
  if (pendingToolCallIds === undefined) return true;
  if (!Array.isArray(pendingToolCallIds)) return false;
  for (const id of pendingToolCallIds) if (typeof id !== 'string') return false;
  return true;
}

function isPlainPatch(patch: unknown): boolean {
  if (!Array.isArray(patch)) return false;
  for (const operation of patch) {
    if (typeof operation !== 'object' || operation === null) return false;
    const { op, path, from, value } = operation as Record<string, unknown>;
    if (!patchOps.has(op) || typeof path !== 'string' || !isJsonPointer(path)) return false;
    if ((op === 'move' || op === 'copy') && (typeof from !== 'string' || !isJsonPointer(from))) return false;
    if ((op === 'add' || op === 'replace' || op === 'test') && value === undefined) return false;
  }
  return true;
}

/**
 * Whether `event` is a TEXT_MESSAGE_CONTENT that {@link assertWireEvent} accepts on its first
 * comparisons: string `messageId` and `delta`, none of the optional base fields. The most frequent
 * event of a run, tested by name without the lookups of the general path.
 */
export function isPlainTextContent(type: unknown, event: Record<string, unknown>): boolean {
  return type === EventType.TEXT_MESSAGE_CONTENT && typeof event.messageId === 'string' && typeof event.delta === 'string' && hasNoBaseFields(event);
}

/**
 * Whether `event` is a TEXT_MESSAGE_START or TEXT_MESSAGE_END that {@link assertWireEvent} accepts
 * on its first comparisons: a string `messageId`, none of the optional base fields, and on START a
 * `role` the schema knows (or none) and no `name`. Two per message: with the content events, what
 * a text stream is made of.
 */
export function isPlainTextStartOrEnd(type: unknown, event: Record<string, unknown>): boolean {
  if (type === EventType.TEXT_MESSAGE_END) return typeof event.messageId === 'string' && hasNoBaseFields(event);
  return type === EventType.TEXT_MESSAGE_START && typeof event.messageId === 'string' && hasNoBaseFields(event) && (event.role === undefined || textRoles.has(event.role)) && event.name === undefined;
}

/** The rest of a per-token event: `delta` and the base fields, as the schema has them. */
function assertTokenFields(type: string, event: Record<string, unknown>): Event {
  if (typeof event.delta !== 'string') throw invalidField(type, 'delta', event.delta, 'a string');
  const { subagentRunId, timestamp, metadata, rawEvent } = event;
  // The common case, all four absent, costs four comparisons.
  if (subagentRunId === undefined && timestamp === undefined && metadata === undefined && rawEvent === undefined) return event as unknown as Event;
  if (rawEvent === null) throw invalidField(type, 'rawEvent', null, 'absent or set');
  if (metadata === null) throw invalidField(type, 'metadata', null, 'absent or set');
  if (timestamp === null) throw invalidField(type, 'timestamp', null, 'absent or set');
  if (subagentRunId === null) throw invalidField(type, 'subagentRunId', null, 'absent or set');
  if (subagentRunId !== undefined && typeof subagentRunId !== 'string') throw invalidField(type, 'subagentRunId', subagentRunId, 'a string');
  if (timestamp !== undefined && !Number.isSafeInteger(timestamp)) throw invalidField(type, 'timestamp', timestamp, 'an integer');
  if (metadata !== undefined && (typeof metadata !== 'object' || Array.isArray(metadata))) throw invalidField(type, 'metadata', metadata, 'an object');
  return event as unknown as Event;
}

function invalidField(type: string, field: string, value: unknown, expected: string, hint = ''): AguiRxError {
  return new AguiRxError(
    'INVALID_EVENT',
    `${type} has '${field}: ${describeValue(value)}', but '${field}' must be ${expected}${value === null ? ': omit an optional field rather than sending null' : ''}.${hint}`,
  );
}

/**
 * When a field is missing and the event has it in snake_case (`tool_call_id` for `toolCallId`, as a
 * serialiser without aliases writes it), a sentence saying so; else ''. Read only on failure.
 */
function snakeCaseHint(event: Record<string, unknown>, field: string): string {
  if (event[field] !== undefined) return '';
  const snake = snakeOf(field);
  return snake !== field && event[snake] !== undefined
    ? ` The event has '${snake}': AG-UI names its fields in camelCase ('${field}'). toAgui and agui-rx verify --fix read snake_case names, but on the wire they must be camelCase.`
    : '';
}

/** The value at `path` inside `value`, or undefined where the path leaves the objects (never throws on plain JSON). */
export function valueAt(value: unknown, path: readonly PropertyKey[]): unknown {
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
