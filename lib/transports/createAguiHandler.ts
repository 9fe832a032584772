import type { Event, RunAgentInput } from '@ag-ui/core';
import { RunAgentInputSchema } from '@ag-ui/core/schemas';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Observable, defer, type Subscription } from 'rxjs';
import { toAgui, type ToAguiOptions } from '../../operators/toAgui.js';
import type { AgentEvent } from '../protocol/agentEvent.js';
import { safeUnsubscribe } from '../protocol/createOperator.js';
import { sendSSE } from './sendSSE.js';
import { toSSEResponse } from './toSSEStream.js';
import { describeIssue } from '../protocol/validate.js';

/**
 * An agent as the handlers run it: the run's input in, the agent's events out. `ctx.signal` aborts
 * when the client goes away, so that the agent can cancel its model request (`fetch(url, { signal })`).
 * Unsubscription stops it too.
 */
export type AguiAgent = (input: RunAgentInput, ctx: { signal: AbortSignal }) => Observable<AgentEvent>;

/** Options of {@link createAguiHandler} and {@link createAguiFetchHandler}. */
export interface AguiHandlerOptions extends Omit<ToAguiOptions, 'threadId' | 'runId' | 'input' | 'signal' | 'parentRunId'> {
  /** The largest request body accepted, in bytes; a larger one is answered 413 before it is parsed. Default: 1 MiB. */
  maxBodyBytes?: number | undefined;
  /** Idle time before an SSE heartbeat comment, in ms (0 = none). Default: 15000. */
  heartbeatMs?: number | undefined;
  /** Node only: bytes that may wait unsent for a slow client before the run is stopped. Default: 4 MiB. */
  maxBufferedBytes?: number | undefined;
}

/** A request the handler refuses: its HTTP status and the reason, sent as `{ "error": reason }`. */
interface Refusal {
  status: 400 | 405 | 413;
  reason: string;
}

const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;

const tooLarge = (maxBodyBytes: number): Refusal => ({
  status: 413,
  reason: `The request body is larger than ${maxBodyBytes} bytes, the limit of this endpoint. Send less history, or raise maxBodyBytes.`,
});

/** The RunAgentInput in a request body, or why there is none (invalid JSON, or a field the schema refuses). */
function parseRunAgentInput(body: string): RunAgentInput | Refusal {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch (error) {
    return { status: 400, reason: `The request body is not valid JSON: ${(error as Error).message}. POST a RunAgentInput as JSON.` };
  }
  // Validated, never evaluated: the schema only reads the fields it knows.
  let result: ReturnType<typeof RunAgentInputSchema.safeParse>;
  try {
    result = RunAgentInputSchema.safeParse(json);
  } catch (error) {
    return { status: 400, reason: `The request body could not be validated as a RunAgentInput: ${(error as Error).message}.` };
  }
  if (!result.success) {
    return { status: 400, reason: `The request body is not a valid RunAgentInput: ${describeIssue(result.error)}.` };
  }
  const input = json as RunAgentInput;
  for (const field of ['threadId', 'runId'] as const) {
    if (input[field] === '') return { status: 400, reason: `The request body is not a valid RunAgentInput: '${field}' is empty; it must name the ${field === 'threadId' ? 'thread' : 'run'}.` };
  }
  // The run echoes its input and serialises its state: a field nested past what JSON.stringify can
  // walk would fail mid-stream, so it is refused here, by name.
  for (const [field, value] of Object.entries(input)) {
    try {
      JSON.stringify(value);
    } catch (error) {
      return { status: 400, reason: `The request body's '${field}' cannot be handled: ${(error as Error).message}. Send it less deeply nested.` };
    }
  }
  return input;
}

/** The run's events: the agent piped through `toAgui`, aborting `ctx.signal` when unsubscribed. */
function runEvents(agent: AguiAgent, input: RunAgentInput, options: AguiHandlerOptions): Observable<Event> {
  const { maxBodyBytes: _max, heartbeatMs: _heartbeat, maxBufferedBytes: _buffered, ...aguiOptions } = options;
  return new Observable<Event>((subscriber) => {
    const controller = new AbortController();
    const { signal } = controller;
    const subscription = defer(() => agent(input, { signal }))
      .pipe(toAgui({ ...aguiOptions, threadId: input.threadId, runId: input.runId, parentRunId: input.parentRunId, input, signal }))
      .subscribe(subscriber);
    return () => {
      // Unsubscribed first, so the lifecycle sends nothing for the abort; then the agent's own work is aborted.
      safeUnsubscribe(subscription);
      controller.abort();
    };
  });
}

/**
 * A node:http request handler serving one agent over the AG-UI HTTP binding.
 *
 * - Anything but POST: 405 (with `Allow: POST`).
 * - A body over `maxBodyBytes` (default 1 MiB): 413, decided from `Content-Length` or while reading,
 *   before anything is parsed.
 * - A body that is not JSON, or not a RunAgentInput by the `@ag-ui/core/schemas` validator: 400;
 *   the reason names the field.
 * - Otherwise `agent(input, { signal }).pipe(toAgui({ threadId, runId, input, signal }))` streams
 *   as SSE (or protobuf when `Accept` asks for `application/vnd.ag-ui.event+proto`) through
 *   {@link sendSSE}; a client that goes away unsubscribes the agent and aborts `signal`.
 *
 * Refusals are JSON `{ "error": reason }`; the server keeps serving after any of them.
 *
 * ## Example
 *
 * ```ts
 * createServer(createAguiHandler((input) => myAgent$(input.messages))).listen(8000);
 * ```
 *
 * @param agent The agent: `(input, { signal }) => Observable<AgentEvent>`.
 * @param options Body limit (bytes), heartbeat (ms), slow-client buffer (bytes), and `toAgui`'s options.
 * @return `(req, res) => void`, for `http.createServer` or an Express/Fastify route.
 */
