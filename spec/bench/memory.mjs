// Item 6: the heap after 1M deltas of one message is within 10% of the heap after 10k deltas.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { median, row } from './harness.mjs';

export const name = 'memory';

const child = fileURLToPath(new URL('./memory-child.mjs', import.meta.url));
const MB = 2 ** 20;

/**
 * Runs the child once. Retried a few times when the built package is missing: other work in the
 * same tree may be rebuilding dist/ (`rm -rf dist && tsc`) at that moment.
 */
async function runChild(deltas, withSnapshot) {
  for (let attempt = 1; ; attempt++) {
    try {
      const { stdout } = await promisify(execFile)(process.execPath, ['--expose-gc', child, String(deltas), ...(withSnapshot ? ['snapshot'] : [])], { maxBuffer: 1 << 20 });
      return stdout;
    } catch (error) {
      if (attempt >= 10 || !String(error.stderr ?? error).includes('ERR_MODULE_NOT_FOUND')) throw error;
      await new Promise((resolve) => setTimeout(resolve, 3000));
    }
  }
}

/** heapUsed (bytes) while the last of `deltas` deltas is out, median of `runs` child processes. */
async function heapDuring(deltas, withSnapshot, runs) {
  const values = [];
  for (let i = 0; i < runs; i++) {
    values.push(JSON.parse(await runChild(deltas, withSnapshot)).during);
  }
  return median(values);
}

export async function run({ quick, log }) {
  const small = 10_000;
  const large = quick ? 100_000 : 1_000_000;
  const label = (n) => (n >= 1e6 ? `${n / 1e6}M` : `${n / 1e3}k`);
  const runs = quick ? 1 : 3;
  const rows = [];
  // Heap sizes are not timings: the child processes may run side by side.
  log(`memory: ${label(small)} vs ${label(large)} deltas, without and with messagesSnapshot`);
  const [a, b, aSnapshot, bSnapshot] = await Promise.all([
    heapDuring(small, false, runs),
    heapDuring(large, false, runs),
    heapDuring(small, true, runs),
    heapDuring(large, true, runs),
  ]);
  for (const [withSnapshot, at10k, atLarge] of [
    [false, a, b],
    [true, aSnapshot, bSnapshot],
  ]) {
    rows.push(
      row({
        item: 6,
        name: withSnapshot
          ? `heap, one message of ${label(large)} vs ${label(small)} deltas, toAgui + messagesSnapshot + encodeSSE (grows: informational)`
          : `heap, one message of ${label(large)} vs ${label(small)} deltas, toAgui + encodeSSE`,
        ours: { name: `${label(large)} deltas`, value: atLarge / MB },
        baseline: { name: `${label(small)} deltas`, value: at10k / MB },
        unit: 'MB',
        ratio: atLarge / at10k,
        ratioMeans: 'heap ratio',
        target: withSnapshot ? undefined : { op: '<=', value: 1.1 },
      }),
    );
  }
  return rows;
}
