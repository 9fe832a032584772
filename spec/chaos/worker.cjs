// One server instance of the chaos spec, run as a child process (`node spec/chaos/worker.cjs`), from
// the built package (dist/cjs: `npm run build` first). It serves
// `createAguiHandler(agent, { broker, basePath: '/agent' })` on 127.0.0.1 and a free port, with a
// deterministic paced agent driven by `forwardedProps.chaos` in the run's input, and prints
// `{"port":…}` on stdout once it listens. `GET /stats` answers how often the agent started per run
// and what the broker reported through `onActivity` (store errors, losses, ends).
//
// Environment: REDIS_URL (without it, the in-memory store: one instance only), LEASE_MS (default
// 2000), INSTANCE_ID (the broker's instance id).
//
// Required as a module (by the spec), it only exports `scriptOf`, the agent's script for a seed,
// so that the spec can compute what an uninterrupted run gives.
'use strict';

/** mulberry32: a small, fast, seedable PRNG (uniform in [0, 1)). */
function prng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = ['alpha', 'beta', 'gamma', 'delta', 'rx', 'stream', 'cursor', 'lease', 'redis', 'émoji 🚀', 'line\nbreak', '"quoted"', 'data: x', '\u2028'];

/**
 * The agent's script for `seed`: `[{ d, e }]`, each event `e` (an AgentEvent with every id given,
 * so that the messages are the same on every run of the seed) sent `d` ms after the previous one
 * (0: in the same tick, a burst). Turns of reasoning, text, parallel tool calls with interleaved
 * argument chunks and their results, and state snapshots (sent whole; `stateDelta` diffs them).
 * `long` makes a run of about `long` ms (for the kill, stop and Redis restart cases).
 */
function scriptOf(seed, { long = 0, paceMs = 3 } = {}) {
  const random = prng(seed);
  const int = (n) => Math.floor(random() * n);
  const pick = (items) => items[int(items.length)];
  const steps = [];
  const push = (e) => steps.push({ d: random() < 0.3 ? 0 : 1 + int(paceMs), e });
  const state = { seed, counter: 0, items: [], nested: { flags: {} } };
  const snapshot = () => {
    state.counter += 1 + int(3);
    if (random() < 0.5) state.items.push(`${pick(WORDS)}-${state.counter}`);
    if (random() < 0.3 && state.items.length > 0) state.items.splice(int(state.items.length), 1);
    state.nested.flags[pick(['a', 'b', 'c', 'd'])] = random() < 0.5;
    push({ type: 'STATE_SNAPSHOT', snapshot: JSON.parse(JSON.stringify(state)) });
  };
  // A turn is about 20 events, 0.7 of them after a pause of 1 + paceMs / 2 ms on average.
  const turns = long > 0 ? Math.max(1, Math.round(long / (7 * paceMs + 14))) : 1 + int(2);
  for (let turn = 0; turn < turns; turn++) {
    const id = `${seed}-${turn}`;
    if (random() < 0.5) {
      const reasoningId = `r-${id}`;
      for (let i = 0, n = 1 + int(4); i < n; i++) push({ type: 'REASONING_MESSAGE_CHUNK', messageId: reasoningId, delta: `${pick(WORDS)} ` });
    }
    if (random() < 0.5) snapshot();
    const messageId = `m-${id}`;
    for (let i = 0, n = 2 + int(8); i < n; i++) {
      push({ type: 'TEXT_MESSAGE_CHUNK', messageId, role: 'assistant', delta: `${pick(WORDS)} ` });
      if (random() < 0.1) snapshot();
    }
    const calls = int(4);
    if (calls > 0) {
      const args = Array.from({ length: calls }, (_, c) => JSON.stringify({ call: c, query: pick(WORDS), n: int(1000) }));
      const offsets = args.map(() => 0);
      // The calls' argument pieces interleaved: parallel tool calls.
      while (offsets.some((offset, c) => offset < args[c].length)) {
        const c = int(calls);
        if (offsets[c] >= args[c].length) continue;
        const size = 1 + int(12);
        const first = offsets[c] === 0;
        push({
          type: 'TOOL_CALL_CHUNK',
          toolCallId: `tc-${id}-${c}`,
          ...(first ? { toolCallName: pick(['search', 'lookup', 'weather']), parentMessageId: messageId } : {}),
          delta: args[c].slice(offsets[c], offsets[c] + size),
        });
        offsets[c] += size;
      }
      for (let c = 0; c < calls; c++) push({ type: 'TOOL_CALL_RESULT', messageId: `tr-${id}-${c}`, toolCallId: `tc-${id}-${c}`, content: `result ${c} of ${pick(WORDS)}` });
      snapshot();
    }
  }
  snapshot();
  return steps;
}

