import { EventType, type RunAgentInput } from '@ag-ui/core';
import { firstValueFrom, take } from 'rxjs';
import type { ChatCompletionChunk } from '../../../lib/adapters/index.js';
import type { ChatModelRequest } from '../../../lib/demo/chatTypes.js';
import { createOpenAIAgent, DEMO_SYSTEM_PROMPT } from '../../../lib/demo/openAIAgent.js';
import { scriptedChunks } from '../../../lib/demo/scriptedAgent.js';
import { getWeather } from '../../../lib/demo/tools.js';
import { toAgui } from '../../../operators/toAgui.js';
import { collect, sequentialIds } from '../../support/helpers.js';
import { fakeProvider, leaveDemoServerMidRun } from '../../support/fakeProvider.js';
import { runWithOracle } from '../../support/oracle.js';

const NOW = new Date('2026-11-29T12:34:00Z');
const now = () => NOW;

const input = (text: string): RunAgentInput => ({
  threadId: 'thread-1',
  runId: 'run-1',
  state: {},
  messages: [{ id: 'user-1', role: 'user', content: text }],
  tools: [],
  context: [],
});

/** An SSE body as OpenAI sends it, cut into network reads of uneven sizes (frames split mid-way). */
function sseBytes(chunks: readonly (ChatCompletionChunk | '[DONE]')[]): Uint8Array[] {
  const text = chunks.map((chunk) => `data: ${chunk === '[DONE]' ? chunk : JSON.stringify(chunk)}\n\n`).join('');
  const bytes = new TextEncoder().encode(text);
  const reads: Uint8Array[] = [];
  for (let at = 0, i = 0; at < bytes.length; i++) {
    const size = [97, 13, 250, 41][i % 4];
    reads.push(bytes.slice(at, at + size));
    at += size;
  }
  return reads;
}

/** A fake `fetch` that answers each request with the scripted model's SSE for it, and records the requests. */
function fakeOpenAI(options: { hang?: boolean } = {}) {
  const ids = sequentialIds('id-');
  return fakeProvider<{ messages: ChatModelRequest['messages']; [key: string]: unknown }>((body) => sseBytes(scriptedChunks({ messages: body.messages, tools: body.tools as ChatModelRequest['tools'] }, { now, generateId: ids })), { ...options, hangAfter: 8 });
}

