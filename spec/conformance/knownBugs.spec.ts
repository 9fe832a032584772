import { EventType, type Event, type RunAgentInput } from '@ag-ui/core';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { NEVER, Observable, concat, from, of, throwError, type Observer } from 'rxjs';
import { fromAnthropicMessages, type AnthropicStreamEvent } from '../../lib/adapters/fromAnthropicMessages.js';
import type { AgentEvent } from '../../lib/protocol/agentEvent.js';
import { createAguiHandler, type AguiAgent } from '../../lib/transports/createAguiHandler.js';
import { createAguiVerifier, type AguiViolation } from '../../lib/tracking/verifier.js';
import { toAgui, type ToAguiOptions } from '../../operators/toAgui.js';
import { diagnosticsSink, sequentialIds, terminals, typesOf } from '../support/helpers.js';
import { runWithOracle } from '../support/oracle.js';

const run = { threadId: 'thread-1', runId: 'run-1' };

/** Every violation our verifier finds in a stream (expected: none). */
function violations(events: readonly unknown[]): AguiViolation[] {
  const verifier = createAguiVerifier();
  return [...events.flatMap((event, index) => verifier.verify(event, index)), ...verifier.end()];
}

/**
 * Runs agent events through toAgui and the official client. The client must accept the run, our
 * verifier must find nothing wrong, and the run must have exactly one terminal event, its last.
 */
async function accepted(events$: Observable<AgentEvent>, options: Partial<ToAguiOptions> = {}, initialState?: Record<string, unknown>) {
  const sink = diagnosticsSink();
  const result = await runWithOracle(events$.pipe(toAgui({ ...run, generateId: sequentialIds(), onDiagnostic: sink.onDiagnostic, initialState, ...options })), {
    initialState,
  });
  const events = result.events as Event[];
  expect(violations(events)).toEqual([]);
  expect(terminals(events)).toEqual([events[events.length - 1]]);
  return { ...result, events, diagnostics: sink.messages, last: events[events.length - 1] };
}

/** The arguments the client assembled for each tool call, by id. */
function toolArguments(messages: readonly unknown[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const message of messages as { toolCalls?: { id: string; function: { arguments: string } }[] }[]) {
    for (const call of message.toolCalls ?? []) out[call.id] = call.function.arguments;
  }
  return out;
}

const input = (overrides: Partial<RunAgentInput> = {}): RunAgentInput => ({
  threadId: 'thread-1',
  runId: 'run-1',
  state: {},
  messages: [{ id: 'u1', role: 'user', content: 'Hi' }],
  tools: [],
  context: [],
  forwardedProps: {},
  ...overrides,
});

