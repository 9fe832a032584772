/**
 * agui-rx in a Fastify 5 app with a run broker: every method on `/agent` and `/agent/*` goes to
 * the handler, which serves the broker's four routes (and answers 404 / 405 for the rest).
 * Fastify leaves `request.raw.url` whole, so the handler's `basePath` is '/agent'.
 *
 *     npm run build && npx tsc -p docs/examples && node .scratch/examples/broker-fastify.js
 *
 * As in fastify.ts, the routes live in a plugin whose content-type parser leaves the body unread,
 * and `reply.hijack()` lets the handler write the response.
 */
import Fastify, { type FastifyInstance } from 'fastify';
import type { Server } from 'node:http';
import { createAguiHandler, createRunBroker, type RunBroker } from 'agui-rx';
import { weatherAgent } from './agent.js';
import { authorizeBySession } from './broker-auth.js';

/** The app: the agent and its runs under /agent; other routes as usual. */
export function createApp(broker: RunBroker = createRunBroker({ authorize: authorizeBySession })): FastifyInstance {
  const app = Fastify();
  const handle = createAguiHandler(weatherAgent, { broker, basePath: '/agent' });
  app.register(async (agentRoutes) => {
    agentRoutes.removeAllContentTypeParsers();
    agentRoutes.addContentTypeParser('*', (_request, _payload, done) => done(null, undefined));
    for (const path of ['/agent', '/agent/*']) {
      agentRoutes.all(path, (request, reply) => {
        reply.hijack();
        handle(request.raw, reply.raw);
      });
    }
  });
  app.get('/health', async () => ({ ok: true }));
  return app;
}

/** Listens on `port` (0 = any free port) on 127.0.0.1 and resolves with the Node server. */
export async function start(port = Number(process.env.PORT ?? 8000), broker?: RunBroker): Promise<Server> {
  const app = createApp(broker);
  await app.listen({ port, host: '127.0.0.1' });
  return app.server;
}

if (process.argv[1]?.endsWith('broker-fastify.js')) void start().then(() => console.log(`AG-UI agent with a run broker on http://localhost:${process.env.PORT ?? 8000}/agent`));
