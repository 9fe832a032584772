// A createAguiHandler server for the pipelining memory spec, run as a child process with --expose-gc
// from the built package (dist/cjs: `npm run build` first). Every run sends a 1 MB burst of text, then
// thinks forever (no heartbeat: heartbeatMs 0). It prints `{"port":…,"statsPort":…}` once it listens;
// `GET /stats` on the second port answers, after two full GCs, the heap in use (bytes), how many
// agents started and how many are still subscribed.
'use strict';
const { createServer } = require('node:http');
const { Observable } = require('rxjs');
const { createAguiHandler } = require('../../../dist/cjs/lib/index.js');

if (typeof globalThis.gc !== 'function') throw new Error('Run with --expose-gc.');
const counts = { starts: 0, active: 0 };
const agent = () =>
  new Observable((subscriber) => {
    counts.starts++;
    counts.active++;
    for (let i = 0; i < 32; i++) subscriber.next({ type: 'TEXT_MESSAGE_CHUNK', messageId: 'm1', delta: String(i % 10).repeat(32 * 1024) });
    subscriber.next({ type: 'TEXT_MESSAGE_CHUNK', messageId: 'm2', delta: 'burst over' });
    return () => counts.active--;
  });
const server = createServer(createAguiHandler(agent, { heartbeatMs: 0, maxBufferedBytes: 64 * 1024 * 1024 }));
const stats = createServer((_req, res) => {
  globalThis.gc();
  globalThis.gc();
  res.writeHead(200, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify({ heapUsed: process.memoryUsage().heapUsed, ...counts }));
});
server.listen(0, '127.0.0.1', () =>
  stats.listen(0, '127.0.0.1', () => process.stdout.write(JSON.stringify({ port: server.address().port, statsPort: stats.address().port }) + '\n')),
);
