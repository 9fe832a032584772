import { EventType } from '@ag-ui/core';
import type { AgentEvent } from '../../../lib/protocol/agentEvent.js';
import type { AguiDiagnostic } from '../../../lib/protocol/diagnostics.js';
import { entityKind } from '../../../lib/protocol/table.js';
import { trackMessageLanes, type MessageLanes } from '../../../lib/tracking/messageLanes.js';

/** A tracker with ids `id1`, `id2`, … and what it emitted and reported. */
function tracker(): MessageLanes & { out: AgentEvent[]; diagnostics: string[]; feed(...events: object[]): AgentEvent[] } {
  let n = 0;
  const out: AgentEvent[] = [];
  const diagnostics: string[] = [];
  const lanes = trackMessageLanes({ mint: () => `id${++n}`, diagnose: (d: AguiDiagnostic) => diagnostics.push(d.message), out: { next: (e) => void out.push(e) } });
  return {
    next: (event) => lanes.next(event),
    closeAll: () => lanes.closeAll(),
    flush: () => lanes.flush(),
    contentFor: (event) => lanes.contentFor(event),
    out,
    diagnostics,
    // Feeds events and returns what they emitted.
    feed(...events) {
      const from = out.length;
      for (const event of events) lanes.next(event as AgentEvent);
      return out.slice(from);
    },
  };
}

/** What `fn` throws, or `undefined`. */
function thrown(fn: () => void): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  return undefined;
}

const chunk = (delta: string, fields: object = {}) => ({ type: EventType.TEXT_MESSAGE_CHUNK, delta, ...fields });
const thinking = (delta: string, fields: object = {}) => ({ type: EventType.REASONING_MESSAGE_CHUNK, delta, ...fields });

