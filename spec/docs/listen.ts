import type { Server } from 'node:http';
import { serveFetch, type FetchHandler } from '../../docs/examples/serveFetch';

/** Serves a fetch handler (Hono, Next.js, Bun/Deno examples) on a free loopback port. */
export function listenFetch(handler: FetchHandler): Promise<Server> {
  const server = serveFetch(handler);
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

/** Closes a server and its open (keep-alive, streaming) connections. */
export function close(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}
