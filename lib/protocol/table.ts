import { EventType } from '@ag-ui/core';

/**
 * THE protocol table: what AG-UI 1.0 opens and closes, and with which events. Every operator,
 * tracker, validator, the verifier and the transports read these facts here; a rule changes in
 * this file alone (a new per-token event type in a later AG-UI version, say).
 *
 * Sources: the AG-UI 1.0 event reference and the rules `@ag-ui/client`'s `verifyEvents` and
 * `transformChunks` enforce.
 */

/** The entities an AG-UI stream opens and closes. */
export type EntityKindName = 'textMessage' | 'reasoningMessage' | 'reasoning' | 'toolCall' | 'step' | 'subagent' | 'activity';

/**
 * The namespace an entity's id lives in: the client keeps one owner per id and namespace (a
 * reasoning span and the reasoning message inside it may share an id; a tool message minted by a
 * TOOL_CALL_RESULT is a `message`).
 */
export type IdSpace = 'message' | 'reasoning' | 'toolCall' | 'activity' | 'step' | 'subagent';

/** How one kind of entity travels on the wire. */
export interface EntityKind {
  /** Its name in this table. */
  readonly name: EntityKindName;
  /** How messages name it, singular and plural: `text message`, `text messages`. */
  readonly noun: string;
  readonly nouns: string;
  /** The event that opens it. */
  readonly start: EventType;
  /** The per-token event that streams its content, if it streams. */
  readonly content?: EventType;
  /** The events that close it (SUBAGENT_FINISHED or SUBAGENT_ERROR for a subagent). */
  readonly end: readonly EventType[];
  /** The chunk shorthand that the client expands into start / content / end, if there is one. */
  readonly chunk?: EventType;
  /** Fields of the opener that a later chunk may repeat only unchanged (the client's `transformChunks` rule). */
  readonly chunkAgrees?: readonly ('role' | 'name' | 'toolCallName' | 'parentMessageId')[];
  /** The field that names the entity. */
  readonly idField: 'messageId' | 'toolCallId' | 'stepName' | 'subagentRunId';
  /** Where its id lives (see {@link IdSpace}). */
  readonly idSpace: IdSpace;
  /**
   * Whether each lane (a `subagentRunId`) has its own entities of this kind: a step of the parent
   * agent and a step of a subagent may share a name. A subagent is a lane itself.
   */
  readonly perLane: boolean;
  /** Whether instances of this kind nest (close the latest first) rather than stand side by side. */
  readonly nests: boolean;
  /**
   * Other kinds that starting or streaming this one closes in its lane: text ends reasoning and
   * reasoning ends text; a tool call ends reasoning; text and reasoning end the lane's tool calls.
   */
  readonly closesInLane: readonly EntityKindName[];
}

const kind = (entry: EntityKind): EntityKind => Object.freeze(entry);

/**
 * Every entity kind, in the order closers are sent when a run ends with them open: innermost first
 * (a tool call inside a text turn, a message inside a reasoning span, everything inside a step,
 * steps inside a subagent). Activities are never open: a snapshot is whole.
 */
export const entityKinds: readonly EntityKind[] = Object.freeze([
  kind({
    name: 'toolCall',
    noun: 'tool call',
    nouns: 'tool calls',
    start: EventType.TOOL_CALL_START,
    content: EventType.TOOL_CALL_ARGS,
    end: [EventType.TOOL_CALL_END],
    chunk: EventType.TOOL_CALL_CHUNK,
    chunkAgrees: ['toolCallName', 'parentMessageId'],
    idField: 'toolCallId',
    idSpace: 'toolCall',
    perLane: true,
    nests: false,
    closesInLane: ['reasoningMessage', 'reasoning'],
  }),
  kind({
    name: 'textMessage',
    noun: 'text message',
    nouns: 'text messages',
    start: EventType.TEXT_MESSAGE_START,
    content: EventType.TEXT_MESSAGE_CONTENT,
    end: [EventType.TEXT_MESSAGE_END],
    chunk: EventType.TEXT_MESSAGE_CHUNK,
    chunkAgrees: ['role', 'name'],
    idField: 'messageId',
    idSpace: 'message',
    perLane: true,
    nests: false,
    closesInLane: ['reasoningMessage', 'reasoning', 'toolCall'],
  }),
  kind({
    name: 'reasoningMessage',
    noun: 'reasoning message',
    nouns: 'reasoning messages',
    start: EventType.REASONING_MESSAGE_START,
    content: EventType.REASONING_MESSAGE_CONTENT,
    end: [EventType.REASONING_MESSAGE_END],
    chunk: EventType.REASONING_MESSAGE_CHUNK,
    chunkAgrees: [],
    idField: 'messageId',
    idSpace: 'reasoning',
    perLane: true,
    nests: false,
    closesInLane: ['textMessage', 'toolCall'],
  }),
  kind({
    name: 'reasoning',
    noun: 'reasoning span',
    nouns: 'reasoning spans',
    start: EventType.REASONING_START,
    end: [EventType.REASONING_END],
    idField: 'messageId',
    idSpace: 'reasoning',
    perLane: true,
    nests: false,
    closesInLane: ['textMessage', 'reasoningMessage', 'toolCall'],
  }),
  kind({
    name: 'step',
    noun: 'step',
    nouns: 'steps',
    start: EventType.STEP_STARTED,
    end: [EventType.STEP_FINISHED],
    idField: 'stepName',
    idSpace: 'step',
    perLane: true,
    nests: true,
    closesInLane: [],
  }),
  kind({
    name: 'subagent',
    noun: 'subagent',
    nouns: 'subagents',
    start: EventType.SUBAGENT_STARTED,
    end: [EventType.SUBAGENT_FINISHED, EventType.SUBAGENT_ERROR],
    idField: 'subagentRunId',
    idSpace: 'subagent',
    perLane: false,
    nests: true,
    closesInLane: [],
  }),
]);

