import { EventType, type Event } from '@ag-ui/core';
import type { Observable, Subscription } from 'rxjs';
import { safeUnsubscribe } from '../protocol/createOperator.js';
import type { BrokerFrame } from './brokerRoutes.js';
import { SEND_BUFFER_FULL, SLOW_CLIENT, flowFailure, flowLimitsOf, sendBufferFull, slowClientMessage, stallTimer, type FlowOptions } from './flowControl.js';
import { contentTypeFor, frameEncoderFor, pipeFrames, streamHeaders, type FrameOptions } from './frames.js';

/** Options of {@link toSSEStream}: the frames' options and the bounds of what waits for the client. */
export interface ToSSEStreamOptions extends FrameOptions, FlowOptions {
  /**
   * The request's signal: when it aborts (the client went away), the run is stopped, what waits for
   * the consumer is dropped and the stream closes at once. Default: none.
   */
  signal?: AbortSignal | undefined;
}

// The stream's own queue, in bytes (a ByteLengthQueuingStrategy): about what a socket buffers.
// Frames past it wait in ours, bounded by maxBufferedBytes, and move on as the consumer pulls.
const HIGH_WATER_MARK_BYTES = 64 * 1024;
// Frames that waited go on together, in chunks up to this size, in bytes.
const BATCH_BYTES = 64 * 1024;

/**
 * Streams AG-UI events as a Web `ReadableStream` of SSE bytes (UTF-8), the AG-UI HTTP binding for
 * Web runtimes (Deno, Bun, Cloudflare, Next.js route handlers).
 *
 * - Each event is one `data: <json>\n\n` frame: a tick's first frame enqueued at once, the frames after
 *   it as one chunk at the tick's end; with `coalesce` (default: true; false for a brokered stream) consecutive deltas of one
 *   message, tool call or reasoning message in them are one frame (see `pipeFrames`). With `accept` asking for
 *   `application/vnd.ag-ui.event+proto`, length-prefixed protobuf frames from `@ag-ui/encoder`.
 * - While idle for `heartbeatMs` (default 15000 ms), an SSE comment `: ping` keeps proxies from
 *   closing the connection.
 * - `cancel()` (the client went away) unsubscribes `events$`, which aborts the agent's work.
 * - If `events$` errors before RUN_FINISHED/RUN_ERROR, a RUN_ERROR frame ends the stream.
 * - Backpressure: frames are enqueued while the stream's `desiredSize` is above 0 (its queue holds
 *   64 KiB, counted in bytes); the rest wait and move on as the consumer pulls, small frames
 *   together in chunks of up to 64 KiB. A consumer that
 *   reads gets every frame, however fast the run and however large a frame.
 * - A stalled consumer — the stream's queue was full and it read nothing for `stallTimeoutMs`
 *   (default 30000 ms; a read that leaves the queue full is noticed when the time is up, so the
 *   cut comes between one and two `stallTimeoutMs` after the last read) — is dropped: `events$` is unsubscribed, the waiting frames freed, and the stream
 *   errored (an Error with `code: "SLOW_CLIENT"`; the runtime closes the connection).
 * - A run that leaves more than `maxBufferedBytes` (default 64 MiB) waiting while its consumer
 *   reads is stopped: `events$` is unsubscribed and a RUN_ERROR with `code: "SEND_BUFFER_FULL"`
 *   follows the waiting frames, instead of the frame that did not fit; then the stream closes.
 *   The terminal event, and a frame that arrives while nothing waits, are always taken.
 *
 * `events$` is subscribed when the stream is created.
 *
 * @param events$ A run's AG-UI events, e.g. `agent$.pipe(toAgui(…))`.
 * @param options `heartbeatMs` (ms, 0 = none), the request's `accept` header, `maxBufferedBytes`
 * (bytes) and `stallTimeoutMs` (ms).
 * @return A `ReadableStream<Uint8Array>` of frames.
 * @throws RangeError when `maxBufferedBytes` or `stallTimeoutMs` is not a valid number.
 */
export function toSSEStream(events$: Observable<Event>, options: ToSSEStreamOptions = {}): ReadableStream<Uint8Array> {
  return stream(events$, options, false);
}

