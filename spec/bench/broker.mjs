// Items 9–12: the run broker (issue 13's "Numbers"), each side by side with the same handler or
// sendSSE without a broker, in one run:
//  9. replay of a finished run through route 2 (GET …/events) vs sendSSE(from(array)), events/s;
// 10. Redis: events per round trip on a synchronous burst (counted by a proxy in front of the bench's own redis-server);
// 11. heap per open reader of a running, silent run, with and without a broker (a child process per server);
// 12. added latency per event on a paced run (one event every 5 ms): no broker, memory store, Redis store.
import { createAguiHandler, createMemoryRunStore, createRunBroker, sendSSE } from 'agui-rx';
import { fork } from 'node:child_process';
import http from 'node:http';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { from, interval, map, take } from 'rxjs';
import { gc, measure, median, percentile, row, settings } from './harness.mjs';
import { commandStats, hasRedisServer, pingLatencies, redisServerPath, startCountingProxy, startRedis, statsDelta } from './redis.mjs';
import { mixedEvents, onDiagnostic, textEvents } from './workloads.mjs';

export const name = 'broker';

const BASE = '/agent';
const allowAll = () => true;

/** A RunAgentInput of an empty thread. */
const inputOf = (threadId, runId) => ({ threadId, runId, messages: [], tools: [], context: [], state: {}, forwardedProps: {} });

/** The Redis store, from the package's own entry (undefined when this build has none). */
async function loadRedisStore() {
  for (const specifier of ['agui-rx/broker/redis', '../../dist/esm/lib/broker/redis/index.js']) {
    try {
      const module = await import(specifier);
      if (typeof module.createRedisRunStore === 'function') return module.createRedisRunStore;
    } catch {
      // Not in this build: try the next.
    }
  }
  return undefined;
}

/** Listens on a free port of 127.0.0.1. */
function listen(handler) {
  const server = http.createServer(handler);
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({
        port: server.address().port,
        close: () =>
          new Promise((done) => {
            server.closeAllConnections?.();
            server.close(() => done());
          }),
      }),
    ),
  );
}

/** A request with no connection reuse; resolves with the response once its headers are in. */
function request(port, method, path, body) {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method, path, agent: false, headers: body === undefined ? {} : { 'Content-Type': 'application/json' } }, resolve);
    req.on('error', reject);
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

const LFLF = Buffer.from('\n\n');

/**
 * Reads a response as raw bytes and counts its SSE frames (each ends with a blank line; JSON has
 * no raw line break, so `\n\n` appears once per frame): the client does as little as it can.
 */
function countFrames(res) {
  return new Promise((resolve, reject) => {
    let frames = 0;
    let bytes = 0;
    let endsWithLF = false;
    res.on('data', (chunk) => {
      bytes += chunk.length;
      if (endsWithLF && chunk[0] === 10) frames++;
      for (let i = chunk.indexOf(LFLF); i !== -1; i = chunk.indexOf(LFLF, i + 2)) frames++;
      endsWithLF = chunk[chunk.length - 1] === 10;
    });
    res.on('end', () => resolve({ frames, bytes, status: res.statusCode }));
    res.on('error', reject);
  });
}

/** Reads a response as text (for the few small ones whose content matters). */
function readText(res) {
  return new Promise((resolve, reject) => {
    let text = '';
    res.setEncoding('utf8');
    res.on('data', (chunk) => (text += chunk));
    res.on('end', () => resolve(text));
    res.on('error', reject);
  });
}

// ---------------------------------------------------------------------------------------------
// 9. Replay through route 2 vs sendSSE(from(array)).