/** Each entity kind by name. */
export const entityKind: Readonly<Record<Exclude<EntityKindName, 'activity'>, EntityKind>> = Object.freeze(
  Object.fromEntries(entityKinds.map((entry) => [entry.name, entry])) as Record<Exclude<EntityKindName, 'activity'>, EntityKind>,
);

/** What an event does to the entity it names. */
export type EntityRole = 'start' | 'content' | 'end' | 'chunk';

/** The entity kind and role of every event that opens, streams, closes or chunks an entity. */
export const entityEvents: ReadonlyMap<string, { readonly kind: EntityKind; readonly role: EntityRole }> = new Map(
  entityKinds.flatMap((entry) => {
    const roles: [string, { kind: EntityKind; role: EntityRole }][] = [[entry.start, { kind: entry, role: 'start' }]];
    if (entry.content !== undefined) roles.push([entry.content, { kind: entry, role: 'content' }]);
    for (const end of entry.end) roles.push([end, { kind: entry, role: 'end' }]);
    if (entry.chunk !== undefined) roles.push([entry.chunk, { kind: entry, role: 'chunk' }]);
    return roles;
  }),
);

/**
 * The per-token events: one per streamed token, by far the most frequent, and opening or closing
 * nothing (TEXT_MESSAGE_CONTENT, TOOL_CALL_ARGS, REASONING_MESSAGE_CONTENT). Hot paths test
 * membership here and skip their bookkeeping for them.
 */
export const tokenEventTypes: ReadonlySet<string> = new Set(entityKinds.flatMap((entry) => (entry.content === undefined ? [] : [entry.content])));

/** The id field of each per-token event type (`messageId` or `toolCallId`). */
export const tokenIdField: ReadonlyMap<string, 'messageId' | 'toolCallId'> = new Map(
  entityKinds.flatMap((entry) => (entry.content === undefined ? [] : [[entry.content, entry.idField as 'messageId' | 'toolCallId'] as const])),
);

/** Whether `type` is a per-token event type (see {@link tokenEventTypes}). */
export function isTokenEventType(type: unknown): boolean {
  return tokenEventTypes.has(type as string);
}

/**
 * How far an event ends the current turn: what the lane has open (its text and reasoning
 * messages, reasoning span, and tool calls) is closed before the event passes.
 * - `lane`: the turn of the event's own lane (its `subagentRunId`);
 * - `subagent`: the turn of the subagent the event ends (SUBAGENT_FINISHED / SUBAGENT_ERROR);
 * - `run`: every lane's turn (run boundaries, and a MESSAGES_SNAPSHOT, which replaces the conversation).
 *
 * A TOOL_CALL_RESULT closes the lane's text and reasoning and ends the turn, but of the tool calls
 * only its own: a parallel call may still be streaming.
 */
export const turnBoundaries: ReadonlyMap<string, 'lane' | 'subagent' | 'run'> = new Map([
  [EventType.TOOL_CALL_RESULT, 'lane'],
  [EventType.STEP_STARTED, 'lane'],
  [EventType.STEP_FINISHED, 'lane'],
  [EventType.SUBAGENT_FINISHED, 'subagent'],
  [EventType.SUBAGENT_ERROR, 'subagent'],
  [EventType.RUN_STARTED, 'run'],
  [EventType.RUN_FINISHED, 'run'],
  [EventType.RUN_ERROR, 'run'],
  [EventType.MESSAGES_SNAPSHOT, 'run'],
]);

/**
 * Events before which the official client ends the chunk stream of their own lane (its
 * `transformChunks` closes a chunk-built message or call, then passes them on): every streamed
 * entity event, TOOL_CALL_RESULT, state events, CUSTOM and steps.
 */
export const chunkStreamClosers: ReadonlySet<string> = new Set<string>([
  ...[...entityEvents].filter(([, entry]) => entry.role !== 'chunk' && entry.kind.content !== undefined).map(([type]) => type),
  EventType.REASONING_START,
  EventType.REASONING_END,
  EventType.TOOL_CALL_RESULT,
  EventType.STATE_SNAPSHOT,
  EventType.STATE_DELTA,
  EventType.CUSTOM,
  EventType.STEP_STARTED,
  EventType.STEP_FINISHED,
]);

/** The events that end a run. */
export const terminalEventTypes: ReadonlySet<string> = new Set([EventType.RUN_FINISHED, EventType.RUN_ERROR]);
