import { EventType, type Event, type RunAgentInput } from '@ag-ui/core';
import { RunAgentInputSchema } from '@ag-ui/core/schemas';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { NEVER, defer, from, mergeAll, of } from 'rxjs';
import { z } from 'zod';
import { createRunBroker, decodeState, parseSSE, type AguiAgent, type RunBroker, type StandardSchemaV1 } from '../../../lib/index.js';
import { bodyText, contentTypeRefusal, runInputProblems } from '../../../lib/transports/checkInput.js';
import { createAguiFetchHandler, createAguiHandler } from '../../../lib/transports/createAguiHandler.js';
import { collect, pollUntil } from '../../support/helpers.js';
import { runWithOracle } from '../../support/oracle.js';

/** A JSON body's header (a `Request` of a string body is `text/plain` otherwise). */
const JSON_TYPE = { 'Content-Type': 'application/json' };

const input = (overrides: Record<string, unknown> = {}) => ({
  threadId: 'thread-1',
  runId: 'run-1',
  state: { todos: [{ title: 'ship' }], count: 1 },
  messages: [{ id: 'u1', role: 'user', content: 'Hi' }],
  tools: [],
  context: [],
  forwardedProps: {},
  ...overrides,
});

const Todos = z.object({ todos: z.array(z.object({ title: z.string(), done: z.boolean().default(false) })), count: z.number() });

/** A hand-written asynchronous Standard Schema validator: `{ count: number }`, checked after a tick. */
const asyncCount: StandardSchemaV1<unknown, { count: number }> = {
  '~standard': {
    version: 1,
    vendor: 'hand-written',
    validate: async (value) => {
      await new Promise((resolve) => setImmediate(resolve));
      const count = (value as { count?: unknown } | null)?.count;
      return typeof count === 'number' ? { value: { count } } : { issues: [{ message: 'must be a number', path: ['count'] }] };
    },
  },
};

/** The problems of `json` as the handlers word them. */
const problemsOf = (json: unknown) => {
  const result = RunAgentInputSchema.safeParse(json);
  return runInputProblems(json, result.success ? [] : result.error.issues);
};

describe('runInputProblems', () => {
  it('should name every problem, in its own words, with the value found', () => {
    expect(problemsOf({ threadId: 7, messages: 'hello' })).toEqual([
      "'threadId' must be a string, not number 7",
      "'runId' is missing: it must be a string",
      "'messages' must be an array, not \"hello\"",
    ]);
    expect(problemsOf({})).toEqual(["'threadId' is missing: it must be a string", "'runId' is missing: it must be a string", "'messages' is missing: it must be an array"]);
  });

  it('should say which forms a union accepts, and name an unknown role and nested fields', () => {
    expect(problemsOf(input({ messages: [{ id: 'm1', role: 'robot', content: 'x' }, { id: 'm2', role: 'user' }], context: [{ value: 1 }] }))).toEqual([
      // The accepted roles come from @ag-ui/core's message schema.
      '\'messages.0.role\' is "robot", which is not one of the values accepted there ("developer", "system", "assistant", "user", "tool", "activity", "reasoning")',
      "'messages.1.content' is undefined, which matches none of the accepted forms (a string; an array)",
      "'context.0.description' is missing: it must be a string",
      "'context.0.value' must be a string, not number 1",
    ]);
    expect(problemsOf(input({ messages: [{ id: 'm1', role: 'user', content: [{ type: 'text' }] }] }))).toEqual([
      "'messages.0.content' is an array of 1, which matches none of the accepted forms (a string; a value whose '0.text' is a string)",
    ]);
  });

  it('should add empty ids to what the schema found', () => {
    expect(problemsOf(input({ threadId: '', runId: '', tools: 'none' }))).toEqual(["'tools' must be an array, not \"none\"", "'threadId' is empty: it must name the thread", "'runId' is empty: it must name the run"]);
    expect(problemsOf(input())).toEqual([]);
  });

  it('should refuse ids holding half of a surrogate pair, which UTF-8 cannot carry, and take whole pairs', () => {
    expect(problemsOf(input({ threadId: 't\ud800', runId: '\udc00r', parentRunId: 'p\ud83d' }))).toEqual([
      '\'threadId\' holds half of a UTF-16 surrogate pair ("t\\ud800"), which UTF-8 cannot carry: send ids of whole characters',
      '\'runId\' holds half of a UTF-16 surrogate pair ("\\udc00r"), which UTF-8 cannot carry: send ids of whole characters',
      '\'parentRunId\' holds half of a UTF-16 surrogate pair ("p\\ud83d"), which UTF-8 cannot carry: send ids of whole characters',
    ]);
    expect(problemsOf(input({ threadId: 'thread-\ud83d\ude00', runId: '\ud83d\ude00' }))).toEqual([]);
  });

  it("should not depend on zod's messages", () => {
    const issues = [{ code: 'invalid_type', path: ['threadId'], expected: 'string', message: 'anything zod says' }];
    expect(runInputProblems({ threadId: 1 }, issues)).toEqual(["'threadId' must be a string, not number 1"]);
  });
});

