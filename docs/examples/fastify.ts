/**
 * agui-rx in a Fastify 5 app: the route hands the raw Node request and response to
 * `createAguiHandler`, which reads and validates the body itself and streams the run.
 *
 * Run it (Node 20 runs JavaScript, so compile the examples first):
 *
 *     npm run build && npx tsc -p docs/examples && node .scratch/examples/fastify.js
 *
 * then POST a RunAgentInput to http://localhost:8000/agent (PORT changes the port).
 *
 * Two Fastify details make this work:
 * - the route lives in its own plugin (an encapsulation context) whose content-type parser leaves
 *   the body unread, so that `createAguiHandler` can read it (and refuse one over `maxBodyBytes`);
 * - `reply.hijack()` tells Fastify that the handler writes the response itself.
 */
import Fastify, { type FastifyInstance } from 'fastify';
import type { Server } from 'node:http';
import { createAguiHandler } from 'agui-rx';
import { weatherAgent } from './agent.js';

/** The app: the agent on POST /agent; other routes as usual. */
export function createApp(): FastifyInstance {
  const app = Fastify();
  const handle = createAguiHandler(weatherAgent);
  app.register(async (agentRoutes) => {
    // Only inside this plugin: leave every body unparsed for createAguiHandler.
    agentRoutes.removeAllContentTypeParsers();
    agentRoutes.addContentTypeParser('*', (_request, _payload, done) => done(null, undefined));
    agentRoutes.post('/agent', (request, reply) => {
      reply.hijack();
      handle(request.raw, reply.raw);
    });
  });
  app.get('/health', async () => ({ ok: true }));
  return app;
}

/** Listens on `port` (0 = any free port) on 127.0.0.1 and resolves with the Node server. */
export async function start(port = Number(process.env.PORT ?? 8000)): Promise<Server> {
  const app = createApp();
  await app.listen({ port, host: '127.0.0.1' });
  return app.server;
}

if (process.argv[1]?.endsWith('fastify.js')) void start().then(() => console.log(`AG-UI agent on http://localhost:${process.env.PORT ?? 8000}/agent`));
