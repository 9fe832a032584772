import { EventType, type Event } from '@ag-ui/core';
import { of, type OperatorFunction } from 'rxjs';
import type { AgentEvent } from '../../../lib/protocol/agentEvent.js';
import type { AguiDiagnostic } from '../../../lib/protocol/diagnostics.js';
import { createAgentEventReader, normalizeAgentEvent, readAgentEvent, type EntryRepair } from '../../../lib/protocol/normalizeAgentEvent.js';
import { activityDelta } from '../../../operators/activityDelta.js';
import { coalesceDeltas } from '../../../operators/coalesceDeltas.js';
import { distinctIds } from '../../../operators/distinctIds.js';
import { mapStepLifecycle } from '../../../operators/mapStepLifecycle.js';
import { stateDelta } from '../../../operators/stateDelta.js';
import { verifyAgui } from '../../../operators/verifyAgui.js';
import { collect, diagnosticsSink } from '../../support/helpers.js';

/** Reads `event` and returns what came out with the repairs reported. */
function read(event: unknown): { event: unknown; repairs: EntryRepair[] } {
  const repairs: EntryRepair[] = [];
  return { event: normalizeAgentEvent(event, (repair) => repairs.push(repair)), repairs };
}

const snake = (field: string, camelField: string, type: string): EntryRepair => ({ kind: 'snakeCase', field, camelField, type });
const nulled = (field: string, type: string, camelField = field): EntryRepair => ({ kind: 'null', field, camelField, type });

