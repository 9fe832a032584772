/**
 * agui-rx over node:http with a run broker: runs outlive their connections. A client that drops
 * resumes with `Last-Event-ID`, a reloaded page reconnects, and a run can be stopped from anywhere.
 *
 * Run it (Node 20 runs JavaScript, so compile the examples first):
 *
 *     npm run build && npx tsc -p docs/examples && node .scratch/examples/broker-node-http.js
 *
 * then, on http://localhost:8000 (PORT changes the port), with the session cookie of broker-auth.ts:
 *
 *     POST /agent                                          start a run (thread ids 'alice:…')
 *     GET  /agent/threads/<threadId>/runs/<runId>/events   replay, then live (Last-Event-ID resumes)
 *     POST /agent/connect                                  rebuild the thread, then its running run
 *     POST /agent/threads/<threadId>/runs/<runId>/stop     cancel the run: 202
 *
 * Several instances share their runs through Redis: pass `createRunBroker({ store:
 * createRedisRunStore({ url }) })` (`agui-rx/broker/redis`) to `createApp`.
 */
import { createServer, type Server } from 'node:http';
import { createAguiHandler, createRunBroker, type RunBroker } from 'agui-rx';
import { weatherAgent } from './agent.js';
import { authorizeBySession } from './broker-auth.js';

/** The server: the broker's four routes under /agent, 404 elsewhere. */
export function createApp(broker: RunBroker = createRunBroker({ authorize: authorizeBySession })): Server {
  const handle = createAguiHandler(weatherAgent, { broker, basePath: '/agent' });
  return createServer((req, res) => {
    if (req.url === '/agent' || req.url?.startsWith('/agent/')) return handle(req, res);
    res.writeHead(404).end();
  });
}

/** Listens on `port` (0 = any free port) and resolves once the server accepts connections. */
export function start(port = Number(process.env.PORT ?? 8000), broker?: RunBroker): Promise<Server> {
  const server = createApp(broker);
  return new Promise((resolve) => server.listen(port, () => resolve(server)));
}

if (process.argv[1]?.endsWith('broker-node-http.js')) void start().then(() => console.log(`AG-UI agent with a run broker on http://localhost:${process.env.PORT ?? 8000}/agent`));
