import { EventType } from '@ag-ui/core';
import { eventTypeOf, namedParentId, type AgentEvent } from '../protocol/agentEvent.js';
import type { DiagnosticHandler } from '../protocol/diagnostics.js';
import { mintUnused, type IdGenerator } from '../protocol/generateId.js';
import { entityEvents, entityKind, isTokenEventType, type EntityKind } from '../protocol/table.js';
import { copyWith, copyWithout, isObject } from '../protocol/values.js';
import { collisionWith, createConversationIds, describeKnownMessage, type ConversationIds, type MessageStart } from './conversationIds.js';
import { recordType } from '../protocol/recordType.js';

/** What {@link trackIdCollisions} needs: the history, where its decisions go, and how ids are made. */
export interface IdCollisionsOptions {
  /** The conversation before the run (RunAgentInput `messages`): its message and tool call ids are taken. */
  history?: unknown;
  /** Mints the fresh ids given to colliding starts. */
  mint: IdGenerator;
  /** Told about each id that was replaced. */
  diagnose: DiagnosticHandler;
  /** Receives every event to send, in order, under the ids it goes on the wire with. */
  out: { next(event: AgentEvent): void };
}

/** The id collisions of one subscription (see `distinctIds`' rules). */
export interface IdCollisions {
  /** Takes one event and emits it, with its ids rewritten where the run gave them fresh ones. */
  next(event: AgentEvent): void;
  /** Whether some id was renamed: until then every per-token event passes unchanged. */
  renamesAny(): boolean;
}

type Fields = Record<string, unknown>;

const advice =
  'Give every message and tool call the run starts an id of its own: the client finds messages and tool calls by id, and would change the one it already holds.';

const startNouns: Record<MessageStart, string> = {
  text: 'text message',
  reasoning: 'reasoning message',
  toolResult: 'tool result message',
  activity: 'activity',
  toolCallMessage: 'assistant message',
};

/**
 * Whose later events a renamed message's producer id stands for: the same producer id may name a
 * text message and an activity at once (that is the collision), so each kind keeps its own renames.
 * Text shares its renames with the assistant message a tool call's parent creates: text joins it.
 */
type Family = 'text' | 'reasoning' | 'toolResult' | 'activity';
const familyOf: Record<MessageStart, Family> = { text: 'text', toolCallMessage: 'text', reasoning: 'reasoning', toolResult: 'toolResult', activity: 'activity' };

// The family (or tool calls) whose renames each streamed kind's events follow.
const kindFamilies = new Map<EntityKind, Family | 'call'>([
  [entityKind.textMessage, 'text'],
  [entityKind.reasoningMessage, 'reasoning'],
  [entityKind.reasoning, 'reasoning'],
  [entityKind.toolCall, 'call'],
]);
// The events that only continue or close an entity (the table's content and end events), and whose renames they follow.
const continuations: ReadonlyMap<string, Family | 'call'> = new Map<string, Family | 'call'>([
  ...[...entityEvents]
    .filter(([, entry]) => (entry.role === 'content' || entry.role === 'end') && kindFamilies.has(entry.kind))
    .map(([type, entry]) => [type, kindFamilies.get(entry.kind)!] as const),
  [EventType.ACTIVITY_DELTA, 'activity'],
]);

/** One subscription's id collisions: the state the functions below share (one record, not a closure per helper). */
interface Collisions {
  readonly mint: IdGenerator;
  readonly diagnose: DiagnosticHandler;
  readonly out: { next(event: AgentEvent): void };
  readonly ids: ConversationIds;
  /**
   * Producer id -> the fresh id its entity was given: per message family, and for tool calls.
   * Each map made at its first rename, the record too (until then the shared `noRenames`):
   * nearly every run renames nothing.
   */
  renames: Renames;
  /** How many ids were renamed: while none is, per-token events pass untouched. */
  renamed: number;
}

/** The renames, and `callSources`: a tool call's fresh id -> the producer id it was given for. */
type Renames = Readonly<Record<Family | 'call' | 'callSources', Map<string, string> | undefined>>;

