import { EventType, type Event } from '@ag-ui/core';
import { AGUI_MEDIA_TYPE, EventEncoder } from '@ag-ui/encoder';
import type { Observable, Subscription } from 'rxjs';

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

/**
 * An encoder for a request's `Accept` header. Protobuf only when the header names the AG-UI
 * protobuf media type (`@ag-ui/encoder` then weighs q-values); an any-type wildcard, as `fetch` and curl
 * send, gets SSE, the binding every client reads.
 */
function encoderFor(accept: string | undefined): EventEncoder {
  return new EventEncoder({ accept: accept !== undefined && accept.toLowerCase().includes(AGUI_MEDIA_TYPE) ? accept : undefined });
}

/** The `Content-Type` of the stream for a request's `Accept` header: `text/event-stream` or the AG-UI protobuf media type. */
export function contentTypeFor(accept: string | undefined): string {
  return encoderFor(accept).getContentType();
}

/** Encodes one event as a frame for a request's `Accept` header: SSE text, or a length-prefixed protobuf message. */
export function frameEncoderFor(accept: string | undefined): (event: Event) => string | Uint8Array {
  const encoder = encoderFor(accept);
  return encoder.getContentType() === 'text/event-stream' ? (event) => encoder.encodeSSE(event) : (event) => encoder.encodeProtobuf(event);
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
  heartbeatMs?: number;
  /** The request's `Accept` header: `application/vnd.ag-ui.event+proto` selects protobuf frames. */
  accept?: string;
}

/**
 * Encodes `events$` into `sink` (SSE text, or protobuf through `@ag-ui/encoder` when `accept` asks
 * for it), with a heartbeat comment while idle. If `events$` errors before a terminal event, a
 * RUN_ERROR frame ends the stream, so the client is never left waiting on a run that died.
 */
export function pipeFrames(events$: Observable<Event>, sink: FrameSink, options: FrameOptions = {}): Subscription {
  const protobuf = contentTypeFor(options.accept) !== 'text/event-stream';
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
    if (heartbeatMs <= 0 || ended) return;
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
    subscription?.unsubscribe();
    if (error !== undefined && !terminal) {
      const message = (error as { message?: unknown } | null)?.message;
      const runError: Event = { type: EventType.RUN_ERROR, message: typeof message === 'string' && message !== '' ? message : 'The event stream failed.' };
      sink.write(encode(runError), runError);
    }
    sink.end();
  };
  let subscription: Subscription | undefined;
  subscription = events$.subscribe({
    next(event) {
      if (ended) return;
      let frame: string | Uint8Array;
      try {
        frame = encode(event);
      } catch (error) {
        // An event JSON or protobuf cannot carry (a BigInt in rawEvent): end the run readably.
        return end(error);
      }
      if (event.type === EventType.RUN_FINISHED || event.type === EventType.RUN_ERROR) terminal = true;
      sink.write(frame, event);
      armHeartbeat();
    },
    error: (error) => end(error ?? new Error('The event stream failed.')),
    complete: () => end(),
  });
  if (ended) subscription.unsubscribe();
  else armHeartbeat();
  subscription.add(stopHeartbeat);
  return subscription;
}
