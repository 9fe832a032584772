// Items 1 and 2: the whole toAgui pipeline against the official transformChunks and against a bare map.
import { transformChunks } from '@ag-ui/client';
import { toAgui } from 'agui-rx';
import { from, map } from 'rxjs';
import { measure, speedRow } from './harness.mjs';
import { drain, mixedEvents, runOptions, textEvents } from './workloads.mjs';

export const name = 'throughput';

export async function run({ quick, runs, warmup, log }) {
  // Larger than the other items' --quick size: these are the ratios the CI sanity spec bounds.
  const size = quick ? 30_000 : 1_000_000;
  const label = quick ? '30k' : '1M';
  const mixed = mixedEvents(size / 200);
  const text = textEvents(size);
  const rows = [];

  log(`throughput: toAgui vs transformChunks vs map, mixed ${label}`);
  const mixedResults = await measure(
    [
      { name: 'toAgui', fn: () => drain(from(mixed).pipe(toAgui(runOptions()))) },
      // The workload's states are immutable updates: the producer may say so.
      { name: 'toAgui immutableState', fn: () => drain(from(mixed).pipe(toAgui({ ...runOptions(), immutableState: true }))) },
      { name: 'transformChunks', fn: () => drain(from(mixed).pipe(transformChunks())) },
      { name: 'map', fn: () => drain(from(mixed).pipe(map((e) => ({ ...e })))) },
      // No operator at all: what the source and the subscriber cost, the floor for any pipeline.
      { name: 'source alone', fn: () => drain(from(mixed)) },
    ],
    { runs, warmup },
  );
  rows.push(speedRow({ item: 1, name: `toAgui vs official transformChunks, mixed ${label}`, results: mixedResults, ours: 'toAgui', baseline: 'transformChunks', target: { op: '>=', value: 20 } }));
  rows.push(speedRow({ item: 1, name: `(ceiling) no operator vs transformChunks: the best ratio any pipeline could reach, mixed ${label}`, results: mixedResults, ours: 'source alone', baseline: 'transformChunks' }));
  rows.push(speedRow({ item: 2, name: `toAgui vs bare map, mixed ${label}`, results: mixedResults, ours: 'toAgui', baseline: 'map', target: { op: '>=', value: 0.5 }, note: '≥ 0.5x = at most 2x slower' }));
  rows.push(speedRow({ item: 2, name: `toAgui({ immutableState: true }) vs bare map, mixed ${label}`, results: mixedResults, ours: 'toAgui immutableState', baseline: 'map', target: { op: '>=', value: 0.5 }, note: '≥ 0.5x = at most 2x slower' }));

  log(`throughput: toAgui vs map, text-only ${label}`);
  const textResults = await measure(
    [
      { name: 'toAgui', fn: () => drain(from(text).pipe(toAgui(runOptions()))) },
      { name: 'map', fn: () => drain(from(text).pipe(map((e) => ({ ...e })))) },
    ],
    { runs, warmup },
  );
  rows.push(speedRow({ item: 2, name: `toAgui vs bare map, text-only ${label}`, results: textResults, ours: 'toAgui', baseline: 'map', target: { op: '>=', value: 0.5 }, note: '≥ 0.5x = at most 2x slower' }));
  return rows;
}
