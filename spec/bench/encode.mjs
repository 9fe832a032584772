// Item 4: encodeSSE against hand-written JSON.stringify framing and against @ag-ui/encoder in a map.
import { EventEncoder } from '@ag-ui/encoder';
import { encodeSSE } from 'agui-rx';
import { from, map } from 'rxjs';
import { measure, speedRow } from './harness.mjs';
import { aguiRun, drain, mixedEvents } from './workloads.mjs';

export const name = 'encode';

export async function run({ quick, runs, warmup, log }) {
  const size = quick ? 10_000 : 1_000_000;
  const label = quick ? '10k' : '1M';
  const agui = aguiRun(mixedEvents(size / 200));
  const encoder = new EventEncoder();
  log(`encode: encodeSSE vs JSON.stringify vs EventEncoder, ${agui.length} events`);
  const results = await measure(
    [
      { name: 'encodeSSE', fn: () => drain(from(agui).pipe(encodeSSE())) },
      { name: 'stringify', fn: () => drain(from(agui).pipe(map((e) => 'data: ' + JSON.stringify(e) + '\n\n'))) },
      { name: 'EventEncoder', fn: () => drain(from(agui).pipe(map((e) => encoder.encodeSSE(e)))) },
    ],
    { runs, warmup },
  );
  const workload = `toAgui output of mixed ${label}`;
  return [
    speedRow({ item: 4, name: `encodeSSE vs map(JSON.stringify frame), ${workload}`, results, ours: 'encodeSSE', baseline: 'stringify', target: { op: '>=', value: 0.8 }, note: '≥ 0.8x = at most 1.25x the time' }),
    speedRow({ item: 4, name: `encodeSSE vs map(EventEncoder.encodeSSE), ${workload}`, results, ours: 'encodeSSE', baseline: 'EventEncoder' }),
  ];
}
