import { EventType, type Event } from '@ag-ui/core';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { from } from 'rxjs';
import type { AgentEvent } from '../../lib/protocol/agentEvent.js';
import { createAguiVerifier } from '../../lib/tracking/verifier.js';
import { toAgui } from '../../operators/toAgui.js';
import { diagnosticsSink } from '../support/helpers.js';
import { runWithOracle } from '../support/oracle.js';

/**
 * What the AG-UI specification (1.1) has a consumer survive, end to end: our own captures in
 * spec/fixtures/ag-ui/ (see its README), one kind each. The verifier warns and never calls them
 * violations; the official client accepts them as they are; the repair (`toAgui`, as `agui-rx
 * verify --fix` runs it) keeps what the client keeps and comes out clean.
 */
const folder = join(__dirname, '../fixtures/ag-ui');
const read = (name: string): Record<string, unknown>[] =>
  readFileSync(join(folder, name), 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>);

/** The client's verdict without its warnings (it warns about what it drops, which these streams hold on purpose). */
async function quietly<T>(run: () => Promise<T>): Promise<T> {
  const warn = jest.spyOn(console, 'warn').mockImplementation(() => undefined);
  try {
    return await run();
  } finally {
    warn.mockRestore();
  }
}

/** Each text message's deltas and each tool call's argument fragments in a capture, by id (untagged continuations included). */
function contentOf(events: readonly Record<string, unknown>[]) {
  const texts = new Map<string, string>();
  const args = new Map<string, string>();
  for (const event of events) {
    const delta = typeof event.delta === 'string' ? event.delta : '';
    if (event.type === EventType.TEXT_MESSAGE_CONTENT || event.type === EventType.TEXT_MESSAGE_CHUNK) texts.set(event.messageId as string, (texts.get(event.messageId as string) ?? '') + delta);
    if (event.type === EventType.TOOL_CALL_ARGS || event.type === EventType.TOOL_CALL_CHUNK) args.set(event.toolCallId as string, (args.get(event.toolCallId as string) ?? '') + delta);
  }
  return { texts, args };
}

// Each capture, the warnings the verifier gives for it (`#<index> <rule>`), and what the repair reports.
const captures: [string, string[], RegExp[]][] = [
  ['unknown-event-types.agui.jsonl', ['#3 unknown-type', '#5 unknown-type', '#10 unknown-type'], [/^Dropped an event of unknown type 'PROGRESS_UPDATE'/, /^Dropped an event of unknown type 'CITATION_ADDED'/, /^Dropped an event of unknown type 'HEARTBEAT'/]],
  [
    'unknown-patch-ops.agui.jsonl',
    ['#2 unknown-patch-op', '#8 unknown-patch-op'],
    [/at \/delta\/1, operation 1 has op 'merge'/, /^Dropped a STATE_DELTA that does not apply .*replace \/delivery\/slot/, /^Dropped a STATE_DELTA that does not apply .*TEST_OPERATION_FAILED/, /at \/delta\/0, operation 0 has op 'x-increment'/],
  ],
  ['unknown-outcome.agui.jsonl', ['#4 unknown-outcome'], [/RUN_FINISHED: at \/outcome, the outcome of type 'handoff'/]],
  ['unknown-content-parts.agui.jsonl', ['#1 unknown-content-part', '#1 unknown-content-part'], [/at \/messages\/0\/content\/1, a content part of type 'hologram'.*at \/messages\/0\/content\/3\/source, a audio part whose source is of type 'carrier-pigeon'/]],
  ['subagent-untagged-continuation.agui.jsonl', [], []],
];

describe('what the AG-UI specification tolerates (spec/fixtures/ag-ui)', () => {
  it.each(captures)('should warn about %s, never call it a violation, and agree with the client', async (name, warnings) => {
    const events = read(name);
    const verifier = createAguiVerifier();
    const found = [...events.flatMap((event, index) => verifier.verify(event, index)), ...verifier.end()];

    expect(found.map(({ index, rule }) => `#${index} ${rule}`)).toEqual(warnings);
    expect(found.filter(({ severity }) => severity !== 'warning')).toEqual([]);
    await expect(quietly(() => runWithOracle(from(events as unknown as Event[])))).resolves.toBeDefined();
  });

  it.each(captures)('should repair %s keeping every message, tool call argument and the state the client builds', async (name, _warnings, reports) => {
    const events = read(name);
    const asIs = await quietly(() => runWithOracle(from(events as unknown as Event[])));
    const { onDiagnostic, messages: diagnostics } = diagnosticsSink();
    const started = events[0];

    const repaired = await runWithOracle(from(events as unknown as AgentEvent[]).pipe(toAgui({ threadId: started.threadId as string, runId: started.runId as string, onDiagnostic })));

    // What the client builds from the repair is what it builds from the capture: no word lost, no state changed.
    expect(repaired.messages).toEqual(asIs.messages);
    expect(repaired.state).toEqual(asIs.state);
    expect(repaired.result).toEqual(asIs.result);
    // And every text message's deltas and every call's argument fragments of the capture are in it.
    const { texts, args } = contentOf(events);
    for (const [messageId, text] of texts) expect([messageId, repaired.messages.find((message) => message.id === messageId)?.content]).toEqual([messageId, text]);
    const calls = repaired.messages.flatMap((message) => (message.role === 'assistant' ? (message.toolCalls ?? []) : []));
    for (const [toolCallId, text] of args) expect([toolCallId, calls.find((call) => call.id === toolCallId)?.function.arguments]).toEqual([toolCallId, text]);
    // Each repair is reported, and the repaired stream is clean: no warning either.
    expect(diagnostics).toHaveLength(reports.length);
    reports.forEach((report, index) => expect(diagnostics[index]).toMatch(report));
    const verifier = createAguiVerifier();
    const out = repaired.events as unknown[];
    expect([...out.flatMap((event, index) => verifier.verify(event, index)), ...verifier.end()]).toEqual([]);
  });

  it('should end the unknown-outcome run as a success, the outcome stripped, as the client reads it', async () => {
    const events = read('unknown-outcome.agui.jsonl');
    const repaired = await runWithOracle(from(events as unknown as AgentEvent[]).pipe(toAgui({ threadId: 'thread-tol', runId: 'run-tol-3', onDiagnostic: () => undefined })));

    expect(repaired.events[repaired.events.length - 1]).toEqual({ type: EventType.RUN_FINISHED, threadId: 'thread-tol', runId: 'run-tol-3', result: { handedOff: true }, outcome: { type: 'success' } });
  });
});
