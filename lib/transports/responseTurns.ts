import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/**
 * Runs `serve` once `res` owns its connection, or never when the connection closes first.
 *
 * HTTP/1.1 pipelining (RFC 9112 §9.3.2): a client may send several requests on one connection
 * without waiting, and the server answers them in order. Node calls the request handler for each at
 * once, but gives a pipelined response its socket only when the one before it finished
 * (`ServerResponse.assignSocket`, which emits `'socket'`). Started at once, every pipelined request
 * would run its agent concurrently and buffer its whole stream in memory behind the first one.
 *
 * Rules:
 * 1. A response that owns its socket (every request that is not pipelined) is served at once, synchronously.
 * 2. A waiting response is served when Node assigns it the socket (its `'socket'` event), in order.
 * 3. When the connection closes while responses wait, none of them is ever served, and what they hold
 *    (`serve` and everything it closes over) is released. A client's FIN counts as closing when Node
 *    then ends the connection (its default, `httpAllowHalfOpen: false`): no waiting response could be written.
 * 4. One `'close'` and one `'end'` listener per connection, whatever the number of waiting responses.
 *
 * Waiting responses write nothing (not even a refusal), so Node's count of data queued for them stays
 * at zero and it never stops reading the connection on their account: the client's FIN or reset is
 * noticed while they wait, with or without a heartbeat.
 *
 * 5. `admit(res, maxWaiting)`, called as a request arrives, refuses one more pipelined request when
 *    `maxWaiting` already wait on its connection (the caller closes the connection: a response
 *    cannot be sent out of order).
 *
 * @return `(res, serve) => void`, with `admit`; the queues are kept per connection, in WeakMaps of this closure.
 */
export function createResponseTurns(): ((res: ServerResponse, serve: () => void) => void) & { admit: (res: ServerResponse, maxWaiting: number) => boolean } {
  /** The responses waiting for one connection (with their `'socket'` listeners), and how to stop watching it. */
  interface Line {
    queue: Map<ServerResponse, () => void>;
    unwatch: () => void;
  }
  const lines = new WeakMap<Socket, Line>();

  const watch = (socket: Socket): Line => {
    const queue = new Map<ServerResponse, () => void>();
    const unwatch = () => {
      socket.off('close', abandon).off('end', onEnd);
      lines.delete(socket);
    };
    const abandon = () => {
      unwatch();
      for (const [res, onSocket] of queue) res.off('socket', onSocket);
      queue.clear();
    };
    // After the client's FIN Node ends the connection unless the server allows half-open ones
    // (Node's own 'end' listener ran first): then nothing waiting can be answered.
    const onEnd = () => {
      if (socket.writableEnded || socket.destroyed) abandon();
    };
    socket.on('close', abandon).on('end', onEnd);
    const line = { queue, unwatch };
    lines.set(socket, line);
    return line;
  };

  // Requests that arrived pipelined and have not got their socket yet, per connection (counted from arrival: their bodies are read meanwhile).
  const arrived = new WeakMap<Socket, number>();
  /**
   * Counts a request in as it arrives. @return false when `maxWaiting` pipelined requests already
   * wait on its connection: each holds its body until its turn, so one connection could otherwise
   * hold any amount of memory.
   */
  const admit = (res: ServerResponse, maxWaiting: number): boolean => {
    const socket = res.req?.socket as Socket | null | undefined;
    if (res.socket !== null || socket === null || socket === undefined) return true;
    const count = arrived.get(socket) ?? 0;
    if (count >= maxWaiting) return false;
    arrived.set(socket, count + 1);
    res.once('socket', () => arrived.set(socket, (arrived.get(socket) ?? 1) - 1));
    return true;
  };

  const inTurn = (res: ServerResponse, serve: () => void) => {
    const socket = res.req?.socket as Socket | null | undefined;
    // Only a response that has not started waits (one that has, or has ended, lost its socket in finishing).
    if (res.socket !== null || res.headersSent || res.writableEnded || socket === null || socket === undefined) return serve();
    if (socket.destroyed) return;
    const line = lines.get(socket) ?? watch(socket);
    const onSocket = () => {
      line.queue.delete(res);
      if (line.queue.size === 0) line.unwatch();
      serve();
    };
    line.queue.set(res, onSocket);
    res.once('socket', onSocket);
  };
  return Object.assign(inTurn, { admit });
}