describe('normalizeAgentEvent', () => {
  describe('fast path', () => {
    it.each([
      { type: EventType.TEXT_MESSAGE_CONTENT, messageId: 'm1', delta: 'Hi' },
      { type: EventType.TEXT_MESSAGE_CHUNK, messageId: 'm1', delta: 'Hi' },
      { type: EventType.REASONING_MESSAGE_CONTENT, messageId: 'r1', delta: 'Hm' },
      { type: EventType.TOOL_CALL_ARGS, toolCallId: 'c1', delta: '{}' },
      { type: EventType.TOOL_CALL_CHUNK, toolCallId: 'c1', toolCallName: 'search', delta: '{}' },
      { type: EventType.TEXT_MESSAGE_CHUNK, delta: 'Hi' },
      { type: EventType.STATE_SNAPSHOT, snapshot: { user_id: null } },
      { type: EventType.RUN_FINISHED, outcome: { type: 'success' } },
    ])('should return a well-spelt event itself, reporting nothing: %j', (event) => {
      const result = read(event);
      expect(result.event).toBe(event);
      expect(result.repairs).toEqual([]);
    });

    it('should still read a token event whose base field is null', () => {
      expect(read({ type: EventType.TEXT_MESSAGE_CONTENT, messageId: 'm1', delta: 'Hi', timestamp: null })).toEqual({
        event: { type: EventType.TEXT_MESSAGE_CONTENT, messageId: 'm1', delta: 'Hi' },
        repairs: [nulled('timestamp', 'TEXT_MESSAGE_CONTENT')],
      });
    });

    it.each([null, undefined, 'TEXT_MESSAGE_CHUNK', 42, { delta: 'no type' }, { type: 7, message_id: 'm1' }])('should leave %j for the operators to report', (value) => {
      const result = read(value);
      expect(result.event).toBe(value);
      expect(result.repairs).toEqual([]);
    });
    it('should take its way only for events that the full reading leaves as they are (property)', () => {
      const fc = require('fast-check') as typeof import('fast-check');
      // Mostly absent, as in a token event; every field a streaming event may carry, in both spellings.
      const anyValue = fc.oneof({ arbitrary: fc.constant(undefined), weight: 12 }, fc.constant(null), { arbitrary: fc.constantFrom('m1', 'c1', 's1', 'Hi', ''), weight: 3 }, fc.constant(1), fc.constant({}));
      // Each type's own fields (and those a chunk may repeat of its opener, and the base fields), in both spellings.
      const base = ['timestamp', 'rawEvent', 'metadata', 'subagentRunId'];
      const fieldsOf: Record<string, string[]> = {
        [EventType.TEXT_MESSAGE_CHUNK]: ['messageId', 'role', 'name'],
        [EventType.TEXT_MESSAGE_CONTENT]: ['messageId', 'role', 'name'],
        [EventType.REASONING_MESSAGE_CHUNK]: ['messageId'],
        [EventType.REASONING_MESSAGE_CONTENT]: ['messageId'],
        [EventType.TOOL_CALL_CHUNK]: ['toolCallId', 'toolCallName', 'parentMessageId'],
        [EventType.TOOL_CALL_ARGS]: ['toolCallId', 'toolCallName', 'parentMessageId'],
      };
      const snakeOf = (field: string) => field.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);
      const event = fc.constantFrom(...Object.keys(fieldsOf)).chain((type) =>
        fc.record(
          {
            type: fc.constant(type),
            delta: fc.oneof({ arbitrary: fc.constant('Hi'), weight: 8 }, anyValue),
            ...Object.fromEntries([...fieldsOf[type], ...base].flatMap((field) => [[field, fc.oneof({ arbitrary: fc.constant('m1'), weight: 2 }, anyValue)], [snakeOf(field), anyValue]])),
          },
          { requiredKeys: ['type'] },
        ),
      );
      // As events come, parsed from JSON: a field is absent or has a value.
      const parsed = event.map((fields) => Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined)));
      let fast = 0;
      fc.assert(
        fc.property(parsed, (candidate) => {
          if (normalizeAgentEvent(candidate, () => {}) !== candidate) return;
          fast++;
          const repairs: EntryRepair[] = [];
          expect(readAgentEvent(candidate as Record<string, unknown>, (repair) => repairs.push(repair))).toEqual(candidate);
          expect(repairs).toEqual([]);
        }),
        { numRuns: 20000, seed: 11 },
      );
      // The generator must reach the fast path, or the property says nothing.
      expect(fast).toBeGreaterThan(500);
    });
  });

  describe('snake_case', () => {
    it('should read the event fields as camelCase, in their order, without touching the input', () => {
      const event = { type: EventType.TOOL_CALL_START, timestamp: null, raw_event: null, tool_call_id: 'c1', tool_call_name: 'search', parent_message_id: 'm1' };
      const copy = structuredClone(event);
      const result = read(event);
      expect(result.event).toEqual({ type: EventType.TOOL_CALL_START, toolCallId: 'c1', toolCallName: 'search', parentMessageId: 'm1' });
      expect(Object.keys(result.event as object)).toEqual(['type', 'toolCallId', 'toolCallName', 'parentMessageId']);
      expect(result.repairs).toEqual([
        nulled('timestamp', 'TOOL_CALL_START'),
        snake('raw_event', 'rawEvent', 'TOOL_CALL_START'),
        nulled('raw_event', 'TOOL_CALL_START', 'rawEvent'),
        snake('tool_call_id', 'toolCallId', 'TOOL_CALL_START'),
        snake('tool_call_name', 'toolCallName', 'TOOL_CALL_START'),
        snake('parent_message_id', 'parentMessageId', 'TOOL_CALL_START'),
      ]);
      expect(event).toEqual(copy);
    });

    it.each([
      [{ type: EventType.RUN_STARTED, thread_id: 't', run_id: 'r', parent_run_id: 'p' }, { type: EventType.RUN_STARTED, threadId: 't', runId: 'r', parentRunId: 'p' }],
      [{ type: EventType.STEP_STARTED, step_name: 's', subagent_run_id: 'a' }, { type: EventType.STEP_STARTED, stepName: 's', subagentRunId: 'a' }],
      [{ type: EventType.ACTIVITY_SNAPSHOT, message_id: 'a1', activity_type: 'plan', content: { step_name: 'x' } }, { type: EventType.ACTIVITY_SNAPSHOT, messageId: 'a1', activityType: 'plan', content: { step_name: 'x' } }],
      [{ type: EventType.TEXT_MESSAGE_CHUNK, message_id: 'm1', delta: 'Hi' }, { type: EventType.TEXT_MESSAGE_CHUNK, messageId: 'm1', delta: 'Hi' }],
      [{ type: EventType.REASONING_ENCRYPTED_VALUE, subtype: 'message', entity_id: 'r1', encrypted_value: 'x' }, { type: EventType.REASONING_ENCRYPTED_VALUE, subtype: 'message', entityId: 'r1', encryptedValue: 'x' }],
    ])('should read %j as AG-UI spells it', (event, expected) => {
      expect(read(event).event).toEqual(expected);
    });

    it('should let a camelCase field win over its snake_case twin, whichever comes first', () => {
      expect(read({ type: EventType.TEXT_MESSAGE_START, message_id: 'snake', messageId: 'camel', role: 'assistant' }).event).toEqual({ type: EventType.TEXT_MESSAGE_START, messageId: 'camel', role: 'assistant' });
      expect(read({ type: EventType.TEXT_MESSAGE_START, messageId: 'camel', message_id: 'snake', role: 'assistant' }).event).toEqual({ type: EventType.TEXT_MESSAGE_START, messageId: 'camel', role: 'assistant' });
      // A null camelCase twin is no value: the snake_case one is read, before or after it.
      expect(read({ type: EventType.TEXT_MESSAGE_CONTENT, message_id: 'snake', messageId: null, delta: 'x' }).event).toEqual({ type: EventType.TEXT_MESSAGE_CONTENT, messageId: 'snake', delta: 'x' });
      expect(read({ type: EventType.TEXT_MESSAGE_CONTENT, messageId: null, message_id: 'snake', delta: 'x' }).event).toEqual({ type: EventType.TEXT_MESSAGE_CONTENT, messageId: 'snake', delta: 'x' });
    });

    it('should report a field sent in both spellings with different values, and not one with the same value', () => {
      const conflict = (field: string, camelField: string, type: string): EntryRepair => ({ kind: 'conflict', field, camelField, type });
      expect(read({ type: EventType.TEXT_MESSAGE_START, message_id: 'snake', messageId: 'camel', role: 'assistant' }).repairs).toEqual([
        snake('message_id', 'messageId', EventType.TEXT_MESSAGE_START),
        conflict('message_id', 'messageId', EventType.TEXT_MESSAGE_START),
      ]);
      expect(read({ type: EventType.TOOL_CALL_START, toolCallId: 'c1', tool_call_id: 'c1', toolCallName: 'x' }).repairs).toEqual([snake('tool_call_id', 'toolCallId', EventType.TOOL_CALL_START)]);
      expect(read({ type: EventType.RUN_STARTED, threadId: 't', runId: 'r', input: { threadId: 't', thread_id: 'u', runId: 'r', messages: [], tools: [], context: [], state: {}, forwardedProps: {} } }).repairs).toEqual([
        snake('input.thread_id', 'input.threadId', EventType.RUN_STARTED),
        conflict('input.thread_id', 'input.threadId', EventType.RUN_STARTED),
      ]);
    });

    it('should never rename inside payloads', () => {
      const payload = { thread_id: 'user data', tool_calls: null, nested: { message_id: 'm' } };
      const events = [
        { type: EventType.STATE_SNAPSHOT, snapshot: payload },
        { type: EventType.STATE_DELTA, delta: [{ op: 'add', path: '/tool_call_id', value: payload }] },
        { type: EventType.CUSTOM, name: 'x', value: payload },
        { type: EventType.RAW, event: payload },
        { type: EventType.TEXT_MESSAGE_START, messageId: 'm1', role: 'assistant', metadata: payload, rawEvent: payload },
        { type: EventType.TOOL_CALL_RESULT, toolCallId: 'c1', content: payload },
        { type: EventType.RUN_FINISHED, result: payload },
      ];
      for (const event of events) expect(read(event)).toEqual({ event, repairs: [] });
      expect(read({ type: EventType.TOOL_CALL_ARGS, tool_call_id: 'c1', delta: '{"tool_call_id":null}' }).event).toEqual({ type: EventType.TOOL_CALL_ARGS, toolCallId: 'c1', delta: '{"tool_call_id":null}' });
    });

    it("should read the messages of MESSAGES_SNAPSHOT and their tool calls, leaving a call's function as it is", () => {
      const event = {
        type: EventType.MESSAGES_SNAPSHOT,
        timestamp: null,
        messages: [
          { id: 'u1', role: 'user', content: 'Hi', name: null, encrypted_value: null },
          {
            id: 'a1',
            role: 'assistant',
            content: null,
            name: null,
            tool_calls: [{ id: 'c1', type: 'function', function: { name: 'search', arguments: '{"user_id":1}' }, encrypted_value: null }],
          },
          { id: 't1', role: 'tool', content: '{"hits":3}', tool_call_id: 'c1', error: null },
          { id: 'a2', role: 'assistant', content: 'Done', tool_calls: null },
        ],
      };
      const result = read(event);
      expect(result.event).toEqual({
        type: EventType.MESSAGES_SNAPSHOT,
        messages: [
          { id: 'u1', role: 'user', content: 'Hi' },
          { id: 'a1', role: 'assistant', toolCalls: [{ id: 'c1', type: 'function', function: { name: 'search', arguments: '{"user_id":1}' } }] },
          { id: 't1', role: 'tool', content: '{"hits":3}', toolCallId: 'c1' },
          { id: 'a2', role: 'assistant', content: 'Done' },
        ],
      });
      expect(result.repairs.map((repair) => `${repair.kind} ${repair.field}`)).toEqual([
        'null timestamp',
        'null messages[].name',
        'snakeCase messages[].encrypted_value',
        'null messages[].encrypted_value',
        'null messages[].content',
        'null messages[].name',
        'snakeCase messages[].tool_calls',
        'snakeCase messages[].toolCalls[].encrypted_value',
        'null messages[].toolCalls[].encrypted_value',
        'snakeCase messages[].tool_call_id',
        'null messages[].error',
        'snakeCase messages[].tool_calls',
        'null messages[].tool_calls',
      ]);
    });

    it("should read RUN_STARTED's input and its messages, but not its state or forwarded props", () => {
      const state = { run_id: 'user data' };
      const event = {
        type: EventType.RUN_STARTED,
        thread_id: 't1',
        run_id: 'r1',
        input: { thread_id: 't1', run_id: 'r1', parent_run_id: null, state, messages: [{ id: 'u1', role: 'user', content: 'Hi', name: null }], tools: [], context: [], forwarded_props: state },
      };
      expect(read(event).event).toEqual({
        type: EventType.RUN_STARTED,
        threadId: 't1',
        runId: 'r1',
        input: { threadId: 't1', runId: 'r1', state, messages: [{ id: 'u1', role: 'user', content: 'Hi' }], tools: [], context: [], forwardedProps: state },
      });
    });
  });

  describe('null', () => {
    it('should read null in an optional field as absent, the relaxed ids of agent events included', () => {
      expect(read({ type: EventType.TOOL_CALL_RESULT, messageId: null, toolCallId: 'c1', content: 'ok', role: null }).event).toEqual({ type: EventType.TOOL_CALL_RESULT, toolCallId: 'c1', content: 'ok' });
      expect(read({ type: EventType.RUN_FINISHED, threadId: null, runId: null, outcome: null, usage: null }).event).toEqual({ type: EventType.RUN_FINISHED });
      expect(read({ type: 'TOKEN_USAGE', usage: { inputTokens: 1 }, timestamp: null }).event).toEqual({ type: 'TOKEN_USAGE', usage: { inputTokens: 1 } });
      // An upstream RUN_ERROR's message too: the toolkit words one when none was given.
      expect(read({ type: EventType.RUN_ERROR, message: null, code: 'E' }).event).toEqual({ type: EventType.RUN_ERROR, code: 'E' });
    });

    it('should keep null where a value is required, or where null is a value', () => {
      for (const event of [
        { type: EventType.TEXT_MESSAGE_CONTENT, messageId: null, delta: 'Hi' },
        { type: EventType.TOOL_CALL_RESULT, toolCallId: null, content: 'ok' },
        { type: EventType.STATE_SNAPSHOT, snapshot: null },
        { type: EventType.CUSTOM, name: 'x', value: null },
        { type: EventType.RUN_FINISHED, usage: [null] },
      ]) {
        expect(read(event)).toEqual({ event, repairs: [] });
      }
    });
  });
});

