import { EventType, type Event } from '@ag-ui/core';
import { concat, of, type Observable } from 'rxjs';
import type { AgentEvent } from '../../lib/protocol/agentEvent.js';
import { toAgui } from '../../operators/toAgui.js';
import { diagnosticsSink, sequentialIds, terminals } from '../support/helpers.js';
import { runWithOracle } from '../support/oracle.js';

const run = { threadId: 'thread-1', runId: 'run-1' };
const hello: AgentEvent = { type: EventType.TEXT_MESSAGE_CHUNK, delta: 'Hello' };
const call: AgentEvent = { type: EventType.TOOL_CALL_CHUNK, toolCallId: 'c1', toolCallName: 'search', delta: '{"q":' };

const circular: Record<string, unknown> = { name: 'loop' };
circular.self = circular;

/** Each bad input follows an open text message and an open tool call, which must be closed first. */
const cases: [string, unknown, string, string][] = [
  [
    'a non-string delta',
    { type: EventType.TEXT_MESSAGE_CHUNK, delta: 42 },
    'INVALID_EVENT',
    "TEXT_MESSAGE_CHUNK has 'delta: number 42', but 'delta' must be a string.",
  ],
  [
    'an event without type',
    { delta: 'orphan' },
    'INVALID_EVENT',
    "Received an event without a string 'type' (got undefined). Every event needs a type, e.g. 'TEXT_MESSAGE_CHUNK'.",
  ],
  [
    'null instead of an event',
    null,
    'INVALID_EVENT',
    "Received null where an AG-UI event object was expected. Emit objects such as { type: 'TEXT_MESSAGE_CHUNK', delta: 'Hi' }.",
  ],
  [
    'a TOOL_CALL_CHUNK that opens a call without a name',
    { type: EventType.TOOL_CALL_CHUNK, toolCallId: 'c2', delta: '{}' },
    'INVALID_EVENT',
    "TOOL_CALL_CHUNK opens tool call 'c2' without a toolCallName. Put the tool's name on the first chunk of each call.",
  ],
  [
    'a STATE_SNAPSHOT holding a BigInt',
    { type: EventType.STATE_SNAPSHOT, snapshot: { total: 10n } },
    'INVALID_STATE',
    'STATE_SNAPSHOT is not JSON-serialisable: Do not know how to serialize a BigInt. State must be plain JSON: convert BigInts to strings or numbers and break reference cycles.',
  ],
  [
    'a circular STATE_SNAPSHOT',
    { type: EventType.STATE_SNAPSHOT, snapshot: circular },
    'INVALID_STATE',
    expect.stringMatching(/^STATE_SNAPSHOT is not JSON-serialisable: Converting circular structure to JSON/) as unknown as string,
  ],
  [
    'null where a value is required',
    { type: EventType.STEP_STARTED, stepName: null },
    'INVALID_EVENT',
    "STEP_STARTED has 'stepName: null', but 'stepName' must be a string: omit an optional field rather than sending null.",
  ],
];

describe('bad input through toAgui', () => {
  // These ended the run with RUN_ERROR before; null in an optional field is now read as absent.
  it.each([
    ['a chunk', { type: EventType.TEXT_MESSAGE_CHUNK, delta: ' world', messageId: null }, 'TEXT_MESSAGE_CHUNK', 'messageId'],
    ['a passed-through event', { type: EventType.STEP_STARTED, stepName: 'plan', timestamp: null }, 'STEP_STARTED', 'timestamp'],
  ])('should read null in an optional field of %s as absent, and carry on', async (_name, event, type, field) => {
    const sink = diagnosticsSink();
    // A call with whole arguments: one cut at the run's end would fail the run (INCOMPLETE_STREAM).
    const events$ = concat(of(hello, { ...call, delta: '{"q": "rxjs"}' } as AgentEvent), of(event as AgentEvent)).pipe(toAgui({ ...run, generateId: sequentialIds(), onDiagnostic: sink.onDiagnostic }));
    const result = await runWithOracle(events$ as Observable<Event>);
    const events = result.events as Event[];
    expect(events[events.length - 1]).toMatchObject({ type: EventType.RUN_FINISHED });
    expect(JSON.stringify(events)).not.toContain('null');
    expect(result.messages[0]).toMatchObject({ role: 'assistant', toolCalls: [expect.objectContaining({ id: 'c1' })] });
    expect(sink.messages).toEqual([`${type} has '${field}: null': read as absent, here and in the rest of the run. Omit an optional field rather than sending null (Python: exclude_none=True).`]);
  });

  it.each(cases)('should end the run with RUN_ERROR for %s, after closing what is open', async (_name, bad, code, message) => {
    const { onDiagnostic } = diagnosticsSink();
    const events$ = concat(of(hello, call), of(bad as AgentEvent)).pipe(toAgui({ ...run, generateId: sequentialIds(), onDiagnostic }));
    // The official client accepts the stream: nothing half-open, one terminal event.
    const result = await runWithOracle(events$ as Observable<Event>);
    const events = result.events as Event[];
    expect(events[events.length - 1]).toEqual({ type: EventType.RUN_ERROR, code, message });
    expect(terminals(events)).toHaveLength(1);
    const types = events.map((event) => event.type);
    expect(types.indexOf(EventType.TEXT_MESSAGE_END)).toBeGreaterThan(types.indexOf(EventType.TEXT_MESSAGE_START));
    expect(types.indexOf(EventType.TOOL_CALL_END)).toBeGreaterThan(types.indexOf(EventType.TOOL_CALL_START));
    // What was sent before the bad event is kept.
    expect(result.messages).toEqual([
      expect.objectContaining({ role: 'assistant', content: 'Hello', toolCalls: [expect.objectContaining({ id: 'c1', function: { name: 'search', arguments: '{"q":' } })] }),
    ]);
  });

  // AG-UI spec 1.1, Processing Model: an event of an unrecognised type MUST NOT abort the run; dropped with a warning.
  it('should drop an event of an unknown type with a diagnostic, not end the run, and keep what comes after it', async () => {
    const { onDiagnostic, messages: diagnostics } = diagnosticsSink();
    const more: AgentEvent = { type: EventType.TOOL_CALL_CHUNK, toolCallId: 'c1', delta: '"rxjs"}' };
    const events$ = of(hello, call, { type: 'TEXT_DELTA', delta: 'x' } as unknown as AgentEvent, more).pipe(toAgui({ ...run, generateId: sequentialIds(), onDiagnostic }));
    const result = await runWithOracle(events$ as Observable<Event>);
    const events = result.events as Event[];
    expect(events[events.length - 1]).toMatchObject({ type: EventType.RUN_FINISHED });
    expect(result.messages).toEqual([
      expect.objectContaining({ role: 'assistant', content: 'Hello', toolCalls: [expect.objectContaining({ id: 'c1', function: { name: 'search', arguments: '{"q":"rxjs"}' } })] }),
    ]);
    expect(diagnostics).toEqual([
      "Dropped an event of unknown type 'TEXT_DELTA': AG-UI 1.0 does not describe it, and a consumer drops it. Emit one of the AG-UI 1.0 event types (EventType from @ag-ui/core), or wrap provider data in a RAW or CUSTOM event.",
    ]);
  });
});
