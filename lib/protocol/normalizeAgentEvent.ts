import { EventType } from '@ag-ui/core';
import { EventSchema, MessageSchema, RunAgentInputSchema, ToolCallSchema } from '@ag-ui/core/schemas';
import { hasNoBaseFields } from './agentEvent.js';
import type { DiagnosticHandler } from './diagnostics.js';
import { strayFieldsOf } from './strayFields.js';
import { entityKind, entityKinds, type EntityKind } from './table.js';
import { recordType } from './recordType.js';
import { copyWithout } from './values.js';

/**
 * What {@link normalizeAgentEvent} read differently from how the event spells it: a snake_case
 * field name read as AG-UI's camelCase one, a snake_case field left out because its camelCase twin
 * says otherwise, or `null` in an optional field read as absent.
 */
export interface EntryRepair {
  /**
   * `snakeCase`: a field named in snake_case; `conflict`: a field in both spellings with different
   * values (the camelCase one is used); `null`: an optional field set to `null`.
   */
  kind: 'snakeCase' | 'conflict' | 'null';
  /** The field as the event names it, with where it sits: `message_id`, `messages[].tool_calls`. */
  field: string;
  /** The AG-UI field it was read as: `messageId`, `messages[].toolCalls`. */
  camelField: string;
  /** The event's `type`. */
  type: string;
}

/** Receives each {@link EntryRepair}, with the input event it was found in. */
export type EntryRepairHandler = (repair: EntryRepair, event: unknown) => void;

// The schemas' objects, read once: which fields each has, and which are optional (absent is
// valid, `null` is not: the fields whose `null` is read as absent).
interface ZodLike {
  safeParse(value: unknown): { success: boolean };
}
type Shape = Record<string, ZodLike>;

/** A camelCase field name in snake_case, as a serialiser without aliases writes it (`toolCallId` → `tool_call_id`). */
export const snakeOf = (name: string): string => name.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);

/** The fields of `shape` where `null` is invalid but absence is fine, plus `relaxed` (optional in agent events only). */
function optionalFields(shape: Shape, relaxed: readonly string[] = []): ReadonlySet<string> {
  const fields = Object.keys(shape).filter((field) => shape[field].safeParse(undefined).success && !shape[field].safeParse(null).success);
  return new Set([...fields, ...relaxed]);
}

const eventShapes = (EventSchema.options as unknown as { shape: Shape }[]).map((option) => option.shape);
const messageShapes = (MessageSchema.options as unknown as { shape: Shape }[]).map((option) => option.shape);
const runInputShape = RunAgentInputSchema.shape as unknown as Shape;
const toolCallShape = ToolCallSchema.shape as unknown as Shape;

// What AgentEvent makes optional on top of the schema: the ids the toolkit fills in (see AgentEvent),
// and an upstream RUN_ERROR's message, which it words when none was given.
const agentRelaxations: Partial<Record<string, readonly string[]>> = {
  [EventType.RUN_ERROR]: ['message'],
  [EventType.TOOL_CALL_RESULT]: ['messageId'],
  [EventType.RUN_STARTED]: ['threadId', 'runId'],
  [EventType.RUN_FINISHED]: ['threadId', 'runId'],
  TOKEN_USAGE: ['timestamp'],
};

/** Per event type: the fields whose `null` reads as absent. */
const optionalEventFields = new Map<unknown, ReadonlySet<string>>(
  eventShapes.map((shape) => {
    const type = (shape.type as unknown as { value: string }).value;
    return [type, optionalFields(shape, agentRelaxations[type])];
  }),
);
optionalEventFields.set('TOKEN_USAGE', new Set(agentRelaxations.TOKEN_USAGE));

/** Per event type: every field AG-UI defines for it (what a streaming event without `delta` is checked against). */
const eventFields = new Map<unknown, ReadonlySet<string>>(eventShapes.map((shape) => [(shape.type as unknown as { value: string }).value, new Set(Object.keys(shape))]));

/** Per message role: the fields whose `null` reads as absent. */
const optionalMessageFields = new Map<unknown, ReadonlySet<string>>(
  messageShapes.map((shape) => [(shape.role as unknown as { value: string }).value, optionalFields(shape)]),
);
const optionalRunInputFields = optionalFields(runInputShape);
const optionalToolCallFields = optionalFields(toolCallShape);
/** Per message role, and of the run input and a tool call: every field AG-UI defines (what a copy reads by name). */
const messageFields = new Map<unknown, ReadonlySet<string>>(messageShapes.map((shape) => [(shape.role as unknown as { value: string }).value, new Set(Object.keys(shape))]));
const runInputFields: ReadonlySet<string> = new Set(Object.keys(runInputShape));
const toolCallFields: ReadonlySet<string> = new Set(Object.keys(toolCallShape));

