import { EventType, type Event } from '@ag-ui/core';
import { trackOpenEntities, type OpenEntities } from '../../../lib/tracking/openEntities.js';

const finished = { type: 'finished' } as const;
const failed = { type: 'error', message: 'Search backend down' } as const;

/** A tracker that has seen `events`, in order. */
function tracking(...events: Event[]): OpenEntities {
  const open = trackOpenEntities();
  for (const event of events) open.observe(event);
  return open;
}

describe('trackOpenEntities', () => {
  describe('closeAll', () => {
    it('should close nothing when nothing was opened', () => {
      const open = tracking({ type: EventType.CUSTOM, name: 'tick', value: 1 }, { type: EventType.STATE_SNAPSHOT, snapshot: {} });

      expect(open.closeAll(finished)).toEqual([]);
    });

    it('should close each kind of entity with its own closing event', () => {
      expect(tracking({ type: EventType.TEXT_MESSAGE_START, messageId: 'm1', role: 'assistant' }).closeAll(finished)).toStrictEqual([
        { type: EventType.TEXT_MESSAGE_END, messageId: 'm1' },
      ]);
      expect(tracking({ type: EventType.REASONING_START, messageId: 'rs1' }).closeAll(finished)).toStrictEqual([
        { type: EventType.REASONING_END, messageId: 'rs1' },
      ]);
      expect(tracking({ type: EventType.REASONING_MESSAGE_START, messageId: 'rm1', role: 'reasoning' }).closeAll(finished)).toStrictEqual([
        { type: EventType.REASONING_MESSAGE_END, messageId: 'rm1' },
      ]);
      expect(tracking({ type: EventType.TOOL_CALL_START, toolCallId: 'tc1', toolCallName: 'search' }).closeAll(finished)).toStrictEqual([
        { type: EventType.TOOL_CALL_END, toolCallId: 'tc1' },
      ]);
      expect(tracking({ type: EventType.STEP_STARTED, stepName: 'plan' }).closeAll(finished)).toStrictEqual([
        { type: EventType.STEP_FINISHED, stepName: 'plan' },
      ]);
      expect(tracking({ type: EventType.SUBAGENT_STARTED, subagentRunId: 'sub-1', name: 'researcher' }).closeAll(finished)).toStrictEqual([
        { type: EventType.SUBAGENT_FINISHED, subagentRunId: 'sub-1', outcome: { type: 'success' } },
      ]);
    });

    it('should close innermost first: tool calls, text messages, reasoning messages, reasoning spans, steps, subagents', () => {
      // Opened outermost first, the way a run nests them.
      const open = tracking(
        { type: EventType.SUBAGENT_STARTED, subagentRunId: 'sub-1', name: 'researcher' },
        { type: EventType.STEP_STARTED, stepName: 'plan' },
        { type: EventType.REASONING_START, messageId: 'rs1' },
        { type: EventType.REASONING_MESSAGE_START, messageId: 'rm1', role: 'reasoning' },
        { type: EventType.TEXT_MESSAGE_START, messageId: 'm1', role: 'assistant' },
        { type: EventType.TOOL_CALL_START, toolCallId: 'tc1', toolCallName: 'search', parentMessageId: 'm1' },
      );

      expect(open.closeAll(finished)).toStrictEqual([
        { type: EventType.TOOL_CALL_END, toolCallId: 'tc1' },
        { type: EventType.TEXT_MESSAGE_END, messageId: 'm1' },
        { type: EventType.REASONING_MESSAGE_END, messageId: 'rm1' },
        { type: EventType.REASONING_END, messageId: 'rs1' },
        { type: EventType.STEP_FINISHED, stepName: 'plan' },
        { type: EventType.SUBAGENT_FINISHED, subagentRunId: 'sub-1', outcome: { type: 'success' } },
      ]);
    });

    it('should close parallel tool calls and messages in the order they were opened', () => {
      const open = tracking(
        { type: EventType.TEXT_MESSAGE_START, messageId: 'm1', role: 'assistant' },
        { type: EventType.TOOL_CALL_START, toolCallId: 'tc1', toolCallName: 'search' },
        { type: EventType.TOOL_CALL_START, toolCallId: 'tc2', toolCallName: 'fetch' },
        { type: EventType.TEXT_MESSAGE_START, messageId: 'm2', role: 'assistant', subagentRunId: 'sub-1' },
      );

      expect(open.closeAll(finished)).toStrictEqual([
        { type: EventType.TOOL_CALL_END, toolCallId: 'tc1' },
        { type: EventType.TOOL_CALL_END, toolCallId: 'tc2' },
        { type: EventType.TEXT_MESSAGE_END, messageId: 'm1' },
        { type: EventType.TEXT_MESSAGE_END, messageId: 'm2', subagentRunId: 'sub-1' },
      ]);
    });

    it('should close steps last opened first', () => {
      const open = tracking(
        { type: EventType.STEP_STARTED, stepName: 'outer' },
        { type: EventType.STEP_STARTED, stepName: 'middle' },
        { type: EventType.STEP_STARTED, stepName: 'inner' },
      );

      expect(open.closeAll(finished)).toStrictEqual([
        { type: EventType.STEP_FINISHED, stepName: 'inner' },
        { type: EventType.STEP_FINISHED, stepName: 'middle' },
        { type: EventType.STEP_FINISHED, stepName: 'outer' },
      ]);
    });

    it('should close subagents last opened first', () => {
      const open = tracking(
        { type: EventType.SUBAGENT_STARTED, subagentRunId: 'sub-1', name: 'planner' },
        { type: EventType.SUBAGENT_STARTED, subagentRunId: 'sub-2', name: 'researcher', parentSubagentRunId: 'sub-1' },
      );

      expect(open.closeAll(finished)).toStrictEqual([
        { type: EventType.SUBAGENT_FINISHED, subagentRunId: 'sub-2', outcome: { type: 'success' } },
        { type: EventType.SUBAGENT_FINISHED, subagentRunId: 'sub-1', outcome: { type: 'success' } },
      ]);
    });

    it('should close subagents with SUBAGENT_ERROR carrying the message when the run errors', () => {
      const open = tracking(
        { type: EventType.SUBAGENT_STARTED, subagentRunId: 'sub-1', name: 'planner' },
        { type: EventType.STEP_STARTED, stepName: 'plan', subagentRunId: 'sub-1' },
        { type: EventType.SUBAGENT_STARTED, subagentRunId: 'sub-2', name: 'researcher', parentSubagentRunId: 'sub-1' },
      );

      expect(open.closeAll(failed)).toStrictEqual([
        { type: EventType.STEP_FINISHED, stepName: 'plan', subagentRunId: 'sub-1' },
        { type: EventType.SUBAGENT_ERROR, subagentRunId: 'sub-2', message: 'Search backend down' },
        { type: EventType.SUBAGENT_ERROR, subagentRunId: 'sub-1', message: 'Search backend down' },
      ]);
    });

    it('should close the entities of a subagent in its lane', () => {
      const open = tracking(
        { type: EventType.SUBAGENT_STARTED, subagentRunId: 'sub-1', name: 'researcher' },
        { type: EventType.TEXT_MESSAGE_START, messageId: 'm1', role: 'assistant', subagentRunId: 'sub-1' },
        { type: EventType.TOOL_CALL_START, toolCallId: 'tc1', toolCallName: 'search', subagentRunId: 'sub-1' },
        { type: EventType.REASONING_START, messageId: 'rs1', subagentRunId: 'sub-1' },
        { type: EventType.REASONING_MESSAGE_START, messageId: 'rm1', role: 'reasoning', subagentRunId: 'sub-1' },
      );

      expect(open.closeAll(finished)).toStrictEqual([
        { type: EventType.TOOL_CALL_END, toolCallId: 'tc1', subagentRunId: 'sub-1' },
        { type: EventType.TEXT_MESSAGE_END, messageId: 'm1', subagentRunId: 'sub-1' },
        { type: EventType.REASONING_MESSAGE_END, messageId: 'rm1', subagentRunId: 'sub-1' },
        { type: EventType.REASONING_END, messageId: 'rs1', subagentRunId: 'sub-1' },
        { type: EventType.SUBAGENT_FINISHED, subagentRunId: 'sub-1', outcome: { type: 'success' } },
      ]);
    });

    it('should tell apart steps of the same name in different lanes', () => {
      const open = tracking(
        { type: EventType.STEP_STARTED, stepName: 'search' },
        { type: EventType.STEP_STARTED, stepName: 'search', subagentRunId: 'sub-1' },
        { type: EventType.STEP_FINISHED, stepName: 'search' },
      );

      expect(open.closeAll(finished)).toStrictEqual([{ type: EventType.STEP_FINISHED, stepName: 'search', subagentRunId: 'sub-1' }]);
    });

    it('should not close what the stream closed itself', () => {
      const open = tracking(
        { type: EventType.TEXT_MESSAGE_START, messageId: 'm1', role: 'assistant' },
        { type: EventType.TOOL_CALL_START, toolCallId: 'tc1', toolCallName: 'search' },
        { type: EventType.REASONING_START, messageId: 'rs1' },
        { type: EventType.REASONING_MESSAGE_START, messageId: 'rm1', role: 'reasoning' },
        { type: EventType.STEP_STARTED, stepName: 'plan' },
        { type: EventType.SUBAGENT_STARTED, subagentRunId: 'sub-1', name: 'a' },
        { type: EventType.SUBAGENT_STARTED, subagentRunId: 'sub-2', name: 'b' },
        { type: EventType.TOOL_CALL_END, toolCallId: 'tc1' },
        { type: EventType.TEXT_MESSAGE_END, messageId: 'm1' },
        { type: EventType.REASONING_MESSAGE_END, messageId: 'rm1' },
        { type: EventType.REASONING_END, messageId: 'rs1' },
        { type: EventType.STEP_FINISHED, stepName: 'plan' },
        { type: EventType.SUBAGENT_FINISHED, subagentRunId: 'sub-1' },
        { type: EventType.SUBAGENT_ERROR, subagentRunId: 'sub-2', message: 'failed' },
      );

      expect(open.closeAll(finished)).toEqual([]);
    });

    it('should keep a reasoning span and a reasoning message apart, even with one id', () => {
      const open = tracking(
        { type: EventType.REASONING_START, messageId: 'r1' },
        { type: EventType.REASONING_MESSAGE_START, messageId: 'r1', role: 'reasoning' },
        { type: EventType.REASONING_MESSAGE_END, messageId: 'r1' },
      );

      expect(open.closeAll(finished)).toStrictEqual([{ type: EventType.REASONING_END, messageId: 'r1' }]);
    });

    it('should forget what it closed', () => {
      const open = tracking({ type: EventType.TEXT_MESSAGE_START, messageId: 'm1', role: 'assistant' }, { type: EventType.STEP_STARTED, stepName: 'plan' });

      expect(open.closeAll(finished)).toHaveLength(2);
      expect(open.closeAll(finished)).toEqual([]);
    });

    // Up to 16 open entities are kept in one small list, more in a map per kind: the same answers either way.
    it.each([3, 16, 17, 40])('should close %i parallel tool calls and messages in the order they were opened, less the ones closed', (n) => {
      const events: Event[] = [];
      for (let i = 0; i < n; i++) {
        events.push({ type: EventType.TOOL_CALL_START, toolCallId: `tc${i}`, toolCallName: 'search' });
        events.push({ type: EventType.TEXT_MESSAGE_START, messageId: `m${i}`, role: 'assistant', ...(i % 2 === 1 ? { subagentRunId: 'sub-1' } : {}) });
      }
      // Every third of each closed by the stream, some while the list is small, some after.
      for (let i = 0; i < n; i += 3) events.push({ type: EventType.TOOL_CALL_END, toolCallId: `tc${i}` }, { type: EventType.TEXT_MESSAGE_END, messageId: `m${i}` });
      const open = tracking(...events);
      const left = Array.from({ length: n }, (_, i) => i).filter((i) => i % 3 !== 0);

      expect(open.closeAll(finished)).toStrictEqual([
        ...left.map((i) => ({ type: EventType.TOOL_CALL_END, toolCallId: `tc${i}` })),
        ...left.map((i) => ({ type: EventType.TEXT_MESSAGE_END, messageId: `m${i}`, ...(i % 2 === 1 ? { subagentRunId: 'sub-1' } : {}) })),
      ]);
      expect(open.closeAll(finished)).toEqual([]);
      // Opened again after closeAll, an id is open again.
      open.observe({ type: EventType.TEXT_MESSAGE_START, messageId: 'm1', role: 'assistant' });
      expect(open.closeAll(finished)).toStrictEqual([{ type: EventType.TEXT_MESSAGE_END, messageId: 'm1' }]);
    });

    it('should keep one entry for an id started twice, with the lane of its second start, in its first place', () => {
      const open = tracking(
        { type: EventType.TEXT_MESSAGE_START, messageId: 'm1', role: 'assistant' },
        { type: EventType.TEXT_MESSAGE_START, messageId: 'm2', role: 'assistant' },
        { type: EventType.TEXT_MESSAGE_START, messageId: 'm1', role: 'assistant', subagentRunId: 'sub-1' },
      );

      expect(open.closeAll(finished)).toStrictEqual([
        { type: EventType.TEXT_MESSAGE_END, messageId: 'm1', subagentRunId: 'sub-1' },
        { type: EventType.TEXT_MESSAGE_END, messageId: 'm2' },
      ]);
    });

    it('should keep two trackers apart', () => {
      const first = tracking({ type: EventType.TEXT_MESSAGE_START, messageId: 'm1', role: 'assistant' });
      const second = trackOpenEntities();

      expect(second.closeAll(finished)).toEqual([]);
      expect(first.closeAll(finished)).toStrictEqual([{ type: EventType.TEXT_MESSAGE_END, messageId: 'm1' }]);
    });
  });

  describe('pendingToolCallIds', () => {
    it('should list tool calls started without a TOOL_CALL_RESULT, in start order', () => {
      const open = tracking(
        { type: EventType.TOOL_CALL_START, toolCallId: 'tc2', toolCallName: 'confirm' },
        { type: EventType.TOOL_CALL_START, toolCallId: 'tc1', toolCallName: 'search' },
        { type: EventType.TOOL_CALL_START, toolCallId: 'tc3', toolCallName: 'fetch' },
        { type: EventType.TOOL_CALL_RESULT, messageId: 'res1', toolCallId: 'tc1', content: 'found' },
      );

      expect(open.pendingToolCallIds()).toEqual(['tc2', 'tc3']);
    });

    it('should still list a tool call that was ended but never answered', () => {
      const open = tracking(
        { type: EventType.TOOL_CALL_START, toolCallId: 'tc1', toolCallName: 'confirm' },
        { type: EventType.TOOL_CALL_ARGS, toolCallId: 'tc1', delta: '{}' },
        { type: EventType.TOOL_CALL_END, toolCallId: 'tc1' },
      );

      expect(open.pendingToolCallIds()).toEqual(['tc1']);
    });

    it('should still list unanswered tool calls after closeAll', () => {
      const open = tracking({ type: EventType.TOOL_CALL_START, toolCallId: 'tc1', toolCallName: 'confirm' });

      expect(open.closeAll(finished)).toStrictEqual([{ type: EventType.TOOL_CALL_END, toolCallId: 'tc1' }]);
      expect(open.pendingToolCallIds()).toEqual(['tc1']);
    });

    it('should list nothing when every call has a result, and ignore results for calls it never saw', () => {
      const open = tracking(
        { type: EventType.TOOL_CALL_RESULT, messageId: 'res0', toolCallId: 'tc-earlier-run', content: 'ok' },
        { type: EventType.TOOL_CALL_START, toolCallId: 'tc1', toolCallName: 'search' },
        { type: EventType.TOOL_CALL_END, toolCallId: 'tc1' },
        { type: EventType.TOOL_CALL_RESULT, messageId: 'res1', toolCallId: 'tc1', content: 'found' },
      );

      expect(open.pendingToolCallIds()).toEqual([]);
    });

    it('should not list a tool call twice when it is started again', () => {
      const open = tracking(
        { type: EventType.TOOL_CALL_START, toolCallId: 'tc1', toolCallName: 'search' },
        { type: EventType.TOOL_CALL_END, toolCallId: 'tc1' },
        { type: EventType.TOOL_CALL_START, toolCallId: 'tc1', toolCallName: 'search' },
      );

      expect(open.pendingToolCallIds()).toEqual(['tc1']);
    });
  });
});
