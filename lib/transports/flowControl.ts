import { EventType, type Event } from '@ag-ui/core';
import { AguiRxError } from '../protocol/errors.js';
import { MAX_TIMER_MS } from '../protocol/values.js';

/** Options of the stream transports that bound what one response may hold for its client. */
export interface FlowOptions {
  /**
   * The most bytes of frames one response may queue while its client has not taken the ones
   * before them, in bytes. Default: 64 MiB. It bounds memory against a producer far faster than
   * any network, not a slow client (see `stallTimeoutMs`): a frame that would queue past it stops
   * the run with RUN_ERROR `code: "SEND_BUFFER_FULL"`, sent after the frames already queued. A
   * frame that arrives while nothing waits is always taken, whatever its size. `Infinity`: no limit.
   */
  maxBufferedBytes?: number | undefined;
  /**
   * How long frames may wait while the client takes no bytes at all, in ms, before the client is
   * declared stalled. Default: 30000. Then the run is stopped (with a run broker, only this
   * reader leaves), the connection closed and the queued frames freed at once. A client that
   * takes bytes restarts the clock: on node:http, when Node has handed one of the 64 KiB pieces
   * that wait to the kernel in full; on a Web stream, at each pull. On node:http the kernel takes
   * more only once the connection's send buffer (Linux grows it up to `net.ipv4.tcp_wmem`'s
   * maximum, 4 MB by default) has room again, which Linux gives a writer after about a third of it
   * is read: behind a large burst a client must read that much (up to about 1.3 MB) in each
   * stallTimeoutMs to be seen reading. The default keeps clients of a few tens of KB/s (in a
   * trial, 32 and 48 KB/s behind a 4 MB burst); a few seconds cut even one reading 128 KiB/s
   * there. `Infinity`: never.
   */
  stallTimeoutMs?: number | undefined;
  /**
   * Closed when frames start waiting for the client, opened once they have gone on (and when the
   * response ends), so that a producer that can wait (the handlers' iterable agents) pulls no faster
   * than the client reads ({@link createDemandGate}). Default: none.
   */
  demand?: DemandGate | undefined;
}

/** Default of {@link FlowOptions.maxBufferedBytes}: 64 MiB. */
export const DEFAULT_MAX_BUFFERED_BYTES = 64 * 1024 * 1024;

/** Default of {@link FlowOptions.stallTimeoutMs}: 30 s. */
export const DEFAULT_STALL_TIMEOUT_MS = 30_000;

/** The RUN_ERROR `code` of a run stopped because a client stalled (it is rarely delivered: the client is not reading). */
export const SLOW_CLIENT = 'SLOW_CLIENT';

/** The RUN_ERROR `code` of a run stopped because it queued more than `maxBufferedBytes`. */
export const SEND_BUFFER_FULL = 'SEND_BUFFER_FULL';

/**
 * `maxBufferedBytes` and `stallTimeoutMs` with their defaults.
 *
 * @throws RangeError naming the option when one is not a number ≥ 0 (`stallTimeoutMs`: > 0), or is NaN.
 */
export function flowLimitsOf(options: FlowOptions): { maxBufferedBytes: number; stallTimeoutMs: number } {
  const maxBufferedBytes = options.maxBufferedBytes ?? DEFAULT_MAX_BUFFERED_BYTES;
  const stallTimeoutMs = options.stallTimeoutMs ?? DEFAULT_STALL_TIMEOUT_MS;
  if (typeof maxBufferedBytes !== 'number' || !(maxBufferedBytes >= 0)) {
    throw new RangeError(`'maxBufferedBytes' must be a number of bytes ≥ 0 (or Infinity), not ${String(maxBufferedBytes)}.`);
  }
  if (typeof stallTimeoutMs !== 'number' || !(stallTimeoutMs > 0)) {
    throw new RangeError(`'stallTimeoutMs' must be a number of ms > 0 (or Infinity), not ${String(stallTimeoutMs)}.`);
  }
  return { maxBufferedBytes, stallTimeoutMs };
}

/** The RUN_ERROR that stops a run which queued more than `maxBufferedBytes` for its client. */
export function sendBufferFull(maxBufferedBytes: number): Event {
  return {
    type: EventType.RUN_ERROR,
    code: SEND_BUFFER_FULL,
    message: `The run produced events faster than the connection could send them: more than ${maxBufferedBytes} bytes waited unsent, so the run was stopped. Raise maxBufferedBytes, or have the agent emit less at once.`,
  };
}

/** The error a stream reports (`onFailure`) when it stopped its run itself: SLOW_CLIENT or SEND_BUFFER_FULL. */
export function flowFailure(code: typeof SLOW_CLIENT | typeof SEND_BUFFER_FULL, limit: number): AguiRxError {
  return new AguiRxError(code, code === SLOW_CLIENT ? slowClientMessage(limit) : (sendBufferFull(limit) as { message: string }).message);
}

