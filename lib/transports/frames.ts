import { EventType, type Event } from '@ag-ui/core';
import { AGUI_MEDIA_TYPE, EventEncoder } from '@ag-ui/encoder';
import Negotiator from 'negotiator';
import { Subscription, type Observable, type Observer } from 'rxjs';
import { ChainObservable, safeUnsubscribe } from '../protocol/createOperator.js';
import { AguiRxError } from '../protocol/errors.js';
import { entityKinds, isTokenEventType } from '../protocol/table.js';
import type { BrokerFrame } from './brokerRoutes.js';
import { sseFrame } from './encodeSSE.js';
import { keepShapes } from '../protocol/recordType.js';
import { MAX_TIMER_MS } from '../protocol/values.js';

/**
 * The headers of an AG-UI event stream response (`Content-Type` depends on what the client accepts).
 * No `Connection`: HTTP/1.1 keeps the connection open by default, Node's server says so unless the
 * client asked to close it (which a forced `keep-alive` would override, RFC 9112 §9.6), and HTTP/2
 * forbids the header.
 */
export function streamHeaders(contentType: string): Record<string, string> {
  return {
    'Content-Type': contentType,
    'Cache-Control': 'no-cache',
    // Tells nginx and similar proxies not to buffer the stream.
    'X-Accel-Buffering': 'no',
  };
}

/** The SSE comment sent while the stream is idle, so that proxies and browsers keep the connection open. */
export const HEARTBEAT = ': ping\n\n';

const SSE_MEDIA_TYPE = 'text/event-stream';

/**
 * The `Content-Type` of the stream for a request's `Accept` header (RFC 9110 §12.5.1, through
 * `negotiator`): `application/vnd.ag-ui.event+proto` when the client prefers it to
 * `text/event-stream`, SSE otherwise: on a tie, for a wildcard (as `fetch` and curl send) and
 * when the header is absent, since SSE is the binding every client reads.
 */
export function contentTypeFor(accept: string | undefined): string {
  // Not `@ag-ui/encoder`'s negotiation: it picks protobuf whenever protobuf is acceptable at all,
  // so a bare wildcard would get binary frames.
  if (accept === undefined || isPlainSSEAccept(accept)) return SSE_MEDIA_TYPE;
  // SSE refused outright (q=0) and protobuf not: protobuf, rather than the one type the client refused.
  if (refuses(mediaRangesOf(accept), SSE_MEDIA_TYPE) && !refuses(mediaRangesOf(accept), AGUI_MEDIA_TYPE)) return AGUI_MEDIA_TYPE;
  if (!accept.toLowerCase().includes(AGUI_MEDIA_TYPE)) return SSE_MEDIA_TYPE;
  const ranges = mediaRangesOf(accept).map(({ range, q }) => (q === undefined ? range : `${range};q=${q}`));
  return new Negotiator({ headers: { accept: ranges.join(', ') } }).mediaType([SSE_MEDIA_TYPE, AGUI_MEDIA_TYPE]) === AGUI_MEDIA_TYPE ? AGUI_MEDIA_TYPE : SSE_MEDIA_TYPE;
}

/**
 * The header nearly every request sends (the official client, EventSource, `fetch` and curl):
 * SSE alone, or any type. Answered without parsing, once per request on every route.
 */
function isPlainSSEAccept(accept: string): boolean {
  return accept === SSE_MEDIA_TYPE || accept === '*/*';
}

/**
 * The media ranges of an `Accept` header, lower-cased, each with its `q` weight as written, without
 * other parameters: our types have none, and negotiator would find no match for a range with one
 * (`application/vnd.ag-ui.event+proto; charset=utf-8` asks for protobuf all the same).
 */
function mediaRangesOf(accept: string): { range: string; q: string | undefined }[] {
  return accept.split(',').flatMap((part) => {
    const [range, ...parameters] = part.split(';').map((piece) => piece.trim().toLowerCase());
    if (!/^[^\s/]+\/[^\s/]+$/.test(range)) return [];
    const q = parameters.find((parameter) => /^q\s*=/.test(parameter))?.replace(/^q\s*=\s*/, '');
    return [{ range, q }];
  });
}

