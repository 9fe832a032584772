import { EventType } from '@ag-ui/core';
import { AguiRxError } from '../../../lib/protocol/errors.js';
import type { AgentEvent } from '../../../lib/protocol/agentEvent.js';
import { trackToolCalls, type ToolCallTracker } from '../../../lib/tracking/toolCalls.js';
import { sequentialIds } from '../../support/helpers.js';

type Fields = Record<string, unknown>;

/** A tracker with ids `id-1`, `id-2`, …, its output and its diagnostics. */
function tracking(): { calls: ToolCallTracker; out: AgentEvent[]; diagnostics: string[]; sent(): AgentEvent[] } {
  const out: AgentEvent[] = [];
  const diagnostics: string[] = [];
  const calls = trackToolCalls({ mint: sequentialIds(), out: { next: (event) => void out.push(event) }, diagnose: (d) => void diagnostics.push(d.message) });
  // What was sent since the last call of sent().
  return { calls, out, diagnostics, sent: () => out.splice(0) };
}

const chunk = (fields: Fields): Fields => ({ type: EventType.TOOL_CALL_CHUNK, ...fields });
const start = (toolCallId: string, toolCallName: string, fields: Fields = {}): Fields => ({ type: EventType.TOOL_CALL_START, toolCallId, toolCallName, ...fields });
const args = (toolCallId: string, delta: string, fields: Fields = {}): Fields => ({ type: EventType.TOOL_CALL_ARGS, toolCallId, delta, ...fields });
const end = (toolCallId: string, fields: Fields = {}): Fields => ({ type: EventType.TOOL_CALL_END, toolCallId, ...fields });
const result = (toolCallId: string, content: unknown, fields: Fields = {}): Fields => ({ type: EventType.TOOL_CALL_RESULT, toolCallId, content, ...fields });
const textStart = (messageId: string, fields: Fields = { role: 'assistant' }): Fields => ({ type: EventType.TEXT_MESSAGE_START, messageId, ...fields });

/** Sends `event` to the tracker method its type belongs to, as the operator does. */
function feed(calls: ToolCallTracker, event: Fields): void {
  switch (event.type) {
    case EventType.TOOL_CALL_CHUNK:
      return calls.chunk(event);
    case EventType.TOOL_CALL_START:
      return calls.start(event);
    case EventType.TOOL_CALL_ARGS:
      return calls.args(event);
    case EventType.TOOL_CALL_END:
      return calls.end(event);
    case EventType.TOOL_CALL_RESULT:
      return calls.result(event);
    default:
      return calls.pass(event.type as string, event);
  }
}

/** A tracker that has seen `events`, with their output cleared. */
function after(...events: Fields[]): ReturnType<typeof tracking> {
  const t = tracking();
  for (const event of events) feed(t.calls, event);
  t.sent();
  return t;
}

const invalidEvent = (message: string) => expect.objectContaining({ constructor: AguiRxError, code: 'INVALID_EVENT', message });

