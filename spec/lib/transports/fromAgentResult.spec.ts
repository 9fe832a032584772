import { Observable, firstValueFrom, of, take, toArray } from 'rxjs';
import { AguiRxError } from '../../../lib/protocol/errors.js';
import { fromAgentResult, fromIterableInSlices } from '../../../lib/transports/fromAgentResult.js';
import { collect, errorOf } from '../../support/helpers.js';

/** A generator of `count` numbers that records how many were pulled and whether its `finally` ran. */
function counted(count: number) {
  const seen = { pulled: 0, returned: false };
  function* numbers() {
    try {
      for (let i = 0; i < count; i++) {
        seen.pulled++;
        yield i;
      }
    } finally {
      seen.returned = true;
    }
  }
  return { source: numbers(), seen };
}

/** The async twin of {@link counted}: every value is ready at once (a microtask), nothing waits on I/O. */
function countedAsync(count: number) {
  const seen = { pulled: 0, returned: false };
  async function* numbers() {
    try {
      for (let i = 0; i < count; i++) {
        seen.pulled++;
        yield i;
      }
    } finally {
      seen.returned = true;
    }
  }
  return { source: numbers(), seen };
}

/** A few turns of the event loop: as many slices as a pull that went on would have taken by then. */
async function turns(count = 3): Promise<void> {
  for (let i = 0; i < count; i++) await new Promise((resolve) => setImmediate(resolve));
}

describe('fromIterableInSlices', () => {
  it('should emit a short iterable during subscribe and complete, as from(array) does', () => {
    const values: number[] = [];
    let completed = false;
    fromIterableInSlices([1, 2, 3]).subscribe({ next: (value) => values.push(value), complete: () => (completed = true) });
    expect(values).toEqual([1, 2, 3]);
    expect(completed).toBe(true);
  });

  it('should give the event loop a turn after every slice of sliceEvents values', async () => {
    const { source } = counted(7);
    const seen: string[] = [];
    // A neighbour waiting for the event loop: it runs between the slices, not after the whole iterable.
    setImmediate(() => seen.push('neighbour'));
    await new Promise<void>((resolve) => fromIterableInSlices(source, { sliceEvents: 3, sliceMs: 1_000 }).subscribe({ next: (value) => seen.push(String(value)), complete: resolve }));
    expect(seen).toEqual(['0', '1', '2', 'neighbour', '3', '4', '5', '6']);
  });

  it('should end a slice after sliceMs even when fewer than sliceEvents values were pulled (the clock is read every 16 values)', async () => {
    const seen: string[] = [];
    function* slowValues() {
      for (let i = 0; i < 40; i++) {
        // Each value takes about 0.2 ms of synchronous work: 16 of them pass a 1 ms slice.
        const until = performance.now() + 0.2;
        while (performance.now() < until);
        yield i;
      }
    }
    setImmediate(() => seen.push('neighbour'));
    await new Promise<void>((resolve) => fromIterableInSlices(slowValues(), { sliceEvents: 1_000, sliceMs: 1 }).subscribe({ next: (value) => seen.push(String(value)), complete: resolve }));
    expect(seen.indexOf('neighbour')).toBe(16);
    expect(seen).toHaveLength(41);
  });

  it('should stop pulling and call return() when unsubscribed within the first slice', async () => {
    const { source, seen } = counted(1_000);
    expect(await firstValueFrom(fromIterableInSlices(source).pipe(take(5), toArray()))).toEqual([0, 1, 2, 3, 4]);
    expect(seen).toEqual({ pulled: 5, returned: true });
  });

  it('should stop pulling at the next slice and call return() when unsubscribed between slices', async () => {
    const { source, seen } = counted(1_000_000);
    const subscription = fromIterableInSlices(source, { sliceEvents: 100, sliceMs: 1_000 }).subscribe();
    expect(seen.pulled).toBe(100);
    await new Promise((resolve) => setImmediate(resolve));
    const pulled = seen.pulled;
    subscription.unsubscribe();
    expect(seen.returned).toBe(true);
    await turns();
    expect(seen.pulled).toBe(pulled);
    expect(pulled).toBeLessThan(1_000_000);
  });

  it('should pass on what the iterator throws, and not call return() after it', async () => {
    let returned = false;
    const failing: Iterable<number> = {
      [Symbol.iterator]: () => ({
        next: () => {
          throw new Error('the model failed');
        },
        return: () => {
          returned = true;
          return { done: true, value: undefined };
        },
      }),
    };
    expect(await errorOf(collect(fromIterableInSlices(failing)))).toEqual(new Error('the model failed'));
    expect(returned).toBe(false);
  });

  it('should pull an async generator in order, and yield to the event loop between its slices too', async () => {
    const { source, seen } = countedAsync(7);
    const log: string[] = [];
    setImmediate(() => log.push('neighbour'));
    await new Promise<void>((resolve) => fromIterableInSlices(source, { sliceEvents: 3, sliceMs: 1_000 }).subscribe({ next: (value) => log.push(String(value)), complete: resolve }));
    // Microtasks alone never let the neighbour in: the slice does.
    expect(log).toEqual(['0', '1', '2', 'neighbour', '3', '4', '5', '6']);
    expect(seen.returned).toBe(true);
  });

  it('should call an async generator\'s return() when unsubscribed, and stop pulling', async () => {
    const { source, seen } = countedAsync(1_000_000);
    expect(await firstValueFrom(fromIterableInSlices(source, { sliceEvents: 10 }).pipe(take(25), toArray()))).toHaveLength(25);
    await new Promise((resolve) => setImmediate(resolve));
    expect(seen.returned).toBe(true);
    expect(seen.pulled).toBe(25);
  });

  it('should pass on an async iterator\'s rejection', async () => {
    async function* failing(): AsyncGenerator<number> {
      yield 1;
      throw new Error('the stream broke');
    }
    const values: number[] = [];
    const error = await errorOf(new Promise((resolve, reject) => fromIterableInSlices(failing()).subscribe({ next: (value) => values.push(value), error: reject, complete: () => resolve(undefined) })));
    expect(values).toEqual([1]);
    expect(error).toEqual(new Error('the stream broke'));
  });

  it('should hold the next slice back until ready() settles', async () => {
    const { source, seen } = counted(10);
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let asked = 0;
    const done = collect(fromIterableInSlices(source, { sliceEvents: 4, ready: () => (++asked === 1 ? gate : undefined) }));
    expect(seen.pulled).toBe(4);
    await turns();
    expect(seen.pulled).toBe(4);
    release();
    expect(await done).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
  });

  it('should be independent per subscription of a re-iterable source (an array)', async () => {
    const source$ = fromIterableInSlices([1, 2, 3], { sliceEvents: 1 });
    expect(await Promise.all([collect(source$), collect(source$)])).toEqual([
      [1, 2, 3],
      [1, 2, 3],
    ]);
  });
});

