import fc from 'fast-check';
import { concat, from, materialize, Observable, pipe, take, throwError, toArray, firstValueFrom } from 'rxjs';
import type { AgentEvent } from '../../lib/protocol/agentEvent.js';
import type { AguiDiagnostic } from '../../lib/protocol/diagnostics.js';
import { activityDelta } from '../../operators/activityDelta.js';
import { distinctIds } from '../../operators/distinctIds.js';
import { mapRunLifecycle } from '../../operators/mapRunLifecycle.js';
import { mapStepLifecycle } from '../../operators/mapStepLifecycle.js';
import { openMessageStartContentEnd } from '../../operators/openMessageStartContentEnd.js';
import { stateDelta } from '../../operators/stateDelta.js';
import { toAgui } from '../../operators/toAgui.js';
import { toolCallCorrelator } from '../../operators/toolCallCorrelator.js';
import { sequentialIds } from '../support/helpers.js';
import { cutCase, hostileCase, type HostileCase } from './arbitraries.js';

/**
 * toAgui runs its seven operators fused into one subscription (lib/protocol/createOperator.ts `fuse`). Whatever the
 * input, that must be indistinguishable from `pipe()` of the same operators: same notifications,
 * same diagnostics, same teardown.
 */
const totalRuns = Number(process.env.FUZZ_RUNS ?? 10000);
const numRuns = Math.max(1, Math.round(totalRuns * 0.1));
const seed = process.env.FUZZ_SEED === undefined ? undefined : Number(process.env.FUZZ_SEED);
const params = { numRuns, ...(seed === undefined ? {} : { seed }) };
const run = { threadId: 'thread-1', runId: 'run-1' };

function source(events: readonly unknown[], errorAt?: number): Observable<AgentEvent> {
  if (errorAt === undefined) return from(events as AgentEvent[]);
  return concat(from(events.slice(0, errorAt) as AgentEvent[]), throwError(() => new Error('agent failed')));
}

/** The notifications, diagnostics and source teardowns of one run through `build`'s operator. */
async function observe({ events, errorAt, takeCount }: HostileCase, fused: boolean) {
  const diagnostics: string[] = [];
  const options = { ...run, generateId: sequentialIds('id-'), onDiagnostic: (d: AguiDiagnostic) => void diagnostics.push(d.message) };
  const operator = fused
    ? toAgui(options)
    : pipe(
        openMessageStartContentEnd(options),
        toolCallCorrelator(options),
        distinctIds(options),
        mapStepLifecycle(options),
        stateDelta({ onDiagnostic: options.onDiagnostic }),
        activityDelta({ onDiagnostic: options.onDiagnostic }),
        mapRunLifecycle(options),
      );
  let tornDown = 0;
  const agent$ = new Observable<AgentEvent>((subscriber) => {
    const subscription = source(events, errorAt).subscribe(subscriber);
    return () => {
      tornDown++;
      subscription.unsubscribe();
    };
  });
  const output$ = takeCount === undefined ? agent$.pipe(operator) : agent$.pipe(operator, take(takeCount));
  const notifications = await firstValueFrom(output$.pipe(materialize(), toArray()));
  return { notifications: JSON.parse(JSON.stringify(notifications)), diagnostics, tornDown };
}

describe('fuse (toAgui) under fuzzing (fast-check)', () => {
  it('should emit exactly what pipe() of the same seven operators emits, for hostile and cut-short input', async () => {
    await fc.assert(
      fc.asyncProperty(fc.oneof(hostileCase, cutCase), async (testCase: HostileCase) => {
        const fused = await observe(testCase, true);
        const piped = await observe(testCase, false);
        expect(fused).toEqual(piped);
      }),
      params,
    );
  }, 120_000);
});