/** The types an AG-UI stream is served as, for 406 answers. */
export const STREAM_MEDIA_TYPES: readonly string[] = [SSE_MEDIA_TYPE, AGUI_MEDIA_TYPE];

/**
 * Whether an `Accept` header explicitly refuses every type the stream is served as: for each, the
 * most specific range that matches it (`type/subtype`, then `type/*`, then the any-type wildcard;
 * RFC 9110 §12.5.1) has `q=0`. A header that names neither (`application/json`), or none at all, refuses nothing:
 * such clients still get SSE.
 */
export function refusesEveryStreamType(accept: string | undefined): boolean {
  if (accept === undefined || isPlainSSEAccept(accept)) return false;
  const ranges = mediaRangesOf(accept);
  return STREAM_MEDIA_TYPES.every((type) => refuses(ranges, type));
}

/** Whether the most specific range matching `type` (exact, then `type/*`, then the full wildcard) gives it q=0. */
function refuses(ranges: ReturnType<typeof mediaRangesOf>, type: string): boolean {
  const [main] = type.split('/');
  for (const range of [type, `${main}/*`, '*/*']) {
    const weights = ranges.filter((candidate) => candidate.range === range).map(({ q }) => (q === undefined || Number.isNaN(Number(q)) ? 1 : Number(q)));
    if (weights.length > 0) return Math.max(...weights) === 0;
  }
  return false;
}

/** Encodes one event as a frame for a request's `Accept` header: SSE text, or a length-prefixed protobuf message. */
export function frameEncoderFor(accept: string | undefined): (event: Event) => string | Uint8Array {
  return encoderOf(contentTypeFor(accept) !== SSE_MEDIA_TYPE);
}

function encoderOf(protobuf: boolean): (event: Event) => string | Uint8Array {
  return protobuf ? encodeProtobuf : encodeSse;
}

/** Where frames go: a Web stream controller or a Node response. */
export interface FrameSink {
  /** Writes one frame: SSE text, or a length-prefixed protobuf message; `event` is absent for a heartbeat. */
  write(frame: string | Uint8Array, event?: Event): void;
  /** Ends the stream after the last frame. */
  end(): void;
  /**
   * Whether frames wait for the client now (the socket refused more, the stream's queue is full).
   * Then frames go to `write` one by one, each as soon as it is framed, so that the sink's bounds
   * see them; otherwise the frames of one tick go in one `write`. Default: never.
   */
  busy?(): boolean;
  /**
   * Calls `callback` once, the next time the sink stops being busy (what waited has gone on). With
   * it, deltas of one id that arrive while the sink is busy keep joining one frame until then.
   */
  whenReady?(callback: () => void): void;
  /**
   * Whether what is written now waits in the sink until the current tick's end and goes on then
   * with everything written before it in the tick (Node's `writable.cork()`: `res.write` corks the
   * socket and uncorks it in a `process.nextTick`). A sink that can tell spares each tick's first
   * frame a scheduled tick end of its own: only a second frame in the tick schedules one. Default:
   * the sink cannot tell, and every tick that writes a frame schedules its end.
   */
  corked?(): boolean;
  /**
   * Holds what is written from now on one level more, until {@link uncork} (Node's
   * `writable.cork()`): called, with `corked` true, when a tick's second frame schedules the
   * tick's end, so that the sink's own end of the tick (Node's uncork) does not send the first frame
   * alone and the tick's frames still go in one write. Each call is followed by one `uncork`.
   */
  cork?(): void;
  /** Releases one {@link cork}: at the tick's end, after its frames were written. */
  uncork?(): void;
}

/**
 * The options of a brokered stream inside the toolkit (not part of the public API): `onFrame`,
 * called as their method, is shown each frame before it is framed (the node handler reports a
 * RUN_LOST with it, rather than with an operator of its own per stream).
 */
export interface FramedOptions extends FrameOptions {
  onFrame?(frame: BrokerFrame): void;
}

