// The demo: an agent's events, as an agent would emit them (chunks, whole states, no ENDs),
// turned into one AG-UI run by agui-rx and judged by the official @ag-ui/client.
//
// Input: the recorded AG-UI streams in ../shared/fixtures/ag-ui (when this clone sits beside them),
// reduced to what an agent says (chunks and results); otherwise a small built-in agent turn.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { AbstractAgent } from '@ag-ui/client';
import { EventType } from '@ag-ui/core';
import { from, lastValueFrom, toArray } from 'rxjs';
import { toAgui } from 'agui-rx';

const fixtures = resolve(import.meta.dirname, '../../../shared/fixtures/ag-ui');

/** A recorded AG-UI stream reduced to an agent's own events: chunks instead of START/CONTENT/END. */
function agentEventsOf(recording) {
  const events = [];
  for (const event of recording) {
    switch (event.type) {
      case EventType.TEXT_MESSAGE_CONTENT:
        events.push({ type: EventType.TEXT_MESSAGE_CHUNK, messageId: event.messageId, delta: event.delta });
        break;
      case EventType.REASONING_MESSAGE_CONTENT:
        events.push({ type: EventType.REASONING_MESSAGE_CHUNK, messageId: event.messageId, delta: event.delta });
        break;
      case EventType.TOOL_CALL_START:
        events.push({ type: EventType.TOOL_CALL_CHUNK, toolCallId: event.toolCallId, toolCallName: event.toolCallName });
        break;
      case EventType.TOOL_CALL_ARGS:
        events.push({ type: EventType.TOOL_CALL_CHUNK, toolCallId: event.toolCallId, delta: event.delta });
        break;
      case EventType.TOOL_CALL_RESULT:
        events.push({ type: EventType.TOOL_CALL_RESULT, toolCallId: event.toolCallId, content: event.content });
        break;
      case EventType.TEXT_MESSAGE_CHUNK:
      case EventType.TOOL_CALL_CHUNK:
      case EventType.STATE_SNAPSHOT:
      case EventType.STATE_DELTA:
        events.push(event);
        break;
      default:
      // Lifecycle, START/END events and the rest are the toolkit's job: an agent leaves them out.
    }
  }
  return events;
}

function readRecording(name) {
  const text = readFileSync(join(fixtures, name), 'utf8').replace(/^\uFEFF/, '');
  const events = name.endsWith('.jsonl') ? text.split('\n').filter(Boolean).map((line) => JSON.parse(line)) : JSON.parse(text);
  return events.map((event) => Object.fromEntries(Object.entries(event).filter(([key]) => !key.startsWith('_') && key !== 'rawEvent')));
}

const builtIn = [
  { type: EventType.TEXT_MESSAGE_CHUNK, delta: 'Checking the weather' },
  { type: EventType.TOOL_CALL_CHUNK, toolCallId: 'call-1', toolCallName: 'weather', delta: '{"city":"Oslo"}' },
  { type: EventType.TOOL_CALL_RESULT, toolCallId: 'call-1', content: { celsius: -3 } },
  { type: EventType.STATE_SNAPSHOT, snapshot: { city: 'Oslo' } },
  { type: EventType.TEXT_MESSAGE_CHUNK, delta: 'It is -3°C in Oslo.' },
  { type: EventType.STATE_SNAPSHOT, snapshot: { city: 'Oslo', celsius: -3 } },
];

class ReplayAgent extends AbstractAgent {
  constructor(events$) {
    super({ threadId: 'demo-thread' });
    this.events$ = events$;
  }
  run() {
    return this.events$;
  }
}

if (!existsSync(fixtures)) console.log(`No recorded streams at ${fixtures} (they sit beside the project's own checkout): running a built-in agent turn instead.\n`);
const inputs = existsSync(fixtures)
  ? readdirSync(fixtures).filter((name) => /\.jsonl?$/.test(name)).sort().map((name) => [name, agentEventsOf(readRecording(name))])
  : [['built-in agent turn', builtIn]];

let failures = 0;
for (const [name, agentEvents] of inputs) {
  const events$ = from(agentEvents).pipe(toAgui({ threadId: 'demo-thread', runId: `run-${name}`, onDiagnostic: () => {} }));
  const events = await lastValueFrom(events$.pipe(toArray()));
  const agent = new ReplayAgent(from(events));
  try {
    await agent.runAgent({ runId: `run-${name}` });
    const text = agent.messages.filter((m) => m.role === 'assistant').map((m) => m.content ?? '').join('');
    const calls = agent.messages.flatMap((m) => m.toolCalls ?? []).length;
    console.log(`✓ ${name}: ${agentEvents.length} agent events -> ${events.length} AG-UI events; official client built ${agent.messages.length} messages (${calls} tool calls, ${text.length} chars of text)`);
  } catch (error) {
    failures += 1;
    console.log(`✗ ${name}: the official client rejected the stream: ${error.message}`);
  }
}
const [sampleName, sample] = inputs[0];
console.log(`\nThe first run (${sampleName}) as it goes on the wire, one SSE frame per event (long frames cut at 120 characters):\n`);
const frames = await lastValueFrom(from(sample).pipe(toAgui({ threadId: 'demo-thread', runId: 'run-sample', onDiagnostic: () => {} }), toArray()));
for (const event of frames) {
  const json = JSON.stringify(event);
  process.stdout.write(`data: ${json.length > 120 ? `${json.slice(0, 119)}…` : json}\n\n`);
}
console.log(`Runs accepted by the official @ag-ui/client:`);
console.log(`${inputs.length - failures} passed, ${failures} failed`);
process.exitCode = failures === 0 ? 0 : 1;
