// Item 11, in a child process started with --expose-gc: a node:http server of one handler whose
// agent never emits and never ends, with a memory-store broker (`broker`, `readers`) or without (`plain`).
// Sends { port } over IPC once listening; answers each 'heap' message with { heapUsed } after two full GCs.
import { createAguiHandler, createRunBroker } from 'agui-rx';
import http from 'node:http';
import { NEVER } from 'rxjs';
import { onDiagnostic } from './workloads.mjs';

const mode = process.argv[2];
if (typeof globalThis.gc !== 'function') throw new Error('Run with --expose-gc.');
// 'readers' serves many readers of one run: no limit on them.
const broker = mode === 'plain' ? undefined : createRunBroker({ authorize: () => true, maxSubscribers: Infinity });
const server = http.createServer(createAguiHandler(() => NEVER, { broker, basePath: '/agent', onDiagnostic }));
server.listen(0, '127.0.0.1', () => process.send({ port: server.address().port }));
process.on('message', async (message) => {
  if (message !== 'heap') return;
  // Let the last requests' pending callbacks and microtasks run first (two turns of the event loop).
  for (let turn = 0; turn < 2; turn++) await new Promise((resolve) => setImmediate(resolve));
  globalThis.gc();
  globalThis.gc();
  process.send({ heapUsed: process.memoryUsage().heapUsed });
});
process.on('disconnect', () => process.exit(0));
