import { EventType, type Event, type Message } from '@ag-ui/core';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { from } from 'rxjs';
import { fixtureFiles, haveFixtures, readAguiRecording } from '../support/fixtures.js';
import { createAguiVerifier } from '../../lib/tracking/verifier.js';
import { runWithOracle } from '../support/oracle.js';

// `agui-rx verify --fix` on upstream AG-UI captures that are broken in the ways other servers
// break them, but whose content is intact (every message's deltas and every call's argument
// fragments are in the capture): the repaired run keeps, by content, every text message, every
// tool call's arguments and every tool result, whatever the capture's casing or terminal event.

/** The built bin (`npm test` builds before jest; during development run `npm run build`). */
const cli = resolve(__dirname, '../../dist/cjs/lib/cli/index.js');

let dir: string;
beforeAll(() => {
  if (!existsSync(cli)) throw new Error(`${cli} is missing: run 'npm run build' first ('npm test' does).`);
  dir = mkdtempSync(join(tmpdir(), 'agui-rx-fix-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

type Fields = Record<string, unknown>;

/** Runs `agui-rx <args>`, with `input` on stdin. */
function run(args: string[], input = '') {
  const { status, stdout, stderr } = spawnSync(process.execPath, [cli, ...args], { input, encoding: 'utf8', timeout: 20000 });
  return { status, stdout, stderr };
}

const snake = (name: string) => name.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);
/** A field by its AG-UI name, in either spelling (the camelCase one first). */
const field = (event: Fields, name: string) => event[name] ?? event[snake(name)];

/** What a capture holds: each text message's text, each tool call's name and arguments, each result, by upstream id. */
function upstreamContent(events: readonly Fields[]) {
  const texts = new Map<string, string>();
  const calls = new Map<string, { name: string; args: string }>();
  const results: string[] = [];
  let lastText: string | undefined;
  let lastCall: string | undefined;
  for (const event of events) {
    switch (event.type) {
      case EventType.TEXT_MESSAGE_START:
      case EventType.TEXT_MESSAGE_CONTENT:
      case EventType.TEXT_MESSAGE_CHUNK: {
        const id = (field(event, 'messageId') as string | undefined) ?? lastText!;
        lastText = id;
        texts.set(id, (texts.get(id) ?? '') + ((event.delta as string | undefined) ?? ''));
        break;
      }
      case EventType.TOOL_CALL_START:
      case EventType.TOOL_CALL_ARGS:
      case EventType.TOOL_CALL_CHUNK: {
        const id = (field(event, 'toolCallId') as string | undefined) ?? lastCall!;
        lastCall = id;
        const call = calls.get(id) ?? { name: '', args: '' };
        call.name ||= (field(event, 'toolCallName') as string | undefined) ?? '';
        call.args += (event.delta as string | undefined) ?? '';
        calls.set(id, call);
        break;
      }
      case EventType.TOOL_CALL_RESULT:
        results.push(event.content as string);
        break;
    }
  }
  return {
    texts: [...texts.values()].filter((text) => text !== '').sort(),
    // A call streamed with no arguments is sent with '{}' (docs/operators.md).
    calls: [...calls.values()].map(({ name, args }) => `${name} ${args === '' ? '{}' : args}`).sort(),
    results: results.sort(),
  };
}

/** The same, read from the messages the official client built. */
function clientContent(messages: readonly Message[]) {
  const texts: string[] = [];
  const calls: string[] = [];
  const results: string[] = [];
  for (const message of messages) {
    if (message.role === 'assistant') {
      if (typeof message.content === 'string' && message.content !== '') texts.push(message.content);
      for (const call of message.toolCalls ?? []) calls.push(`${call.function.name} ${call.function.arguments}`);
    } else if (message.role === 'tool') results.push(typeof message.content === 'string' ? message.content : JSON.stringify(message.content));
  }
  return { texts: texts.sort(), calls: calls.sort(), results: results.sort() };
}

/** Each item of `expected` is in `actual`, as often as it is in `expected`. */
function expectContains(actual: readonly string[], expected: readonly string[]) {
  const left = [...actual];
  const missing: string[] = [];
  for (const item of expected) {
    const at = left.indexOf(item);
    if (at === -1) missing.push(item);
    else left.splice(at, 1);
  }
  expect(missing).toEqual([]);
}

// Damages other servers do to a stream, each leaving its content in the capture.
const isTerminal = (event: Fields) => event.type === EventType.RUN_FINISHED || event.type === EventType.RUN_ERROR;
const toSnakeCase = (event: Fields): Fields =>
  Object.fromEntries(
    Object.entries(event).map(([key, value]) => [
      key === 'type' ? key : snake(key),
      // The messages of a snapshot too (not the payloads: rawEvent, state, arguments, content stay as they are).
      key === 'messages' && Array.isArray(value)
        ? value.map((message: Fields) =>
            Object.fromEntries(Object.entries(message).map(([name, part]) => [snake(name), part])),
          )
        : value,
    ]),
  );

const damages: Record<string, (events: Fields[]) => Fields[]> = {
  // Python serialisers without aliasing.
  'snake_case fields': (events) => events.map(toSnakeCase),
  // Serialisers that write every optional field.
  'null in optional fields': (events) =>
    events.map((event) => ({
      ...event,
      timestamp: event.timestamp ?? null,
      ...(event.type === EventType.TOOL_CALL_START ? { parentMessageId: event.parentMessageId ?? null } : {}),
      ...(event.type === EventType.TEXT_MESSAGE_CHUNK || event.type === EventType.TOOL_CALL_CHUNK ? { rawEvent: null } : {}),
    })),
  'no terminal event (a cut connection)': (events) => events.filter((event) => !isTerminal(event)),
  'RUN_ERROR without a message': (events) => [...events.filter((event) => !isTerminal(event)), { type: EventType.RUN_ERROR }],
  'no END events': (events) => events.filter((event) => event.type !== EventType.TEXT_MESSAGE_END && event.type !== EventType.TOOL_CALL_END),
  // LangGraph: argument fragments with duplicate step boundaries between them.
  'step boundaries inside tool arguments': (events) =>
    events.flatMap((event) => {
      if (event.type !== EventType.TOOL_CALL_ARGS || typeof event.delta !== 'string' || event.delta.length < 2) return [event];
      const half = Math.floor(event.delta.length / 2);
      return [
        { ...event, delta: event.delta.slice(0, half) },
        { type: EventType.STEP_FINISHED, stepName: 'agent' },
        { type: EventType.STEP_STARTED, stepName: 'agent' },
        { type: EventType.STEP_STARTED, stepName: 'agent' },
        { ...event, delta: event.delta.slice(half) },
      ];
    }),
  'event types the protocol does not have': (events) =>
    events.flatMap((event) => (event.type === EventType.TEXT_MESSAGE_CONTENT ? [event, { type: 'VENDOR_PROGRESS', percent: 50 }] : [event])),
  // A message ended, then started again under its id, and continued.
  'ended messages reopened by id': (events) => {
    const reopened = new Set<unknown>();
    return events.flatMap((event) => {
      if (event.type !== EventType.TEXT_MESSAGE_CONTENT || reopened.has(event.messageId)) return [event];
      reopened.add(event.messageId);
      return [
        event,
        { type: EventType.TEXT_MESSAGE_END, messageId: event.messageId },
        { type: EventType.TEXT_MESSAGE_START, messageId: event.messageId, role: 'assistant' },
      ];
    });
  },
};
// snake_case last, so that the others read the camelCase names.
const { 'snake_case fields': toSnake, ...others } = damages;
damages['all of these at once'] = (events) => toSnake(Object.values(others).reduce((damaged, damage) => damage(damaged), events));

// Intact runs of our own, so that the spec runs in a user's clone too; the shared recordings when present.
const ownRuns: Record<string, Fields[]> = {
  'text, parallel tool calls, results and more text': [
    { type: 'RUN_STARTED', threadId: 't1', runId: 'r1' },
    { type: 'TEXT_MESSAGE_START', messageId: 'm1', role: 'assistant' },
    { type: 'TEXT_MESSAGE_CONTENT', messageId: 'm1', delta: 'Let me ' },
    { type: 'TEXT_MESSAGE_CONTENT', messageId: 'm1', delta: 'check both.' },
    { type: 'TEXT_MESSAGE_END', messageId: 'm1' },
    { type: 'TOOL_CALL_START', toolCallId: 'c1', toolCallName: 'weather', parentMessageId: 'm1' },
    { type: 'TOOL_CALL_START', toolCallId: 'c2', toolCallName: 'calculator', parentMessageId: 'm1' },
    { type: 'TOOL_CALL_ARGS', toolCallId: 'c1', delta: '{"city":' },
    { type: 'TOOL_CALL_ARGS', toolCallId: 'c2', delta: '{"expression":"4' },
    { type: 'TOOL_CALL_ARGS', toolCallId: 'c1', delta: '"Oslo"}' },
    { type: 'TOOL_CALL_ARGS', toolCallId: 'c2', delta: '2*2"}' },
    { type: 'TOOL_CALL_END', toolCallId: 'c1' },
    { type: 'TOOL_CALL_END', toolCallId: 'c2' },
    { type: 'TOOL_CALL_RESULT', messageId: 'r-c1', toolCallId: 'c1', content: '{"celsius":4}' },
    { type: 'TOOL_CALL_RESULT', messageId: 'r-c2', toolCallId: 'c2', content: '84' },
    { type: 'TEXT_MESSAGE_START', messageId: 'm2', role: 'assistant' },
    { type: 'TEXT_MESSAGE_CONTENT', messageId: 'm2', delta: 'It is 4 °C; ' },
    { type: 'TEXT_MESSAGE_CONTENT', messageId: 'm2', delta: '42*2 is 84.' },
    { type: 'TEXT_MESSAGE_END', messageId: 'm2' },
    { type: 'RUN_FINISHED', threadId: 't1', runId: 'r1' },
  ],
  'chunk events with a call of no arguments': [
    { type: 'RUN_STARTED', threadId: 't1', runId: 'r1' },
    { type: 'TEXT_MESSAGE_CHUNK', messageId: 'm1', role: 'assistant', delta: 'One ' },
    { type: 'TEXT_MESSAGE_CHUNK', messageId: 'm1', delta: 'moment.' },
    { type: 'TOOL_CALL_CHUNK', toolCallId: 'c1', toolCallName: 'now', parentMessageId: 'm1', delta: '' },
    { type: 'TOOL_CALL_CHUNK', toolCallId: 'c2', toolCallName: 'search', parentMessageId: 'm1', delta: '{"q":' },
    { type: 'TOOL_CALL_CHUNK', toolCallId: 'c2', delta: '"rxjs"}' },
    { type: 'RUN_FINISHED', threadId: 't1', runId: 'r1' },
  ],
};
const shared = haveFixtures ? fixtureFiles('ag-ui', ['.json', '.jsonl']) : [];
const runs: [string, () => Fields[]][] = [
  ...Object.entries(ownRuns).map(([name, events]): [string, () => Fields[]] => [name, () => events]),
  ...shared.map((name): [string, () => Fields[]] => [name, () => readAguiRecording('ag-ui', name)]),
];
// Our own runs take each damage alone and all at once; the recordings, the damages that interact
// with their shapes (names, steps inside arguments, reopened messages) and all at once.
const recordingDamages = new Set(['snake_case fields', 'step boundaries inside tool arguments', 'ended messages reopened by id', 'all of these at once']);
const cases = runs.flatMap(([name, read], n) =>
  Object.entries(damages)
    .filter(([damage]) => n < Object.keys(ownRuns).length || recordingDamages.has(damage))
    .map(([damage, apply]) => [name, damage, () => apply(read())] as const),
);

describe('agui-rx verify --fix on damaged upstream captures', () => {
  it('should have cases for the recordings', () => {
    expect(cases.length).toBe(Object.keys(ownRuns).length * Object.keys(damages).length + shared.length * recordingDamages.size);
    if (haveFixtures) expect(shared.length).toBeGreaterThanOrEqual(8);
  });

  it.each(cases)('should keep every text, tool call and result of %s with %s', async (_name, damage, capture) => {
    const events = capture();
    const path = join(dir, 'capture.jsonl');
    writeFileSync(path, events.map((event) => JSON.stringify(event)).join('\n') + '\n');
    const fixed = run(['verify', '--fix', path]);
    expect(fixed.status).toBe(0);

    const repaired = fixed.stdout
      .split('\n\n')
      .filter((frame) => frame !== '')
      .map((frame) => JSON.parse(frame.slice('data: '.length)) as Fields);
    // The repaired stream is clean for our own verifier: no violation, no warning …
    const verifier = createAguiVerifier();
    expect([...repaired.flatMap((event, index) => verifier.verify(event, index)), ...verifier.end()]).toEqual([]);
    const last = repaired[repaired.length - 1];
    if (damage === 'RUN_ERROR without a message' || damage === 'all of these at once') {
      expect(last).toMatchObject({ type: EventType.RUN_ERROR, message: expect.stringMatching(/\S/) });
    }

    // … and for the official client, which builds every message the capture held. A failed run's
    // messages are what the client built before RUN_ERROR: the same events ended by RUN_FINISHED.
    const threadId = last.threadId ?? (repaired[0].threadId as string);
    const ended = last.type === EventType.RUN_ERROR ? [...repaired.slice(0, -1), { type: EventType.RUN_FINISHED, threadId, runId: repaired[0].runId }] : repaired;
    const client = await runWithOracle(from(ended as unknown as Event[]), { runId: repaired[0].runId as string });
    const expected = upstreamContent(events);
    const actual = clientContent(client.messages);
    expectContains(actual.texts, expected.texts);
    expectContains(actual.calls, expected.calls);
    expectContains(actual.results, expected.results);
  });
});