/** Options shared by the transports. */
export interface FrameOptions {
  /**
   * Idle time after which an SSE comment line is sent, in ms (0 turns it off; protobuf has none).
   * None is sent while frames still wait for the client: the connection is not idle. Default: 15000.
   */
  heartbeatMs?: number | undefined;
  /** The request's `Accept` header: `application/vnd.ag-ui.event+proto` selects protobuf frames. */
  accept?: string | undefined;
  /**
   * Told when the stream ends its run with an error of its own, once: `events$` errored before its
   * terminal event (the error), the client stalled (`code: "SLOW_CLIENT"`) or too much waited for
   * it (`code: "SEND_BUFFER_FULL"`). The handlers report these to their `onError`. Called as a
   * method of these options (`options.onFailure(error)`). Default: none.
   */
  onFailure?: ((error: unknown) => void) | undefined;
  /**
   * Adaptive coalescing: consecutive deltas of one text message, tool call or reasoning message
   * (TEXT_MESSAGE_CONTENT, TOOL_CALL_ARGS, REASONING_MESSAGE_CONTENT of one id and lane) produced
   * in the same tick go out as one frame, their deltas concatenated. Nothing waits longer for it:
   * the tick's frames go out at its end anyway. Default: true, false for a brokered stream (it
   * sends its log as stored; a merged frame carries the cursor of the last event it holds).
   */
  coalesce?: boolean | undefined;
}

/** The message of a thrown value, if it has one; reading it never throws (a hostile error, a revoked Proxy), or the stream would never end. */
function messageOf(error: unknown): string | undefined {
  try {
    const message = (error as { message?: unknown } | null)?.message;
    return typeof message === 'string' && message !== '' ? message : undefined;
  } catch {
    return undefined;
  }
}

// The frames after a tick's first are written once it holds this many characters, without waiting for the tick's
// end: a synchronous burst then meets the sink's backpressure (and its bounds) as it goes.
const BATCH_CHARS = 16 * 1024;

// Runs `callback` once the current tick's synchronous work and its microtasks are done (Node's
// `process.nextTick` where it exists, as the Web runtimes built on Node have; `queueMicrotask` otherwise).
// Returns whether that scheduler is a fake timer's (@sinonjs/fake-timers, behind Jest's and Vitest's,
// marks each function it installs with its `clock`), which runs nothing until the test says so.
const atTickEnd = (callback: () => void): boolean => {
  const scheduler = typeof process === 'object' && typeof process?.nextTick === 'function' ? process.nextTick : queueMicrotask;
  scheduler(callback);
  return (scheduler as { clock?: unknown }).clock !== undefined;
};

/**
 * Consecutive deltas of one id held for one frame: the first event (a copy of its fields as they were
 * when it came: a producer may reuse its object), the deltas, the cursor of the last.
 */
interface HeldDeltas {
  first: Event;
  parts: string[];
  chars: number;
  cursor: string | undefined;
}

/**
 * Whether `event` may join the deltas held after `first`: a per-token event of the same type whose
 * every field but `delta` is the same (`===`) as the first's: the same id and lane, and no
 * timestamp, rawEvent or metadata of its own that merging would lose. Its delta must be a string.
 */
function joins(first: Event, event: Event): boolean {
  if (event.type !== first.type || typeof (event as { delta?: unknown }).delta !== 'string') return false;
  const a = first as unknown as Record<string, unknown>;
  const b = event as unknown as Record<string, unknown>;
  let fields = 0;
  for (const key in b) {
    fields++;
    if (key !== 'delta' && b[key] !== a[key]) return false;
  }
  for (const _ in a) fields--;
  return fields === 0;
}

/**
 * Encodes `events$` into `sink` (SSE text, or protobuf through `@ag-ui/encoder` when `accept` asks
 * for it), with a heartbeat comment while idle. If `events$` errors before a terminal event, a
 * RUN_ERROR frame ends the stream, so the client is never left waiting on a run that died.
 *
 * A tick's first frame goes to the sink at once; the frames that follow it in the same tick go in
 * one `write` at the tick's end (SSE: their text joined; while the sink is busy, each frame at
 * once), and with `coalesce` (the default without a broker) consecutive deltas of one message,
 * tool call or reasoning message among them are one frame. Nothing waits past the tick's end.
 */
