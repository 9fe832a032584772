/**
 * agui-rx over node:http: one agent served on POST, the AG-UI HTTP binding, with no framework.
 *
 * Run it (Node 20 runs JavaScript, so compile the examples first):
 *
 *     npm run build && npx tsc -p docs/examples && node .scratch/examples/node-http.js
 *
 * then point an AG-UI client at http://localhost:8000 (PORT changes the port), or:
 *
 *     curl -N -H 'Content-Type: application/json' -d '{"threadId":"t1","runId":"r1","messages":[{"id":"u1","role":"user","content":"Weather in Paris?"}],"state":{},"tools":[],"context":[],"forwardedProps":{}}' http://localhost:8000
 *
 * spec/docs/examples.spec.ts runs it on an ephemeral port with the official `HttpAgent`.
 */
import { createServer, type Server } from 'node:http';
import { createAguiHandler } from 'agui-rx';
import { weatherAgent } from './agent.js';

/**
 * The server: `createAguiHandler` answers 405/413/400 for bad requests, streams good ones as SSE
 * (or protobuf when `Accept` asks for it), and aborts the agent when the client goes away.
 */
export function createApp(): Server {
  return createServer(createAguiHandler(weatherAgent, { heartbeatMs: 15_000 }));
}

/** Listens on `port` (0 = any free port) and resolves once the server accepts connections. */
export function start(port = Number(process.env.PORT ?? 8000)): Promise<Server> {
  const server = createApp();
  return new Promise((resolve) => server.listen(port, () => resolve(server)));
}

if (process.argv[1]?.endsWith('node-http.js')) void start().then(() => console.log(`AG-UI agent on http://localhost:${process.env.PORT ?? 8000}`));
