import { EventType } from '@ag-ui/core';
import { EventSchema } from '@ag-ui/core/schemas';
import { AguiRxError } from '../../../lib/protocol/errors.js';
import { isPlainTextChunk, normalizeAgentEvent } from '../../../lib/protocol/normalizeAgentEvent.js';
import { assertWireEvent, isPlainTextContent, isPlainTextStartOrEnd } from '../../../lib/protocol/validate.js';

/** The AguiRxError `assertWireEvent` throws for `event`. */
function rejectionOf(event: Record<string, unknown>): AguiRxError {
  try {
    assertWireEvent(event);
  } catch (error) {
    return error as AguiRxError;
  }
  throw new Error(`expected ${JSON.stringify(event)} to be rejected`);
}

describe('assertWireEvent', () => {
  describe('per-token events (checked by hand)', () => {
    it('should return a valid TEXT_MESSAGE_CONTENT, REASONING_MESSAGE_CONTENT or TOOL_CALL_ARGS as it is', () => {
      const events = [
        { type: EventType.TEXT_MESSAGE_CONTENT, messageId: 'm1', delta: 'Hello' },
        { type: EventType.REASONING_MESSAGE_CONTENT, messageId: 'rm1', delta: 'Let me think', subagentRunId: 'sub-1' },
        { type: EventType.TOOL_CALL_ARGS, toolCallId: 'tc1', delta: '{"q":', timestamp: 1700000000000, metadata: { chunk: 3 }, rawEvent: { id: 'x' } },
      ];

      for (const event of events) expect(assertWireEvent(event)).toBe(event);
    });

    it('should accept an empty delta, as the schema does', () => {
      const event = { type: EventType.TEXT_MESSAGE_CONTENT, messageId: 'm1', delta: '' };

      expect(assertWireEvent(event)).toBe(event);
    });

    it('should reject an id that is not a string', () => {
      const error = rejectionOf({ type: EventType.TEXT_MESSAGE_CONTENT, messageId: 5, delta: 'Hi' });

      expect(error).toBeInstanceOf(AguiRxError);
      expect(error.code).toBe('INVALID_EVENT');
      expect(error.message).toBe("TEXT_MESSAGE_CONTENT has 'messageId: number 5', but 'messageId' must be a string.");
    });

    it('should reject a TOOL_CALL_ARGS without a toolCallId', () => {
      expect(rejectionOf({ type: EventType.TOOL_CALL_ARGS, delta: '{}' }).message).toBe(
        "TOOL_CALL_ARGS has 'toolCallId: undefined', but 'toolCallId' must be a string.",
      );
    });

    it('should say a missing id is there in snake_case', () => {
      expect(rejectionOf({ type: EventType.TOOL_CALL_ARGS, tool_call_id: 'c1', delta: '{}' }).message).toBe(
        "TOOL_CALL_ARGS has 'toolCallId: undefined', but 'toolCallId' must be a string. The event has 'tool_call_id': AG-UI names its fields in camelCase ('toolCallId'). toAgui and agui-rx verify --fix read snake_case names, but on the wire they must be camelCase.",
      );
    });

    it('should reject a missing delta', () => {
      expect(rejectionOf({ type: EventType.REASONING_MESSAGE_CONTENT, messageId: 'rm1' }).message).toBe(
        "REASONING_MESSAGE_CONTENT has 'delta: undefined', but 'delta' must be a string.",
      );
    });

    it('should reject null in an optional field, saying to omit it', () => {
      const error = rejectionOf({ type: EventType.TEXT_MESSAGE_CONTENT, messageId: 'm1', delta: 'Hi', metadata: null });

      expect(error.code).toBe('INVALID_EVENT');
      expect(error.message).toBe("TEXT_MESSAGE_CONTENT has 'metadata: null', but 'metadata' must be absent or set: omit an optional field rather than sending null.");
    });

    it('should reject a null id as not a string, saying to omit optional fields', () => {
      expect(rejectionOf({ type: EventType.TOOL_CALL_ARGS, toolCallId: null, delta: 'x' }).message).toBe(
        "TOOL_CALL_ARGS has 'toolCallId: null', but 'toolCallId' must be a string: omit an optional field rather than sending null.",
      );
    });

    it('should reject a subagentRunId that is not a string', () => {
      expect(rejectionOf({ type: EventType.TEXT_MESSAGE_CONTENT, messageId: 'm1', delta: 'Hi', subagentRunId: 7 }).message).toBe(
        "TEXT_MESSAGE_CONTENT has 'subagentRunId: number 7', but 'subagentRunId' must be a string.",
      );
    });

    it('should reject a timestamp that is not an integer', () => {
      expect(rejectionOf({ type: EventType.TOOL_CALL_ARGS, toolCallId: 'tc1', delta: 'x', timestamp: 1.5 }).message).toBe(
        "TOOL_CALL_ARGS has 'timestamp: number 1.5', but 'timestamp' must be an integer.",
      );
      expect(rejectionOf({ type: EventType.TOOL_CALL_ARGS, toolCallId: 'tc1', delta: 'x', timestamp: '2024-01-01' }).message).toBe(
        `TOOL_CALL_ARGS has 'timestamp: "2024-01-01"', but 'timestamp' must be an integer.`,
      );
    });

    it('should reject metadata that is not an object', () => {
      expect(rejectionOf({ type: EventType.REASONING_MESSAGE_CONTENT, messageId: 'rm1', delta: 'x', metadata: ['a'] }).message).toBe(
        "REASONING_MESSAGE_CONTENT has 'metadata: an array of 1', but 'metadata' must be an object.",
      );
    });

    it('should reject only what the @ag-ui/core schema rejects too', () => {
      const rejected = [
        { type: EventType.TEXT_MESSAGE_CONTENT, messageId: 5, delta: 'Hi' },
        { type: EventType.TEXT_MESSAGE_CONTENT, messageId: 'm1' },
        { type: EventType.TEXT_MESSAGE_CONTENT, messageId: 'm1', delta: 'Hi', rawEvent: null },
        { type: EventType.TEXT_MESSAGE_CONTENT, messageId: 'm1', delta: 'Hi', subagentRunId: 7 },
        { type: EventType.TOOL_CALL_ARGS, toolCallId: 'tc1', delta: 'x', timestamp: 1.5 },
        { type: EventType.REASONING_MESSAGE_CONTENT, messageId: 'rm1', delta: 'x', metadata: ['a'] },
      ];

      for (const event of rejected) {
        expect(() => assertWireEvent(event)).toThrow(AguiRxError);
        expect(EventSchema.safeParse(event).success).toBe(false);
      }
    });
  });

  describe('other events (checked with the @ag-ui/core schema)', () => {
    it('should return a valid event as it is, extra fields included', () => {
      const event = { type: EventType.RUN_FINISHED, threadId: 't1', runId: 'r1', outcome: { type: 'success' }, vendorField: { kept: true } };

      expect(assertWireEvent(event)).toBe(event);
    });

    it('should reject a missing required field, naming it', () => {
      const error = rejectionOf({ type: EventType.TEXT_MESSAGE_START, role: 'assistant' });

      expect(error).toBeInstanceOf(AguiRxError);
      expect(error.code).toBe('INVALID_EVENT');
      expect(error.message).toBe(
        "TEXT_MESSAGE_START is not a valid AG-UI event: 'messageId': Invalid input: expected string, received undefined. Fix the field in the event your agent emits.",
      );
    });

    it('should say a missing required field is there in snake_case', () => {
      expect(rejectionOf({ type: EventType.TOOL_CALL_START, tool_call_id: 'c1', toolCallName: 'search' }).message).toBe(
        "TOOL_CALL_START is not a valid AG-UI event: 'toolCallId': Invalid input: expected string, received undefined. Fix the field in the event your agent emits. The event has 'tool_call_id': AG-UI names its fields in camelCase ('toolCallId'). toAgui and agui-rx verify --fix read snake_case names, but on the wire they must be camelCase.",
      );
    });

    it('should reject a field of the wrong type', () => {
      expect(rejectionOf({ type: EventType.STEP_STARTED, stepName: 5 }).message).toBe(
        "STEP_STARTED is not a valid AG-UI event: 'stepName': Invalid input: expected string, received number. Fix the field in the event your agent emits.",
      );
    });

    it('should reject null in an optional field, saying to omit it', () => {
      expect(rejectionOf({ type: EventType.STEP_STARTED, stepName: 'plan', subagentRunId: null }).message).toBe(
        "STEP_STARTED is not a valid AG-UI event: 'subagentRunId': Invalid input: expected string, received null. Fix the field in the event your agent emits (omit optional fields rather than sending null).",
      );
    });

    it('should give the path of a nested field', () => {
      expect(rejectionOf({ type: EventType.RUN_FINISHED, threadId: 't1', runId: 'r1', usage: [{ inputTokens: 1.5 }] }).message).toBe(
        "RUN_FINISHED is not a valid AG-UI event: 'usage.0.inputTokens': Invalid input: expected int, received number. Fix the field in the event your agent emits.",
      );
    });

    it('should add the null hint for a nested null only', () => {
      expect(rejectionOf({ type: EventType.RUN_FINISHED, threadId: 't1', runId: 'r1', usage: [null] }).message).toBe(
        "RUN_FINISHED is not a valid AG-UI event: 'usage.0': Invalid input: expected object, received null. Fix the field in the event your agent emits (omit optional fields rather than sending null).",
      );
    });

    it('should reject a value outside an enum', () => {
      expect(rejectionOf({ type: EventType.TEXT_MESSAGE_START, messageId: 'm1', role: 'tool' }).message).toBe(
        `TEXT_MESSAGE_START is not a valid AG-UI event: 'role': Invalid option: expected one of "developer"|"system"|"assistant"|"user". Fix the field in the event your agent emits.`,
      );
    });

    it('should reject an unknown type', () => {
      // zod's reason differs by major ("Invalid input" in 3.25's v4, the list of types in 4): assert what agui-rx says around it.
      expect(rejectionOf({ type: 'TEXT_DELTA', delta: 'Hi' }).message).toMatch(/^TEXT_DELTA is not a valid AG-UI event: 'type': \S.*\. Fix the field in the event your agent emits\.$/s);
    });

    it('should not send per-token rules to other events', () => {
      // TEXT_MESSAGE_CHUNK has an optional delta and messageId: the schema, not the hand check, applies.
      const chunk = { type: EventType.TEXT_MESSAGE_CHUNK };

      expect(assertWireEvent(chunk)).toBe(chunk);
    });
  });
});