/** What the agent saw as its input state, and its events: the state as text. */
function stateEcho(seen: unknown[]): AguiAgent {
  return (runInput) => {
    seen.push(runInput.state);
    return of({ type: 'TEXT_MESSAGE_CHUNK', delta: JSON.stringify(runInput.state) });
  };
}

async function listen(handler: Parameters<typeof createServer>[1]): Promise<{ server: Server; url: string }> {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/agent` };
}

const postJSON = (url: string, body: unknown) => fetch(url, { method: 'POST', headers: { 'Content-Type': 'application/json', Accept: 'text/event-stream' }, body: JSON.stringify(body) });

/** The AG-UI events of an SSE response. */
async function eventsOf(response: Response): Promise<Event[]> {
  const messages = await collect(from([await response.text()]).pipe(parseSSE()));
  return messages.map((message) => JSON.parse(message.data) as Event);
}

describe('contentTypeRefusal', () => {
  const FIX = "POST the RunAgentInput as JSON, with the header 'Content-Type: application/json'";
  const WHY = 'A browser sends other types across sites without asking first, so they are refused.';
  const TEXT = '(fetch and new Request send a string body as text/plain unless given the header)';

  it.each([
    ['application/json', undefined],
    ['application/json; charset=utf-8', 'https://app.example.com'],
    ['Application/JSON', undefined],
    ['application/merge-patch+json', undefined],
    [undefined, undefined],
  ])('should take %p (Origin %p) as JSON', (type, origin) => {
    expect(contentTypeRefusal(type, origin)).toBeUndefined();
  });

  it.each([
    ['text/plain', `The Content-Type 'text/plain' is not JSON ${TEXT}: ${FIX}. ${WHY}`],
    ['text/plain;charset=UTF-8', `The Content-Type 'text/plain' is not JSON ${TEXT}: ${FIX}. ${WHY}`],
    ['application/x-www-form-urlencoded', `The Content-Type 'application/x-www-form-urlencoded' is not JSON: ${FIX}. ${WHY}`],
    ['multipart/form-data; boundary=x', `The Content-Type 'multipart/form-data' is not JSON: ${FIX}. ${WHY}`],
    ['json', `The Content-Type 'json' is not JSON: ${FIX}. ${WHY}`],
  ])('should refuse %p with 415, saying what to send', (type, reason) => {
    expect(contentTypeRefusal(type, undefined)).toEqual({ status: 415, reason });
  });

  it('should refuse a charset other than UTF-8, and take utf-8 and utf8 in any case', () => {
    expect(contentTypeRefusal('application/json; charset=ISO-8859-1', undefined)).toEqual({
      status: 415,
      reason: "The Content-Type says 'charset=iso-8859-1', but JSON is sent as UTF-8 (RFC 8259 §8.1): send the RunAgentInput as UTF-8, with 'charset=utf-8' or none.",
    });
    expect(contentTypeRefusal('application/json; charset=utf-16', undefined)?.status).toBe(415);
    for (const type of ['application/json; charset=UTF-8', 'application/json;charset=utf8', 'application/json; charset="utf-8"']) expect(contentTypeRefusal(type, undefined)).toBeUndefined();
  });

  it('should refuse a compressed body, whatever its type, and take identity or none', () => {
    expect(contentTypeRefusal('application/json', undefined, 'gzip')).toEqual({
      status: 415,
      reason: "The request body is sent with 'Content-Encoding: gzip', which this endpoint does not decode: send the RunAgentInput uncompressed.",
    });
    expect(contentTypeRefusal(undefined, undefined, 'br')?.status).toBe(415);
    for (const encoding of [undefined, '', 'identity', 'Identity']) expect(contentTypeRefusal('application/json', undefined, encoding)).toBeUndefined();
  });

  it("should refuse a browser's request without a Content-Type (it would skip the CORS preflight), and take a server's", () => {
    expect(contentTypeRefusal(undefined, 'https://evil.example')).toEqual({ status: 415, reason: `The request has no Content-Type: ${FIX}. A browser sends an untyped body across sites without asking first, so it is refused.` });
    expect(contentTypeRefusal('', 'https://evil.example')?.status).toBe(415);
    expect(contentTypeRefusal(undefined, undefined)).toBeUndefined();
  });
});

describe('bodyText', () => {
  it('should read UTF-8, dropping a byte order mark, and refuse bytes that are no UTF-8 with a 400 saying so', () => {
    expect(bodyText(new TextEncoder().encode('{"a":"café 😀"}'))).toBe('{"a":"café 😀"}');
    expect(bodyText(new Uint8Array([0xef, 0xbb, 0xbf, 0x7b, 0x7d]))).toBe('{}');
    // Latin-1 'é', a lone continuation byte, a cut sequence, an encoded surrogate: none is UTF-8.
    for (const bytes of [[0x22, 0x63, 0x61, 0x66, 0xe9, 0x22], [0x80], [0xe2, 0x82], [0xed, 0xa0, 0x80]]) {
      expect(bodyText(new Uint8Array(bytes))).toEqual({
        status: 400,
        reason: 'The request body is not valid UTF-8: send the RunAgentInput as UTF-8 JSON (RFC 8259 §8.1), converting text that is in another encoding first.',
      });
    }
  });
});

/**
 * POSTs `body` with `headers` to one agent served both ways (node:http on loopback, and the fetch
 * handler called directly): each answer's status and error, and how many times the agent ran.
 */
async function refusalsOfBoth(headers: Record<string, string>, body: RequestInit['body'], options: { cors?: { origins: string[]; credentials: boolean } } = {}) {
  let runs = 0;
  const agent: AguiAgent = () => defer(() => (runs++, of({ type: EventType.TEXT_MESSAGE_CHUNK, delta: 'x' } as Event)));
  const server = createServer(createAguiHandler(agent, options));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/agent`;
    const viaNode = await fetch(url, { method: 'POST', headers, body });
    const viaFetch = await createAguiFetchHandler(agent, options)(new Request('http://localhost/agent', { method: 'POST', headers, body }));
    const answers = [];
    for (const response of [viaNode, viaFetch]) answers.push({ status: response.status, error: (await response.json()).error as string });
    return { answers, runs };
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
}

