import { EventType, type Message } from '@ag-ui/core';
import fc from 'fast-check';
import type { AgentEvent } from '../../lib/protocol/agentEvent.js';

/** What a well-formed agent turn means: the client should end up with exactly this. */
export interface TurnIntent {
  /** Assistant text per message id, concatenated. */
  texts: Map<string, string>;
  /** Reasoning text per message id, concatenated. */
  reasonings: Map<string, string>;
  /** Each tool call: its name and concatenated arguments. */
  toolCalls: Map<string, { name: string; arguments: string }>;
  /** Each tool result's content, by tool call id. */
  results: Map<string, string>;
  /** The last STATE_SNAPSHOT, if any. */
  state: Record<string, unknown> | undefined;
}

/** A well-formed turn: the events an agent emits, and what they mean. */
export interface Turn {
  events: AgentEvent[];
  intent: TurnIntent;
}

/** Splits `text` into non-empty chunks at the given cut points. */
function splitAt(text: string, cuts: number[]): string[] {
  const points = [...new Set(cuts.map((cut) => cut % (text.length + 1)))].filter((p) => p > 0 && p < text.length).sort((a, b) => a - b);
  const parts: string[] = [];
  let from = 0;
  for (const point of [...points, text.length]) {
    parts.push(text.slice(from, point));
    from = point;
  }
  return parts;
}

/** A non-empty text delta source, with some multi-byte and JSON-hostile characters. */
const someText = fc.oneof(
  fc.string({ minLength: 1, maxLength: 24 }),
  fc.string({ unit: 'grapheme', minLength: 1, maxLength: 8 }),
  fc.constantFrom('{"q":1}', '"', '\\', '\n\ndata: x\n\n', '</script>', '😀', 'event: RUN_FINISHED'),
);

/** A JSON-like state value: integers (never -0), strings, booleans, null, arrays and objects with safe keys. */
const stateValue: fc.Arbitrary<unknown> = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.integer({ min: -1000, max: 1000 }),
    fc.string({ maxLength: 8 }),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('value'), { maxLength: 3 }),
    fc.dictionary(fc.stringMatching(/^[a-z][a-z0-9]{0,5}$/), tie('value'), { maxKeys: 3 }),
  ),
})).value;

/** A state snapshot: an object (the client's state is an object). */
export const stateSnapshot = fc.dictionary(fc.stringMatching(/^[a-z][a-zA-Z0-9_]{0,7}$/), stateValue, { maxKeys: 4 });

type Segment =
  | { kind: 'text'; chunks: string[] }
  | { kind: 'reasoning'; chunks: string[] }
  | { kind: 'tools'; calls: { name: string; chunks: string[]; result: string | undefined }[]; order: number[] }
  | { kind: 'state'; snapshot: Record<string, unknown> };

const chunked = someText.chain((text) => fc.array(fc.nat(), { maxLength: 4 }).map((cuts) => splitAt(text, cuts)));
// A call's arguments are a JSON object, cut anywhere (a run cannot finish with a call on cut arguments).
const argumentChunks = someText.chain((text) => fc.array(fc.nat(), { maxLength: 4 }).map((cuts) => splitAt(JSON.stringify({ input: text }), cuts)));

const segment: fc.Arbitrary<Segment> = fc.oneof(
  { arbitrary: chunked.map((chunks) => ({ kind: 'text' as const, chunks })), weight: 4 },
  { arbitrary: chunked.map((chunks) => ({ kind: 'reasoning' as const, chunks })), weight: 2 },
  {
    arbitrary: fc
      .array(
        fc.record({
          name: fc.stringMatching(/^[a-z][a-z_]{0,9}$/),
          chunks: fc.oneof(fc.constant<string[]>(['{}']), argumentChunks),
          result: fc.option(someText, { nil: undefined }),
        }),
        { minLength: 1, maxLength: 3 },
      )
      // The order the calls' chunks interleave in: an index per chunk, shuffled.
      .chain((calls) => {
        const slots = calls.flatMap((call, index) => call.chunks.map(() => index));
        return fc.shuffledSubarray(slots, { minLength: slots.length }).map((order): Segment => ({ kind: 'tools', calls, order }));
      }),
    weight: 3,
  },
  { arbitrary: stateSnapshot.map((snapshot) => ({ kind: 'state' as const, snapshot })), weight: 2 },
);

