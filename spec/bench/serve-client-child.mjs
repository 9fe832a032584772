// Items 13–16, the client side, in its own child process so that it never shares the server's
// CPU accounting: raw `net` sockets, a hand-written POST of a RunAgentInput, and as little
// response parsing as it can do: body bytes (chunk framing included, headers not), frames (each SSE frame ends with a blank line; JSON has no
// raw line break, so `\n\n` appears once per frame), the end (the chunked terminator or the
// connection closing) and, on paced runs, the latency of each token (its delta `@<emission ms> `,
// stamped by the server on the clock both processes share).
// IPC, one command at a time, each answered once:
//  { cmd: 'run', port, count, params, batch }  opens `count` runs (`batch` connections at a time),
//      waits for them all to end: { runs, ok, frames, bytes, tokens, p50, p99, failures };
//  { cmd: 'open', port, count, params, until, history }  opens `count` runs and keeps them, each once its
//      response holds the text `until` (each request carries a conversation history of `history`
//      messages of about 300 characters, default none): { opened };
//  { cmd: 'close' }  destroys every kept connection: { closed }.
import net from 'node:net';
import { monotonicNow } from './serve-clock.mjs';
import { percentile } from './harness.mjs';
import { historyOf } from './serve-history.mjs';

const LFLF = Buffer.from('\n\n');
const HEADER_END = Buffer.from('\r\n\r\n');
const TERMINATOR = '0\r\n\r\n';
/** Tokens of each paced run left out of the latencies (the connection and its first writes warm up). */
const SKIP_TOKENS = 5;

let seq = 0;

/** The request bytes of one run. */
function requestOf(port, params, history = 0) {
  const id = `${process.pid}-${seq++}`;
  const body = JSON.stringify({ threadId: `t-${id}`, runId: `r-${id}`, messages: historyOf(history), tools: [], context: [], state: {}, forwardedProps: params });
  return `POST /agent HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\nAccept: text/event-stream\r\nConnection: close\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
}

/**
 * One connection. `onToken(latencyMs)` for each stamped token (paced runs), `until` the text whose
 * arrival resolves `ready`. Resolves `done` with { ok, frames, bytes } at the end of the response.
 */
function connect(port, params, { stamped, until, onToken, history }) {
  const socket = net.connect(port, '127.0.0.1');
  socket.setNoDelay(true);
  let frames = 0;
  let bytes = 0;
  let inBody = false;
  let status = '';
  let lastLF = false;
  let tail = ''; // the last bytes read, for a terminator split between reads
  let carry = ''; // a stamp split between reads
  let tokens = 0;
  let seen = '';
  let readyResolve;
  const ready = new Promise((resolve) => (readyResolve = resolve));
  const done = new Promise((resolve) => {
    let finished = false;
    const finish = () => {
      if (finished) return;
      finished = true;
      socket.destroy();
      readyResolve(false);
      resolve({ ok: status.startsWith('HTTP/1.1 200'), frames, bytes });
    };
    socket.on('connect', () => socket.write(requestOf(port, params, history)));
    socket.on('data', (chunk) => {
      const now = stamped ? monotonicNow() : 0;
      let body = chunk;
      if (!inBody) {
        const end = chunk.indexOf(HEADER_END);
        if (end === -1) {
          status += chunk.latin1Slice(0, chunk.length);
          return;
        }
        status += chunk.latin1Slice(0, end);
        inBody = true;
        body = chunk.subarray(end + 4);
        if (body.length === 0) return;
      }
      bytes += body.length;
      if (lastLF && body[0] === 10) frames++;
      for (let i = body.indexOf(LFLF); i !== -1; i = body.indexOf(LFLF, i + 2)) frames++;
      lastLF = body[body.length - 1] === 10;
      if (stamped || until !== undefined) {
        const text = carry + body.latin1Slice(0, body.length);
        if (stamped) {
          let at = text.indexOf('@');
          while (at !== -1) {
            const space = text.indexOf(' ', at);
            if (space === -1) break;
            if (++tokens > SKIP_TOKENS) onToken(now - Number(text.slice(at + 1, space)));
            at = text.indexOf('@', space);
          }
          carry = at === -1 ? '' : text.slice(at);
        }
        if (until !== undefined && seen !== undefined) {
          seen = (seen + text).slice(-4096);
          if (seen.includes(until)) {
            seen = undefined;
            readyResolve(true);
          }
        }
      }
      tail = (tail + body.latin1Slice(Math.max(0, body.length - 5), body.length)).slice(-5);
      if (tail === TERMINATOR) finish();
    });
    socket.on('end', finish);
    socket.on('close', finish);
    socket.on('error', finish);
  });
  return { socket, ready, done };
}

/** Runs `count` runs to their end, `batch` connections opened at a time (each batch once the previous one is connected). */
async function runMany({ port, count, params, batch }) {
  const stamped = params.mode === 'paced';
  let latencies = new Float64Array(stamped ? count * Math.max(1, params.tokens) : 0);
  let n = 0;
  const onToken = (ms) => {
    if (n === latencies.length) {
      const grown = new Float64Array(latencies.length * 2 + 16);
      grown.set(latencies);
      latencies = grown;
    }
    latencies[n++] = ms;
  };
  const runs = [];
  for (let i = 0; i < count; i += batch) {
    const opened = [];
    for (let k = i; k < Math.min(count, i + batch); k++) {
      const c = connect(port, params, { stamped, onToken });
      runs.push(c.done);
      opened.push(new Promise((resolve) => c.socket.once('connect', resolve).once('close', resolve)));
    }
    await Promise.all(opened);
  }
  const results = await Promise.all(runs);
  const values = latencies.subarray(0, n);
  return {
    runs: results.length,
    ok: results.filter((r) => r.ok).length,
    frames: results.reduce((sum, r) => sum + r.frames, 0),
    bytes: results.reduce((sum, r) => sum + r.bytes, 0),
    tokens: n,
    p50: n > 0 ? percentile(values, 50) : NaN,
    p99: n > 0 ? percentile(values, 99) : NaN,
  };
}

const kept = [];

/** Opens `count` runs and keeps them open, each once `until` has arrived; `opened`: how many got it and are still open. */
async function openMany({ port, count, params, until, history, batch = 100 }) {
  let opened = 0;
  for (let i = 0; i < count; i += batch) {
    const ready = [];
    for (let k = i; k < Math.min(count, i + batch); k++) {
      const c = connect(port, params, { stamped: false, until, history });
      kept.push(c.socket);
      ready.push(c.ready);
    }
    for (const ok of await Promise.all(ready)) if (ok) opened++;
  }
  return { opened };
}

process.on('message', async (message) => {
  try {
    if (message.cmd === 'run') process.send(await runMany(message));
    else if (message.cmd === 'open') process.send(await openMany(message));
    else if (message.cmd === 'close') {
      const closed = kept.length;
      for (const socket of kept.splice(0)) socket.destroy();
      process.send({ closed });
    }
  } catch (error) {
    process.send({ error: String(error?.stack ?? error) });
  }
});
process.on('disconnect', () => process.exit(0));
