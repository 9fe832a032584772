/**
 * The `authorize` hook of the run-broker examples: a session cookie decides who may attach to,
 * resume, connect to and stop a thread's runs.
 *
 * The app mints thread ids as `<userId>:<random>` for the signed-in user; a request may act on a
 * thread when its `session` cookie names a signed-in user whose id starts the thread's id. The
 * session is the credential: a thread id, run id or cursor only names what is asked for. A cookie
 * rather than an `Authorization` header because a browser's `EventSource` can send no header.
 * Replace `sessions` with your session store.
 */
import type { IncomingMessage } from 'node:http';
import type { AuthorizeRequest } from 'agui-rx';

/** Signed-in sessions by cookie value (your session store). */
export const sessions = new Map<string, { userId: string }>([['demo-session', { userId: 'alice' }]]);

/** A request header, from a node:http `IncomingMessage` (Express, Fastify) or a Web `Request` (Hono, Next.js, Bun, Deno). */
function headerOf(request: unknown, name: string): string | undefined {
  if (request instanceof Request) return request.headers.get(name) ?? undefined;
  const value = (request as IncomingMessage).headers[name];
  return Array.isArray(value) ? value.join('; ') : value;
}

/** The session a request's `session` cookie names, if it is signed in. */
export function sessionOf(request: unknown): { userId: string } | undefined {
  const id = /(?:^|;\s*)session=([^;]*)/.exec(headerOf(request, 'cookie') ?? '')?.[1];
  return id === undefined ? undefined : sessions.get(decodeURIComponent(id));
}

/** The broker's `authorize` hook: the signed-in owner of the thread may do anything with its runs. */
export function authorizeBySession({ request, threadId }: AuthorizeRequest): boolean {
  const session = sessionOf(request);
  return session !== undefined && threadId.startsWith(`${session.userId}:`);
}