/** Builds a turn's events and intent from its segments; ids are unique within the turn. */
function buildTurn(segments: Segment[]): Turn {
  const events: AgentEvent[] = [];
  const intent: TurnIntent = { texts: new Map(), reasonings: new Map(), toolCalls: new Map(), results: new Map(), state: undefined };
  let n = 0;
  for (const seg of segments) {
    n++;
    if (seg.kind === 'text') {
      const messageId = `m${n}`;
      for (const delta of seg.chunks) events.push({ type: EventType.TEXT_MESSAGE_CHUNK, messageId, delta });
      intent.texts.set(messageId, seg.chunks.join(''));
    } else if (seg.kind === 'reasoning') {
      const messageId = `r${n}`;
      for (const delta of seg.chunks) events.push({ type: EventType.REASONING_MESSAGE_CHUNK, messageId, delta });
      intent.reasonings.set(messageId, seg.chunks.join(''));
    } else if (seg.kind === 'tools') {
      const next = seg.calls.map(() => 0);
      for (const index of seg.order) {
        const call = seg.calls[index];
        const toolCallId = `c${n}_${index}`;
        const first = next[index] === 0;
        const delta = call.chunks[next[index]++];
        // The name rides on the first chunk; later ones carry only the id, as providers stream them.
        events.push(first ? { type: EventType.TOOL_CALL_CHUNK, toolCallId, toolCallName: call.name, delta } : { type: EventType.TOOL_CALL_CHUNK, toolCallId, delta });
      }
      seg.calls.forEach((call, index) => {
        const toolCallId = `c${n}_${index}`;
        intent.toolCalls.set(toolCallId, { name: call.name, arguments: call.chunks.join('') });
      });
      seg.calls.forEach((call, index) => {
        if (call.result === undefined) return;
        const toolCallId = `c${n}_${index}`;
        events.push({ type: EventType.TOOL_CALL_RESULT, toolCallId, content: call.result });
        intent.results.set(toolCallId, call.result);
      });
    } else {
      events.push({ type: EventType.STATE_SNAPSHOT, snapshot: seg.snapshot });
      intent.state = seg.snapshot;
    }
  }
  return { events, intent };
}

/** A well-formed agent turn: text and reasoning chunks, parallel tool calls with results, state snapshots. */
export const wellFormedTurn: fc.Arbitrary<Turn> = fc.array(segment, { maxLength: 6 }).map(buildTurn);

/** A well-formed turn's events, shuffled, subsetted and truncated. */
export const shuffledTurn: fc.Arbitrary<unknown[]> = wellFormedTurn.chain(({ events }) =>
  fc.tuple(fc.shuffledSubarray(events), fc.nat({ max: events.length })).map(([picked, cut]) => picked.slice(0, Math.max(cut, 1))),
);

// --- hostile events -------------------------------------------------------

const idPool = ['m1', 'r1', 'c1_0', 'c3_1', 'dup', 'search', ''];
const anyId = fc.oneof({ arbitrary: fc.constantFrom(...idPool), weight: 4 }, { arbitrary: fc.string({ maxLength: 6 }), weight: 1 });

/** A value of the wrong type (or the right one by chance): null, numbers, objects, arrays, functions' stand-ins. */
const wrongValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.constant(null),
  fc.constant(undefined),
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.string({ maxLength: 6 }),
  fc.constant({}),
  fc.constant([]),
  fc.constant({ toString: 1 }),
  fc.constant(Object.create(null) as unknown),
);

const fieldValue = (good: fc.Arbitrary<unknown>) => fc.oneof({ arbitrary: good, weight: 4 }, { arbitrary: wrongValue, weight: 1 });

