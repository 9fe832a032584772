import { EventType, type Event } from '@ag-ui/core';
import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Observable, Subscription, Unsubscribable } from 'rxjs';
import { safeUnsubscribe } from '../protocol/createOperator.js';
import type { BrokerFrame } from './brokerRoutes.js';
import { SEND_BUFFER_FULL, SLOW_CLIENT, flowFailure, flowLimitsOf, sendBufferFull, stallTimer, type FlowOptions, type StallTimer } from './flowControl.js';
import { contentTypeFor, frameEncoderFor, pipeFrames, streamHeaders, type FrameOptions, type FrameSink, type FramedOptions } from './frames.js';
import { recordType } from '../protocol/recordType.js';

/** Options of {@link sendSSE}: the frames' options and the bounds of what waits for the client. */
export interface SendSSEOptions extends FrameOptions, FlowOptions {}

const frameBytes = (frame: string | Uint8Array) => (typeof frame === 'string' ? Buffer.byteLength(frame) : frame.byteLength);

// A larger frame is written in pieces of this size, each after the 'drain' of the one before, so
// that a client reading a large frame slowly still shows progress (a 'drain') within the stall timeout.
const PIECE_BYTES = 64 * 1024;

// Without counting the bytes of most frames: a UTF-16 code unit is at most 3 bytes of UTF-8.
const fitsOnePiece = (frame: string | Uint8Array) =>
  typeof frame === 'string' ? frame.length * 3 <= PIECE_BYTES || Buffer.byteLength(frame) <= PIECE_BYTES : frame.byteLength <= PIECE_BYTES;

// The queue of every response while nothing waits (frozen: never pushed to): a response whose client keeps up holds no array of its own.
const NOTHING_WAITS = Object.freeze([]) as unknown as (string | Uint8Array)[];

// The stall clock of a response that is over: nothing arms it again.
const stallStopped: StallTimer = { waiting() {}, idle() {}, stop() {} };

/**
 * Streams AG-UI events to a Node `http.ServerResponse` as server-sent events, the AG-UI HTTP binding.
 *
 * - Sends status 200 with `Content-Type: text/event-stream` (or the AG-UI protobuf media type when
 *   `accept` asks for it), `Cache-Control: no-cache`, `X-Accel-Buffering: no` (no `Connection`: Node's own keeps the connection unless the client asked to close it):
 *   in one write with the first frame when that comes in the same tick, else flushed at the tick's end.
 * - One `data: <json>\n\n` frame per event (deltas merged as below); an SSE comment `: ping` after `heartbeatMs` (default
 *   15000 ms) of silence. A tick's first frame is written at once, the frames after it in one `write` at the tick's end; with
 *   `coalesce` (default: true; false for {@link sendBrokerFrames}) consecutive deltas of one
 *   message, tool call or reasoning message in them are one frame (see `pipeFrames`).
 * - The response's `'close'` (the client went away) unsubscribes `events$`, which aborts the agent.
 * - Backpressure: when `res.write()` returns false, frames wait in a queue until `'drain'`; a frame
 *   over 64 KiB is written in 64 KiB pieces, each after the previous one drained. A client that
 *   reads fast enough to be seen within `stallTimeoutMs` (see {@link FlowOptions.stallTimeoutMs}:
 *   behind a large burst, about a third of the kernel's send buffer per stallTimeoutMs), however
 *   fast the run and however large a frame, gets every frame.
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
export function sendBrokerFrames(res: ServerResponse, frames$: Observable<BrokerFrame>, options: SendSSEOptions & FramedOptions = {}): Subscription {
  return send(res, frames$, options, true);
}

function send(res: ServerResponse, items$: Observable<Event | BrokerFrame>, options: SendSSEOptions, framed: boolean): Subscription {
  const { maxBufferedBytes, stallTimeoutMs } = flowLimitsOf(options);
  res.writeHead(200, streamHeaders(contentTypeFor(options.accept)));
  const r = new NodeStreamRecord();
  r.res = res;
  r.options = options;
  r.maxBufferedBytes = maxBufferedBytes;
  r.stallTimeoutMs = stallTimeoutMs;
  r.queue = NOTHING_WAITS;
  r.head = 0;
  r.queuedBytes = 0;
  r.waiting = false;
  r.ending = false;
  r.stopped = false;
  r.subscription = undefined;
  r.ready = undefined;
  r.stall = undefined;
  r.onDrain = undefined;
  r.wrote = false;
  r.corkedSocket = undefined;
  NodeStreamRecord.shaped(r);
  // The headers go out with the first frame when it comes in this tick (one write instead of two: a
  // run's RUN_STARTED nearly always does); else at the tick's end, so that a client sees the
  // response start before the agent's first event.
  void Promise.resolve().then(() => {
    if (!r.wrote && !gone(r)) res.flushHeaders();
  });
  r.subscription = pipeFrames(items$ as Observable<BrokerFrame>, r, options, framed as true);
  const run = r.subscription;
  // A client gone before we started (it left while the request body was read) sends no 'close' again.
  if (r.stopped || gone(r)) safeUnsubscribe(run);
  // One listener shared by every response, which finds its stream on the response; the record is
  // the subscription's finalizer too (`unsubscribe`), which removes it.
  (res as Streaming)[STREAM] = r;
  res.on('close', onResponseClose);
  run.add(r);
  return run;
}

/** Where a response being streamed keeps its {@link NodeStream}, for the shared 'close' listener. */
const STREAM: unique symbol = Symbol('agui-rx.stream');