export function pipeFrames(events$: Observable<Event>, sink: FrameSink, options?: FrameOptions): Subscription;
/**
 * The same for a brokered stream: each frame's `cursor` goes out as its SSE `id:` line (protobuf
 * frames have no place for one and carry none); `coalesce` is off unless asked for.
 */
export function pipeFrames(frames$: Observable<BrokerFrame>, sink: FrameSink, options: FramedOptions, framed: true): Subscription;
export function pipeFrames(items$: Observable<Event | BrokerFrame>, sink: FrameSink, options: FrameOptions = {}, framed = false): Subscription {
  const protobuf = contentTypeFor(options.accept) !== SSE_MEDIA_TYPE;
  const heartbeatMs = protobuf ? 0 : (options.heartbeatMs ?? 15_000);
  // 0, Infinity (or a value no timer can hold) means none: a timer clamps what it cannot hold to 1 ms.
  const beats = heartbeatMs > 0 && heartbeatMs <= MAX_TIMER_MS;
  // An event that cannot be encoded goes back into a chain of ours as its error, which closes what is open before RUN_ERROR.
  const rethrows = !framed && items$ instanceof ChainObservable;
  const f = new Framer(sink, options, framed, protobuf, encoderOf(protobuf), heartbeatMs, beats, options.coalesce ?? !framed, rethrows);
  // The framer is the subscriber itself: a stream that ended while subscribing is unsubscribed already.
  items$.subscribe(f);
  if (!f.ended && f.beats) {
    f.lastFrameAt = performance.now();
    f.timer = setTimeout(beat, heartbeatMs, f);
  }
  return f;
}

/**
 * One stream of {@link pipeFrames}: the subscriber of its items, a `Subscription` that is also their
 * `Observer`, which RxJS takes as the subscriber itself, so that no `SafeSubscriber` stands between
 * the source and it (two objects fewer per stream, one hop fewer per event). Its steps are module
 * functions taking it. A class, as it must be a `Subscription`.
 */
class Framer extends Subscription implements Observer<Event | BrokerFrame> {
  timer: ReturnType<typeof setTimeout> | undefined = undefined;
  /** When the last frame went to the sink: the heartbeat timer, when it fires, waits the rest. */
  lastFrameAt = 0;
  /** Whether the run's terminal event went out, and whether the stream is over. */
  terminal = false;
  ended = false;
  /** This tick's SSE text not yet written, and the last event in it; the deltas held; whether the tick's end is scheduled. */
  batch = '';
  batchEvent: Event | undefined = undefined;
  held: HeldDeltas | undefined = undefined;
  scheduled = false;
  /** Once a busy sink took what waited: the deltas held meanwhile go as one frame. */
  awaitingReady = false;
  /** Which scheduling is current: a tick's end runs once, by whichever of its two callbacks comes first. */
  tick = 0;
  /** Protobuf only: the first half of a surrogate pair that ended a delta, by the delta's message or call (see keepPairsWhole). */
  halfPairs: Map<string, string> | undefined = undefined;
  /** An opener that could not be encoded and went back to the source as its error: its closer, which the source then sends, is not sent either. */
  unsent: Event | undefined = undefined;

  constructor(
    readonly sink: FrameSink,
    /** Its `onFailure` is called as their method (the handlers keep it on a prototype shared by their runs). */
    readonly options: FrameOptions,
    /** Items are broker frames (`{ event, cursor }`), each cursor an SSE `id:` line. */
    readonly framed: boolean,
    readonly protobuf: boolean,
    readonly encode: (event: Event) => string | Uint8Array,
    readonly heartbeatMs: number,
    readonly beats: boolean,
    readonly coalesce: boolean,
    /** The source is a {@link ChainObservable}: an event that cannot be encoded is thrown back into it (see {@link frameOf}). */
    readonly rethrows: boolean,
  ) {
    super();
  }

