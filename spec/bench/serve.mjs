// Items 13–16 (issue 17, "serving many streams"): what a server pays per stream, agui-rx's
// createAguiHandler against a hand-written handler and the official stack doing the same job.
// Each server is node:http on 127.0.0.1 in its own child process (serve-server-child.mjs; its CPU
// from process.cpuUsage() there), drained by a raw-socket client in another (serve-client-child.mjs).
// 13. server CPU per token: paced (many concurrent runs, one token every 20 ms each) and burst
//     (fewer runs, all their tokens emitted synchronously) — issue 17 target 1;
// 14. heap per open stream after GC (runs past RUN_STARTED and a few tokens, then silent), heartbeats
//     on, with and without the in-memory broker — target 2; and, informational, with a conversation
//     history in each request, as a client posts it;
// 15. frames and bytes on the wire per run, what coalescing saves against a frame per event — target 6 (report only);
// 16. token latency p50 / p99 on the paced scenario, emission → client socket — target 7.
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { median, row } from './harness.mjs';
import { historyOf } from './serve-history.mjs';

export const name = 'serve';

const serverChild = fileURLToPath(new URL('./serve-server-child.mjs', import.meta.url));
const clientChild = fileURLToPath(new URL('./serve-client-child.mjs', import.meta.url));

/** What each contender is called in the table. */
const LABEL = { agui: 'agui-rx', 'agui-broker': 'agui-rx + broker', 'agui-sse': 'sendSSE alone', hand: 'hand-written', official: 'official', bare: 'connection alone' };
const KB = 1024;
/** Item 14's target without a broker, KB per open stream (issue 17). */
const HEAP_TARGET_KB = 6;
// The history each request of the heap-with-history rows carries, and the contenders measured with it.
const HISTORY_MESSAGES = 20;
const HISTORY_KB = (JSON.stringify(historyOf(HISTORY_MESSAGES)).length / KB).toFixed(1);
const HISTORY_NAMES = ['agui', 'hand', 'official'];

/**
 * A child process (with --expose-gc) that answers each IPC message with one message: `ask`
 * sends one and resolves with its answer (one question at a time), rejects if the child dies first.
 */
