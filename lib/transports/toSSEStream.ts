import type { Event } from '@ag-ui/core';
import type { Observable, Subscription } from 'rxjs';
import { safeUnsubscribe } from '../protocol/createOperator.js';
import type { BrokerFrame } from './brokerRoutes.js';
import { contentTypeFor, pipeFrames, streamHeaders, type FrameOptions } from './frames.js';

/** Options of {@link toSSEStream}. */
export type ToSSEStreamOptions = FrameOptions;

/**
 * Streams AG-UI events as a Web `ReadableStream` of SSE bytes (UTF-8), the AG-UI HTTP binding for
 * Web runtimes (Deno, Bun, Cloudflare, Next.js route handlers).
 *
 * - Each event is one `data: <json>\n\n` frame; with `accept` asking for
 *   `application/vnd.ag-ui.event+proto`, length-prefixed protobuf frames from `@ag-ui/encoder`.
 * - While idle for `heartbeatMs` (default 15000 ms), an SSE comment `: ping` keeps proxies from
 *   closing the connection.
 * - `cancel()` (the client went away) unsubscribes `events$`, which aborts the agent's work.
 * - If `events$` errors before RUN_FINISHED/RUN_ERROR, a RUN_ERROR frame ends the stream.
 *
 * `events$` is subscribed when the stream is created. The stream's queue holds what the client has
 * not read yet.
 *
 * @param events$ A run's AG-UI events, e.g. `agent$.pipe(toAgui(…))`.
 * @param options `heartbeatMs` (ms, 0 = none) and the request's `accept` header.
 * @return A `ReadableStream<Uint8Array>` of frames.
 */
export function toSSEStream(events$: Observable<Event>, options: ToSSEStreamOptions = {}): ReadableStream<Uint8Array> {
  return stream(events$, options, false);
}

/** {@link toSSEResponse} for a brokered stream: each frame's cursor is its SSE `id:` line. */
export function toBrokerFramesResponse(frames$: Observable<BrokerFrame>, options: ToSSEStreamOptions = {}): Response {
  return new Response(stream(frames$, options, true), { status: 200, headers: streamHeaders(contentTypeFor(options.accept)) });
}

function stream(items$: Observable<Event | BrokerFrame>, options: ToSSEStreamOptions, framed: boolean): ReadableStream<Uint8Array> {
  const text = new TextEncoder();
  let subscription: Subscription | undefined;
  return new ReadableStream<Uint8Array>({
    start(controller) {
      let closed = false;
      subscription = pipeFrames(
        items$ as Observable<BrokerFrame>,
        {
          write(frame) {
            if (!closed) controller.enqueue(typeof frame === 'string' ? text.encode(frame) : frame);
          },
          end() {
            if (closed) return;
            closed = true;
            controller.close();
          },
        },
        options,
        framed as true,
      );
    },
    cancel() {
      safeUnsubscribe(subscription);
    },
  });
}

/** Options of {@link toSSEResponse}: a `ResponseInit` plus the stream's options. */
export type ToSSEResponseInit = ResponseInit & ToSSEStreamOptions;

/**
 * Wraps {@link toSSEStream} in a `Response` with the headers an event stream needs:
 * `Content-Type: text/event-stream` (or the AG-UI protobuf media type), `Cache-Control: no-cache`,
 * `Connection: keep-alive` and `X-Accel-Buffering: no` (so proxies do not buffer it).
 * Headers given in `init` are kept, except that these four are set.
 *
 * @param events$ A run's AG-UI events.
 * @param init Status and headers of the response, plus `heartbeatMs` and `accept`.
 * @return A streaming `Response`.
 */
export function toSSEResponse(events$: Observable<Event>, init: ToSSEResponseInit = {}): Response {
  const { heartbeatMs, accept, ...responseInit } = init;
  const headers = new Headers(responseInit.headers);
  for (const [name, value] of Object.entries(streamHeaders(contentTypeFor(accept)))) headers.set(name, value);
  return new Response(toSSEStream(events$, { heartbeatMs, accept }), { status: 200, ...responseInit, headers });
}
