/**
 * agui-rx in a Hono 4 app with a run broker: `app.all('/agent/*')` (which matches `/agent` too)
 * hands every request under /agent to `createAguiFetchHandler`. `c.req.raw.url` is the whole URL,
 * so the handler's `basePath` is '/agent'.
 *
 *     npm run build && npx tsc -p docs/examples && node .scratch/examples/broker-hono.js
 *
 * On Bun, Deno or Cloudflare Workers, `export default app`; on Node, `@hono/node-server`'s
 * `serve({ fetch: app.fetch })`, or the `serveFetch` bridge used here.
 */
import { Hono } from 'hono';
import type { Server } from 'node:http';
import { createAguiFetchHandler, createRunBroker, type RunBroker } from 'agui-rx';
import { weatherAgent } from './agent.js';
import { authorizeBySession } from './broker-auth.js';
import { serveFetch } from './serveFetch.js';

/** The app: the agent and its runs under /agent; other routes as usual. */
export function createApp(broker: RunBroker = createRunBroker({ authorize: authorizeBySession })): Hono {
  const app = new Hono();
  const handle = createAguiFetchHandler(weatherAgent, { broker, basePath: '/agent' });
  app.all('/agent/*', (c) => handle(c.req.raw));
  app.get('/health', (c) => c.json({ ok: true }));
  return app;
}

/** Serves the app with node:http on `port` (0 = any free port); resolves once it accepts connections. */
export function start(port = Number(process.env.PORT ?? 8000), broker?: RunBroker): Promise<Server> {
  const app = createApp(broker);
  const server = serveFetch((request) => app.fetch(request));
  return new Promise((resolve) => server.listen(port, () => resolve(server)));
}

if (process.argv[1]?.endsWith('broker-hono.js')) void start().then(() => console.log(`AG-UI agent with a run broker on http://localhost:${process.env.PORT ?? 8000}/agent`));
