import { EventType, type Event } from '@ag-ui/core';
import { Observable, Subject, concat, from, of, throwError } from 'rxjs';
import type { AgentEvent } from '../../lib/protocol/agentEvent.js';
import { toAgui } from '../../operators/toAgui.js';
import { diagnosticsSink, sequentialIds, terminals } from '../support/helpers.js';
import { runWithOracle } from '../support/oracle.js';

const run = { threadId: 'thread-1', runId: 'run-1' };

/** Runs agent events through toAgui and the official client; the run must be accepted and end once. */
async function accepted(events$: Observable<AgentEvent>) {
  const sink = diagnosticsSink();
  const result = await runWithOracle(events$.pipe(toAgui({ ...run, generateId: sequentialIds(), onDiagnostic: sink.onDiagnostic })));
  const events = result.events as Event[];
  expect(terminals(events)).toEqual([events[events.length - 1]]);
  return { ...result, events, diagnostics: sink.messages, last: events[events.length - 1] };
}

describe('hostile input through toAgui', () => {
  it('should keep order when a subscriber feeds the source synchronously (a tool executor answering TOOL_CALL_START)', async () => {
    const agent$ = new Subject<AgentEvent>();
    const events$ = agent$.pipe(toAgui({ ...run, generateId: sequentialIds() }));
    // The client subscribes; the executor answers each call as soon as it starts, into the same source.
    const result = runWithOracle(
      new Observable<Event>((subscriber) => {
        const subscription = events$.subscribe({
          next(event) {
            subscriber.next(event);
            if (event.type === EventType.TOOL_CALL_START) agent$.next({ type: EventType.TOOL_CALL_RESULT, toolCallId: event.toolCallId, content: '42' });
          },
          complete: () => subscriber.complete(),
          error: (error) => subscriber.error(error),
        });
        agent$.next({ type: EventType.TEXT_MESSAGE_CHUNK, delta: 'Let me check. ' });
        agent$.next({ type: EventType.TOOL_CALL_CHUNK, toolCallId: 'c1', toolCallName: 'lookup', delta: '{"q":1}' });
        agent$.next({ type: EventType.TEXT_MESSAGE_CHUNK, delta: 'It is 42.' });
        agent$.complete();
        return subscription;
      }),
    );
    const { messages } = await result;
    expect(messages).toEqual([
      { id: 'id-1', role: 'assistant', content: 'Let me check. ', toolCalls: [{ id: 'c1', type: 'function', function: { name: 'lookup', arguments: '{"q":1}' } }] },
      { id: 'id-2', role: 'tool', toolCallId: 'c1', content: '42' },
      { id: 'id-3', role: 'assistant', content: 'It is 42.' },
    ]);
  });

  it('should turn a thrown value whose message getter throws into RUN_ERROR', async () => {
    const hostile = {
      get message(): string {
        throw new Error('getter boom');
      },
    };
    const { last } = await accepted(concat(of<AgentEvent[]>({ type: EventType.TEXT_MESSAGE_CHUNK, delta: 'hi' }), throwError(() => hostile)));
    expect(last).toEqual({ type: EventType.RUN_ERROR, message: 'Agent failed with an object' });
  });

  it('should end the run with RUN_ERROR, the open message closed, when a field of a token continuing it throws as it is read', async () => {
    const hostile = {
      type: EventType.TEXT_MESSAGE_CHUNK,
      messageId: 'm1',
      delta: 'lo',
      get name(): string {
        throw new Error('name getter boom');
      },
    };
    // Emitted later, by a source that calls the subscriber itself: nothing catches a throw on its way back.
    let escaped: unknown;
    const source$ = new Observable<AgentEvent>((subscriber) => {
      subscriber.next({ type: EventType.TEXT_MESSAGE_CHUNK, messageId: 'm1', delta: 'Hel' });
      const timer = setTimeout(() => {
        try {
          subscriber.next(hostile as AgentEvent);
          subscriber.next({ type: EventType.TEXT_MESSAGE_CHUNK, messageId: 'm1', delta: '!' });
          subscriber.complete();
        } catch (error) {
          escaped = error;
        }
      });
      return () => clearTimeout(timer);
    });
    const { events, last, messages } = await accepted(source$);
    expect(escaped).toBeUndefined();
    expect(events.map((event) => event.type)).toEqual([EventType.RUN_STARTED, EventType.TEXT_MESSAGE_START, EventType.TEXT_MESSAGE_CONTENT, EventType.TEXT_MESSAGE_END, EventType.RUN_ERROR]);
    expect(last).toMatchObject({ type: EventType.RUN_ERROR, message: 'name getter boom' });
    expect(messages).toEqual([{ id: 'm1', role: 'assistant', content: 'Hel' }]);
  });

  it('should turn a revoked Proxy thrown by the agent into RUN_ERROR', async () => {
    const { proxy, revoke } = Proxy.revocable({}, {});
    revoke();
    const { last } = await accepted(throwError(() => proxy));
    expect(last).toEqual({ type: EventType.RUN_ERROR, message: 'Agent failed with an unreadable object' });
  });

  it('should send the patch it applied, so the client never refuses an upstream STATE_DELTA holding undefined', async () => {
    const big = 'x'.repeat(200);
    const { state } = await accepted(
      from<AgentEvent[]>([
        { type: EventType.STATE_SNAPSHOT, snapshot: { big } },
        { type: EventType.STATE_DELTA, delta: [{ op: 'add', path: '/a', value: { x: undefined, y: 1 } }] },
        { type: EventType.STATE_SNAPSHOT, snapshot: { big, a: { y: 1 }, b: 1 } },
      ]),
    );
    expect(state).toEqual({ big, a: { y: 1 }, b: 1 });
  });

  it('should leave out a token usage sum past the safe integer range, and say so', async () => {
    const { last, diagnostics } = await accepted(
      from<AgentEvent[]>([
        { type: 'TOKEN_USAGE', usage: { inputTokens: Number.MAX_SAFE_INTEGER } },
        { type: 'TOKEN_USAGE', usage: { inputTokens: 1 } },
      ]),
    );
    expect(last).toEqual({ type: EventType.RUN_FINISHED, ...run, outcome: { type: 'success' } });
    expect(diagnostics).toEqual([
      "Left out the run's token usage: its sum is past 9007199254740991 tokens, more than AG-UI can carry. Check the counts your agent reports.",
    ]);
  });

  // Was an actionable RUN_ERROR; null in an optional field is now read as absent.
  it('should read an upstream RUN_FINISHED with outcome: null as one without', async () => {
    const { last, diagnostics } = await accepted(of({ type: EventType.RUN_FINISHED, outcome: null } as unknown as AgentEvent));
    expect(last).toEqual({ type: EventType.RUN_FINISHED, ...run, outcome: { type: 'success' } });
    expect(diagnostics).toEqual(["RUN_FINISHED has 'outcome: null': read as absent, here and in the rest of the run. Omit an optional field rather than sending null (Python: exclude_none=True)."]);
  });

  it('should give an upstream RUN_ERROR with no message at all one saying none was given, keeping its code', async () => {
    const { last } = await accepted(of({ type: EventType.RUN_ERROR, code: 'AGENT_ERROR' } as unknown as AgentEvent));
    expect(last).toEqual({ type: EventType.RUN_ERROR, code: 'AGENT_ERROR', message: 'The agent reported an error without a message.' });
  });

  it('should give an upstream RUN_ERROR without a message a readable one', async () => {
    const { last } = await accepted(of<AgentEvent[]>({ type: EventType.RUN_ERROR, message: '' }));
    expect(last).toEqual({ type: EventType.RUN_ERROR, message: 'The agent reported an error without a message.' });
  });

  it.each([
    [
      'pendingToolCallIds: 5',
      { outcome: { type: 'success', pendingToolCallIds: 5 } },
      "RUN_FINISHED has 'outcome.pendingToolCallIds: number 5', but it must be a list of tool call ids (strings).",
    ],
    [
      "pendingToolCallIds: 'abc'",
      { outcome: { type: 'success', pendingToolCallIds: 'abc' } },
      'RUN_FINISHED has \'outcome.pendingToolCallIds: "abc"\', but it must be a list of tool call ids (strings).',
    ],
  ])('should end with an actionable RUN_ERROR for an upstream RUN_FINISHED with %s', async (_name, fields, message) => {
    const { last } = await accepted(of({ type: EventType.RUN_FINISHED, ...fields } as unknown as AgentEvent));
    expect(last).toEqual({ type: EventType.RUN_ERROR, code: 'INVALID_EVENT', message });
  });

  it.each([
    [
      'a STEP_FINISHED for a step never started',
      [{ type: EventType.STEP_FINISHED, stepName: 's' }],
      "Dropped STEP_FINISHED for step 's' of the parent agent, which is not running. Send STEP_STARTED first, and finish each step once.",
    ],
    [
      'a second STEP_STARTED for a running step',
      [
        { type: EventType.STEP_STARTED, stepName: 's' },
        { type: EventType.STEP_STARTED, stepName: 's' },
      ],
      "Dropped STEP_STARTED for step 's' of the parent agent, which is already running. Finish it with STEP_FINISHED before starting it again.",
    ],
    [
      'a STEP_FINISHED from another lane',
      [
        { type: EventType.STEP_STARTED, stepName: 's' },
        { type: EventType.STEP_FINISHED, stepName: 's', subagentRunId: 'A' },
      ],
      "Dropped STEP_FINISHED for step 's' of subagent 'A', but that step is running in the parent agent. Finish a step with the subagentRunId it was started with.",
    ],
    [
      'a SUBAGENT_FINISHED for a subagent never started',
      [
        { type: EventType.REASONING_MESSAGE_CHUNK, messageId: 'r', delta: 'x', subagentRunId: 'A' },
        { type: EventType.SUBAGENT_FINISHED, subagentRunId: 'A' },
      ],
      "Dropped SUBAGENT_FINISHED for subagent 'A', which is not running. Send SUBAGENT_STARTED first, and end each subagent once.",
    ],
  ])('should drop %s and say so', async (_name, input, diagnostic) => {
    const { last, diagnostics } = await accepted(from(input as AgentEvent[]));
    expect(last.type).toBe(EventType.RUN_FINISHED);
    expect(diagnostics).toEqual([diagnostic]);
  });

  it.each([
    [
      'a subagent id used again',
      [
        { type: EventType.SUBAGENT_STARTED, subagentRunId: 'A', name: 'n' },
        { type: EventType.SUBAGENT_FINISHED, subagentRunId: 'A' },
        { type: EventType.SUBAGENT_STARTED, subagentRunId: 'A', name: 'n' },
      ],
      "SUBAGENT_STARTED reuses subagentRunId 'A', which already ended in this run. Give each subagent invocation its own subagentRunId.",
    ],
    [
      'a parent subagent never started',
      [{ type: EventType.SUBAGENT_STARTED, subagentRunId: 'A', name: 'n', parentSubagentRunId: 'Z' }],
      "SUBAGENT_STARTED for subagent 'A' names parentSubagentRunId 'Z', which has not started in this run. Start the parent subagent first.",
    ],
    [
      'a TOOL_CALL_END from another lane',
      [
        { type: EventType.TOOL_CALL_CHUNK, toolCallId: 'c', toolCallName: 'f', delta: '{}' },
        { type: EventType.TOOL_CALL_END, toolCallId: 'c', subagentRunId: 'B' },
      ],
      "TOOL_CALL_END for tool call 'c' comes from subagent 'B', but the call was started by the parent agent. Set the same subagentRunId on every event of a call.",
    ],
    [
      'a TEXT_MESSAGE_END for an open reasoning message',
      [
        { type: EventType.REASONING_MESSAGE_CHUNK, messageId: 'b', delta: 'x' },
        { type: EventType.TEXT_MESSAGE_END, messageId: 'b' },
      ],
      "TEXT_MESSAGE_END for message 'b' comes from the parent agent, but that message is open as a reasoning message of the parent agent. Give each message its own id, and set the same subagentRunId on every event of a message.",
    ],
    [
      'a tool call whose parentMessageId is a message of another lane',
      [
        { type: EventType.TEXT_MESSAGE_CHUNK, messageId: 'm', delta: 'x', subagentRunId: 'A' },
        { type: EventType.TOOL_CALL_CHUNK, toolCallId: 'c', toolCallName: 'f', parentMessageId: 'm', subagentRunId: 'B' },
      ],
      "A tool call of subagent 'B' names parentMessageId 'm', a message of subagent 'A'. A tool call belongs to a message of its own lane: fix its subagentRunId or its parentMessageId.",
    ],
    [
      'a reasoning span id used by two lanes',
      [
        { type: EventType.REASONING_START, messageId: 's' },
        { type: EventType.TEXT_MESSAGE_CHUNK, delta: 'x' },
        { type: EventType.REASONING_START, messageId: 's', subagentRunId: 'L2' },
      ],
      "REASONING_START from subagent 'L2' opens span 's', an id the parent agent already uses. Give each lane's reasoning its own messageId.",
    ],
  ])('should end with an actionable RUN_ERROR for %s', async (_name, input, message) => {
    const { last } = await accepted(from(input as AgentEvent[]));
    expect(last).toEqual({ type: EventType.RUN_ERROR, code: 'INVALID_EVENT', message });
  });
  it("should give a reasoning chunk a fresh id when its id is another lane's span", async () => {
    const { messages, last } = await accepted(
      from<AgentEvent[]>([
        { type: EventType.REASONING_START, messageId: 'c', subagentRunId: 'L1' },
        { type: EventType.REASONING_MESSAGE_CHUNK, messageId: 'c', delta: 'thinking', subagentRunId: 'L2' },
      ]),
    );
    expect(last.type).toBe(EventType.RUN_FINISHED);
    expect(messages).toEqual([{ id: 'id-1', role: 'reasoning', content: 'thinking', subagentRunId: 'L2' }]);
  });
});