type Streaming = ServerResponse & { [STREAM]?: NodeStream | undefined };

function onResponseClose(this: ServerResponse): void {
  const r = (this as Streaming)[STREAM];
  if (r === undefined) return;
  safeUnsubscribe(r.subscription);
  // Nothing can be sent any more: free the queue now rather than when the response is collected.
  release(r);
}

/**
 * One response of {@link send}, and the sink its frames go to: a plain record, the sink's methods
 * on one shared prototype (`streamMethods`) and its steps module functions taking it, so that an
 * open stream holds this record rather than a closure per step.
 */
interface NodeStream extends FrameSink, Unsubscribable {
  readonly res: ServerResponse;
  readonly options: SendSSEOptions;
  readonly maxBufferedBytes: number;
  readonly stallTimeoutMs: number;
  // Frames waiting for 'drain' from `head` on (a moving head rather than `shift()`, which copies
  // the whole array each time once it is large: quadratic on a long replay), and their size in bytes.
  queue: (string | Uint8Array)[];
  head: number;
  queuedBytes: number;
  /** Whether the socket refused more (write() returned false) and we wait for its 'drain'. */
  waiting: boolean;
  /** Whether the response ends once the queue is written. */
  ending: boolean;
  /** Set once the run is stopped from inside (possibly while pipeFrames is still subscribing). */
  stopped: boolean;
  subscription: Subscription | undefined;
  /** Told once what waited has gone on (pipeFrames' deltas held meanwhile then go as one frame). */
  ready: (() => void) | undefined;
  /** Made when frames first wait: an open stream whose client keeps up holds no stall clock. */
  stall: StallTimer | undefined;
  /** The 'drain' listener, made when frames first wait. */
  onDrain: (() => void) | undefined;
  /** Something was written: the headers went with it. */
  wrote: boolean;
  /** The socket `cork` held until the framer's end of the tick (see FrameSink.cork). */
  corkedSocket: Socket | undefined;
}

const gone = (r: NodeStream) => r.res.destroyed || r.res.writableEnded;

// What waits is dropped, and nothing more waits on the socket.
function release(r: NodeStream): void {
  r.queue = NOTHING_WAITS;
  r.head = 0;
  r.queuedBytes = 0;
  if (r.onDrain !== undefined) r.res.off('drain', r.onDrain);
  r.ready = undefined;
  r.stall?.stop();
  r.stall = stallStopped;
  r.options.demand?.open();
}

function onStall(r: NodeStream): void {
  // The client took nothing for stallTimeoutMs: a RUN_ERROR could not reach it either. A run
  // stopped already (SEND_BUFFER_FULL, reported then) is not a second failure: it is only cut.
  const reported = r.stopped;
  r.stopped = true;
  safeUnsubscribe(r.subscription);
  release(r);
  r.res.destroy();
  if (!reported) r.options.onFailure?.(flowFailure(SLOW_CLIENT, r.stallTimeoutMs));
}

function wait(r: NodeStream): void {
  r.waiting = true;
  // The client takes bytes when the response's own buffer falls: 'drain' comes only once it is
  // empty, which a client reading slowly behind a kernel buffer of megabytes may not let happen
  // within stallTimeoutMs, while each write Node has handed to the kernel in full leaves it (64 KiB
  // pieces here). The kernel takes a piece only once its send buffer has room, about a third of it
  // read (FlowOptions.stallTimeoutMs): the most a client must read per stallTimeoutMs.
  (r.stall ??= stallTimer(r.stallTimeoutMs, () => onStall(r), () => r.res.writableLength)).waiting();
  r.options.demand?.close();
  r.res.once('drain', (r.onDrain ??= () => flush(r)));
}