/**
 * Every camelCase field name of AG-UI's events, messages, tool calls and run input, by its
 * snake_case spelling (`message_id` → `messageId`): what a serialiser without aliases sends.
 */
const camelOfSnake: ReadonlyMap<string, string> = new Map(
  [...eventShapes, ...messageShapes, runInputShape, toolCallShape]
    .flatMap((shape) => Object.keys(shape))
    .filter((field) => snakeOf(field) !== field)
    .map((field) => [snakeOf(field), field]),
);

/**
 * Reads an agent event as AG-UI spells it: snake_case field names (`message_id`, `tool_call_id`,
 * `thread_id`… as Python serialisers without aliases send them) as their camelCase fields, and
 * `null` in an optional field as absent. Pure: returns `event` itself when there is nothing to read
 * differently, else a copy; reports each change to `onRepair`.
 *
 * Where: the event's own fields, the messages of MESSAGES_SNAPSHOT and of RUN_STARTED `input` and
 * their tool calls, and `input`'s own fields. Never inside payloads (`snapshot`, `delta` patches,
 * `content`, `rawEvent`, `metadata`, `value`, `result`, `state`, `forwardedProps`, a call's
 * `function`). A camelCase field wins over its snake_case twin. `null` where a value is required
 * (and anything that is not an object) is left as it is, for the operators to report.
 *
 * Fast path: a per-token event or chunk with its string id and `delta`, and none of its optional
 * fields `null`, is returned after a few property reads.
 *
 * @param event An input event, as the source emitted it.
 * @param onRepair Told about each field read differently.
 * @return `event`, or a copy read as camelCase with the `null` optional fields left out.
 */
export function normalizeAgentEvent(event: unknown, onRepair: EntryRepairHandler): unknown {
  return isReadAsIs(event) ? event : readAgentEvent(event as Record<string, unknown>, onRepair);
}

// The per-token events and their chunks, from the protocol table's streaming kinds.
const streamKinds: ReadonlyMap<unknown, EntityKind> = new Map(
  entityKinds.flatMap((kind): [EventType, EntityKind][] => (kind.content === undefined ? [] : [[kind.content, kind], ...(kind.chunk === undefined ? [] : [[kind.chunk, kind] as [EventType, EntityKind]])])),
);

/** What the fast path checks of a per-token event or chunk type, read off its kind once. */
interface StreamRead {
  readonly idField: string;
  // The snake_case spellings of its fields that differ from theirs (`message_id`, `raw_event`,
  // `subagent_run_id`…): a token event that carries one is read slowly, as every other event is.
  readonly snakeFields: readonly string[];
  // The opener's fields a chunk may repeat (role, name; toolCallName, parentMessageId).
  readonly chunkAgrees: readonly string[];
}

// A streaming event may repeat its opener's fields (role, name; toolCallName, parentMessageId), and
// opens the message or call with them when none is open: their null reads as absent here too, as on
// the opener, so that the opener made from it is read once, at the entry, as pipe() would read it.
for (const [type, kind] of streamKinds) {
  if (kind.chunkAgrees !== undefined) (optionalEventFields as Map<unknown, ReadonlySet<string>>).set(type, new Set([...(optionalEventFields.get(type) ?? []), ...kind.chunkAgrees]));
}

// One lookup per token: each streaming type's checks.
const streamReads: ReadonlyMap<unknown, StreamRead> = new Map(
  [...streamKinds].map(([type, kind]) => {
    const chunkAgrees = kind.chunkAgrees ?? [];
    const fields = new Set([...(eventFields.get(type) ?? []), kind.idField, ...chunkAgrees]);
    const snakeFields = [...fields].map(snakeOf).filter((snake) => camelOfSnake.has(snake));
    return [type, { idField: kind.idField, snakeFields, chunkAgrees }];
  }),
);

