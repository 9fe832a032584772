import type { Event, RunAgentInput } from '@ag-ui/core';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

/** The worker script: one server instance (see its header). */
export const workerPath = join(__dirname, 'worker.cjs');

/** mulberry32, the worker's own: a small seedable PRNG, uniform in [0, 1). */
export const prng: (seed: number) => () => number = require('./worker.cjs').prng;

/** One step of the worker agent's script: an AgentEvent and the pause before it (ms). */
export interface ScriptStep {
  d: number;
  e: { type: string } & Record<string, unknown>;
}

/** The worker agent's script for a seed (`long`: about that many ms; `paceMs`: the longest pause). */
export const scriptOf: (seed: number, options?: { long?: number; paceMs?: number }) => ScriptStep[] = require('./worker.cjs').scriptOf;

/** What a worker's `GET /stats` answers. */
export interface InstanceStats {
  instanceId: string;
  /** Agent starts per runId. */
  starts: Record<string, number>;
  /** The broker's `store-error`, `run-lost` and `run-ended` activity, with the time it was reported (`at`). */
  activity: ({ type: string; runId: string; at: number } & Record<string, unknown>)[];
  /** CPU time the process used so far, in ms. */
  cpuMs: number;
  /** Its event loop's delay, max and 99th percentile, in ms. */
  lagMaxMs: number;
  lagP99Ms: number;
}

/** A running worker: a server instance in its own process. */
export interface Instance {
  readonly name: string;
  readonly url: string;
  readonly child: ChildProcess;
  /** What it wrote on stderr (the last 10 kB or so): a crash's stack, say. */
  stderr(): string;
  stats(): Promise<InstanceStats>;
  /** SIGKILL, and wait until it is gone. */
  kill(): Promise<void>;
  /** SIGTERM (the broker closes), and wait until it is gone. */
  stop(): Promise<void>;
}

/** Starts a worker (`node spec/chaos/worker.cjs`) and resolves once it listens. */
export function startInstance(name: string, env: Record<string, string>): Promise<Instance> {
  const built = join(__dirname, '../../dist/cjs/lib/index.js');
  if (!existsSync(built)) return Promise.reject(new Error(`The chaos workers run the built package, and ${built} is missing: run \`npm run build\` first (\`npm test\` and \`npm run chaos\` do).`));
  const child = spawn(process.execPath, [workerPath], { env: { ...process.env, ...env, INSTANCE_ID: name }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
    if (stderr.length > 20_000) stderr = stderr.slice(-10_000);
  });
  const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const end = (signal: NodeJS.Signals) => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    return gone;
  };
  return new Promise((resolve, reject) => {
    const onExit = (code: number | null) => reject(new Error(`chaos worker ${name} exited (${code}) before it listened:\n${stderr}`));
    child.once('exit', onExit);
    createInterface({ input: child.stdout! }).once('line', (line) => {
      child.off('exit', onExit);
      const { port } = JSON.parse(line) as { port: number };
      const url = `http://127.0.0.1:${port}`;
      resolve({
        name,
        url,
        child,
        stderr: () => stderr,
        stats: async () => (await (await fetch(`${url}/stats`)).json()) as InstanceStats,
        kill: () => end('SIGKILL'),
        stop: () => end('SIGTERM'),
      });
    });
  });
}

/** One SSE frame as received: the `id:` line (undefined when absent) and the event of its `data:`. */
export interface Frame {
  id: string | undefined;
  event: Event;
}

/** How a read of a stream ended. */
export interface ReadResult {
  /** Complete frames received, in order. */
  frames: Frame[];
  /** 'cut': this side aborted after `cutAfter` frames; 'ended': the server closed the stream; 'timeout'. */
  end: 'cut' | 'ended' | 'timeout';
  status: number;
  /** When each frame arrived (performance.now()). */
  times: number[];
  /** When the request was sent and when its response headers arrived (performance.now()). */
  sentAt: number;
  headersAt: number;
}

const TERMINAL = new Set(['RUN_FINISHED', 'RUN_ERROR']);

/**
 * Opens an SSE stream (`fetch(url, init)`) and reads complete frames; with `cutAfter`, aborts the
 * connection right after that many frames (0: right after the response headers; -1: 0 to 4 ms after
 * sending the request, before or after it reached the server), leaving whatever
 * part of the next frame had arrived unread. `onFrame` sees each frame as it arrives. Gives up
 * after `timeoutMs`.
 */
