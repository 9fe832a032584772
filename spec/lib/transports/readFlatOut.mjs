// A client in its own process that reads one SSE response as fast as it can (so that the server's
// event loop is not also the reader's), for the backpressure specs.
//
//   node readFlatOut.mjs <method> <url> [<json body>] [events]
//
// Prints one JSON line once the response ends or breaks: { status, ended, bytes, frames, pings,
// types: { TYPE: count }, deltaChars, deltaSha256 (of every `delta` joined), errors: [RUN_ERROR],
// rest (bytes after the last frame), events? (every event, with `events`) }.
import { createHash } from 'node:crypto';
import http from 'node:http';

const [method, url, body = '', mode = ''] = process.argv.slice(2);
const result = { status: 0, ended: false, bytes: 0, frames: 0, pings: 0, types: {}, deltaChars: 0, deltaSha256: '', errors: [], rest: '' };
const events = [];
const hash = createHash('sha256');
let printed = false;
const print = () => {
  if (printed) return;
  printed = true;
  result.deltaSha256 = hash.digest('hex');
  if (mode === 'events') result.events = events;
  process.stdout.write(`${JSON.stringify(result)}\n`);
};

const onBlock = (block) => {
  let data;
  for (const line of block.split('\n')) {
    if (line.startsWith(':')) result.pings++;
    else if (line.startsWith('data: ')) data = line.slice(6);
  }
  if (data === undefined) return;
  const event = JSON.parse(data);
  result.frames++;
  result.types[event.type] = (result.types[event.type] ?? 0) + 1;
  if (typeof event.delta === 'string') {
    hash.update(event.delta);
    result.deltaChars += event.delta.length;
  }
  if (event.type === 'RUN_ERROR') result.errors.push(event);
  if (mode === 'events') events.push(event);
};

const request = http.request(url, { method, agent: false, headers: { 'Content-Type': 'application/json', Accept: 'text/event-stream' } }, (response) => {
  result.status = response.statusCode;
  response.setEncoding('utf8');
  // The text of an unfinished frame, in pieces (joined once the frame is whole: a frame of
  // megabytes comes in many chunks, and `+=` on each would copy it again and again).
  let pieces = [];
  let pendingNewline = false;
  response.on('data', (chunk) => {
    result.bytes += Buffer.byteLength(chunk);
    let start = 0;
    // A frame's blank line split across two chunks.
    if (pendingNewline && chunk.startsWith('\n')) {
      const block = pieces.join('');
      onBlock(block.slice(0, -1));
      pieces = [];
      start = 1;
    }
    for (let end = chunk.indexOf('\n\n', start); end !== -1; end = chunk.indexOf('\n\n', start)) {
      pieces.push(chunk.slice(start, end));
      onBlock(pieces.join(''));
      pieces = [];
      start = end + 2;
    }
    if (start < chunk.length) pieces.push(chunk.slice(start));
    pendingNewline = chunk.endsWith('\n') && start < chunk.length;
  });
  response.on('end', () => {
    result.ended = true;
    result.rest = pieces.join('');
    print();
  });
  response.on('close', print);
  response.on('error', print);
});
request.on('error', (error) => {
  result.error = error.message;
  print();
});
request.end(body);
