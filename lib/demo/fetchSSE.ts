import { Observable } from 'rxjs';
import { parseSSE, type SSEMessage } from '../adapters/index.js';
import { AguiRxError } from '../protocol/errors.js';

/** What {@link fetchSSE} sends, and what its errors tell the user to check. */
export interface FetchSSERequest {
  url: string;
  headers: Record<string, string>;
  /** The JSON body, as text. */
  body: string;
  /** The `fetch` to use (a fake one in specs). Default: the global `fetch`. */
  fetch?: typeof fetch;
  /** What to check when the server cannot be reached, e.g. `Check the network.` */
  unreachableHint: string;
  /** What to check after an HTTP error status. */
  httpErrorHint: (status: number) => string;
}

/** The first characters of a body, flattened, for an error message. */
export function excerpt(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > 300 ? `${flat.slice(0, 300)}…` : flat;
}

/**
 * POSTs a streaming request with plain `fetch` and emits the answer's server-sent events
 * (`parseSSE()`). Cold: each subscription is one request; unsubscribing aborts it
 * (`AbortController.abort()`) and cancels the body's reader.
 *
 * Errors: a failed connection is `MODEL_UNREACHABLE`, a non-2xx answer `MODEL_HTTP_ERROR` (with
 * the status and the start of the body), each followed by its hint.
 *
 * @param request The URL, headers, body, `fetch` and the hints of the error messages.
 * @return The server-sent events of the answer.
 */
export function fetchSSE(request: FetchSSERequest): Observable<SSEMessage> {
  const { url } = request;
  return new Observable<Uint8Array>((subscriber) => {
    const controller = new AbortController();
    const fetchImpl = request.fetch ?? fetch;
    let reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
    (async () => {
      let response: Response;
      try {
        response = await fetchImpl(url, { method: 'POST', headers: request.headers, body: request.body, signal: controller.signal });
      } catch (error) {
        const cause = (error as { cause?: { message?: string } }).cause?.message;
        throw new AguiRxError('MODEL_UNREACHABLE', `Could not reach ${url}: ${(error as Error).message}${cause ? ` (${cause})` : ''}. ${request.unreachableHint}`);
      }
      if (!response.ok) {
        const text = await response.text().catch(() => '');
        throw new AguiRxError(
          'MODEL_HTTP_ERROR',
          `${url} answered HTTP ${response.status}${response.statusText ? ` ${response.statusText}` : ''}: ${excerpt(text) || 'no body'}. ${request.httpErrorHint(response.status)}`,
        );
      }
      if (response.body === null) throw new AguiRxError('MODEL_HTTP_ERROR', `${url} answered without a body; a streaming request needs one.`);
      reader = response.body.getReader();
      for (;;) {
        const { done, value } = await reader.read();
        if (done || controller.signal.aborted) break;
        subscriber.next(value);
      }
      subscriber.complete();
    })().catch((error: unknown) => {
      // After unsubscription nobody listens: the abort's own error is expected and dropped.
      if (!controller.signal.aborted) subscriber.error(error);
    });
    return () => {
      controller.abort();
      reader?.cancel().catch(() => undefined);
    };
  }).pipe(parseSSE());
}
