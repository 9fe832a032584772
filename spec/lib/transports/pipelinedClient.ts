import type { Event, RunAgentInput } from '@ag-ui/core';
import { connect, type Socket } from 'node:net';
import { StringDecoder } from 'node:string_decoder';
import { firstValueFrom, from, map, toArray } from 'rxjs';
import { parseSSE } from '../../../lib/transports/parseSSE.js';

/** One HTTP/1.1 response read off a raw connection: its status, headers, body so far, and whether it ended. */
export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
  complete: boolean;
}

/** A POST of `input` (or of a raw body) as HTTP/1.1 bytes (keep-alive, so that the next request may follow on the same connection). */
export function rawPost(input: RunAgentInput | string, path = '/agent', headers: Record<string, string> = {}): string {
  const body = typeof input === 'string' ? input : JSON.stringify(input);
  const lines = [`POST ${path} HTTP/1.1`, 'Host: 127.0.0.1', 'Content-Type: application/json', 'Accept: text/event-stream', `Content-Length: ${Buffer.byteLength(body)}`];
  for (const [name, value] of Object.entries(headers)) lines.push(`${name}: ${value}`);
  return `${lines.join('\r\n')}\r\n\r\n${body}`;
}

/**
 * A raw loopback connection that writes `requests` in ONE write (HTTP/1.1 pipelining, RFC 9112
 * §9.3.2) and reads the responses in order: Content-Length and chunked bodies. Node's own client
 * never pipelines, so this one speaks the bytes itself.
 */
export function pipeline(port: number, requests: string[]): { socket: Socket; responses: RawResponse[]; closed: Promise<void>; bytes: () => number } {
  const socket = connect(port, '127.0.0.1');
  const responses: RawResponse[] = [];
  let buffer = Buffer.alloc(0);
  let received = 0;
  // The response being read, where its parser is, and how many body bytes are left (of the body, or of the chunk).
  let current: RawResponse | undefined;
  // A body's UTF-8 may be split anywhere between chunks.
  let decoder = new StringDecoder('utf8');
  let step: 'head' | 'size' | 'data' | 'crlf' | 'trailer' = 'head';
  let chunked = false;
  let remaining = 0;
  const done = () => {
    current!.complete = true;
    current = undefined;
    step = 'head';
  };
  /** The next CRLF-terminated line, or undefined until it has arrived whole. */
  const line = (): string | undefined => {
    const end = buffer.indexOf('\r\n');
    if (end < 0) return undefined;
    const text = buffer.subarray(0, end).toString('latin1');
    buffer = buffer.subarray(end + 2);
    return text;
  };
  const parse = () => {
    for (;;) {
      switch (step) {
        case 'head': {
          const end = buffer.indexOf('\r\n\r\n');
          if (end < 0) return;
          const [statusLine, ...headerLines] = buffer.subarray(0, end).toString('latin1').split('\r\n');
          buffer = buffer.subarray(end + 4);
          const headers: Record<string, string> = {};
          for (const header of headerLines) {
            const colon = header.indexOf(':');
            headers[header.slice(0, colon).trim().toLowerCase()] = header.slice(colon + 1).trim();
          }
          current = { status: Number(statusLine.split(' ')[1]), headers, body: '', complete: false };
          decoder = new StringDecoder('utf8');
          responses.push(current);
          chunked = headers['transfer-encoding'] === 'chunked';
          remaining = Number(headers['content-length'] ?? 0);
          if (chunked) step = 'size';
          else if (remaining === 0) done();
          else step = 'data';
          break;
        }
        case 'size': {
          const size = line();
          if (size === undefined) return;
          remaining = parseInt(size, 16);
          step = remaining === 0 ? 'trailer' : 'data';
          break;
        }
        case 'data': {
          if (buffer.length === 0) return;
          const take = Math.min(remaining, buffer.length);
          current!.body += decoder.write(buffer.subarray(0, take));
          buffer = buffer.subarray(take);
          remaining -= take;
          if (remaining > 0) return;
          if (chunked) step = 'crlf';
          else done();
          break;
        }
        case 'crlf':
          if (line() === undefined) return;
          step = 'size';
          break;
        case 'trailer': {
          const trailer = line();
          if (trailer === undefined) return;
          if (trailer === '') done();
          break;
        }
      }
    }
  };
  socket.on('data', (chunk: Buffer) => {
    received += chunk.length;
    buffer = Buffer.concat([buffer, chunk]);
    parse();
  });
  socket.on('error', () => undefined);
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  socket.write(requests.join(''));
  return { socket, responses, closed, bytes: () => received };
}

/** The AG-UI events of an SSE body (its `data:` fields as JSON). */
export function eventsOf(body: string): Promise<Event[]> {
  return firstValueFrom(
    from([body]).pipe(
      parseSSE(),
      map((message) => JSON.parse(message.data) as Event),
      toArray(),
    ),
  );
}