const eventTypes = [...Object.values(EventType), 'TOKEN_USAGE'];
const unknownTypes = ['UNKNOWN', 'text_message_chunk', 'TEXT_MESSAGE', '__proto__', 'constructor', ''];

/** A JSON patch operation, sometimes nonsensical or aimed at a prototype. */
const patchOp = fc.record(
  {
    op: fc.oneof(fc.constantFrom('add', 'remove', 'replace', 'move', 'copy', 'test'), wrongValue),
    path: fc.oneof(fc.constantFrom('/a', '/a/0', '/a/-', '/missing/x', '/__proto__/polluted', '/constructor/prototype/polluted', '', '/'), wrongValue),
    value: stateValue,
    from: fc.constantFrom('/a', '/b', '/__proto__'),
  },
  { requiredKeys: ['op', 'path'] },
);

/** Any event-ish value: every AG-UI type with random (often wrong) fields, unknown types, null, primitives. */
export const hostileEvent: fc.Arbitrary<unknown> = fc.oneof(
  {
    arbitrary: fc.record(
      {
        type: fc.oneof({ arbitrary: fc.constantFrom(...eventTypes), weight: 8 }, { arbitrary: fc.constantFrom(...unknownTypes), weight: 1 }, { arbitrary: wrongValue, weight: 1 }),
        messageId: fieldValue(anyId),
        toolCallId: fieldValue(anyId),
        toolCallName: fieldValue(anyId),
        parentMessageId: fieldValue(anyId),
        delta: fieldValue(fc.oneof(someText, fc.constant(''), fc.array(patchOp, { maxLength: 3 }))),
        role: fieldValue(fc.constantFrom('assistant', 'user', 'developer', 'system', 'tool', 'reasoning')),
        content: fieldValue(fc.oneof(someText, stateValue)),
        snapshot: fieldValue(fc.oneof(stateSnapshot, stateValue)),
        message: fieldValue(someText),
        code: fieldValue(fc.string({ maxLength: 6 })),
        stepName: fieldValue(anyId),
        activityType: fieldValue(anyId),
        subagentRunId: fc.oneof(wrongValue, fc.constantFrom('s1', 's2')),
        threadId: fieldValue(anyId),
        runId: fieldValue(anyId),
        result: stateValue,
        name: fieldValue(anyId),
        value: stateValue,
        usage: fieldValue(fc.record({ inputTokens: fc.nat(), outputTokens: fc.nat() })),
        messages: fieldValue(fc.constant([])),
      },
      { requiredKeys: ['type'] },
    ),
    weight: 12,
  },
  { arbitrary: wrongValue, weight: 1 },
);

/** How a hostile case is run: its events, where the source errors (if anywhere), where the consumer unsubscribes (if anywhere). */
export interface HostileCase {
  events: unknown[];
  errorAt: number | undefined;
  takeCount: number | undefined;
}

/** A well-formed turn with hostile events spliced in, sometimes an error injected, sometimes cut short by the consumer. */
export const hostileCase: fc.Arbitrary<HostileCase> = fc
  .tuple(
    fc.oneof(wellFormedTurn.map((turn) => turn.events as unknown[]), shuffledTurn),
    fc.array(fc.tuple(fc.nat(), hostileEvent), { maxLength: 6 }),
    fc.option(fc.nat(), { nil: undefined }),
  )
  .map(([events, inserts, errorAt]) => {
    const out = [...events];
    for (const [at, event] of inserts) out.splice(at % (out.length + 1), 0, event);
    return { events: out, errorAt: errorAt === undefined ? undefined : errorAt % (out.length + 1), takeCount: undefined };
  });

/** A case cut short: the consumer unsubscribes after `takeCount` output events. */
export const cutCase: fc.Arbitrary<HostileCase> = fc.tuple(hostileCase, fc.nat({ max: 40 })).map(([c, takeCount]) => ({ ...c, takeCount }));

// --- a conversation history, and runs whose ids collide with it -----------