async function replay({ quick, runs, warmup, log }) {
  const turns = quick ? 20 : 500;
  const agentEvents = mixedEvents(turns);
  // Nothing is trimmed and the run never detaches: the run is read again and again.
  const broker = createRunBroker({ store: createMemoryRunStore({ retainMs: Infinity }), authorize: allowAll, detachGraceMs: Infinity });
  // The default limits: a replay (like sendSSE of an array) queues the whole run at once, and a
  // client that reads is never cut for it (up to maxBufferedBytes, 64 MiB, far above this run).
  const streamOptions = { heartbeatMs: 0 };
  const brokered = await listen(createAguiHandler(() => from(agentEvents), { ...streamOptions, broker, basePath: BASE, onDiagnostic }));
  const start = await countFrames(await request(brokered.port, 'POST', BASE, inputOf('bench-thread', 'bench-run')));
  // The same events as the run log holds them, for the baseline.
  const events = await new Promise((resolve, reject) => {
    const out = [];
    broker.store.read('bench-thread', 'bench-run').subscribe({ next: (entries) => entries.forEach((e) => out.push(e.event)), error: reject, complete: () => resolve(out) });
  });
  if (start.frames !== events.length) throw new Error(`The POST got ${start.frames} frames, the log holds ${events.length} events.`);
  const plain = await listen((req, res) => {
    req.resume();
    // A frame per event, as route 2 sends the log (the broker does not coalesce unless asked).
    sendSSE(res, from(events), { ...streamOptions, coalesce: false });
  });
  const eventsPath = `${BASE}/threads/bench-thread/runs/bench-run/events`;
  const label = `${Math.round(events.length / 1000)}k`;
  log(`broker: replay of a finished ${label}-event run (route 2) vs sendSSE(from(array)), loopback, raw-byte client`);
  const check = async (port, method, path) => {
    const { frames, status } = await countFrames(await request(port, method, path));
    if (status !== 200 || frames !== events.length) throw new Error(`${path}: status ${status}, ${frames} frames of ${events.length}.`);
  };
  let results;
  try {
    results = await measure(
      [
        { name: 'route 2 replay', fn: () => check(brokered.port, 'GET', eventsPath) },
        { name: 'sendSSE(from(array))', fn: () => check(plain.port, 'GET', '/') },
      ],
      { runs, warmup },
    );
  } finally {
    await Promise.all([brokered.close(), plain.close()]);
    await broker.close();
  }
  const rate = (ms) => events.length / ms; // events per ms = k events/s
  const ours = results['route 2 replay'].median;
  const base = results['sendSSE(from(array))'].median;
  return [
    row({
      item: 9,
      name: `broker replay of a finished run (mixed ${label}, ${events.length} events) through GET …/events vs sendSSE(from(array)), loopback, events/s`,
      ours: { name: 'route 2 replay', value: rate(ours) },
      baseline: { name: 'sendSSE(array)', value: rate(base) },
      unit: 'k ev/s',
      ratio: base / ours,
      target: { op: '>=', value: 0.8 },
    }),
  ];
}

// ---------------------------------------------------------------------------------------------
// 10. Redis: events per round trip on a synchronous burst.

async function redisRoundTrips({ quick, runs, warmup, log, note }, createRedisRunStore) {
  const size = quick ? 2_000 : 10_000;
  const burst = textEvents(size);
  const redis = await startRedis();
  const proxy = await startCountingProxy(redis.port);
  const broker = createRunBroker({ store: createRedisRunStore({ url: proxy.url, maxLen: 10 * size }), authorize: allowAll, detachGraceMs: Infinity });
  const server = await listen(createAguiHandler(() => from(burst), { heartbeatMs: 0, broker, basePath: BASE, onDiagnostic }));
  log(`broker: Redis round trips of a synchronous burst of ${size} events, POST with its reader (redis-server on port ${redis.port})`);
  const perRun = [];
  const trips = [];
  let commands;
  let eventCount = 0;
  try {
    for (let i = 0; i < warmup + runs; i++) {
      const before = proxy.roundTrips();
      const stats = await commandStats(redis.port);
      const { frames, status } = await countFrames(await request(server.port, 'POST', BASE, inputOf(`burst-${i}`, `run-${i}`)));
      const n = proxy.roundTrips() - before;
      if (status !== 200 || frames < size) throw new Error(`burst ${i}: status ${status}, ${frames} frames.`);
      if (i < warmup) continue;
      commands = statsDelta(stats, await commandStats(redis.port));
      perRun.push(frames / n);
      trips.push(n);
      eventCount = frames;
    }
  } finally {
    await server.close();
    await broker.close();
    await proxy.close();
    await redis.stop();
  }
  note(`item 10: round trips per burst ${trips.join(', ')}; Redis commands of the last burst (INFO commandstats, commands inside Lua scripts included): ${Object.entries(commands).map(([c, n]) => `${c} ${n}`).join(', ')}`);
  return [
    row({
      item: 10,
      name: `Redis store: events per round trip, a synchronous burst of ${size} agent events, POST with its own reader (appends + reads + leases)`,
      ours: { name: 'events', value: eventCount },
      baseline: { name: 'round trips', value: median(trips) },
      unit: '',
      ratio: median(perRun),
      ratioMeans: 'events per round trip',
      ratioUnit: 'ev/rt',
      target: { op: '>=', value: 100 },
    }),
  ];
}

// ---------------------------------------------------------------------------------------------
// 11. Heap per open reader, with and without a broker.

const memoryChild = fileURLToPath(new URL('./broker-memory-child.mjs', import.meta.url));

/**
 * One server process in `mode`: 'broker' and 'plain' (a handler with or without a broker), `n`
 * open readers each of its own silent run; 'readers' (with a broker), `n` more readers of one run.
 * Returns the heap bytes per reader.
 */