describe('the handlers and a body that is not UTF-8 JSON', () => {
  it.each([
    ['Latin-1 bytes', { 'Content-Type': 'application/json' }, Buffer.from(JSON.stringify({ ...input(), threadId: 'café' }), 'latin1'), 400, /^The request body is not valid UTF-8/],
    ['a Latin-1 charset', { 'Content-Type': 'application/json; charset=iso-8859-1' }, Buffer.from(JSON.stringify(input())), 415, /charset=iso-8859-1/],
    ['a gzipped body', { 'Content-Type': 'application/json', 'Content-Encoding': 'gzip' }, gzipSync(JSON.stringify(input())), 415, /^The request body is sent with 'Content-Encoding: gzip'/],
  ])('should refuse %s before running the agent, saying what to send (node:http and fetch)', async (_name, headers, body, status, reason) => {
    const { answers, runs } = await refusalsOfBoth(headers, body as RequestInit['body']);
    for (const answer of answers) {
      expect(answer.status).toBe(status);
      expect(answer.error).toMatch(reason);
    }
    expect(runs).toBe(0);
  });
});

describe('the handlers and a cross-site POST a browser sends without a preflight', () => {
  it.each([
    ['text/plain', { 'Content-Type': 'text/plain;charset=UTF-8' }],
    ['a form', { 'Content-Type': 'application/x-www-form-urlencoded' }],
    ['a body without a type', {}],
  ])('should answer 415 and never run the agent for %s from another origin, with cors set (node:http and fetch)', async (_name, headers) => {
    const cors = { origins: ['https://app.example.com'], credentials: true };
    const sent = { ...headers, Origin: 'https://evil.example', Cookie: 's=victim' };
    // Node's fetch sends a string body as text/plain unless told: a Blob without a type has none.
    const body = 'Content-Type' in headers ? JSON.stringify(input()) : new Blob([JSON.stringify(input())]);
    const { answers, runs } = await refusalsOfBoth(sent, body, { cors });
    for (const answer of answers) {
      expect(answer.status).toBe(415);
      expect(answer.error).toMatch(/Content-Type: application\/json/);
    }
    expect(runs).toBe(0);
  });
});

