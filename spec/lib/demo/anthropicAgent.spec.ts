import { HttpAgent } from '@ag-ui/client';
import { EventType, type BaseEvent, type Message, type RunAgentInput } from '@ag-ui/core';
import { firstValueFrom, take } from 'rxjs';
import type { AnthropicStreamEvent } from '../../../lib/adapters/index.js';
import { createAnthropicAgent } from '../../../lib/demo/anthropicAgent.js';
import { DEMO_SYSTEM_PROMPT } from '../../../lib/demo/openAIAgent.js';
import { startDemoServer } from '../../../lib/demo/server.js';
import { getWeather } from '../../../lib/demo/tools.js';
import { toAgui } from '../../../operators/toAgui.js';
import { collect } from '../../support/helpers.js';
import { fakeProvider, leaveDemoServerMidRun } from '../../support/fakeProvider.js';
import { runWithOracle } from '../../support/oracle.js';

const NOW = new Date('2026-11-29T12:34:00Z');
const now = () => NOW;

const input = (text: string, earlier: Message[] = []): RunAgentInput => ({
  threadId: 'thread-1',
  runId: 'run-1',
  state: {},
  messages: [...earlier, { id: 'user-1', role: 'user', content: text }],
  tools: [],
  context: [],
});

const WEATHER_PARIS = JSON.stringify(getWeather.run({ city: 'Paris' }, { now }));
const TIME_PARIS = '{"timezone":"Europe/Paris","date":"2026-11-29","time":"13:34","weekday":"Sunday"}';

/** An SSE body as Anthropic sends it (`event:` then `data:`), cut into network reads of uneven sizes (frames split mid-way). */
function sseBytes(events: readonly AnthropicStreamEvent[]): Uint8Array[] {
  const text = events.map((event) => `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`).join('');
  const bytes = new TextEncoder().encode(text);
  const reads: Uint8Array[] = [];
  for (let at = 0, i = 0; at < bytes.length; i++) {
    const size = [97, 13, 250, 41][i % 4];
    reads.push(bytes.slice(at, at + size));
    at += size;
  }
  return reads;
}

interface AnthropicRequestBody {
  model: string;
  max_tokens: number;
  system?: string;
  messages: { role: 'user' | 'assistant'; content: { type: string; [key: string]: unknown }[] }[];
  tools?: { name: string; description: string; input_schema: Record<string, unknown> }[];
  stream: boolean;
}

/** Anthropic's turn 1: a sentence, then get_weather and get_time as two tool_use blocks (arguments in pieces). */
function toolUseTurn(): AnthropicStreamEvent[] {
  return [
    { type: 'message_start', message: { id: 'msg_01', type: 'message', role: 'assistant', model: 'claude-sonnet-4-5', content: [], usage: { input_tokens: 420, output_tokens: 1 } } },
    { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
    { type: 'ping' },
    { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Let me check Paris' } },
    { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: ' for you.' } },
    { type: 'content_block_stop', index: 0 },
    { type: 'content_block_start', index: 1, content_block: { type: 'tool_use', id: 'toolu_weather', name: 'get_weather', input: {} } },
    { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '' } },
    { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '{"city": ' } },
    { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '"Paris"}' } },
    { type: 'content_block_stop', index: 1 },
    { type: 'content_block_start', index: 2, content_block: { type: 'tool_use', id: 'toolu_time', name: 'get_time', input: {} } },
    { type: 'content_block_delta', index: 2, delta: { type: 'input_json_delta', partial_json: '{"timezone": "Europe/Paris"}' } },
    { type: 'content_block_stop', index: 2 },
    { type: 'message_delta', delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: { output_tokens: 88 } },
    { type: 'message_stop' },
  ] as AnthropicStreamEvent[];
}

/** Anthropic's turn 2: an answer that quotes the tool results it was sent. */
function answerTurn(results: string[]): AnthropicStreamEvent[] {
  const time = JSON.parse(results.find((result) => result.includes('timezone')) ?? '{}') as { time?: string; weekday?: string };
  return [
    { type: 'message_start', message: { id: 'msg_02', type: 'message', role: 'assistant', model: 'claude-sonnet-4-5', content: [], usage: { input_tokens: 610, output_tokens: 1 } } },
    { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
    { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: `In Paris it is ${time.time} on ${time.weekday}` } },
    { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: `; ${results.length} lookups done.` } },
    { type: 'content_block_stop', index: 0 },
    { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 21 } },
    { type: 'message_stop' },
  ] as AnthropicStreamEvent[];
}