export function createAguiHandler(agent: AguiAgent, options: AguiHandlerOptions = {}): (req: IncomingMessage, res: ServerResponse) => void {
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  return (req, res) => {
    const refuse = ({ status, reason }: Refusal) => {
      if (res.headersSent) return;
      res.writeHead(status, { 'Content-Type': 'application/json', ...(status === 405 ? { Allow: 'POST' } : {}), ...(status === 413 ? { Connection: 'close' } : {}) });
      res.end(JSON.stringify({ error: reason }));
      // An oversize body is not read to its end: close the connection once the answer is out.
      if (status === 413) res.once('finish', () => req.destroy());
    };
    if (req.method !== 'POST') {
      req.resume();
      return refuse({ status: 405, reason: `${req.method} is not supported here: POST a RunAgentInput (the AG-UI HTTP binding).` });
    }
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > maxBodyBytes) return refuse(tooLarge(maxBodyBytes));

    const chunks: Buffer[] = [];
    let received = 0;
    let refused = false;
    req.on('data', (chunk: Buffer) => {
      if (refused) return;
      received += chunk.length;
      if (received > maxBodyBytes) {
        refused = true;
        chunks.length = 0;
        return refuse(tooLarge(maxBodyBytes));
      }
      chunks.push(chunk);
    });
    req.on('error', () => {
      refused = true;
    });
    req.on('end', () => {
      if (refused) return;
      const parsed = parseRunAgentInput(Buffer.concat(chunks).toString('utf8'));
      if ('status' in parsed) return refuse(parsed);
      sendSSE(res, runEvents(agent, parsed, options), { heartbeatMs: options.heartbeatMs, accept: req.headers.accept, maxBufferedBytes: options.maxBufferedBytes });
    });
  };
}

/**
 * The Web twin of {@link createAguiHandler}: `(request: Request) => Promise<Response>`, for Deno,
 * Bun, Cloudflare Workers, Hono or a Next.js route handler. The same refusals (405, 413, 400 with
 * the field), then a streaming {@link toSSEResponse}. When the response stream is cancelled, or
 * `request.signal` aborts, the agent is unsubscribed and its `signal` aborted.
 *
 * ## Example
 *
 * ```ts
 * export const POST = createAguiFetchHandler((input) => myAgent$(input.messages)); // Next.js app router
 * ```
 *
 * @param agent The agent: `(input, { signal }) => Observable<AgentEvent>`.
 * @param options Body limit (bytes), heartbeat (ms), and `toAgui`'s options.
 * @return `(request) => Promise<Response>`.
 */
export function createAguiFetchHandler(agent: AguiAgent, options: AguiHandlerOptions = {}): (request: Request) => Promise<Response> {
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const refuse = ({ status, reason }: Refusal) =>
    new Response(JSON.stringify({ error: reason }), {
      status,
      headers: { 'Content-Type': 'application/json', ...(status === 405 ? { Allow: 'POST' } : {}) },
    });
  return async (request) => {
    if (request.method !== 'POST') return refuse({ status: 405, reason: `${request.method} is not supported here: POST a RunAgentInput (the AG-UI HTTP binding).` });
    const declared = Number(request.headers.get('content-length'));
    if (Number.isFinite(declared) && declared > maxBodyBytes) return refuse(tooLarge(maxBodyBytes));
    let body: string | undefined;
    try {
      body = await readBounded(request, maxBodyBytes);
    } catch (error) {
      return refuse({ status: 400, reason: `The request body could not be read: ${(error as Error)?.message ?? String(error)}.` });
    }
    if (body === undefined) return refuse(tooLarge(maxBodyBytes));
    const parsed = parseRunAgentInput(body);
    if ('status' in parsed) return refuse(parsed);
    let subscription: Subscription | undefined;
    const events$ = new Observable<Event>((subscriber) => {
      subscription = runEvents(agent, parsed, options).subscribe(subscriber);
      const onAbort = () => safeUnsubscribe(subscription);
      request.signal?.addEventListener('abort', onAbort);
      return () => {
        request.signal?.removeEventListener('abort', onAbort);
        safeUnsubscribe(subscription);
      };
    });
    return toSSEResponse(events$, { heartbeatMs: options.heartbeatMs, accept: request.headers.get('accept') ?? undefined });
  };
}

/** The body of a request as text, or undefined once it passes `maxBytes` (reading stops there). */
async function readBounded(request: Request, maxBytes: number): Promise<string | undefined> {
  if (request.body === null) return '';
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let received = 0;
  // A client that goes away while sending: stop waiting for the rest of its body.
  const onAbort = () => void reader.cancel().catch(() => undefined);
  request.signal?.addEventListener('abort', onAbort);
  try {
    if (request.signal?.aborted) throw new Error('the client went away before sending it');
    for (;;) {
      const { done, value } = await reader.read();
      if (request.signal?.aborted) throw new Error('the client went away while sending it');
      if (done) break;
      received += value.byteLength;
      if (received > maxBytes) {
        await reader.cancel();
        return undefined;
      }
      chunks.push(value);
    }
  } finally {
    request.signal?.removeEventListener('abort', onAbort);
  }
  // No Buffer: Web runtimes may not have it.
  const bytes = new Uint8Array(received);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return new TextDecoder().decode(bytes);
}
