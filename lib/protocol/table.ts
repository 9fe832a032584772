import { EventType } from '@ag-ui/core';

/**
 * THE protocol table: what AG-UI 1.0 opens and closes, and with which events, and the step and
 * subagent rules with their one wording. Every operator, tracker, validator, the verifier and the
 * transports read these facts here; a rule changes in this file alone (a new per-token event type
 * in a later AG-UI version, say: spec/lib/protocol/table.spec.ts adds one and watches them follow).
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
  readonly content?: EventType | undefined;
  /** The events that close it: the first is its normal closer; a second one closes it on error (SUBAGENT_ERROR). */
  readonly end: readonly EventType[];
  /** The chunk shorthand that the client expands into start / content / end, if there is one. */
  readonly chunk?: EventType | undefined;
  /** Fields of the opener that a later chunk may repeat only unchanged (the client's `transformChunks` rule). */
  readonly chunkAgrees?: readonly ('role' | 'name' | 'toolCallName' | 'parentMessageId')[] | undefined;
  /** The field that names the entity. */
  readonly idField: 'messageId' | 'toolCallId' | 'stepName' | 'subagentRunId';
  /** Where its id lives (see {@link IdSpace}). */
  readonly idSpace: IdSpace;
  /**
   * Whether it belongs to a lane (a `subagentRunId`): its events, closers included, carry the
   * lane's tag. A subagent is a lane itself.
   */
  readonly perLane: boolean;
  /**
   * Whether it lives inside one turn of its lane, so that the {@link turnBoundaries} close it (text
   * and reasoning messages, reasoning spans, tool calls); steps and subagents span turns.
   */
  readonly inTurn: boolean;
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
    inTurn: true,
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
    inTurn: true,
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
    inTurn: true,
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
    inTurn: true,
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
    inTurn: false,
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
    inTurn: false,
    closesInLane: [],
  }),
]);

/** What an event does to the entity it names. */
export type EntityRole = 'start' | 'content' | 'end' | 'chunk';

/** The kind and role of an event that opens, streams, closes or chunks an entity. */
export interface EntityEvent {
  readonly kind: EntityKind;
  readonly role: EntityRole;
}

/** The lookups every consumer reads, derived from a list of entity kinds (see {@link indexEntityKinds}). */
export interface EntityIndex {
  /** Each entity kind by name. */
  readonly entityKind: Readonly<Record<string, EntityKind>>;
  /** The entity kind and role of every event that opens, streams, closes or chunks an entity. */
  readonly entityEvents: ReadonlyMap<string, EntityEvent>;
  /** The per-token event types (see {@link tokenEventTypes}). */
  readonly tokenEventTypes: ReadonlySet<string>;
  /** The kind each per-token event type streams. */
  readonly tokenKinds: ReadonlyMap<string, EntityKind>;
  /** The id field of each per-token event type. */
  readonly tokenIdField: ReadonlyMap<string, 'messageId' | 'toolCallId'>;
  /** See {@link tokenKindOf}, {@link tokenIdFieldOf}, {@link isTokenEventType}. */
  readonly tokenKindOf: (type: unknown) => EntityKind | undefined;
  readonly tokenIdFieldOf: (type: unknown) => 'messageId' | 'toolCallId' | undefined;
  readonly isTokenEventType: (type: unknown) => boolean;
  /** See {@link chunkStreamClosers}. */
  readonly chunkStreamClosers: ReadonlySet<string>;
}

/**
 * The lookups derived from `kinds`: the module's own exports are `indexEntityKinds(entityKinds)`;
 * a spec that changes the table (a new per-token event type, say) derives them from its list.
 */
export function indexEntityKinds(kinds: readonly EntityKind[]): EntityIndex {
  const entityEvents = new Map<string, EntityEvent>();
  for (const entry of kinds) {
    entityEvents.set(entry.start, { kind: entry, role: 'start' });
    if (entry.content !== undefined) entityEvents.set(entry.content, { kind: entry, role: 'content' });
    for (const end of entry.end) entityEvents.set(end, { kind: entry, role: 'end' });
    if (entry.chunk !== undefined) entityEvents.set(entry.chunk, { kind: entry, role: 'chunk' });
  }
  const streams = kinds.filter((entry) => entry.content !== undefined);
  const tokenKindOf = typeLookup(streams.map((entry) => [entry.content!, entry] as const));
  return {
    entityKind: Object.freeze(Object.fromEntries(kinds.map((entry) => [entry.name, entry]))),
    entityEvents,
    tokenEventTypes: new Set(streams.map((entry) => entry.content!)),
    tokenKinds: new Map(streams.map((entry) => [entry.content!, entry])),
    tokenIdField: new Map(streams.map((entry) => [entry.content!, entry.idField as 'messageId' | 'toolCallId'])),
    tokenKindOf,
    tokenIdFieldOf: typeLookup(streams.map((entry) => [entry.content!, entry.idField as 'messageId' | 'toolCallId'] as const)),
    isTokenEventType: (type) => tokenKindOf(type) !== undefined,
    chunkStreamClosers: new Set<string>([
      ...[...entityEvents].filter(([, entry]) => entry.role !== 'chunk' && entry.kind.inTurn).map(([type]) => type),
      EventType.TOOL_CALL_RESULT,
      EventType.STATE_SNAPSHOT,
      EventType.STATE_DELTA,
      EventType.CUSTOM,
      EventType.STEP_STARTED,
      EventType.STEP_FINISHED,
    ]),
  };
}