describe('assertWireEvent on frequent events (checked by hand, else by the schema)', () => {
  const fc = require('fast-check') as typeof import('fast-check');
  const types = [
    EventType.TEXT_MESSAGE_CONTENT,
    EventType.TOOL_CALL_ARGS,
    EventType.REASONING_MESSAGE_CONTENT,
    EventType.TEXT_MESSAGE_START,
    EventType.TEXT_MESSAGE_END,
    EventType.REASONING_START,
    EventType.REASONING_MESSAGE_START,
    EventType.REASONING_MESSAGE_END,
    EventType.REASONING_END,
    EventType.TOOL_CALL_START,
    EventType.TOOL_CALL_END,
    EventType.TOOL_CALL_RESULT,
    EventType.STATE_SNAPSHOT,
    EventType.STATE_DELTA,
    EventType.RUN_STARTED,
    EventType.RUN_FINISHED,
  ];
  // Field values chosen to sit on both sides of each rule: wrong types, null, undefined, edge numbers.
  const anyValue = fc.oneof(
    { arbitrary: fc.constant(undefined), weight: 4 },
    fc.constant(null),
    { arbitrary: fc.constantFrom('m1', '', 'assistant', 'user', 'reasoning', 'tool', 'robot', '/a', 'a', '/a~2', '/a~1b'), weight: 3 },
    fc.constantFrom(1, 1.5, -1, Number.MAX_SAFE_INTEGER + 1, NaN),
    fc.constant({}),
    fc.constant([]),
  );
  const operation = fc.record(
    { op: fc.constantFrom('add', 'remove', 'replace', 'move', 'copy', 'test', 'merge', 1), path: anyValue, from: anyValue, value: anyValue },
    { requiredKeys: [] },
  );
  const event = fc.record(
    {
      type: fc.constantFrom(...types),
      messageId: anyValue,
      toolCallId: anyValue,
      toolCallName: anyValue,
      parentMessageId: anyValue,
      role: anyValue,
      name: anyValue,
      content: fc.oneof(anyValue, fc.constant([{ type: 'text', text: 'hi' }])),
      snapshot: anyValue,
      delta: fc.oneof(anyValue, fc.array(operation, { maxLength: 3 })),
      timestamp: anyValue,
      rawEvent: anyValue,
      metadata: anyValue,
      subagentRunId: anyValue,
      threadId: anyValue,
      runId: anyValue,
      parentRunId: anyValue,
      protocolVersion: anyValue,
      input: fc.oneof(anyValue, fc.constant({ threadId: 't', runId: 'r', messages: [] }), fc.constant({ threadId: 't', runId: 'r', messages: 'hi' })),
      result: anyValue,
      outcome: fc.oneof(
        anyValue,
        fc.constantFrom(
          { type: 'success' },
          { type: 'success', pendingToolCallIds: [] },
          { type: 'success', pendingToolCallIds: ['c1', 'c2'] },
          { type: 'success', pendingToolCallIds: ['c1', 2] },
          { type: 'success', pendingToolCallIds: 'c1' },
          { type: 'cancelled' },
          { type: 'cancelled', reason: 'stopped' },
          { type: 'interrupt', interrupts: [] },
          { type: 'interrupt', interrupts: [{ id: 'i1', reason: 'approval' }] },
          { type: 'failed' },
          [],
        ),
      ),
      usage: fc.oneof(anyValue, fc.constant([{ provider: 'p', model: 'm', inputTokens: 1, outputTokens: 2 }])),
    },
    { requiredKeys: ['type'] },
  );

  // Whether assertWireEvent accepts `candidate`, having checked that the schema decides the same
  // (and that a refusal is an AguiRxError).
  const acceptsAsSchemaDoes = (candidate: object): boolean => {
    let accepted = true;
    try {
      assertWireEvent(candidate as Record<string, unknown>);
    } catch (error) {
      expect(error).toBeInstanceOf(AguiRxError);
      accepted = false;
    }
    expect(accepted).toBe(EventSchema.safeParse(candidate).success);
    return accepted;
  };

  it('should accept exactly what the @ag-ui/core EventSchema accepts', () => {
    let acceptedCount = 0;
    fc.assert(
      fc.property(event, (candidate) => {
        if (acceptsAsSchemaDoes(candidate)) acceptedCount++;
      }),
      { numRuns: 20000, seed: 7 },
    );
    // The generator must reach both sides of the rules, or the property says nothing.
    expect(acceptedCount).toBeGreaterThan(200);
  });

  it('should accept exactly what the schema accepts of RUN_STARTED and RUN_FINISHED, whose ids are mostly right', () => {
    const accepted = { [EventType.RUN_STARTED]: 0, [EventType.RUN_FINISHED]: 0 } as Record<string, number>;
    const runEvent = event.map((candidate) => ({
      ...candidate,
      type: candidate.type === EventType.RUN_STARTED || candidate.type.length % 2 === 0 ? EventType.RUN_STARTED : EventType.RUN_FINISHED,
      threadId: 't1',
      runId: 'r1',
      timestamp: undefined,
      rawEvent: undefined,
      metadata: undefined,
      subagentRunId: undefined,
    }));
    fc.assert(
      fc.property(runEvent, (candidate) => {
        if (acceptsAsSchemaDoes(candidate)) accepted[candidate.type]++;
      }),
      { numRuns: 5000, seed: 11 },
    );
    expect(accepted[EventType.RUN_STARTED]).toBeGreaterThan(100);
    expect(accepted[EventType.RUN_FINISHED]).toBeGreaterThan(100);
  });
});

