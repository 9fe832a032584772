import { EventType, type Event } from '@ag-ui/core';
import { AGUI_MEDIA_TYPE, EventEncoder } from '@ag-ui/encoder';
import Negotiator from 'negotiator';
import type { Observable, Subscription } from 'rxjs';
import { safeUnsubscribe } from '../protocol/createOperator.js';
import type { BrokerFrame } from './brokerRoutes.js';

/** The headers of an AG-UI event stream response (`Content-Type` depends on what the client accepts). */
export function streamHeaders(contentType: string): Record<string, string> {
  return {
    'Content-Type': contentType,
    'Cache-Control': 'no-cache',
    Connection: 'keep-alive',
    // Tells nginx and similar proxies not to buffer the stream.
    'X-Accel-Buffering': 'no',
  };
}

/** The SSE comment sent while the stream is idle, so that proxies and browsers keep the connection open. */
export const HEARTBEAT = ': ping\n\n';

const SSE_MEDIA_TYPE = 'text/event-stream';

/** The longest delay `setTimeout` takes (a signed 32-bit ms count); a longer one fires at once. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * The `Content-Type` of the stream for a request's `Accept` header (RFC 9110 §12.5.1, through
 * `negotiator`): `application/vnd.ag-ui.event+proto` when the client prefers it to
 * `text/event-stream`, SSE otherwise: on a tie, for a wildcard (as `fetch` and curl send) and
 * when the header is absent, since SSE is the binding every client reads.
 */
export function contentTypeFor(accept: string | undefined): string {
  // Not `@ag-ui/encoder`'s negotiation: it picks protobuf whenever protobuf is acceptable at all,
  // so a bare wildcard would get binary frames.
  if (accept === undefined) return SSE_MEDIA_TYPE;
  // SSE refused outright (q=0) and protobuf not: protobuf, rather than the one type the client refused.
  if (refuses(mediaRangesOf(accept), SSE_MEDIA_TYPE) && !refuses(mediaRangesOf(accept), AGUI_MEDIA_TYPE)) return AGUI_MEDIA_TYPE;
  if (!accept.toLowerCase().includes(AGUI_MEDIA_TYPE)) return SSE_MEDIA_TYPE;
  const ranges = mediaRangesOf(accept).map(({ range, q }) => (q === undefined ? range : `${range};q=${q}`));
  return new Negotiator({ headers: { accept: ranges.join(', ') } }).mediaType([SSE_MEDIA_TYPE, AGUI_MEDIA_TYPE]) === AGUI_MEDIA_TYPE ? AGUI_MEDIA_TYPE : SSE_MEDIA_TYPE;
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
  if (accept === undefined) return false;
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
  const encoder = new EventEncoder();
  return contentTypeFor(accept) === SSE_MEDIA_TYPE ? (event) => encoder.encodeSSE(event) : (event) => encoder.encodeProtobuf(event);
}

/** Where frames go: a Web stream controller or a Node response. */
export interface FrameSink {
  /** Writes one frame: SSE text, or a length-prefixed protobuf message; `event` is absent for a heartbeat. */
  write(frame: string | Uint8Array, event?: Event): void;
  /** Ends the stream after the last frame. */
  end(): void;
}