describe("a broker's stop route and a cross-site POST a browser sends without a preflight", () => {
  let broker: RunBroker | undefined;
  let server: Server | undefined;
  afterEach(async () => {
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined));
    server = undefined;
    await broker?.close();
    broker = undefined;
  });

  it('should answer 415 and leave the run running for a text/plain or untyped stop from another page, and stop it for a JSON one (node:http and fetch)', async () => {
    let signal: AbortSignal | undefined;
    const agent: AguiAgent = (_input, context) => defer(() => ((signal = context.signal), NEVER));
    broker = createRunBroker({ authorize: () => true });
    server = createServer(createAguiHandler(agent, { broker }));
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const run = fetch(base, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(input({ threadId: 't1', runId: 'r1' })) });
    await (await run).body!.getReader().read();
    const stop = (headers: Record<string, string>) => fetch(`${base}/threads/t1/runs/r1/stop`, { method: 'POST', headers: { Origin: 'https://evil.example', ...headers } });
    const fetchStop = (headers: Record<string, string>) =>
      createAguiFetchHandler(agent, { broker })(new Request('http://localhost/threads/t1/runs/r1/stop', { method: 'POST', headers: { Origin: 'https://evil.example', ...headers } }));

    const refused = [await stop({ 'Content-Type': 'text/plain' }), await stop({}), await fetchStop({ 'Content-Type': 'text/plain' }), await fetchStop({})];
    const stillRunning = signal?.aborted === false;
    const stopped = await stop({ 'Content-Type': 'application/json' });

    expect(refused.map((response) => response.status)).toEqual([415, 415, 415, 415]);
    expect(stillRunning).toBe(true);
    expect(stopped.status).toBe(202);
    await pollUntil(async () => signal?.aborted, (aborted) => aborted === true, { timeoutMs: 5000, intervalMs: 10 });
  });
});

