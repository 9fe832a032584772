import { RoleSchema } from '@ag-ui/core/schemas';
import { isObject } from '../protocol/values.js';
import { recordType } from '../protocol/recordType.js';
import { createIdTable, type IdTable } from './idTable.js';

/**
 * What a run starts in the client's message list (`@ag-ui/client` keeps one list, found by `id`
 * whatever the role): a text message, a reasoning message or span, a TOOL_CALL_RESULT's tool
 * message, an activity, or the assistant message a TOOL_CALL_START creates for its call (named
 * after its `parentMessageId`, or after the call itself when it has none).
 */
export type MessageStart = 'text' | 'reasoning' | 'toolResult' | 'activity' | 'toolCallMessage';

/** One message id the client holds (or will hold): where it came from and what it is. */
export interface KnownMessage {
  /** From the conversation before the run (`input.messages`, or a MESSAGES_SNAPSHOT), not started by the run. */
  readonly history: boolean;
  /** The message's role in the client (`assistant`, `user`, `reasoning`, `tool`, `activity`, …). */
  readonly role: string;
  /** What the run started under this id (absent for the history). */
  readonly start?: MessageStart | undefined;
  /** An activity's `activityType`. */
  readonly activityType?: string | undefined;
}

/**
 * The ids of one conversation as the official client keys them: messages by `id` (one namespace
 * for every role) and tool calls by `toolCalls[].id`, each from the history or started by the run.
 * Pure bookkeeping, no RxJS; shared by `distinctIds` (which repairs) and the verifier (which reports).
 * Call its functions as methods (`ids.seed(list)`): they are shared, and read the state of the record they are called on.
 */
export interface ConversationIds {
  /** Records `messages` (a RunAgentInput's or a MESSAGES_SNAPSHOT's) and their tool calls as history. Anything not a message is skipped. */
  seed(messages: unknown): void;
  /** The message the client holds under `id`, if any. */
  message(id: string): KnownMessage | undefined;
  /** Records that the run started `start` under `id`, with the client's `role` for it. */
  addMessage(id: string, start: MessageStart, role: string, activityType?: string): void;
  /** Whether a tool call of the history is named `id`. */
  isHistoryCall(id: string): boolean;
  /** Whether the run started a tool call named `id`. */
  isRunCall(id: string): boolean;
  /** Records that the run started a tool call named `id`. */
  addCall(id: string): void;

  /**
   * What the run starting `start` under `id` would collide with, described for a person
   * (`a user message of the conversation history`), or `undefined` when `id` is free or names the
   * same entity: a text message may join the assistant message its tool calls created; an
   * ACTIVITY_SNAPSHOT may update an activity of the same `activityType` (the history's too). With
   * `role`, a text start joins only a message of that role (the client keeps the first role).
   */
  messageCollision(id: string, start: MessageStart, activityType?: string, role?: string): string | undefined;
}

// What a run-started message is, for the collision descriptions.
const startNouns: Record<MessageStart, string> = {
  text: 'text message',
  reasoning: 'reasoning message',
  toolResult: 'tool result message',
  activity: 'activity',
  toolCallMessage: 'assistant message of a tool call',
};

// 'an activity', 'an assistant message', 'a user message'.
const article = (noun: string) => (/^[aeio]/.test(noun) ? 'an' : 'a');

/** A person's description of a known message: `a user message of the conversation history`, `this run's reasoning message`. */
export function describeKnownMessage(known: KnownMessage): string {
  if (known.history) {
    const noun = known.role === 'activity' ? `activity${known.activityType === undefined ? '' : ` '${known.activityType}'`}` : `${known.role} message`;
    return `${article(noun)} ${noun} of the conversation history`;
  }
  const noun =
    known.start === 'activity' && known.activityType !== undefined
      ? `activity '${known.activityType}'`
      : known.start === 'text' && known.role !== 'assistant'
        ? `${known.role} text message`
        : startNouns[known.start!];
  return `this run's ${noun}`;
}