/** A run on top of a history: the history, the agent's events (ids reused from the history and across kinds), and what the client should end with. */
export interface HistoryCase {
  /** The conversation before the run (RunAgentInput `messages`): ids unique within it, many shared with the turn's. */
  history: Message[];
  events: AgentEvent[];
  intent: TurnIntent;
  /** Each activity the run sends, by producer id: the last snapshot's type and content, and whether it updates the history's surface. */
  activities: Map<string, { activityType: string; content: Record<string, unknown>; updatesHistory: boolean }>;
}

// Ids the generated turns use (m<n>, r<n>, c<n>_<i>), a user's, and the history's A2UI surface.
const messageIdPool = ['m1', 'm2', 'm3', 'r1', 'r2', 'c1_0', 'c2_0', 'c2_1', 'u1', 'surface-1'];
const callIdPool = ['c1_0', 'c2_0', 'c2_1', 'c3_0', 'm1', 'm2'];
const SURFACE = 'a2ui-surface';

const historyMessage = (id: string, kind: number, callId: string): Message => {
  if (id === 'surface-1') return { id, role: 'activity', activityType: SURFACE, content: { a2ui_operations: [] } };
  switch (kind % 4) {
    case 0:
      return { id, role: 'user', content: `question ${id}` };
    case 1:
      return { id, role: 'assistant', content: '', toolCalls: [{ id: callId, type: 'function', function: { name: 'search', arguments: `{"q":"${id}"}` } }] };
    case 2:
      return { id, role: 'tool', toolCallId: callId, content: `result ${id}` };
    default:
      return { id, role: 'assistant', content: `answer ${id}` };
  }
};

/** A valid history: unique message ids and unique tool call ids, drawn from the ids the turns use. */
export const conversationHistory: fc.Arbitrary<Message[]> = fc
  .tuple(fc.uniqueArray(fc.constantFrom(...messageIdPool), { maxLength: 6 }), fc.array(fc.nat(), { minLength: 6, maxLength: 6 }), fc.shuffledSubarray(callIdPool, { minLength: 6, maxLength: 6 }))
  .map(([ids, kinds, callIds]) => ids.map((id, index) => historyMessage(id, kinds[index], callIds[index])));

/** A well-formed turn on a history, with activity snapshots and tool result message ids that reuse the history's ids and the turn's own. */
export const historyCase: fc.Arbitrary<HistoryCase> = fc
  .tuple(
    conversationHistory,
    wellFormedTurn,
    fc.array(fc.tuple(fc.nat(), fc.constantFrom(...messageIdPool, 'act1'), fc.constantFrom(SURFACE, 'plan'), fc.nat({ max: 9 })), { maxLength: 4 }),
    fc.array(fc.option(fc.constantFrom(...messageIdPool), { nil: undefined }), { maxLength: 8 }),
  )
  .map(([history, turn, snapshots, resultIds]) => {
    const events = [...turn.events];
    // Tool results under producer message ids that may name anything.
    let result = 0;
    for (let i = 0; i < events.length; i++) {
      if (events[i].type !== EventType.TOOL_CALL_RESULT) continue;
      const messageId = resultIds[result++];
      if (messageId !== undefined) events[i] = { ...events[i], messageId } as AgentEvent;
    }
    const activities: HistoryCase['activities'] = new Map();
    for (const [at, messageId, activityType, n] of snapshots) {
      const content = { a2ui_operations: [{ n }] };
      events.splice(at % (events.length + 1), 0, { type: EventType.ACTIVITY_SNAPSHOT, messageId, activityType, content });
    }
    // What each activity ends as, read in stream order: the first snapshot decides whether it is the history's surface.
    for (const event of events) {
      if (event.type !== EventType.ACTIVITY_SNAPSHOT) continue;
      const { messageId, activityType, content } = event as { messageId: string; activityType: string; content: Record<string, unknown> };
      const seen = activities.get(messageId);
      const updatesHistory = seen?.updatesHistory ?? history.some((message) => message.id === messageId && message.role === 'activity' && message.activityType === activityType);
      activities.set(messageId, { activityType, content, updatesHistory });
    }
    return { history, events, intent: turn.intent, activities };
  });