const noRenames: Renames = Object.freeze({ text: undefined, reasoning: undefined, toolResult: undefined, activity: undefined, call: undefined, callSources: undefined });

/**
 * Creates the id-collision tracker of one subscription: every message and tool call the run
 * starts gets an id that names nothing else the client holds (the history's messages and tool
 * calls, and the run's messages of other kinds), a fresh one when the producer's would; the
 * entity's later events follow it. Pure bookkeeping, no RxJS.
 */
export function trackIdCollisions({ history, mint, diagnose, out }: IdCollisionsOptions): IdCollisions {
  // A plain record of its state; the methods are on its prototype (`collisionsMethods`), shared by every subscription.
  const t = new CollisionsRecord();
  t.mint = mint;
  t.diagnose = diagnose;
  t.out = out;
  t.ids = createConversationIds(history);
  t.renames = noRenames;
  t.renamed = 0;
  return CollisionsRecord.shaped(t) as unknown as IdCollisions;
}

function next(this: Collisions, event: AgentEvent): void {
  const t = this;
  // The per-token events are nearly all: while nothing is renamed they pass without a lookup.
  if (t.renamed === 0 && isTokenEventType((event as { type?: unknown }).type)) return t.out.next(event);
  const type = eventTypeOf(event);
  const fields = event as unknown as Fields;
  const follows = continuations.get(type);
  if (follows !== undefined) return continued(t, fields, follows === 'call' ? 'toolCallId' : 'messageId', t.renames[follows]);
  switch (type) {
    case EventType.TEXT_MESSAGE_START:
      return onMessageStart(t, type, fields, 'text', typeof fields.role === 'string' ? fields.role : 'assistant');
    case EventType.REASONING_START:
    case EventType.REASONING_MESSAGE_START:
      return onMessageStart(t, type, fields, 'reasoning', 'reasoning');
    case EventType.ACTIVITY_SNAPSHOT:
      return onMessageStart(t, type, fields, 'activity', 'activity', typeof fields.activityType === 'string' ? fields.activityType : undefined);
    case EventType.TOOL_CALL_START:
      return onCallStart(t, fields);
    case EventType.TOOL_CALL_RESULT:
      return onResult(t, fields);
    case EventType.REASONING_ENCRYPTED_VALUE:
      // A message's value is for a text message, or else a reasoning message, of that producer id.
      if (fields.subtype === 'tool-call') return continued(t, fields, 'entityId', t.renames.call);
      return continued(t, fields, 'entityId', typeof fields.entityId === 'string' && t.renames.text?.has(fields.entityId) === true ? t.renames.text : t.renames.reasoning);
    case EventType.RUN_FINISHED:
      return onRunFinished(t, fields);
    case EventType.RUN_STARTED:
      // An upstream RUN_STARTED echoing its input brings the history along.
      if (isObject(fields.input)) t.ids.seed(fields.input.messages);
      return t.out.next(event);
    case EventType.MESSAGES_SNAPSHOT:
      // The snapshot is what the client holds from now on: its ids are taken like the history's.
      t.ids.seed(fields.messages);
      return t.out.next(event);
    default:
      return t.out.next(event);
  }
}

const collisionsMethods: IdCollisions = Object.freeze({
  next,
  renamesAny(this: Collisions) {
    return this.renamed > 0;
  },
});
const CollisionsRecord = recordType<Collisions>(collisionsMethods);

function wire(map: Map<string, string> | undefined, id: string): string {
  return map === undefined ? id : (map.get(id) ?? id);
}

function callWire(t: Collisions, id: string): string {
  return wire(t.renames.call, id);
}

// The event with `field` set to `id` (the event itself when it already is).
function withField(event: Fields, field: string, id: string): AgentEvent {
  return (event[field] === id ? event : copyWith(event, { [field]: id })) as AgentEvent;
}

function rename(t: Collisions, family: Family | 'call', producerId: string, fresh: string) {
  const renames = (t.renames === noRenames ? (t.renames = { ...noRenames }) : t.renames) as Record<Family | 'call' | 'callSources', Map<string, string> | undefined>;
  (renames[family] ??= new Map()).set(producerId, fresh);
  if (family === 'call') (renames.callSources ??= new Map()).set(fresh, producerId);
  t.renamed++;
}