/**
 * A fake `fetch` playing the Anthropic Messages API: a request whose last user turn holds
 * tool_result blocks gets the answer, any other the tool_use turn. Records the requests.
 */
function fakeAnthropic(options: { hang?: boolean } = {}) {
  return fakeProvider<AnthropicRequestBody>((body) => {
    const last = body.messages[body.messages.length - 1];
    const results = last.content.filter((block) => block.type === 'tool_result').map((block) => String(block.content));
    return sseBytes(results.length > 0 ? answerTurn(results) : toolUseTurn());
  }, { ...options, hangAfter: 6 });
}

/** A `fetch` that answers every request with `body` and `status`. */
const answering = (body: string, init: ResponseInit) => (async () => new Response(body, init)) as unknown as typeof globalThis.fetch;

const runEvents = (agent: ReturnType<typeof createAnthropicAgent>, text: string) =>
  collect(agent(input(text), { signal: new AbortController().signal }).pipe(toAgui({ threadId: 't', runId: 'r' })));

describe('createAnthropicAgent', () => {
  it('should stream two turns from the Messages API, run the tools locally and send their results back as tool_result blocks', async () => {
    const fake = fakeAnthropic();
    const agent = createAnthropicAgent({ apiKey: 'sk-ant-test', fetch: fake.fetch, now });
    const run = await runWithOracle(() => agent(input('Weather in Paris?'), { signal: new AbortController().signal }).pipe(toAgui({ threadId: 'thread-1', runId: 'run-1' })), {
      initialMessages: input('Weather in Paris?').messages,
    });

    expect(fake.calls.map((call) => call.url)).toEqual(['https://api.anthropic.com/v1/messages', 'https://api.anthropic.com/v1/messages']);
    const [first, second] = fake.calls;
    expect(first.init.method).toBe('POST');
    expect(first.init.headers).toEqual({ 'x-api-key': 'sk-ant-test', 'anthropic-version': '2023-06-01', 'content-type': 'application/json' });
    expect(first.body).toEqual({
      model: 'claude-sonnet-4-5',
      max_tokens: 4096,
      system: DEMO_SYSTEM_PROMPT,
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Weather in Paris?' }] }],
      tools: [
        { name: 'get_weather', description: expect.stringContaining('Current weather'), input_schema: expect.objectContaining({ type: 'object', required: ['city'] }) },
        { name: 'get_time', description: expect.stringContaining('IANA'), input_schema: expect.objectContaining({ type: 'object', required: ['timezone'] }) },
      ],
      stream: true,
    });
    expect(second.body.system).toBe(DEMO_SYSTEM_PROMPT);
    expect(second.body.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'Weather in Paris?' }] },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Let me check Paris for you.' },
          { type: 'tool_use', id: 'toolu_weather', name: 'get_weather', input: { city: 'Paris' } },
          { type: 'tool_use', id: 'toolu_time', name: 'get_time', input: { timezone: 'Europe/Paris' } },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'toolu_weather', content: WEATHER_PARIS },
          { type: 'tool_result', tool_use_id: 'toolu_time', content: TIME_PARIS },
        ],
      },
    ]);

    expect(run.messages).toEqual([
      { id: 'user-1', role: 'user', content: 'Weather in Paris?' },
      {
        id: 'msg_01',
        role: 'assistant',
        content: 'Let me check Paris for you.',
        toolCalls: [
          { id: 'toolu_weather', type: 'function', function: { name: 'get_weather', arguments: '{"city": "Paris"}' } },
          { id: 'toolu_time', type: 'function', function: { name: 'get_time', arguments: '{"timezone": "Europe/Paris"}' } },
        ],
      },
      { id: expect.any(String), role: 'tool', toolCallId: 'toolu_weather', content: WEATHER_PARIS },
      { id: expect.any(String), role: 'tool', toolCallId: 'toolu_time', content: TIME_PARIS },
      { id: 'msg_02', role: 'assistant', content: 'In Paris it is 13:34 on Sunday; 2 lookups done.' },
    ]);
    expect(run.state).toEqual({ lastCity: 'Paris', lastTimezone: 'Europe/Paris', lookups: 2 });
    const finished = run.events[run.events.length - 1] as BaseEvent & { usage?: unknown };
    expect(finished.type).toBe(EventType.RUN_FINISHED);
    expect(JSON.stringify(finished.usage)).toContain('claude-sonnet-4-5');
  });

  it('should use the model, max_tokens and base URL given, and put the client’s system messages after the demo’s prompt', async () => {
    const fake = fakeAnthropic();
    const agent = createAnthropicAgent({ apiKey: 'k', model: 'claude-haiku-4-5', maxTokens: 512, baseUrl: 'http://127.0.0.1:9/', fetch: fake.fetch, now });
    await collect(agent(input('Rome', [{ id: 's', role: 'system', content: 'Answer in Italian.' }]), { signal: new AbortController().signal }));
    expect(fake.calls[0].url).toBe('http://127.0.0.1:9/v1/messages');
    expect(fake.calls[0].body).toMatchObject({ model: 'claude-haiku-4-5', max_tokens: 512, system: `${DEMO_SYSTEM_PROMPT}\n\nAnswer in Italian.` });
  });

  it('should leave out of the request what Anthropic would refuse: unanswered tool calls of a stopped run, reasoning', async () => {
    const fake = fakeAnthropic();
    const agent = createAnthropicAgent({ apiKey: 'k', fetch: fake.fetch, now });
    const earlier: Message[] = [
      { id: 'u0', role: 'user', content: 'Weather in Oslo?' },
      { id: 'r0', role: 'reasoning', content: 'The user wants Oslo.' },
      { id: 'a0', role: 'assistant', content: 'Checking.', toolCalls: [{ id: 'toolu_stopped', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Os' } }] },
      { id: 'a1', role: 'assistant', toolCalls: [{ id: 'toolu_lost', type: 'function', function: { name: 'get_time', arguments: '{}' } }] },
    ];
    await collect(agent(input('Never mind. Paris?', earlier), { signal: new AbortController().signal }));
    expect(fake.calls[0].body.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'Weather in Oslo?' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'Checking.' }] },
      { role: 'user', content: [{ type: 'text', text: 'Never mind. Paris?' }] },
    ]);
  });

  it('should abort the request when unsubscribed', async () => {
    const fake = fakeAnthropic({ hang: true });
    const agent = createAnthropicAgent({ apiKey: 'k', fetch: fake.fetch, now });
    const first = await firstValueFrom(agent(input('Rome'), { signal: new AbortController().signal }).pipe(take(1)));
    expect(first).toMatchObject({ type: EventType.TEXT_MESSAGE_CHUNK, messageId: 'msg_01' });
    await fake.abortSeen;
    expect(fake.calls).toHaveLength(1);
    expect(fake.calls[0].init.signal!.aborted).toBe(true);
  });

  it('should abort the request when the browser goes away from the demo server for longer than its detachGraceMs', async () => {
    const fake = fakeAnthropic({ hang: true });
    expect(await leaveDemoServerMidRun(createAnthropicAgent({ apiKey: 'k', fetch: fake.fetch, now }), input('Rome'), fake.abortSeen)).toContain('"type":"RUN_STARTED"');
    expect(fake.calls[0].init.signal!.aborted).toBe(true);
  });

  it('should end the run with RUN_ERROR saying to check ANTHROPIC_API_KEY on HTTP 401', async () => {
    const body = '{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}';
    const events = await runEvents(createAnthropicAgent({ apiKey: 'bad', fetch: answering(body, { status: 401, statusText: 'Unauthorized' }) }), 'Rome');
    expect(events[events.length - 1]).toEqual({
      type: EventType.RUN_ERROR,
      code: 'MODEL_HTTP_ERROR',
      message: `https://api.anthropic.com/v1/messages answered HTTP 401 Unauthorized: ${body}. Check ANTHROPIC_API_KEY: it must be a valid key of the Anthropic API (console.anthropic.com), with access to the model.`,
    });
  });

  it('should end the run with RUN_ERROR saying to try again on HTTP 529 (overloaded), and name the model on 404', async () => {
    const overloaded = '{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}';
    const events = await runEvents(createAnthropicAgent({ apiKey: 'k', fetch: answering(overloaded, { status: 529 }) }), 'Rome');
    expect(events[events.length - 1]).toEqual({
      type: EventType.RUN_ERROR,
      code: 'MODEL_HTTP_ERROR',
      message: `https://api.anthropic.com/v1/messages answered HTTP 529: ${overloaded}. Anthropic is overloaded: try again in a moment.`,
    });
    const missing = await runEvents(createAnthropicAgent({ apiKey: 'k', model: 'claude-9', fetch: answering('{"type":"error","error":{"type":"not_found_error","message":"model: claude-9"}}', { status: 404 }) }), 'Rome');
    expect(missing[missing.length - 1]).toMatchObject({ type: EventType.RUN_ERROR, code: 'MODEL_HTTP_ERROR', message: expect.stringContaining("Check ANTHROPIC_MODEL (now 'claude-9')") });
  });

  it('should end the run with RUN_ERROR, after what was streamed, when the stream carries an error event', async () => {
    const events = [
      ...toolUseTurn().slice(0, 5),
      { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } },
    ] as AnthropicStreamEvent[];
    const body = events.map((event) => `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`).join('');
    const out = await runEvents(createAnthropicAgent({ apiKey: 'k', fetch: answering(body, { status: 200 }) }), 'Rome');
    expect(out.filter((event) => event.type === EventType.TEXT_MESSAGE_CONTENT).map((event) => (event as { delta: string }).delta).join('')).toBe('Let me check Paris for you.');
    expect(out[out.length - 1]).toMatchObject({
      type: EventType.RUN_ERROR,
      code: 'PROVIDER_ERROR',
      message: expect.stringMatching(/^Anthropic failed mid-stream: Overloaded \(overloaded_error\)\. Retry the request/),
    });
  });

  it('should end the run with RUN_ERROR when Anthropic cannot be reached, or sends data that is not JSON', async () => {
    const unreachable = (async () => {
      throw Object.assign(new TypeError('fetch failed'), { cause: new Error('getaddrinfo ENOTFOUND api.anthropic.com') });
    }) as unknown as typeof globalThis.fetch;
    const events = await runEvents(createAnthropicAgent({ apiKey: 'k', fetch: unreachable }), 'Rome');
    expect(events[events.length - 1]).toEqual({
      type: EventType.RUN_ERROR,
      code: 'MODEL_UNREACHABLE',
      message:
        'Could not reach https://api.anthropic.com/v1/messages: fetch failed (getaddrinfo ENOTFOUND api.anthropic.com). Check the network (or ANTHROPIC_BASE_URL), or unset ANTHROPIC_API_KEY to use the scripted agent.',
    });
    const html = await runEvents(createAnthropicAgent({ apiKey: 'k', fetch: answering('data: <html>\n\n', { status: 200 }) }), 'Rome');
    expect(html[html.length - 1]).toMatchObject({ type: EventType.RUN_ERROR, code: 'INVALID_EVENT', message: expect.stringContaining('Is the base URL the Anthropic API?') });
  });
});

