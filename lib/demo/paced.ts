import { concatMap, from, map, of, timer, type Observable, type SchedulerLike } from 'rxjs';

/** The pause before each item after the first, in ms: a fixed number, or `[min, max]` for a varying pace. */
export type Pace = number | readonly [min: number, max: number];

/** The pause before item `index` (≥ 1), in ms: `[min, max]` varies deterministically with the index. */
export function paceDelay(pace: Pace, index: number): number {
  if (typeof pace === 'number') return pace;
  const [min, max] = pace;
  // A fixed scramble of the index, so that runs look live yet are reproducible.
  return min + ((index * 7919) % (max - min + 1));
}

/**
 * Emits `items` one by one with an RxJS timer between them (none before the first), then completes.
 * A pace of 0 emits everything synchronously. Unsubscribing clears the pending timer.
 *
 * ```text
 * items:   [a, b, c], pace 30
 * output:  a 29ms b 29ms (c|)
 * ```
 *
 * @param items What to emit.
 * @param pace The pause between items, in ms, or `[min, max]`.
 * @param scheduler The timers' scheduler (a TestScheduler in marble specs). Default: async.
 * @return A cold Observable of the items.
 */
export function paced<T>(items: readonly T[], pace: Pace, scheduler?: SchedulerLike): Observable<T> {
  if (pace === 0 || (Array.isArray(pace) && pace[1] === 0)) return from(items);
  return from(items.map((item, index) => [item, index] as const)).pipe(
    concatMap(([item, index]) => (index === 0 ? of(item) : timer(paceDelay(pace, index), scheduler).pipe(map(() => item)))),
  );
}