/** Options shared by the transports. */
export interface FrameOptions {
  /** Idle time after which an SSE comment line is sent, in ms (0 turns it off; protobuf has none). Default: 15000. */
  heartbeatMs?: number | undefined;
  /** The request's `Accept` header: `application/vnd.ag-ui.event+proto` selects protobuf frames. */
  accept?: string | undefined;
  /**
   * Told when the stream ends its run with an error of its own, once: `events$` errored before its
   * terminal event (the error), the client stalled (`code: "SLOW_CLIENT"`) or too much waited for
   * it (`code: "SEND_BUFFER_FULL"`). The handlers report these to their `onError`. Default: none.
   */
  onFailure?: ((error: unknown) => void) | undefined;
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

/**
 * Encodes `events$` into `sink` (SSE text, or protobuf through `@ag-ui/encoder` when `accept` asks
 * for it), with a heartbeat comment while idle. If `events$` errors before a terminal event, a
 * RUN_ERROR frame ends the stream, so the client is never left waiting on a run that died.
 */
export function pipeFrames(events$: Observable<Event>, sink: FrameSink, options?: FrameOptions): Subscription;
/**
 * The same for a brokered stream: each frame's `cursor` goes out as its SSE `id:` line (protobuf
 * frames have no place for one and carry none).
 */
export function pipeFrames(frames$: Observable<BrokerFrame>, sink: FrameSink, options: FrameOptions, framed: true): Subscription;
export function pipeFrames(items$: Observable<Event | BrokerFrame>, sink: FrameSink, options: FrameOptions = {}, framed = false): Subscription {
  const protobuf = contentTypeFor(options.accept) !== SSE_MEDIA_TYPE;
  const encode = frameEncoderFor(options.accept);
  const heartbeatMs = protobuf ? 0 : (options.heartbeatMs ?? 15_000);
  let timer: ReturnType<typeof setTimeout> | undefined;
  // Whether the run's terminal event went out, and whether the stream is over.
  let terminal = false;
  let ended = false;
  const stopHeartbeat = () => {
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
  };
  const armHeartbeat = () => {
    // 0, Infinity (or a value no timer can hold) means none: a timer clamps what it cannot hold to 1 ms.
    if (!(heartbeatMs > 0 && heartbeatMs <= MAX_TIMER_MS) || ended) return;
    stopHeartbeat();
    timer = setTimeout(() => {
      sink.write(HEARTBEAT);
      armHeartbeat();
    }, heartbeatMs);
  };
  const end = (error?: unknown) => {
    if (ended) return;
    ended = true;
    stopHeartbeat();
    safeUnsubscribe(subscription);
    if (error !== undefined && !terminal) {
      const runError: Event = { type: EventType.RUN_ERROR, message: messageOf(error) ?? 'The event stream failed.' };
      sink.write(encode(runError), runError);
      options.onFailure?.(error);
    }
    sink.end();
  };
  let subscription: Subscription | undefined;
  subscription = items$.subscribe({
    next(item) {
      if (ended) return;
      const event = framed ? (item as BrokerFrame).event : (item as Event);
      let frame: string | Uint8Array;
      try {
        frame = encode(event);
        const cursor = framed ? (item as BrokerFrame).cursor : undefined;
        // The cursor is the SSE event id (WHATWG HTML §9.2.6): what EventSource and our client send back as Last-Event-ID.
        if (cursor !== undefined && !protobuf) frame = `id: ${cursor}\n${frame as string}`;
      } catch (error) {
        // An event JSON or protobuf cannot carry (a BigInt in rawEvent): end the run readably,
        // with a message that names the event (the encoder's alone does not).
        const type = (event as { type?: unknown } | null)?.type;
        return end(
          new Error(
            `The ${typeof type === 'string' ? `${type} event` : 'event'} cannot be encoded: ${messageOf(error) ?? 'unknown reason'}. Events must be plain JSON: convert BigInts to strings or numbers, break reference cycles and flatten values nested thousands deep.`,
          ),
        );
      }
      if (event.type === EventType.RUN_FINISHED || event.type === EventType.RUN_ERROR) terminal = true;
      sink.write(frame, event);
      armHeartbeat();
    },
    error: (error) => end(error ?? new Error('The event stream failed.')),
    complete: () => end(),
  });
  if (ended) safeUnsubscribe(subscription);
  else armHeartbeat();
  // Unsubscribed from outside (the client went away, or the sink stopped the run from inside
  // `write`): nothing more may be sent, and the heartbeat must not re-arm after this teardown.
  subscription.add(() => {
    ended = true;
    stopHeartbeat();
  });
  return subscription;
}