const textChunk: string = entityKind.textMessage.chunk!;
const textContent: string = entityKind.textMessage.content!;
// Whether the table checks of a text chunk, and of a text content, what isReadAsIs reads by name for
// them (hasNoTextFieldToRead): the id `messageId`, the snake_case names of its fields, `role` and `name`.
const readsByName = (read: StreamRead | undefined) =>
  read !== undefined && read.idField === 'messageId' && [...read.snakeFields].sort().join() === 'message_id,raw_event,subagent_run_id' && read.chunkAgrees.join() === 'role,name';
const textChunkByName = readsByName(streamReads.get(textChunk));
const textContentByName = readsByName(streamReads.get(textContent));

/**
 * Whether `event` needs no reading: a per-token event or chunk with its string id and `delta`, none
 * of its fields also named in snake_case, and no optional field `null` (fields read by name: this
 * runs once per token), or no event object at all (left for the operators to report).
 */
function isReadAsIs(event: unknown): boolean {
  if (typeof event !== 'object' || event === null) return true;
  const e = event as Record<string, unknown>;
  // Text chunks and contents, most tokens of all, with their fields read by name (a read through a variable key is slow).
  const type = e.type;
  if ((type === textChunk && textChunkByName) || (type === textContent && textContentByName)) return isTextReadAsIs(e);
  const read = streamReads.get(type);
  if (read === undefined) return typeof type !== 'string';
  if (typeof e.delta !== 'string' || typeof e[read.idField] !== 'string' || !baseFieldsNotNull(e)) return false;
  const snakeFields = read.snakeFields;
  for (let i = 0; i < snakeFields.length; i++) if (e[snakeFields[i]] !== undefined) return false;
  const agrees = read.chunkAgrees;
  for (let i = 0; i < agrees.length; i++) if (e[agrees[i]] === null) return false;
  return true;
}

/**
 * Whether a TEXT_MESSAGE_CHUNK or TEXT_MESSAGE_CONTENT needs no reading: its string `messageId`
 * and `delta`, none of `message_id`, `raw_event` and `subagent_run_id`, and none of its optional
 * fields `null`, read by name (what {@link isReadAsIs} checks of them).
 */
function isTextReadAsIs(e: Record<string, unknown>): boolean {
  return typeof e.delta === 'string' && typeof e.messageId === 'string' && hasNoTextFieldToRead(e) && baseFieldsNotNull(e);
}

/**
 * Whether a TEXT_MESSAGE_CHUNK (`e`, its type checked by the caller) is plain: read as it is (see
 * {@link isTextReadAsIs}) and without any of the optional base fields, so that the content it
 * continues a message with is a plain content (`isPlainTextContent`): what a fused chain's first
 * operator answers for before the chunk is read (`contentFor`). Its `delta` and `messageId` are
 * given as the caller read them: each field is read once, and what is checked is what it sends.
 */
export function isPlainTextChunk(e: Record<string, unknown>, delta: unknown, messageId: unknown): boolean {
  return typeof delta === 'string' && typeof messageId === 'string' && hasNoTextFieldToRead(e) && hasNoBaseFields(e);
}

// A text token's other fields as reading leaves them: none in snake_case (`readsByName` holds the
// list to the table's), `role` and `name` not `null`.
function hasNoTextFieldToRead(e: Record<string, unknown>): boolean {
  return (
    e.message_id === undefined &&
    e.raw_event === undefined &&
    e.subagent_run_id === undefined &&
    e.role !== null &&
    e.name !== null
  );
}

/**
 * The slow path of {@link normalizeAgentEvent}: every field looked at. Exported for the property
 * spec that holds the fast path to it (an event the fast path leaves as it is, this leaves too).
 *
 * @internal
 */
export function readAgentEvent(e: Record<string, unknown>, onRepair: RepairsTo): unknown {
  const type = e.type as string;
  const read = readFields(e, optionalEventFields.get(type), eventFields.get(type), '', e, onRepair);
  if (type === EventType.MESSAGES_SNAPSHOT) return withMessages(read, e, 'messages', onRepair);
  if (type === EventType.RUN_STARTED && isRecord(read.input)) {
    const input = withMessages(readFields(read.input, optionalRunInputFields, runInputFields, 'input.', e, onRepair), e, 'input.messages', onRepair);
    return input === read.input ? read : { ...read, input };
  }
  return read;
}

