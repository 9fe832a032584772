/**
 * Serves a Web fetch handler, `(request: Request) => Promise<Response>`, with node:http: what
 * Hono's, Next.js's, Bun's and Deno's servers do for you. Node 20 has no built-in bridge, and the
 * examples add no dependency for one (`@hono/node-server` does this job in production).
 *
 * - The request body is streamed (`duplex: 'half'`), never buffered here.
 * - The response body is streamed as it is produced: each chunk is written as it comes, so SSE
 *   frames reach the client at once, and the next is read only once the socket took it
 *   (backpressure), so a client that stops reading holds nothing here.
 * - A client that goes away aborts `request.signal` and cancels the response body, which
 *   unsubscribes the agent.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { Readable } from 'node:stream';

/** A Web fetch handler: Hono's `app.fetch`, a Next.js route's `POST`, Bun's and Deno's `fetch`. */
export type FetchHandler = (request: Request) => Response | Promise<Response>;

/** Turns a node:http request into a Web `Request` whose `signal` aborts when the client goes away. */
function toRequest(req: IncomingMessage, res: ServerResponse): Request {
  const controller = new AbortController();
  res.on('close', () => controller.abort());
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (Array.isArray(value)) for (const item of value) headers.append(name, item);
    else if (value !== undefined) headers.set(name, value);
  }
  const hasBody = req.method !== 'GET' && req.method !== 'HEAD';
  return new Request(`http://${req.headers.host ?? 'localhost'}${req.url ?? '/'}`, {
    method: req.method,
    headers,
    signal: controller.signal,
    ...(hasBody ? { body: Readable.toWeb(req) as ReadableStream<Uint8Array>, duplex: 'half' } : {}),
  } as RequestInit);
}

/** Writes a Web `Response` to a node:http response, chunk by chunk; cancels its body if the client goes away. */
async function send(response: Response, res: ServerResponse): Promise<void> {
  res.writeHead(response.status, Object.fromEntries(response.headers));
  res.flushHeaders();
  if (response.body === null) return void res.end();
  const reader = response.body.getReader();
  res.on('close', () => void reader.cancel().catch(() => undefined));
  for (;;) {
    const { done, value } = await reader.read();
    if (done || res.destroyed) break;
    // Backpressure: read no more until the socket took this chunk, so that the handler's own limits
    // (stallTimeoutMs, maxBufferedBytes) see a client that does not read.
    if (!res.write(value)) await drained(res);
  }
  res.end();
}

/** Settles on the response's next 'drain', or its 'close'. */
function drained(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done).off('close', done);
      resolve();
    };
    res.on('drain', done).on('close', done);
  });
}

/** A node:http server that answers every request with `handler`. */
export function serveFetch(handler: FetchHandler): Server {
  return createServer((req, res) => {
    Promise.resolve()
      .then(() => handler(toRequest(req, res)))
      .then((response) => send(response, res))
      .catch((error: unknown) => {
        if (!res.headersSent) res.writeHead(500, { 'Content-Type': 'text/plain' });
        res.end(String(error));
      });
  });
}
