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

/** The error of a store whose Redis cannot be reached, naming where it looked and what to do. */
export function storeUnavailable(where: string, cause: unknown): AguiRxError {
  const reason = cause instanceof Error ? cause.message : String(cause);
  return new AguiRxError(
    'STORE_UNAVAILABLE',
    `The Redis run store cannot reach Redis at ${where} (${reason}): check that Redis runs there and that the URL (e.g. REDIS_URL) is right.`,
  );
}
