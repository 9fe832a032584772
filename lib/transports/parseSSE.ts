import type { OperatorFunction } from 'rxjs';
import { warnDiagnostic, type DiagnosticHandler } from '../protocol/diagnostics.js';
import { AguiRxError, describeValue } from '../protocol/errors.js';
import { createOperator } from '../protocol/createOperator.js';

/** One server-sent event, as the WHATWG parsing rules dispatch it. */
export interface SSEMessage {
  /** The `event:` field; absent for the default type (`message`). */
  event?: string | undefined;
  /** The `data:` lines of the event, joined with `\n`; kept verbatim (trailing spaces included). */
  data: string;
  /** The stream's last event id at dispatch (the browser's `lastEventId`); absent while none was set. */
  id?: string | undefined;
  /**
   * `true` when this event's own block had an `id:` line that set the last event id, so that `id`
   * is this event's rather than carried over (an empty `id:` line clears it: `id` is then absent).
   * Only with the `flagOwnIds` option; omitted otherwise.
   */
  ownId?: true | undefined;
}

/** Options of {@link parseSSE}. */
export interface ParseSSEOptions {
  /** Told when the stream ends in the middle of an event, which is then discarded. Default: `console.warn`. */
  onDiagnostic?: DiagnosticHandler | undefined;
  /** Mark each message whose own block set the id with `ownId: true` (a resuming reader must tell them apart). Default: false. */
  flagOwnIds?: boolean | undefined;
}

const LF = 10;
const CR = 13;

/**
 * Parses a `text/event-stream` body, arriving in chunks of any size, into its messages.
 *
 * The chunks are the network reads of a response body: text, or UTF-8 bytes (a `Uint8Array`,
 * a Node `Buffer`), decoded as a stream so that a character split across two reads survives.
 *
 * ```text
 * source:  --a-----b------c--|     a = 'data: {"x"', b = ':1}\n\nda', c = 'ta: [DONE]\n\n'
 * output:  --------m------d--|     m = { data: '{"x":1}' }, d = { data: '[DONE]' }
 * ```
 *
 * Rules (WHATWG HTML, "Server-sent events", "Interpreting an event stream"):
 * 1. One leading byte order mark (U+FEFF) is skipped. Lines end with CRLF, LF or CR, also when
 *    the CR and the LF arrive in different chunks.
 * 2. A line starting with `:` is a comment (a heartbeat) and is skipped. Otherwise the field name
 *    is the text before the first `:` (the whole line when there is none) and the value what
 *    follows it, without one leading space.
 * 3. `data` appends its value and a `\n` to the data buffer; `event` sets the event type; `id`
 *    sets the last event id (unless the value holds U+0000); `retry` and unknown fields are
 *    ignored (this parser never reconnects).
 * 4. A blank line dispatches `{ event?, data, id? }` with the final `\n` of the data removed, then
 *    clears data and event type. The id carries over to later events until an `id:` line changes
 *    it; an empty `id:` clears it. A block with no `data:` line dispatches nothing. With
 *    `flagOwnIds`, a message whose own block had an (accepted) `id:` line also has `ownId: true`.
 * 5. Values are kept verbatim: a consumer trims or `JSON.parse`s `data` (JSON allows the trailing
 *    spaces some providers send).
 * 6. When the source completes, an event that is missing its closing blank line is discarded,
 *    as the specification says, and reported through `onDiagnostic`.
 * 7. A chunk that is neither a string nor bytes is an `INVALID_EVENT` error.
 *
 * ## Example
 *
 * ```ts
 * of('event: delta\ndata: {"n":', '1}\r\n\r\n: ping\n\ndata: [DONE]\n\n')
 *   .pipe(parseSSE())
 *   .subscribe((message) => console.log(JSON.stringify(message)));
 * // results: {"event":"delta","data":"{\"n\":1}"}, {"data":"[DONE]"}
 * ```
 *
 * @param options Diagnostics handler for an event cut off by the end of the stream; `flagOwnIds`.
 * @return A function that returns an Observable of the stream's messages, in order.
 */