function continued(t: Collisions, event: Fields, field: string, map: Map<string, string> | undefined) {
  const id = event[field];
  if (map === undefined || typeof id !== 'string') return t.out.next(event as AgentEvent);
  t.out.next(withField(event, field, map.get(id) ?? id));
}

// Every message family, by name (the record's type holds the list complete).
const families = Object.keys({ text: true, reasoning: true, toolResult: true, activity: true } satisfies Record<Family, true>) as Family[];

// Whether the run gave `id` to an entity it renamed: a call's fresh ids are `callSources`' keys; the
// messages' renames are rare, a few small maps to look through.
function wasGiven(renames: Renames, id: string): boolean {
  if (renames.callSources?.has(id) === true) return true;
  for (const family of families) {
    const map = renames[family];
    if (map !== undefined) for (const fresh of map.values()) if (fresh === id) return true;
  }
  return false;
}

// A fresh message id: no message of the history or of the run has it (see mintUnused).
const mintMessageId = (t: Collisions): string => mintUnused(t.mint, (id) => t.ids.message(id) !== undefined);

/** The wire id of a message the run starts under the producer's `producerId`. */
function startMessage(t: Collisions, type: string, event: Fields, producerId: string, start: MessageStart, role: string, activityType?: string): string {
  const family = familyOf[start];
  const candidate = wire(t.renames[family], producerId);
  // One lookup for both questions: what the id names, and whether the run started it.
  const known = t.ids.message(candidate);
  // The producer's own id, which this run gave a message it renamed (a generateId that repeats itself upstream): another message.
  const collision =
    candidate === producerId && t.renamed > 0 && wasGiven(t.renames, candidate)
      ? `a message this run sent under it after renaming that message's own id`
      : collisionWith(known, start, activityType, start === 'text' ? role : undefined);
  if (collision === undefined) {
    // A history activity updated by the run is the run's from now on: a later snapshot may change its type.
    if (known?.history !== false) t.ids.addMessage(candidate, start, role, activityType);
    return candidate;
  }
  const fresh = mintMessageId(t);
  rename(t, family, producerId, fresh);
  t.ids.addMessage(fresh, start, role, activityType);
  t.diagnose({ message: `${type} starts ${startNouns[start] === 'activity' ? 'an' : 'a'} ${startNouns[start]} under id '${candidate}', which names ${collision}; it was sent as '${fresh}'. ${advice}`, event });
  return fresh;
}

function onMessageStart(t: Collisions, type: string, event: Fields, start: MessageStart, role: string, activityType?: string) {
  const producerId = event.messageId;
  if (typeof producerId !== 'string') return t.out.next(event as AgentEvent);
  t.out.next(withField(event, 'messageId', startMessage(t, type, event, producerId, start, role, activityType)));
}

/**
 * The wire parent of a tool call, and whether the client puts the call in it (an assistant
 * message); no id when the call goes without one (it named a message of the run that is no assistant message).
 */
function resolveParent(t: Collisions, event: Fields, producerId: string): { id: string | undefined; usable: boolean } {
  const id = wire(t.renames.text, producerId);
  const known = t.ids.message(id);
  if (known === undefined) {
    // The client creates the assistant message under this id: later text of the turn joins it.
    t.ids.addMessage(id, 'toolCallMessage', 'assistant');
    return { id, usable: true };
  }
  if (!known.history) {
    if (known.role === 'assistant') return { id, usable: true };
    // The client would warn and put the call in a message named after it: sent so, without the warning.
    t.diagnose({
      message: `TOOL_CALL_START for tool call '${String(event.toolCallId)}' names parentMessageId '${producerId}', which is ${describeKnownMessage(known)}, not an assistant message; it was sent without parentMessageId, and the client puts the call in an assistant message named after it. Name an assistant message as parentMessageId, or none.`,
      event,
    });
    return { id: undefined, usable: false };
  }
  const fresh = mintMessageId(t);
  rename(t, 'text', producerId, fresh);
  t.ids.addMessage(fresh, 'toolCallMessage', 'assistant');
  t.diagnose({
    message: `TOOL_CALL_START for tool call '${String(event.toolCallId)}' names parentMessageId '${producerId}', which is ${describeKnownMessage(known)}; the call was put in a new assistant message '${fresh}'. ${advice}`,
    event,
  });
  return { id: fresh, usable: true };
}

