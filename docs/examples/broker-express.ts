/**
 * agui-rx in an Express 5 app with a run broker: `app.use('/agent', handler)` serves the broker's
 * four routes. Express strips the mount path from `req.url`, so the handler's `basePath` is ''.
 *
 *     npm run build && npx tsc -p docs/examples && node .scratch/examples/broker-express.js
 *
 * Routes (PORT changes the port 8000): POST /agent, GET /agent/threads/<threadId>/runs/<runId>/events,
 * POST /agent/connect, POST /agent/threads/<threadId>/runs/<runId>/stop. The handler reads the body
 * itself, or takes `req.body` from a body parser in front (its `limit` then applies).
 */
import express, { type Express } from 'express';
import type { Server } from 'node:http';
import { createAguiHandler, createRunBroker, type RunBroker } from 'agui-rx';
import { weatherAgent } from './agent.js';
import { authorizeBySession } from './broker-auth.js';

/** The app: the agent and its runs under /agent; other routes as usual. */
export function createApp(broker: RunBroker = createRunBroker({ authorize: authorizeBySession })): Express {
  const app = express();
  app.use('/agent', createAguiHandler(weatherAgent, { broker, basePath: '' }));
  app.get('/health', (_req, res) => {
    res.json({ ok: true });
  });
  return app;
}

/** Listens on `port` (0 = any free port) and resolves once the server accepts connections. */
export function start(port = Number(process.env.PORT ?? 8000), broker?: RunBroker): Promise<Server> {
  const app = createApp(broker);
  return new Promise((resolve) => {
    const server = app.listen(port, () => resolve(server));
  });
}

if (process.argv[1]?.endsWith('broker-express.js')) void start().then(() => console.log(`AG-UI agent with a run broker on http://localhost:${process.env.PORT ?? 8000}/agent`));
