/**
 * agui-rx in a Hono 4 app: `createAguiFetchHandler` is a Web `(request) => Promise<Response>`
 * handler, so a route returns what it returns for `c.req.raw`.
 *
 * Run it (Node 20 runs JavaScript, so compile the examples first):
 *
 *     npm run build && npx tsc -p docs/examples && node .scratch/examples/hono.js
 *
 * then POST a RunAgentInput to http://localhost:8000/agent (PORT changes the port).
 *
 * On Bun, Deno or Cloudflare Workers, `export default app` is all the serving there is. On Node,
 * `@hono/node-server`'s `serve({ fetch: app.fetch })` is the usual server; this example uses the
 * small `serveFetch` bridge next to it instead, to add no dependency.
 */
import { Hono } from 'hono';
import type { Server } from 'node:http';
import { createAguiFetchHandler } from 'agui-rx';
import { weatherAgent } from './agent.js';
import { serveFetch } from './serveFetch.js';

/** The app: the agent on POST /agent; other routes as usual. */
export function createApp(): Hono {
  const app = new Hono();
  const handle = createAguiFetchHandler(weatherAgent);
  app.post('/agent', (c) => handle(c.req.raw));
  app.get('/health', (c) => c.json({ ok: true }));
  return app;
}

/** Serves the app with node:http on `port` (0 = any free port); resolves once it accepts connections. */
export function start(port = Number(process.env.PORT ?? 8000)): Promise<Server> {
  const app = createApp();
  const server = serveFetch((request) => app.fetch(request));
  return new Promise((resolve) => server.listen(port, () => resolve(server)));
}

if (process.argv[1]?.endsWith('hono.js')) void start().then(() => console.log(`AG-UI agent on http://localhost:${process.env.PORT ?? 8000}/agent`));