export function parseSSE(options: ParseSSEOptions = {}): OperatorFunction<string | Uint8Array, SSEMessage> {
  const diagnose = options.onDiagnostic ?? warnDiagnostic;
  const flagOwnIds = options.flagOwnIds === true;
  return createOperator<string | Uint8Array, SSEMessage>((subscriber) => {
    // Created at the first byte chunk; keeps an incomplete UTF-8 sequence until the next one.
    let decoder: TextDecoder | undefined;
    // Whether any text was read yet: only the very first character may be a BOM.
    let started = false;
    // The start of a line whose end has not arrived yet.
    let partial = '';
    // The last chunk ended with CR: an LF opening the next chunk ends no second line.
    let afterCR = false;
    // The event being read.
    let data = '';
    let eventType = '';
    // Survives dispatch, like the browser's lastEventId.
    let lastEventId = '';
    // The block being read had an `id:` line of its own.
    let ownId = false;

    const dispatch = () => {
      if (data === '') {
        eventType = '';
        ownId = false;
        return;
      }
      // Every data line added a '\n': the last one is dropped.
      const text = data.slice(0, -1);
      // Optional fields are omitted, never undefined-valued.
      const message: SSEMessage = eventType === '' ? { data: text } : { event: eventType, data: text };
      if (lastEventId !== '') message.id = lastEventId;
      if (flagOwnIds && ownId) message.ownId = true;
      data = '';
      eventType = '';
      ownId = false;
      subscriber.next(message);
    };

    const processLine = (line: string) => {
      if (line === '') return dispatch();
      const colon = line.indexOf(':');
      if (colon === 0) return;
      const field = colon === -1 ? line : line.slice(0, colon);
      let value = colon === -1 ? '' : line.slice(colon + 1);
      if (value.charCodeAt(0) === 0x20) value = value.slice(1);
      switch (field) {
        case 'data':
          data += value + '\n';
          break;
        case 'event':
          eventType = value;
          break;
        case 'id':
          if (!value.includes('\0')) {
            lastEventId = value;
            ownId = true;
          }
          break;
      }
    };

    const read = (text: string) => {
      if (!started && text !== '') {
        started = true;
        if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
      }
      let from = 0;
      if (afterCR && text !== '') {
        afterCR = false;
        if (text.charCodeAt(0) === LF) from = 1;
      }
      for (let i = from; i < text.length; i++) {
        const code = text.charCodeAt(i);
        if (code !== LF && code !== CR) continue;
        const line = partial + text.slice(from, i);
        partial = '';
        if (code === CR) {
          if (i + 1 === text.length) afterCR = true;
          else if (text.charCodeAt(i + 1) === LF) i++;
        }
        from = i + 1;
        processLine(line);
        // A subscriber that has what it needs (take) stops the rest of the chunk.
        if (subscriber.closed) return;
      }
      partial += text.slice(from);
    };

    return {
      next(chunk) {
        if (typeof chunk === 'string') {
          // Bytes left incomplete before a string chunk cannot be completed by it.
          if (decoder !== undefined) read(decoder.decode());
          return read(chunk);
        }
        if (ArrayBuffer.isView(chunk)) {
          // The BOM is skipped by `read`, so that text and byte chunks are treated alike.
          decoder ??= new TextDecoder('utf-8', { ignoreBOM: true });
          return read(decoder.decode(chunk, { stream: true }));
        }
        throw new AguiRxError(
          'INVALID_EVENT',
          `parseSSE received ${describeValue(chunk)} where a chunk of an event stream was expected. Pass the response body's chunks: strings or Uint8Array bytes (for a fetch Response, response.body; for Node, the IncomingMessage).`,
        );
      },
      complete() {
        // A split UTF-8 sequence at the very end becomes U+FFFD; it cannot end a line.
        if (decoder !== undefined) read(decoder.decode());
        if (data !== '' || (partial !== '' && !partial.startsWith(':'))) {
          const pending = partial === '' ? data : `${data}${partial}`;
          diagnose({
            message: `Discarded an incomplete server-sent event at the end of the stream (${describeValue(pending)}): the stream ended before the blank line that dispatches it, and the SSE rules (which EventSource follows) drop such an event. Either the server (or a proxy) cut the response short, or the stream was saved without its last blank line, as SDK recordings often are: end every event with a blank line.`,
            event: pending,
          });
        }
        subscriber.complete();
      },
    };
  });
}
