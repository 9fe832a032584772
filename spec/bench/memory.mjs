// Item 6: the heap after 1M deltas of one message is within 10% of the heap after 10k deltas.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { median, row } from './harness.mjs';

export const name = 'memory';

const child = fileURLToPath(new URL('./memory-child.mjs', import.meta.url));
const MB = 2 ** 20;

/** Runs the child once; returns heapUsed (bytes) at each checkpoint. */
async function runChild(checkpoints, withSnapshot) {
  const { stdout } = await promisify(execFile)(process.execPath, ['--expose-gc', child, checkpoints.join(','), ...(withSnapshot ? ['snapshot'] : [])], { maxBuffer: 1 << 20 });
  return JSON.parse(stdout).heapUsed;
}

export async function run({ quick, log }) {
  const small = 10_000;
  const large = quick ? 100_000 : 1_000_000;
  const label = (n) => (n >= 1e6 ? `${n / 1e6}M` : `${n / 1e3}k`);
  // Heap sizes are not timings: the medians of 3 processes (1 with --quick), side by side.
  const runs = quick ? 1 : 3;
  const rows = [];
  log(`memory: heap at ${label(small)} and ${label(large)} deltas of one message, without and with messagesSnapshot`);
  const results = await Promise.all([false, true].flatMap((withSnapshot) => Array.from({ length: runs }, () => runChild([small, large], withSnapshot))));
  for (const withSnapshot of [false, true]) {
    const mine = results.slice(withSnapshot ? runs : 0, withSnapshot ? 2 * runs : runs);
    const atSmall = median(mine.map((h) => h[small]));
    const atLarge = median(mine.map((h) => h[large]));
    rows.push(
      row({
        item: 6,
        name: withSnapshot
          ? `heap, one message at ${label(large)} vs ${label(small)} deltas, toAgui + messagesSnapshot + encodeSSE (grows: informational)`
          : `heap, one message at ${label(large)} vs ${label(small)} deltas, toAgui + encodeSSE`,
        ours: { name: `${label(large)} deltas`, value: atLarge / MB },
        baseline: { name: `${label(small)} deltas`, value: atSmall / MB },
        unit: 'MB',
        ratio: atLarge / atSmall,
        ratioMeans: 'heap ratio',
        target: withSnapshot ? undefined : { op: '<=', value: 1.1 },
      }),
    );
  }
  return rows;
}
