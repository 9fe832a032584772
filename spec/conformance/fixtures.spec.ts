import { EventType, type Event } from '@ag-ui/core';
import { from } from 'rxjs';
import type { AgentEvent } from '../../lib/protocol/agentEvent.js';
import { toAgui } from '../../operators/toAgui.js';
import { fixtureFiles, haveFixtures, readAguiRecording } from '../support/fixtures.js';
import { diagnosticsSink, terminals } from '../support/helpers.js';
import { runWithOracle } from '../support/oracle.js';

/** Concatenated text deltas, and each tool call's concatenated arguments, of a stream. */
function intent(events: readonly Record<string, unknown>[]) {
  let text = '';
  const args = new Map<string, string>();
  let lastCall: string | undefined;
  for (const event of events) {
    switch (event.type) {
      case EventType.TEXT_MESSAGE_CONTENT:
      case EventType.TEXT_MESSAGE_CHUNK:
        text += (event.delta as string | undefined) ?? '';
        break;
      case EventType.TOOL_CALL_START:
      case EventType.TOOL_CALL_ARGS:
      case EventType.TOOL_CALL_CHUNK: {
        const id = (event.toolCallId as string | undefined) ?? lastCall!;
        lastCall = id;
        args.set(id, (args.get(id) ?? '') + ((event.delta as string | undefined) ?? ''));
        break;
      }
    }
  }
  return { text, args };
}

const recordings = fixtureFiles('ag-ui', ['.json', '.jsonl']);

// A user's own clone has no ../shared: the skip says why, in the suite's own name.
(haveFixtures ? describe : describe.skip)(
  `recorded AG-UI streams through toAgui and the official client${haveFixtures ? '' : ' (skipped: ../shared/fixtures is absent)'}`,
  () => {
  it('should find the recordings', () => {
    expect(recordings.length).toBeGreaterThanOrEqual(8);
  });

  it.each(recordings)('should keep the text, tool arguments and state of %s', async (name) => {
    const input = readAguiRecording('ag-ui', name);
    const { onDiagnostic, messages: diagnostics } = diagnosticsSink();
    const out$ = from(input as unknown as AgentEvent[]).pipe(toAgui({ threadId: 'thread-1', runId: 'run-1', onDiagnostic }));
    const run = await runWithOracle(out$);
    const received = run.events as unknown as Record<string, unknown>[];

    // One run, ended once, by the run's own ids.
    expect(received[0].type).toBe(EventType.RUN_STARTED);
    expect(terminals(received as unknown as Event[])).toEqual([received[received.length - 1]]);
    expect(received[received.length - 1]).toMatchObject({ type: EventType.RUN_FINISHED, threadId: 'thread-1', runId: 'run-1' });

    // A well-formed recording needs no repair.
    expect(diagnostics).toEqual([]);

    // Nothing lost: the text and every tool call's arguments survive.
    const expected = intent(input);
    const actual = intent(received);
    expect(actual.text).toBe(expected.text);
    for (const [id, args] of expected.args) expect(actual.args.get(id) || '{}').toBe(args || '{}');

    // The client's messages hold them too, unless a MESSAGES_SNAPSHOT replaced the list.
    if (!input.some((event) => event.type === EventType.MESSAGES_SNAPSHOT)) {
      const assistantText = run.messages
        .filter((message) => message.role === 'assistant')
        .map((message) => (message as { content?: string }).content ?? '')
        .join('');
      expect(assistantText).toBe(expected.text);
      const calls = run.messages.flatMap((message) => (message.role === 'assistant' ? message.toolCalls ?? [] : []));
      expect(new Map(calls.map((call) => [call.id, call.function.arguments]))).toEqual(
        new Map([...expected.args].map(([id, args]) => [id, args || '{}'])),
      );
    }

    // The client's final state is the agent's last snapshot.
    const snapshots = input.filter((event) => event.type === EventType.STATE_SNAPSHOT);
    if (snapshots.length > 0) expect(run.state).toEqual(snapshots[snapshots.length - 1].snapshot);
  });
  },
);