async function heapPerReader(mode, n) {
  const child = fork(memoryChild, [mode], { execArgv: ['--expose-gc'], stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  const ask = (message) =>
    new Promise((resolve, reject) => {
      child.once('message', resolve);
      child.once('error', reject);
      child.send(message);
    });
  const responses = [];
  try {
    const { port } = await new Promise((resolve) => child.once('message', resolve));
    // Opens `count` readers, each once its first frame (RUN_STARTED) is in: each of its own run
    // (POST), or, in mode 'readers', all of the one run the first POST started (GET …/events).
    const open = async (count, prefix) => {
      for (let i = 0; i < count; i += 100) {
        await Promise.all(
          Array.from({ length: Math.min(100, count - i) }, async (_, k) => {
            const res =
              mode === 'readers' && responses.length > 0
                ? await request(port, 'GET', `${BASE}/threads/warm-0/runs/run-0/events`)
                : await request(port, 'POST', BASE, inputOf(`${prefix}-${i + k}`, `run-${i + k}`));
            responses.push(res);
            await new Promise((resolve) => res.once('data', resolve));
          }),
        );
      }
    };
    // Warm-up readers stay open: the code paths are compiled before the first measure.
    if (mode === 'readers') await open(1, 'warm');
    await open(20, 'warm');
    const { heapUsed: before } = await ask('heap');
    await open(n, 'thread');
    const { heapUsed: after } = await ask('heap');
    return (after - before) / n;
  } finally {
    for (const res of responses) res.destroy();
    child.kill();
  }
}

async function readerMemory({ quick, log }) {
  const n = quick ? 50 : 1000;
  const rounds = quick ? 1 : 3;
  log(`broker: heap per open reader, ${n} readers of silent never-ending runs, with and without a broker (${rounds} process(es) each)`);
  const per = { broker: [], plain: [], readers: [] };
  // Heap is per process: the servers of a round run at the same time.
  for (let i = 0; i < rounds; i++) {
    const [b, p, r] = await Promise.all([heapPerReader('broker', n), heapPerReader('plain', n), heapPerReader('readers', n)]);
    per.broker.push(b);
    per.plain.push(p);
    per.readers.push(r);
  }
  const KB = 1024;
  const withBroker = median(per.broker) / KB;
  const without = median(per.plain) / KB;
  return [
    row({
      item: 11,
      name: `heap per open SSE reader of a running silent run (${n} open), handler with a memory-store broker vs without a broker`,
      ours: { name: 'with broker', value: withBroker },
      baseline: { name: 'no broker', value: without },
      unit: 'KB',
      ratio: withBroker - without,
      ratioMeans: 'more per reader',
      ratioUnit: 'KB',
      target: { op: '<=', value: 2 },
    }),
    // What one more reader of a run costs, its connection included, without the run's own share
    // (its log, lease and agent): no broker can be compared, since without one a run has one reader.
    row({
      item: 11,
      name: `heap per extra SSE reader of one running run (${n} GET …/events readers) vs per run without a broker (informational)`,
      ours: { name: 'extra reader', value: median(per.readers) / KB },
      baseline: { name: 'no broker', value: without },
      unit: 'KB',
      ratio: median(per.readers) / KB - without,
      ratioMeans: 'more per reader',
      ratioUnit: 'KB',
    }),
  ];
}

// ---------------------------------------------------------------------------------------------
// 12. Added latency per event on a paced run.

/** An agent emitting `count` text chunks, one every `everyMs`, each carrying its emission time. */
const pacedAgent = (count, everyMs) => () =>
  interval(everyMs).pipe(
    take(count),
    map(() => ({ type: 'TEXT_MESSAGE_CHUNK', messageId: 'm1', delta: `#${performance.now().toFixed(4)};` })),
  );

/** One paced run: POST, then the latency (ms) of each event from its emission to its arrival, the first `skip` left out. */
async function pacedRun(port, runId, skip) {
  const res = await request(port, 'POST', BASE, inputOf(`paced-${runId}`, runId));
  return new Promise((resolve, reject) => {
    const latencies = [];
    let buffer = '';
    res.setEncoding('utf8');
    res.on('data', (chunk) => {
      const now = performance.now();
      buffer += chunk;
      const pattern = /#(\d+\.\d+);/g;
      let match;
      let end = 0;
      while ((match = pattern.exec(buffer)) !== null) {
        latencies.push(now - Number(match[1]));
        end = pattern.lastIndex;
      }
      buffer = buffer.slice(end);
    });
    res.on('end', () => resolve(latencies.slice(skip)));
    res.on('error', reject);
  });
}

async function pacedLatency({ quick, runs, warmup, log, note }, createRedisRunStore) {
  const count = quick ? 25 : 400;
  const everyMs = 5;
  const skip = quick ? 5 : 20;
  const agent = pacedAgent(count, everyMs);
  const options = { heartbeatMs: 0, onDiagnostic };
  const contenders = [];
  const closers = [];
  try {
    const none = await listen(createAguiHandler(agent, { ...options, basePath: BASE }));
    closers.push(none.close);
    contenders.push({ name: 'no broker', port: none.port });
    const memoryBroker = createRunBroker({ authorize: allowAll });
    const memory = await listen(createAguiHandler(agent, { ...options, broker: memoryBroker, basePath: BASE }));
    closers.push(memory.close, () => memoryBroker.close());
    contenders.push({ name: 'memory store', port: memory.port });
    if (createRedisRunStore !== undefined) {
      const redis = await startRedis();
      closers.push(redis.stop);
      const redisBroker = createRunBroker({ store: createRedisRunStore({ url: redis.url }), authorize: allowAll });
      const server = await listen(createAguiHandler(agent, { ...options, broker: redisBroker, basePath: BASE }));
      closers.unshift(server.close, () => redisBroker.close());
      contenders.push({ name: 'Redis store', port: server.port });
      // Not a handler: a bare PING to the same redis-server, paced alike, in the same rounds.
      contenders.push({ name: 'Redis PING', measure: () => pingLatencies(redis.port, count, everyMs).then((values) => values.slice(skip)) });
    }
    log(`broker: latency of ${count} events paced every ${everyMs} ms, emission → client, ${contenders.map((c) => c.name).join(' / ')}`);
    const stats = Object.fromEntries(contenders.map((c) => [c.name, { p50: [], p99: [] }]));
    for (let round = 0; round < warmup + runs; round++) {
      for (let k = 0; k < contenders.length; k++) {
        const contender = contenders[(k + round) % contenders.length];
        if (settings.gcBetweenRuns) gc();
        const values = contender.measure ? await contender.measure() : await pacedRun(contender.port, `r${round}`, skip);
        if (values.length !== count - skip) throw new Error(`${contender.name}: ${values.length} of ${count - skip} events arrived.`);
        if (round < warmup) continue;
        stats[contender.name].p50.push(percentile(values, 50));
        stats[contender.name].p99.push(percentile(values, 99));
      }
    }
    const rows = [];
    const base = stats['no broker'];
    for (const [store, target] of [
      ['memory store', 1],
      ['Redis store', 5],
    ]) {
      if (stats[store] === undefined) continue;
      for (const p of ['p50', 'p99']) {
        const ours = median(stats[store][p]);
        const theirs = median(base[p]);
        rows.push(
          row({
            item: 12,
            name: `latency ${p}, ${count} events paced every ${everyMs} ms, agent emission → client, broker (${store}) vs the same handler without a broker`,
            ours: { name: `broker, ${store}`, value: ours },
            baseline: { name: 'no broker', value: theirs },
            ratio: ours - theirs,
            ratioMeans: 'added',
            ratioUnit: 'ms',
            target: p === 'p99' ? { op: '<=', value: target } : undefined,
          }),
        );
      }
    }
    if (stats['Redis PING'] !== undefined) {
      const ours = median(stats['Redis PING'].p99);
      const theirs = median(base.p99);
      rows.push(
        row({
          item: 12,
          name: `(floor) a bare Redis PING round trip p99, paced every ${everyMs} ms, vs latency p99 without a broker: what any Redis store adds at least on this machine`,
          ours: { name: 'PING round trip', value: ours },
          baseline: { name: 'no broker', value: theirs },
          ratio: ours - theirs,
          ratioMeans: 'added',
          ratioUnit: 'ms',
        }),
      );
    }
    return rows;
  } finally {
    for (const close of closers) await close();
  }
}

// ---------------------------------------------------------------------------------------------

/** The sections, by item, for running one alone while working on it (`run` runs them all). */
export const sections = { replay, redisRoundTrips, readerMemory, pacedLatency, loadRedisStore };

export async function run(ctx) {
  const createRedisRunStore = await loadRedisStore();
  let redis = createRedisRunStore;
  if (createRedisRunStore === undefined) ctx.note('items 10 and 12 (Redis): skipped, this build has no agui-rx/broker/redis.');
  else if (!hasRedisServer()) {
    ctx.note(`items 10 and 12 (Redis): skipped, ${redisServerPath} is missing (apt-get install redis-server).`);
    redis = undefined;
  }
  const rows = [];
  const timed = async (what, fn) => {
    const started = performance.now();
    rows.push(...(await fn()));
    ctx.log(`broker: ${what} took ${((performance.now() - started) / 1000).toFixed(1)} s`);
  };
  await timed('replay', () => replay(ctx));
  if (redis !== undefined) await timed('Redis round trips', () => redisRoundTrips(ctx, redis));
  await timed('memory per reader', () => readerMemory(ctx));
  await timed('latency', () => pacedLatency(ctx, redis));
  return rows;
}