/** The base fields every event may carry are not `null`. */
function baseFieldsNotNull(e: Record<string, unknown>): boolean {
  return e.timestamp !== null && e.rawEvent !== null && e.metadata !== null && e.subagentRunId !== null;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `holder` with its `messages` (and their tool calls) read as camelCase without `null` optional fields. */
function withMessages(holder: Record<string, unknown>, event: Record<string, unknown>, path: string, onRepair: RepairsTo): Record<string, unknown> {
  const messages = holder.messages;
  if (!Array.isArray(messages)) return holder;
  let changed = false;
  const read = messages.map((message: unknown) => {
    if (!isRecord(message)) return message;
    const fields = readFields(message, optionalMessageFields.get(message.role), messageFields.get(message.role), `${path}[].`, event, onRepair);
    const toolCalls = fields.toolCalls;
    let result = fields;
    if (Array.isArray(toolCalls)) {
      let callsChanged = false;
      const calls = toolCalls.map((call: unknown) => {
        const readCall = isRecord(call) ? readFields(call, optionalToolCallFields, toolCallFields, `${path}[].toolCalls[].`, event, onRepair) : call;
        if (readCall !== call) callsChanged = true;
        return readCall;
      });
      if (callsChanged) result = { ...fields, toolCalls: calls };
    }
    if (result !== message) changed = true;
    return result;
  });
  return changed ? { ...holder, messages: read } : holder;
}

/**
 * `object`'s fields read as camelCase, without the `optional` fields set to `null`: `object`
 * itself when nothing changes. Key order is kept (a renamed field takes its snake twin's place).
 * The copy holds what the operators would have read of `object`: its enumerable fields, own or
 * inherited (what the scan for changes walks), and those of AG-UI's `fields` for it that a class
 * gives through getters (not enumerable: `type`, say), after them.
 */
function readFields(
  object: Record<string, unknown>,
  optional: ReadonlySet<string> | undefined,
  fields: ReadonlySet<string> | undefined,
  path: string,
  event: Record<string, unknown>,
  onRepair: RepairsTo,
): Record<string, unknown> {
  let changes = false;
  // for…in allocates nothing: most events have nothing to change.
  for (const key in object) {
    if (camelOfSnake.has(key) || (object[key] === null && optional?.has(key))) {
      changes = true;
      break;
    }
  }
  if (!changes) return object;
  const type = String(event.type);
  const read: Record<string, unknown> = {};
  const seen = new Set<string>();
  for (const key in object) {
    seen.add(key);
    const value = object[key];
    const camel = camelOfSnake.get(key);
    const field = camel ?? key;
    if (camel !== undefined) {
      repaired(onRepair, { kind: 'snakeCase', field: path + key, camelField: path + camel, type }, event);
      // The camelCase twin, when set, wins; a different value of the snake twin is said, not lost in silence.
      const twin = object[camel];
      if (twin !== undefined && twin !== null) {
        if (value !== null && !sameJson(value, twin)) repaired(onRepair, { kind: 'conflict', field: path + key, camelField: path + camel, type }, event);
        continue;
      }
    }
    if (value === null && optional?.has(field)) {
      repaired(onRepair, { kind: 'null', field: path + key, camelField: path + field, type }, event);
      continue;
    }
    // A null camelCase field does not undo its snake_case twin's value read before it.
    if (value === null && camel === undefined && read[field] !== undefined) continue;
    read[field] = value;
  }
  if (fields !== undefined) {
    for (const field of fields) {
      if (seen.has(field) || Object.hasOwn(read, field)) continue;
      const value = object[field];
      if (value !== undefined && !(value === null && optional?.has(field))) read[field] = value;
    }
  }
  return read;
}

/** Whether two field values are the same JSON (the rare path: both spellings of one field). */
function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  try {
    return JSON.stringify(a) === JSON.stringify(b);
  } catch {
    return false;
  }
}

/**
 * Reads one run's events through {@link normalizeAgentEvent} and reports what it read differently
 * as diagnostics: one per run for snake_case names, one per run and field for `null`s. A chunk or
 * content event without `delta` that carries fields AG-UI does not define for its type (`text`,
 * `content`…) gets one diagnostic per run and field naming it and the field it likely meant
 * (checked only when `delta` is absent, never per token). Call once per subscription: the reader
 * keeps what it has reported.
 *
 * @param diagnose Where the diagnostics go.
 * @return The reader: its `read` takes an input event and gives the event as AG-UI spells it out.
 */
