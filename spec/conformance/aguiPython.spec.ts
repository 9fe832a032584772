import { EventType, type Event, type Message } from '@ag-ui/core';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { from } from 'rxjs';
import type { AgentEvent } from '../../lib/protocol/agentEvent.js';
import { toAgui } from '../../operators/toAgui.js';
import { diagnosticsSink, sequentialIds, terminals } from '../support/helpers.js';
import { runWithOracle } from '../support/oracle.js';

type Raw = Record<string, any>;

const dir = resolve(__dirname, '../fixtures/ag-ui-python');
const readLines = (name: string): Raw[] =>
  readFileSync(resolve(dir, name), 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line));

/** A field in either spelling, read here by hand (not by the code under test): `pick(e, 'message_id', 'messageId')`. */
const pick = (event: Raw, snake: string, camel: string): any => event[camel] ?? event[snake];

/**
 * What the server said, read off its own events: each message's text (its deltas in order),
 * each call's name and argument text, each result, and the reasoning.
 */
function intentOf(events: Raw[]) {
  const texts = new Map<string, string>();
  const reasoning = new Map<string, string>();
  const calls = new Map<string, { name: string; args: string }>();
  const results: { toolCallId: string; content: string }[] = [];
  for (const event of events) {
    const messageId = pick(event, 'message_id', 'messageId');
    const toolCallId = pick(event, 'tool_call_id', 'toolCallId');
    switch (event.type) {
      case 'TEXT_MESSAGE_CONTENT':
      case 'TEXT_MESSAGE_CHUNK':
        texts.set(messageId ?? 'anonymous', (texts.get(messageId ?? 'anonymous') ?? '') + event.delta);
        break;
      case 'REASONING_MESSAGE_CHUNK':
        reasoning.set(messageId, (reasoning.get(messageId) ?? '') + event.delta);
        break;
      case 'TOOL_CALL_START':
      case 'TOOL_CALL_ARGS':
      case 'TOOL_CALL_CHUNK': {
        const call = calls.get(toolCallId) ?? { name: pick(event, 'tool_call_name', 'toolCallName'), args: '' };
        if (typeof event.delta === 'string') call.args += event.delta;
        calls.set(toolCallId, call);
        break;
      }
      case 'TOOL_CALL_RESULT':
        results.push({ toolCallId, content: event.content });
        break;
    }
  }
  return { texts: [...texts.values()], reasoning: [...reasoning.values()], calls: [...calls].map(([id, call]) => ({ id, ...call })), results };
}

/** The same, read off the messages the official client built. */
function contentOf(messages: Message[]) {
  const assistants = messages.filter((message) => message.role === 'assistant');
  return {
    texts: assistants.map((message) => message.content ?? '').filter((text) => text !== ''),
    reasoning: messages.filter((message) => message.role === 'reasoning').map((message) => message.content),
    calls: assistants.flatMap((message) => message.toolCalls ?? []).map((call) => ({ id: call.id, name: call.function.name, args: call.function.arguments })),
    results: messages.filter((message) => message.role === 'tool').map((message) => ({ toolCallId: message.toolCallId, content: message.content })),
  };
}

/** Runs a fixture's events through toAgui and the official client. */
async function repaired(events: Raw[]) {
  const sink = diagnosticsSink();
  const result = await runWithOracle(from(events as unknown as AgentEvent[]).pipe(toAgui({ threadId: 'thread-1', runId: 'run-1', generateId: sequentialIds(), onDiagnostic: sink.onDiagnostic })));
  const out = result.events as Event[];
  expect(terminals(out)).toEqual([out[out.length - 1]]);
  // Nothing null on the wire: no event field is null (payloads such as the state may hold null).
  for (const event of out) expect(Object.entries(event).filter(([, value]) => value === null)).toEqual([]);
  return { ...result, out, last: out[out.length - 1], diagnostics: sink.messages };
}

const SNAKE_CASE = "names its fields in snake_case ('";