export async function readStream(
  url: string,
  init: RequestInit,
  { cutAfter, timeoutMs = 30_000, onFrame }: { cutAfter?: number | undefined; timeoutMs?: number; onFrame?: (frame: Frame, count: number) => void } = {},
): Promise<ReadResult> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), timeoutMs);
  const frames: Frame[] = [];
  const times: number[] = [];
  let status = 0;
  const sentAt = performance.now();
  let headersAt = 0;
  try {
    const fetched = fetch(url, { ...init, signal: controller.signal });
    if (cutAfter === -1) {
      // Cut before the answer: a few ms after sending, whether or not the request got there.
      await new Promise((resolve) => setTimeout(resolve, Math.floor(Math.random() * 5)));
      controller.abort();
      const response = await fetched.catch(() => undefined);
      await response?.body?.cancel().catch(() => undefined);
      return { frames, end: 'cut', status: response?.status ?? 0, times, sentAt, headersAt };
    }
    const response = await fetched;
    headersAt = performance.now();
    status = response.status;
    if (status !== 200) {
      await response.text().catch(() => '');
      return { frames, end: 'ended', status, times, sentAt, headersAt };
    }
    if (cutAfter === 0) {
      controller.abort();
      return { frames, end: 'cut', status, times, sentAt, headersAt };
    }
    const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return { frames, end: 'ended', status, times, sentAt, headersAt };
      buffer += value;
      let boundary: number;
      while ((boundary = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, boundary);
        buffer = buffer.slice(boundary + 2);
        const frame = parseFrame(block);
        if (frame === undefined) continue;
        frames.push(frame);
        times.push(performance.now());
        onFrame?.(frame, frames.length);
        if (cutAfter !== undefined && frames.length >= cutAfter) {
          controller.abort();
          await reader.cancel().catch(() => undefined);
          return { frames, end: 'cut', status, times, sentAt, headersAt };
        }
      }
    }
  } catch (error) {
    if (controller.signal.aborted) return { frames, end: 'timeout', status, times, sentAt, headersAt };
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    throw new Error(`${init.method ?? 'GET'} ${url} failed after ${frames.length} frames: ${(error as Error).message}${cause === undefined ? '' : ` (${cause.code ?? ''} ${cause.message ?? ''})`}`, { cause: error });
  } finally {
    clearTimeout(timer);
  }
}

/** An SSE block's frame, or undefined for a comment-only block (a heartbeat). */
function parseFrame(block: string): Frame | undefined {
  let id: string | undefined;
  const data: string[] = [];
  for (const line of block.split('\n')) {
    if (line.startsWith(':')) continue;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
    if (field === 'id') id = value;
    else if (field === 'data') data.push(value);
  }
  if (data.length === 0) return undefined;
  return { id, event: JSON.parse(data.join('\n')) as Event };
}

/** Whether a frame holds the run's terminal event. */
export const isTerminal = (frame: Frame) => TERMINAL.has(frame.event.type);

/**
 * Cursor order for both stores' cursors: dash-separated unsigned integers (memory: `"17"`; Redis
 * Streams: `"1733108400000-3"`), compared part by part.
 */
export function compareCursors(a: string, b: string): number {
  const pa = a.split('-').map(BigInt);
  const pb = b.split('-').map(BigInt);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const x = pa[i] ?? 0n;
    const y = pb[i] ?? 0n;
    if (x !== y) return x < y ? -1 : 1;
  }
  return 0;
}

/** The POST that starts (or attaches to) a run; with `lastEventId`, only what follows it. */
export const postRun = (input: RunAgentInput, lastEventId?: string): RequestInit => ({
  method: 'POST',
  headers: { 'Content-Type': 'application/json', Accept: 'text/event-stream', ...(lastEventId === undefined ? {} : { 'Last-Event-ID': lastEventId }) },
  body: JSON.stringify(input),
});

/** The GET of route 2; with `lastEventId`, only what follows it. */
export const getEvents = (lastEventId?: string): RequestInit => ({
  method: 'GET',
  headers: { Accept: 'text/event-stream', ...(lastEventId === undefined ? {} : { 'Last-Event-ID': lastEventId }) },
});

/** `base/threads/<threadId>/runs/<runId>/<what>`. */
export const runPath = (base: string, threadId: string, runId: string, what: 'events' | 'stop') =>
  `${base}/agent/threads/${encodeURIComponent(threadId)}/runs/${encodeURIComponent(runId)}/${what}`;

/** Median and max of numbers (0 for none). */
export function summarize(values: number[]): { median: number; max: number } {
  if (values.length === 0) return { median: 0, max: 0 };
  const sorted = [...values].sort((a, b) => a - b);
  return { median: sorted[Math.floor(sorted.length / 2)], max: sorted[sorted.length - 1] };
}

/** Runs `task` over `items` with at most `concurrency` at once; rejects with the first failure. */
export async function pool<T, R>(items: T[], concurrency: number, task: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const lanes = Array.from({ length: Math.min(concurrency, items.length) }, async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await task(items[index]);
    }
  });
  await Promise.all(lanes);
  return results;
}
