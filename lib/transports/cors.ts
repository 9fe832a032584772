/**
 * CORS for the handlers, by hand: the `cors` package is Express-style middleware for node:http only,
 * and the handlers answer Web `Request`s too; what they need (origin check, preflight, a few
 * headers: WHATWG Fetch, "CORS protocol") fits in this file for both.
 */

/** The `cors` option of the handlers. */
export interface CorsOptions {
  /**
   * The origins allowed to call: one (`'https://app.example.com'`), a list, a RegExp tested against
   * the `Origin` header, a function `(origin) => boolean` (may be async), or `true` for any origin.
   * The allowed origin is echoed in `Access-Control-Allow-Origin` (with `Vary: Origin`).
   */
  origins: string | readonly string[] | RegExp | ((origin: string) => boolean | Promise<boolean>) | true;
  /** Allow cookies and `Authorization` from the browser (`Access-Control-Allow-Credentials: true`). Default: false. */
  credentials?: boolean | undefined;
  /** Request headers a browser may send. Default: `Content-Type`, `Authorization`, `Accept`, `Last-Event-ID`. */
  allowedHeaders?: readonly string[] | undefined;
  /** Response headers a browser script may read. Default: none. */
  exposedHeaders?: readonly string[] | undefined;
  /** How long a browser may cache a preflight's answer, in seconds. Default: 600. */
  maxAge?: number | undefined;
}

export const DEFAULT_ALLOWED_HEADERS = ['Content-Type', 'Authorization', 'Accept', 'Last-Event-ID'] as const;

/** What CORS makes of a request: the headers to add to its answer, and whether it is a preflight to answer 204 at once. */
export interface CorsAnswer {
  readonly headers: Record<string, string>;
  readonly preflight: boolean;
}

/**
 * The CORS headers for a request (none for a disallowed origin or a request without `Origin`), and
 * whether it is a preflight (`OPTIONS` with `Access-Control-Request-Method`). `methods`: what the
 * handler serves (`POST`, or `GET, POST` with a run broker).
 * @throws RangeError at creation when `origins` or `maxAge` is not one of the forms it takes.
 */
export function createCors(cors: CorsOptions, methods: string): (method: string | undefined, header: (name: string) => string | undefined) => Promise<CorsAnswer> {
  const { origins } = cors;
  if (!(origins === true || typeof origins === 'string' || Array.isArray(origins) || origins instanceof RegExp || typeof origins === 'function')) {
    throw new RangeError(`'cors.origins' must be an origin, a list of them, a RegExp, a function or true, not ${String(origins)}.`);
  }
  const maxAge = cors.maxAge ?? 600;
  if (typeof maxAge !== 'number' || !(maxAge >= 0)) throw new RangeError(`'cors.maxAge' must be a number of seconds ≥ 0, not ${String(maxAge)}.`);
  const allows = async (origin: string): Promise<boolean> => {
    if (origins === true) return true;
    if (typeof origins === 'string') return origin === origins;
    if (origins instanceof RegExp) {
      origins.lastIndex = 0;
      return origins.test(origin);
    }
    if (typeof origins === 'function') return (await origins(origin)) === true;
    return (origins as readonly string[]).includes(origin);
  };
  const allowedHeaders = (cors.allowedHeaders ?? DEFAULT_ALLOWED_HEADERS).join(', ');
  const exposedHeaders = (cors.exposedHeaders ?? []).join(', ');
  return async (method, header) => {
    const origin = header('origin');
    const preflight = method === 'OPTIONS' && header('access-control-request-method') !== undefined;
    // Caches must not serve one origin's answer to another.
    const headers: Record<string, string> = { Vary: 'Origin' };
    // A check that throws allows nothing: the request is served without CORS headers, which the browser refuses.
    if (origin === undefined || !(await allows(origin).catch(() => false))) return { headers, preflight };
    headers['Access-Control-Allow-Origin'] = origin;
    if (cors.credentials === true) headers['Access-Control-Allow-Credentials'] = 'true';
    if (preflight) {
      headers['Access-Control-Allow-Methods'] = methods;
      headers['Access-Control-Allow-Headers'] = allowedHeaders;
      headers['Access-Control-Max-Age'] = String(Math.floor(maxAge));
    } else if (exposedHeaders !== '') {
      headers['Access-Control-Expose-Headers'] = exposedHeaders;
    }
    return { headers, preflight };
  };
}