describe('createAgentEventReader', () => {
  it('should report snake_case once per run, and each null field once per run', () => {
    const diagnostics: AguiDiagnostic[] = [];
    const reader = createAgentEventReader((diagnostic) => diagnostics.push(diagnostic));
    const first = { type: EventType.TEXT_MESSAGE_START, message_id: 'm1', role: 'assistant', name: null };
    reader.read(first);
    reader.read({ type: EventType.TEXT_MESSAGE_CONTENT, message_id: 'm1', delta: 'Hi', timestamp: null });
    reader.read({ type: EventType.TEXT_MESSAGE_CONTENT, message_id: 'm1', delta: '!', timestamp: null });
    reader.read({ type: EventType.TOOL_CALL_START, tool_call_id: 'c1', tool_call_name: 'x', parent_message_id: null });
    expect(diagnostics.map((diagnostic) => diagnostic.message)).toEqual([
      "TEXT_MESSAGE_START names its fields in snake_case ('message_id'): read as AG-UI's camelCase ('messageId'), here and in the rest of the run. Send AG-UI's field names (Python: serialise events with their aliases, model_dump(by_alias=True), or with ag_ui's EventEncoder).",
      "TEXT_MESSAGE_START has 'name: null': read as absent, here and in the rest of the run. Omit an optional field rather than sending null (Python: exclude_none=True).",
      "TEXT_MESSAGE_CONTENT has 'timestamp: null': read as absent, here and in the rest of the run. Omit an optional field rather than sending null (Python: exclude_none=True).",
      "TOOL_CALL_START has 'parent_message_id: null': read as absent, here and in the rest of the run. Omit an optional field rather than sending null (Python: exclude_none=True).",
    ]);
    expect(diagnostics[0].event).toBe(first);
  });

  it('should report each field sent in both spellings with different values once per run', () => {
    const sink = diagnosticsSink();
    const reader = createAgentEventReader(sink.onDiagnostic);
    reader.read({ type: EventType.TOOL_CALL_CHUNK, tool_call_id: 'a', toolCallId: 'b', toolCallName: 'x', delta: '{' });
    reader.read({ type: EventType.TOOL_CALL_CHUNK, tool_call_id: 'a', toolCallId: 'b', delta: '}' });
    expect(sink.messages).toEqual([
      "TOOL_CALL_CHUNK names its fields in snake_case ('tool_call_id'): read as AG-UI's camelCase ('toolCallId'), here and in the rest of the run. Send AG-UI's field names (Python: serialise events with their aliases, model_dump(by_alias=True), or with ag_ui's EventEncoder).",
      "TOOL_CALL_CHUNK has both 'tool_call_id' and 'toolCallId' with different values: the camelCase 'toolCallId' is used and 'tool_call_id' dropped, here and in the rest of the run. Send each field once, in AG-UI's camelCase.",
    ]);
  });

  it("should name a streaming event's undefined fields when it has no delta, once per run and field", () => {
    const sink = diagnosticsSink();
    const reader = createAgentEventReader(sink.onDiagnostic);
    const chunk = { type: 'TEXT_MESSAGE_CHUNK', text: 'Hel' };
    // Read without the ignored field (a piped chain's next reader has nothing to report again); the input is untouched.
    expect(reader.read(chunk)).toEqual({ type: 'TEXT_MESSAGE_CHUNK' });
    expect(chunk).toEqual({ type: 'TEXT_MESSAGE_CHUNK', text: 'Hel' });
    reader.read({ type: 'TEXT_MESSAGE_CHUNK', text: 'lo' });
    reader.read({ type: EventType.TOOL_CALL_CHUNK, toolCallName: 'search', arguments: '{}' });
    reader.read({ type: EventType.REASONING_MESSAGE_CHUNK, content: 'hmm', messageID: 'r1' });
    reader.read({ type: EventType.TEXT_MESSAGE_CONTENT, messageId: 'm1', text: 'x' });
    expect(sink.messages).toEqual([
      "TEXT_MESSAGE_CHUNK has no 'delta' but has 'text', which AG-UI does not define for it: 'text' was ignored, so the event streams nothing. Did you mean 'delta'? (Reported once per run.)",
      "TOOL_CALL_CHUNK has no 'delta' but has 'arguments', which AG-UI does not define for it: 'arguments' was ignored, so the event streams nothing. Did you mean 'delta'? (Reported once per run.)",
      "REASONING_MESSAGE_CHUNK has no 'delta' but has 'content', which AG-UI does not define for it: 'content' was ignored, so the event streams nothing. Did you mean 'delta'? (Reported once per run.)",
      "REASONING_MESSAGE_CHUNK has no 'delta' but has 'messageID', which AG-UI does not define for it: 'messageID' was ignored, so the event streams nothing. Did you mean 'messageId'? (Reported once per run.)",
      "TEXT_MESSAGE_CONTENT has no 'delta' but has 'text', which AG-UI does not define for it: 'text' was ignored, so the event streams nothing. Did you mean 'delta'? (Reported once per run.)",
    ]);
  });

  it('should say nothing of undefined fields beside a delta, or of a chunk without delta that has only defined fields', () => {
    const sink = diagnosticsSink();
    const reader = createAgentEventReader(sink.onDiagnostic);
    const token = { type: EventType.TEXT_MESSAGE_CHUNK, messageId: 'm1', delta: 'Hi', text: 'Hi' };
    expect(reader.read(token)).toBe(token);
    reader.read({ type: EventType.TOOL_CALL_CHUNK, toolCallId: 'c1', toolCallName: 'search' });
    reader.read({ type: EventType.TEXT_MESSAGE_START, messageId: 'm2', role: 'assistant', text: 'x' });
    expect(sink.messages).toEqual([]);
  });

  it('should keep its reports per reader: a second run reports again', () => {
    const counts = [0, 0];
    const readers = counts.map((_, index) => createAgentEventReader(() => counts[index]++));
    for (const reader of readers) reader.read({ type: EventType.STEP_STARTED, step_name: 's', timestamp: null });
    readers[0].read({ type: EventType.STEP_FINISHED, step_name: 's', timestamp: null });
    expect(counts).toEqual([2, 2]);
  });
});

