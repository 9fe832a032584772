// Item 6, in a child process started with --expose-gc: the heap while one long message streams.
// Usage: node --expose-gc spec/bench/memory-child.mjs <deltas> [snapshot]
// Prints JSON { before, during } in bytes: heapUsed after a full GC before the run, and after a
// full GC taken when the last delta's SSE frame has come out (the message still open).
import { encodeSSE, messagesSnapshot, toAgui } from 'agui-rx';
import { lazy, runOptions } from './workloads.mjs';

const deltas = Number(process.argv[2]);
const withSnapshot = process.argv[3] === 'snapshot';
if (typeof globalThis.gc !== 'function') throw new Error('Run with --expose-gc.');

const heap = () => {
  globalThis.gc();
  globalThis.gc();
  return process.memoryUsage().heapUsed;
};

// The input is made lazily, one event at a time: it is never held in memory.
const source$ = lazy(deltas, (i) => ({ type: 'TEXT_MESSAGE_CHUNK', messageId: 'm1', delta: `word${i % 10} ` }));
const operators = withSnapshot ? [toAgui(runOptions()), messagesSnapshot(), encodeSSE()] : [toAgui(runOptions()), encodeSSE()];

const before = heap();
let during;
let contents = 0;
let bytes = 0;
source$.pipe(...operators).subscribe({
  next: (frame) => {
    // The frame is discarded; only its length is kept.
    bytes += frame.length;
    if (frame.includes('"TEXT_MESSAGE_CONTENT"') && ++contents === deltas) during = heap();
  },
  error: (error) => {
    console.error(error);
    process.exit(1);
  },
});
process.stdout.write(JSON.stringify({ deltas, withSnapshot, before, during, bytes }) + '\n');