describe('AG-UI servers in Python, serialised without aliases or with nulls', () => {
  it('should keep every word, call and result of a snake_case run (model_dump without aliases), as its own MESSAGES_SNAPSHOT says', async () => {
    const events = readLines('snake-case-run.jsonl');
    const snapshot = events.find((event) => event.type === 'MESSAGES_SNAPSHOT')!;
    // The fixture holds its edge case: snake_case names and null optional fields on every event.
    expect(events.every((event) => 'raw_event' in event && event.timestamp === null)).toBe(true);

    // Streamed only (the final snapshot left out): the client's messages are built from the deltas.
    const streamed = await repaired(events.filter((event) => event !== snapshot));
    expect(streamed.last).toMatchObject({ type: EventType.RUN_FINISHED });
    const intent = intentOf(events);
    expect(contentOf(streamed.messages)).toEqual(intent);
    // The server's own final content agrees with its deltas, and so with what the client built.
    const finalAssistants = snapshot.messages.filter((message: Raw) => message.role === 'assistant');
    expect(intent.texts).toEqual(finalAssistants.map((message: Raw) => message.content));
    expect(intent.calls).toEqual(
      finalAssistants.flatMap((message: Raw) => message.tool_calls ?? []).map((call: Raw) => ({ id: call.id, name: call.function.name, args: call.function.arguments })),
    );
    expect(intent.results).toEqual(snapshot.messages.filter((message: Raw) => message.role === 'tool').map((message: Raw) => ({ toolCallId: message.tool_call_id, content: message.content })));
    // Ids kept; a state payload is never renamed.
    expect(streamed.messages.map((message) => message.id)).toEqual(['msg-1', 'tool-1', 'msg-2']);
    expect(streamed.state).toEqual({ last_city: 'Paris', user_id: null, tool_calls: 1 });
    expect(streamed.out.filter((event) => event.type === EventType.STEP_STARTED)).toEqual([{ type: EventType.STEP_STARTED, stepName: 'agent' }]);
    expect(streamed.diagnostics.filter((message) => message.includes(SNAKE_CASE))).toHaveLength(1);

    // Whole: the snapshot's messages, read as AG-UI spells them, are what the client ends with
    // (in the client's order: it merges a snapshot into the messages it has).
    const whole = await repaired(events);
    const byId = (messages: Message[]) => [...messages].sort((a, b) => a.id.localeCompare(b.id));
    expect(byId(whole.messages)).toEqual([
      { id: 'msg-1', role: 'assistant', content: intent.texts[0], toolCalls: [{ id: 'call-1', type: 'function', function: { name: 'get_weather', arguments: intent.calls[0].args } }] },
      { id: 'msg-2', role: 'assistant', content: intent.texts[1] },
      { id: 'tool-1', role: 'tool', content: intent.results[0].content, toolCallId: 'call-1' },
      { id: 'user-1', role: 'user', content: 'Weather in Paris?' },
    ]);
  });

  it('should keep the text, reasoning, parallel calls and results of snake_case chunks with every base field null', async () => {
    const events = readLines('snake-case-chunks.jsonl');
    expect(events.every((event) => event.subagent_run_id === null && event.metadata === null)).toBe(true);
    const run = await repaired(events);
    expect(run.last).toMatchObject({ type: EventType.RUN_FINISHED, outcome: { type: 'success' } });
    expect(contentOf(run.messages)).toEqual(intentOf(events));
    expect(run.messages.find((message) => message.role === 'assistant')?.toolCalls?.map((call) => call.id)).toEqual(['call-a', 'call-b']);
    expect(run.diagnostics.filter((message) => message.includes(SNAKE_CASE))).toHaveLength(1);
  });

  it('should read null chunk ids of a camelCase run (by_alias without exclude_none) as absent, one message and all', async () => {
    const events = readLines('camel-case-with-nulls.jsonl');
    const run = await repaired(events);
    expect(run.last).toMatchObject({ type: EventType.RUN_FINISHED });
    expect(contentOf(run.messages)).toEqual({ texts: ['Hello, world.'], reasoning: [], calls: [{ id: 'call-1', name: 'now', args: '{}' }], results: [{ toolCallId: 'call-1', content: '12:00' }] });
    expect(run.diagnostics.some((message) => message.includes(SNAKE_CASE))).toBe(false);
    expect(run.diagnostics).toContain(
      "TEXT_MESSAGE_CHUNK has 'messageId: null': read as absent, here and in the rest of the run. Omit an optional field rather than sending null (Python: exclude_none=True).",
    );
  });

  it('should end a run whose RUN_ERROR has no message with one saying none was given, its code and text kept', async () => {
    const events = readLines('run-error-without-message.jsonl');
    expect(events[events.length - 1]).not.toHaveProperty('message');
    const run = await repaired(events);
    expect(run.last).toEqual({ type: EventType.RUN_ERROR, code: 'AGENT_ERROR', message: 'The agent reported an error without a message.' });
    expect(contentOf(run.messages).texts).toEqual(['Working on it']);
  });
});
