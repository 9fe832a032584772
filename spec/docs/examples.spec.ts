import { HttpAgent } from '@ag-ui/client';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import bunDeno from '../../docs/examples/bun-deno';
import { start as startExpress } from '../../docs/examples/express';
import { start as startAuthContext } from '../../docs/examples/auth-context';
import { start as startFastify } from '../../docs/examples/fastify';
import { start as startHono } from '../../docs/examples/hono';
import { main as runInProcess } from '../../docs/examples/in-process-agent';
import { InProcessAgent } from '../../lib/client/index.js';
import { weatherAgent } from '../../docs/examples/agent';
import { POST, postWithoutHandler } from '../../docs/examples/nextjs-route';
import { start as startNodeHttp } from '../../docs/examples/node-http';
import { close, listenFetch } from './listen';
import { connect } from 'node:net';
import type { AgentEvent } from '../../lib/protocol/agentEvent';
import { createAguiFetchHandler } from '../../lib/transports/createAguiHandler';
import { pollUntil } from '../support/helpers';

// The examples import 'agui-rx' by package name, as a user's code does; here it is this repository's
// source (as in every other spec), not the build in dist/, which may be stale or being rebuilt.
jest.mock('agui-rx', () => jest.requireActual('../../lib/index'), { virtual: true });

/** What the official client holds after one run of the weather agent, asked about Paris. */
const expectedMessages = [
  { id: 'u1', role: 'user', content: 'Weather in Paris?' },
  {
    id: expect.any(String),
    role: 'assistant',
    content: 'Checking the weather.',
    toolCalls: [{ id: 'call-1', type: 'function', function: { name: 'weather', arguments: '{"city":"Paris"}' } }],
  },
  { id: expect.any(String), role: 'tool', toolCallId: 'call-1', content: '{"city":"Paris","celsius":-3}' },
  { id: expect.any(String), role: 'assistant', content: 'It is -3°C in Paris.' },
];
const expectedState = { units: 'metric', lastCity: 'Paris' };

/** Runs the official HttpAgent against `server` + `path` and returns the messages and state it built. */
async function runOfficialClient(server: Server, path: string) {
  const { port } = server.address() as AddressInfo;
  const agent = new HttpAgent({
    url: `http://127.0.0.1:${port}${path}`,
    threadId: 'thread-1',
    initialMessages: [{ id: 'u1', role: 'user', content: 'Weather in Paris?' }],
    initialState: { units: 'metric' },
  });
  await agent.runAgent({ runId: 'run-1' });
  return { messages: agent.messages, state: agent.state };
}