function onCallStart(t: Collisions, event: Fields) {
  const producerId = event.toolCallId;
  if (typeof producerId !== 'string') return t.out.next(event as AgentEvent);
  let toolCallId = callWire(t, producerId);
  const parentId = namedParentId(event.parentMessageId);
  const parent = parentId === undefined ? undefined : resolveParent(t, event, parentId);
  const runCall = t.ids.isRunCall(toolCallId);
  // The id this run gave a call it renamed, named by the producer (unrenamed) for a call of its own:
  // a generateId that makes the producer's ids too gives both. Not that call, which goes by its own id.
  const renamedFrom = runCall && toolCallId === producerId ? t.renames.callSources?.get(toolCallId) : undefined;
  // Any other call the run already started is the upstream operator's to judge (toolCallCorrelator never lets one restart).
  if (!runCall || renamedFrom !== undefined) {
    // Without an assistant parent, the client creates a message named after the call.
    const namedAfterCall = parent === undefined || !parent.usable;
    const known = namedAfterCall && renamedFrom === undefined ? t.ids.message(toolCallId) : undefined;
    const collision =
      renamedFrom !== undefined
        ? `the tool call this run sent under it for the producer's '${renamedFrom}' (generateId makes ids the producer also uses)`
        : t.ids.isHistoryCall(toolCallId)
          ? 'a tool call of the conversation history'
          : known !== undefined
            ? `${describeKnownMessage(known)} (the client names the assistant message of a call without an assistant parentMessageId after the call)`
            : undefined;
    if (collision !== undefined) {
      // Not a call's id, nor a message's: a call without an assistant parent names its message after it.
      const fresh = mintUnused(t.mint, (id) => t.ids.isHistoryCall(id) || t.ids.isRunCall(id) || t.ids.message(id) !== undefined);
      rename(t, 'call', producerId, fresh);
      t.diagnose({ message: `TOOL_CALL_START starts a tool call under id '${toolCallId}', which names ${collision}; it was sent as '${fresh}'. ${advice}`, event });
      toolCallId = fresh;
    }
    t.ids.addCall(toolCallId);
    if (namedAfterCall) t.ids.addMessage(toolCallId, 'toolCallMessage', 'assistant');
  }
  let out = withField(event, 'toolCallId', toolCallId) as unknown as Fields;
  if (parent !== undefined) out = (parent.id === undefined ? copyWithout(out, ['parentMessageId']) : withField(out, 'parentMessageId', parent.id)) as unknown as Fields;
  t.out.next(out as AgentEvent);
}

function onResult(t: Collisions, event: Fields) {
  // A result may answer a call of the history (a client tool, an approval): only calls the run renamed are renamed.
  let out = event;
  if (typeof event.toolCallId === 'string') out = withField(out, 'toolCallId', callWire(t, event.toolCallId)) as unknown as Fields;
  if (typeof event.messageId === 'string') {
    const role = typeof event.role === 'string' ? event.role : 'tool';
    out = withField(out, 'messageId', startMessage(t, EventType.TOOL_CALL_RESULT, event, event.messageId, 'toolResult', role)) as unknown as Fields;
  }
  t.out.next(out as AgentEvent);
}

function onRunFinished(t: Collisions, event: Fields) {
  const outcome = event.outcome;
  if (t.renames.call === undefined || !isObject(outcome) || !Array.isArray(outcome.pendingToolCallIds)) return t.out.next(event as AgentEvent);
  const pendingToolCallIds = outcome.pendingToolCallIds.map((id: unknown) => (typeof id === 'string' ? callWire(t, id) : id));
  t.out.next({ ...event, outcome: { ...outcome, pendingToolCallIds } } as AgentEvent);
}