  // A subscriber ignores what comes once it is closed, as RxJS's own do.
  next(item: Event | BrokerFrame): void {
    if (!this.closed) framerNext(this, item);
  }

  error(error: unknown): void {
    end(this, error ?? new Error('The event stream failed.'));
  }

  complete(): void {
    end(this);
  }

  // Unsubscribed from outside, or at the end: the stream's teardown first, then the source's.
  override unsubscribe(): void {
    if (this.closed) return;
    tearDown(this);
    super.unsubscribe();
  }
}

// Encoding keeps no state: one encoder serves every stream.
const sharedEncoder = new EventEncoder();
const encodeSse = (event: Event): string => sseFrame(event, sharedEncoder);
const encodeProtobuf = (event: Event): Uint8Array => sharedEncoder.encodeProtobuf(event);
// Keeps the class's hidden class when no stream is open (see recordType: the class of a constructor's
// objects dies with the last of them, and the code that reads them is deoptimised). Held by
// keepShapes: a module's variable that nothing reads is no root for V8's GC.
keepShapes(new Framer(undefined as unknown as FrameSink, {}, false, false, encodeSse, 0, false, false, false));

function stopHeartbeat(f: Framer): void {
  if (f.timer !== undefined) clearTimeout(f.timer);
  f.timer = undefined;
}

function beat(f: Framer): void {
  f.timer = undefined;
  if (f.ended) return;
  const left = f.heartbeatMs - (performance.now() - f.lastFrameAt);
  if (left > 0) return void (f.timer = setTimeout(beat, left, f));
  releaseHeld(f);
  writeBatch(f);
  // Releasing may have ended the stream (a held delta that cannot be encoded): nothing follows the end.
  if (f.ended) return;
  // Frames still waiting for the client keep the connection busy: a ping would only add to them
  // (and count against the sink's bound on what waits, as if the run had produced it).
  if (f.sink.busy?.() !== true) f.sink.write(HEARTBEAT);
  f.lastFrameAt = performance.now();
  if (!f.ended) f.timer = setTimeout(beat, f.heartbeatMs, f);
}

function writeBatch(f: Framer): void {
  if (f.batch === '') return;
  const text = f.batch;
  const event = f.batchEvent;
  f.batch = '';
  f.batchEvent = undefined;
  f.sink.write(text, event);
}

function onReady(f: Framer): void {
  f.awaitingReady = false;
  if (f.ended) return;
  releaseHeld(f);
  writeBatch(f);
}

function tickEnd(f: Framer): void {
  f.scheduled = false;
  if (f.ended) return;
  const sink = f.sink;
  if (f.held !== undefined && sink.whenReady !== undefined && sink.busy?.() === true) {
    // The socket could not take them now anyway: the deltas that follow join them until it can.
    writeBatch(f);
    if (!f.awaitingReady) {
      f.awaitingReady = true;
      sink.whenReady(() => onReady(f));
    }
    return;
  }
  releaseHeld(f);
  writeBatch(f);
}

function schedule(f: Framer): void {
  if (f.scheduled) return;
  f.scheduled = true;
  const mine = ++f.tick;
  // The tick's first frame waits in the sink for the sink's own end of the tick, which comes before
  // this one: held one level more, it goes in one write with the frames after it.
  let holding = f.sink.cork !== undefined && inCorkedTick(f);
  if (holding) f.sink.cork!();
  const run = () => {
    try {
      if (f.scheduled && f.tick === mine) tickEnd(f);
    } finally {
      // Once, whichever of the two callbacks below comes first.
      if (holding) {
        holding = false;
        f.sink.uncork!();
      }
    }
  };
  // Fake timers (Jest's default) hold process.nextTick and queueMicrotask until told, and the
  // tick's frames with them: then a promise reaction (never faked) ends the tick too. Only then:
  // it would end a tick before the microtasks that follow, where an async iterable's events come.
  if (atTickEnd(run)) void Promise.resolve().then(run);
}