/** Why a stalled client's stream was ended. */
export function slowClientMessage(stallTimeoutMs: number): string {
  return `The client did not read the stream: it took no bytes for ${stallTimeoutMs} ms while frames waited, so the run was stopped (raise stallTimeoutMs to wait longer).`;
}

/** The clock of {@link stallTimer}. */
export interface StallTimer {
  /** Frames wait from now on: the client took what it had before (a 'drain', a pull), or frames just started waiting. */
  waiting(): void;
  /** Nothing waits any more. */
  idle(): void;
  /** The response is over: the timer is cleared for good. */
  stop(): void;
}

/**
 * One timer per response that calls `onStall` once frames have waited `stallTimeoutMs` with no
 * progress. Progress re-arms nothing: the timer, when it fires, looks at when frames last started
 * waiting and waits the rest, so a client that takes bytes often costs no timer churn.
 * `waitingSize`, when given, says how much still waits, in any unit that falls as the client takes
 * it: read when frames start waiting and when the time is up, a fall between the two is progress
 * the caller could only see by looking, and restarts the clock from then.
 */
export function stallTimer(stallTimeoutMs: number, onStall: () => void, waitingSize?: () => number): StallTimer {
  // When frames started waiting, or the client last took bytes while they wait; undefined: nothing waits.
  let since: number | undefined;
  // What `waitingSize` said when last read.
  let lastSize = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let stopped = false;
  const arm = (ms: number) => {
    // A wait longer than a timer holds re-arms.
    timer = setTimeout(check, Math.min(ms, MAX_TIMER_MS));
    // A stall check never keeps a process alive on its own: the connection it watches does.
    (timer as { unref?: () => void }).unref?.();
  };
  const check = () => {
    timer = undefined;
    if (since === undefined || stopped) return;
    const left = stallTimeoutMs - (performance.now() - since);
    if (left > 0) return arm(left);
    if (waitingSize !== undefined) {
      const size = waitingSize();
      const progressed = size < lastSize;
      lastSize = size;
      if (progressed) {
        since = performance.now();
        return arm(stallTimeoutMs);
      }
    }
    stopped = true;
    since = undefined;
    onStall();
  };
  return {
    waiting() {
      if (stopped || stallTimeoutMs === Infinity) return;
      since = performance.now();
      if (waitingSize !== undefined) lastSize = waitingSize();
      if (timer === undefined) arm(stallTimeoutMs);
    },
    idle() {
      since = undefined;
    },
    stop() {
      stopped = true;
      since = undefined;
      if (timer !== undefined) clearTimeout(timer);
      timer = undefined;
    },
  };
}

/**
 * Whether a response's consumer keeps up, for a producer that can wait (an iterable agent pulled in
 * slices): the stream closes it while frames wait for the consumer, opens it once they have gone on.
 */
export interface DemandGate {
  /** Undefined while the consumer keeps up; otherwise a promise that settles once it has caught up (or the stream ended). */
  ready(): Promise<void> | undefined;
  /** Frames wait for the consumer. */
  close(): void;
  /** The consumer caught up, or the stream ended. */
  open(): void;
}

/**
 * Makes a {@link DemandGate}, open: pass it to `toSSEStream`/`toSSEResponse` as `demand`, and its
 * `ready` to what produces the events, which waits on the promise before producing more. It holds
 * no events and throws nothing; it is how a Web stream's backpressure (its `desiredSize`, WHATWG
 * Streams) reaches a producer that can wait. The handlers use one per run of an iterable agent.
 *
 * @return The gate: `ready()`, `close()`, `open()`.
 */
export function createDemandGate(): DemandGate {
  const gate: GateState = { waiting: undefined };
  // Closures, not methods: `ready` is handed to the producer on its own.
  return { ready: () => gate.waiting?.promise, close: () => closeGate(gate), open: () => openGate(gate) };
}

/** What a {@link DemandGate} holds: set while frames wait, the promise `ready()` gives until they have gone on. Internal. */
export interface GateState {
  waiting: { promise: Promise<void>; resolve: () => void } | undefined;
}

/** A {@link DemandGate}'s `close`, on its state. Internal: the handlers' runs keep the state in a record of their own. */
export function closeGate(gate: GateState): void {
  if (gate.waiting !== undefined) return;
  let resolve!: () => void;
  const promise = new Promise<void>((done) => (resolve = done));
  gate.waiting = { promise, resolve };
}

/** A {@link DemandGate}'s `open`, on its state. Internal. */
export function openGate(gate: GateState): void {
  const waiting = gate.waiting;
  gate.waiting = undefined;
  waiting?.resolve();
}
