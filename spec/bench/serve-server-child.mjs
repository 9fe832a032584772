// Items 13–16 (issue 17, "serving many streams"), the server side: one node:http server on
// 127.0.0.1 in this child process (started with --expose-gc), serving one contender, argv[2]:
//  - 'agui'        createAguiHandler(agent) from the built package, no broker, heartbeats on (15 s);
//  - 'agui-broker' the same with the in-memory run broker (heap rows only);
//  - 'agui-sse'    sendSSE alone of the hand-built AG-UI events, no toAgui (heap rows only: the write path's share);
//  - 'bare'        the floor of the heap rows: the same frames written once by hand, then nothing behind
//                  the open response (no agent, no subscription, no heartbeat, no listener);
//  - 'hand'        hand-written: JSON.parse the body, writeHead, res.write('data: '+JSON.stringify(e)+'\n\n')
//                  per already-expanded AG-UI event, a setInterval heartbeat;
//  - 'official'    the agent's chunks through @ag-ui/client transformChunks, each event framed by
//                  @ag-ui/encoder EventEncoder.encodeSSE, res.write per frame, the same heartbeat.
// Every contender runs the same synthetic agent (same RxJS timers, same tokens): it differs only in
// what it emits, chunks (agui-rx, official) or the expanded events the hand-written handler builds.
// The request's forwardedProps say what the agent does: { mode: 'paced', tokens, everyMs } (one
// token every everyMs ms, its delta `@<emission time in ms> `), { mode: 'burst', tokens } (short
// words, emitted synchronously) or { mode: 'open' } (three tokens, then silent, never ends).
// IPC: sends { port } once listening; answers 'cpu' with { cpu } (process.cpuUsage user + system,
// µs) and 'heap' with { heapUsed } after two full GCs.
import http from 'node:http';
import { concat, interval, map, NEVER, Observable, of, take } from 'rxjs';
import { monotonicNow } from './serve-clock.mjs';

process.env.SUPPRESS_TRANSFORMATION_WARNINGS = '1';
const contender = process.argv[2];
if (typeof globalThis.gc !== 'function') throw new Error('Run with --expose-gc.');