/**
 * A lookup by event type for the hot paths, which run it on every event: the first four types are
 * tested with `===` (a pointer comparison for the interned type strings, several times cheaper
 * than a Map lookup); a Map answers for any beyond them.
 */
function typeLookup<T>(entries: readonly (readonly [string, T])[]): (type: unknown) => T | undefined {
  // A missing slot has key and value undefined: an absent type then finds "not there" in it too.
  const [[t0, v0] = [], [t1, v1] = [], [t2, v2] = [], [t3, v3] = []] = entries;
  const rest = entries.length > 4 ? new Map(entries.slice(4)) : undefined;
  return (type) => (type === t0 ? v0 : type === t1 ? v1 : type === t2 ? v2 : type === t3 ? v3 : rest?.get(type as string));
}

const index = indexEntityKinds(entityKinds);

/** Each entity kind by name. */
export const entityKind = index.entityKind as Readonly<Record<Exclude<EntityKindName, 'activity'>, EntityKind>>;

/** The entity kind and role of every event that opens, streams, closes or chunks an entity. */
export const entityEvents: ReadonlyMap<string, EntityEvent> = index.entityEvents;

/**
 * The per-token events: one per streamed token, by far the most frequent, and opening or closing
 * nothing (each streaming kind's `content`). Hot paths test membership here and skip their
 * bookkeeping for them.
 */
export const tokenEventTypes: ReadonlySet<string> = index.tokenEventTypes;

/** The entity kind each per-token event type streams. */
export const tokenKinds: ReadonlyMap<string, EntityKind> = index.tokenKinds;

/** The id field of each per-token event type (`messageId` or `toolCallId`). */
export const tokenIdField: ReadonlyMap<string, 'messageId' | 'toolCallId'> = index.tokenIdField;

/** The entity kind a per-token event type streams, or `undefined` for any other type; as fast as a few `===` tests. */
export const tokenKindOf: (type: unknown) => EntityKind | undefined = index.tokenKindOf;

/** The id field (`messageId` or `toolCallId`) of a per-token event type, or `undefined` for any other type; as fast as a few `===` tests. */
export const tokenIdFieldOf: (type: unknown) => 'messageId' | 'toolCallId' | undefined = index.tokenIdFieldOf;

/** Whether `type` is a per-token event type (see {@link tokenEventTypes}); as fast as a few `===` tests. */
export const isTokenEventType: (type: unknown) => boolean = index.isTokenEventType;

/**
 * How far an event ends the current turn: what the lane has open (its text and reasoning
 * messages, reasoning span, and tool calls) is closed before the event passes.
 * - `lane`: the turn of the event's own lane (its `subagentRunId`);
 * - `subagent`: the turn of the subagent the event ends (SUBAGENT_FINISHED / SUBAGENT_ERROR);
 * - `run`: every lane's turn (run boundaries, and a MESSAGES_SNAPSHOT, which replaces the conversation).
 *
 * A TOOL_CALL_RESULT closes the lane's text and reasoning and ends the turn, but of the tool calls
 * only its own: a parallel call may still be streaming. A step boundary closes only the tool calls
 * whose arguments are complete, as text and reasoning do (see {@link closesCompleteCallsOnly}).
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
 * The events that close a tool call of their lane only once its arguments are complete (a JSON
 * object or array that parses): STEP_STARTED and STEP_FINISHED, and the starts, content and chunks
 * of text and reasoning (the kinds whose `closesInLane` names tool calls). A call whose arguments
 * are still incomplete, or that has none yet, stays open across them, and closes at its own END,
 * its result, its subagent's end or the run's end.
 *
 * Why: AG-UI requires every call closed before RUN_FINISHED, not before a step or message ends,
 * and the official client applies a call's TOOL_CALL_ARGS whatever comes between them. A
 * TOOL_CALL_END is final (nothing can be added to the call after it, and a client runs a frontend
 * tool on it). Frameworks that report their graph's nodes as steps (LangGraph) send step events
 * between one call's argument fragments, and models interleave text or reasoning with a call's
 * arguments; closing the call there would cut its arguments.
 */
export const closesCompleteCallsOnly: ReadonlySet<string> = new Set([
  EventType.STEP_STARTED,
  EventType.STEP_FINISHED,
  ...[...index.entityEvents].filter(([, { kind, role }]) => role !== 'end' && kind.closesInLane.includes('toolCall')).map(([type]) => type),
]);

/**
 * Events before which the official client ends the chunk stream of their own lane (its
 * `transformChunks` closes a chunk-built message or call, then passes them on): every start,
 * content and end event of what a turn holds, TOOL_CALL_RESULT, state events, CUSTOM and steps.
 */
export const chunkStreamClosers: ReadonlySet<string> = index.chunkStreamClosers;