/** Whether a run-started message of kind `existing` may be continued by a start of kind `start` (and `role`, when given) under its id. */
function sameEntity(existing: KnownMessage, start: MessageStart, activityType: string | undefined, role: string | undefined): boolean {
  if (existing.history) return start === 'activity' && existing.role === 'activity' && existing.activityType === activityType;
  switch (start) {
    case 'text':
      // The client streams text into the assistant message a tool call created (AG-UI's usual order
      // for a turn), and a START for an ended text message reopens it; either keeps its first role.
      if (role !== undefined && role !== existing.role) return false;
      return existing.start === 'text' || (existing.start === 'toolCallMessage' && existing.role === 'assistant');
    case 'reasoning':
    case 'activity':
      return existing.start === start;
    // A tool message is new by definition; so is the message the client names after a call (it never looks one up).
    case 'toolResult':
    case 'toolCallMessage':
      return false;
    default: {
      const unreachable: never = start;
      return unreachable;
    }
  }
}

/** The state of one conversation's ids; the methods are the shared functions below (no closures per run). */
interface ConversationIdsRecord extends ConversationIds {
  /**
   * The first list of messages seeded (the history the run began with): its ids sorted, looked up
   * by a binary search. An open stream keeps its history's ids for the whole run, and a table
   * holds about 48 bytes per id (a `Map`'s hash table has room for twice its entries): the sorted
   * arrays hold 16 (the bench's item 14 with a history). Ids seeded or started later go into the
   * tables below, which come first in every lookup (a later record for an id replaces the earlier).
   */
  history: HistoryIndex | undefined;
  // Both made at their first entry (a run without tool calls, or with nothing after its history, holds neither).
  /** Message id -> what the client holds under it. */
  messages: IdTable<KnownMessage> | undefined;
  /** Tool call id -> whether the history holds it (true) or the run started it (false). */
  calls: IdTable<boolean> | undefined;
}

/** A list of messages as {@link ConversationIdsRecord.history} holds it. */
interface HistoryIndex {
  /** The messages' ids, sorted by code unit, each once (the last message under an id stays, as a `Map` keeps the last value set). */
  readonly messageIds: readonly string[];
  /** What the client holds under each id, at its index. */
  readonly messages: readonly KnownMessage[];
  /** The ids of the messages' tool calls, sorted, each once. */
  readonly callIds: readonly string[];
}

/** Creates the id bookkeeping of one conversation, seeded with `history` (RunAgentInput `messages`). */
export function createConversationIds(history?: unknown): ConversationIds {
  // Its methods on a shared prototype: a record holds only its fields.
  const record = new ConversationRecord();
  record.history = undefined;
  record.messages = undefined;
  record.calls = undefined;
  ConversationRecord.shaped(record);
  record.seed(history);
  return record;
}

/**
 * One frozen record per role AG-UI defines, shared by every history message of that role without
 * an `activityType`: an open stream keeps its history's ids for the whole run, and a record each
 * would be about 50 bytes per message of the history (what the client posted again for each run).
 */
const historyRecords: ReadonlyMap<string, KnownMessage> = new Map(
  [...RoleSchema.options, 'unknown'].map((role): [string, KnownMessage] => [role, Object.freeze({ history: true, role })]),
);

/** What the history's `message` is, as a known message: a shared record, or its own for an activity type or a role AG-UI does not define. */
function historyRecord(message: Record<string, unknown>): KnownMessage {
  const role = typeof message.role === 'string' ? message.role : 'unknown';
  if (typeof message.activityType === 'string') return { history: true, role, activityType: message.activityType };
  return historyRecords.get(role) ?? { history: true, role };
}

function seed(this: ConversationIdsRecord, list: unknown): void {
  if (!Array.isArray(list)) return;
  // The first list into an empty record (the history the run began with) is held sorted; later ones (a snapshot) go into the tables.
  if (this.history === undefined && this.messages === undefined && this.calls === undefined) {
    this.history = indexHistory(list);
    return;
  }
  for (const message of list) {
    if (!isObject(message) || typeof message.id !== 'string') continue;
    (this.messages ??= createIdTable()).set(message.id, historyRecord(message));
    if (!Array.isArray(message.toolCalls)) continue;
    for (const call of message.toolCalls) if (isObject(call) && typeof call.id === 'string') (this.calls ??= createIdTable()).set(call.id, true);
  }
}

