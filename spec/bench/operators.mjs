// Item 3: each operator alone against a bare map, on the workload it is made for.
import {
  activityDelta,
  coalesceDeltas,
  mapRunLifecycle,
  mapStepLifecycle,
  messagesSnapshot,
  openMessageStartContentEnd,
  stateDelta,
  toolCallCorrelator,
} from 'agui-rx';
import { from, map } from 'rxjs';
import { measure, speedRow } from './harness.mjs';
import { aguiRun, drain, mixedEvents, onDiagnostic, runOptions } from './workloads.mjs';

export const name = 'operators';

export async function run({ quick, runs, warmup, log }) {
  const size = quick ? 10_000 : 1_000_000;
  const label = quick ? '10k' : '1M';
  const mixed = mixedEvents(size / 200);
  // The same turns with steps around them, and with activity snapshots instead of state ones.
  const withSteps = mixedEvents(size / 200, { steps: true });
  const withActivity = mixedEvents(size / 200, { activity: true });
  // toAgui's output, collected once: well-formed AG-UI for the operators that expect it.
  const agui = aguiRun(mixed);
  // The same run without its RUN_STARTED / RUN_FINISHED: what mapRunLifecycle is given by toAgui.
  const inner = agui.filter((e) => e.type !== 'RUN_STARTED' && e.type !== 'RUN_FINISHED');
  const aguiLabel = `toAgui output of mixed ${label} (${(agui.length / 1e6).toFixed(2)}M)`;
  const snapshotInput = agui;
  const snapshotLabel = aguiLabel;

  const cases = [
    { op: 'openMessageStartContentEnd', input: mixed, workload: `mixed ${label}`, make: () => openMessageStartContentEnd({ onDiagnostic }) },
    { op: 'toolCallCorrelator', input: mixed, workload: `mixed ${label}`, make: () => toolCallCorrelator({ onDiagnostic }) },
    { op: 'mapStepLifecycle', input: withSteps, workload: `mixed ${label} + a step per turn`, make: () => mapStepLifecycle({ onDiagnostic }) },
    { op: 'stateDelta', input: mixed, workload: `mixed ${label}`, make: () => stateDelta() },
    { op: 'activityDelta', input: withActivity, workload: `mixed ${label}, ACTIVITY_SNAPSHOT for STATE_SNAPSHOT`, make: () => activityDelta() },
    { op: 'mapRunLifecycle', input: inner, workload: aguiLabel, make: () => mapRunLifecycle(runOptions()) },
    { op: 'coalesceDeltas', input: agui, workload: aguiLabel, make: () => coalesceDeltas({ intervalMs: 50, maxChars: 256 }) },
    { op: 'messagesSnapshot', input: snapshotInput, workload: snapshotLabel, make: () => messagesSnapshot() },
  ];
  const rows = [];
  for (const { op, input, workload, make } of cases) {
    log(`operators: ${op} vs map, ${workload}`);
    const results = await measure(
      [
        { name: op, fn: () => drain(from(input).pipe(make())) },
        { name: 'map', fn: () => drain(from(input).pipe(map((e) => ({ ...e })))) },
      ],
      { runs, warmup },
    );
    rows.push(speedRow({ item: 3, name: `${op} alone vs bare map, ${workload}`, results, ours: op, baseline: 'map' }));
  }
  return rows;
}
