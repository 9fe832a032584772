import { EventType, type Event, type Message, type RunAgentInput, type State } from '@ag-ui/core';
import { Observable, from } from 'rxjs';
import { toAgui } from '../../../operators/toAgui.js';
import { compactRuns, foldRuns, type FinishedRun } from '../../../lib/broker/compactThread.js';
import type { RunRecord } from '../../../lib/broker/runStore.js';
import type { AgentEvent } from '../../../lib/protocol/agentEvent.js';
import { runWithOfficialClient } from '../../../lib/testing/runWithOfficialClient.js';
import { collect, sequentialIds } from '../../support/helpers.js';

const threadId = 'thread-1';
// A field that never changes: it makes a STATE_DELTA smaller than a snapshot.
const notes = 'n'.repeat(200);

const record = (input: RunAgentInput): RunRecord => ({ threadId, runId: input.runId, input, owner: 'i1', status: 'finished', startedAt: 0, finishedAt: 1, leaseUntil: 0 });

/**
 * Plays `turns` as the official client would, run after run: each run's input carries the client's
 * messages so far plus the user's turn, and its state; each run's events come out of `toAgui`. Resolves
 * with the finished runs (as a store keeps them) and what the client held after each.
 */
async function playThread(turns: { user: Message; agent: AgentEvent[]; error?: boolean }[], initialState: State = {}) {
  const ids = sequentialIds('m-');
  const runs: FinishedRun[] = [];
  let messages: Message[] = [];
  let state: State = initialState;
  for (const [index, turn] of turns.entries()) {
    const runId = `run-${index + 1}`;
    const input: RunAgentInput = { threadId, runId, state, messages: [...messages, turn.user], tools: [], context: [], forwardedProps: {} };
    const source$ = turn.error
      ? new Observable<AgentEvent>((subscriber) => {
          turn.agent.forEach((event) => subscriber.next(event));
          subscriber.error(Object.assign(new Error('Model overloaded.'), { code: 'OVERLOADED' }));
        })
      : from(turn.agent);
    const events = await collect(source$.pipe(toAgui({ threadId, runId, input, generateId: ids, onDiagnostic: () => undefined })));
    runs.push({ record: record(input), events });
    const client = await runWithOfficialClient(events, { threadId, runId, initialMessages: input.messages, initialState: state }).catch(() => undefined);
    if (client !== undefined) ({ messages, state } = client);
    else {
      // A failed run: the client keeps what the stream built before RUN_ERROR; rebuild it from the events without the terminal.
      const partial = await runWithOfficialClient([...events.slice(0, -1), { type: EventType.RUN_FINISHED, threadId, runId }], { threadId, runId, initialMessages: input.messages, initialState: state });
      ({ messages, state } = partial);
    }
  }
  return { runs, messages, state };
}

const TURNS = [
  {
    user: { id: 'u1', role: 'user', content: 'Weather in Oslo?' },
    agent: [
      { type: 'TEXT_MESSAGE_CHUNK', delta: 'Checking.' },
      { type: 'TOOL_CALL_CHUNK', toolCallId: 'call-1', toolCallName: 'weather', delta: '{"city":"Oslo"}' },
      { type: 'TOOL_CALL_RESULT', toolCallId: 'call-1', content: { celsius: -3 } },
      { type: 'STATE_SNAPSHOT', snapshot: { count: 1, cities: ['Oslo'], notes } },
      { type: 'TEXT_MESSAGE_CHUNK', delta: 'It is -3°C.' },
    ],
  },
  {
    user: { id: 'u2', role: 'user', content: 'And Bergen?' },
    agent: [
      { type: 'REASONING_MESSAGE_CHUNK', delta: 'Same tool, other city.' },
      { type: 'TOOL_CALL_CHUNK', toolCallId: 'call-2', toolCallName: 'weather', delta: '{"city":"Bergen"}' },
      { type: 'TOOL_CALL_RESULT', toolCallId: 'call-2', content: 'rain' },
      { type: 'STATE_SNAPSHOT', snapshot: { count: 2, cities: ['Oslo', 'Bergen'], notes } },
      { type: 'TEXT_MESSAGE_CHUNK', delta: 'Rain.' },
    ],
  },
] as { user: Message; agent: AgentEvent[] }[];