const HEARTBEAT_MS = 15_000;
/** A silent diagnostics sink (workloads.mjs has one too, but loads agui-rx for every contender). */
const onDiagnostic = () => {};
const WORDS = ['the ', 'quick ', 'brown ', 'fox ', 'jumps ', 'over ', 'a ', 'lazy ', 'dog, ', 'and ', 'then ', 'rests. '];
const OPEN_WORDS = ['Hello', ' there', ' friend.'];
const SSE_HEADERS = { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache', Connection: 'keep-alive' };

/** The run's first events, how a token is made, and its last events (see {@link agent} for `expanded`). */
function eventsOf({ threadId, runId }, expanded) {
  const messageId = 'm1';
  const token = expanded ? (delta) => ({ type: 'TEXT_MESSAGE_CONTENT', messageId, delta }) : (delta) => ({ type: 'TEXT_MESSAGE_CHUNK', messageId, delta });
  const head = expanded ? [{ type: 'RUN_STARTED', threadId, runId }, { type: 'TEXT_MESSAGE_START', messageId, role: 'assistant' }] : [{ type: 'RUN_STARTED', threadId, runId }];
  const tail = expanded ? [{ type: 'TEXT_MESSAGE_END', messageId }, { type: 'RUN_FINISHED', threadId, runId }] : [{ type: 'RUN_FINISHED', threadId, runId }];
  return { head, token, tail };
}

/**
 * The synthetic agent of one request. `expanded`: the hand-written handler's events (START /
 * CONTENT / END built by hand) instead of TEXT_MESSAGE_CHUNKs with messageId on each.
 */
function agent(input, expanded) {
  const params = input.forwardedProps ?? {};
  const { head, token, tail } = eventsOf(input, expanded);
  if (params.mode === 'paced') {
    const tokens$ = interval(params.everyMs).pipe(
      take(params.tokens),
      map(() => token(`@${monotonicNow().toFixed(3)} `)),
    );
    return concat(of(...head), tokens$, of(...tail));
  }
  if (params.mode === 'burst') {
    const n = params.tokens;
    return new Observable((subscriber) => {
      for (const event of head) subscriber.next(event);
      for (let i = 0; i < n && !subscriber.closed; i++) subscriber.next(token(WORDS[i % WORDS.length]));
      for (const event of tail) subscriber.next(event);
      subscriber.complete();
    });
  }
  // 'open': past RUN_STARTED and a few tokens, then silent for ever.
  return concat(of(...head, ...OPEN_WORDS.map(token)), NEVER);
}

/** Reads the whole body and hands over its JSON (a hand-written server's body parsing). */
function readJson(req, res, then) {
  const chunks = [];
  req.on('data', (chunk) => chunks.push(chunk));
  req.on('end', () => {
    let input;
    try {
      input = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      res.writeHead(400).end();
      return;
    }
    then(input);
  });
}

/** A hand-written SSE frame. */
const handFrame = (event) => 'data: ' + JSON.stringify(event) + '\n\n';

/** A hand-written SSE response of `events$`: one res.write per frame, a heartbeat every 15 s. */
function serveByHand(req, res, events$, encode) {
  res.writeHead(200, SSE_HEADERS);
  const heartbeat = setInterval(() => res.write(': ping\n\n'), HEARTBEAT_MS);
  const subscription = events$.subscribe({
    next: (event) => res.write(encode(event)),
    error: () => {
      clearInterval(heartbeat);
      res.end();
    },
    complete: () => {
      clearInterval(heartbeat);
      res.end();
    },
  });
  res.on('close', () => {
    clearInterval(heartbeat);
    subscription.unsubscribe();
  });
}

/** The contender's handler; each loads only what it uses (a child starts faster). */
async function handlerOf(name) {
  if (name === 'agui' || name === 'agui-broker') {
    const { createAguiHandler, createRunBroker } = await import('agui-rx');
    return name === 'agui'
      ? createAguiHandler((input) => agent(input, false), { heartbeatMs: HEARTBEAT_MS, basePath: '/agent', onDiagnostic })
      : createAguiHandler((input) => agent(input, false), { heartbeatMs: HEARTBEAT_MS, broker: createRunBroker({ authorize: () => true }), basePath: '/agent', onDiagnostic });
  }
  if (name === 'agui-sse') {
    // The heap breakdown only: agui-rx's write path alone (sendSSE of the events the hand-written
    // server builds, no toAgui, no input check), so the table shows what toAgui's state adds.
    const { sendSSE } = await import('agui-rx');
    return (req, res) => readJson(req, res, (input) => sendSSE(res, agent(input, true), { heartbeatMs: HEARTBEAT_MS }));
  }
  if (name === 'bare') {
    // What any SSE server holds per open stream on this machine, whatever its handler: node:http's
    // request, response and socket with the stream's first frames written.
    return (req, res) =>
      readJson(req, res, (input) => {
        const { head, token } = eventsOf(input, true);
        res.writeHead(200, SSE_HEADERS);
        res.write([...head, ...OPEN_WORDS.map(token)].map(handFrame).join(''));
      });
  }
  if (name === 'hand') return (req, res) => readJson(req, res, (input) => serveByHand(req, res, agent(input, true), handFrame));
  if (name === 'official') {
    const [{ transformChunks }, { EventEncoder }] = await Promise.all([import('@ag-ui/client'), import('@ag-ui/encoder')]);
    return (req, res) =>
      readJson(req, res, (input) => {
        const encoder = new EventEncoder({ accept: req.headers.accept });
        serveByHand(req, res, agent(input, false).pipe(transformChunks()), (event) => encoder.encodeSSE(event));
      });
  }
  throw new Error(`Unknown contender '${name}'.`);
}

// Many connections at once: a backlog as deep as the client's batches.
const server = http.createServer(await handlerOf(contender));
server.listen({ port: 0, host: '127.0.0.1', backlog: 4096 }, () => process.send({ port: server.address().port }));
process.on('message', async (message) => {
  if (message === 'cpu') {
    const { user, system } = process.cpuUsage();
    process.send({ cpu: user + system });
  } else if (message === 'heap') {
    // Let the last requests' pending callbacks and microtasks run first (two turns of the event loop).
    for (let turn = 0; turn < 2; turn++) await new Promise((resolve) => setImmediate(resolve));
    globalThis.gc();
    globalThis.gc();
    process.send({ heapUsed: process.memoryUsage().heapUsed });
  }
});
process.on('disconnect', () => process.exit(0));