/** {@link toSSEResponse} for a brokered stream: each frame's cursor is its SSE `id:` line. */
export function toBrokerFramesResponse(frames$: Observable<BrokerFrame>, options: ToSSEStreamOptions = {}): Response {
  return new Response(stream(frames$, options, true), { status: 200, headers: streamHeaders(contentTypeFor(options.accept)) });
}

function stream(items$: Observable<Event | BrokerFrame>, options: ToSSEStreamOptions, framed: boolean): ReadableStream<Uint8Array> {
  const { maxBufferedBytes, stallTimeoutMs } = flowLimitsOf(options);
  const text = new TextEncoder();
  const toBytes = (frame: string | Uint8Array) => (typeof frame === 'string' ? text.encode(frame) : frame);
  let subscription: Subscription | undefined;
  // Subscribed once, in start(), and not held after: the stream's callbacks live as long as it is
  // open, and the run's Observable holds what made it (an agent run's input, its whole history).
  let source: Observable<Event | BrokerFrame> | undefined = items$;
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  // Frames the stream's queue has no room for yet, from `head` on, and their size in bytes.
  let queue: Uint8Array[] = [];
  let head = 0;
  let queuedBytes = 0;
  // Whether the stream closes once the queue is empty; whether it is closed, errored or cancelled.
  let ending = false;
  let closed = false;
  // Set once the run is stopped from inside (possibly while pipeFrames is still subscribing).
  let stopped = false;
  // Whether the stream's queue was full when last looked at: frames wait for the consumer, the stall clock runs.
  let full = false;
  // Told once what waited has gone on (pipeFrames' deltas held meanwhile then go as one frame).
  let ready: (() => void) | undefined;
  const release = () => {
    ready = undefined;
    queue = [];
    head = 0;
    queuedBytes = 0;
    stall.stop();
    options.demand?.open();
    options.signal?.removeEventListener('abort', abandon);
  };
  const stall = stallTimer(stallTimeoutMs, () => {
    // A run stopped already (SEND_BUFFER_FULL, reported then) is not a second failure: it is only cut.
    const reported = stopped;
    stopped = true;
    closed = true;
    safeUnsubscribe(subscription);
    release();
    // Erroring drops the stream's queue too, and tells the runtime to close the connection.
    controller.error(Object.assign(new Error(slowClientMessage(stallTimeoutMs)), { code: SLOW_CLIENT }));
    if (!reported) options.onFailure?.(flowFailure(SLOW_CLIENT, stallTimeoutMs));
    // What waits, as the stream's queue counts it: a read that leaves it full calls no pull() but
    // lowers this (while full, nothing is enqueued but in pull()).
  }, () => -controller.desiredSize!);
  const close = () => {
    closed = true;
    stall.stop();
    options.demand?.open();
    options.signal?.removeEventListener('abort', abandon);
    controller.close();
  };
  // The client went away (`signal`): nothing that waits can reach it.
  const abandon = () => {
    if (closed) return;
    stopped = true;
    safeUnsubscribe(subscription);
    release();
    close();
  };
  // Moves waiting frames into the stream's queue while it has room, small ones together (fewer
  // chunks for the consumer to read one by one: a burst of 100k frames is ~1,000 chunks, not 100k).
  const fill = () => {
    while (head < queue.length && controller.desiredSize! > 0) {
      let end = head + 1;
      let size = queue[head].byteLength;
      while (end < queue.length && size + queue[end].byteLength <= BATCH_BYTES) size += queue[end++].byteLength;
      let chunk = queue[head];
      if (end - head > 1) {
        chunk = new Uint8Array(size);
        for (let i = head, offset = 0; i < end; offset += queue[i++].byteLength) chunk.set(queue[i], offset);
      }
      head = end;
      queuedBytes -= size;
      controller.enqueue(chunk);
    }
    if (head < queue.length) {
      if (head > 1024 && head * 2 > queue.length) {
        queue = queue.slice(head);
        head = 0;
      }
      return;
    }
    queue = [];
    head = 0;
    if (ending) close();
  };
  // After a frame went into either queue: once the stream's is full, frames wait and the clock runs.
  const watch = () => {
    if (full || controller.desiredSize! > 0) return;
    full = true;
    stall.waiting();
    options.demand?.close();
  };
  return new ReadableStream<Uint8Array>(
    {
      start(c) {
        controller = c;
        const source$ = source!;
        source = undefined;
        // The client left before the run started: it never starts.
        if (options.signal?.aborted === true) return close();
        subscription = pipeFrames(
          source$ as Observable<BrokerFrame>,
          {
            write(frame, event) {
              // A synchronous source goes on emitting after the stop: nothing may follow the RUN_ERROR.
              if (closed || stopped) return;
              const chunk = toBytes(frame);
              const terminal = event?.type === EventType.RUN_FINISHED || event?.type === EventType.RUN_ERROR;
              if (head === queue.length && controller.desiredSize! > 0) {
                // Nothing waits and the stream has room: whatever its size.
                controller.enqueue(chunk);
              } else if (head < queue.length && queuedBytes + chunk.byteLength > maxBufferedBytes && !terminal) {
                // Far faster than the consumer: stop the agent rather than hold the rest of its run in memory.
                stopped = true;
                safeUnsubscribe(subscription);
                ending = true;
                const runError = toBytes(frameEncoderFor(options.accept)(sendBufferFull(maxBufferedBytes)));
                options.onFailure?.(flowFailure(SEND_BUFFER_FULL, maxBufferedBytes));
                queue.push(runError);
                queuedBytes += runError.byteLength;
              } else {
                queue.push(chunk);
                queuedBytes += chunk.byteLength;
              }
              watch();
            },
            end() {
              if (closed) return;
              ending = true;
              if (head === queue.length) close();
            },
            busy: () => head < queue.length || controller.desiredSize! <= 0,
            whenReady: (callback) => void (ready = callback),
          },
          options,
          framed as true,
        );
        if (stopped) safeUnsubscribe(subscription);
        else if (!closed) options.signal?.addEventListener('abort', abandon, { once: true });
      },
      // Called when the stream's queue has room: after it was full, the consumer took some (progress).
      pull() {
        if (closed) return;
        fill();
        if (closed) return;
        full = controller.desiredSize! <= 0;
        // Still full: the clock restarts from this progress; otherwise nothing waits.
        if (full) stall.waiting();
        else {
          stall.idle();
          // What waited has gone on: a producer that waits may go on too.
          if (head === queue.length) {
            options.demand?.open();
            const callback = ready;
            ready = undefined;
            callback?.();
          }
        }
      },
      cancel() {
        closed = true;
        safeUnsubscribe(subscription);
        release();
      },
    },
    new ByteLengthQueuingStrategy({ highWaterMark: HIGH_WATER_MARK_BYTES }),
  );
}