/** `list`'s messages and tool calls as a {@link HistoryIndex}; anything not a message is skipped. */
function indexHistory(list: readonly unknown[]): HistoryIndex | undefined {
  const entries: [string, KnownMessage][] = [];
  const callIds: string[] = [];
  for (const message of list) {
    if (!isObject(message) || typeof message.id !== 'string') continue;
    entries.push([message.id, historyRecord(message)]);
    if (!Array.isArray(message.toolCalls)) continue;
    for (const call of message.toolCalls) if (isObject(call) && typeof call.id === 'string') callIds.push(call.id);
  }
  if (entries.length === 0 && callIds.length === 0) return undefined;
  // A stable sort: of the messages under one id, the last given stays last, and is the one kept.
  entries.sort(([a], [b]) => compareIds(a, b));
  const kept = entries.filter(([id], i) => i === entries.length - 1 || entries[i + 1][0] !== id);
  callIds.sort(compareIds);
  // `map` and `filter` make arrays of their exact length: no room left over per open stream.
  return {
    messageIds: kept.map(([id]) => id),
    messages: kept.map(([, known]) => known),
    callIds: callIds.filter((id, i) => i === 0 || callIds[i - 1] !== id),
  };
}

// Code unit order, the order `<` compares strings in (whatever the locale).
const compareIds = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** Where `id` is in `sorted` (ids in code unit order), or -1. */
function findId(sorted: readonly string[], id: string): number {
  let low = 0;
  let high = sorted.length - 1;
  while (low <= high) {
    const middle = (low + high) >>> 1;
    const at = sorted[middle];
    if (at === id) return middle;
    if (at < id) low = middle + 1;
    else high = middle - 1;
  }
  return -1;
}

function message(this: ConversationIdsRecord, id: string): KnownMessage | undefined {
  const known = this.messages?.get(id);
  if (known !== undefined || this.history === undefined) return known;
  const at = findId(this.history.messageIds, id);
  return at < 0 ? undefined : this.history.messages[at];
}

/**
 * One frozen record per kind of start and role AG-UI defines, shared by every message a run starts
 * without an `activityType`, as {@link historyRecords} are by the history's: an open stream keeps
 * them for the whole run, a record each about 50 bytes per message the run started.
 */
const runRecords: Readonly<Record<MessageStart, ReadonlyMap<string, KnownMessage>>> = Object.freeze({
  text: runRecordsOf('text'),
  reasoning: runRecordsOf('reasoning'),
  toolResult: runRecordsOf('toolResult'),
  activity: runRecordsOf('activity'),
  toolCallMessage: runRecordsOf('toolCallMessage'),
});

function runRecordsOf(start: MessageStart): ReadonlyMap<string, KnownMessage> {
  return new Map(RoleSchema.options.map((role): [string, KnownMessage] => [role, Object.freeze({ history: false, role, start })]));
}

function addMessage(this: ConversationIdsRecord, id: string, start: MessageStart, role: string, activityType: string | undefined): void {
  // A role AG-UI does not define (the verifier reports it) gets a record of its own; so does an activity type.
  const known = activityType === undefined ? (runRecords[start].get(role) ?? { history: false, role, start }) : { history: false, role, start, activityType };
  (this.messages ??= createIdTable()).set(id, known);
}

function isHistoryCall(this: ConversationIdsRecord, id: string): boolean {
  // A call the run started under the id (false) or a later snapshot's (true) decides; else the history.
  const recorded = this.calls?.get(id);
  if (recorded !== undefined) return recorded;
  return this.history !== undefined && findId(this.history.callIds, id) >= 0;
}

function isRunCall(this: ConversationIdsRecord, id: string): boolean {
  return this.calls?.get(id) === false;
}

function addCall(this: ConversationIdsRecord, id: string): void {
  (this.calls ??= createIdTable()).set(id, false);
}

function messageCollision(this: ConversationIdsRecord, id: string, start: MessageStart, activityType: string | undefined, role: string | undefined): string | undefined {
  return collisionWith(this.message(id), start, activityType, role);
}

/**
 * {@link ConversationIds.messageCollision} for the message a caller looked up already (`ids.message(id)`):
 * what starting `start` under its id would collide with, or `undefined`.
 */
export function collisionWith(known: KnownMessage | undefined, start: MessageStart, activityType: string | undefined, role: string | undefined): string | undefined {
  if (known === undefined || sameEntity(known, start, activityType, role)) return undefined;
  return describeKnownMessage(known);
}

const conversationIdsMethods: ConversationIds = Object.freeze({ seed, message, addMessage, isHistoryCall, isRunCall, addCall, messageCollision });
const ConversationRecord = recordType<ConversationIdsRecord>(conversationIdsMethods);
