// Item 7: latency over loopback, from `subject.next(event)` on the server to the client's socket
// receiving that event's bytes: sendSSE(res, events$.pipe(toAgui(…))) against hand-written res.write.
import { sendSSE, toAgui } from 'agui-rx';
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { Subject } from 'rxjs';
import { gc, median, percentile, row, settings } from './harness.mjs';
import { runOptions } from './workloads.mjs';

export const name = 'latency';

/** Untimed events at the start of each run (the connection and the JIT warm up). */
const SKIP = 50;

/** The server: each request gets a Subject, handed to the client side through `waiting`. */
function startServer() {
  let waiting;
  const server = http.createServer((req, res) => {
    const subject = new Subject();
    if (req.url === '/ours') {
      sendSSE(res, subject.pipe(toAgui(runOptions())), { heartbeatMs: 60_000 });
      waiting({ subject, make: (seq) => ({ type: 'TEXT_MESSAGE_CHUNK', messageId: 'm1', delta: `#${seq};` }) });
    } else {
      // The hand-written equivalent: the same AG-UI events, pre-built, each written as one frame.
      res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache', Connection: 'keep-alive' });
      res.flushHeaders();
      const write = (event) => res.write('data: ' + JSON.stringify(event) + '\n\n');
      write({ type: 'RUN_STARTED', threadId: 'bench-thread', runId: 'bench-run' });
      write({ type: 'TEXT_MESSAGE_START', messageId: 'm1', role: 'assistant' });
      subject.subscribe({
        next: write,
        complete: () => {
          write({ type: 'TEXT_MESSAGE_END', messageId: 'm1' });
          write({ type: 'RUN_FINISHED', threadId: 'bench-thread', runId: 'bench-run' });
          res.end();
        },
      });
      waiting({ subject, make: (seq) => ({ type: 'TEXT_MESSAGE_CONTENT', messageId: 'm1', delta: `#${seq};` }) });
    }
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({
        port: server.address().port,
        close: () => new Promise((done) => server.close(done)),
        nextRequest: () => new Promise((r) => (waiting = r)),
      }),
    ),
  );
}

/** One request of `count` paced events; returns the latencies (ms) of all but the first SKIP. */
async function oneRun(server, path, count) {
  const ready = server.nextRequest();
  const sent = new Float64Array(count);
  const latency = new Float64Array(count);
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port: server.port, path, agent: false }, async (res) => {
      const { subject, make } = await ready;
      // Each event is built before its timestamp: the clock covers the pipeline and the socket only.
      const send = (seq) => {
        const event = make(seq);
        sent[seq] = performance.now();
        subject.next(event);
      };
      let buffer = '';
      let arrived = 0;
      res.setEncoding('utf8');
      res.on('data', (chunk) => {
        const now = performance.now();
        buffer += chunk;
        const pattern = /#(\d+);/g;
        let match;
        let end = 0;
        while ((match = pattern.exec(buffer)) !== null) {
          latency[Number(match[1])] = now - sent[Number(match[1])];
          arrived++;
          end = pattern.lastIndex;
        }
        buffer = buffer.slice(end);
        // Paced: the next event goes once the previous one has arrived.
        if (arrived === count) subject.complete();
        else if (end > 0) setImmediate(send, arrived);
      });
      res.on('end', () => resolve(Array.from(latency.subarray(SKIP))));
      res.on('error', reject);
      send(0);
    });
    req.on('error', reject);
  });
}

export async function run({ quick, runs, warmup, log }) {
  const count = quick ? 300 : 2000;
  const server = await startServer();
  log(`latency: ${runs} runs of ${count} paced events, sendSSE+toAgui vs hand-written res.write`);
  const stats = { ours: { p50: [], p99: [] }, hand: { p50: [], p99: [] } };
  try {
    for (let round = 0; round < warmup + runs; round++) {
      for (const who of round % 2 ? ['hand', 'ours'] : ['ours', 'hand']) {
        if (settings.gcBetweenRuns) gc();
        const values = await oneRun(server, `/${who}`, count);
        if (round < warmup) continue;
        stats[who].p50.push(percentile(values, 50));
        stats[who].p99.push(percentile(values, 99));
      }
    }
  } finally {
    await server.close();
  }
  const rows = [];
  for (const p of ['p50', 'p99']) {
    const ours = median(stats.ours[p]);
    const hand = median(stats.hand[p]);
    rows.push(
      row({
        item: 7,
        name: `latency ${p}, loopback, ${count} paced events per run, event in → SSE bytes on the client socket`,
        ours: { name: 'sendSSE(toAgui)', value: ours },
        baseline: { name: 'res.write(JSON)', value: hand },
        ratio: hand / ours,
      }),
    );
  }
  return rows;
}