describe('stateSchema (the handlers)', () => {
  let server: Server | undefined;
  let broker: RunBroker | undefined;
  afterEach(async () => {
    server?.closeAllConnections();
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    await broker?.close();
    server = broker = undefined;
  });

  it('should answer 400 naming each failing path, before the agent runs (node:http, zod)', async () => {
    const seen: unknown[] = [];
    let url: string;
    ({ server, url } = await listen(createAguiHandler(stateEcho(seen), { stateSchema: Todos })));
    const bad = await postJSON(url, input({ state: { todos: [{ title: 1 }] } }));
    expect(bad.status).toBe(400);
    const { error } = (await bad.json()) as { error: string };
    expect(error).toMatch(/^The request's state does not match this agent's state schema: 'todos\.0\.title': .+; 'count': .+\. Send a state the agent accepts\.$/);
    expect(seen).toEqual([]);
  });

  it('should run a valid state as the client sent it, and the official client agrees (node:http, zod)', async () => {
    const seen: unknown[] = [];
    let url: string;
    ({ server, url } = await listen(createAguiHandler(stateEcho(seen), { stateSchema: Todos })));
    const response = await postJSON(url, input());
    expect(response.status).toBe(200);
    const events = await eventsOf(response);
    // The client's copy, not the validator's value (its default `done: false`): deltas are computed against it.
    const expectedState = input().state;
    expect(seen).toEqual([expectedState]);
    const oracle = await runWithOracle(from(events), { initialState: input().state });
    // The user's turn comes from RUN_STARTED's input, then the agent's answer.
    expect(oracle.messages).toEqual([input().messages[0], { id: expect.any(String), role: 'assistant', content: JSON.stringify(expectedState) }]);
    expect(oracle.state).toEqual(expectedState);
    expect(events[0]).toMatchObject({ type: EventType.RUN_STARTED, input: { state: expectedState } });
  });

  it('should wait for an asynchronous validator: 400 naming the path, or the run (node:http and fetch)', async () => {
    const seen: unknown[] = [];
    let url: string;
    ({ server, url } = await listen(createAguiHandler(stateEcho(seen), { stateSchema: asyncCount })));
    const fetchHandler = createAguiFetchHandler(stateEcho(seen), { stateSchema: asyncCount });
    const refusal = { error: "The request's state does not match this agent's state schema: 'count': must be a number. Send a state the agent accepts." };
    const viaNode = await postJSON(url, input({ state: { count: 'one' } }));
    expect([viaNode.status, await viaNode.json()]).toEqual([400, refusal]);
    const viaFetch = await fetchHandler(new Request('http://localhost/agent', { method: 'POST', headers: JSON_TYPE, body: JSON.stringify(input({ state: {} })) }));
    expect([viaFetch.status, await viaFetch.json()]).toEqual([400, refusal]);
    expect(seen).toEqual([]);

    const ok = await fetchHandler(new Request('http://localhost/agent', { method: 'POST', headers: JSON_TYPE, body: JSON.stringify(input({ state: { count: 2, extra: true } })) }));
    expect(ok.status).toBe(200);
    const oracle = await runWithOracle(from(await eventsOf(ok)));
    expect(oracle.messages.map((message) => message.content)).toEqual(['Hi', '{"count":2,"extra":true}']);
    expect(seen).toEqual([{ count: 2, extra: true }]);
  });

  it('should check the state of a run served through a broker, but not of connect', async () => {
    const seen: unknown[] = [];
    broker = createRunBroker({ authorize: () => true, detachGraceMs: Infinity });
    let url: string;
    ({ server, url } = await listen(createAguiHandler(stateEcho(seen), { stateSchema: Todos, broker, basePath: '/agent' })));
    const bad = await postJSON(url, input({ state: { count: 'x', todos: [] } }));
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: string }).error).toMatch(/^The request's state does not match this agent's state schema: 'count': /);
    const connect = await postJSON(`${url}/connect`, input({ runId: 'c1', state: {} }));
    expect(connect.status).toBe(200);
    await connect.body?.cancel();
    expect(seen).toEqual([]);
  });

  it('should answer 500 without the validator\'s words when the validator itself fails', async () => {
    const warn = jest.spyOn(console, 'warn').mockImplementation(() => {});
    try {
      const broken: StandardSchemaV1 = { '~standard': { version: 1, vendor: 'broken', validate: () => { throw new Error('secret detail'); } } };
      const response = await createAguiFetchHandler(stateEcho([]), { stateSchema: broken })(new Request('http://localhost/agent', { method: 'POST', headers: JSON_TYPE, body: JSON.stringify(input()) }));
      expect([response.status, await response.json()]).toEqual([500, { error: "The server could not check the request's state: its state schema failed. This is a server error." }]);
      expect(warn).toHaveBeenCalledWith(expect.stringContaining('secret detail'));
    } finally {
      warn.mockRestore();
    }
  });

  it('should end the run with RUN_ERROR INVALID_STATE when an agent decodes a bad state itself, after the 200', async () => {
    const agent: AguiAgent = (runInput) => defer(async () => {
      const state = await decodeState(runInput, asyncCount);
      return of({ type: 'TEXT_MESSAGE_CHUNK' as const, delta: String(state.count) });
    }).pipe(mergeAll());
    const response = await createAguiFetchHandler(agent)(new Request('http://localhost/agent', { method: 'POST', headers: JSON_TYPE, body: JSON.stringify(input({ state: { count: 'one' } })) }));
    expect(response.status).toBe(200);
    const events = await eventsOf(response);
    expect(events.map((event) => event.type)).toEqual([EventType.RUN_STARTED, EventType.RUN_ERROR]);
    expect(events[1]).toMatchObject({ code: 'INVALID_STATE', message: "The state does not match its schema: 'count': must be a number. Send a state the schema accepts." });
    const good = await createAguiFetchHandler(agent)(new Request('http://localhost/agent', { method: 'POST', headers: JSON_TYPE, body: JSON.stringify(input({ state: { count: 3 } })) }));
    const oracle = await runWithOracle(from(await eventsOf(good)));
    expect(oracle.messages.map((message) => message.content)).toEqual(['Hi', '3']);
  });
});

export type { RunAgentInput };
