/**
 * The most bytes a thread or run id may take in a route's path, percent-encoded as the routes
 * carry it (`encodeURIComponent`, UTF-8): two such ids, the base path and the route's words fit
 * in one request line with room to spare within Node's default header limit (16 KiB for the
 * request line and every header, cookies and auth included).
 */
export const MAX_ID_BYTES = 1024;

/**
 * Why the broker's routes (`GET <base>/threads/<threadId>/runs/<runId>/events`, `…/stop`) could not
 * carry `id` as a path segment, or undefined when they can: `.` and `..` are dot segments, which
 * URL parsers resolve away (`%2e` too), and an id longer than {@link MAX_ID_BYTES} encoded would
 * make a request line the server refuses (431). `id` holds whole characters (no lone surrogate).
 */
export function unroutableReason(id: string): string | undefined {
  if (id === '.' || id === '..') return 'is a dot segment, which URLs resolve away (as they do `%2e`)';
  const bytes = encodeURIComponent(id).length;
  if (bytes > MAX_ID_BYTES) return `takes ${bytes} bytes in a URL path (percent-encoded), over the ${MAX_ID_BYTES} the routes carry`;
  return undefined;
}
