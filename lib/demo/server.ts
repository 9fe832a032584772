import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRunBroker, type RunBroker, type RunBrokerOptions } from '../broker/createRunBroker.js';
import { createAguiHandler, type AguiAgent, type AguiHandlerOptions } from '../transports/createAguiHandler.js';
import { allowEveryRequest } from './demoBroker.js';
import { renderDemoPage, type DemoPageOptions } from './page.js';

/** Options of {@link startDemoServer}. */
export interface DemoServerOptions {
  /** The agent that answers POST /agent. */
  agent: AguiAgent;
  /** The TCP port; 0 picks a free one. Default: 8000. */
  port?: number;
  /** The interface to listen on. Default: `127.0.0.1` (this machine only). */
  host?: string;
  /** What the page shows and offers (the agent's label, example prompts). */
  page?: Omit<DemoPageOptions, 'endpoint'>;
  /** Options of the AG-UI handler (body limit, heartbeat, `toAgui` options). */
  handler?: Omit<AguiHandlerOptions, 'broker' | 'basePath'>;
  /**
   * Options of the run broker: its store (default: in memory), `detachGraceMs` (default 30 s),
   * `onActivity`, … Its `authorize` defaults to the demo's allow-all hook ({@link allowEveryRequest}).
   */
  broker?: RunBrokerOptions;
}

/** A running demo server. */
export interface DemoServer {
  /** The page's address, with the address listened on, e.g. `http://127.0.0.1:8000/`. */
  url: string;
  /** The port it listens on. */
  port: number;
  /** The run broker serving /agent. */
  broker: RunBroker;
  /** Stops listening, ends open connections, cancels the runs this server runs and closes the broker's store. */
  close(): Promise<void>;
}

/**
 * Starts the demo's node:http server: GET `/` serves the page ({@link renderDemoPage}) and `/agent`
 * the AG-UI HTTP binding ({@link createAguiHandler}) for `options.agent`, through a run broker
 * (`createRunBroker`), so that runs outlive their connections:
 *
 * - `POST /agent` starts (or attaches to) a run; every SSE frame has an `id:`;
 * - `GET /agent/threads/<threadId>/runs/<runId>/events` resumes after `Last-Event-ID`;
 * - `POST /agent/connect` rebuilds a thread, then streams its running run live;
 * - `POST /agent/threads/<threadId>/runs/<runId>/stop` cancels a run (202).
 *
 * A run nobody reads goes on for `broker.detachGraceMs` (30 s), then is cancelled. Anything else is 404.
 *
 * ## Example
 *
 * ```ts
 * const server = await startDemoServer({ port: 0, agent: createScriptedAgent() });
 * console.log(server.url); // http://127.0.0.1:53124/
 * await server.close();
 * ```
 *
 * @param options The agent, port, host, page options and handler options.
 * @return Once listening: the URL, the port, and `close()`.
 * @throws The listen error (e.g. `EADDRINUSE`) as a rejection, with what to do in its message.
 */
export function startDemoServer(options: DemoServerOptions): Promise<DemoServer> {
  const host = options.host ?? '127.0.0.1';
  const html = renderDemoPage({ ...options.page, endpoint: '/agent' });
  // The allow-all hook is for the demo only: see allowEveryRequest.
  const broker = createRunBroker({ ...options.broker, authorize: options.broker?.authorize ?? allowEveryRequest });
  const handle = createAguiHandler(options.agent, { ...options.handler, broker, basePath: '/agent' });

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path === '/agent' || path.startsWith('/agent/')) return handle(req, res);
    if (path === '/' || path === '/index.html') {
      if (req.method !== 'GET' && req.method !== 'HEAD') {
        res.writeHead(405, { Allow: 'GET, HEAD', 'Content-Type': 'text/plain; charset=utf-8' });
        return void res.end(`${req.method} is not supported for the page: GET it.\n`);
      }
      res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'no-store', 'Content-Length': Buffer.byteLength(html) });
      return void res.end(req.method === 'HEAD' ? undefined : html);
    }
    req.resume();
    res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8' });
    res.end(`Nothing at ${path}: the page is at / and the AG-UI endpoint at POST /agent.\n`);
  });

  return new Promise((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException) => {
      void broker.close();
      const port = options.port ?? 8000;
      reject(
        error.code === 'EADDRINUSE'
          ? new Error(`Port ${port} on ${host} is already in use. Stop what uses it, or choose another port: PORT=${port + 1} npm run demo.`)
          : error,
      );
    };
    server.once('error', onError);
    server.listen(options.port ?? 8000, host, () => {
      server.off('error', onError);
      const { port, address } = server.address() as AddressInfo;
      resolve({
        url: `http://${address.includes(':') ? `[${address}]` : address}:${port}/`,
        port,
        broker,
        close: async () => {
          // Runs end first (RUN_FINISHED cancelled reaches their readers), then the connections.
          await broker.close();
          await new Promise<void>((done, fail) => {
            server.close((error) => (error ? fail(error) : done()));
            // Open SSE streams and idle keep-alive sockets would hold close() open: end them.
            server.closeAllConnections();
          });
        },
      });
    });
  });
}