// Something went to the sink in this tick and waits for the tick's end there: what follows is not the tick's first frame.
const inCorkedTick = (f: Framer): boolean => f.sink.corked?.() === true;

// Queues a framed event for this tick (or writes it at once while the sink is busy, or for protobuf).
function put(f: Framer, frame: string | Uint8Array, event: Event): void {
  if (!f.scheduled && f.batch === '' && !inCorkedTick(f)) {
    // The tick's first frame goes at once (a paced token waits for nothing); the ones after it join
    // this tick's batch. A sink that says when its tick's writes are corked lets a tick with one
    // frame (each paced token's) go without a scheduled end: the second frame schedules it.
    if (f.sink.corked === undefined) schedule(f);
    return f.sink.write(frame, event);
  }
  if (typeof frame === 'string' && f.sink.busy?.() !== true) {
    f.batch += frame;
    f.batchEvent = event;
    if (f.batch.length >= BATCH_CHARS) writeBatch(f);
    else schedule(f);
    return;
  }
  writeBatch(f);
  f.sink.write(frame, event);
}

/**
 * The frame of `event`. One JSON or protobuf cannot carry (a BigInt in rawEvent, a cycle) ends the
 * run readably, with a message that names the event (the encoder's alone does not). With `rethrow`
 * (the event came from a {@link ChainObservable}, now, in its `next`) the error is thrown back to
 * the chain, whose operators close what is open before its RUN_ERROR, which comes back here:
 * ending the stream at once would leave a message or call open on the wire (AG-UI: every
 * started message and call ends before the run does). An opener thrown back is remembered, so
 * that the closer the chain then sends for it is dropped too.
 */
function frameOf(f: Framer, event: Event, cursor: string | undefined, rethrow = false): string | Uint8Array | undefined {
  try {
    const frame = f.encode(event);
    // The cursor is the SSE event id (WHATWG HTML §9.2.6): what EventSource and our client send back as Last-Event-ID.
    return cursor !== undefined && !f.protobuf ? `id: ${cursor}\n${frame as string}` : frame;
  } catch (cause) {
    const type = (event as { type?: unknown } | null)?.type;
    const error = new AguiRxError(
      'INVALID_EVENT',
      `The ${typeof type === 'string' ? `${type} event` : 'event'} cannot be encoded: ${messageOf(cause) ?? 'unknown reason'}. Events must be plain JSON: convert BigInts to strings or numbers, break reference cycles and flatten values nested thousands deep.`,
    );
    if (rethrow) {
      if (typeof type === 'string' && closerOfOpener.has(type)) f.unsent = event;
      // A closer the chain counts as sent: it goes out bare (its id and lane only), so that what it closes is closed.
      const bare = typeof type === 'string' && pairEnds.has(type) ? bareCloser(event, pairEnds.get(type)!.idField) : undefined;
      const frame = bare === undefined ? undefined : encodes(f, bare);
      if (frame !== undefined) put(f, frame, bare!);
      throw error;
    }
    end(f, error);
    return undefined;
  }
}

/** A closer with only its type, its id and its lane (`subagentRunId`): what an END needs, without the fields that could not be encoded. */
function bareCloser(event: Event, idField: string): Event {
  const fields = event as unknown as Record<string, unknown>;
  const lane = fields.subagentRunId;
  return { type: event.type, [idField]: fields[idField], ...(typeof lane === 'string' ? { subagentRunId: lane } : {}) } as unknown as Event;
}

/** The frame of `event`, or undefined when it cannot be encoded (nothing ends). */
function encodes(f: Framer, event: Event): string | Uint8Array | undefined {
  try {
    return f.encode(event);
  } catch {
    return undefined;
  }
}

// The closer of each opener (the protocol table's), with the field that names what it opens.
const closerOfOpener: ReadonlyMap<string, { readonly end: string; readonly idField: string }> = new Map(entityKinds.map((kind) => [kind.start, { end: kind.end[0], idField: kind.idField }]));