describe('trackMessageLanes', () => {
  describe('chunks', () => {
    it('should open a text message under a minted id with role assistant, then stream its content', () => {
      const lanes = tracker();

      expect(lanes.feed(chunk('Hel'), chunk('lo'))).toStrictEqual([
        { type: EventType.TEXT_MESSAGE_START, messageId: 'id1', role: 'assistant' },
        { type: EventType.TEXT_MESSAGE_CONTENT, messageId: 'id1', delta: 'Hel' },
        { type: EventType.TEXT_MESSAGE_CONTENT, messageId: 'id1', delta: 'lo' },
      ]);
    });

    it("should open under the producer's id, role and name, and copy the base fields onto the content", () => {
      const lanes = tracker();

      expect(lanes.feed(chunk('Hi', { messageId: 'm1', role: 'user', name: 'ada', timestamp: 7, rawEvent: { x: 1 } }))).toStrictEqual([
        { type: EventType.TEXT_MESSAGE_START, messageId: 'm1', role: 'user', name: 'ada', timestamp: 7 },
        { type: EventType.TEXT_MESSAGE_CONTENT, messageId: 'm1', delta: 'Hi', timestamp: 7, rawEvent: { x: 1 } },
      ]);
    });

    it('should open nothing and send nothing for an empty or absent delta', () => {
      const lanes = tracker();

      expect(lanes.feed(chunk(''), { type: EventType.TEXT_MESSAGE_CHUNK, messageId: 'm1' }, thinking(''))).toStrictEqual([]);
      lanes.closeAll();
      expect(lanes.out).toStrictEqual([]);
    });

    it("should close the lane's open message when a chunk names another id", () => {
      const lanes = tracker();
      lanes.feed(chunk('a', { messageId: 'm1' }));

      expect(lanes.feed(chunk('b', { messageId: 'm2' }))).toStrictEqual([
        { type: EventType.TEXT_MESSAGE_END, messageId: 'm1' },
        { type: EventType.TEXT_MESSAGE_START, messageId: 'm2', role: 'assistant' },
        { type: EventType.TEXT_MESSAGE_CONTENT, messageId: 'm2', delta: 'b' },
      ]);
    });

    it('should stream a chunk without an id into the open message', () => {
      const lanes = tracker();
      lanes.feed(chunk('a', { messageId: 'm1' }));

      expect(lanes.feed(chunk('b'))).toStrictEqual([{ type: EventType.TEXT_MESSAGE_CONTENT, messageId: 'm1', delta: 'b' }]);
    });

    it('should open a reasoning span around a reasoning message opened by a chunk, and close both, message first', () => {
      const lanes = tracker();

      expect(lanes.feed(thinking('hmm', { messageId: 'r1' }))).toStrictEqual([
        { type: EventType.REASONING_START, messageId: 'r1' },
        { type: EventType.REASONING_MESSAGE_START, messageId: 'r1', role: 'reasoning' },
        { type: EventType.REASONING_MESSAGE_CONTENT, messageId: 'r1', delta: 'hmm' },
      ]);
      lanes.closeAll();
      expect(lanes.out.slice(3)).toStrictEqual([
        { type: EventType.REASONING_MESSAGE_END, messageId: 'r1' },
        { type: EventType.REASONING_END, messageId: 'r1' },
      ]);
    });

    it('should close the reasoning message and span before text, and the text before reasoning', () => {
      const lanes = tracker();
      lanes.feed(thinking('hmm', { messageId: 'r1' }));

      expect(lanes.feed(chunk('Yes', { messageId: 'm1' }))).toStrictEqual([
        { type: EventType.REASONING_MESSAGE_END, messageId: 'r1' },
        { type: EventType.REASONING_END, messageId: 'r1' },
        { type: EventType.TEXT_MESSAGE_START, messageId: 'm1', role: 'assistant' },
        { type: EventType.TEXT_MESSAGE_CONTENT, messageId: 'm1', delta: 'Yes' },
      ]);
      expect(lanes.feed(thinking('again'))).toStrictEqual([
        { type: EventType.TEXT_MESSAGE_END, messageId: 'm1' },
        { type: EventType.REASONING_START, messageId: 'id1' },
        { type: EventType.REASONING_MESSAGE_START, messageId: 'id1', role: 'reasoning' },
        { type: EventType.REASONING_MESSAGE_CONTENT, messageId: 'id1', delta: 'again' },
      ]);
    });

    it('should rely on text and reasoning closing each other in the table: a streaming message has nothing to close', () => {
      // The per-token path skips the closing check while its message is open; this is why it may.
      expect(entityKind.textMessage.closesInLane).toEqual(expect.arrayContaining(['reasoningMessage', 'reasoning']));
      expect(entityKind.reasoningMessage.closesInLane).toContain('textMessage');
      expect(entityKind.reasoning.closesInLane).toContain('textMessage');
    });

    it('should throw INVALID_EVENT for a delta that is not a string', () => {
      const lanes = tracker();

      expect(thrown(() => lanes.next(chunk(42 as unknown as string) as AgentEvent))).toMatchObject({
        name: 'AguiRxError',
        code: 'INVALID_EVENT',
        message:
          "TEXT_MESSAGE_CHUNK has 'delta: number 42', but 'delta' must be a string.",
      });
    });
  });

  describe('explicit events', () => {
    it('should pass an explicit START, CONTENT and END through unchanged', () => {
      const lanes = tracker();
      const events = [
        { type: EventType.TEXT_MESSAGE_START, messageId: 'm1', role: 'assistant' },
        { type: EventType.TEXT_MESSAGE_CONTENT, messageId: 'm1', delta: 'Hi' },
        { type: EventType.TEXT_MESSAGE_END, messageId: 'm1' },
      ];

      const out = lanes.feed(...events);

      expect(out).toStrictEqual(events);
      expect(out[1]).toBe(events[1]);
      expect(lanes.diagnostics).toStrictEqual([]);
    });

    it('should reopen an ended message under its id for content, START first, and say so', () => {
      const lanes = tracker();
      lanes.feed(chunk('a', { messageId: 'm1' }), { type: EventType.TEXT_MESSAGE_END, messageId: 'm1' });

      expect(lanes.feed({ type: EventType.TEXT_MESSAGE_CONTENT, messageId: 'm1', delta: 'b' }, { type: EventType.TEXT_MESSAGE_END, messageId: 'm1' })).toStrictEqual([
        { type: EventType.TEXT_MESSAGE_START, messageId: 'm1', role: 'assistant' },
        { type: EventType.TEXT_MESSAGE_CONTENT, messageId: 'm1', delta: 'b' },
        { type: EventType.TEXT_MESSAGE_END, messageId: 'm1' },
      ]);
      expect(lanes.diagnostics).toStrictEqual([
        "TEXT_MESSAGE_CONTENT for message 'm1', which was already ended: it was reopened with TEXT_MESSAGE_START under its id, and the client appends to it. Send TEXT_MESSAGE_START before the content of a message you continue.",
      ]);
    });

    it('should reopen an ended message under its id from a chunk, with the role it had, without a diagnostic', () => {
      const lanes = tracker();
      lanes.feed(chunk('a', { messageId: 'm1', role: 'developer' }), { type: EventType.TOOL_CALL_RESULT, messageId: 't1', toolCallId: 'c1', content: 'ok' });

      expect(lanes.feed(chunk('b', { messageId: 'm1' }))).toStrictEqual([
        { type: EventType.TEXT_MESSAGE_START, messageId: 'm1', role: 'developer' },
        { type: EventType.TEXT_MESSAGE_CONTENT, messageId: 'm1', delta: 'b' },
      ]);
      expect(lanes.diagnostics).toStrictEqual([]);
    });

    it('should pass an explicit START that reopens an ended message of the same role as it is, without a diagnostic', () => {
      const lanes = tracker();
      const start = { type: EventType.REASONING_MESSAGE_START, messageId: 'r1', role: 'reasoning' };
      lanes.feed(start, { type: EventType.REASONING_MESSAGE_END, messageId: 'r1' });

      expect(lanes.feed(start)).toStrictEqual([start]);
      expect(lanes.diagnostics).toStrictEqual([]);
    });

    it.each([
      [
        'another role',
        [{ type: EventType.TEXT_MESSAGE_START, messageId: 'm1', role: 'user' }, { type: EventType.TEXT_MESSAGE_END, messageId: 'm1' }],
        { type: EventType.TEXT_MESSAGE_START, messageId: 'm1', role: 'assistant' },
        "TEXT_MESSAGE_START reuses message id 'm1', which was already ended as a text message with role 'user' of the parent agent; it was sent as a new message 'id1'. Use a new messageId for each message.",
      ],
      [
        'another kind',
        [thinking('hmm', { messageId: 'm1' }), { type: EventType.REASONING_END, messageId: 'm1' }],
        { type: EventType.TEXT_MESSAGE_START, messageId: 'm1', role: 'assistant' },
        "TEXT_MESSAGE_START reuses message id 'm1', which was already ended as a reasoning message of the parent agent; it was sent as a new message 'id1'. Use a new messageId for each message.",
      ],
      [
        'another lane',
        [chunk('a', { messageId: 'm1', subagentRunId: 's1' }), { type: EventType.TEXT_MESSAGE_END, messageId: 'm1', subagentRunId: 's1' }],
        { type: EventType.TEXT_MESSAGE_START, messageId: 'm1', role: 'assistant' },
        "TEXT_MESSAGE_START reuses message id 'm1', which was already ended as a text message with role 'assistant' of subagent 's1'; it was sent as a new message 'id1'. Use a new messageId for each message.",
      ],
    ])('should give a START that reuses the id of an ended message of %s a fresh id, and say so', (_name, before, start, diagnostic) => {
      const lanes = tracker();
      lanes.feed(...before);

      expect(lanes.feed(start)).toStrictEqual([{ ...start, messageId: 'id1' }]);
      expect(lanes.diagnostics).toStrictEqual([diagnostic]);
    });

    it("should give a START for an id another lane uses a fresh id, and say whose it is", () => {
      const lanes = tracker();
      lanes.feed({ type: EventType.REASONING_START, messageId: 'x', subagentRunId: 's1' });

      expect(lanes.feed({ type: EventType.TEXT_MESSAGE_START, messageId: 'x', role: 'assistant' })).toStrictEqual([
        { type: EventType.TEXT_MESSAGE_START, messageId: 'id1', role: 'assistant' },
      ]);
      expect(lanes.diagnostics).toStrictEqual([
        "TEXT_MESSAGE_START reuses message id 'x', which subagent 's1' uses; it was sent as a new message 'id1'. Use a new messageId for each message.",
      ]);
    });

    it('should drop a second START for the open message, and say so', () => {
      const lanes = tracker();
      const start = { type: EventType.TEXT_MESSAGE_START, messageId: 'm1', role: 'assistant' };
      lanes.feed(start);

      expect(lanes.feed(start)).toStrictEqual([]);
      expect(lanes.diagnostics).toStrictEqual(["Dropped a second TEXT_MESSAGE_START for message 'm1', which is already open. Send one START per message."]);
    });

    it('should drop an END for nothing open, and say so', () => {
      const lanes = tracker();

      expect(lanes.feed({ type: EventType.REASONING_MESSAGE_END, messageId: 'r9', subagentRunId: 's1' })).toStrictEqual([]);
      expect(lanes.diagnostics).toStrictEqual([
        "Dropped REASONING_MESSAGE_END for message 'r9': no such message is open in subagent 's1'. End a message once, after its START.",
      ]);
    });

    it('should throw INVALID_EVENT for content of a message open in another lane', () => {
      const lanes = tracker();
      lanes.feed(chunk('a', { messageId: 'm1' }));

      expect(thrown(() => lanes.next({ type: EventType.TEXT_MESSAGE_CONTENT, messageId: 'm1', delta: 'b', subagentRunId: 's1' } as AgentEvent))).toMatchObject({
        name: 'AguiRxError',
        code: 'INVALID_EVENT',
        message:
          "TEXT_MESSAGE_CONTENT for message 'm1' comes from subagent 's1', but that message is open as a text message of the parent agent. Give each message its own id, and set the same subagentRunId on every event of a message.",
      });
    });

    it('should throw INVALID_EVENT for an END of a message open in another lane', () => {
      const lanes = tracker();
      lanes.feed(thinking('a', { messageId: 'r1', subagentRunId: 's1' }));

      expect(thrown(() => lanes.next({ type: EventType.REASONING_MESSAGE_END, messageId: 'r1', subagentRunId: 's2' } as AgentEvent))).toMatchObject({
        name: 'AguiRxError',
        code: 'INVALID_EVENT',
        message:
          "REASONING_MESSAGE_END for message 'r1' comes from subagent 's2', but that message is open as a reasoning message of subagent 's1'. Give each message its own id, and set the same subagentRunId on every event of a message.",
      });
    });

    it('should end a subagent\'s message from an untagged END that names it, tagged as its opener (AG-UI spec 1.1, Subagents)', () => {
      const lanes = tracker();
      lanes.feed(thinking('a', { messageId: 'r1', subagentRunId: 's1' }));

      expect(lanes.feed({ type: EventType.REASONING_MESSAGE_END, messageId: 'r1' })).toStrictEqual([{ type: EventType.REASONING_MESSAGE_END, messageId: 'r1', subagentRunId: 's1' }]);
      expect(lanes.diagnostics).toStrictEqual([]);
    });

    it('should open an explicit span without a message, and keep a reasoning START inside it from opening another', () => {
      const lanes = tracker();

      expect(
        lanes.feed(
          { type: EventType.REASONING_START, messageId: 'rs' },
          { type: EventType.REASONING_MESSAGE_START, messageId: 'rm', role: 'reasoning' },
          thinking('x'),
          { type: EventType.REASONING_END, messageId: 'rs' },
        ),
      ).toStrictEqual([
        { type: EventType.REASONING_START, messageId: 'rs' },
        { type: EventType.REASONING_MESSAGE_START, messageId: 'rm', role: 'reasoning' },
        { type: EventType.REASONING_MESSAGE_CONTENT, messageId: 'rm', delta: 'x' },
        { type: EventType.REASONING_MESSAGE_END, messageId: 'rm' },
        { type: EventType.REASONING_END, messageId: 'rs' },
      ]);
    });

    it('should drop a second REASONING_START and a REASONING_END for no open span', () => {
      const lanes = tracker();
      lanes.feed({ type: EventType.REASONING_START, messageId: 'rs' });

      expect(lanes.feed({ type: EventType.REASONING_START, messageId: 'rs' }, { type: EventType.REASONING_END, messageId: 'other' })).toStrictEqual([]);
      expect(lanes.diagnostics).toStrictEqual([
        "Dropped a second REASONING_START for span 'rs', which is already open.",
        "Dropped REASONING_END for span 'other': no such span is open in the parent agent.",
      ]);
    });

    it('should throw INVALID_EVENT for a span id another lane uses', () => {
      const lanes = tracker();
      lanes.feed(chunk('a', { messageId: 'm1' }));

      expect(thrown(() => lanes.next({ type: EventType.REASONING_START, messageId: 'm1', subagentRunId: 's1' } as AgentEvent))).toMatchObject({
        name: 'AguiRxError',
        code: 'INVALID_EVENT',
        message:
          "REASONING_START from subagent 's1' opens span 'm1', an id the parent agent already uses. Give each lane's reasoning its own messageId.",
      });
    });
  });

  describe('lanes', () => {
    it('should keep one open message per lane, side by side', () => {
      const lanes = tracker();

      expect(lanes.feed(chunk('a', { messageId: 'm1' }), chunk('b', { messageId: 'm2', subagentRunId: 's1' }), chunk('c', { messageId: 'm1' }))).toStrictEqual([
        { type: EventType.TEXT_MESSAGE_START, messageId: 'm1', role: 'assistant' },
        { type: EventType.TEXT_MESSAGE_CONTENT, messageId: 'm1', delta: 'a' },
        { type: EventType.TEXT_MESSAGE_START, messageId: 'm2', role: 'assistant', subagentRunId: 's1' },
        { type: EventType.TEXT_MESSAGE_CONTENT, messageId: 'm2', delta: 'b', subagentRunId: 's1' },
        { type: EventType.TEXT_MESSAGE_CONTENT, messageId: 'm1', delta: 'c' },
      ]);
    });

    it.each([EventType.TOOL_CALL_RESULT, EventType.STEP_STARTED, EventType.STEP_FINISHED])('should close only its own lane before a %s', (type) => {
      const lanes = tracker();
      lanes.feed(chunk('a', { messageId: 'm1' }), thinking('b', { messageId: 'r2', subagentRunId: 's1' }));
      const boundary = { type, subagentRunId: 's1' };

      expect(lanes.feed(boundary)).toStrictEqual([
        { type: EventType.REASONING_MESSAGE_END, messageId: 'r2', subagentRunId: 's1' },
        { type: EventType.REASONING_END, messageId: 'r2', subagentRunId: 's1' },
        boundary,
      ]);
    });

    it.each([EventType.SUBAGENT_FINISHED, EventType.SUBAGENT_ERROR])("should close the subagent's lane before a %s", (type) => {
      const lanes = tracker();
      lanes.feed(chunk('a', { messageId: 'm1' }), chunk('b', { messageId: 'm2', subagentRunId: 's1' }));
      const end = { type, subagentRunId: 's1' };

      expect(lanes.feed(end)).toStrictEqual([{ type: EventType.TEXT_MESSAGE_END, messageId: 'm2', subagentRunId: 's1' }, end]);
    });

    it.each([EventType.RUN_STARTED, EventType.RUN_FINISHED, EventType.RUN_ERROR, EventType.MESSAGES_SNAPSHOT])('should close every lane before a %s', (type) => {
      const lanes = tracker();
      lanes.feed(chunk('a', { messageId: 'm1' }), chunk('b', { messageId: 'm2', subagentRunId: 's1' }));
      const boundary = { type };

      expect(lanes.feed(boundary)).toStrictEqual([
        { type: EventType.TEXT_MESSAGE_END, messageId: 'm1' },
        { type: EventType.TEXT_MESSAGE_END, messageId: 'm2', subagentRunId: 's1' },
        boundary,
      ]);
    });

    it.each([EventType.TOOL_CALL_START, EventType.TOOL_CALL_CHUNK])("should close the lane's reasoning, and not its text, before a %s", (type) => {
      const lanes = tracker();
      lanes.feed(chunk('a', { messageId: 'm1' }), { type: EventType.REASONING_START, messageId: 'rs', subagentRunId: 's1' });
      const inSubagent = { type, toolCallId: 'c1', toolCallName: 'search', subagentRunId: 's1' };
      const inParent = { type, toolCallId: 'c2', toolCallName: 'search' };

      expect(lanes.feed(inSubagent, inParent)).toStrictEqual([{ type: EventType.REASONING_END, messageId: 'rs', subagentRunId: 's1' }, inSubagent, inParent]);
      expect(lanes.feed(chunk('b'))).toStrictEqual([{ type: EventType.TEXT_MESSAGE_CONTENT, messageId: 'm1', delta: 'b' }]);
    });

    it('should let TOOL_CALL_ARGS, TOOL_CALL_END and other events pass without closing anything', () => {
      const lanes = tracker();
      lanes.feed(thinking('a', { messageId: 'r1' }));
      const others = [
        { type: EventType.TOOL_CALL_ARGS, toolCallId: 'c1', delta: '{}' },
        { type: EventType.TOOL_CALL_END, toolCallId: 'c1' },
        { type: EventType.STATE_SNAPSHOT, snapshot: {} },
        { type: EventType.SUBAGENT_STARTED, subagentRunId: 's1' },
      ];

      expect(lanes.feed(...others)).toStrictEqual(others);
    });

    it('should close, in closeAll, lane by lane in the order lanes appeared: text, then reasoning message, then span', () => {
      const lanes = tracker();
      lanes.feed(
        thinking('a', { messageId: 'r1', subagentRunId: 's2' }),
        { type: EventType.REASONING_START, messageId: 'rs' },
        { type: EventType.TEXT_MESSAGE_START, messageId: 'm1', role: 'assistant', subagentRunId: 's1' },
      );
      const from = lanes.out.length;

      lanes.closeAll();

      expect(lanes.out.slice(from)).toStrictEqual([
        { type: EventType.REASONING_MESSAGE_END, messageId: 'r1', subagentRunId: 's2' },
        { type: EventType.REASONING_END, messageId: 'r1', subagentRunId: 's2' },
        { type: EventType.REASONING_END, messageId: 'rs' },
        { type: EventType.TEXT_MESSAGE_END, messageId: 'm1', subagentRunId: 's1' },
      ]);
    });

    it('should close the parent agent\'s lane first in closeAll when it appeared before any subagent\'s', () => {
      const lanes = tracker();
      lanes.feed(
        chunk('a', { messageId: 'm1' }),
        thinking('b', { messageId: 'r1', subagentRunId: 's1' }),
      );
      const from = lanes.out.length;

      lanes.closeAll();

      expect(lanes.out.slice(from)).toStrictEqual([
        { type: EventType.TEXT_MESSAGE_END, messageId: 'm1' },
        { type: EventType.REASONING_MESSAGE_END, messageId: 'r1', subagentRunId: 's1' },
        { type: EventType.REASONING_END, messageId: 'r1', subagentRunId: 's1' },
      ]);
    });

    it('should close the parent agent\'s lane at a run boundary while no subagent has appeared', () => {
      const lanes = tracker();

      expect(lanes.feed(chunk('a', { messageId: 'm1' }), { type: EventType.RUN_FINISHED })).toStrictEqual([
        { type: EventType.TEXT_MESSAGE_START, messageId: 'm1', role: 'assistant' },
        { type: EventType.TEXT_MESSAGE_CONTENT, messageId: 'm1', delta: 'a' },
        { type: EventType.TEXT_MESSAGE_END, messageId: 'm1' },
        { type: EventType.RUN_FINISHED },
      ]);
    });

    it('should keep each tracker to its own ids', () => {
      const first = tracker();
      const second = tracker();
      first.feed(chunk('a', { messageId: 'm1' }), { type: EventType.RUN_FINISHED });

      expect(second.feed(chunk('b', { messageId: 'm1' }))).toStrictEqual([
        { type: EventType.TEXT_MESSAGE_START, messageId: 'm1', role: 'assistant' },
        { type: EventType.TEXT_MESSAGE_CONTENT, messageId: 'm1', delta: 'b' },
      ]);
    });
  });

  describe('contentFor', () => {
    it('should give the TEXT_MESSAGE_CONTENT that next sends for a plain chunk continuing the open text message, changing nothing', () => {
      const lanes = tracker();
      lanes.feed(chunk('Hel', { messageId: 'm1' }));
      const continuing = [chunk('lo', { messageId: 'm1' }), chunk('!', { messageId: 'm1', role: 'assistant', name: 'bot' })];
      for (const event of continuing) {
        const before = lanes.out.length;
        const content = lanes.contentFor(event as AgentEvent);
        expect(lanes.out).toHaveLength(before);
        expect(content).toBeDefined();
        expect(lanes.feed(event)).toStrictEqual([content]);
      }
      expect(lanes.out.map((e) => e.type)).toEqual([EventType.TEXT_MESSAGE_START, ...Array(3).fill(EventType.TEXT_MESSAGE_CONTENT)]);
    });

    it('should leave a continuing chunk with base fields to next, which carries them onto its content', () => {
      const lanes = tracker();
      lanes.feed(chunk('Hel', { messageId: 'm1' }));
      for (const fields of [{ timestamp: 7 }, { metadata: { k: 1 } }, { rawEvent: { raw: true } }, { timestamp: 7, metadata: { k: 1 }, rawEvent: 'r' }]) {
        const event = chunk('lo', { messageId: 'm1', ...fields });
        expect(lanes.contentFor(event as AgentEvent)).toBeUndefined();
        expect(lanes.feed(event)).toStrictEqual([{ type: EventType.TEXT_MESSAGE_CONTENT, messageId: 'm1', delta: 'lo', ...fields }]);
      }
    });

    it('should give nothing for what does more than send a content event, is not a chunk continuing the parent agent\'s text, or is read differently (no messageId by name, snake_case, null)', () => {
      const lanes = tracker();
      // Nothing open yet: the first chunk opens the message.
      expect(lanes.contentFor(chunk('Hi', { messageId: 'm1' }) as AgentEvent)).toBeUndefined();
      lanes.feed(chunk('Hi', { messageId: 'm1' }));
      const others = [
        chunk('x', { messageId: 'm2' }),
        chunk(''),
        chunk('x'),
        chunk('x', { message_id: 'm1' }),
        chunk('x', { messageId: 'm1', message_id: 'm1' }),
        chunk('x', { messageId: 'm1', timestamp: null }),
        chunk('x', { messageId: 'm1', rawEvent: null }),
        chunk('x', { messageId: 'm1', metadata: null }),
        chunk('x', { messageId: 'm1', role: null }),
        chunk('x', { messageId: 'm1', name: null }),
        chunk('x', { subagentRunId: 's1' }),
        { type: EventType.TEXT_MESSAGE_CONTENT, messageId: 'm1', delta: 'x' },
        { type: EventType.REASONING_MESSAGE_CHUNK, delta: 'x' },
        { type: EventType.TEXT_MESSAGE_CHUNK, messageId: 'm1', delta: 3 },
        { type: EventType.TEXT_MESSAGE_CHUNK, messageId: 7, delta: 'x' },
        null,
        'TEXT_MESSAGE_CHUNK',
      ];
      for (const event of others) expect([event, lanes.contentFor(event as AgentEvent)]).toEqual([event, undefined]);
      expect(lanes.out).toHaveLength(2);
      lanes.closeAll();
      expect(lanes.contentFor(chunk('x', { messageId: 'm1' }) as AgentEvent)).toBeUndefined();
    });
  });

  describe('bookkeeping', () => {
    afterEach(() => jest.restoreAllMocks());

    // What a run holds per message, counted (a table entry is memory for the rest of the run, and each insert into a
    // table of thousands is slow): the old layout moved every message from an open table to an ended one. Each table
    // holds its first id itself (see idTable), so the Map entries are two per message after the first.
    it('should make one table entry per message, open or ended, and one in its id table, deleting none', () => {
      const lanes = tracker();
      const sets = jest.spyOn(Map.prototype, 'set');
      const deletes = jest.spyOn(Map.prototype, 'delete');

      for (let i = 0; i < 50; i++) lanes.feed(chunk('a', { messageId: `m${i}` }), chunk('b', { messageId: `m${i}` }));
      lanes.closeAll();

      expect(lanes.out.filter((e) => e.type === EventType.TEXT_MESSAGE_END)).toHaveLength(50);
      expect(sets).toHaveBeenCalledTimes(2 * 49);
      expect(deletes).not.toHaveBeenCalled();
    });

    it('should reopen an ended message in place, without a new entry', () => {
      const lanes = tracker();
      lanes.feed(chunk('a', { messageId: 'm1' }), chunk('b', { messageId: 'm2' }));
      const sets = jest.spyOn(Map.prototype, 'set');

      expect(lanes.feed({ type: EventType.TEXT_MESSAGE_START, messageId: 'm1', role: 'assistant' }, chunk('c', { messageId: 'm1' }))).toStrictEqual([
        { type: EventType.TEXT_MESSAGE_END, messageId: 'm2' },
        { type: EventType.TEXT_MESSAGE_START, messageId: 'm1', role: 'assistant' },
        { type: EventType.TEXT_MESSAGE_CONTENT, messageId: 'm1', delta: 'c' },
      ]);
      expect(sets).not.toHaveBeenCalled();
      expect(lanes.diagnostics).toStrictEqual([]);
    });
  });
});