describe('createOpenAIAgent', () => {
  it('should stream two turns with fetch, run the tools locally and send their results back in the second request', async () => {
    const fake = fakeOpenAI();
    const agent = createOpenAIAgent({ apiKey: 'sk-test', fetch: fake.fetch, now });
    const run = await runWithOracle(() => agent(input('Weather in Paris?'), { signal: new AbortController().signal }).pipe(toAgui({ threadId: 'thread-1', runId: 'run-1' })), {
      initialMessages: input('Weather in Paris?').messages,
    });

    expect(fake.calls.map((call) => call.url)).toEqual(['https://api.openai.com/v1/chat/completions', 'https://api.openai.com/v1/chat/completions']);
    const [first, second] = fake.calls;
    expect(first.init.method).toBe('POST');
    expect(first.init.headers).toEqual({ Authorization: 'Bearer sk-test', 'Content-Type': 'application/json', Accept: 'text/event-stream' });
    expect(first.body).toEqual({
      model: 'gpt-4o-mini',
      messages: [
        { role: 'system', content: DEMO_SYSTEM_PROMPT },
        { role: 'user', content: 'Weather in Paris?' },
      ],
      tools: [
        { type: 'function', function: expect.objectContaining({ name: 'get_weather', parameters: expect.objectContaining({ required: ['city'] }) }) },
        { type: 'function', function: expect.objectContaining({ name: 'get_time', parameters: expect.objectContaining({ required: ['timezone'] }) }) },
      ],
      parallel_tool_calls: true,
      stream: true,
      stream_options: { include_usage: true },
    });
    expect(second.body.messages).toEqual([
      { role: 'system', content: DEMO_SYSTEM_PROMPT },
      { role: 'user', content: 'Weather in Paris?' },
      {
        role: 'assistant',
        content: 'Let me look up the weather and the local time in Paris.',
        tool_calls: [
          { id: 'call_id-2', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
          { id: 'call_id-3', type: 'function', function: { name: 'get_time', arguments: '{"timezone":"Europe/Paris"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_id-2', content: JSON.stringify(getWeather.run({ city: 'Paris' }, { now })) },
      { role: 'tool', tool_call_id: 'call_id-3', content: '{"timezone":"Europe/Paris","date":"2026-11-29","time":"13:34","weekday":"Sunday"}' },
    ]);

    const roles = run.messages.filter((message) => message.role !== 'reasoning').map((message) => message.role);
    expect(roles).toEqual(['user', 'assistant', 'tool', 'tool', 'assistant']);
    expect(run.messages[run.messages.length - 1]).toMatchObject({ role: 'assistant', content: expect.stringMatching(/^In Paris it is .* 13:34 on Sunday/) });
    expect(run.state).toEqual({ lastCity: 'Paris', lastTimezone: 'Europe/Paris', lookups: 2 });
  });

  it('should use OPENAI_MODEL and a base URL when given', async () => {
    const fake = fakeOpenAI();
    const agent = createOpenAIAgent({ apiKey: 'k', model: 'gpt-4.1-nano', baseUrl: 'http://127.0.0.1:9/v1/', fetch: fake.fetch, now });
    await collect(agent(input('Rome'), { signal: new AbortController().signal }));
    expect(fake.calls[0].url).toBe('http://127.0.0.1:9/v1/chat/completions');
    expect(fake.calls[0].body.model).toBe('gpt-4.1-nano');
  });

  it('should abort the request when unsubscribed', async () => {
    const fake = fakeOpenAI({ hang: true });
    const agent = createOpenAIAgent({ apiKey: 'sk-test', fetch: fake.fetch, now });
    const first = await firstValueFrom(agent(input('Rome'), { signal: new AbortController().signal }).pipe(take(1)));
    expect(first.type).toBe(EventType.REASONING_MESSAGE_CHUNK);
    await fake.abortSeen;
    expect(fake.calls).toHaveLength(1);
    expect(fake.calls[0].init.signal!.aborted).toBe(true);
  });

  it('should abort the request when the browser goes away from the demo server for longer than its detachGraceMs', async () => {
    const fake = fakeOpenAI({ hang: true });
    expect(await leaveDemoServerMidRun(createOpenAIAgent({ apiKey: 'sk-test', fetch: fake.fetch, now }), input('Rome'), fake.abortSeen)).toContain('"type":"RUN_STARTED"');
    expect(fake.calls[0].init.signal!.aborted).toBe(true);
  });

  it('should end the run with RUN_ERROR saying what to check when OpenAI answers an HTTP error', async () => {
    const fetch = (async () => new Response('{"error":{"message":"Incorrect API key provided: sk-bad."}}', { status: 401, statusText: 'Unauthorized' })) as unknown as typeof globalThis.fetch;
    const agent = createOpenAIAgent({ apiKey: 'sk-bad', fetch });
    const events = await collect(agent(input('Rome'), { signal: new AbortController().signal }).pipe(toAgui({ threadId: 't', runId: 'r' })));
    expect(events[events.length - 1]).toEqual({
      type: EventType.RUN_ERROR,
      code: 'MODEL_HTTP_ERROR',
      message:
        "https://api.openai.com/v1/chat/completions answered HTTP 401 Unauthorized: {\"error\":{\"message\":\"Incorrect API key provided: sk-bad.\"}}. Check OPENAI_API_KEY and OPENAI_MODEL (now 'gpt-4o-mini').",
    });
  });

  it('should end the run with RUN_ERROR when OpenAI cannot be reached', async () => {
    const fetch = (async () => {
      throw Object.assign(new TypeError('fetch failed'), { cause: new Error('getaddrinfo ENOTFOUND api.openai.com') });
    }) as unknown as typeof globalThis.fetch;
    const events = await collect(createOpenAIAgent({ apiKey: 'k', fetch })(input('Rome'), { signal: new AbortController().signal }).pipe(toAgui({ threadId: 't', runId: 'r' })));
    expect(events[events.length - 1]).toMatchObject({
      type: EventType.RUN_ERROR,
      code: 'MODEL_UNREACHABLE',
      message: expect.stringContaining('Could not reach https://api.openai.com/v1/chat/completions: fetch failed (getaddrinfo ENOTFOUND api.openai.com).'),
    });
  });

  it('should end the run with RUN_ERROR when the stream carries an error object', async () => {
    const body = 'data: {"error":{"message":"The server had an error.","type":"server_error"}}\n\n';
    const fetch = (async () => new Response(body, { status: 200 })) as unknown as typeof globalThis.fetch;
    const events = await collect(createOpenAIAgent({ apiKey: 'k', fetch })(input('Rome'), { signal: new AbortController().signal }).pipe(toAgui({ threadId: 't', runId: 'r' })));
    expect(events[events.length - 1]).toMatchObject({ type: EventType.RUN_ERROR, code: 'PROVIDER_ERROR', message: expect.stringContaining('The server had an error.') });
  });
});
