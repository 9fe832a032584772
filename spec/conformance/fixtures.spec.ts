import { EventType, type Event } from '@ag-ui/core';
import { from } from 'rxjs';
import type { AgentEvent } from '../../lib/protocol/agentEvent.js';
import { toAgui } from '../../operators/toAgui.js';
import { fixtureFiles, haveFixtures, readAguiRecording } from '../support/fixtures.js';
import { diagnosticsSink, terminals } from '../support/helpers.js';
import { runWithOfficialClient } from '../../lib/testing/runWithOfficialClient.js';
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

/**
 * The repairs a recording needs, by file: what the official client would get wrong from the
 * recording as it is, which the spec shows by running the recording itself through the client.
 * The .NET server sends TOOL_CALL_START with `parentMessageId: ''`, which the client reads as none
 * (it names the call's assistant message after the call), and names each TOOL_CALL_RESULT's
 * message after its call too: the client holds two messages under the call's id.
 */
const resultNamedAfterItsCall = (callId: string) =>
  new RegExp(`^TOOL_CALL_RESULT starts a tool result message under id '${callId}', which names this run's assistant message of a tool call; it was sent as '[^']+'\\.`);
const repairs: Readonly<Record<string, { diagnostics: RegExp[]; duplicateIds: string[] }>> = {
  'dotnet-backend-tool-result-text.server-agui.json': { diagnostics: [resultNamedAfterItsCall('call_Id_1')], duplicateIds: ['call_Id_1'] },
  'dotnet-parallel-tool-calls.server-agui.json': { diagnostics: [resultNamedAfterItsCall('call_Id_1'), resultNamedAfterItsCall('call_Id_2')], duplicateIds: ['call_Id_1', 'call_Id_2'] },
};

/** The ids the client holds more than one message under. */
const duplicateIdsOf = (messages: readonly { id: string }[]) => [...new Set(messages.map((message) => message.id).filter((id, index, ids) => ids.indexOf(id) !== index))];

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

    // A well-formed recording needs no repair; one the client would get wrong as it is gets exactly its repairs.
    const needed = repairs[name];
    if (needed === undefined) expect(diagnostics).toEqual([]);
    else {
      expect(diagnostics).toEqual(needed.diagnostics.map((pattern) => expect.stringMatching(pattern)));
      // The repair is needed: the recording itself leaves the client two messages under one id.
      const raw = await runWithOfficialClient(from(input as unknown as Event[]), { threadId: String(input[0].threadId), runId: String(input[0].runId) });
      expect(duplicateIdsOf(raw.messages)).toEqual(needed.duplicateIds);
    }
    // Every message the client holds has an id of its own.
    expect(duplicateIdsOf(run.messages)).toEqual([]);

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
