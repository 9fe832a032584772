import { EventType, type Event } from '@ag-ui/core';
import type { ServerResponse } from 'node:http';
import type { Observable, Subscription } from 'rxjs';
import { safeUnsubscribe } from '../protocol/createOperator.js';
import type { BrokerFrame } from './brokerRoutes.js';
import { contentTypeFor, frameEncoderFor, pipeFrames, streamHeaders, type FrameOptions } from './frames.js';

/** Options of {@link sendSSE}. */
export interface SendSSEOptions extends FrameOptions {
  /**
   * How many bytes may wait unsent while the client does not read, in bytes. Default: 4 MiB.
   * Past it the run is stopped (see {@link sendSSE}).
   */
  maxBufferedBytes?: number | undefined;
}

const frameBytes = (frame: string | Uint8Array) => (typeof frame === 'string' ? Buffer.byteLength(frame) : frame.byteLength);

/**
 * Streams AG-UI events to a Node `http.ServerResponse` as server-sent events, the AG-UI HTTP binding.
 *
 * - Sends status 200 with `Content-Type: text/event-stream` (or the AG-UI protobuf media type when
 *   `accept` asks for it), `Cache-Control: no-cache`, `Connection: keep-alive`, `X-Accel-Buffering: no`.
 * - One `data: <json>\n\n` frame per event; an SSE comment `: ping` after `heartbeatMs` (default
 *   15000 ms) of silence.
 * - The response's `'close'` (the client went away) unsubscribes `events$`, which aborts the agent.
 * - Backpressure: when `res.write()` returns false, frames wait in a queue until `'drain'`. If more
 *   than `maxBufferedBytes` wait (a client that stopped reading), the run is stopped: `events$` is
 *   unsubscribed, a RUN_ERROR with `code: "SLOW_CLIENT"` is queued after the waiting frames, and the
 *   response ends once they are written. Memory stays bounded at about `maxBufferedBytes` plus one frame.
 * - If `events$` errors before its terminal event, a RUN_ERROR frame ends the response.
 *
 * @param res The response to write to; its headers must not have been sent.
 * @param events$ A run's AG-UI events, e.g. `agent$.pipe(toAgui(…))`.
 * @param options `heartbeatMs` (ms), `accept` (the request's Accept header), `maxBufferedBytes` (bytes).
 * @return The subscription to `events$`; unsubscribing it stops the run and leaves the response open.
 */
export function sendSSE(res: ServerResponse, events$: Observable<Event>, options: SendSSEOptions = {}): Subscription {
  return send(res, events$, options, false);
}

/** {@link sendSSE} for a brokered stream: each frame's cursor is its SSE `id:` line. */
export function sendBrokerFrames(res: ServerResponse, frames$: Observable<BrokerFrame>, options: SendSSEOptions = {}): Subscription {
  return send(res, frames$, options, true);
}

function send(res: ServerResponse, items$: Observable<Event | BrokerFrame>, options: SendSSEOptions, framed: boolean): Subscription {
  const maxBufferedBytes = options.maxBufferedBytes ?? 4 * 1024 * 1024;
  res.writeHead(200, streamHeaders(contentTypeFor(options.accept)));
  res.flushHeaders();
  // Frames waiting for 'drain' from `head` on (a moving head rather than `shift()`, which copies
  // the whole array each time once it is large: quadratic on a long replay), and their size in bytes.
  let queue: (string | Uint8Array)[] = [];
  let head = 0;
  let queuedBytes = 0;
  let waiting = false;
  let ending = false;
  let terminal = false;
  const gone = () => res.destroyed || res.writableEnded;

  const flush = () => {
    waiting = false;
    while (head < queue.length) {
      const frame = queue[head++];
      queuedBytes -= frameBytes(frame);
      if (!res.write(frame)) {
        // What was written is released: the rest moves to a new array once half of it is done.
        if (head > 1024 && head * 2 > queue.length) {
          queue = queue.slice(head);
          head = 0;
        }
        waiting = true;
        res.once('drain', flush);
        return;
      }
    }
    queue = [];
    head = 0;
    if (ending && !gone()) res.end();
  };

  const write = (frame: string | Uint8Array) => {
    if (gone()) return;
    if (waiting) {
      queue.push(frame);
      queuedBytes += frameBytes(frame);
    } else if (!res.write(frame)) {
      waiting = true;
      res.once('drain', flush);
    }
  };

  // Set once the run is stopped for a slow client (possibly while pipeFrames is still subscribing).
  let stopped = false;
  let subscription: Subscription | undefined = undefined;
  subscription = pipeFrames(
    items$ as Observable<BrokerFrame>,
    {
      write(frame, event) {
        // A synchronous source goes on emitting after the stop (it could not be unsubscribed yet):
        // nothing may follow the SLOW_CLIENT RUN_ERROR.
        if (stopped) return;
        if (event?.type === EventType.RUN_FINISHED || event?.type === EventType.RUN_ERROR) terminal = true;
        write(frame);
        if (queuedBytes > maxBufferedBytes && !terminal && !ending) {
          // The client stopped reading: stop the agent rather than hold the rest of its run in memory.
          stopped = true;
          safeUnsubscribe(subscription);
          const runError: Event = {
            type: EventType.RUN_ERROR,
            code: 'SLOW_CLIENT',
            message: `The client did not read the stream: more than ${maxBufferedBytes} bytes waited unsent, so the run was stopped.`,
          };
          write(frameEncoderFor(options.accept)(runError));
          ending = true;
        }
      },
      end() {
        ending = true;
        if (!waiting && !gone()) res.end();
      },
    },
    options,
    framed as true,
  );
  const run = subscription;
  // A client gone before we started (it left while the request body was read) sends no 'close' again.
  if (stopped || gone()) safeUnsubscribe(run);
  const onClose = () => safeUnsubscribe(run);
  res.on('close', onClose);
  run.add(() => res.off('close', onClose));
  return run;
}
