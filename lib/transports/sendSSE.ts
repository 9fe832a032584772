import { EventType, type Event } from '@ag-ui/core';
import type { ServerResponse } from 'node:http';
import type { Observable, Subscription } from 'rxjs';
import { safeUnsubscribe } from '../protocol/createOperator.js';
import type { BrokerFrame } from './brokerRoutes.js';
import { SEND_BUFFER_FULL, SLOW_CLIENT, flowFailure, flowLimitsOf, sendBufferFull, stallTimer, type FlowOptions } from './flowControl.js';
import { contentTypeFor, frameEncoderFor, pipeFrames, streamHeaders, type FrameOptions } from './frames.js';

/** Options of {@link sendSSE}: the frames' options and the bounds of what waits for the client. */
export interface SendSSEOptions extends FrameOptions, FlowOptions {}

const frameBytes = (frame: string | Uint8Array) => (typeof frame === 'string' ? Buffer.byteLength(frame) : frame.byteLength);

// A larger frame is written in pieces of this size, each after the 'drain' of the one before, so
// that a client reading a large frame slowly still shows progress (a 'drain') within the stall timeout.
const PIECE_BYTES = 64 * 1024;

// Without counting the bytes of most frames: a UTF-16 code unit is at most 3 bytes of UTF-8.
const fitsOnePiece = (frame: string | Uint8Array) =>
  typeof frame === 'string' ? frame.length * 3 <= PIECE_BYTES || Buffer.byteLength(frame) <= PIECE_BYTES : frame.byteLength <= PIECE_BYTES;

/**
 * Streams AG-UI events to a Node `http.ServerResponse` as server-sent events, the AG-UI HTTP binding.
 *
 * - Sends status 200 with `Content-Type: text/event-stream` (or the AG-UI protobuf media type when
 *   `accept` asks for it), `Cache-Control: no-cache`, `Connection: keep-alive`, `X-Accel-Buffering: no`:
 *   in one write with the first frame when that comes in the same tick, else flushed at the tick's end.
 * - One `data: <json>\n\n` frame per event (deltas merged as below); an SSE comment `: ping` after `heartbeatMs` (default
 *   15000 ms) of silence. A tick's first frame is written at once, the frames after it in one `write` at the tick's end; with
 *   `coalesce` (default: true; false for {@link sendBrokerFrames}) consecutive deltas of one
 *   message, tool call or reasoning message in them are one frame (see `pipeFrames`).
 * - The response's `'close'` (the client went away) unsubscribes `events$`, which aborts the agent.
 * - Backpressure: when `res.write()` returns false, frames wait in a queue until `'drain'`; a frame
 *   over 64 KiB is written in 64 KiB pieces, each after the previous one drained. A client that
 *   reads, however fast the run and however large a frame, gets every frame.
 * - A stalled client — frames waited and it took no bytes (no `'drain'`) for `stallTimeoutMs`
 *   (default 30000 ms) — is dropped: `events$` is unsubscribed, the socket destroyed (no final frame:
 *   the client is not reading; also a peer that vanished without FIN) and the queue freed at once.
 * - A run that queues more than `maxBufferedBytes` (default 64 MiB) while its client reads is
 *   stopped: `events$` is unsubscribed, a RUN_ERROR with `code: "SEND_BUFFER_FULL"` is queued after
 *   the waiting frames instead of the frame that did not fit, and the response ends once they are
 *   written. The terminal event, and a frame that arrives while nothing waits, are always taken.
 * - If `events$` errors before its terminal event, a RUN_ERROR frame ends the response.
 *
 * @param res The response to write to; its headers must not have been sent.
 * @param events$ A run's AG-UI events, e.g. `agent$.pipe(toAgui(…))`.
 * @param options `heartbeatMs` (ms), `accept` (the request's Accept header), `maxBufferedBytes`
 * (bytes), `stallTimeoutMs` (ms), `coalesce` (merge waiting deltas of one id; default true).
 * @return The subscription to `events$`; unsubscribing it stops the run and leaves the response open.
 * @throws RangeError when `maxBufferedBytes` or `stallTimeoutMs` is not a valid number (before anything is written).
 */
export function sendSSE(res: ServerResponse, events$: Observable<Event>, options: SendSSEOptions = {}): Subscription {
  return send(res, events$, options, false);
}

/** {@link sendSSE} for a brokered stream: each frame's cursor is its SSE `id:` line. A stalled or overflowing reader only leaves; the run goes on. */
export function sendBrokerFrames(res: ServerResponse, frames$: Observable<BrokerFrame>, options: SendSSEOptions = {}): Subscription {
  return send(res, frames$, options, true);
}

