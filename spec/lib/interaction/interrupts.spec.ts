import { AbstractAgent, type AgentSubscriber } from '@ag-ui/client';
import { EventType, type BaseEvent, type Interrupt, type RunAgentInput } from '@ag-ui/core';
import { from, type Observable } from 'rxjs';
import type { AgentEvent } from '../../../lib/protocol/agentEvent.js';
import { AguiRxError } from '../../../lib/protocol/errors.js';
import { approvalInterrupt, interrupt, matchResume } from '../../../lib/interaction/interrupts.js';
import { toAgui } from '../../../operators/toAgui.js';
import { sequentialIds, terminals } from '../../support/helpers.js';
import { runWithOracle } from '../../support/oracle.js';

const ev = (type: string, fields: Record<string, unknown> = {}) => ({ type, ...fields }) as AgentEvent;
const invalid = (code: string, message: string) => new AguiRxError(code, message);

/** What the official client's onRunFinishedEvent was given. */
async function onRunFinished(events$: (input: RunAgentInput) => Observable<BaseEvent>): Promise<Record<string, unknown>> {
  class StreamAgent extends AbstractAgent {
    run(input: RunAgentInput): Observable<BaseEvent> {
      return events$(input);
    }
  }
  let params: Record<string, unknown> | undefined;
  const subscriber: AgentSubscriber = {
    onRunFinishedEvent: ({ event, outcome, ...rest }) => {
      params = { event, outcome, interrupts: (rest as { interrupts?: unknown }).interrupts, pendingToolCallIds: (rest as { pendingToolCallIds?: unknown }).pendingToolCallIds };
    },
  };
  const agent = new StreamAgent({ threadId: 'thread-1' });
  await agent.runAgent({ runId: 'run-1' }, subscriber);
  if (params === undefined) throw new Error('onRunFinishedEvent was not called');
  return { ...params, pendingInterrupts: agent.pendingInterrupts };
}