describe('fromAgentResult', () => {
  it('should take an Observable as it is', () => {
    const events$ = of(1);
    expect(fromAgentResult(events$)).toBe(events$);
  });

  it('should take a promise of one event through from()', async () => {
    const event = { type: 'RUN_STARTED' };
    expect(await collect(fromAgentResult(Promise.resolve(event) as unknown as Observable<unknown>))).toEqual([event]);
  });

  it('should take what an async agent resolves to: an Observable, an array, an async generator, or one event', async () => {
    const event = { type: 'TEXT_MESSAGE_CHUNK', delta: 'a' };
    async function* generate() {
      yield event;
    }
    expect(await collect(fromAgentResult(Promise.resolve(of(event, event)) as unknown as Observable<unknown>))).toEqual([event, event]);
    expect(await collect(fromAgentResult(Promise.resolve([event]) as unknown as Observable<unknown>))).toEqual([event]);
    expect(await collect(fromAgentResult(Promise.resolve(generate()) as unknown as Observable<unknown>))).toEqual([event]);
    expect(await collect(fromAgentResult(Promise.resolve(event) as unknown as Observable<unknown>))).toEqual([event]);
    expect(await errorOf(collect(fromAgentResult(Promise.resolve('Hello') as unknown as Observable<unknown>)))).toMatchObject({ code: 'INVALID_AGENT_RESULT' });
  });

  it.each([
    ['undefined', undefined, 'undefined'],
    ['null', null, 'null'],
    ['a string', 'Hello', '"Hello"'],
    ['a number', 42, '42'],
    ['a plain object', { type: 'TEXT_MESSAGE_CHUNK' }, 'an object'],
  ])('should refuse %s with INVALID_AGENT_RESULT, saying what to return', (_name, value, described) => {
    let error: unknown;
    try {
      fromAgentResult(value as unknown as Observable<unknown>);
    } catch (thrown) {
      error = thrown;
    }
    expect(error).toBeInstanceOf(AguiRxError);
    expect((error as AguiRxError).code).toBe('INVALID_AGENT_RESULT');
    expect((error as Error).message).toContain(described);
    expect((error as Error).message).toContain('return an Observable, an iterable (an array, a generator) or an async iterable (an async generator) of AgentEvents');
  });
});
