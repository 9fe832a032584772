import { pollUntil } from '../../support/helpers.js';
import type { Event, RunAgentInput } from '@ag-ui/core';
import { decode } from '@ag-ui/proto';
import { createServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';

/** A loopback server: its base URL (with the mount path) and how to stop it. */
export interface Loopback {
  /** `http://127.0.0.1:<port>` */
  readonly origin: string;
  close(): Promise<void>;
}

/** Serves a node:http handler on 127.0.0.1 at a free port. */
export async function serveNode(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<Loopback> {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return loopback(server);
}

/**
 * Serves a fetch handler (`(Request) => Promise<Response>`) through node:http on 127.0.0.1, as a
 * Node adapter (Hono's, Next's) does: the request body streams in, `request.signal` aborts when the
 * client goes away, the response body streams out and is cancelled when the client goes away.
 */
export async function serveFetch(handler: (request: Request) => Promise<Response>): Promise<Loopback> {
  const server = createServer((req, res) => {
    const controller = new AbortController();
    res.on('close', () => {
      if (!res.writableFinished) controller.abort();
    });
    const headers = new Headers();
    for (const [name, value] of Object.entries(req.headers)) if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(', ') : value);
    const hasBody = req.method !== 'GET' && req.method !== 'HEAD';
    const request = new Request(`http://${req.headers.host}${req.url}`, {
      method: req.method,
      headers,
      body: hasBody ? (Readable.toWeb(req) as ReadableStream<Uint8Array>) : undefined,
      signal: controller.signal,
      duplex: 'half',
    } as RequestInit);
    void handler(request).then(async (response) => {
      res.writeHead(response.status, Object.fromEntries(response.headers));
      res.flushHeaders();
      if (response.body === null) return void res.end();
      const reader = response.body.getReader();
      res.on('close', () => void reader.cancel().catch(() => undefined));
      try {
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          res.write(value);
        }
      } catch {
        // Cancelled: the client went away.
      }
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return loopback(server);
}

function loopback(server: Server): Loopback {
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close() {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

/** One SSE frame as it came off the wire: its `id:` line (absent when it had none) and its event. */
export interface WireFrame {
  readonly id?: string;
  readonly event: Event;
}

/** Splits an SSE body into frames (comments skipped), keeping each frame's own `id:` line. */
export function framesOf(body: string): WireFrame[] {
  return body
    .split('\n\n')
    .filter((frame) => frame.trim() !== '' && !frame.startsWith(':'))
    .map((frame) => {
      let id: string | undefined;
      let data = '';
      for (const line of frame.split('\n')) {
        if (line.startsWith('id:')) id = line.slice(3).trimStart();
        else if (line.startsWith('data:')) data += line.slice(5).trimStart();
      }
      return id === undefined ? { event: JSON.parse(data) as Event } : { id, event: JSON.parse(data) as Event };
    });
}

/** Decodes a body of length-prefixed protobuf frames; throws when anything else (an `id:` line) is in it. */
export function protoEventsOf(body: Buffer): Event[] {
  const events: Event[] = [];
  let offset = 0;
  while (offset < body.length) {
    if (offset + 4 > body.length) throw new Error(`A truncated frame header at byte ${offset}.`);
    const length = body.readUInt32BE(offset);
    if (offset + 4 + length > body.length) throw new Error(`A frame of ${length} bytes at byte ${offset} runs past the body.`);
    events.push(decode(new Uint8Array(body.subarray(offset + 4, offset + 4 + length))) as Event);
    offset += 4 + length;
  }
  return events;
}

/** A complete answer: status, headers, raw body. */
export interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  raw: Buffer;
}

/** Sends one request and reads the whole answer. */
export function send(url: string, options: { method?: string; body?: string | Buffer; headers?: Record<string, string> } = {}): Promise<Answer> {
  const method = options.method ?? 'POST';
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method, headers: { ...(options.body !== undefined ? { 'Content-Type': 'application/json' } : {}), ...options.headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const raw = Buffer.concat(chunks);
        resolve({ status: res.statusCode!, headers: res.headers, body: raw.toString('utf8'), raw });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(options.body);
  });
}

/** Posts a RunAgentInput (JSON) to `url` and reads the whole answer. */
export function post(url: string, body: unknown, headers: Record<string, string> = {}): Promise<Answer> {
  return send(url, { body: typeof body === 'string' ? body : JSON.stringify(body), headers });
}

/** An SSE stream being read: frames as they arrive, the end, and a way to leave. */
export interface OpenStream {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  /** Resolves with the first `count` frames received (waits for them). */
  take(count: number): Promise<WireFrame[]>;
  /** Resolves once a frame satisfies `predicate`, with every frame up to it. */
  until(predicate: (frame: WireFrame) => boolean): Promise<WireFrame[]>;
  /** Resolves with every frame when the server ends the response. */
  readonly ended: Promise<WireFrame[]>;
  /** Leaves: destroys the connection. */
  leave(): void;
}

/** Opens a request whose answer is read as it streams (a non-200 answer resolves with its status and an ended stream). */
export function open(url: string, options: { method?: string; body?: unknown; headers?: Record<string, string> } = {}): Promise<OpenStream> {
  const method = options.method ?? 'POST';
  const body = options.body === undefined ? undefined : typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method, headers: { ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}), ...options.headers } }, (res) => {
      let text = '';
      const frames: WireFrame[] = [];
      const waiters: (() => void)[] = [];
      const wake = () => waiters.splice(0).forEach((waiter) => waiter());
      let settled = false;
      const ended = new Promise<WireFrame[]>((resolveEnd, rejectEnd) => {
        res.on('end', () => {
          settled = true;
          wake();
          resolveEnd(frames);
        });
        res.on('error', (error) => {
          settled = true;
          wake();
          rejectEnd(error);
        });
        res.on('close', () => {
          settled = true;
          wake();
        });
      });
      ended.catch(() => undefined);
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        text += chunk;
        const cut = text.lastIndexOf('\n\n');
        if (cut < 0) return;
        frames.push(...framesOf(text.slice(0, cut + 2)));
        text = text.slice(cut + 2);
        wake();
      });
      const waitFor = (ready: () => number | undefined): Promise<WireFrame[]> =>
        new Promise((resolveWait, rejectWait) => {
          const check = () => {
            const upTo = ready();
            if (upTo !== undefined) return resolveWait(frames.slice(0, upTo));
            if (settled) return rejectWait(new Error(`The stream ended after ${frames.length} frames: ${JSON.stringify(frames.map((frame) => frame.event.type))}`));
            waiters.push(check);
          };
          check();
        });
      resolve({
        status: res.statusCode!,
        headers: res.headers,
        take: (count) => waitFor(() => (frames.length >= count ? count : undefined)),
        until: (predicate) =>
          waitFor(() => {
            const index = frames.findIndex(predicate);
            return index < 0 ? undefined : index + 1;
          }),
        ended,
        leave: () => {
          req.destroy();
          res.destroy();
        },
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** A RunAgentInput for thread `threadId`, run `runId`. */
export function runInput(threadId: string, runId: string, overrides: Partial<RunAgentInput> = {}): RunAgentInput {
  return { threadId, runId, state: {}, messages: [], tools: [], context: [], forwardedProps: {}, ...overrides };
}

/** Resolves when `check()` holds, polling on each macrotask turn (no fixed sleep); rejects after `timeoutMs`. */
export async function eventually(check: () => boolean | Promise<boolean>, timeoutMs = 5000, what = 'the condition'): Promise<void> {
  await pollUntil(check, (done) => done, { timeoutMs, intervalMs: 5, what });
}