describe('assertWireEvent on patch paths (RFC 6901, tested by hand)', () => {
  const paths = ['', '/', '//', '/a', '/a/b', 'a', 'a/b', ' /a', '/a~0', '/a~1b', '/~01', '/a~', '/a~2', '/~~', '~0', '/a/~', '/a~0~1~', '/ä/\n', '/a~1/~0/c'];

  it.each(paths)('should accept the path %j exactly when the @ag-ui/core EventSchema does', (path) => {
    for (const operation of [{ op: 'remove', path }, { op: 'move', path: '/x', from: path }]) {
      const event = { type: EventType.STATE_DELTA, delta: [operation] };
      let accepted = true;
      try {
        assertWireEvent(event);
      } catch (error) {
        expect(error).toBeInstanceOf(AguiRxError);
        accepted = false;
      }
      expect([path, accepted]).toEqual([path, EventSchema.safeParse(event).success]);
    }
  });
});

describe('the plain text event tests (the fast paths\' entry checks)', () => {
  const fc = require('fast-check') as typeof import('fast-check');
  // Mostly absent: a plain event has most of these fields absent.
  const anyValue = fc.oneof(
    { arbitrary: fc.constant(undefined), weight: 16 },
    fc.constant(null),
    { arbitrary: fc.constantFrom('m1', '', 'assistant', 'user', 'developer', 'system', 'tool', 'robot', 'hi'), weight: 3 },
    fc.constantFrom(1, 1.5, NaN),
    fc.constant({}),
    fc.constant([]),
  );
  const event = fc.record(
    {
      type: fc.constantFrom(EventType.TEXT_MESSAGE_CHUNK, EventType.TEXT_MESSAGE_CONTENT, EventType.TEXT_MESSAGE_START, EventType.TEXT_MESSAGE_END, EventType.REASONING_MESSAGE_END),
      // Mostly strings: what every one of these events needs.
      messageId: fc.oneof({ arbitrary: fc.constant('m1'), weight: 8 }, anyValue),
      message_id: anyValue,
      delta: fc.oneof({ arbitrary: fc.constant('Hi'), weight: 8 }, anyValue),
      role: anyValue,
      name: anyValue,
      timestamp: anyValue,
      rawEvent: anyValue,
      metadata: anyValue,
      subagentRunId: anyValue,
    },
    { requiredKeys: ['type'] },
  );

  it('should accept only events the @ag-ui/core EventSchema accepts, and only chunks that reading leaves as they are', () => {
    const accepted: Record<string, number> = {};
    fc.assert(
      fc.property(event, (candidate) => {
        const fields = candidate as Record<string, unknown>;
        const plain =
          candidate.type === EventType.TEXT_MESSAGE_CHUNK ? isPlainTextChunk(fields, fields.delta, fields.messageId) : isPlainTextContent(candidate.type, fields) || isPlainTextStartOrEnd(candidate.type, fields);
        if (!plain) return;
        accepted[candidate.type] = (accepted[candidate.type] ?? 0) + 1;
        if (candidate.type === EventType.TEXT_MESSAGE_CHUNK) {
          // A plain chunk is read as it is (nothing renamed, nothing dropped): a fused chain may answer for it before reading.
          // (Its role and name are a START's: a chunk continuing a message sends neither.)
          const repairs: unknown[] = [];
          expect(normalizeAgentEvent(candidate, (repair) => repairs.push(repair))).toBe(candidate);
          expect(repairs).toEqual([]);
        } else expect(EventSchema.safeParse(candidate).success).toBe(true);
      }),
      { numRuns: 20000, seed: 5 },
    );
    // Each test must accept some of its events, or the property says nothing.
    for (const type of [EventType.TEXT_MESSAGE_CHUNK, EventType.TEXT_MESSAGE_CONTENT, EventType.TEXT_MESSAGE_START, EventType.TEXT_MESSAGE_END]) expect(accepted[type]).toBeGreaterThan(50);
    expect(accepted[EventType.REASONING_MESSAGE_END]).toBeUndefined();
  });

  it('should take a plain START or END as assertWireEvent does, and leave any other to it', () => {
    const plain = [
      { type: EventType.TEXT_MESSAGE_START, messageId: 'm1' },
      { type: EventType.TEXT_MESSAGE_START, messageId: 'm1', role: 'assistant' },
      { type: EventType.TEXT_MESSAGE_START, messageId: 'm1', role: 'user' },
      { type: EventType.TEXT_MESSAGE_END, messageId: 'm1' },
    ];
    for (const candidate of plain) expect([candidate, isPlainTextStartOrEnd(candidate.type, candidate)]).toEqual([candidate, true]);
    const others = [
      { type: EventType.TEXT_MESSAGE_START, messageId: 'm1', role: 'robot' },
      { type: EventType.TEXT_MESSAGE_START, messageId: 'm1', name: 'bot' },
      { type: EventType.TEXT_MESSAGE_START, messageId: 7 },
      { type: EventType.TEXT_MESSAGE_END, messageId: 'm1', timestamp: 1 },
      { type: EventType.TEXT_MESSAGE_END, messageId: 'm1', subagentRunId: 's1' },
      { type: EventType.TEXT_MESSAGE_END },
      { type: EventType.TEXT_MESSAGE_CONTENT, messageId: 'm1', delta: 'x' },
    ];
    for (const candidate of others) expect([candidate, isPlainTextStartOrEnd(candidate.type, candidate)]).toEqual([candidate, false]);
  });
});