function startChild(file, args) {
  const child = fork(file, args, { execArgv: ['--expose-gc'], stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  let pending;
  const died = (code) => pending?.reject(new Error(`${file} ${args.join(' ')} exited (${code}) before answering.`));
  child.on('exit', died);
  child.on('error', (error) => pending?.reject(error));
  child.on('message', (message) => {
    const p = pending;
    pending = undefined;
    if (message?.error !== undefined) p?.reject(new Error(message.error));
    else p?.resolve(message);
  });
  const next = () => new Promise((resolve, reject) => (pending = { resolve, reject }));
  return {
    first: next(),
    ask: (message) => {
      const answer = next();
      child.send(message);
      return answer;
    },
    kill: () => {
      child.off('exit', died);
      child.kill();
    },
  };
}

async function startServer(contender) {
  const server = startChild(serverChild, [contender]);
  const { port } = await server.first;
  return { ...server, port, name: contender };
}

/**
 * Runs `scenario` (`count` runs with `params`) against every server, in rounds (the order rotates
 * each round), the first `warmup` untimed. Per contender: samples of server CPU µs per token,
 * frames and bytes per run, latency p50 and p99 (ms). `gcFirst`: two full GCs before each round
 * (not counted), as a server gets after an idle spell (see below).
 */
async function rounds(servers, client, { count, params, batch, warmup, runs, gcFirst = false }) {
  const stats = Object.fromEntries(servers.map((s) => [s.name, { cpu: [], frames: [], bytes: [], p50: [], p99: [] }]));
  const tokens = count * params.tokens;
  for (let round = 0; round < warmup + runs; round++) {
    for (let k = 0; k < servers.length; k++) {
      const server = servers[(k + round) % servers.length];
      // No full GC before a round (the in-process items have one before each run): here it comes
      // when no run is open, so the hidden classes of every run's and connection's objects die with
      // their last object, and V8 throws away the optimised code that names them (node:http's own
      // as well as the handler's: `--trace-deopt` counted 293 'weak objects' and 128 'code
      // dependencies' over four rounds of agui-rx's server) and compiles it again in the round
      // (about 195 functions a round, 155 for the hand-written handler, against 12 without the GC).
      // A server under load never sees that; a round would measure its warming up again (one
      // breakdown row does: `gcFirst`). Each contender has its own process, so no contender's
      // garbage is another's to collect.
      if (gcFirst) await server.ask('heap');
      const { cpu: before } = await server.ask('cpu');
      const result = await client.ask({ cmd: 'run', port: server.port, count, params, batch });
      const { cpu: after } = await server.ask('cpu');
      if (result.ok !== count) throw new Error(`${LABEL[server.name]}: ${result.ok} of ${count} ${params.mode} runs got a 200 response.`);
      if (params.mode === 'paced' && result.tokens !== count * (params.tokens - 5)) throw new Error(`${LABEL[server.name]}: ${result.tokens} stamped tokens arrived of ${count * (params.tokens - 5)}.`);
      if (round < warmup) continue;
      const s = stats[server.name];
      s.cpu.push((after - before) / tokens);
      s.frames.push(result.frames / count);
      s.bytes.push(result.bytes / count);
      s.p50.push(result.p50);
      s.p99.push(result.p99);
    }
  }
  const med = (name, what) => median(stats[name][what]);
  return { stats, med };
}

/**
 * Heap bytes per open stream of `server`: `n` silent runs opened after 20 warm ones (kept open, so
 * that the code paths are compiled before the first measure), two full GCs before and after. Each
 * request carries a conversation history of `history` messages (the client's `historyOf`).
 */
async function heapPerStream(server, client, n, history = 0) {
  const open = async (count) => {
    const { opened } = await client.ask({ cmd: 'open', port: server.port, count, params: { mode: 'open' }, until: 'friend.', history });
    if (opened !== count) throw new Error(`${LABEL[server.name]}: ${opened} of ${count} streams opened.`);
  };
  try {
    await open(20);
    const { heapUsed: before } = await server.ask('heap');
    await open(n);
    const { heapUsed: after } = await server.ask('heap');
    return (after - before) / n;
  } finally {
    await client.ask({ cmd: 'close' });
  }
}

export async function run({ quick, runs, warmup, log, note }) {
  const paced = quick ? { count: 100, params: { mode: 'paced', tokens: 20, everyMs: 20 }, batch: 100 } : { count: 1000, params: { mode: 'paced', tokens: 150, everyMs: 20 }, batch: 100 };
  const burst = quick ? { count: 50, params: { mode: 'burst', tokens: 500 }, batch: 50 } : { count: 200, params: { mode: 'burst', tokens: 2000 }, batch: 200 };
  // What a run costs apart from its tokens (request, input check, setup, teardown): runs of one token each.
  const short = quick ? { count: 200, params: { mode: 'burst', tokens: 1 }, batch: 50 } : { count: 2000, params: { mode: 'burst', tokens: 1 }, batch: 100 };
  const heapStreams = quick ? 100 : 2000;
  const heapRounds = quick ? 1 : 2;
  // A paced round takes its wall time whatever the machine, and a loaded server stretches it: fewer
  // rounds than the other items (each sample is already 150k tokens over 1,000 streams).
  const cpuRounds = quick ? { warmup: 1, runs: 3 } : { warmup: 1, runs: Math.min(runs, 3) };
  // The paced scenario comes first, on servers that have served nothing: what a server does once per
  // run (1,000 a round) is only hot enough for V8's optimising compiler in the second and third rounds,
  // and that compiling, on the process's other threads, counts in its CPU (measured with --trace-opt
  // on agui-rx's server: 251 functions optimised in round 1, 84 a round in rounds 2-3, 12 a round in
  // 4-5). Two warm-up rounds, so that the timed ones see a server in its steady state, as one that has
  // served for minutes is; one more timed round than the other items, as a paced round's CPU varies more.
  const pacedRounds = quick ? cpuRounds : { warmup: 2, runs: Math.min(runs, 4) };

  const timed = async (what, fn) => {
    const started = performance.now();
    const result = await fn();
    log(`serve: ${what} took ${((performance.now() - started) / 1000).toFixed(1)} s`);
    return result;
  };
  const names = ['agui', 'hand', 'official'];
  // The paced and one-token scenarios also run agui-rx's write path alone (informational breakdown rows).
  const breakdownNames = [...names, 'agui-sse'];
  const heapNames = ['agui', 'agui-broker', 'agui-sse', 'hand', 'official', 'bare'];
  const heap = Object.fromEntries(heapNames.map((n) => [n, []]));
  const heapWithHistory = {};
  const rows = [];
  let pacedResult;
  let afterIdleResult;
  let burstResult;
  let shortResult;
  const client = startChild(clientChild, []);
  try {
    // The servers of items 13, 15 and 16 also serve item 14's heap (warm by then), with the brokered one.
    const servers = await timed('start', () => Promise.all(heapNames.map(startServer)));
    const cpuServers = servers.filter((s) => names.includes(s.name));
    const breakdownServers = servers.filter((s) => breakdownNames.includes(s.name));
    try {
      log(`serve: paced, ${paced.count} concurrent runs × ${paced.params.tokens} tokens, one every ${paced.params.everyMs} ms, ${breakdownNames.map((n) => LABEL[n]).join(' / ')}, a child process each`);
      pacedResult = await timed('paced', () => rounds(breakdownServers, client, { ...paced, ...pacedRounds }));
      log(`serve: paced, one round each of agui-rx and hand-written, right after a full GC with no run open`);
      afterIdleResult = await timed('paced after a full GC', () => rounds(breakdownServers.filter((s) => s.name === 'agui' || s.name === 'hand'), client, { ...paced, warmup: 0, runs: 1, gcFirst: true }));
      log(`serve: burst, ${burst.count} concurrent runs × ${burst.params.tokens} tokens emitted synchronously`);
      burstResult = await timed('burst', () => rounds(cpuServers, client, { ...burst, ...cpuRounds }));
      log(`serve: one-token runs, ${short.count} runs (${short.params.tokens} token each, ${short.batch} at a time)`);
      shortResult = await timed('one-token runs', () => rounds(breakdownServers, client, { ...short, ...cpuRounds }));
      log(`serve: heap per open stream, ${heapStreams} silent runs past RUN_STARTED and 3 tokens, heartbeats on (${heapRounds} round(s))`);
      await timed('heap', async () => {
        for (let i = 0; i < heapRounds; i++) {
          for (let k = 0; k < servers.length; k++) {
            const server = servers[(k + i) % servers.length];
            heap[server.name].push((await heapPerStream(server, client, heapStreams)) / KB);
          }
        }
        // What a real request adds: a client posts its whole conversation with each run.
        for (const server of servers.filter((s) => HISTORY_NAMES.includes(s.name))) heapWithHistory[server.name] = (await heapPerStream(server, client, heapStreams, HISTORY_MESSAGES)) / KB;
      });
    } finally {
      for (const server of servers) server.kill();
    }
  } finally {
    client.kill();
  }

  note(
    `items 13, 15, 16: paced ${pacedRounds.runs} timed rounds after ${pacedRounds.warmup} warm-up round(s) (the servers' first), burst and one-token runs ${cpuRounds.runs} after ${cpuRounds.warmup}, contenders interleaved (not the table header's 5 and 2: a paced round takes its seconds whatever the machine); item 14: ${heapRounds} round(s). A paced run lasts ${(paced.params.tokens * paced.params.everyMs) / 1000} s when the server keeps up; on a loaded machine it stretches, and the latencies of item 16 then measure the queueing more than the handler.`,
  );
  const pacedLabel = `paced, ${paced.count} concurrent runs × ${paced.params.tokens} tokens at ${1000 / paced.params.everyMs} tokens/s`;
  const burstLabel = `burst, ${burst.count} concurrent runs × ${burst.params.tokens} tokens emitted synchronously`;
  for (const [label, result, targets] of [
    [pacedLabel, pacedResult, { hand: 1.2, official: 1 }],
    [burstLabel, burstResult, { hand: 1, official: undefined }],
  ]) {
    const ours = result.med('agui', 'cpu');
    for (const other of ['hand', 'official']) {
      const theirs = result.med(other, 'cpu');
      rows.push(
        row({
          item: 13,
          name: `server CPU per token, ${label}, heartbeats on: agui-rx vs ${LABEL[other]}`,
          ours: { name: 'agui-rx', value: ours },
          baseline: { name: LABEL[other], value: theirs },
          unit: 'µs',
          ratio: ours / theirs,
          ratioMeans: `agui-rx ÷ ${LABEL[other]}`,
          target: targets[other] === undefined ? undefined : { op: '<=', value: targets[other] },
          note: other === 'official' && targets.official !== undefined ? 'below 1: less CPU than the official stack' : undefined,
        }),
      );
    }
  }

  // Where target 1's paced gap comes from: the write path alone against the hand-written handler,
  // and what a run costs apart from its tokens (its share of a paced token is that ÷ the run's tokens).
  rows.push(
    row({
      item: 13,
      name: `(breakdown) server CPU per token, ${pacedLabel}, heartbeats on: agui-rx's write path alone, sendSSE of the hand-written handler's events without toAgui or the handler, vs hand-written (informational)`,
      ours: { name: LABEL['agui-sse'], value: pacedResult.med('agui-sse', 'cpu') },
      baseline: { name: 'hand-written', value: pacedResult.med('hand', 'cpu') },
      unit: 'µs',
      ratio: pacedResult.med('agui-sse', 'cpu') / pacedResult.med('hand', 'cpu'),
      ratioMeans: `${LABEL['agui-sse']} ÷ hand-written`,
    }),
  );
  // What a server pays once after an idle spell: the round after a full GC taken while no run was
  // open, when V8 has thrown away the optimised code of every object kind that died (see `rounds`).
  rows.push(
    row({
      item: 13,
      name: `(breakdown) server CPU per token, ${pacedLabel}, heartbeats on: one round right after a full GC taken with no run open (the code warms up again, as after an idle spell), agui-rx vs hand-written (informational)`,
      ours: { name: 'agui-rx', value: afterIdleResult.med('agui', 'cpu') },
      baseline: { name: 'hand-written', value: afterIdleResult.med('hand', 'cpu') },
      unit: 'µs',
      ratio: afterIdleResult.med('agui', 'cpu') / afterIdleResult.med('hand', 'cpu'),
      ratioMeans: 'agui-rx ÷ hand-written',
    }),
  );
  const shortLabel = `${short.count} runs of ${short.params.tokens} token each (${short.batch} at a time)`;
  for (const ours of ['agui', 'agui-sse']) {
    rows.push(
      row({
        item: 13,
        name: `(breakdown) server CPU per run, ${shortLabel}: ${ours === 'agui' ? 'agui-rx' : "agui-rx's write path alone (sendSSE)"} vs hand-written (informational)`,
        ours: { name: LABEL[ours], value: shortResult.med(ours, 'cpu') },
        baseline: { name: 'hand-written', value: shortResult.med('hand', 'cpu') },
        unit: 'µs',
        ratio: shortResult.med(ours, 'cpu') - shortResult.med('hand', 'cpu'),
        ratioMeans: 'more per run',
        ratioUnit: 'µs',
      }),
    );
  }
  note(
    `item 13, ${shortLabel}: server CPU per run agui-rx ${shortResult.med('agui', 'cpu').toFixed(0)} µs, sendSSE alone ${shortResult.med('agui-sse', 'cpu').toFixed(0)}, hand-written ${shortResult.med('hand', 'cpu').toFixed(0)}, official ${shortResult.med('official', 'cpu').toFixed(0)}; agui-rx's extra per run spread over a paced run's ${paced.params.tokens} tokens: ${((shortResult.med('agui', 'cpu') - shortResult.med('hand', 'cpu')) / paced.params.tokens).toFixed(2)} µs per token, of the ${(pacedResult.med('agui', 'cpu') - pacedResult.med('hand', 'cpu')).toFixed(2)} µs it uses more`,
  );

  const kb = (n) => median(heap[n]);
  const heapLabel = `heap per open stream after GC, ${heapStreams} open runs past RUN_STARTED and 3 tokens then silent, heartbeats on`;
  /** An item 14 row whose figure is KB per stream: `ours` and `baseline` are contender names. */
  const perStream = (what, ours, baseline, ratio, ratioMeans, extra = {}) =>
    row({ item: 14, name: `${heapLabel}: ${what}`, ours: { name: LABEL[ours], value: kb(ours) }, baseline: { name: LABEL[baseline], value: kb(baseline) }, unit: 'KB', ratio, ratioMeans, ratioUnit: 'KB', ...extra });
  rows.push(
    perStream('agui-rx without a broker (vs hand-written)', 'agui', 'hand', kb('agui'), 'agui-rx per stream', { target: { op: '<=', value: HEAP_TARGET_KB } }),
    perStream("agui-rx with the in-memory broker, its log's events included (vs without)", 'agui-broker', 'agui', kb('agui-broker'), 'with broker per stream', {
      target: { op: '<=', value: 8 },
      note: "the broker's log holds each run's events (RUN_STARTED, the message's start and 3 contents): counted here, the target does not count them",
    }),
    perStream("(breakdown) agui-rx's write path alone, sendSSE of ready AG-UI events without toAgui or the handler, vs hand-written (informational)", 'agui-sse', 'hand', kb('agui-sse') - kb('hand'), 'more per stream'),
    perStream(
      '(ceiling) the connection alone, the same frames written by hand and nothing behind the open response (no agent, no subscription, no heartbeat): the least any handler can hold per stream, vs hand-written',
      'bare',
      'hand',
      kb('bare'),
      'floor per stream',
      { note: kb('bare') > HEAP_TARGET_KB ? `above the ${HEAP_TARGET_KB} KB target: no handler can meet it on this machine` : undefined },
    ),
    row({
      item: 14,
      name: `${heapLabel}: agui-rx without a broker vs the official stack (informational)`,
      ours: { name: 'agui-rx', value: kb('agui') },
      baseline: { name: 'official', value: kb('official') },
      unit: 'KB',
      ratio: kb('agui') / kb('official'),
      ratioMeans: 'agui-rx ÷ official',
    }),
    ...['hand', 'official'].map((other) =>
      row({
        item: 14,
        name: `${heapLabel}, each request with a history of ${HISTORY_MESSAGES} messages (about ${HISTORY_KB} KB of JSON; one round): agui-rx without a broker vs ${LABEL[other]} (informational)`,
        ours: { name: 'agui-rx', value: heapWithHistory.agui },
        baseline: { name: LABEL[other], value: heapWithHistory[other] },
        unit: 'KB',
        ratio: heapWithHistory.agui / heapWithHistory[other],
        ratioMeans: `agui-rx ÷ ${LABEL[other]}`,
      }),
    ),
  );

  for (const [label, result] of [
    [pacedLabel, pacedResult],
    [burstLabel, burstResult],
  ]) {
    for (const [what, unit] of [
      ['frames', 'frames'],
      ['bytes', 'B'],
    ]) {
      const ours = result.med('agui', what);
      const hand = result.med('hand', what);
      rows.push(
        row({
          item: 15,
          name: `${what} on the wire per run${what === 'bytes' ? ' (response body with its chunk framing)' : ''}, ${label}: ${what} saved by coalescing = hand-written (a frame per event) − agui-rx (informational)`,
          ours: { name: 'agui-rx', value: ours },
          baseline: { name: 'hand-written', value: hand },
          unit,
          ratio: hand - ours,
          ratioMeans: 'saved per run',
          ratioUnit: unit,
        }),
      );
    }
    note(
      `item 15, ${label}: per run, agui-rx ${result.med('agui', 'frames').toFixed(1)} frames / ${Math.round(result.med('agui', 'bytes'))} B, hand-written ${result.med('hand', 'frames').toFixed(1)} / ${Math.round(result.med('hand', 'bytes'))} B, official ${result.med('official', 'frames').toFixed(1)} / ${Math.round(result.med('official', 'bytes'))} B`,
    );
  }

  for (const p of ['p50', 'p99']) {
    const ours = pacedResult.med('agui', p);
    const hand = pacedResult.med('hand', p);
    rows.push(
      row({
        item: 16,
        name: `token latency ${p}, ${pacedLabel}, agent emission → client socket (another process, one monotonic clock), each run's first 5 tokens left out: agui-rx vs hand-written`,
        ours: { name: 'agui-rx', value: ours },
        baseline: { name: 'hand-written', value: hand },
        ratio: ours - hand,
        ratioMeans: 'added',
        ratioUnit: 'ms',
        target: p === 'p99' ? { op: '<=', value: 2 } : undefined,
      }),
    );
  }
  note(`item 16: official stack latency p50 ${pacedResult.med('official', 'p50').toFixed(2)} ms, p99 ${pacedResult.med('official', 'p99').toFixed(2)} ms; per-round p99 agui-rx ${pacedResult.stats.agui.p99.map((v) => v.toFixed(1)).join(', ')}, hand-written ${pacedResult.stats.hand.p99.map((v) => v.toFixed(1)).join(', ')} ms`);
  return rows;
}
