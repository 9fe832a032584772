import { HttpAgent } from '@ag-ui/client';
import { EventType, type AssistantMessage, type BaseEvent } from '@ag-ui/core';
import { existsSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { ChatCompletionChunk } from '../../../lib/adapters/index.js';
import type { BrokerActivity } from '../../../lib/broker/createRunBroker.js';
import { createMemoryRunStore } from '../../../lib/broker/createMemoryRunStore.js';
import { createReplayAgent, parseTranscript, readTranscript } from '../../../lib/demo/replayAgent.js';
import { createScriptedAgent } from '../../../lib/demo/scriptedAgent.js';
import { startDemoServer, type DemoServer } from '../../../lib/demo/server.js';
import { getWeather } from '../../../lib/demo/tools.js';
import { collect, sequentialIds } from '../../support/helpers.js';

const input = { threadId: 't', runId: 'r', messages: [], tools: [], context: [] };

const NOW = new Date('2026-11-29T12:34:00Z');
const now = () => NOW;

/** One SSE frame as the broker routes send it: its `id:` (cursor) and its event. */
interface Frame {
  id?: string;
  event: { type: string; [field: string]: unknown };
}

/** The frames of an SSE body. */
function framesOf(text: string): Frame[] {
  return text
    .split('\n\n')
    .filter((frame) => frame.includes('data: '))
    .map((frame) => {
      const id = /^id: (.*)$/m.exec(frame)?.[1];
      return { ...(id === undefined ? {} : { id }), event: JSON.parse(/^data: (.*)$/m.exec(frame)![1]) };
    });
}

/** Reads a streaming response until it has `count` frames; the rest is left unread (cancel it or read it with `rest`). */
async function readFrames(response: Response, count: number) {
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  while (framesOf(text).length < count) {
    const { done, value } = await reader.read();
    if (done) break;
    text += decoder.decode(value, { stream: true });
  }
  const complete = text.slice(0, text.lastIndexOf('\n\n') + 2);
  return {
    frames: framesOf(complete),
    /** The frames after those, to the end of the stream. */
    rest: async () => {
      let more = text.slice(complete.length);
      for (let read = await reader.read(); !read.done; read = await reader.read()) more += decoder.decode(read.value, { stream: true });
      return framesOf(more);
    },
    cancel: () => reader.cancel(),
  };
}

const post = (url: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(url, { method: 'POST', headers: { 'Content-Type': 'application/json', Accept: 'text/event-stream', ...headers }, body: JSON.stringify(body) });

const runInput = (threadId: string, runId: string, text: string) => ({ threadId, runId, state: {}, messages: [{ id: `${runId}-user`, role: 'user', content: text }], tools: [], context: [] });

/** The broker activity of a server, and a promise of the first activity of a kind. */
function activities() {
  const seen: BrokerActivity[] = [];
  const waiting: { type: BrokerActivity['type']; resolve: (activity: BrokerActivity) => void }[] = [];
  return {
    seen,
    onActivity(activity: BrokerActivity) {
      seen.push(activity);
      for (const waiter of waiting.filter((candidate) => candidate.type === activity.type)) waiter.resolve(activity);
    },
    next<T extends BrokerActivity['type']>(type: T): Promise<BrokerActivity & { type: T }> {
      const known = seen.find((activity) => activity.type === type);
      if (known) return Promise.resolve(known as BrokerActivity & { type: T });
      return new Promise((resolve) => waiting.push({ type, resolve: resolve as (activity: BrokerActivity) => void }));
    },
  };
}

/** Runs the official HttpAgent once against `url` and returns what it built. */
async function runHttpAgent(url: string, text: string, state: Record<string, unknown> = {}) {
  const agent = new HttpAgent({ url, threadId: 'thread-1', initialMessages: [{ id: 'user-1', role: 'user', content: text }], initialState: state });
  const events: BaseEvent[] = [];
  await agent.runAgent({ runId: 'run-1' }, { onEvent: ({ event }) => void events.push(event) });
  return { messages: agent.messages, state: agent.state, events };
}

describe('startDemoServer', () => {
  let server: DemoServer;

  beforeAll(async () => {
    server = await startDemoServer({ port: 0, agent: createScriptedAgent({ pace: 0, toolLatency: 0, now, generateId: sequentialIds('id-') }), page: { agentLabel: 'scripted' } });
  });

  afterAll(() => server.close());

  it('should serve the official HttpAgent the scripted run: text, two parallel tool calls, their results, state, a final answer', async () => {
    const run = await runHttpAgent(`${server.url}agent`, 'What is the weather in Tokyo?', { theme: 'dark' });
    const messages = run.messages.filter((message) => message.role !== 'reasoning');
    expect(messages).toEqual([
      { id: 'user-1', role: 'user', content: 'What is the weather in Tokyo?' },
      {
        id: 'chatcmpl-id-1',
        role: 'assistant',
        content: 'Let me look up the weather and the local time in Tokyo.',
        toolCalls: [
          { id: 'call_id-2', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Tokyo"}' } },
          { id: 'call_id-3', type: 'function', function: { name: 'get_time', arguments: '{"timezone":"Asia/Tokyo"}' } },
        ],
      },
      { id: expect.any(String), role: 'tool', toolCallId: 'call_id-2', content: JSON.stringify(getWeather.run({ city: 'Tokyo' }, { now })) },
      { id: expect.any(String), role: 'tool', toolCallId: 'call_id-3', content: '{"timezone":"Asia/Tokyo","date":"2026-11-29","time":"21:34","weekday":"Sunday"}' },
      { id: 'chatcmpl-id-4', role: 'assistant', content: expect.stringMatching(/^In Tokyo it is -?\d+ °C and .* The local time there is 21:34 on Sunday \(2026-11-29, Asia\/Tokyo\)\./) },
    ]);
    expect(run.messages.find((message) => message.role === 'reasoning')).toMatchObject({ content: expect.stringContaining('get_weather and get_time in parallel') });
    expect(run.state).toEqual({ theme: 'dark', lastCity: 'Tokyo', lastTimezone: 'Asia/Tokyo', lookups: 2 });
    expect(run.events[run.events.length - 1]).toMatchObject({ type: EventType.RUN_FINISHED, threadId: 'thread-1', runId: 'run-1' });
  });

  it('should serve the page at / and refuse other paths and methods', async () => {
    const page = await fetch(server.url);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const html = await page.text();
    expect(html).toContain('<title>agui-rx demo</title>');
    expect(html).toContain('"agentLabel":"scripted"');
    // Single file: no external script, stylesheet or image.
    expect(html).not.toMatch(/<script[^>]+src=|<link[^>]+stylesheet|<img/);

    expect((await fetch(`${server.url}nothing`)).status).toBe(404);
    expect((await fetch(`${server.url}agent/threads/t/runs/nope/events`)).status).toBe(404);
    expect((await fetch(server.url, { method: 'POST' })).status).toBe(405);
    const get = await fetch(`${server.url}agent`);
    expect(get.status).toBe(405);
    expect(await get.json()).toEqual({ error: expect.stringContaining('POST a RunAgentInput') });
  });

  it('should stream SSE frames to a plain fetch that asks for text/event-stream', async () => {
    const response = await fetch(`${server.url}agent`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'text/event-stream' },
      body: JSON.stringify({ threadId: 't', runId: 'r', state: {}, messages: [{ id: 'u', role: 'user', content: 'Oslo' }], tools: [], context: [] }),
    });
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const types = framesOf(await response.text()).map((frame) => frame.event.type);
    expect(types[0]).toBe(EventType.RUN_STARTED);
    expect(types[types.length - 1]).toBe(EventType.RUN_FINISHED);
    expect(types.filter((type) => type === EventType.TOOL_CALL_RESULT)).toHaveLength(2);
  });

  it('should serve the run broker under /agent: frames with ids, resume after Last-Event-ID, connect, stop', async () => {
    const all = framesOf(await (await post(`${server.url}agent`, runInput('broker-thread', 'run-1', 'Oslo'))).text());
    expect(all.every((frame) => frame.id !== undefined && frame.id !== '')).toBe(true);
    expect(all[all.length - 1].event.type).toBe(EventType.RUN_FINISHED);

    // Route 2: strictly after the cursor, the same frames.
    const after = all[4].id!;
    const resumed = await fetch(`${server.url}agent/threads/broker-thread/runs/run-1/events`, { headers: { Accept: 'text/event-stream', 'Last-Event-ID': after } });
    expect(framesOf(await resumed.text())).toEqual(all.slice(5));
    // Route 1 again with the same runId attaches: the agent is not started twice.
    expect(framesOf(await (await post(`${server.url}agent`, runInput('broker-thread', 'run-1', 'Oslo'), { 'Last-Event-ID': after })).text())).toEqual(all.slice(5));

    // Route 3: the finished run compacted, without ids.
    const connected = framesOf(await (await post(`${server.url}agent/connect`, runInput('broker-thread', 'connect-1', ''))).text());
    expect(connected.map((frame) => frame.event.type)).toEqual([EventType.RUN_STARTED, EventType.MESSAGES_SNAPSHOT, EventType.STATE_SNAPSHOT, EventType.RUN_FINISHED]);
    expect(connected.every((frame) => frame.id === undefined)).toBe(true);
    expect((connected[1].event.messages as { role: string }[]).map((message) => message.role)).toEqual(['user', 'reasoning', 'assistant', 'tool', 'tool', 'assistant']);

    // Route 4: a finished run stays as it was; an unknown one is 404.
    expect((await fetch(`${server.url}agent/threads/broker-thread/runs/run-1/stop`, { method: 'POST' })).status).toBe(202);
    expect((await fetch(`${server.url}agent/threads/broker-thread/runs/nope/stop`, { method: 'POST' })).status).toBe(404);
  });

  it('should let a run go on when its reader leaves (detached), until stop cancels it', async () => {
    const log = activities();
    let signal!: AbortSignal;
    const scripted = createScriptedAgent({ pace: 5, toolLatency: 60_000, now });
    const slow = await startDemoServer({ port: 0, agent: (input, ctx) => ((signal = ctx.signal), scripted(input, ctx)), broker: { detachGraceMs: 60_000, onActivity: log.onActivity } });
    try {
      const browser = new AbortController();
      const response = await fetch(`${slow.url}agent`, { method: 'POST', headers: { 'Content-Type': 'application/json', Accept: 'text/event-stream' }, body: JSON.stringify(runInput('t', 'r', 'Rome')), signal: browser.signal });
      await response.body!.getReader().read();
      browser.abort();
      expect(await log.next('run-detached')).toEqual({ type: 'run-detached', threadId: 't', runId: 'r', graceMs: 60_000 });
      expect(signal.aborted).toBe(false);

      expect((await fetch(`${slow.url}agent/threads/t/runs/r/stop`, { method: 'POST' })).status).toBe(202);
      expect(await log.next('run-ended')).toMatchObject({ outcome: 'cancelled' });
      expect(signal.aborted).toBe(true);
      const frames = framesOf(await (await fetch(`${slow.url}agent/threads/t/runs/r/events`)).text());
      expect(frames[frames.length - 1].event).toMatchObject({ type: EventType.RUN_FINISHED, outcome: { type: 'cancelled' } });
    } finally {
      await slow.close();
    }
  });

  it("should serve another server's runs when they share a run store: resume, connect and stop from either", async () => {
    const store = createMemoryRunStore();
    const logA = activities();
    const scripted = createScriptedAgent({ pace: 5, toolLatency: 60_000, now });
    const a = await startDemoServer({ port: 0, agent: scripted, broker: { store, onActivity: logA.onActivity, instanceId: 'a' } });
    const b = await startDemoServer({ port: 0, agent: () => { throw new Error('B never runs an agent here'); }, broker: { store, instanceId: 'b' } });
    try {
      const onA = await readFrames(await post(`${a.url}agent`, runInput('shared', 'run-1', 'Rome')), 6);
      const last = onA.frames[onA.frames.length - 1].id!;
      await onA.cancel();

      // B resumes A's run where A's reader left it, and connects to the thread (the running run from its start).
      const onB = await readFrames(await fetch(`${b.url}agent/threads/shared/runs/run-1/events`, { headers: { 'Last-Event-ID': last } }), 1);
      expect(Number(onB.frames[0].id)).toBeGreaterThan(Number(last));
      const connected = await readFrames(await post(`${b.url}agent/connect`, runInput('shared', 'connect-1', '')), 6);
      expect(connected.frames.slice(0, 6).map((frame) => frame.id)).toEqual([onA.frames[0].id, undefined, ...onA.frames.slice(1, 5).map((frame) => frame.id)]);
      expect(connected.frames[0].event).toMatchObject({ type: EventType.RUN_STARTED, runId: 'run-1' });

      // Stopping through B cancels the run on A; both readers on B see it end.
      expect((await fetch(`${b.url}agent/threads/shared/runs/run-1/stop`, { method: 'POST' })).status).toBe(202);
      expect(await logA.next('run-ended')).toMatchObject({ instanceId: 'a', outcome: 'cancelled' });
      for (const reader of [onB, connected]) {
        const rest = await reader.rest();
        expect(rest[rest.length - 1].event).toMatchObject({ type: EventType.RUN_FINISHED, outcome: { type: 'cancelled' } });
      }
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('should reject with what to do when the port is taken', async () => {
    await expect(startDemoServer({ port: server.port, agent: createScriptedAgent() })).rejects.toThrow(
      `Port ${server.port} on 127.0.0.1 is already in use. Stop what uses it, or choose another port: PORT=${server.port + 1} npm run demo.`,
    );
  });
});

/** What a transcript says (choice 0): its text, and each tool call's name and arguments. */
function transcriptIntent(chunks: readonly (ChatCompletionChunk | '[DONE]')[]) {
  let text = '';
  const calls: { id: string; name: string; arguments: string }[] = [];
  const byIndex = new Map<number, { id: string; name: string; arguments: string }>();
  for (const chunk of chunks) {
    if (chunk === '[DONE]') continue;
    const choice = chunk.choices.find((candidate, position) => (candidate.index ?? position) === 0);
    if (!choice) continue;
    // Content may be a string or (Mistral) an array of parts, whose text parts are the answer.
    const content = choice.delta.content ?? '';
    text += (typeof content === 'string' ? content : content.map((part) => (part.type === 'text' ? part.text : '')).join('')) + (choice.delta.refusal ?? '');
    for (const piece of choice.delta.tool_calls ?? []) {
      const known = byIndex.get(piece.index);
      if (known && (!piece.id || piece.id === known.id)) known.arguments += piece.function?.arguments ?? '';
      else {
        const call = { id: piece.id!, name: piece.function!.name!, arguments: piece.function?.arguments ?? '' };
        byIndex.set(piece.index, call);
        calls.push(call);
      }
    }
  }
  return { text, calls };
}

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

const sharedDir = resolve(__dirname, '../../../../shared/fixtures/openai-chat-completions');
const ownDir = resolve(__dirname, '../../fixtures/openai-chat-completions');
const transcripts = [sharedDir, ownDir].flatMap((dir) =>
  existsSync(dir)
    ? readdirSync(dir)
        .filter((name) => name.endsWith('.sse') || name.endsWith('.jsonl'))
        .sort()
        .map((name) => join(dir, name))
    : [],
);

(transcripts.length > 0 ? describe : describe.skip)(
  `demo --replay through the server and the official HttpAgent${transcripts.length > 0 ? '' : ' (skipped: no transcripts in ../shared or spec/fixtures)'}`,
  () => {
    it.each(transcripts.map((file) => [file.slice(resolve(__dirname, '../../../..').length + 1), file]))(
      'should replay %s with its full text and each tool call’s exact arguments',
      async (_name, file) => {
        const chunks = readTranscript(file);
        const server = await startDemoServer({ port: 0, agent: createReplayAgent(chunks, { pace: 0 }) });
        try {
          const run = await runHttpAgent(`${server.url}agent`, 'replay it');
          const expected = transcriptIntent(chunks);
          const assistants = run.messages.filter((message): message is AssistantMessage => message.role === 'assistant');
          expect(assistants.map((message) => message.content ?? '').join('')).toBe(expected.text);
          expect(assistants.flatMap((message) => message.toolCalls ?? []).map((call) => ({ id: call.id, name: call.function.name, arguments: call.function.arguments }))).toEqual(
            expected.calls,
          );
          const finished = run.events[run.events.length - 1] as BaseEvent & { outcome?: { pendingToolCallIds?: string[] }; code?: string };
          // A recording cut inside a call's arguments (finish_reason length) fails the run, after what was streamed.
          if (expected.calls.some((call) => !isJson(call.arguments))) {
            expect(finished).toMatchObject({ type: EventType.RUN_ERROR, code: 'INCOMPLETE_STREAM' });
            return;
          }
          expect(finished.type).toBe(EventType.RUN_FINISHED);
          // The recording's tools are not ours: their calls are left for the client.
          if (expected.calls.length > 0) expect(finished.outcome?.pendingToolCallIds).toEqual(expected.calls.map((call) => call.id));
        } finally {
          await server.close();
        }
      },
    );
  },
);

describe('createReplayAgent', () => {
  it('should keep the recording’s ids on the first replay and suffix them on later ones', async () => {
    const chunks: ChatCompletionChunk[] = [
      { id: 'chatcmpl-1', choices: [{ index: 0, delta: { content: 'Hi' }, finish_reason: null }] },
      { id: 'chatcmpl-1', choices: [{ index: 0, delta: { tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'f', arguments: '{}' } }] }, finish_reason: 'tool_calls' }] },
    ];
    const agent = createReplayAgent(chunks, { pace: 0 });
    const ids = async () => {
      const events = (await collect(agent(input, { signal: new AbortController().signal }))) as { messageId?: string; toolCallId?: string }[];
      return events.map((event) => event.messageId ?? event.toolCallId);
    };
    expect(await ids()).toEqual(['chatcmpl-1', 'call_1']);
    expect(await ids()).toEqual(['chatcmpl-1-2', 'call_1-2']);
    expect(chunks[0].id).toBe('chatcmpl-1');
  });
});

describe('parseTranscript', () => {
  it('should read SSE (keeping [DONE]) and JSON lines, and say which line is broken', () => {
    const chunk = { id: 'c', choices: [{ index: 0, delta: { content: 'Hi' }, finish_reason: null }] };
    expect(parseTranscript(`data: ${JSON.stringify(chunk)}\r\n\r\ndata: [DONE]`, 'x.sse')).toEqual([chunk, '[DONE]']);
    expect(parseTranscript(`${JSON.stringify(chunk)}\n\n${JSON.stringify(chunk)}\n`, 'x.jsonl')).toEqual([chunk, chunk]);
    expect(() => parseTranscript(`${JSON.stringify(chunk)}\n{"id":`, 'x.jsonl')).toThrow(/^Line 2 of x\.jsonl is not JSON/);
    expect(() => parseTranscript('\n', 'empty.jsonl')).toThrow("empty.jsonl holds no chat.completion.chunk: expected SSE 'data:' frames or JSON lines.");
    expect(() => readTranscript('/nonexistent/file.sse')).toThrow(/^Cannot read the transcript \/nonexistent\/file\.sse: ENOENT/);
  });
});