/** The events that end a run. */
export const terminalEventTypes: ReadonlySet<string> = new Set([EventType.RUN_FINISHED, EventType.RUN_ERROR]);

/**
 * Events before which running steps are finished: the end of a subagent finishes the steps of its
 * lane (`subagent`), the end of the run every step (`run`).
 */
export const stepBoundaries: ReadonlyMap<string, 'subagent' | 'run'> = new Map<string, 'subagent' | 'run'>([
  ...entityKind.subagent.end.map((type) => [type, 'subagent'] as const),
  ...[...terminalEventTypes].map((type) => [type, 'run'] as const),
]);

/** {@link stepBoundaries} as a lookup for every event of a hot path: `undefined` for an event that finishes no step. */
export const stepBoundaryOf: (type: unknown) => 'subagent' | 'run' | undefined = typeLookup([...stepBoundaries]);

/**
 * The kinds as "still open" messages list them (RUN_FINISHED with entities open, a stream that
 * stops mid-run), in the order the client's `verifyEvents` checks them.
 */
export const stillOpenOrder: readonly EntityKind[] = Object.freeze([
  entityKind.step,
  entityKind.textMessage,
  entityKind.reasoningMessage,
  entityKind.reasoning,
  entityKind.toolCall,
  entityKind.subagent,
]);

/** The step and subagent rules: the verifier's rule names, which the operators keep too. */
export type LifecycleRuleName =
  | 'duplicate-step'
  | 'step-not-started'
  | 'step-owner-mismatch'
  | 'subagent-already-active'
  | 'subagent-id-reused'
  | 'subagent-parent-unknown'
  | 'subagent-not-active';

/** What a step or subagent rule's message says (lanes already described: `the parent agent`, `subagent 's1'`). */
export interface LifecycleFacts {
  /** The offending event's type. */
  readonly type: string;
  /** The step's name, or the subagent's `subagentRunId`. */
  readonly id: string;
  /** The step's lane, described. */
  readonly lane?: string | undefined;
  /** The lane where a step of that name runs instead (`step-owner-mismatch`), described. */
  readonly runningIn?: string | undefined;
  /** The `parentSubagentRunId` that was never started (`subagent-parent-unknown`). */
  readonly parent?: string | undefined;
  /** The position of the event that started what is already running, when the caller counts events (the verifier does). */
  readonly since?: number | undefined;
}

/** One step or subagent rule. */
export interface LifecycleRule {
  /**
   * Whether an operator that keeps the stream valid must fail the run (`INVALID_EVENT`) rather than
   * drop the event: a subagent id used again, or a parent never started, cannot be repaired.
   */
  readonly fatal: boolean;
  /** What is wrong and what to do, for a person; the verifier reports it as is, an operator that drops the event puts "Dropped " in front. */
  message(facts: LifecycleFacts): string;
}

const since = (facts: LifecycleFacts) => (facts.since === undefined ? '' : ` (since #${facts.since})`);

/** The step and subagent rules, each with its one wording. */
export const lifecycleRules: Readonly<Record<LifecycleRuleName, LifecycleRule>> = Object.freeze({
  'duplicate-step': {
    fatal: false,
    message: (f: LifecycleFacts) => `${f.type} for step '${f.id}' of ${f.lane}, which is already running${since(f)}. Finish it with STEP_FINISHED before starting it again.`,
  },
  'step-not-started': {
    fatal: false,
    message: (f: LifecycleFacts) => `${f.type} for step '${f.id}' of ${f.lane}, which is not running. Send STEP_STARTED first, and finish each step once.`,
  },
  'step-owner-mismatch': {
    fatal: false,
    message: (f: LifecycleFacts) => `${f.type} for step '${f.id}' of ${f.lane}, but that step is running in ${f.runningIn}. Finish a step with the subagentRunId it was started with.`,
  },
  'subagent-already-active': {
    fatal: false,
    message: (f: LifecycleFacts) => `${f.type} for subagent '${f.id}', which is already running${since(f)}. End it with SUBAGENT_FINISHED or SUBAGENT_ERROR first.`,
  },
  'subagent-id-reused': {
    fatal: true,
    message: (f: LifecycleFacts) => `${f.type} reuses subagentRunId '${f.id}', which already ended in this run. Give each subagent invocation its own subagentRunId.`,
  },
  'subagent-parent-unknown': {
    fatal: true,
    message: (f: LifecycleFacts) => `${f.type} for subagent '${f.id}' names parentSubagentRunId '${f.parent}', which has not started in this run. Start the parent subagent first.`,
  },
  'subagent-not-active': {
    fatal: false,
    message: (f: LifecycleFacts) => `${f.type} for subagent '${f.id}', which is not running. Send SUBAGENT_STARTED first, and end each subagent once.`,
  },
});

/** The message of a broken step or subagent rule as an operator gives it: "Dropped …" when it drops the event, the rule's message when the run fails. */
export function operatorLifecycleMessage(rule: LifecycleRuleName, facts: LifecycleFacts): string {
  const entry = lifecycleRules[rule];
  return entry.fatal ? entry.message(facts) : `Dropped ${entry.message(facts)}`;
}
