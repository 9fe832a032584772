import { HttpAgent } from '@ag-ui/client';
import { NEVER, from } from 'rxjs';
import { EventType, type Event } from '@ag-ui/core';
import type { IncomingMessage } from 'node:http';
import type { AgentEvent } from '../../../lib/protocol/agentEvent.js';
import { createRunBroker, type AuthorizeRequest, type RunBroker, type RunBrokerOptions } from '../../../lib/broker/createRunBroker.js';
import { runWithOfficialClient } from '../../../lib/testing/runWithOfficialClient.js';
import { AguiRxError } from '../../../lib/protocol/errors.js';
import { matchBrokerRoute, type BrokerFrame, type RunBrokerApi } from '../../../lib/transports/brokerRoutes.js';
import { createAguiFetchHandler, createAguiHandler, type AguiHandlerOptions } from '../../../lib/transports/createAguiHandler.js';
import { ConnectingHttpAgent, agentHarness, quietly } from './brokerHarness.js';
import { eventually, framesOf, open, post, protoEventsOf, runInput, send, type Loopback, type WireFrame } from './brokerHttp.js';
import { serveFetch, serveNode } from './brokerHttp.js';

const SCRIPT_R1: AgentEvent[] = [
  { type: 'TEXT_MESSAGE_CHUNK', delta: 'Checking.' },
  { type: 'TOOL_CALL_CHUNK', toolCallId: 'call-1', toolCallName: 'weather', delta: '{"city":"Oslo"}' },
  { type: 'TOOL_CALL_RESULT', toolCallId: 'call-1', content: { celsius: -3 } },
  { type: 'STATE_SNAPSHOT', snapshot: { count: 1, city: 'Oslo' } },
  { type: 'TEXT_MESSAGE_CHUNK', delta: 'It is -3°C.' },
];

const PROTO = 'application/vnd.ag-ui.event+proto';
const allowAll = () => true;
const eventsOf = (frames: readonly WireFrame[]): Event[] => frames.map((frame) => frame.event);
const typesOf = (frames: readonly WireFrame[]) => frames.map((frame) => frame.event.type);
const isTerminal = (frame: WireFrame) => frame.event.type === EventType.RUN_FINISHED || frame.event.type === EventType.RUN_ERROR;

/** Every frame has its own non-empty id, strictly increasing by the store's order. */
function expectCursors(frames: readonly WireFrame[], broker: RunBroker) {
  for (const frame of frames) expect(frame.id).toEqual(expect.stringMatching(/\S/));
  for (let i = 1; i < frames.length; i++) expect(broker.store.compare(frames[i].id!, frames[i - 1].id!)).toBe(1);
}

const servers = [
  ['node:http', (agent: Parameters<typeof createAguiHandler>[0], options: AguiHandlerOptions) => serveNode(createAguiHandler(agent, options))],
  ['the fetch handler served through node', (agent: Parameters<typeof createAguiHandler>[0], options: AguiHandlerOptions) => serveFetch(createAguiFetchHandler(agent, options))],
] as const;

