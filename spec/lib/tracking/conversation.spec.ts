import { EventType, type Event, type Message } from '@ag-ui/core';
import { of, type Observable } from 'rxjs';
import { runWithOracle } from '../../support/oracle.js';
import { AguiRxError } from '../../../lib/protocol/errors.js';
import { trackConversation, type Conversation } from '../../../lib/tracking/conversation.js';

type Fields = Record<string, unknown> & { type: string };

/** A conversation from `initial` that has seen `events`, in order. */
function building(initial: Message[], ...events: Fields[]): Conversation {
  const conversation = trackConversation(initial);
  for (const event of events) conversation.observe(event, event.type);
  return conversation;
}

/** The messages `events` build from nothing. */
const built = (...events: Fields[]): Message[] => building([], ...events).messages();

const textStart = (messageId: string, extra: Record<string, unknown> = {}): Fields => ({ type: EventType.TEXT_MESSAGE_START, messageId, role: 'assistant', ...extra });
const textContent = (messageId: string, delta: string): Fields => ({ type: EventType.TEXT_MESSAGE_CONTENT, messageId, delta });
const callStart = (toolCallId: string, extra: Record<string, unknown> = {}): Fields => ({ type: EventType.TOOL_CALL_START, toolCallId, toolCallName: 'search', ...extra });
const callArgs = (toolCallId: string, delta: string): Fields => ({ type: EventType.TOOL_CALL_ARGS, toolCallId, delta });
const result = (toolCallId: string, messageId: string, content = 'ok'): Fields => ({ type: EventType.TOOL_CALL_RESULT, toolCallId, messageId, content });
const user = (id: string, content = 'hi'): Message => ({ id, role: 'user', content });