/** Options of {@link toSSEResponse}: a `ResponseInit` plus the stream's options. */
export type ToSSEResponseInit = ResponseInit & ToSSEStreamOptions;

/**
 * Wraps {@link toSSEStream} in a `Response` with the headers an event stream needs:
 * `Content-Type: text/event-stream` (or the AG-UI protobuf media type), `Cache-Control: no-cache`,
 * and `X-Accel-Buffering: no` (so proxies do not buffer it).
 * Headers given in `init` are kept, except that these three are set.
 *
 * @param events$ A run's AG-UI events.
 * @param init Status and headers of the response, plus `heartbeatMs`, `accept`, `maxBufferedBytes` and `stallTimeoutMs`.
 * @return A streaming `Response`.
 */
export function toSSEResponse(events$: Observable<Event>, init: ToSSEResponseInit = {}): Response {
  const { heartbeatMs, accept, maxBufferedBytes, stallTimeoutMs, demand, signal, onFailure, coalesce, ...responseInit } = init;
  const headers = new Headers(responseInit.headers);
  for (const [name, value] of Object.entries(streamHeaders(contentTypeFor(accept)))) headers.set(name, value);
  return new Response(toSSEStream(events$, { heartbeatMs, accept, maxBufferedBytes, stallTimeoutMs, demand, signal, onFailure, coalesce }), { status: 200, ...responseInit, headers });
}