/** Whether `event` closes the opener that could not be sent (see {@link frameOf}): then it is not sent either. */
function closesUnsent(unsent: Event, event: Event): boolean {
  const { end: closer, idField } = closerOfOpener.get(unsent.type)!;
  return event.type === closer && (event as unknown as Record<string, unknown>)[idField] === (unsent as unknown as Record<string, unknown>)[idField];
}

// Sends the held deltas as one event: the first's fields, the deltas joined, the last's cursor.
function releaseHeld(f: Framer): void {
  const held = f.held;
  if (held === undefined) return;
  f.held = undefined;
  const event = heldEvent(held);
  const whole = f.protobuf ? keepPairsWhole(f, event) : event;
  if (whole === undefined) return;
  const frame = frameOf(f, whole, held.cursor);
  if (frame !== undefined) put(f, frame, whole);
}

// The end of each message or call that streams deltas (the protocol table's), with its delta event and where its id is.
const pairEnds: ReadonlyMap<string, { readonly delta: string; readonly idField: string }> = new Map(
  entityKinds.filter((kind) => kind.content !== undefined).map((kind) => [kind.end[0], { delta: kind.content!, idField: kind.idField }]),
);
const pairDeltas: ReadonlyMap<string, string> = new Map([...pairEnds.values()].map(({ delta, idField }) => [delta, idField]));

/**
 * For protobuf, which carries strings as UTF-8 (no lone surrogate: the encoder writes U+FFFD): a
 * delta ending in the first half of a surrogate pair (a producer that slices text by UTF-16 units)
 * keeps that half for the next delta of its message or call, so that the pair is encoded whole, as
 * SSE's JSON carries it in two frames. Returns the event to send, `undefined` when nothing is left
 * of it; a half still kept when its message or call ends goes out alone before the end (as U+FFFD:
 * no later delta can complete it).
 */
// Whether `text` ends in the first half of a surrogate pair (U+D800–U+DBFF).
function endsInFirstHalf(text: string): boolean {
  const last = text.charCodeAt(text.length - 1);
  return last >= 0xd800 && last <= 0xdbff;
}

function keepPairsWhole(f: Framer, event: Event): Event | undefined {
  const fields = event as unknown as Record<string, unknown>;
  const deltaId = pairDeltas.get(event.type);
  if (deltaId !== undefined) {
    const delta = fields.delta;
    if (typeof delta !== 'string') return event;
    // Nearly every delta: no half kept, none left at its end; no key made.
    if (f.halfPairs === undefined && !endsInFirstHalf(delta)) return event;
    const key = `${deltaId}:${String(fields[deltaId])}`;
    const kept = f.halfPairs?.get(key);
    if (kept !== undefined) f.halfPairs!.delete(key);
    const joined = kept === undefined ? delta : kept + delta;
    if (!endsInFirstHalf(joined)) return joined === delta ? event : ({ ...event, delta: joined } as Event);
    (f.halfPairs ??= new Map()).set(key, joined.slice(-1));
    return joined.length === 1 ? undefined : ({ ...event, delta: joined.slice(0, -1) } as Event);
  }
  const end = pairEnds.get(event.type);
  if (end !== undefined && f.halfPairs !== undefined) {
    const key = `${end.idField}:${String(fields[end.idField])}`;
    const kept = f.halfPairs.get(key);
    if (kept !== undefined) {
      f.halfPairs.delete(key);
      const alone = { type: end.delta, [end.idField]: fields[end.idField], delta: kept } as unknown as Event;
      const frame = frameOf(f, alone, undefined);
      if (frame !== undefined) put(f, frame, alone);
    }
  }
  return event;
}

// The one event the held deltas make.
function heldEvent({ first, parts }: HeldDeltas): Event {
  if (parts.length > 1) (first as { delta: string }).delta = parts.join('');
  return first;
}