describe('trackConversation', () => {
  describe('the start of the conversation', () => {
    it('should start from a copy of the initial messages, never shared with the caller', () => {
      const initial = [user('u1')];
      const conversation = building(initial, textStart('u1'), textContent('u1', '!'));

      expect(initial).toStrictEqual([user('u1')]);
      expect(conversation.messages()).toStrictEqual([{ id: 'u1', role: 'user', content: 'hi!' }]);
    });

    it('should add the RUN_STARTED input messages not there yet, by id', () => {
      const messages = building([user('u1', 'first')], { type: EventType.RUN_STARTED, input: { messages: [user('u1', 'again'), user('u2')] } }).messages();

      expect(messages).toStrictEqual([user('u1', 'first'), user('u2')]);
    });

    it('should hand out copies: changing a snapshot changes nothing', () => {
      const conversation = building([], textStart('m1'), textContent('m1', 'Hi'));
      (conversation.messages()[0] as { content: string }).content = 'changed';

      expect(conversation.messages()).toStrictEqual([{ id: 'm1', role: 'assistant', content: 'Hi' }]);
    });
  });

  describe('text and reasoning messages', () => {
    it('should add a message on START, with its role, name and subagentRunId, and append each CONTENT', () => {
      expect(built(textStart('m1', { role: 'developer', name: 'planner', subagentRunId: 'sub-1' }), textContent('m1', 'Hel'), textContent('m1', 'lo'))).toStrictEqual([
        { id: 'm1', role: 'developer', content: 'Hello', name: 'planner', subagentRunId: 'sub-1' },
      ]);
    });

    it('should default the role to assistant, and give reasoning messages no name', () => {
      expect(
        built(
          { type: EventType.TEXT_MESSAGE_START, messageId: 'm1' },
          { type: EventType.REASONING_MESSAGE_START, messageId: 'r1', role: 'reasoning', name: 'ignored' },
          { type: EventType.REASONING_MESSAGE_CONTENT, messageId: 'r1', delta: 'Thinking' },
        ),
      ).toStrictEqual([
        { id: 'm1', role: 'assistant', content: '' },
        { id: 'r1', role: 'reasoning', content: 'Thinking' },
      ]);
    });

    it('should ignore CONTENT for a message never started', () => {
      expect(built(textContent('ghost', 'boo'))).toStrictEqual([]);
    });

    it('should not add a second message for a START whose id is taken', () => {
      expect(built(textStart('m1'), textContent('m1', 'a'), textStart('m1'), textContent('m1', 'b'))).toStrictEqual([{ id: 'm1', role: 'assistant', content: 'ab' }]);
    });

    it('should never write text into an activity', () => {
      const activity = { type: EventType.ACTIVITY_SNAPSHOT, messageId: 'a1', activityType: 'PLAN', content: { steps: [] } };

      expect(built(activity, textStart('a1'), textContent('a1', 'x'))).toStrictEqual([{ id: 'a1', role: 'activity', activityType: 'PLAN', content: { steps: [] } }]);
    });
  });

  describe('tool calls', () => {
    it("should add a call to the assistant message its parentMessageId names, and append its arguments", () => {
      expect(built(textStart('m1'), callStart('tc1', { parentMessageId: 'm1' }), callArgs('tc1', '{"q":'), callArgs('tc1', '"x"}'))).toStrictEqual([
        { id: 'm1', role: 'assistant', content: '', toolCalls: [{ id: 'tc1', type: 'function', function: { name: 'search', arguments: '{"q":"x"}' } }] },
      ]);
    });

    it('should create the assistant message when no message has the parent id, or the call id when there is no parent', () => {
      expect(built(callStart('tc1', { parentMessageId: 'm9', subagentRunId: 'sub-1' }), callStart('tc2'))).toStrictEqual([
        { id: 'm9', role: 'assistant', toolCalls: [{ id: 'tc1', type: 'function', function: { name: 'search', arguments: '' } }], subagentRunId: 'sub-1' },
        { id: 'tc2', role: 'assistant', toolCalls: [{ id: 'tc2', type: 'function', function: { name: 'search', arguments: '' } }] },
      ]);
    });

    it('should read an empty parentMessageId as none, as the client does: the call goes into a message named after it', async () => {
      const events: Fields[] = [textStart(''), textContent('', 'Let me look.'), { type: EventType.TEXT_MESSAGE_END, messageId: '' }, callStart('tc1', { parentMessageId: '' }), { type: EventType.TOOL_CALL_END, toolCallId: 'tc1' }];
      const client = await runWithOracle(of({ type: EventType.RUN_STARTED, threadId: 't', runId: 'r' }, ...events, { type: EventType.RUN_FINISHED, threadId: 't', runId: 'r' }) as Observable<Event>);
      expect(built(...events)).toStrictEqual(client.messages);
      expect(client.messages.map((m) => m.id)).toEqual(['', 'tc1']);
    });

    it("should fall back to the call's id when the parent id belongs to another role", () => {
      expect(building([user('u1')], callStart('tc1', { parentMessageId: 'u1' })).messages().map((m) => [m.id, m.role])).toStrictEqual([
        ['u1', 'user'],
        ['tc1', 'assistant'],
      ]);
    });

    it('should rename a call started again rather than add a second one', () => {
      const messages = built(callStart('tc1'), { ...callStart('tc1'), toolCallName: 'lookup' });

      expect(messages).toStrictEqual([{ id: 'tc1', role: 'assistant', toolCalls: [{ id: 'tc1', type: 'function', function: { name: 'lookup', arguments: '' } }] }]);
    });

    it('should ignore ARGS for a call never started', () => {
      expect(built(callArgs('ghost', '{}'))).toStrictEqual([]);
    });

    it('should find calls held by the initial messages', () => {
      const initial: Message[] = [{ id: 'a1', role: 'assistant', toolCalls: [{ id: 'tc1', type: 'function', function: { name: 'search', arguments: '{' } }] }];

      expect(building(initial, callArgs('tc1', '}')).messages()).toStrictEqual([
        { id: 'a1', role: 'assistant', toolCalls: [{ id: 'tc1', type: 'function', function: { name: 'search', arguments: '{}' } }] },
      ]);
    });
  });

  describe('tool results', () => {
    it("should insert a result right after its call's assistant message and that message's earlier results", () => {
      const messages = built(callStart('tc1', { parentMessageId: 'a1' }), callStart('tc2', { parentMessageId: 'a1' }), textStart('m2'), result('tc1', 't1'), result('tc2', 't2'));

      expect(messages.map((m) => m.id)).toStrictEqual(['a1', 't1', 't2', 'm2']);
      expect(messages[1]).toStrictEqual({ id: 't1', toolCallId: 'tc1', role: 'tool', content: 'ok' });
    });

    it('should append a result whose call no message made, keeping its role and subagentRunId', () => {
      expect(built(textStart('m1'), { ...result('tc9', 't9'), role: 'tool', subagentRunId: 'sub-1' })).toStrictEqual([
        { id: 'm1', role: 'assistant', content: '' },
        { id: 't9', toolCallId: 'tc9', role: 'tool', content: 'ok', subagentRunId: 'sub-1' },
      ]);
    });

    it('should send later events to the first message of an id, whether a result with that id is inserted before or after it', () => {
      // Inserted before the message of its id: the result is now the first.
      expect(built(callStart('tc1', { parentMessageId: 'a1' }), textStart('t1'), result('tc1', 't1'), textContent('t1', 'x')).map((m) => [m.id, m.role, m.content])).toStrictEqual([
        ['a1', 'assistant', undefined],
        ['t1', 'tool', 'okx'],
        ['t1', 'assistant', ''],
      ]);
      // Inserted after it: the earlier message stays the first.
      expect(built(textStart('t1'), callStart('tc1', { parentMessageId: 'a1' }), result('tc1', 't1'), textContent('t1', 'x')).map((m) => [m.id, m.role, m.content])).toStrictEqual([
        ['t1', 'assistant', 'x'],
        ['a1', 'assistant', undefined],
        ['t1', 'tool', 'ok'],
      ]);
    });
  });

  describe('activities', () => {
    const snapshot = (content: unknown, extra: Record<string, unknown> = {}): Fields => ({ type: EventType.ACTIVITY_SNAPSHOT, messageId: 'a1', activityType: 'PLAN', content, ...extra });
    const delta = (patch: unknown): Fields => ({ type: EventType.ACTIVITY_DELTA, messageId: 'a1', activityType: 'PLAN', patch });

    it('should add an activity on its first snapshot and replace it on the next, keeping its metadata', () => {
      expect(built(snapshot({ n: 1 }, { metadata: { a: 1 } }), snapshot({ n: 2 }, { subagentRunId: 'sub-1' }))).toStrictEqual([
        { id: 'a1', role: 'activity', activityType: 'PLAN', content: { n: 2 }, subagentRunId: 'sub-1', metadata: { a: 1 } },
      ]);
    });

    it('should keep the activity when a snapshot says replace: false', () => {
      expect(built(snapshot({ n: 1 }), snapshot({ n: 2 }, { replace: false }))[0]).toMatchObject({ content: { n: 1 } });
    });

    it('should replace a message of another role with the activity, unless replace is false', () => {
      expect(built(textStart('a1'), snapshot({ n: 1 }))).toStrictEqual([{ id: 'a1', role: 'activity', activityType: 'PLAN', content: { n: 1 } }]);
      expect(built(textStart('a1'), snapshot({ n: 1 }, { replace: false }))).toStrictEqual([{ id: 'a1', role: 'assistant', content: '' }]);
    });

    it('should patch the content on ACTIVITY_DELTA, and ignore a delta for no activity', () => {
      expect(built(delta([{ op: 'add', path: '/n', value: 1 }]))).toStrictEqual([]);
      expect(built(snapshot({ steps: ['a'] }), delta([{ op: 'add', path: '/steps/-', value: 'b' }]))).toStrictEqual([
        { id: 'a1', role: 'activity', activityType: 'PLAN', content: { steps: ['a', 'b'] } },
      ]);
    });

    it('should throw INVALID_PATCH for a delta through __proto__', () => {
      const conversation = building([], snapshot({}));

      expect(() => conversation.observe(delta([{ op: 'add', path: '/__proto__/x', value: 1 }]), EventType.ACTIVITY_DELTA)).toThrow(expect.objectContaining({ code: 'INVALID_PATCH' }));
    });

    it('should throw INVALID_ACTIVITY_DELTA for a delta that does not apply, and keep the content', () => {
      const conversation = building([], snapshot({ n: 1 }));
      let error: unknown;
      try {
        conversation.observe(delta([{ op: 'replace', path: '/missing', value: 1 }]), EventType.ACTIVITY_DELTA);
      } catch (caught) {
        error = caught;
      }

      expect(error).toBeInstanceOf(AguiRxError);
      expect((error as AguiRxError).code).toBe('INVALID_ACTIVITY_DELTA');
      expect((error as AguiRxError).message).toMatch(/^ACTIVITY_DELTA for activity 'a1' does not apply to its content: .*\. Send an ACTIVITY_SNAPSHOT first, or patch only paths the content has\.$/);
      expect(conversation.messages()[0]).toMatchObject({ content: { n: 1 } });
    });
  });

  describe('encrypted values and metadata', () => {
    it('should keep an encrypted value on its message or tool call', () => {
      const messages = built(
        { type: EventType.REASONING_MESSAGE_START, messageId: 'r1', role: 'reasoning' },
        callStart('tc1'),
        { type: EventType.REASONING_ENCRYPTED_VALUE, subtype: 'message', entityId: 'r1', encryptedValue: 'enc-r' },
        { type: EventType.REASONING_ENCRYPTED_VALUE, subtype: 'tool-call', entityId: 'tc1', encryptedValue: 'enc-t' },
      );

      expect(messages[0]).toMatchObject({ encryptedValue: 'enc-r' });
      expect(messages[1]).toMatchObject({ toolCalls: [{ id: 'tc1', encryptedValue: 'enc-t' }] });
      expect(messages[1]).not.toHaveProperty('encryptedValue');
    });

    it('should merge each event’s metadata key by key into what it builds, last write wins', () => {
      const messages = built(
        textStart('m1', { metadata: { a: 1, b: 1 } }),
        { ...textContent('m1', 'x'), metadata: { b: 2 } },
        { type: EventType.TEXT_MESSAGE_END, messageId: 'm1', metadata: { c: 3 } },
        callStart('tc1', { parentMessageId: 'm1', metadata: { d: 4 } }),
        { type: EventType.TOOL_CALL_END, toolCallId: 'tc1', metadata: { e: 5 } },
      );

      expect(messages[0].metadata).toStrictEqual({ a: 1, b: 2, c: 3 });
      expect((messages[0] as { toolCalls: { metadata?: unknown }[] }).toolCalls[0].metadata).toStrictEqual({ d: 4, e: 5 });
    });
  });

  describe('MESSAGES_SNAPSHOT', () => {
    const reasoning: Message = { id: 'r1', role: 'reasoning', content: 'thought' };

    it('should replace the conversation, keeping the order of messages it still has', () => {
      const conversation = building([user('u1'), user('u2'), user('u3')], { type: EventType.MESSAGES_SNAPSHOT, messages: [user('u4'), user('u3', 'edited'), user('u1')] });

      expect(conversation.messages()).toStrictEqual([user('u1'), user('u3', 'edited'), user('u4')]);
    });

    it('should keep streamed reasoning when the snapshot carries none, and drop it when it carries some', () => {
      expect(building([user('u1'), reasoning], { type: EventType.MESSAGES_SNAPSHOT, messages: [user('u1')] }).messages()).toStrictEqual([user('u1'), reasoning]);
      expect(building([reasoning], { type: EventType.MESSAGES_SNAPSHOT, messages: [{ id: 'r2', role: 'reasoning', content: 'other' }] }).messages()).toStrictEqual([
        { id: 'r2', role: 'reasoning', content: 'other' },
      ]);
    });

    it('should find messages by id after the replacement', () => {
      const conversation = building([user('u1')], textStart('m1'), { type: EventType.MESSAGES_SNAPSHOT, messages: [user('m2')] }, textStart('m1'), textContent('m2', '!'));

      expect(conversation.messages()).toStrictEqual([user('m2', 'hi!'), { id: 'm1', role: 'assistant', content: '' }]);
    });
  });

  it('should ignore events that change no message', () => {
    expect(built({ type: EventType.STATE_SNAPSHOT, snapshot: {} }, { type: EventType.CUSTOM, name: 'x', value: 1 }, { type: EventType.STEP_STARTED, stepName: 'plan' })).toStrictEqual([]);
  });

  it('should forget everything on clear', () => {
    const conversation = building([user('u1')], textStart('m1'));
    conversation.clear();

    expect(conversation.messages()).toStrictEqual([]);
    conversation.observe(textContent('m1', 'x'), EventType.TEXT_MESSAGE_CONTENT);
    expect(conversation.messages()).toStrictEqual([]);
  });

  it('should keep each conversation apart', () => {
    const first = building([], textStart('m1'));
    const second = building([]);

    expect(second.messages()).toStrictEqual([]);
    expect(first.messages()).toHaveLength(1);
  });

  it('should build a long stream in linear time: each event finds its message by index', () => {
    const conversation = trackConversation();
    const started = performance.now();
    for (let i = 0; i < 20_000; i++) {
      conversation.observe(textStart(`m${i}`), EventType.TEXT_MESSAGE_START);
      conversation.observe(callStart(`tc${i}`, { parentMessageId: `m${i}` }), EventType.TOOL_CALL_START);
      conversation.observe(callArgs(`tc${i}`, '{}'), EventType.TOOL_CALL_ARGS);
    }
    // A scan per event would be 20k × 20k steps: seconds, not the few milliseconds of a lookup.
    expect(performance.now() - started).toBeLessThan(1500);
    expect(conversation.messages()).toHaveLength(20_000);
  });
});
