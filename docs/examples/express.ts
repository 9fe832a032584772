/**
 * agui-rx in an Express 5 app: `createAguiHandler` is a plain `(req, res)` handler, so it is a route.
 *
 * Run it (Node 20 runs JavaScript, so compile the examples first):
 *
 *     npm run build && npx tsc -p docs/examples && node .scratch/examples/express.js
 *
 * then POST a RunAgentInput to http://localhost:8000/agent (PORT changes the port).
 *
 * The handler reads and validates the body itself (and refuses one over `maxBodyBytes` before parsing
 * it); behind `express.json()` it validates `req.body` instead, and that parser's `limit` applies.
 * Compression middleware must not buffer `text/event-stream` responses (see docs/faq.md).
 */
import express, { type Express } from 'express';
import type { Server } from 'node:http';
import { createAguiHandler } from 'agui-rx';
import { weatherAgent } from './agent.js';

/** The app: the agent on POST /agent; other routes as usual. */
export function createApp(): Express {
  const app = express();
  app.post('/agent', createAguiHandler(weatherAgent, { maxBodyBytes: 512 * 1024 }));
  app.get('/health', (_req, res) => {
    res.json({ ok: true });
  });
  return app;
}

/** Listens on `port` (0 = any free port) and resolves once the server accepts connections. */
export function start(port = Number(process.env.PORT ?? 8000)): Promise<Server> {
  const app = createApp();
  return new Promise((resolve) => {
    const server = app.listen(port, () => resolve(server));
  });
}

if (process.argv[1]?.endsWith('express.js')) void start().then(() => console.log(`AG-UI agent on http://localhost:${process.env.PORT ?? 8000}/agent`));