describe('the entry of an operator used alone', () => {
  const quiet = () => jest.spyOn(console, 'warn').mockImplementation(() => {});
  afterEach(() => jest.restoreAllMocks());

  it.each<[string, () => OperatorFunction<AgentEvent, AgentEvent>, object, object]>([
    ['distinctIds', () => distinctIds({ onDiagnostic: diagnosticsSink().onDiagnostic }), { type: 'TEXT_MESSAGE_START', message_id: 'm1', role: 'assistant', name: null }, { type: 'TEXT_MESSAGE_START', messageId: 'm1', role: 'assistant' }],
    ['mapStepLifecycle', () => mapStepLifecycle({ onDiagnostic: diagnosticsSink().onDiagnostic }), { type: 'STEP_STARTED', step_name: 'plan', timestamp: null }, { type: 'STEP_STARTED', stepName: 'plan' }],
    ['stateDelta', () => stateDelta(), { type: 'STATE_SNAPSHOT', snapshot: { user_id: null }, raw_event: null }, { type: 'STATE_SNAPSHOT', snapshot: { user_id: null } }],
    ['activityDelta', () => activityDelta(), { type: 'ACTIVITY_SNAPSHOT', message_id: 'a1', activity_type: 'plan', content: { step_name: 1 } }, { type: 'ACTIVITY_SNAPSHOT', messageId: 'a1', activityType: 'plan', content: { step_name: 1 } }],
  ])('should read the input of %s', async (_name, operator, input, output) => {
    quiet();
    const events = await collect(of(input as AgentEvent).pipe(operator()));
    expect(events[0]).toEqual(output);
  });

  it('should leave the input of wire-side operators as it is', async () => {
    const wire = { type: EventType.STEP_STARTED, step_name: 'plan' } as unknown as Event;
    const coalesced = await collect(of(wire).pipe(coalesceDeltas({ intervalMs: 0 })));
    expect(coalesced).toEqual([wire]);
    const reports: unknown[] = [];
    await collect(of(wire).pipe(verifyAgui({ mode: 'report', onViolation: (violation) => reports.push(violation) })));
    expect(reports).not.toEqual([]);
  });
});