describe('docs/examples', () => {
  const servers: Record<string, () => Promise<Server>> = {
    'node-http.ts': () => startNodeHttp(0),
    'express.ts': () => startExpress(0),
    'fastify.ts': () => startFastify(0),
    'hono.ts': () => startHono(0),
    'nextjs-route.ts (POST)': () => listenFetch(POST),
    'nextjs-route.ts (postWithoutHandler)': () => listenFetch(postWithoutHandler),
    'bun-deno.ts': () => listenFetch((request) => bunDeno.fetch(request)),
  };
  const paths: Record<string, string> = { 'express.ts': '/agent', 'fastify.ts': '/agent', 'hono.ts': '/agent' };

  for (const [name, startServer] of Object.entries(servers)) {
    it(`should serve one run of ${name} that the official HttpAgent turns into the expected messages and state`, async () => {
      const server = await startServer();
      try {
        const result = await runOfficialClient(server, paths[name] ?? '/');
        expect(result).toEqual({ messages: expectedMessages, state: expectedState });
      } finally {
        await close(server);
      }
    });
  }

  it('should run for a signed-in caller and answer 401 to anyone else in the auth example, with CORS for the web app', async () => {
    const server = await startAuthContext(0);
    try {
      const { port } = server.address() as AddressInfo;
      const agent = new HttpAgent({
        url: `http://127.0.0.1:${port}/agent`,
        threadId: 'thread-1',
        headers: { Authorization: 'Bearer alice-token', Origin: 'http://localhost:3000' },
        initialMessages: [{ id: 'u1', role: 'user', content: 'Weather in Paris?' }],
        initialState: { units: 'metric' },
      });
      await agent.runAgent({ runId: 'run-1' });
      expect({ messages: agent.messages, state: agent.state }).toEqual({ messages: expectedMessages, state: expectedState });
      const body = JSON.stringify({ threadId: 't', runId: 'r', messages: [], tools: [], context: [], state: {}, forwardedProps: {} });
      const anonymous = await fetch(`http://127.0.0.1:${port}/agent`, { method: 'POST', headers: { 'Content-Type': 'application/json', Origin: 'http://localhost:3000' }, body });
      expect(anonymous.status).toBe(401);
      expect(await anonymous.json()).toEqual({ error: 'Sign in first: send Authorization: Bearer <token>.' });
      expect(anonymous.headers.get('access-control-allow-origin')).toBe('http://localhost:3000');
      const preflight = await fetch(`http://127.0.0.1:${port}/agent`, { method: 'OPTIONS', headers: { Origin: 'http://localhost:3000', 'Access-Control-Request-Method': 'POST' } });
      expect([preflight.status, preflight.headers.get('access-control-allow-headers')]).toEqual([204, 'Content-Type, Authorization, Accept, Last-Event-ID']);
    } finally {
      await close(server);
    }
  });

  it('should refuse a body that is not a RunAgentInput with 400 in the Express example', async () => {
    const server = await startExpress(0);
    try {
      const { port } = server.address() as AddressInfo;
      const response = await fetch(`http://127.0.0.1:${port}/agent`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"threadId":1}' });
      expect(response.status).toBe(400);
      expect((await response.json()).error).toMatch(/not a valid RunAgentInput/);
    } finally {
      await close(server);
    }
  });

  it('should run the in-process AbstractAgent with runAgent() and build the expected messages and state', async () => {
    await expect(runInProcess()).resolves.toEqual({ messages: expectedMessages, state: expectedState });
  });

  it('should keep the agent function in a clone of the in-process agent', async () => {
    const agent = new InProcessAgent(weatherAgent, { threadId: 'thread-1', initialMessages: [{ id: 'u1', role: 'user', content: 'Weather in Paris?' }], initialState: { units: 'metric' } });
    const copy = agent.clone();
    await copy.runAgent({ runId: 'run-2' });
    expect({ messages: copy.messages, state: copy.state }).toEqual({ messages: expectedMessages, state: expectedState });
    expect(agent.messages).toHaveLength(1);
  });

  it('should carry backpressure through the serveFetch bridge: a client that never reads is cut after stallTimeoutMs, its agent stopped', async () => {
    let aborted: AbortSignal | undefined;
    let pulled = 0;
    const delta = 'x'.repeat(100_000);
    const handler = createAguiFetchHandler(
      function* endless(_input, { signal }): Generator<AgentEvent> {
        aborted = signal;
        for (;;) {
          pulled++;
          yield { type: 'TEXT_MESSAGE_CHUNK', messageId: 'm1', delta };
        }
      },
      { stallTimeoutMs: 500, heartbeatMs: 0 },
    );
    const server = await listenFetch(handler);
    try {
      const { port } = server.address() as AddressInfo;
      const body = JSON.stringify({ threadId: 't', runId: 'r', messages: [], tools: [], context: [], state: {}, forwardedProps: {} });
      // A raw client that sends its request and never reads a byte of the answer.
      const socket = connect(port, '127.0.0.1');
      socket.write(`POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
      socket.pause();
      await pollUntil(() => aborted?.aborted === true, (done) => done, { what: 'the agent to be stopped as a stalled client\'s', timeoutMs: 20_000 });
      // Pulled only while the socket took bytes: a few MB of kernel buffers, not without end.
      expect(pulled * delta.length).toBeLessThan(64 * 1024 * 1024);
      socket.destroy();
    } finally {
      await close(server);
    }
  });
});