function finish(r: NodeStream): void {
  r.stall?.stop();
  r.stall = stallStopped;
  r.options.demand?.open();
  if (!gone(r)) r.res.end();
}

function flush(r: NodeStream): void {
  r.waiting = false;
  const res = r.res;
  while (r.head < r.queue.length) {
    if (gone(r)) return release(r);
    const frame = r.queue[r.head];
    const size = frameBytes(frame);
    let piece = frame;
    if (size > PIECE_BYTES) {
      const rest = typeof frame === 'string' ? Buffer.from(frame) : frame;
      piece = rest.subarray(0, PIECE_BYTES);
      r.queue[r.head] = rest.subarray(PIECE_BYTES);
      r.queuedBytes -= PIECE_BYTES;
    } else {
      r.head++;
      r.queuedBytes -= size;
    }
    r.wrote = true;
    if (!res.write(piece)) {
      // What was written is released: the rest moves to a new array once half of it is done.
      if (r.head > 1024 && r.head * 2 > r.queue.length) {
        r.queue = r.queue.slice(r.head);
        r.head = 0;
      }
      return wait(r);
    }
  }
  r.queue = NOTHING_WAITS;
  r.head = 0;
  r.stall?.idle();
  // What waited has gone on: a producer that waits may go on too.
  r.options.demand?.open();
  if (r.ending) return finish(r);
  const callback = r.ready;
  r.ready = undefined;
  callback?.();
}

function enqueue(r: NodeStream, frame: string | Uint8Array, size: number): void {
  if (r.queue === NOTHING_WAITS) r.queue = [frame];
  else r.queue.push(frame);
  r.queuedBytes += size;
  if (!r.waiting) flush(r);
}

function streamWrite(this: NodeStream, frame: string | Uint8Array, event?: Event): void {
  // A synchronous source goes on emitting after the stop (it could not be unsubscribed yet):
  // nothing may follow the RUN_ERROR.
  if (this.stopped || gone(this)) return;
  if (!this.waiting && this.head === this.queue.length && fitsOnePiece(frame)) {
    // The common case: nothing waits, straight to the socket.
    this.wrote = true;
    if (!this.res.write(frame)) wait(this);
    return;
  }
  const size = frameBytes(frame);
  const terminal = event?.type === EventType.RUN_FINISHED || event?.type === EventType.RUN_ERROR;
  if (this.head < this.queue.length && this.queuedBytes + size > this.maxBufferedBytes && !terminal) {
    // Far faster than the connection: stop the agent rather than hold the rest of its run in memory.
    this.stopped = true;
    safeUnsubscribe(this.subscription);
    this.ending = true;
    const runError = frameEncoderFor(this.options.accept)(sendBufferFull(this.maxBufferedBytes));
    this.options.onFailure?.(flowFailure(SEND_BUFFER_FULL, this.maxBufferedBytes));
    return enqueue(this, runError, frameBytes(runError));
  }
  enqueue(this, frame, size);
}

function streamEnd(this: NodeStream): void {
  this.ending = true;
  if (!this.waiting && this.head === this.queue.length) finish(this);
}

function streamBusy(this: NodeStream): boolean {
  return this.waiting || this.head < this.queue.length;
}

function streamWhenReady(this: NodeStream, callback: () => void): void {
  this.ready = callback;
}

// `res.write` corks the socket and uncorks it in a `process.nextTick`: until then this tick's writes wait there together.
function streamCorked(this: NodeStream): boolean {
  return this.res.writableCorked > 0;
}

// The socket itself is kept and uncorked: a cork left on a kept-alive socket would hold the next response's writes.
function streamCork(this: NodeStream): void {
  const socket = this.res.socket;
  if (socket === null || socket === undefined || this.corkedSocket !== undefined) return;
  socket.cork();
  this.corkedSocket = socket;
}

function streamUncork(this: NodeStream): void {
  const socket = this.corkedSocket;
  this.corkedSocket = undefined;
  socket?.uncork();
}

// The subscription is over: the response's 'close' no longer concerns it.
function streamUnsubscribe(this: NodeStream): void {
  this.res.off('close', onResponseClose);
  (this.res as Streaming)[STREAM] = undefined;
}

// The sink methods every response shares, and its finalizer: its prototype, so that the record holds only its fields.
const streamMethods: FrameSink & Unsubscribable = Object.freeze({ write: streamWrite, end: streamEnd, busy: streamBusy, whenReady: streamWhenReady, corked: streamCorked, cork: streamCork, uncork: streamUncork, unsubscribe: streamUnsubscribe });
const NodeStreamRecord = recordType<NodeStream>(streamMethods);