describe('trackToolCalls', () => {
  describe('opening a call', () => {
    it('should send START under the chunk\'s id, then ARGS for its delta', () => {
      const { calls, sent } = tracking();
      calls.chunk(chunk({ toolCallId: 'c1', toolCallName: 'search', parentMessageId: 'm1', delta: '{"q":1}', timestamp: 5 }));

      expect(sent()).toStrictEqual([
        { type: EventType.TOOL_CALL_START, toolCallId: 'c1', toolCallName: 'search', parentMessageId: 'm1', timestamp: 5 },
        { type: EventType.TOOL_CALL_ARGS, toolCallId: 'c1', delta: '{"q":1}', timestamp: 5 },
      ]);
    });

    it('should mint the id of a named chunk without toolCallId, and send no ARGS for an empty delta', () => {
      const { calls, sent } = tracking();
      calls.chunk(chunk({ toolCallName: 'search', delta: '' }));

      // id-1 is the call, id-2 the parent minted for the turn.
      expect(sent()).toStrictEqual([{ type: EventType.TOOL_CALL_START, toolCallId: 'id-1', toolCallName: 'search', parentMessageId: 'id-2' }]);
    });

    it('should need a toolCallName to open a call', () => {
      expect(() => tracking().calls.chunk(chunk({ toolCallId: 'c1', delta: '{}' }))).toThrow(
        invalidEvent("TOOL_CALL_CHUNK opens tool call 'c1' without a toolCallName. Put the tool's name on the first chunk of each call."),
      );
      expect(() => tracking().calls.chunk(chunk({ delta: '{}', subagentRunId: 's1' }))).toThrow(
        invalidEvent("TOOL_CALL_CHUNK has no toolCallId and no tool call is open in subagent 's1'. The first chunk of a call needs a toolCallName (and ideally a toolCallId)."),
      );
    });

    it('should pass an explicit START as it is, and drop a second START for the open call with a diagnostic', () => {
      const { calls, sent, diagnostics } = tracking();
      calls.start(start('c1', 'search', { parentMessageId: 'm1' }));
      calls.start(start('c1', 'search'));

      expect(sent()).toStrictEqual([start('c1', 'search', { parentMessageId: 'm1' })]);
      expect(diagnostics).toEqual(["Dropped a second TOOL_CALL_START for tool call 'c1', which is already open. Send one START per call."]);
    });

    it('should send a call that reuses an ended call\'s id under a minted id, and map the producer\'s later events to it', () => {
      const { calls, sent } = after(chunk({ toolCallId: 'c1', toolCallName: 'search', delta: '{}' }), result('c1', 'done'));
      calls.start(start('c1', 'search'));
      calls.args(args('c1', '{"q":2}'));
      calls.end(end('c1'));

      // id-1 was the first turn's parent, id-2 the first result's messageId.
      expect(sent()).toStrictEqual([start('id-3', 'search'), args('id-3', '{"q":2}'), end('id-3')]);
    });
  });

  describe('continuing a call', () => {
    it('should send ARGS for a chunk of an open call, with the base fields it carries', () => {
      const { calls, sent } = after(chunk({ toolCallId: 'c1', toolCallName: 'search' }));
      calls.chunk(chunk({ toolCallId: 'c1', delta: '{"q":', rawEvent: { n: 1 } }));
      calls.args(args('c1', '1}'));

      expect(sent()).toStrictEqual([
        { type: EventType.TOOL_CALL_ARGS, toolCallId: 'c1', delta: '{"q":', rawEvent: { n: 1 } },
        { type: EventType.TOOL_CALL_ARGS, toolCallId: 'c1', delta: '1}' },
      ]);
    });

    it('should continue the lane\'s latest call with a chunk without id', () => {
      const { calls, sent } = after(chunk({ toolCallId: 'c1', toolCallName: 'search' }), chunk({ toolCallId: 'c2', toolCallName: 'lookup' }));
      calls.chunk(chunk({ delta: '{"k":1}' }));

      expect(sent()).toStrictEqual([{ type: EventType.TOOL_CALL_ARGS, toolCallId: 'c2', delta: '{"k":1}' }]);
    });

    it('should continue a named chunk\'s open call while its arguments are not complete JSON', () => {
      const { calls, sent } = after(chunk({ toolCallId: 'search', toolCallName: 'search', delta: '{"q":' }));
      calls.chunk(chunk({ toolCallId: 'search', toolCallName: 'search', delta: '1}' }));

      expect(sent()).toStrictEqual([{ type: EventType.TOOL_CALL_ARGS, toolCallId: 'search', delta: '1}' }]);
    });

    it('should open a parallel call under a minted id when a named chunk reuses the id of a call whose arguments are complete JSON', () => {
      const { calls, sent } = after(chunk({ toolCallId: 'search', toolCallName: 'search', parentMessageId: 'm1', delta: '{"q":1}' }));
      calls.chunk(chunk({ toolCallId: 'search', toolCallName: 'search', delta: '{"q":2}' }));
      calls.chunk(chunk({ toolCallId: 'search', delta: ' ' }));

      expect(sent()).toStrictEqual([
        { type: EventType.TOOL_CALL_START, toolCallId: 'id-1', toolCallName: 'search', parentMessageId: 'm1' },
        { type: EventType.TOOL_CALL_ARGS, toolCallId: 'id-1', delta: '{"q":2}' },
        { type: EventType.TOOL_CALL_ARGS, toolCallId: 'id-1', delta: ' ' },
      ]);
    });

    it('should error on an event of a call tagged with another subagent than its opener\'s', () => {
      const { calls } = after(chunk({ toolCallId: 'c1', toolCallName: 'search', subagentRunId: 's1' }));
      const message = (type: string) =>
        `${type} for tool call 'c1' comes from subagent 's2', but the call was started by subagent 's1'. Set the same subagentRunId on every event of a call.`;

      expect(() => calls.chunk(chunk({ toolCallId: 'c1', delta: '{}', subagentRunId: 's2' }))).toThrow(invalidEvent(message('TOOL_CALL_CHUNK')));
      expect(() => calls.args(args('c1', '{}', { subagentRunId: 's2' }))).toThrow(invalidEvent(message('TOOL_CALL_ARGS')));
      expect(() => calls.end({ ...end('c1'), subagentRunId: 's2' })).toThrow(invalidEvent(message('TOOL_CALL_END')));
    });

    it('should continue a subagent\'s call from an untagged chunk, ARGS or END, sent with its opener\'s tag (AG-UI spec 1.1, Subagents)', () => {
      const { calls, sent } = after(chunk({ toolCallId: 'c1', toolCallName: 'search', subagentRunId: 's1' }));
      calls.chunk(chunk({ toolCallId: 'c1', delta: '{"q"' }));
      calls.args(args('c1', ':1}'));
      calls.end(end('c1'));

      expect(sent()).toStrictEqual([
        { type: EventType.TOOL_CALL_ARGS, toolCallId: 'c1', delta: '{"q"', subagentRunId: 's1' },
        { type: EventType.TOOL_CALL_ARGS, toolCallId: 'c1', delta: ':1}', subagentRunId: 's1' },
        { type: EventType.TOOL_CALL_END, toolCallId: 'c1', subagentRunId: 's1' },
      ]);
    });

    it('should error on ARGS for a call never started', () => {
      expect(() => tracking().calls.args(args('c9', '{}'))).toThrow(
        invalidEvent("TOOL_CALL_ARGS for tool call 'c9', which was never started. Send TOOL_CALL_START (or a TOOL_CALL_CHUNK with a toolCallName) first."),
      );
    });
  });

  describe('late arguments', () => {
    it('should drop ARGS and chunks after the call ended, with a diagnostic each, and ignore empty ones', () => {
      const { calls, sent, diagnostics } = after(chunk({ toolCallId: 'c1', toolCallName: 'search', delta: '{}' }), end('c1'));
      calls.args(args('c1', '"late"'));
      calls.chunk(chunk({ toolCallId: 'c1', delta: '"late"' }));
      calls.chunk(chunk({ delta: '"late"' }));
      calls.args(args('c1', ''));

      expect(sent()).toEqual([]);
      expect(diagnostics).toEqual([
        "Dropped TOOL_CALL_ARGS for tool call 'c1': the call already ended (its arguments were closed). Send all arguments before TOOL_CALL_END or the call's result.",
        "Dropped TOOL_CALL_CHUNK for tool call 'c1': the call already ended (its arguments were closed). Send all arguments before TOOL_CALL_END or the call's result.",
        "Dropped TOOL_CALL_CHUNK for tool call 'c1': the call already ended (its arguments were closed). Send all arguments before TOOL_CALL_END or the call's result.",
      ]);
    });

    it('should drop an END with no such call open, with a diagnostic', () => {
      const { calls, sent, diagnostics } = tracking();
      calls.end(end('c1'));

      expect(sent()).toEqual([]);
      expect(diagnostics).toEqual(["Dropped TOOL_CALL_END for tool call 'c1': no such call is open. End a call once, after its START."]);
    });
  });

  describe('parentMessageId', () => {
    it('should default to the lane\'s last assistant TEXT_MESSAGE_START, not a user message', () => {
      const { calls, sent } = after(textStart('m1'), textStart('u1', { role: 'user' }));
      calls.chunk(chunk({ toolCallId: 'c1', toolCallName: 'search' }));

      expect(sent()).toStrictEqual([{ type: EventType.TOOL_CALL_START, toolCallId: 'c1', toolCallName: 'search', parentMessageId: 'm1' }]);
    });

    it('should default to the first parent given in the turn, keeping each chunk\'s own', () => {
      const { calls, sent } = after(chunk({ toolCallId: 'c1', toolCallName: 'search', parentMessageId: 'p1' }));
      calls.chunk(chunk({ toolCallId: 'c2', toolCallName: 'search' }));
      calls.chunk(chunk({ toolCallId: 'c3', toolCallName: 'search', parentMessageId: 'p3' }));
      calls.start(start('c4', 'search'));

      expect(sent().filter((e) => e.type === EventType.TOOL_CALL_START)).toStrictEqual([
        { type: EventType.TOOL_CALL_START, toolCallId: 'c2', toolCallName: 'search', parentMessageId: 'p1' },
        { type: EventType.TOOL_CALL_START, toolCallId: 'c3', toolCallName: 'search', parentMessageId: 'p3' },
        start('c4', 'search'),
      ]);
    });

    it('should be minted once per turn and lane, and minted again after the turn ends', () => {
      const { calls, out } = tracking();
      calls.chunk(chunk({ toolCallId: 'c1', toolCallName: 'a' }));
      calls.chunk(chunk({ toolCallId: 'c2', toolCallName: 'a' }));
      calls.chunk(chunk({ toolCallId: 'c3', toolCallName: 'a', subagentRunId: 's1' }));
      calls.result(result('c1', 'x', { messageId: 't1' }));
      calls.chunk(chunk({ toolCallId: 'c4', toolCallName: 'a' }));
      calls.pass(EventType.STEP_FINISHED, { type: EventType.STEP_FINISHED, stepName: 'plan' });
      calls.chunk(chunk({ toolCallId: 'c5', toolCallName: 'a' }));

      const parents = out.filter((e) => e.type === EventType.TOOL_CALL_START).map((e) => (e as { parentMessageId?: string }).parentMessageId);
      expect(parents).toEqual(['id-1', 'id-1', 'id-2', 'id-3', 'id-4']);
    });

    it('should end a subagent\'s turn at its own result, and leave the parent agent\'s turn going', () => {
      const { calls, out } = tracking();
      calls.chunk(chunk({ toolCallId: 'c1', toolCallName: 'a' }));
      calls.chunk(chunk({ toolCallId: 'c2', toolCallName: 'a', subagentRunId: 's1' }));
      calls.result(result('c2', 'x', { messageId: 't1', subagentRunId: 's1' }));
      calls.chunk(chunk({ toolCallId: 'c3', toolCallName: 'a', subagentRunId: 's1' }));
      calls.chunk(chunk({ toolCallId: 'c4', toolCallName: 'a' }));
      calls.pass(EventType.SUBAGENT_FINISHED, { type: EventType.SUBAGENT_FINISHED, subagentRunId: 's1' });
      calls.chunk(chunk({ toolCallId: 'c5', toolCallName: 'a', subagentRunId: 's1' }));

      const parents = out.filter((e) => e.type === EventType.TOOL_CALL_START).map((e) => (e as { parentMessageId?: string }).parentMessageId);
      // id-1: the parent agent's turn; id-2, id-3, id-4: the subagent's three turns.
      expect(parents).toEqual(['id-1', 'id-2', 'id-3', 'id-1', 'id-4']);
    });

    it('should error on a parent that is a message of another lane', () => {
      const { calls } = after(textStart('m1'));

      expect(() => calls.chunk(chunk({ toolCallId: 'c1', toolCallName: 'search', parentMessageId: 'm1', subagentRunId: 's1' }))).toThrow(
        invalidEvent(
          "A tool call of subagent 's1' names parentMessageId 'm1', a message of the parent agent. A tool call belongs to a message of its own lane: fix its subagentRunId or its parentMessageId.",
        ),
      );
    });
  });

  describe('closing', () => {
    const open = () => after(chunk({ toolCallId: 'c1', toolCallName: 'search', delta: '{}' }), chunk({ toolCallId: 'c2', toolCallName: 'lookup' }));
    const closed = [
      { type: EventType.TOOL_CALL_END, toolCallId: 'c1' },
      { type: EventType.TOOL_CALL_ARGS, toolCallId: 'c2', delta: '{}' },
      { type: EventType.TOOL_CALL_END, toolCallId: 'c2' },
    ];

    it('should close a call at its result only, END before RESULT, with a minted messageId and serialised content', () => {
      const { calls, sent } = open();
      calls.result(result('c2', { hits: 3 }));

      expect(sent()).toStrictEqual([
        { type: EventType.TOOL_CALL_ARGS, toolCallId: 'c2', delta: '{}' },
        { type: EventType.TOOL_CALL_END, toolCallId: 'c2' },
        { type: EventType.TOOL_CALL_RESULT, toolCallId: 'c2', content: '{"hits":3}', messageId: 'id-2' },
      ]);
    });

    it('should keep a result\'s messageId and string content', () => {
      const { calls, sent } = tracking();
      calls.result(result('c1', 'plain', { messageId: 't1' }));

      expect(sent()).toStrictEqual([{ type: EventType.TOOL_CALL_RESULT, toolCallId: 'c1', content: 'plain', messageId: 't1' }]);
    });

    it('should send an explicit END for the call, ARGS "{}" first when it got none', () => {
      const { calls, sent } = open();
      calls.end(end('c2', { timestamp: 9 }));

      expect(sent()).toStrictEqual([
        { type: EventType.TOOL_CALL_ARGS, toolCallId: 'c2', delta: '{}' },
        { type: EventType.TOOL_CALL_END, toolCallId: 'c2', timestamp: 9 },
      ]);
    });

    it.each([
      ['RUN_ERROR', { type: EventType.RUN_ERROR, message: 'boom' }],
      ['RUN_STARTED', { type: EventType.RUN_STARTED }],
      ['MESSAGES_SNAPSHOT', { type: EventType.MESSAGES_SNAPSHOT, messages: [] }],
    ])('should close the lane\'s calls before %s, then send it', (_name, event) => {
      const { calls, sent } = open();
      calls.pass(event.type as string, event);

      expect(sent()).toStrictEqual([...closed, event]);
    });

    it.each([
      ['TEXT_MESSAGE_CONTENT with an empty delta', { type: EventType.TEXT_MESSAGE_CONTENT, messageId: 'm2', delta: '' }],
      ['TEXT_MESSAGE_CHUNK without delta', { type: EventType.TEXT_MESSAGE_CHUNK, messageId: 'm2' }],
      ['TEXT_MESSAGE_END', { type: EventType.TEXT_MESSAGE_END, messageId: 'm2' }],
      ['REASONING_END', { type: EventType.REASONING_END, messageId: 'r1' }],
      ['STATE_SNAPSHOT', { type: EventType.STATE_SNAPSHOT, snapshot: {} }],
      ['text of another lane', { type: EventType.TEXT_MESSAGE_CONTENT, messageId: 'm2', delta: 'Hi', subagentRunId: 's1' }],
    ])('should leave the calls open at %s', (_name, event) => {
      const { calls, sent } = open();
      calls.pass(event.type as string, event);

      expect(sent()).toStrictEqual([event]);
    });

    // A step boundary, text and reasoning close only the calls whose arguments are complete: AG-UI
    // closes calls before RUN_FINISHED, not before a step or message ends, and an END is final.
    it.each([
      ['STEP_STARTED', { type: EventType.STEP_STARTED, stepName: 'next' }],
      ['STEP_FINISHED', { type: EventType.STEP_FINISHED, stepName: 'plan' }],
      ['TEXT_MESSAGE_START', textStart('m2')],
      ['TEXT_MESSAGE_CONTENT with a delta', { type: EventType.TEXT_MESSAGE_CONTENT, messageId: 'm2', delta: 'Hi' }],
      ['TEXT_MESSAGE_CHUNK with a delta', { type: EventType.TEXT_MESSAGE_CHUNK, delta: 'Hi' }],
      ['REASONING_START', { type: EventType.REASONING_START, messageId: 'r1' }],
      ['REASONING_MESSAGE_START', { type: EventType.REASONING_MESSAGE_START, messageId: 'r1', role: 'reasoning' }],
      ['REASONING_MESSAGE_CONTENT with a delta', { type: EventType.REASONING_MESSAGE_CONTENT, messageId: 'r1', delta: 'Hmm' }],
      ['REASONING_MESSAGE_CHUNK with a delta', { type: EventType.REASONING_MESSAGE_CHUNK, delta: 'Hmm' }],
    ])('should close at %s only the lane\'s calls whose arguments are complete JSON, then send it', (_name, event) => {
      const { calls, sent } = after(
        chunk({ toolCallId: 'c1', toolCallName: 'search', delta: '{"q":1}' }),
        chunk({ toolCallId: 'c2', toolCallName: 'lookup' }),
        chunk({ toolCallId: 'c3', toolCallName: 'calc', delta: '{"expression": "4' }),
        chunk({ toolCallId: 'c4', toolCallName: 'pick', delta: ' [1, 2] ' }),
        chunk({ toolCallId: 'c5', toolCallName: 'count', delta: '4' }),
      );
      calls.pass(event.type as string, event);

      expect(sent()).toStrictEqual([{ type: EventType.TOOL_CALL_END, toolCallId: 'c1' }, { type: EventType.TOOL_CALL_END, toolCallId: 'c4' }, event]);
    });

    it('should keep a call\'s arguments whole across step events between its fragments, and close it at its END, whose repeat is dropped in silence', () => {
      const { calls, sent, diagnostics } = after(start('c1', 'calc'), args('c1', '{"expression": "4'));
      const stepEnd = { type: EventType.STEP_FINISHED, stepName: 'agent' };
      const stepStart = { type: EventType.STEP_STARTED, stepName: 'agent' };
      for (const event of [stepEnd, stepStart, args('c1', '2 * 7"}'), stepEnd, end('c1')]) feed(calls, event);

      // The step event closed the call once its arguments were whole: the producer's END after it was already sent.
      expect(sent()).toStrictEqual([stepEnd, stepStart, args('c1', '2 * 7"}'), end('c1'), stepEnd]);
      expect(diagnostics).toStrictEqual([]);
      // A second END of the same call is a mistake again.
      feed(calls, end('c1'));
      expect(diagnostics).toStrictEqual(["Dropped TOOL_CALL_END for tool call 'c1': no such call is open. End a call once, after its START."]);
    });

    it('should keep a call with no arguments yet open across a step event', () => {
      const { calls, sent } = after(chunk({ toolCallId: 'c1', toolCallName: 'now' }));
      const stepStart = { type: EventType.STEP_STARTED, stepName: 'agent' };
      feed(calls, stepStart);
      feed(calls, chunk({ toolCallId: 'c1', delta: '{"tz":"UTC"}' }));
      feed(calls, result('c1', 'noon', { messageId: 't1' }));

      expect(sent()).toStrictEqual([
        stepStart,
        args('c1', '{"tz":"UTC"}'),
        end('c1'),
        { type: EventType.TOOL_CALL_RESULT, toolCallId: 'c1', content: 'noon', messageId: 't1' },
      ]);
    });

    it('should close a subagent\'s calls at its SUBAGENT_FINISHED, and only its own', () => {
      const { calls, sent } = after(chunk({ toolCallId: 'c1', toolCallName: 'search', delta: '{}' }), chunk({ toolCallId: 'c2', toolCallName: 'search', delta: '{}', subagentRunId: 's1' }));
      const finished = { type: EventType.SUBAGENT_FINISHED, subagentRunId: 's1' };
      calls.pass(finished.type, finished);

      expect(sent()).toStrictEqual([{ type: EventType.TOOL_CALL_END, toolCallId: 'c2', subagentRunId: 's1' }, finished]);
    });

    it('should close every call on closeAll, each in its lane', () => {
      const { calls, sent } = after(chunk({ toolCallId: 'c1', toolCallName: 'search', delta: '{}' }), chunk({ toolCallId: 'c2', toolCallName: 'search', subagentRunId: 's1' }));
      calls.closeAll();
      calls.closeAll();

      expect(sent()).toStrictEqual([
        { type: EventType.TOOL_CALL_END, toolCallId: 'c1' },
        { type: EventType.TOOL_CALL_ARGS, toolCallId: 'c2', delta: '{}', subagentRunId: 's1' },
        { type: EventType.TOOL_CALL_END, toolCallId: 'c2', subagentRunId: 's1' },
      ]);
    });
  });

  describe('RUN_FINISHED', () => {
    it('should close the open calls, then list the run\'s calls without a result in outcome.pendingToolCallIds', () => {
      const { calls, sent } = after(chunk({ toolCallId: 'c1', toolCallName: 'search', delta: '{}' }), chunk({ toolCallId: 'c2', toolCallName: 'lookup', delta: '{}' }), result('c1', 'x', { messageId: 't1' }));
      calls.pass(EventType.RUN_FINISHED, { type: EventType.RUN_FINISHED, threadId: 't', runId: 'r' });

      expect(sent()).toStrictEqual([
        { type: EventType.TOOL_CALL_END, toolCallId: 'c2' },
        { type: EventType.RUN_FINISHED, threadId: 't', runId: 'r', outcome: { type: 'success', pendingToolCallIds: ['c2'] } },
      ]);
    });

    it('should report in each run only that run\'s pending calls', () => {
      const { calls, sent } = after(chunk({ toolCallId: 'c1', toolCallName: 'search', delta: '{}' }), { type: EventType.RUN_FINISHED });
      calls.pass(EventType.RUN_STARTED, { type: EventType.RUN_STARTED });
      calls.pass(EventType.RUN_FINISHED, { type: EventType.RUN_FINISHED });

      expect(sent()).toStrictEqual([{ type: EventType.RUN_STARTED }, { type: EventType.RUN_FINISHED, outcome: { type: 'success' } }]);
    });

    it('should forget pending calls at RUN_ERROR and RUN_STARTED, but not at a MESSAGES_SNAPSHOT', () => {
      const { calls, sent } = after(chunk({ toolCallId: 'c1', toolCallName: 'search', delta: '{}' }), { type: EventType.MESSAGES_SNAPSHOT, messages: [] });
      calls.pass(EventType.RUN_FINISHED, { type: EventType.RUN_FINISHED });
      const failed = after(chunk({ toolCallId: 'c1', toolCallName: 'search', delta: '{}' }), { type: EventType.RUN_ERROR, message: 'boom' });
      failed.calls.pass(EventType.RUN_FINISHED, { type: EventType.RUN_FINISHED });

      expect(sent()).toStrictEqual([{ type: EventType.RUN_FINISHED, outcome: { type: 'success', pendingToolCallIds: ['c1'] } }]);
      expect(failed.sent()).toStrictEqual([{ type: EventType.RUN_FINISHED, outcome: { type: 'success' } }]);
    });

    it('should forget the lane\'s latest call at RUN_STARTED: a chunk without id or name then opens nothing', () => {
      const { calls } = after(chunk({ toolCallId: 'c1', toolCallName: 'search', delta: '{}' }), { type: EventType.RUN_STARTED });

      expect(() => calls.chunk(chunk({ delta: '1' }))).toThrow(
        invalidEvent('TOOL_CALL_CHUNK has no toolCallId and no tool call is open in the parent agent. The first chunk of a call needs a toolCallName (and ideally a toolCallId).'),
      );
    });
  });

  describe('what a run holds', () => {
    it('should make the table of call ids at the first call only: most runs never open one', () => {
      const { calls, out } = tracking();
      const ids = () => (calls as unknown as { ids: unknown }).ids;
      // Text, a result of no call the run started, an END and ARGS of none: no call opened.
      for (const event of [textStart('m1'), { type: EventType.TEXT_MESSAGE_CONTENT, messageId: 'm1', delta: 'Hi' }, end('x'), result('h1', 'ok')]) feed(calls, event);
      expect(() => feed(calls, args('x', '{}'))).toThrow();
      expect(ids()).toBeUndefined();
      expect(out.map((e) => e.type)).toEqual([EventType.TEXT_MESSAGE_START, EventType.TEXT_MESSAGE_CONTENT, EventType.TOOL_CALL_RESULT]);
      feed(calls, chunk({ toolCallId: 'c1', toolCallName: 'search', delta: '{}' }));
      expect(ids()).toBeDefined();
      // The producer's ids as they were before the table existed: the call is under its own.
      expect(out.slice(3).map((e) => (e as { toolCallId?: string }).toolCallId)).toEqual(['c1', 'c1']);
    });
  });
});