describe('foldRuns', () => {
  it('should hold the messages and state of a client that watched every run live', async () => {
    const { runs, messages, state } = await playThread(TURNS, { count: 0, notes });
    expect(runs[1].events.some((event) => event.type === EventType.STATE_DELTA)).toBe(true);
    expect(foldRuns(runs)).toEqual({ messages, state });
    expect(state).toEqual({ count: 2, cities: ['Oslo', 'Bergen'], notes });
  });

  it('should keep what a failed run built before its RUN_ERROR', async () => {
    const { runs, messages, state } = await playThread([TURNS[0], { ...TURNS[1], error: true }], { count: 0 });
    expect(runs[1].events[runs[1].events.length - 1]).toMatchObject({ type: EventType.RUN_ERROR, code: 'OVERLOADED' });
    expect(foldRuns(runs)).toEqual({ messages, state });
  });

  it('should skip a patch that does not apply, as the client does, and start each run from its input state', () => {
    const input: RunAgentInput = { threadId, runId: 'r1', state: { a: 1 }, messages: [], tools: [], context: [], forwardedProps: {} };
    const events: Event[] = [
      { type: EventType.RUN_STARTED, threadId, runId: 'r1' },
      { type: EventType.STATE_DELTA, delta: [{ op: 'replace', path: '/missing/deep', value: 1 }] },
      { type: EventType.STATE_DELTA, delta: [{ op: 'add', path: '/__proto__/polluted', value: 1 }] },
      { type: EventType.STATE_DELTA, delta: [{ op: 'replace', path: '/a', value: 2 }] },
      { type: EventType.RUN_FINISHED, threadId, runId: 'r1' },
    ];
    expect(foldRuns([{ record: record(input), events }])).toEqual({ messages: [], state: { a: 2 } });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe('compactRuns', () => {
  it('should be empty without finished runs', () => {
    expect(compactRuns(threadId, [])).toEqual([]);
  });

  it('should compact a thread into RUN_STARTED, MESSAGES_SNAPSHOT, STATE_SNAPSHOT, RUN_FINISHED that the official client turns into the live messages and state', async () => {
    const { runs, messages, state } = await playThread(TURNS, { count: 0 });
    const compacted = compactRuns(threadId, runs);
    expect(compacted.map((event) => event.type)).toEqual([EventType.RUN_STARTED, EventType.MESSAGES_SNAPSHOT, EventType.STATE_SNAPSHOT, EventType.RUN_FINISHED]);
    expect(compacted[0]).toEqual({ type: EventType.RUN_STARTED, threadId, runId: 'run-2' });
    const client = await runWithOfficialClient(compacted, { threadId, runId: 'fresh' });
    expect([client.messages, client.state]).toEqual([messages, state]);
  });

  it('should end with a plain RUN_FINISHED when the last run ended in RUN_ERROR, and keep the last run outcome otherwise', async () => {
    const failed = await playThread([TURNS[0], { ...TURNS[1], error: true }], { count: 0 });
    const compacted = compactRuns(threadId, failed.runs);
    expect(compacted[compacted.length - 1]).toEqual({ type: EventType.RUN_FINISHED, threadId, runId: 'run-2' });
    const client = await runWithOfficialClient(compacted, { threadId, runId: 'fresh' });
    expect([client.messages, client.state]).toEqual([failed.messages, failed.state]);

    const input: RunAgentInput = { threadId, runId: 'r1', messages: [], tools: [], context: [], forwardedProps: {} };
    const cancelled = compactRuns(threadId, [
      { record: record(input), events: [{ type: EventType.RUN_STARTED, threadId, runId: 'r1' }, { type: EventType.RUN_FINISHED, threadId, runId: 'r1', outcome: { type: 'cancelled' } } as Event] },
    ]);
    expect(cancelled[3]).toEqual({ type: EventType.RUN_FINISHED, threadId, runId: 'r1', outcome: { type: 'cancelled' } });
    await expect(runWithOfficialClient(cancelled, { threadId, runId: 'fresh' })).resolves.toMatchObject({ messages: [], state: {} });
  });
});