module.exports = { scriptOf, prng };

if (require.main === module) main();

function main() {
  const { createServer } = require('node:http');
  const { Observable } = require('rxjs');
  const { createAguiHandler, createRunBroker } = require('../../dist/cjs/lib/index.js');
  const leaseMs = Number(process.env.LEASE_MS ?? 2000);
  const instanceId = process.env.INSTANCE_ID ?? `chaos-${process.pid}`;
  let store;
  if (process.env.REDIS_URL) {
    const { createRedisRunStore } = require('../../dist/cjs/lib/broker/redis/index.js');
    store = createRedisRunStore({ url: process.env.REDIS_URL });
  }
  // Agent starts per run, and what the broker reported that the spec checks.
  const starts = {};
  const activity = [];
  const broker = createRunBroker({
    store,
    authorize: () => true,
    leaseMs,
    detachGraceMs: Infinity,
    instanceId,
    onActivity(entry) {
      if (entry.type === 'store-error' || entry.type === 'run-lost' || entry.type === 'run-ended') activity.push({ ...entry, at: Date.now() });
    },
  });

  /** The deterministic agent: plays `scriptOf(chaos.seed, chaos)` with its pauses, until the signal aborts. */
  const agent = (input, { signal }) =>
    new Observable((subscriber) => {
      const chaos = (input.forwardedProps && input.forwardedProps.chaos) || {};
      starts[input.runId] = (starts[input.runId] ?? 0) + 1;
      const steps = scriptOf(Number(chaos.seed ?? 0), chaos);
      let index = 0;
      let timer;
      const play = () => {
        timer = undefined;
        while (index < steps.length && !signal.aborted) {
          subscriber.next(steps[index++].e);
          if (index < steps.length && steps[index].d > 0) {
            timer = setTimeout(play, steps[index].d);
            return;
          }
        }
        if (index >= steps.length) subscriber.complete();
      };
      timer = setTimeout(play, 0);
      return () => clearTimeout(timer);
    });

  const lag = require('node:perf_hooks').monitorEventLoopDelay({ resolution: 10 });
  lag.enable();
  const handler = createAguiHandler(agent, { broker, basePath: '/agent', heartbeatMs: 1000 });
  const server = createServer((req, res) => {
    if (req.method === 'GET' && req.url === '/stats') {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      return res.end(JSON.stringify({ instanceId, starts, activity, cpuMs: Math.round((process.cpuUsage().user + process.cpuUsage().system) / 1000), lagMaxMs: lag.max / 1e6, lagP99Ms: lag.percentile(99) / 1e6 }));
    }
    if (process.env.CHAOS_DEBUG) {
      const arrived = performance.now();
      const writeHead = res.writeHead;
      res.writeHead = function (...args) {
        process.stderr.write(`${instanceId} ${req.method} ${req.url}: socket ${(arrived - (req.socket.connectedAt ?? arrived)).toFixed(0)} ms before, headers after ${(performance.now() - arrived).toFixed(0)} ms\n`);
        return writeHead.apply(this, args);
      };
    }
    handler(req, res);
  });
  // Idle connections are closed by the client (fetch's pool, after about 4 s), never by the server: a
  // server closing one as the client reuses it fails that request ("other side closed"), a race of
  // HTTP keep-alive itself, not of the broker.
  server.keepAliveTimeout = 60_000;
  if (process.env.CHAOS_DEBUG) server.on('connection', (socket) => void (socket.connectedAt = performance.now()));
  server.listen(0, '127.0.0.1', () => process.stdout.write(`${JSON.stringify({ port: server.address().port, instanceId })}\n`));
  const shutdown = () => {
    server.close();
    server.closeAllConnections();
    broker.close().finally(() => process.exit(0));
  };
  process.on('SIGTERM', shutdown);
  process.on('SIGINT', shutdown);
}
