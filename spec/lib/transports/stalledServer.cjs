// The server of the stalled-readers spec, in a child process started with --expose-gc, from the
// built package (dist/cjs: `npm run build` first). One handler (argv[2]: 'node' for
// createAguiHandler, 'fetch' for createAguiFetchHandler piped into node:http as Node adapters do)
// whose agent emits a synchronous burst of about 6 MB (60 deltas of 100 kB), then nothing and never ends, with a short
// stallTimeoutMs (3000 ms; each cut is counted, `cut`, not logged). Sends { port } over IPC once listening; answers 'stats' with its heap
// after two full GCs, how many runs started and were stopped, and how many connections are open.
'use strict';
const http = require('node:http');
const { Readable } = require('node:stream');
const { pipeline } = require('node:stream/promises');
const { concat, from, NEVER, finalize, defer } = require('rxjs');
const { createAguiFetchHandler, createAguiHandler } = require('../../../dist/cjs/lib/index.js');

if (typeof globalThis.gc !== 'function') throw new Error('Run with --expose-gc.');
const mode = process.argv[2];
let started = 0;
let stopped = 0;
let open = 0;
// 6 MB: loopback's kernel buffers take about 4 MB of a reader that does not read, the rest waits in the server.
const burst = [
  { type: 'TEXT_MESSAGE_START', messageId: 'm1', role: 'assistant' },
  ...Array.from({ length: 60 }, (_, i) => ({ type: 'TEXT_MESSAGE_CONTENT', messageId: 'm1', delta: `${i} `.repeat(50_000).slice(0, 100_000) })),
];
const agent = () =>
  defer(() => {
    started++;
    return concat(from(burst), NEVER);
  }).pipe(finalize(() => stopped++));
// Cut clients counted, not logged: the default logs a line per cut client, a hundred lines that
// read like failures in a passing run.
let cut = 0;
const options = { stallTimeoutMs: 3000, heartbeatMs: 0, onError: () => void cut++ };

let handle;
if (mode === 'fetch') {
  const fetchHandler = createAguiFetchHandler(agent, options);
  handle = (req, res) => {
    const controller = new AbortController();
    res.on('close', () => {
      if (!res.writableFinished) controller.abort();
    });
    const request = new Request(`http://${req.headers.host}${req.url}`, { method: req.method, headers: req.headers, body: Readable.toWeb(req), signal: controller.signal, duplex: 'half' });
    void fetchHandler(request).then((response) => {
      res.writeHead(response.status, Object.fromEntries(response.headers));
      pipeline(Readable.fromWeb(response.body), res).catch(() => res.destroy());
    });
  };
} else {
  handle = createAguiHandler(agent, options);
}
const server = http.createServer(handle);
server.on('connection', (socket) => {
  open++;
  socket.on('close', () => open--);
});
server.listen(0, '127.0.0.1', () => process.send({ port: server.address().port }));
process.on('message', async (message) => {
  if (message !== 'stats') return;
  for (let turn = 0; turn < 2; turn++) await new Promise((resolve) => setImmediate(resolve));
  globalThis.gc();
  globalThis.gc();
  const { heapUsed, external, arrayBuffers } = process.memoryUsage();
  process.send({ heapUsed, external, arrayBuffers, started, stopped, open, cut });
});
process.on('disconnect', () => process.exit(0));