describe('interrupts', () => {
  const approval: Interrupt = { id: 'approve-c1', reason: 'tool_approval', toolCallId: 'c1', message: 'Delete 3 files?' };

  describe('interrupt', () => {
    it('should give the upstream RUN_FINISHED with an interrupt outcome, for one interrupt or a list', () => {
      const other: Interrupt = { id: 'i2', reason: 'input_required', responseSchema: { type: 'string' } };
      expect(interrupt(approval)).toEqual({ type: EventType.RUN_FINISHED, outcome: { type: 'interrupt', interrupts: [approval] } });
      expect(interrupt([approval, other])).toEqual({ type: EventType.RUN_FINISHED, outcome: { type: 'interrupt', interrupts: [approval, other] } });
    });

    it('should refuse an empty list, a missing id and a repeated id', () => {
      expect(() => interrupt([])).toThrow(
        invalid('INVALID_INTERRUPT', 'interrupt() needs at least one Interrupt: a run that stops to ask must say what it waits for. Finish normally when there is nothing to ask.'),
      );
      expect(() => interrupt({ reason: 'x' } as Interrupt)).toThrow(
        invalid('INVALID_INTERRUPT', "Each interrupt needs a non-empty string 'id' (got undefined); the next run's resume entries answer it by that id."),
      );
      expect(() => interrupt([approval, { ...approval }])).toThrow(
        invalid('INVALID_INTERRUPT', "Interrupt id 'approve-c1' is used twice in one run. Give each interrupt its own id, so that each resume entry answers exactly one."),
      );
      expect(() => interrupt([])).toThrow(expect.objectContaining({ code: 'INVALID_INTERRUPT' }));
    });
  });

  describe('approvalInterrupt', () => {
    it('should default the id and reason, and leave out what is not given', () => {
      expect(approvalInterrupt({ toolCallId: 'c1' })).toEqual({ id: 'approve-c1', reason: 'tool_approval', toolCallId: 'c1' });
      expect(Object.keys(approvalInterrupt({ toolCallId: 'c1', message: undefined }))).toEqual(['id', 'reason', 'toolCallId']);
      expect(approvalInterrupt({ toolCallId: 'c1', id: 'ask-1', message: 'OK?', expiresAt: '2030-01-01T00:00:00Z', metadata: { risk: 'high' } })).toEqual({
        id: 'ask-1',
        reason: 'tool_approval',
        toolCallId: 'c1',
        message: 'OK?',
        expiresAt: '2030-01-01T00:00:00Z',
        metadata: { risk: 'high' },
      });
    });
  });

  describe('through toAgui', () => {
    const agent = () =>
      from([
        ev(EventType.TEXT_MESSAGE_CHUNK, { messageId: 'm1', delta: 'I want to delete 3 files.' }),
        ev(EventType.TOOL_CALL_CHUNK, { toolCallId: 'c1', toolCallName: 'delete_files', delta: '{"n":3}' }),
        interrupt(approvalInterrupt({ toolCallId: 'c1', message: 'Delete 3 files?' })),
        ev(EventType.TEXT_MESSAGE_CHUNK, { delta: 'never sent' }),
      ]);
    const stream = (input: RunAgentInput) => agent().pipe(toAgui({ threadId: input.threadId, runId: input.runId, input, generateId: sequentialIds() }));

    it("should end the run with the interrupt outcome in the official client's onRunFinishedEvent", async () => {
      const params = await onRunFinished(stream);

      expect(params.outcome).toBe('interrupt');
      expect(params.interrupts).toEqual([approval]);
      expect(params.pendingInterrupts).toEqual([approval]);
    });

    it('should close everything open before the interrupt, and send nothing after it', async () => {
      const run = await runWithOracle(stream);

      expect(run.events.map((event) => event.type)).toEqual([
        EventType.RUN_STARTED,
        EventType.TEXT_MESSAGE_START,
        EventType.TEXT_MESSAGE_CONTENT,
        EventType.TOOL_CALL_START,
        EventType.TOOL_CALL_ARGS,
        EventType.TEXT_MESSAGE_END,
        EventType.TOOL_CALL_END,
        EventType.RUN_FINISHED,
      ]);
      expect(terminals(run.events as never)).toEqual([
        { type: EventType.RUN_FINISHED, threadId: 'thread-1', runId: 'run-1', outcome: { type: 'interrupt', interrupts: [approval] } },
      ]);
      expect(run.messages).toEqual([
        { id: 'm1', role: 'assistant', content: 'I want to delete 3 files.', toolCalls: [{ id: 'c1', type: 'function', function: { name: 'delete_files', arguments: '{"n":3}' } }] },
      ]);
    });
  });

  describe('matchResume', () => {
    const now = new Date('2026-01-01T12:00:00Z');
    const pending: Interrupt[] = [
      approval,
      { id: 'i2', reason: 'input_required', expiresAt: '2026-01-01T13:00:00Z' },
      { id: 'i3', reason: 'input_required', expiresAt: '2026-01-01T11:00:00Z' },
      { id: 'i4', reason: 'input_required', expiresAt: 'whenever' },
    ];
    const input = (resume?: RunAgentInput['resume']) => ({ resume });

    it('should match each entry, in order, and list the pending interrupts left unanswered', () => {
      const entries = [
        { interruptId: 'i2', status: 'resolved' as const, payload: 'Paris' },
        { interruptId: 'approve-c1', status: 'cancelled' as const },
      ];
      expect(matchResume(input(entries), pending, now)).toEqual({
        answers: [
          { entry: entries[0], interrupt: pending[1] },
          { entry: entries[1], interrupt: pending[0] },
        ],
        unanswered: [pending[2], pending[3]],
      });
    });

    it('should leave every interrupt unanswered when the input resumes nothing', () => {
      expect(matchResume(input(), pending, now)).toEqual({ answers: [], unanswered: pending });
      expect(matchResume(input([]), [], now)).toEqual({ answers: [], unanswered: [] });
    });

    it('should take an expiresAt that is no date as never expiring, as the client does', () => {
      expect(matchResume(input([{ interruptId: 'i4', status: 'resolved' }]), pending, now).answers).toHaveLength(1);
    });

    it('should refuse an unknown interrupt id', () => {
      expect(() => matchResume(input([{ interruptId: 'nope', status: 'resolved' }]), pending, now)).toThrow(
        invalid(
          'INVALID_RESUME',
          "Resume entry answers interrupt 'nope', which is not pending (pending: 'approve-c1', 'i2', 'i3', 'i4'). Answer only the interrupts the previous run ended with.",
        ),
      );
      expect(() => matchResume(input([{ interruptId: 'nope', status: 'resolved' }]), [], now)).toThrow(
        invalid('INVALID_RESUME', "Resume entry answers interrupt 'nope', which is not pending (none is pending). Answer only the interrupts the previous run ended with."),
      );
    });

    it('should refuse an expired interrupt, including one expiring exactly now', () => {
      expect(() => matchResume(input([{ interruptId: 'i3', status: 'resolved' }]), pending, now)).toThrow(
        invalid('INVALID_RESUME', "Interrupt 'i3' expired at 2026-01-01T11:00:00Z, so it can no longer be answered. Start a new run without resuming it."),
      );
      expect(() => matchResume(input([{ interruptId: 'i2', status: 'resolved' }]), pending, new Date('2026-01-01T13:00:00Z'))).toThrow(
        expect.objectContaining({ code: 'INVALID_RESUME', name: 'AguiRxError' }),
      );
    });

    it('should refuse two answers to one interrupt', () => {
      const twice = [
        { interruptId: 'i2', status: 'resolved' as const },
        { interruptId: 'i2', status: 'cancelled' as const },
      ];
      expect(() => matchResume(input(twice), pending, now)).toThrow(invalid('INVALID_RESUME', "Interrupt 'i2' is answered by two resume entries. Send one entry per interrupt."));
    });
  });
});