function end(f: Framer, error?: unknown): void {
  if (f.ended) return;
  // What this tick produced goes before the end (or the RUN_ERROR).
  releaseHeld(f);
  writeBatch(f);
  if (f.ended) return;
  f.ended = true;
  // Its own unsubscribe stops the heartbeat (tearDown), then the source.
  safeUnsubscribe(f);
  if (error !== undefined && !f.terminal) {
    const runError: Event = { type: EventType.RUN_ERROR, message: messageOf(error) ?? 'The event stream failed.' };
    f.sink.write(f.encode(runError), runError);
    f.options.onFailure?.(error);
  }
  f.sink.end();
}

// Unsubscribed from outside (the client went away, or the sink stopped the run from inside
// `write`): what this tick produced still goes to the sink (it drops it if the client left),
// nothing more may be sent, and the heartbeat must not re-arm after this teardown.
function tearDown(f: Framer): void {
  if (!f.ended) {
    f.ended = true;
    const rest = f.held;
    f.held = undefined;
    if (rest !== undefined) {
      const event = heldEvent(rest);
      const frame = frameOf(f, event, rest.cursor);
      if (typeof frame === 'string') f.batch += frame;
      else if (frame !== undefined) f.sink.write(frame, event);
      f.batchEvent = event;
    }
    writeBatch(f);
  }
  stopHeartbeat(f);
}

function framerNext(f: Framer, item: Event | BrokerFrame): void {
  if (f.framed) (f.options as FramedOptions).onFrame?.(item as BrokerFrame);
  if (f.ended) return;
  const event = f.framed ? (item as BrokerFrame).event : (item as Event);
  const cursor = f.framed ? (item as BrokerFrame).cursor : undefined;
  if (f.beats) f.lastFrameAt = performance.now();
  const held = f.held;
  if (held !== undefined) {
    // Joined, the deltas stay within BATCH_CHARS, or the one that came alone: coalescing never makes
    // a frame longer than the producer's own (a client bounds what it buffers per frame).
    const delta = (event as { delta?: unknown }).delta as string;
    if (joins(held.first, event) && held.chars + delta.length <= BATCH_CHARS) {
      held.parts.push(delta);
      held.chars += delta.length;
      held.cursor = cursor;
      // A long run of deltas goes on in pieces, so that what is held stays small (in count too: empty deltas add no chars).
      if (held.chars >= BATCH_CHARS || held.parts.length >= BATCH_CHARS) releaseHeld(f);
      return;
    }
    releaseHeld(f);
    if (f.ended) return;
  }
  // The tick's first frame goes at once, unless the sink is busy: a delta that would wait anyway
  // is held for the ones of its id that follow (in this tick, or until the sink takes what waits).
  // One of BATCH_CHARS or more would go alone anyway.
  const delta: unknown = (event as { delta?: unknown }).delta;
  if (
    f.coalesce &&
    isTokenEventType(event.type) &&
    typeof delta === 'string' &&
    delta.length < BATCH_CHARS &&
    (f.scheduled || f.awaitingReady || f.sink.busy?.() === true || inCorkedTick(f))
  ) {
    // Its fields as they are now: what is sent is what came, whatever the producer does with its object after.
    const first = { ...event } as Event;
    // Held, it is encoded later (at the tick's end, in a timer), where the error could not go back
    // to the source: one that cannot be encoded goes the direct way now. The deltas that join it
    // differ only in their text, which always encodes.
    if (f.rethrows && encodes(f, first) === undefined) return sendNow(f, event, cursor);
    f.held = { first, parts: [delta], chars: delta.length, cursor };
    return schedule(f);
  }
  sendNow(f, event, cursor);
}

// Frames one event and queues it: the way of every event that is not held.
function sendNow(f: Framer, event: Event, cursor: string | undefined): void {
  if (f.unsent !== undefined && closesUnsent(f.unsent, event)) return;
  const whole = f.protobuf ? keepPairsWhole(f, event) : event;
  if (whole === undefined) return;
  const terminal = event.type === EventType.RUN_FINISHED || event.type === EventType.RUN_ERROR;
  // A terminal event is the chain's last: nothing would come back after it.
  const frame = frameOf(f, whole, cursor, f.rethrows && !terminal);
  if (frame === undefined) return;
  if (terminal) f.terminal = true;
  put(f, frame, whole);
}
