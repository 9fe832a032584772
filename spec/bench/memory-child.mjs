// Item 6, in a child process started with --expose-gc: the heap while one long message streams.
// Usage: node --expose-gc spec/bench/memory-child.mjs <checkpoint,checkpoint,…> [snapshot]
// One message of as many deltas as the last checkpoint goes through toAgui and encodeSSE (the
// frames are discarded). When the frame of the n-th delta comes out, for each checkpoint n, the
// message still open: two full GCs, then heapUsed. Prints JSON { heapUsed: { n: bytes }, … }.
import { encodeSSE, messagesSnapshot, toAgui } from 'agui-rx';
import { lazy, runOptions } from './workloads.mjs';

const checkpoints = process.argv[2].split(',').map(Number);
const deltas = Math.max(...checkpoints);
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
const heapUsed = {};
let contents = 0;
let bytes = 0;
source$.pipe(...operators).subscribe({
  next: (frame) => {
    // The frame is discarded; only its length is kept.
    bytes += frame.length;
    if (frame.startsWith('data: {"type":"TEXT_MESSAGE_CONTENT"') && checkpoints.includes(++contents)) heapUsed[contents] = heap();
  },
  error: (error) => {
    console.error(error);
    process.exit(1);
  },
});
if (contents !== deltas) throw new Error(`Expected ${deltas} TEXT_MESSAGE_CONTENT frames, got ${contents}.`);
process.stdout.write(JSON.stringify({ withSnapshot, before, heapUsed, bytes }) + '\n');