describe.each(servers)('broker routes over %s', (_name, serve) => {
  let server: Loopback | undefined;
  let broker: RunBroker | undefined;
  let h: ReturnType<typeof agentHarness>;
  let base: string;

  async function setup(options: RunBrokerOptions = {}, handler: AguiHandlerOptions = {}) {
    h = agentHarness();
    broker = createRunBroker({ detachGraceMs: Infinity, ...options });
    server = await serve(h.agent, { broker, basePath: '/agent', heartbeatMs: 0, ...handler });
    base = `${server.origin}/agent`;
    return broker;
  }
  const eventsUrl = (threadId: string, runId: string) => `${base}/threads/${encodeURIComponent(threadId)}/runs/${encodeURIComponent(runId)}/events`;
  const stopUrl = (threadId: string, runId: string) => `${base}/threads/${encodeURIComponent(threadId)}/runs/${encodeURIComponent(runId)}/stop`;

  afterEach(async () => {
    await server?.close();
    await broker?.close();
    server = undefined;
    broker = undefined;
  });

  describe('route 1: POST <base>', () => {
    it('should start a run whose every frame has its own non-empty, increasing id, and serve the official HttpAgent', async () => {
      const b = await setup();
      const answer = await post(base, runInput('t1', 'r1', { state: { count: 0 } }));
      expect(answer.status).toBe(200);
      expect(answer.headers['content-type']).toBe('text/event-stream');
      const frames = framesOf(answer.body);
      expect(frames.length).toBeGreaterThan(5);
      expectCursors(frames, b);
      expect(typesOf(frames).at(-1)).toBe(EventType.RUN_FINISHED);

      const client = new HttpAgent({ url: base, threadId: 't2', initialState: { count: 0 } });
      await client.runAgent({ runId: 'r2' });
      expect(client.messages.map(({ role, content }) => ({ role, content }))).toEqual([
        { role: 'assistant', content: 'Checking the weather.' },
        { role: 'tool', content: '{"celsius":-3}' },
        { role: 'assistant', content: 'It is -3°C.' },
      ]);
      expect(client.state).toEqual({ count: 1, city: 'Oslo' });
      expect(h.starts).toEqual(['r1', 'r2']);
    });

    it('should attach a second POST of the same runId when authorize allows, the agent started exactly once', async () => {
      await setup({ authorize: allowAll });
      h.hold('r1', [{ type: 'TEXT_MESSAGE_CHUNK', delta: 'Hel' }], [{ type: 'TEXT_MESSAGE_CHUNK', delta: 'lo' }]);
      const first = await open(base, { body: runInput('t1', 'r1') });
      await first.take(3);
      const second = await open(base, { body: runInput('t1', 'r1') });
      expect(second.status).toBe(200);
      await second.take(3);
      h.release('r1');
      const [a, b] = await Promise.all([first.ended, second.ended]);
      expect(b).toEqual(a);
      expect(h.starts).toEqual(['r1']);
      expect((await runWithOfficialClient(eventsOf(b), { threadId: 't1', runId: 'r1' })).messages).toEqual([{ id: expect.any(String), role: 'assistant', content: 'Hello' }]);
    });

    it('should refuse a second POST of a running run with 403 naming `authorize` when there is no hook, and go on with the first', async () => {
      await setup();
      h.hold('r1', [{ type: 'TEXT_MESSAGE_CHUNK', delta: 'Hel' }], [{ type: 'TEXT_MESSAGE_CHUNK', delta: 'lo' }]);
      const first = await open(base, { body: runInput('t1', 'r1') });
      await first.take(2);
      const second = await post(base, runInput('t1', 'r1'));
      expect(second.status).toBe(403);
      expect(JSON.parse(second.body).error).toMatch(/`authorize`/);
      h.release('r1');
      expect(typesOf(await first.ended).at(-1)).toBe(EventType.RUN_FINISHED);
      expect(h.starts).toEqual(['r1']);
    });

    it('should answer a POST with Last-Event-ID with the events strictly after it only', async () => {
      await setup({ authorize: allowAll });
      const all = framesOf((await post(base, runInput('t1', 'r1'))).body);
      const after = framesOf((await post(base, runInput('t1', 'r1'), { 'Last-Event-ID': all[2].id! })).body);
      expect(after).toEqual(all.slice(3));
      const afterLast = await post(base, runInput('t1', 'r1'), { 'Last-Event-ID': all.at(-1)!.id! });
      expect([afterLast.status, afterLast.body]).toEqual([200, '']);
      expect(h.starts).toEqual(['r1']);
    });

    it('should end the stream of a cursor past the run\'s end (a later run\'s, or one never given) with RUN_ERROR INVALID_CURSOR, on every route', async () => {
      await setup({ authorize: allowAll });
      const first = framesOf((await post(base, runInput('t1', 'r1'))).body);
      const later = framesOf((await post(base, runInput('t1', 'r2'))).body);
      const message = (cursor: string) =>
        `Run 'r1' of thread 't1' has nothing after Last-Event-ID '${cursor}': the run ended before it (it is a later run's cursor, or one this server never gave). Read the run from its start, without Last-Event-ID, for its events and its end.`;
      for (const cursor of [later.at(-1)!.id!, '999999']) {
        for (const answer of [await post(base, runInput('t1', 'r1'), { 'Last-Event-ID': cursor }), await send(eventsUrl('t1', 'r1'), { method: 'GET', headers: { 'Last-Event-ID': cursor } })]) {
          expect(answer.status).toBe(200);
          expect(framesOf(answer.body)).toEqual([{ event: { type: EventType.RUN_ERROR, code: 'INVALID_CURSOR', message: message(cursor) } }]);
        }
      }
      // The run's own end and what came before it are read as ever.
      expect(framesOf((await send(eventsUrl('t1', 'r1'), { method: 'GET', headers: { 'Last-Event-ID': first.at(-2)!.id! } })).body)).toEqual(first.slice(-1));
      expect(h.starts).toEqual(['r1', 'r2']);
    });
  });

  describe('route 2: GET <base>/threads/<threadId>/runs/<runId>/events', () => {
    it('should replay then go live with the same payloads, cursors and order as the POST stream, and close right after the terminal event', async () => {
      await setup({ authorize: allowAll });
      h.hold('r1', [{ type: 'TEXT_MESSAGE_CHUNK', delta: 'Hel' }, { type: 'STATE_SNAPSHOT', snapshot: { a: 1 } }], [{ type: 'TEXT_MESSAGE_CHUNK', delta: 'lo' }, { type: 'STATE_SNAPSHOT', snapshot: { a: 2 } }]);
      const posted = await open(base, { body: runInput('t1', 'r1') });
      const early = await posted.take(3);
      const reader = await open(eventsUrl('t1', 'r1'), { method: 'GET' });
      expect([reader.status, reader.headers['content-type']]).toEqual([200, 'text/event-stream']);
      expect(await reader.take(3)).toEqual(early);
      h.release('r1');
      const [a, b] = await Promise.all([posted.ended, reader.ended]);
      expect(b).toEqual(a);
      expect(isTerminal(b.at(-1)!)).toBe(true);
      expect(b.filter(isTerminal)).toHaveLength(1);
      expectCursors(b, broker!);
      expect((await runWithOfficialClient(eventsOf(b), { threadId: 't1', runId: 'r1' })).state).toEqual({ a: 2 });
      expect(h.starts).toEqual(['r1']);
    });

    it('should send the events strictly after Last-Event-ID, replayed and live', async () => {
      await setup({ authorize: allowAll });
      h.hold('r1', [{ type: 'TEXT_MESSAGE_CHUNK', delta: 'a' }], [{ type: 'TEXT_MESSAGE_CHUNK', delta: 'b' }]);
      const posted = await open(base, { body: runInput('t1', 'r1') });
      const early = await posted.take(3);
      const reader = await open(eventsUrl('t1', 'r1'), { method: 'GET', headers: { 'Last-Event-ID': early[1].id! } });
      h.release('r1');
      const [all, after] = await Promise.all([posted.ended, reader.ended]);
      expect(after).toEqual(all.slice(2));
    });

    it('should answer 404 for an unknown run or thread, and never start anything', async () => {
      await setup({ authorize: allowAll });
      await post(base, runInput('t1', 'r1'));
      for (const url of [eventsUrl('t1', 'nope'), eventsUrl('nope', 'r1')]) {
        const answer = await send(url, { method: 'GET' });
        expect(answer.status).toBe(404);
        expect(JSON.parse(answer.body).error).toMatch(/^There is no run '.+' in thread '.+'/);
      }
      expect(h.starts).toEqual(['r1']);
    });

    it('should answer 403 without an authorize hook, even to the client that started the run', async () => {
      await setup();
      await post(base, runInput('t1', 'r1'));
      const answer = await send(eventsUrl('t1', 'r1'), { method: 'GET' });
      expect(answer.status).toBe(403);
      expect(JSON.parse(answer.body).error).toMatch(/`authorize`/);
    });

    it('should answer 400 for a malformed Last-Event-ID', async () => {
      await setup({ authorize: allowAll });
      await post(base, runInput('t1', 'r1'));
      for (const id of ['abc', '-1', '1.5', '0x10']) {
        const answer = await send(eventsUrl('t1', 'r1'), { method: 'GET', headers: { 'Last-Event-ID': id } });
        expect(answer.status).toBe(400);
        expect(JSON.parse(answer.body).error).toMatch(/^Last-Event-ID '.*' is not a cursor of this server's run log/);
      }
      const posted = await post(base, runInput('t1', 'r1'), { 'Last-Event-ID': 'abc' });
      expect(posted.status).toBe(400);
    });

    it('should read ids with reserved characters from percent-encoded path segments', async () => {
      await setup({ authorize: allowAll });
      const all = framesOf((await post(base, runInput('thread/1 é', 'run?#1'))).body);
      const answer = await send(eventsUrl('thread/1 é', 'run?#1'), { method: 'GET' });
      expect(framesOf(answer.body)).toEqual(all);
    });
  });

  describe('route 3: POST <base>/connect', () => {
    it("should rebuild the thread for the official connectAgent(): the same messages and state as a client that watched every run live, the active run's rest arriving live", async () => {
      await setup({ authorize: allowAll });
      h.script('r1', () => h.scriptOf(SCRIPT_R1));
      h.hold(
        'r3',
        [{ type: 'TEXT_MESSAGE_CHUNK', delta: 'Partial' }, { type: 'STATE_SNAPSHOT', snapshot: { count: 3, city: 'Bergen', steps: ['a'] } }],
        [
          { type: 'TOOL_CALL_CHUNK', toolCallId: 'call-3', toolCallName: 'lookup', delta: '{"q":1}' },
          { type: 'TOOL_CALL_RESULT', toolCallId: 'call-3', content: 'found' },
          { type: 'TEXT_MESSAGE_CHUNK', delta: 'Rest.' },
          { type: 'STATE_SNAPSHOT', snapshot: { count: 4, city: 'Bergen', steps: ['a', 'b'] } },
        ],
      );
      h.script('r2', () =>
        h.scriptOf([
          { type: 'REASONING_MESSAGE_CHUNK', delta: 'Let me think.' },
          { type: 'TEXT_MESSAGE_CHUNK', delta: 'Thought about it.' },
          { type: 'STATE_SNAPSHOT', snapshot: { count: 2, city: 'Bergen' } },
        ]),
      );
      const live = new HttpAgent({ url: base, threadId: 'thread-c', initialState: { count: 0 } });
      live.addMessage({ id: 'u1', role: 'user', content: 'Weather?' });
      await live.runAgent({ runId: 'r1' });
      live.addMessage({ id: 'u2', role: 'user', content: 'Think.' });
      await live.runAgent({ runId: 'r2' });
      live.addMessage({ id: 'u3', role: 'user', content: 'More.' });
      const third = live.runAgent({ runId: 'r3' });
      await eventually(() => live.messages.some((message) => message.content === 'Partial'), 5000, 'the third run to start');

      const connecting = new ConnectingHttpAgent({ url: base, threadId: 'thread-c' });
      const connected = connecting.connectAgent();
      await eventually(() => connecting.messages.some((message) => message.content === 'Partial'), 5000, 'connect to deliver the active run');
      expect(connecting.messages.some((message) => message.content === 'Rest.')).toBe(false);
      h.release('r3');
      await Promise.all([third, connected]);

      expect(live.messages.map((message) => message.role)).toEqual(['user', 'assistant', 'tool', 'assistant', 'user', 'reasoning', 'assistant', 'user', 'assistant', 'tool', 'assistant']);
      expect(connecting.messages).toEqual(live.messages);
      expect(connecting.state).toEqual(live.state);
      expect(live.state).toEqual({ count: 4, city: 'Bergen', steps: ['a', 'b'] });
      expect(h.starts).toEqual(['r1', 'r2', 'r3']);
    });

    it('should rebuild a thread whose runs are all finished, and answer an unknown thread with an empty stream connectAgent() accepts', async () => {
      await setup({ authorize: allowAll });
      const live = new HttpAgent({ url: base, threadId: 'thread-d', initialState: { count: 0 } });
      live.addMessage({ id: 'u1', role: 'user', content: 'Weather?' });
      await live.runAgent({ runId: 'r1' });
      const connecting = new ConnectingHttpAgent({ url: base, threadId: 'thread-d' });
      await connecting.connectAgent();
      expect([connecting.messages, connecting.state]).toEqual([live.messages, live.state]);

      const empty = await post(`${base}/connect`, runInput('unknown', 'fresh'));
      expect([empty.status, empty.headers['content-type'], empty.body]).toEqual([200, 'text/event-stream', '']);
      const nobody = new ConnectingHttpAgent({ url: base, threadId: 'unknown', initialMessages: [{ id: 'x', role: 'user', content: 'hi' }] });
      await expect(nobody.connectAgent()).resolves.toEqual({ newMessages: [], result: undefined });
      expect(nobody.messages).toEqual([{ id: 'x', role: 'user', content: 'hi' }]);
      expect(h.starts).toEqual(['r1']);
    });

    it('should answer 403 to connect without an authorize hook', async () => {
      await setup();
      const answer = await post(`${base}/connect`, runInput('t1', 'r1'));
      expect(answer.status).toBe(403);
      expect(JSON.parse(answer.body).error).toMatch(/`authorize`/);
      expect(h.starts).toEqual([]);
    });
  });

  describe('route 4: POST <base>/threads/<threadId>/runs/<runId>/stop', () => {
    it('should answer 202 and end the log with RUN_FINISHED cancelled after closing what was open, aborting the agent', async () => {
      await setup({ authorize: allowAll });
      h.endless('r1', [
        { type: 'REASONING_MESSAGE_CHUNK', delta: 'Hmm' },
        { type: 'TEXT_MESSAGE_CHUNK', delta: 'Working' },
        { type: 'TOOL_CALL_CHUNK', toolCallId: 'c1', toolCallName: 'slow', delta: '{"a":' },
        { type: 'STEP_STARTED', stepName: 'search' },
      ]);
      const posted = await open(base, { body: runInput('t1', 'r1') });
      await posted.until((frame) => frame.event.type === EventType.STEP_STARTED);
      const stopped = await send(stopUrl('t1', 'r1'), { method: 'POST' });
      expect([stopped.status, JSON.parse(stopped.body)]).toEqual([202, { threadId: 't1', runId: 'r1', status: 'stopping' }]);
      const frames = await posted.ended;
      expect(frames.at(-1)!.event).toMatchObject({ type: EventType.RUN_FINISHED, outcome: { type: 'cancelled' } });
      expect(frames.filter(isTerminal)).toHaveLength(1);
      expect(h.signals.get('r1')?.aborted).toBe(true);
      const log = framesOf((await send(eventsUrl('t1', 'r1'), { method: 'GET' })).body);
      expect(log).toEqual(frames);
      const oracle = await runWithOfficialClient(eventsOf(log), { threadId: 't1', runId: 'r1' });
      expect(oracle.messages.map((message) => [message.role, message.content])).toEqual([
        ['reasoning', 'Hmm'],
        ['assistant', 'Working'],
      ]);
      // Stopping a finished run changes nothing, and says so.
      const again = await send(stopUrl('t1', 'r1'), { method: 'POST' });
      expect([again.status, JSON.parse(again.body)]).toEqual([202, { threadId: 't1', runId: 'r1', status: 'finished' }]);
      expect(framesOf((await send(eventsUrl('t1', 'r1'), { method: 'GET' })).body)).toEqual(frames);
    });

    it('should answer 404 for an unknown run and 403 without an authorize hook', async () => {
      await setup({ authorize: allowAll });
      const unknown = await send(stopUrl('t1', 'nope'), { method: 'POST' });
      expect(unknown.status).toBe(404);
      expect(JSON.parse(unknown.body).error).toMatch(/^There is no run 'nope' in thread 't1' to stop\./);
      await server!.close();
      await broker!.close();

      await setup();
      h.endless('r1', [{ type: 'TEXT_MESSAGE_CHUNK', delta: 'Working' }]);
      const posted = await open(base, { body: runInput('t1', 'r1') });
      await posted.take(2);
      const refused = await send(stopUrl('t1', 'r1'), { method: 'POST' });
      expect(refused.status).toBe(403);
      expect(JSON.parse(refused.body).error).toMatch(/`authorize`/);
      expect(h.signals.get('r1')?.aborted).toBe(false);
      posted.leave();
    });
  });

  describe('authorize, limits and protobuf', () => {
    it('should ask authorize with the request, threadId, runId and the action of each route (a new run\'s start too)', async () => {
      const calls: Omit<AuthorizeRequest, 'request'>[] = [];
      const requests: unknown[] = [];
      await setup({
        authorize: async (question) => {
          const { request, ...rest } = question;
          requests.push(request);
          calls.push(rest);
          return true;
        },
      });
      await post(base, runInput('t1', 'r1'));
      expect(calls).toEqual([{ action: 'start', threadId: 't1', runId: 'r1' }]);
      await post(base, runInput('t1', 'r1'));
      await send(eventsUrl('t1', 'r1'), { method: 'GET' });
      await post(`${base}/connect`, runInput('t1', 'fresh'));
      await send(stopUrl('t1', 'r1'), { method: 'POST' });
      expect(calls).toEqual([
        { action: 'start', threadId: 't1', runId: 'r1' },
        { action: 'attach', threadId: 't1', runId: 'r1' },
        { action: 'events', threadId: 't1', runId: 'r1' },
        { action: 'connect', threadId: 't1' },
        { action: 'stop', threadId: 't1', runId: 'r1' },
      ]);
      for (const request of requests) {
        const url = request instanceof Request ? new URL(request.url).pathname : (request as IncomingMessage).url;
        expect(url).toMatch(/^\/agent/);
      }
    });

    it('should refuse when authorize resolves false, and answer 500 without crashing when it throws or rejects, telling onError', async () => {
      let answer: () => boolean | Promise<boolean> = () => false;
      const reports: [unknown, { reference?: string }][] = [];
      await setup({ authorize: () => answer() }, { onError: (error, report) => void reports.push([error, report]) });
      // Refused a start, nothing runs.
      expect((await post(base, runInput('t1', 'r1'))).status).toBe(403);
      expect((await send(eventsUrl('t1', 'r1'), { method: 'GET' })).status).toBe(403);
      answer = () => true;
      await post(base, runInput('t1', 'r1'));
      answer = () => false;
      expect((await send(eventsUrl('t1', 'r1'), { method: 'GET' })).status).toBe(403);
      answer = () => {
        throw new Error('auth backend down');
      };
      const thrown = await send(eventsUrl('t1', 'r1'), { method: 'GET' });
      // Worded as a run's error is (shown outside production), and in the server's log under a reference.
      expect([thrown.status, JSON.parse(thrown.body)]).toEqual([500, { error: 'auth backend down' }]);
      expect(reports).toEqual([[new Error('auth backend down'), expect.objectContaining({ reference: expect.any(String) })]]);
      answer = () => Promise.reject(new Error('auth backend down'));
      expect((await send(stopUrl('t1', 'r1'), { method: 'POST' })).status).toBe(500);
      expect(reports).toHaveLength(2);
      answer = () => Promise.resolve(true);
      expect(framesOf((await send(eventsUrl('t1', 'r1'), { method: 'GET' })).body).at(-1)!.event.type).toBe(EventType.RUN_FINISHED);
    });

    it('should keep a throwing authorize hook\'s message from the client under redact, giving the reference its log has', async () => {
      const reports: [unknown, { reference?: string }][] = [];
      await setup(
        {
          authorize: () => {
            throw new Error('secret: db password rejected');
          },
        },
        { errorMessages: 'redact', onError: (error, report) => void reports.push([error, report]) },
      );
      const thrown = await send(eventsUrl('t1', 'r1'), { method: 'GET' });
      expect(thrown.status).toBe(500);
      const { error } = JSON.parse(thrown.body) as { error: string };
      expect(error).not.toContain('secret');
      expect(reports).toHaveLength(1);
      expect(error).toContain(reports[0][1].reference!);
      // The hook failed, not an agent: the words say so.
      expect(error).toMatch(/^The server failed to serve this request\. Its log has the details under reference /);
    });

    it('should answer 400 with its message when a broker refuses an argument (INVALID_ARGUMENT), not 500', async () => {
      const real = await setup({ authorize: () => true });
      await server!.close();
      const refusing: RunBroker = { ...real, stop: () => Promise.reject(new AguiRxError('INVALID_ARGUMENT', 'The runId holds half of a surrogate pair.')) };
      const reports: unknown[] = [];
      server = await serve(h.agent, { broker: refusing, basePath: '/agent', heartbeatMs: 0, onError: (error) => void reports.push(error) });
      base = `${server.origin}/agent`;
      const refused = await send(stopUrl('t1', 'r1'), { method: 'POST' });
      expect([refused.status, JSON.parse(refused.body)]).toEqual([400, { error: 'The runId holds half of a surrogate pair.' }]);
      expect(reports).toEqual([]);
    });

    it('should answer the 4xx status a throwing authorize hook carries with its message, as for context, and tell onError only of a 5xx', async () => {
      let thrown: unknown = Object.assign(new Error('Sign in first: the session expired.'), { status: 401, expose: true });
      const reports: unknown[] = [];
      await setup(
        {
          authorize: () => {
            if (thrown === undefined) return true;
            throw thrown;
          },
        },
        { onError: (error) => void reports.push(error) },
      );
      const unauthorized = await send(eventsUrl('t1', 'r1'), { method: 'GET' });
      expect([unauthorized.status, JSON.parse(unauthorized.body)]).toEqual([401, { error: 'Sign in first: the session expired.' }]);
      // A start refused so runs nothing.
      expect((await post(base, runInput('t1', 'r1'))).status).toBe(401);
      thrown = Object.assign(new Error('Not your thread.'), { statusCode: 403, expose: false });
      const hidden = await send(stopUrl('t1', 'r1'), { method: 'POST' });
      expect([hidden.status, JSON.parse(hidden.body)]).toEqual([403, { error: 'The request was refused (HTTP 403).' }]);
      // No message of its own: the status says it (not the error's fields as JSON).
      thrown = Object.assign(new Error(''), { status: 401 });
      const bare = await send(stopUrl('t1', 'r1'), { method: 'POST' });
      expect([bare.status, JSON.parse(bare.body)]).toEqual([401, { error: 'The request was refused (HTTP 401).' }]);
      expect(reports).toEqual([]);
      // Fields that throw when read: a 500 like any other error, answered and reported, never a hang.
      thrown = Object.defineProperty(Object.assign(new Error('Sign in.'), { status: 401 }), 'expose', {
        get() {
          throw new Error('hostile getter');
        },
      });
      const hostile = await send(stopUrl('t1', 'r1'), { method: 'POST' });
      expect([hostile.status, JSON.parse(hostile.body)]).toEqual([500, { error: 'Sign in.' }]);
      expect(reports).toEqual([thrown]);
      reports.length = 0;
      thrown = Object.assign(new Error('Session store unreachable.'), { status: 503 });
      const unavailable = await post(`${base}/connect`, runInput('t1', 'r2'));
      expect([unavailable.status, JSON.parse(unavailable.body)]).toEqual([503, { error: 'Session store unreachable.' }]);
      expect(reports).toEqual([thrown]);
      // The refused start ran nothing: once allowed, there is no such run.
      thrown = undefined;
      expect((await send(eventsUrl('t1', 'r1'), { method: 'GET' })).status).toBe(404);
    });

    it('should answer 429 with a clear message past maxSubscribers', async () => {
      await setup({ authorize: allowAll, maxSubscribers: 1 });
      h.hold('r1', [{ type: 'TEXT_MESSAGE_CHUNK', delta: 'a' }], []);
      const posted = await open(base, { body: runInput('t1', 'r1') });
      await posted.take(2);
      for (const refused of [await send(eventsUrl('t1', 'r1'), { method: 'GET' }), await post(base, runInput('t1', 'r1'))]) {
        expect(refused.status).toBe(429);
        expect(JSON.parse(refused.body).error).toMatch(/^Run 'r1' has 1 readers on this server already, its limit \(maxSubscribers\)/);
      }
      h.release('r1');
      await posted.ended;
      // The reader left when its stream ended: there is room again.
      expect((await send(eventsUrl('t1', 'r1'), { method: 'GET' })).status).toBe(200);
    });

    it('should send protobuf frames without ids through the broker, decodable and accepted by the official client', async () => {
      await setup({ authorize: allowAll });
      const answer = await send(base, { body: JSON.stringify(runInput('t1', 'r1', { state: { count: 0 } })), headers: { Accept: PROTO } });
      expect([answer.status, answer.headers['content-type']]).toEqual([200, PROTO]);
      const events = protoEventsOf(answer.raw);
      expect(events.at(-1)!.type).toBe(EventType.RUN_FINISHED);
      expect((await runWithOfficialClient(events, { threadId: 't1', runId: 'r1', initialState: { count: 0 } })).state).toEqual({ count: 1, city: 'Oslo' });
      const sse = framesOf((await send(eventsUrl('t1', 'r1'), { method: 'GET' })).body);
      const replayed = await send(eventsUrl('t1', 'r1'), { method: 'GET', headers: { Accept: PROTO } });
      expect(protoEventsOf(replayed.raw).map((event) => event.type)).toEqual(sse.map((frame) => frame.event.type));
    });
  });

  describe('bad input', () => {
    it('should answer 404 for an unknown path, naming the routes and the basePath option', async () => {
      await setup();
      for (const path of ['/nope', '/agent/threads/t1', '/agent/threads/t1/runs/r1', '/agentx']) {
        const answer = await send(`${server!.origin}${path}`, { method: 'GET' });
        expect(answer.status).toBe(404);
        const { error } = JSON.parse(answer.body);
        expect(error).toContain('POST /agent/connect');
        expect(error).toContain('GET /agent/threads/<threadId>/runs/<runId>/events');
        expect(error).toContain('basePath');
      }
    });

    it('should answer 405 with Allow for a wrong method on each route', async () => {
      await setup();
      const cases: [string, string, string][] = [
        ['GET', '/agent', 'POST'],
        ['PUT', '/agent/connect', 'POST'],
        ['POST', '/agent/threads/t/runs/r/events', 'GET'],
        ['GET', '/agent/threads/t/runs/r/stop', 'POST'],
      ];
      for (const [method, path, allow] of cases) {
        const answer = await send(`${server!.origin}${path}`, { method });
        expect([answer.status, answer.headers.allow]).toEqual([405, allow]);
        expect(JSON.parse(answer.body).error).toMatch(new RegExp(`^${method} is not supported here`));
      }
      expect(h.starts).toEqual([]);
    });

    it('should answer 400 for a malformed percent-encoding in an id', async () => {
      await setup({ authorize: allowAll });
      const answer = await send(`${server!.origin}/agent/threads/%E0%A4%A/runs/r/events`, { method: 'GET' });
      expect(answer.status).toBe(400);
      expect(JSON.parse(answer.body).error).toMatch(/malformed percent-encoding/);
    });

    it('should answer 400 for a bad JSON body and 413 for one over maxBodyBytes, on run and connect', async () => {
      await setup({ authorize: allowAll }, { maxBodyBytes: 512 });
      for (const path of ['', '/connect']) {
        const notJson = await post(`${base}${path}`, '{"threadId": ');
        expect(notJson.status).toBe(400);
        expect(JSON.parse(notJson.body).error).toMatch(/^The request body is not valid JSON/);
        const notInput = await post(`${base}${path}`, { threadId: 't1' });
        expect(notInput.status).toBe(400);
        expect(JSON.parse(notInput.body).error).toMatch(/^The request body is not a valid RunAgentInput/);
        const large = await post(`${base}${path}`, runInput('t1', 'r1', { context: [{ description: 'x', value: 'y'.repeat(1024) }] }));
        expect(large.status).toBe(413);
      }
      expect(h.starts).toEqual([]);
    });
  });
});

describe.each(servers)('a RUN_LOST frame over %s', (_name, serve) => {
  let server: Loopback | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it('should be reported to onError once, with the route\'s run, and streamed as the broker stored it', async () => {
    const lost: Event = { type: EventType.RUN_ERROR, code: 'RUN_LOST', message: 'The run was lost: its worker stopped.' };
    const log: BrokerFrame[] = [
      { cursor: '1', event: { type: EventType.RUN_STARTED, threadId: 't1', runId: 'r1' } },
      { cursor: '2', event: lost },
    ];
    // A broker stand-in whose stored run ends RUN_LOST (what a store reports for a run whose worker vanished).
    const broker: RunBrokerApi = {
      run: () => Promise.reject(new Error('not used')),
      events: async () => from(log),
      connect: () => Promise.reject(new Error('not used')),
      stop: () => Promise.reject(new Error('not used')),
    };
    const reports: [unknown, Record<string, unknown>][] = [];
    server = await serve(() => NEVER, { broker, basePath: '/agent', onError: (error, report) => void reports.push([error, report as unknown as Record<string, unknown>]) });
    const answer = await send(`${server.origin}/agent/threads/t1/runs/r1/events`, { method: 'GET' });

    expect(answer.status).toBe(200);
    const frames = framesOf(answer.body);
    expect(frames.map((frame) => [frame.id, frame.event])).toEqual(log.map((frame) => [frame.cursor, frame.event]));
    // The official client takes the stream as it is: a run that ended RUN_ERROR.
    const oracle = await runWithOfficialClient(eventsOf(frames), { threadId: 't1', runId: 'r1' });
    expect(oracle.events.map((event) => event.type)).toEqual([EventType.RUN_STARTED, EventType.RUN_ERROR]);
    expect(reports).toHaveLength(1);
    const [error, report] = reports[0];
    expect(error).toMatchObject({ code: 'RUN_LOST', message: lost.message });
    expect(report).toMatchObject({ kind: 'events', threadId: 't1', runId: 'r1', reference: expect.stringMatching(/\S/) });
    expect(report.request).toBeDefined();
  });
});

describe('matchBrokerRoute', () => {
  it('should match the four routes relative to the basePath, and with an empty basePath', () => {
    expect(matchBrokerRoute('POST', '/agent', '/agent')).toEqual({ kind: 'run' });
    expect(matchBrokerRoute('POST', '/agent/?x=1', '/agent/')).toEqual({ kind: 'run' });
    expect(matchBrokerRoute('POST', '/connect', '')).toEqual({ kind: 'connect' });
    expect(matchBrokerRoute('GET', '/agent/threads/a%2Fb/runs/r%201/events', '/agent')).toEqual({ kind: 'events', threadId: 'a/b', runId: 'r 1' });
    expect(matchBrokerRoute('POST', '/threads/t/runs/r/stop/', '')).toEqual({ kind: 'stop', threadId: 't', runId: 'r' });
    expect(matchBrokerRoute('GET', '/agentx', '/agent')).toMatchObject({ kind: 'refused', status: 404 });
  });

  it("should read a basePath without its leading slash as meant ('agent' is '/agent'), as one with a trailing slash", () => {
    expect(matchBrokerRoute('POST', '/agent', 'agent')).toEqual({ kind: 'run' });
    expect(matchBrokerRoute('POST', '/agent/connect', 'agent/')).toEqual({ kind: 'connect' });
    expect(matchBrokerRoute('GET', '/agent/threads/t/runs/r/events', 'agent')).toEqual({ kind: 'events', threadId: 't', runId: 'r' });
    expect(matchBrokerRoute('GET', '/nope', 'agent')).toMatchObject({ kind: 'refused', status: 404, reason: expect.stringContaining('POST /agent/connect') });
  });
});