export function createAgentEventReader(diagnose: DiagnosticHandler): AgentEventReader {
  // One record per run, its `read` on a shared prototype: an open run holds no closure, and what
  // it reported is made at its first report (most runs have none).
  const reader = new ReaderRecord();
  reader.diagnose = diagnose;
  reader.reported = undefined;
  return ReaderRecord.shaped(reader);
}

/** Where the slow path tells what it read differently: a handler, or a run's reader (which reports each once). */
type RepairsTo = EntryRepairHandler | AgentEventReader;

/** One run's reader ({@link createAgentEventReader}). */
export interface AgentEventReader {
  /** The event as AG-UI spells it out (the event itself when it already is). */
  read(event: unknown): unknown;
  readonly diagnose: DiagnosticHandler;
  reported: Reported | undefined;
}

/** What a run's reader has reported, made at its first report. */
interface Reported {
  snakeCase: boolean;
  // The null fields, and the fields sent in both spellings with different values, by camelCase path.
  nulls: Set<string> | undefined;
  conflicts: Set<string> | undefined;
  // The fields AG-UI does not define that a streaming event without `delta` carried, by `type.field`.
  stray: Set<string> | undefined;
}

const reportedOf = (reader: AgentEventReader): Reported => (reader.reported ??= { snakeCase: false, nulls: undefined, conflicts: undefined, stray: undefined });

function readEvent(this: AgentEventReader, event: unknown): unknown {
  if (isReadAsIs(event)) return event;
  const read = readAgentEvent(event as Record<string, unknown>, this) as Record<string, unknown>;
  // Only here, off the per-token path: a streaming event without its delta may have it under another name.
  return read.delta === undefined && streamKinds.has(read.type) ? withoutStray(this, read, event) : read;
}

const readerMethods: Pick<AgentEventReader, 'read'> = Object.freeze({ read: readEvent });
const ReaderRecord = recordType<AgentEventReader>(readerMethods);

function repaired(to: RepairsTo, repair: EntryRepair, event: unknown): void {
  if (typeof to === 'function') to(repair, event);
  else reportRepair(to, repair, event);
}

// Each repair reported once per run: snake_case names once, a null or a conflict once per field.
function reportRepair(reader: AgentEventReader, repair: EntryRepair, event: unknown): void {
  const reported = reportedOf(reader);
  if (repair.kind === 'snakeCase') {
    if (reported.snakeCase) return;
    reported.snakeCase = true;
    reader.diagnose({
      message: `${repair.type} names its fields in snake_case ('${repair.field}'): read as AG-UI's camelCase ('${repair.camelField}'), here and in the rest of the run. Send AG-UI's field names (Python: serialise events with their aliases, model_dump(by_alias=True), or with ag_ui's EventEncoder).`,
      event,
    });
    return;
  }
  if (repair.kind === 'conflict') {
    if (reported.conflicts?.has(repair.camelField)) return;
    (reported.conflicts ??= new Set()).add(repair.camelField);
    return reader.diagnose({
      message: `${repair.type} has both '${repair.field}' and '${repair.camelField}' with different values: the camelCase '${repair.camelField}' is used and '${repair.field}' dropped, here and in the rest of the run. Send each field once, in AG-UI's camelCase.`,
      event,
    });
  }
  if (reported.nulls?.has(repair.camelField)) return;
  (reported.nulls ??= new Set()).add(repair.camelField);
  reader.diagnose({
    message: `${repair.type} has '${repair.field}: null': read as absent, here and in the rest of the run. Omit an optional field rather than sending null (Python: exclude_none=True).`,
    event,
  });
}

// Returns the event without the fields AG-UI does not define for it: the next reader of a piped chain sees nothing to report again.
function withoutStray(reader: AgentEventReader, read: Record<string, unknown>, event: unknown): Record<string, unknown> {
  const type = read.type as string;
  const stray = strayFieldsOf(read, eventFields.get(type)!);
  if (stray.length === 0) return read;
  const kept = copyWithout(read, stray.map(({ field }) => field));
  for (const { field, likely } of stray) {
    const key = `${type}.${field}`;
    const reported = reportedOf(reader);
    if (reported.stray?.has(key)) continue;
    (reported.stray ??= new Set()).add(key);
    reader.diagnose({
      message: `${type} has no 'delta' but has '${field}', which AG-UI does not define for it: '${field}' was ignored, so the event streams nothing. Did you mean '${likely}'? (Reported once per run.)`,
      event,
    });
  }
  return kept;
}
