import type { RedisClientType } from 'redis';
import { AguiRxError } from '../../protocol/errors.js';

/** A node-redis client, whatever modules, scripts or RESP version it was created with. */
export type RedisClient = RedisClientType<any, any, any, any, any>;

/** `url` with its password replaced by `***`, for messages and logs (never print a credential). */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password !== '') parsed.password = '***';
    return parsed.toString();
  } catch {
    return '(an unparsable Redis URL)';
  }
}

/** Where a client connects, for messages: its URL without password, or host:port. */
export function describeClient(client: RedisClient): string {
  const options = client.options as { url?: string; socket?: { host?: string; port?: number; path?: string } } | undefined;
  if (options?.url !== undefined) return redactUrl(options.url);
  const socket = options?.socket;
  if (socket?.path !== undefined) return `redis+unix://${socket.path}`;
  return `redis://${socket?.host ?? 'localhost'}:${socket?.port ?? 6379}`;
}

/**
 * What went wrong, for a message: the error's message, else its code or name (a socket error may
 * have an empty message); empty when there is nothing to say.
 */
function reasonOf(cause: unknown): string {
  if (!(cause instanceof Error)) return cause === undefined || cause === null ? '' : String(cause);
  const code = (cause as { code?: unknown }).code;
  return cause.message || (typeof code === 'string' && code !== '' ? code : '') || (cause.name !== 'Error' ? cause.name : '');
}

/** The error of a store whose Redis cannot be reached (or does not answer), naming where it looked, why when known, and what to do. */
export function storeUnavailable(where: string, cause: unknown): AguiRxError {
  const reason = reasonOf(cause);
  return new AguiRxError(
    'STORE_UNAVAILABLE',
    `The Redis run store cannot reach Redis at ${where}${reason === '' ? '' : ` (${reason})`}: check that Redis runs there and answers, and that the URL (e.g. REDIS_URL) is right.`,
  );
}