async function listen(handler: Parameters<typeof createServer>[1]): Promise<{ server: Server; url: string }> {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/agent` };
}

function closeServer(server: Server | undefined): Promise<void> {
  if (server === undefined) return Promise.resolve();
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}

describe('known kinds of AG-UI server bugs, through toAgui and the official client', () => {
  it('should never send RUN_FINISHED after RUN_ERROR (1)', async () => {
    const { events, last } = await accepted(
      from<AgentEvent[]>([
        { type: EventType.TEXT_MESSAGE_CHUNK, delta: 'Working' },
        { type: EventType.RUN_ERROR, message: 'model overloaded', code: 'OVERLOADED' },
        { type: EventType.RUN_FINISHED },
        { type: EventType.TEXT_MESSAGE_CHUNK, delta: 'late' },
      ]),
    );
    expect(last).toEqual({ type: EventType.RUN_ERROR, message: 'model overloaded', code: 'OVERLOADED' });
    expect(typesOf(events)).toEqual([EventType.RUN_STARTED, EventType.TEXT_MESSAGE_START, EventType.TEXT_MESSAGE_CONTENT, EventType.TEXT_MESSAGE_END, EventType.RUN_ERROR]);
  });

  it('should turn an exception that would leave no terminal event into RUN_ERROR (2)', async () => {
    const { events, last, messages } = await accepted(concat(of<AgentEvent[]>({ type: EventType.TEXT_MESSAGE_CHUNK, delta: 'Half an ans' }), throwError(() => new Error('socket hang up'))));
    expect(last).toEqual({ type: EventType.RUN_ERROR, message: 'socket hang up' });
    expect(typesOf(events)).toEqual([EventType.RUN_STARTED, EventType.TEXT_MESSAGE_START, EventType.TEXT_MESSAGE_CONTENT, EventType.TEXT_MESSAGE_END, EventType.RUN_ERROR]);
    expect(messages).toEqual([{ id: 'id-1', role: 'assistant', content: 'Half an ans' }]);
  });

  it('should turn an exception thrown synchronously by the agent into RUN_ERROR (2)', async () => {
    const { events } = await accepted(
      new Observable<AgentEvent>(() => {
        throw new Error('bad API key');
      }),
    );
    expect(events).toEqual([expect.objectContaining({ type: EventType.RUN_STARTED }), { type: EventType.RUN_ERROR, message: 'bad API key' }]);
  });

  it('should turn a provider error event in the middle of a stream into RUN_ERROR (3)', async () => {
    const anthropic: AnthropicStreamEvent[] = [
      { type: 'message_start', message: { id: 'msg_1', type: 'message', role: 'assistant', content: [] } },
      { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Let me' } },
      { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } },
    ] as AnthropicStreamEvent[];
    const { events, last, messages } = await accepted(from(anthropic).pipe(fromAnthropicMessages({ generateId: sequentialIds('a-') })));
    expect(last).toEqual({
      type: EventType.RUN_ERROR,
      code: 'PROVIDER_ERROR',
      message:
        "Anthropic failed mid-stream: Overloaded (overloaded_error). Retry the request (overloaded_error and api_error are usually transient); if it keeps failing, check the request and Anthropic's status page.",
    });
    expect(typesOf(events)).toEqual([EventType.RUN_STARTED, EventType.TEXT_MESSAGE_START, EventType.TEXT_MESSAGE_CONTENT, EventType.TEXT_MESSAGE_END, EventType.RUN_ERROR]);
    expect(messages).toEqual([{ id: 'msg_1', role: 'assistant', content: 'Let me' }]);
  });

  it('should close an open message before RUN_FINISHED (4)', async () => {
    const { events, messages, last } = await accepted(
      from<AgentEvent[]>([
        { type: EventType.TEXT_MESSAGE_START, messageId: 'm1', role: 'assistant' },
        { type: EventType.TEXT_MESSAGE_CONTENT, messageId: 'm1', delta: 'Done.' },
        { type: EventType.RUN_FINISHED },
      ]),
    );
    expect(typesOf(events)).toEqual([EventType.RUN_STARTED, EventType.TEXT_MESSAGE_START, EventType.TEXT_MESSAGE_CONTENT, EventType.TEXT_MESSAGE_END, EventType.RUN_FINISHED]);
    expect(last).toEqual({ type: EventType.RUN_FINISHED, ...run, outcome: { type: 'success' } });
    expect(messages).toEqual([{ id: 'm1', role: 'assistant', content: 'Done.' }]);
  });

  it('should end a placeholder message that was started but never ended around a tool call (5)', async () => {
    const { events, messages } = await accepted(
      from<AgentEvent[]>([
        { type: EventType.TEXT_MESSAGE_START, messageId: 'placeholder', role: 'assistant' },
        { type: EventType.TOOL_CALL_CHUNK, toolCallId: 'c1', toolCallName: 'lookup', delta: '{"q":"x"}' },
        { type: EventType.TOOL_CALL_RESULT, toolCallId: 'c1', content: 'found' },
        { type: EventType.TEXT_MESSAGE_CHUNK, delta: 'Found it.' },
      ]),
    );
    expect(events.slice(1)).toEqual([
      { type: EventType.TEXT_MESSAGE_START, messageId: 'placeholder', role: 'assistant' },
      { type: EventType.TOOL_CALL_START, toolCallId: 'c1', toolCallName: 'lookup', parentMessageId: 'placeholder' },
      { type: EventType.TOOL_CALL_ARGS, toolCallId: 'c1', delta: '{"q":"x"}' },
      { type: EventType.TEXT_MESSAGE_END, messageId: 'placeholder' },
      { type: EventType.TOOL_CALL_END, toolCallId: 'c1' },
      { type: EventType.TOOL_CALL_RESULT, toolCallId: 'c1', content: 'found', messageId: 'id-1' },
      { type: EventType.TEXT_MESSAGE_START, messageId: 'id-2', role: 'assistant' },
      { type: EventType.TEXT_MESSAGE_CONTENT, messageId: 'id-2', delta: 'Found it.' },
      { type: EventType.TEXT_MESSAGE_END, messageId: 'id-2' },
      { type: EventType.RUN_FINISHED, ...run, outcome: { type: 'success' } },
    ]);
    expect(messages).toEqual([
      expect.objectContaining({ id: 'placeholder', role: 'assistant', toolCalls: [{ id: 'c1', type: 'function', function: { name: 'lookup', arguments: '{"q":"x"}' } }] }),
      { id: 'id-1', role: 'tool', toolCallId: 'c1', content: 'found' },
      { id: 'id-2', role: 'assistant', content: 'Found it.' },
    ]);
  });

  it('should never send CONTENT after END of the same message id: the message is reopened with START under its id, and the client appends (6)', async () => {
    const { events, messages, diagnostics } = await accepted(
      from<AgentEvent[]>([
        { type: EventType.TEXT_MESSAGE_START, messageId: 'm1', role: 'assistant' },
        { type: EventType.TEXT_MESSAGE_CONTENT, messageId: 'm1', delta: 'Hello' },
        { type: EventType.TEXT_MESSAGE_END, messageId: 'm1' },
        { type: EventType.TEXT_MESSAGE_CONTENT, messageId: 'm1', delta: ' again' },
      ]),
    );
    const endAt = events.findIndex((event) => event.type === EventType.TEXT_MESSAGE_END && (event as { messageId: string }).messageId === 'm1');
    expect(events[endAt + 1]).toEqual({ type: EventType.TEXT_MESSAGE_START, messageId: 'm1', role: 'assistant' });
    expect(messages).toEqual([{ id: 'm1', role: 'assistant', content: 'Hello again' }]);
    expect(diagnostics).toEqual([
      "TEXT_MESSAGE_CONTENT for message 'm1', which was already ended: it was reopened with TEXT_MESSAGE_START under its id, and the client appends to it. Send TEXT_MESSAGE_START before the content of a message you continue.",
    ]);
  });

  it('should keep interleaved parallel calls apart instead of merging them into the first id (7)', async () => {
    const { messages } = await accepted(
      from<AgentEvent[]>([
        { type: EventType.TOOL_CALL_CHUNK, toolCallId: 'c1', toolCallName: 'weather', delta: '{"city":' },
        { type: EventType.TOOL_CALL_CHUNK, toolCallId: 'c2', toolCallName: 'weather', delta: '{"city":' },
        { type: EventType.TOOL_CALL_CHUNK, toolCallId: 'c1', delta: '"Oslo"}' },
        { type: EventType.TOOL_CALL_CHUNK, toolCallId: 'c2', delta: '"Bergen"}' },
      ]),
    );
    expect(messages).toEqual([
      {
        id: 'id-1',
        role: 'assistant',
        toolCalls: [
          { id: 'c1', type: 'function', function: { name: 'weather', arguments: '{"city":"Oslo"}' } },
          { id: 'c2', type: 'function', function: { name: 'weather', arguments: '{"city":"Bergen"}' } },
        ],
      },
    ]);
  });

  it('should give a new id to a call whose provider reuses the function name as the id of an ended call (7)', async () => {
    const { messages } = await accepted(
      from<AgentEvent[]>([
        { type: EventType.TOOL_CALL_CHUNK, toolCallId: 'weather', toolCallName: 'weather', delta: '{"city":"Oslo"}' },
        { type: EventType.TOOL_CALL_RESULT, toolCallId: 'weather', content: '-3' },
        { type: EventType.TOOL_CALL_CHUNK, toolCallId: 'weather', toolCallName: 'weather', delta: '{"city":"Bergen"}' },
        { type: EventType.TOOL_CALL_RESULT, toolCallId: 'weather', content: '4' },
      ]),
    );
    const calls = toolArguments(messages);
    expect(Object.values(calls)).toEqual(['{"city":"Oslo"}', '{"city":"Bergen"}']);
    expect(Object.keys(calls)[0]).toBe('weather');
    expect(Object.keys(calls)[1]).not.toBe('weather');
    const results = (messages as { role: string; toolCallId?: string; content?: unknown }[]).filter((message) => message.role === 'tool');
    expect(results.map(({ toolCallId, content }) => [toolCallId, content])).toEqual([
      ['weather', '-3'],
      [Object.keys(calls)[1], '4'],
    ]);
  });

  // Two calls of the same tool in one turn, a provider that uses the function name as the call id of
  // both, the second opening while the first is still open. A chunk naming the tool for an open id is
  // a continuation (some providers repeat the name on every chunk) unless the open call's arguments are
  // already complete JSON: then it is a second call, under a fresh id.
  it('should keep two parallel calls apart when the provider uses the function name as the id of both while both are open (7)', async () => {
    const { messages } = await accepted(
      from<AgentEvent[]>([
        { type: EventType.TOOL_CALL_CHUNK, toolCallId: 'weather', toolCallName: 'weather', delta: '{"city":"Oslo"}' },
        { type: EventType.TOOL_CALL_CHUNK, toolCallId: 'weather', toolCallName: 'weather', delta: '{"city":"Bergen"}' },
      ]),
    );
    const args = Object.values(toolArguments(messages));
    expect(args).toEqual(['{"city":"Oslo"}', '{"city":"Bergen"}']);
    for (const value of args) expect(() => JSON.parse(value)).not.toThrow();
  });

  it('should carry a call whose arguments arrive whole in one chunk (8)', async () => {
    const whole = '{"query":"rxjs operators","limit":10,"filters":{"lang":["ts","js"]}}';
    const { messages, events } = await accepted(
      from<AgentEvent[]>([
        { type: EventType.TOOL_CALL_CHUNK, toolCallId: 'c1', toolCallName: 'search', delta: whole },
        { type: EventType.TOOL_CALL_START, toolCallId: 'c2', toolCallName: 'search' },
        { type: EventType.TOOL_CALL_ARGS, toolCallId: 'c2', delta: whole },
        { type: EventType.TOOL_CALL_END, toolCallId: 'c2' },
      ]),
    );
    expect(toolArguments(messages)).toEqual({ c1: whole, c2: whole });
    expect(events.filter((event) => event.type === EventType.TOOL_CALL_ARGS)).toEqual([
      { type: EventType.TOOL_CALL_ARGS, toolCallId: 'c1', delta: whole },
      { type: EventType.TOOL_CALL_ARGS, toolCallId: 'c2', delta: whole },
    ]);
  });

  it('should drop ARGS after END of the same call, and say so (9)', async () => {
    const { events, messages, diagnostics } = await accepted(
      from<AgentEvent[]>([
        { type: EventType.TOOL_CALL_START, toolCallId: 'c1', toolCallName: 'search' },
        { type: EventType.TOOL_CALL_ARGS, toolCallId: 'c1', delta: '{"q":1}' },
        { type: EventType.TOOL_CALL_END, toolCallId: 'c1' },
        { type: EventType.TOOL_CALL_ARGS, toolCallId: 'c1', delta: ',"late":true}' },
        { type: EventType.TOOL_CALL_CHUNK, toolCallId: 'c1', delta: 'more' },
      ]),
    );
    const endAt = events.findIndex((event) => event.type === EventType.TOOL_CALL_END);
    expect(typesOf(events.slice(endAt + 1))).toEqual([EventType.RUN_FINISHED]);
    expect(toolArguments(messages)).toEqual({ c1: '{"q":1}' });
    expect(diagnostics).toEqual([
      "Dropped TOOL_CALL_ARGS for tool call 'c1': the call already ended (its arguments were closed). Send all arguments before TOOL_CALL_END or the call's result.",
      "Dropped TOOL_CALL_CHUNK for tool call 'c1': the call already ended (its arguments were closed). Send all arguments before TOOL_CALL_END or the call's result.",
    ]);
  });

  it('should send no empty deltas (10)', async () => {
    const { events, messages } = await accepted(
      from<AgentEvent[]>([
        { type: EventType.TEXT_MESSAGE_CHUNK, delta: '' },
        { type: EventType.TEXT_MESSAGE_CHUNK, delta: 'Hi' },
        { type: EventType.TEXT_MESSAGE_CHUNK, delta: '' },
        { type: EventType.TOOL_CALL_CHUNK, toolCallId: 'c1', toolCallName: 'f', delta: '' },
        { type: EventType.TOOL_CALL_CHUNK, toolCallId: 'c1', delta: '{}' },
        { type: EventType.TOOL_CALL_ARGS, toolCallId: 'c1', delta: '' },
        { type: EventType.TOOL_CALL_RESULT, toolCallId: 'c1', content: 'ok' },
        { type: EventType.REASONING_MESSAGE_CHUNK, delta: '' },
        { type: EventType.REASONING_MESSAGE_CHUNK, delta: 'hmm' },
        { type: EventType.TEXT_MESSAGE_START, messageId: 'm9', role: 'assistant' },
        { type: EventType.TEXT_MESSAGE_CONTENT, messageId: 'm9', delta: '' },
        { type: EventType.TEXT_MESSAGE_CONTENT, messageId: 'm9', delta: 'Bye' },
      ] as AgentEvent[]),
    );
    const deltas = events.filter((event) => 'delta' in event && typeof (event as { delta: unknown }).delta === 'string').map((event) => (event as { delta: string }).delta);
    expect(deltas).toEqual(['Hi', '{}', 'hmm', 'Bye']);
    expect(messages.filter((message) => message.role === 'assistant').map((message) => message.content)).toEqual(['Hi', 'Bye']);
  });

  it.each([
    ['append to a missing array', [{ op: 'add', path: '/todos/-', value: 'buy milk' }]],
    ['replace on a missing key', [{ op: 'replace', path: '/count', value: 1 }]],
    ['add under a missing parent', [{ op: 'add', path: '/user/name', value: 'Ada' }]],
  ])('should drop, with a diagnostic, never send, a STATE_DELTA to %s, keep the state and go on, as the client does (11)', async (_name, delta) => {
    const { events, last, state, diagnostics } = await accepted(
      from<AgentEvent[]>([
        { type: EventType.STATE_DELTA, delta: [{ op: 'add', path: '/seen', value: true }] },
        { type: EventType.STATE_DELTA, delta },
        { type: EventType.STATE_DELTA, delta: [{ op: 'add', path: '/after', value: 1 }] },
      ] as AgentEvent[]),
      {},
      { title: 'x' },
    );
    // AG-UI spec 1.1, Snapshots and Deltas: a well-formed patch that does not apply is warned about and skipped, the state kept.
    expect(last).toMatchObject({ type: EventType.RUN_FINISHED });
    expect(events.filter((event) => event.type === EventType.STATE_DELTA)).toEqual([
      { type: EventType.STATE_DELTA, delta: [{ op: 'add', path: '/seen', value: true }] },
      { type: EventType.STATE_DELTA, delta: [{ op: 'add', path: '/after', value: 1 }] },
    ]);
    expect(state).toEqual({ title: 'x', seen: true, after: 1 });
    expect(diagnostics).toEqual([expect.stringMatching(/^Dropped a STATE_DELTA that does not apply to the current state, which is kept: operation 0/)]);
  });

  it('should close dangling tool calls before RUN_FINISHED cancelled at abort (12)', async () => {
    const controller = new AbortController();
    let subscribed = false;
    // The agent opens two calls, then goes quiet; the run is aborted once the client is reading.
    const agent$ = new Observable<AgentEvent>((subscriber) => {
      subscribed = true;
      subscriber.next({ type: EventType.TEXT_MESSAGE_CHUNK, delta: 'Calling two tools.' });
      subscriber.next({ type: EventType.TOOL_CALL_CHUNK, toolCallId: 'c1', toolCallName: 'a', delta: '{"x":' });
      subscriber.next({ type: EventType.TOOL_CALL_CHUNK, toolCallId: 'c2', toolCallName: 'b' });
      void Promise.resolve().then(() => controller.abort());
      return () => void (subscribed = false);
    });
    const oracle = accepted(agent$, { signal: controller.signal });
    const { events, last } = await oracle;
    expect(subscribed).toBe(false);
    expect(last).toEqual({ type: EventType.RUN_FINISHED, ...run, outcome: { type: 'cancelled' } });
    expect(events.slice(1)).toEqual([
      { type: EventType.TEXT_MESSAGE_START, messageId: 'id-1', role: 'assistant' },
      { type: EventType.TEXT_MESSAGE_CONTENT, messageId: 'id-1', delta: 'Calling two tools.' },
      { type: EventType.TOOL_CALL_START, toolCallId: 'c1', toolCallName: 'a', parentMessageId: 'id-1' },
      { type: EventType.TOOL_CALL_ARGS, toolCallId: 'c1', delta: '{"x":' },
      { type: EventType.TOOL_CALL_START, toolCallId: 'c2', toolCallName: 'b', parentMessageId: 'id-1' },
      // Closed by the lifecycle at abort: unlike the correlator's own close, no "{}" for c2, which got no arguments.
      { type: EventType.TOOL_CALL_END, toolCallId: 'c1' },
      { type: EventType.TOOL_CALL_END, toolCallId: 'c2' },
      { type: EventType.TEXT_MESSAGE_END, messageId: 'id-1' },
      { type: EventType.RUN_FINISHED, ...run, outcome: { type: 'cancelled' } },
    ]);
  });

  it('should keep reasoning and text that share one provider id as two messages (13)', async () => {
    const { messages, events } = await accepted(
      from<AgentEvent[]>([
        { type: EventType.REASONING_MESSAGE_CHUNK, messageId: 'resp_1', delta: 'Thinking about it.' },
        { type: EventType.TEXT_MESSAGE_CHUNK, messageId: 'resp_1', delta: 'The answer is 4.' },
      ]),
    );
    expect(typesOf(events)).toEqual([
      EventType.RUN_STARTED,
      EventType.REASONING_START,
      EventType.REASONING_MESSAGE_START,
      EventType.REASONING_MESSAGE_CONTENT,
      EventType.REASONING_MESSAGE_END,
      EventType.REASONING_END,
      EventType.TEXT_MESSAGE_START,
      EventType.TEXT_MESSAGE_CONTENT,
      EventType.TEXT_MESSAGE_END,
      EventType.RUN_FINISHED,
    ]);
    expect(messages).toEqual([
      { id: 'resp_1', role: 'reasoning', content: 'Thinking about it.' },
      { id: 'id-1', role: 'assistant', content: 'The answer is 4.' },
    ]);
  });

  it('should put the run id it was given on both RUN_STARTED and RUN_FINISHED when upstream ids differ (14)', async () => {
    const { events } = await accepted(
      from<AgentEvent[]>([
        { type: EventType.RUN_STARTED, threadId: 'upstream-thread', runId: 'upstream-A' },
        { type: EventType.TEXT_MESSAGE_CHUNK, delta: 'hi' },
        { type: EventType.RUN_FINISHED, threadId: 'upstream-thread', runId: 'upstream-B' },
      ] as AgentEvent[]),
    );
    const started = events[0] as { type: string; threadId: string; runId: string };
    const finished = events[events.length - 1] as { type: string; threadId: string; runId: string };
    expect([started.type, started.threadId, started.runId]).toEqual([EventType.RUN_STARTED, 'thread-1', 'run-1']);
    expect([finished.type, finished.threadId, finished.runId]).toEqual([EventType.RUN_FINISHED, 'thread-1', 'run-1']);
  });
});

describe('known kinds of AG-UI server bugs, over HTTP', () => {
  let server: Server | undefined;
  afterEach(async () => {
    await closeServer(server);
    server = undefined;
  });

  it('should keep a silent upstream connection open with heartbeat comments before the next event (15)', async () => {
    // Silent for ~300 ms after its first event; the heartbeat fires every 50 ms of idle time.
    const silent: AguiAgent = () =>
      new Observable<AgentEvent>((subscriber) => {
        subscriber.next({ type: EventType.TEXT_MESSAGE_CHUNK, delta: 'Thinking' });
        const timer = setTimeout(() => {
          subscriber.next({ type: EventType.TEXT_MESSAGE_CHUNK, delta: '… done.' });
          subscriber.complete();
        }, 300);
        return () => clearTimeout(timer);
      });
    let url: string;
    ({ server, url } = await listen(createAguiHandler(silent, { heartbeatMs: 50, generateId: sequentialIds() })));
    const body = await new Promise<string>((resolve, reject) => {
      const req = httpRequest(url, { method: 'POST', headers: { 'Content-Type': 'application/json', Accept: 'text/event-stream' } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end(JSON.stringify(input()));
    });
    const firstContent = body.indexOf('"delta":"Thinking"');
    const secondContent = body.indexOf('"delta":"… done."');
    expect(firstContent).toBeGreaterThan(-1);
    expect(secondContent).toBeGreaterThan(firstContent);
    const between = body.slice(firstContent, secondContent);
    expect(between.match(/^: ping$/gm)?.length ?? 0).toBeGreaterThanOrEqual(2);
    // The stream is still a well-formed run: the data lines alone, in order.
    const events = body
      .split('\n')
      .filter((line) => line.startsWith('data: '))
      .map((line) => JSON.parse(line.slice(6)) as Event);
    expect(violations(events)).toEqual([]);
    expect(typesOf(events)).toEqual([
      EventType.RUN_STARTED,
      EventType.TEXT_MESSAGE_START,
      EventType.TEXT_MESSAGE_CONTENT,
      EventType.TEXT_MESSAGE_CONTENT,
      EventType.TEXT_MESSAGE_END,
      EventType.RUN_FINISHED,
    ]);
  });

  it('should unsubscribe the agent and abort its signal when the client disconnects in the middle of a tool call (16)', async () => {
    let agentSignal: AbortSignal | undefined;
    let unsubscribed!: () => void;
    const agentGone = new Promise<void>((resolve) => (unsubscribed = resolve));
    let signalAborted!: () => void;
    const abortSeen = new Promise<void>((resolve) => (signalAborted = resolve));
    const midCall: AguiAgent = (_input, { signal }) =>
      new Observable<AgentEvent>((subscriber) => {
        agentSignal = signal;
        signal.addEventListener('abort', () => signalAborted());
        subscriber.next({ type: EventType.TOOL_CALL_CHUNK, toolCallId: 'c1', toolCallName: 'slow', delta: '{"a":' });
        const inner = NEVER.subscribe(subscriber as Observer<AgentEvent>);
        return () => {
          inner.unsubscribe();
          unsubscribed();
        };
      });
    let url: string;
    ({ server, url } = await listen(createAguiHandler(midCall, { heartbeatMs: 0, generateId: sequentialIds() })));
    const controller = new AbortController();
    const response = await fetch(url, { method: 'POST', body: JSON.stringify(input()), headers: { 'Content-Type': 'application/json' }, signal: controller.signal });
    const reader = response.body!.getReader();
    let received = '';
    while (!received.includes('TOOL_CALL_ARGS')) {
      const { value, done } = await reader.read();
      if (done) break;
      received += new TextDecoder().decode(value);
    }
    expect(received).toContain('"toolCallId":"c1"');
    expect(received).not.toContain('TOOL_CALL_END');
    controller.abort();
    await agentGone;
    await abortSeen;
    expect(agentSignal?.aborted).toBe(true);
  });
});