describe('the demo server with the Anthropic agent', () => {
  it('should serve the official HttpAgent the run: text, two tool calls, their results, state, the final answer', async () => {
    const fake = fakeAnthropic();
    const server = await startDemoServer({ port: 0, agent: createAnthropicAgent({ apiKey: 'k', fetch: fake.fetch, now }), page: { agentLabel: 'Anthropic · test', adapter: 'fromAnthropicMessages()' } });
    try {
      const agent = new HttpAgent({ url: `${server.url}agent`, threadId: 'thread-1', initialMessages: [{ id: 'user-1', role: 'user', content: 'Weather in Paris?' }], initialState: { theme: 'dark' } });
      const events: BaseEvent[] = [];
      await agent.runAgent({ runId: 'run-1' }, { onEvent: ({ event }) => void events.push(event) });
      expect(agent.messages).toEqual([
        { id: 'user-1', role: 'user', content: 'Weather in Paris?' },
        {
          id: 'msg_01',
          role: 'assistant',
          content: 'Let me check Paris for you.',
          toolCalls: [
            { id: 'toolu_weather', type: 'function', function: { name: 'get_weather', arguments: '{"city": "Paris"}' } },
            { id: 'toolu_time', type: 'function', function: { name: 'get_time', arguments: '{"timezone": "Europe/Paris"}' } },
          ],
        },
        { id: expect.any(String), role: 'tool', toolCallId: 'toolu_weather', content: WEATHER_PARIS },
        { id: expect.any(String), role: 'tool', toolCallId: 'toolu_time', content: TIME_PARIS },
        { id: 'msg_02', role: 'assistant', content: 'In Paris it is 13:34 on Sunday; 2 lookups done.' },
      ]);
      expect(agent.state).toEqual({ theme: 'dark', lastCity: 'Paris', lastTimezone: 'Europe/Paris', lookups: 2 });
      expect(events[events.length - 1]).toMatchObject({ type: EventType.RUN_FINISHED, threadId: 'thread-1', runId: 'run-1' });
      expect(fake.calls).toHaveLength(2);
      const page = await (await fetch(server.url)).text();
      expect(page).toContain('<code>fromAnthropicMessages()</code>');
    } finally {
      await server.close();
    }
  });
});
