import { HttpAgent } from '@ag-ui/client';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import bunDeno from '../../docs/examples/broker-bun-deno';
import { start as startExpress } from '../../docs/examples/broker-express';
import { start as startFastify } from '../../docs/examples/broker-fastify';
import { start as startHono } from '../../docs/examples/broker-hono';
import { GET, POST } from '../../docs/examples/broker-nextjs-route';
import { start as startNodeHttp } from '../../docs/examples/broker-node-http';
import { close, listenFetch } from './listen';
import { ResumableHttpAgent } from '../../lib/client/index';

jest.mock('agui-rx', () => jest.requireActual('../../lib/index'), { virtual: true });

const cookie = { Cookie: 'session=demo-session' };

describe('broker examples', () => {
  const servers: Record<string, () => Promise<Server>> = {
    node: () => startNodeHttp(0),
    express: () => startExpress(0),
    fastify: () => startFastify(0),
    hono: () => startHono(0),
    next: () => listenFetch((request) => (request.method === 'GET' ? GET(request) : POST(request))),
    bun: () => listenFetch((request) => bunDeno.fetch(request)),
  };
  for (const [name, startServer] of Object.entries(servers)) {
    it(`should serve the ${name} example's broker routes to the official client`, async () => {
      const server = await startServer();
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/agent`;
      try {
        const agent = new HttpAgent({ url: base, threadId: 'alice:t1', headers: cookie, initialMessages: [{ id: 'u1', role: 'user', content: 'Weather in Paris?' }], initialState: { units: 'metric' } });
        await agent.runAgent({ runId: 'run-1' });
        expect(agent.messages.at(-1)?.content).toBe('It is -3°C in Paris.');
        const all = await (await fetch(`${base}/threads/alice%3At1/runs/run-1/events`, { headers: cookie })).text();
        const ids = [...all.matchAll(/^id: (.*)$/gm)].map((m) => m[1]);
        expect(ids.length).toBeGreaterThan(5);
        const after = await (await fetch(`${base}/threads/alice%3At1/runs/run-1/events`, { headers: { ...cookie, 'Last-Event-ID': ids[2]! } })).text();
        expect([...after.matchAll(/^id: (.*)$/gm)].map((m) => m[1])).toEqual(ids.slice(3));
        expect((await fetch(`${base}/threads/alice%3At1/runs/run-1/events`)).status).toBe(403);
        expect((await fetch(`${base}/threads/alice%3At1/runs/nope/events`, { headers: cookie })).status).toBe(404);
        expect((await fetch(`${base}/threads/alice%3At1/runs/run-1/stop`, { method: 'POST', headers: cookie })).status).toBe(202);
        expect((await fetch(`${base}/threads/alice%3At1/runs/run-1/events`, { method: 'POST', headers: cookie })).status).toBe(405);
        expect((await fetch(`${base}/threads/alice%3At1/runs/run-1/events`, { headers: { ...cookie, 'Last-Event-ID': 'x y' } })).status).toBe(400);
        const reloaded = new ResumableHttpAgent({ url: base, threadId: 'alice:t1', headers: cookie });
        await reloaded.connectAgent();
        expect(reloaded.messages.map((m) => m.content)).toEqual(agent.messages.map((m) => m.content));
        expect(reloaded.state).toEqual(agent.state);
      } finally {
        await close(server);
      }
    });
  }
});