function send(res: ServerResponse, items$: Observable<Event | BrokerFrame>, options: SendSSEOptions, framed: boolean): Subscription {
  const { maxBufferedBytes, stallTimeoutMs } = flowLimitsOf(options);
  res.writeHead(200, streamHeaders(contentTypeFor(options.accept)));
  // The headers go out with the first frame when it comes in this tick (one write instead of two: a
  // run's RUN_STARTED nearly always does); else at the tick's end, so that a client sees the
  // response start before the agent's first event.
  let wrote = false;
  void Promise.resolve().then(() => {
    if (!wrote && !gone()) res.flushHeaders();
  });
  // Frames waiting for 'drain' from `head` on (a moving head rather than `shift()`, which copies
  // the whole array each time once it is large: quadratic on a long replay), and their size in bytes.
  let queue: (string | Uint8Array)[] = [];
  let head = 0;
  let queuedBytes = 0;
  // Whether the socket refused more (write() returned false) and we wait for its 'drain'.
  let waiting = false;
  // Whether the response ends once the queue is written.
  let ending = false;
  // Set once the run is stopped from inside (possibly while pipeFrames is still subscribing).
  let stopped = false;
  let subscription: Subscription | undefined = undefined;
  // Told once what waited has gone on (pipeFrames' deltas held meanwhile then go as one frame).
  let ready: (() => void) | undefined;
  const gone = () => res.destroyed || res.writableEnded;

  // What waits is dropped, and nothing more waits on the socket.
  const release = () => {
    queue = [];
    head = 0;
    queuedBytes = 0;
    res.off('drain', flush);
    ready = undefined;
    stall.stop();
    options.demand?.open();
  };
  const stall = stallTimer(stallTimeoutMs, () => {
    // The client took nothing for stallTimeoutMs: a RUN_ERROR could not reach it either.
    stopped = true;
    safeUnsubscribe(subscription);
    release();
    res.destroy();
    options.onFailure?.(flowFailure(SLOW_CLIENT, stallTimeoutMs));
  });
  const wait = () => {
    waiting = true;
    stall.waiting();
    options.demand?.close();
    res.once('drain', flush);
  };
  const finish = () => {
    stall.stop();
    options.demand?.open();
    if (!gone()) res.end();
  };

  function flush() {
    waiting = false;
    while (head < queue.length) {
      if (gone()) return release();
      const frame = queue[head];
      const size = frameBytes(frame);
      let piece = frame;
      if (size > PIECE_BYTES) {
        const rest = typeof frame === 'string' ? Buffer.from(frame) : frame;
        piece = rest.subarray(0, PIECE_BYTES);
        queue[head] = rest.subarray(PIECE_BYTES);
        queuedBytes -= PIECE_BYTES;
      } else {
        head++;
        queuedBytes -= size;
      }
      wrote = true;
      if (!res.write(piece)) {
        // What was written is released: the rest moves to a new array once half of it is done.
        if (head > 1024 && head * 2 > queue.length) {
          queue = queue.slice(head);
          head = 0;
        }
        return wait();
      }
    }
    queue = [];
    head = 0;
    stall.idle();
    // What waited has gone on: a producer that waits may go on too.
    options.demand?.open();
    if (ending) return finish();
    const callback = ready;
    ready = undefined;
    callback?.();
  }

  const enqueue = (frame: string | Uint8Array, size: number) => {
    queue.push(frame);
    queuedBytes += size;
    if (!waiting) flush();
  };

  subscription = pipeFrames(
    items$ as Observable<BrokerFrame>,
    {
      write(frame, event) {
        // A synchronous source goes on emitting after the stop (it could not be unsubscribed yet):
        // nothing may follow the RUN_ERROR.
        if (stopped || gone()) return;
        if (!waiting && head === queue.length && fitsOnePiece(frame)) {
          // The common case: nothing waits, straight to the socket.
          wrote = true;
          if (!res.write(frame)) wait();
          return;
        }
        const size = frameBytes(frame);
        const terminal = event?.type === EventType.RUN_FINISHED || event?.type === EventType.RUN_ERROR;
        if (head < queue.length && queuedBytes + size > maxBufferedBytes && !terminal) {
          // Far faster than the connection: stop the agent rather than hold the rest of its run in memory.
          stopped = true;
          safeUnsubscribe(subscription);
          ending = true;
          const runError = frameEncoderFor(options.accept)(sendBufferFull(maxBufferedBytes));
          options.onFailure?.(flowFailure(SEND_BUFFER_FULL, maxBufferedBytes));
          return enqueue(runError, frameBytes(runError));
        }
        enqueue(frame, size);
      },
      end() {
        ending = true;
        if (!waiting && head === queue.length) finish();
      },
      busy: () => waiting || head < queue.length,
      whenReady: (callback) => void (ready = callback),
    },
    options,
    framed as true,
  );
  const run = subscription;
  // A client gone before we started (it left while the request body was read) sends no 'close' again.
  if (stopped || gone()) safeUnsubscribe(run);
  const onClose = () => {
    safeUnsubscribe(run);
    // Nothing can be sent any more: free the queue now rather than when the response is collected.
    release();
  };
  res.on('close', onClose);
  run.add(() => res.off('close', onClose));
  return run;
}
