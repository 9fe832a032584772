import { Observable, Subject, lastValueFrom, of, take, toArray } from 'rxjs';
import { operate } from '../../lib/operate.js';
import { collect, createTestScheduler } from '../support/helpers.js';

/** A pass-through operator built with `operate`, counting what it handled. */
const passThrough = <T>() =>
  operate<T, T>((subscriber) => ({
    next: (value) => subscriber.next(value),
    complete: () => subscriber.complete(),
    error: (error) => subscriber.error(error),
  }));

describe('operate', () => {
  it('should stop a synchronous source as soon as a take downstream has enough', async () => {
    let emitted = 0;
    const source$ = new Observable<number>((subscriber) => {
      while (!subscriber.closed && emitted < 1000) subscriber.next(++emitted);
    });
    expect(await collect(source$.pipe(passThrough(), take(3)))).toEqual([1, 2, 3]);
    expect(emitted).toBe(3);
  });

  it('should not pull the rest of an of() once the subscriber is gone', async () => {
    const pulled: number[] = [];
    const source$ = new Observable<number>((subscriber) => {
      for (const n of [1, 2, 3, 4]) {
        if (subscriber.closed) return;
        pulled.push(n);
        subscriber.next(n);
      }
      subscriber.complete();
    });
    await lastValueFrom(source$.pipe(passThrough(), take(2), toArray()));
    expect(pulled).toEqual([1, 2]);
  });

  it('should route a throwing handler to the error handler and unsubscribe the source', () => {
    const testScheduler = createTestScheduler();
    testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
      // prettier-ignore
      const e1 =  cold('-a-b-c|');
      const e1subs =   '^--!';
      const expected = '-a-#';
      const failing = operate<string, string>((subscriber) => ({
        next: (value) => {
          if (value === 'b') throw new Error('bad b');
          subscriber.next(value);
        },
        complete: () => subscriber.complete(),
        error: (error) => subscriber.error(error),
      }));
      expectObservable(e1.pipe(failing)).toBe(expected, undefined, new Error('bad b'));
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    });
  });

  it('should keep state per subscription', async () => {
    const counting = operate<string, number>((subscriber) => {
      let count = 0;
      return {
        next: () => subscriber.next(++count),
        complete: () => subscriber.complete(),
        error: (error) => subscriber.error(error),
      };
    });
    const piped$ = of('a', 'b').pipe(counting);
    expect(await collect(piped$)).toEqual([1, 2]);
    expect(await collect(piped$)).toEqual([1, 2]);
  });

  it('should let the error handler flush before erroring', () => {
    const testScheduler = createTestScheduler();
    testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
      const flushing = operate<number, number>((subscriber) => ({
        next: (value) => subscriber.next(value),
        complete: () => subscriber.complete(),
        error: (error) => {
          subscriber.next(-1);
          subscriber.error(error);
        },
      }));
      // prettier-ignore
      const e1 =  cold('-a--#', { a: 1 });
      const e1subs =   '^---!';
      const expected = '-a--(z#)';
      expectObservable(e1.pipe(flushing)).toBe(expected, { a: 1, z: -1 });
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    });
  });
  it("should finish one value's outputs before handling a value fed back synchronously", () => {
    const twice = operate<string, string>((subscriber) => ({
      next: (value) => {
        subscriber.next(value);
        subscriber.next(`${value}!`);
      },
    }));
    const source$ = new Subject<string>();
    const seen: string[] = [];
    source$.pipe(twice).subscribe((value) => {
      seen.push(value);
      if (value === 'a') source$.next('x');
    });
    source$.next('a');
    expect(seen).toEqual(['a', 'a!', 'x', 'x!']);
  });

  it('should hold a completion fed back synchronously until the current value is handled', () => {
    const twice = operate<string, string>((subscriber) => ({
      next: (value) => {
        subscriber.next(value);
        subscriber.next(`${value}!`);
      },
      flush: () => subscriber.next('flushed'),
    }));
    const source$ = new Subject<string>();
    const seen: string[] = [];
    source$.pipe(twice).subscribe({ next: (value) => {
      seen.push(value);
      if (value === 'a') source$.complete();
    }, complete: () => seen.push('|') });
    source$.next('a');
    expect(seen).toEqual(['a', 'a!', 'flushed', '|']);
  });

  it('should still complete, and report it, when the source\'s teardown throws', async () => {
    const warn = jest.spyOn(console, 'warn').mockImplementation(() => undefined);
    try {
      const source$ = new Observable<string>((subscriber) => {
        subscriber.next('a');
        subscriber.complete();
        return () => {
          throw new Error('cleanup failed');
        };
      });
      expect(await collect(source$.pipe(passThrough()))).toEqual(['a']);
      expect(warn.mock.calls.map(([line]) => line)).toEqual([
        "[agui-rx] A source's teardown threw while it was unsubscribed: cleanup failed. Fix the cleanup function your Observable returns.",
      ]);
    } finally {
      warn.mockRestore();
    }
  });

  it('should not throw into the caller that unsubscribes when the source\'s teardown throws', () => {
    const warn = jest.spyOn(console, 'warn').mockImplementation(() => undefined);
    try {
      const subscription = new Observable<string>(() => () => {
        throw new Error('cleanup failed');
      })
        .pipe(passThrough())
        .subscribe();
      expect(() => subscription.unsubscribe()).not.toThrow();
      expect(warn).toHaveBeenCalledTimes(1);
    } finally {
      warn.mockRestore();
    }
  });
});
