import { Observable, Subject, Subscriber, lastValueFrom, map, of, pipe, take, toArray, type OperatorFunction } from 'rxjs';
import { fuse, createOperator } from '../../../lib/protocol/createOperator.js';
import { collect, createTestScheduler } from '../../support/helpers.js';

/** A pass-through operator built with `createOperator`, counting what it handled. */
const passThrough = <T>() =>
  createOperator<T, T>((subscriber) => ({
    next: (value) => subscriber.next(value),
    complete: () => subscriber.complete(),
    error: (error) => subscriber.error(error),
  }));

describe('createOperator', () => {
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
      const failing = createOperator<string, string>((subscriber) => ({
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
    const counting = createOperator<string, number>((subscriber) => {
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

  it('should call every handler on its handlers object, so that methods shared by all subscriptions can keep state there', () => {
    interface Counter {
      readonly out: { next(value: number): void; complete(): void };
      count: number;
      flushed: boolean;
    }
    // One prototype for every subscription; each subscription's state is its own record.
    const methods = {
      next(this: Counter) {
        this.out.next(++this.count);
      },
      flush(this: Counter) {
        this.flushed = true;
        this.out.next(-this.count);
      },
    };
    const counting = createOperator<unknown, number>((subscriber) => Object.assign(Object.create(methods) as Counter & typeof methods, { out: subscriber, count: 0, flushed: false }));
    createTestScheduler().run(({ cold, expectObservable }) => {
      // prettier-ignore
      const e1 = cold('-a-b-|');
      // prettier-ignore
      const e2 = cold('-a---#');
      expectObservable(e1.pipe(counting)).toBe('-1-2-(x|)', { 1: 1, 2: 2, x: -2 });
      // The first flushes -1 into the second, which counts it (2), then flushes its own (-2).
      expectObservable(e2.pipe(fuse(counting, counting))).toBe('-1---(xy#)', { 1: 1, x: 2, y: -2 });
    });
  });
  it('should let the error handler flush before erroring', () => {
    const testScheduler = createTestScheduler();
    testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
      const flushing = createOperator<number, number>((subscriber) => ({
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
    const twice = createOperator<string, string>((subscriber) => ({
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
    const twice = createOperator<string, string>((subscriber) => ({
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

/**
 * A recording operator for the fuse specs: `tag` is appended to each value; `throwOn` makes `next`
 * throw; `endOn` ends the output (and stops the source) on that value; `open` is flushed as
 * `tag + '-flush'`; its teardown is logged in `log`.
 */
function recording(tag: string, log: string[], behaviour: { throwOn?: string; endOn?: string; endAtInit?: boolean } = {}) {
  return createOperator<string, string>((subscriber, context) => {
    log.push(`${tag}:init`);
    if (behaviour.endAtInit) {
      subscriber.next(`${tag}-at-init`);
      context.unsubscribeSource();
      subscriber.complete();
    }
    return {
      next: (value) => {
        if (value.startsWith(behaviour.throwOn ?? '\u0000')) throw new Error(`${tag} refused ${value}`);
        subscriber.next(`${value}${tag}`);
        if (value.startsWith(behaviour.endOn ?? '\u0000')) {
          context.unsubscribeSource();
          subscriber.complete();
        }
      },
      flush: () => subscriber.next(`${tag}-flush`),
      subscribed: () => void log.push(`${tag}:subscribed`),
      teardown: () => void log.push(`${tag}:teardown`),
    };
  });
}

describe('fuse', () => {
  it('should emit what pipe() emits, in the same frames', () => {
    const testScheduler = createTestScheduler();
    testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
      // prettier-ignore
      const e1 =  cold('-a-b--|');
      const e1subs =   '^-----!';
      const expected = '-x-y--(fg|)';
      const log: string[] = [];
      expectObservable(e1.pipe(fuse(recording('1', log), recording('2', log)))).toBe(expected, { x: 'a12', y: 'b12', f: '1-flush2', g: '2-flush' });
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    });
  });

  it('should route a throw to the operator that threw: it flushes and errors, the ones before it are torn down unflushed', () => {
    const testScheduler = createTestScheduler();
    testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
      // prettier-ignore
      const e1 =  cold('-a-b-c|');
      const e1subs =   '^--!';
      const expected = '-x-(fg#)';
      const log: string[] = [];
      const fused = fuse(recording('1', log), recording('2', log, { throwOn: 'b' }), recording('3', log));
      expectObservable(e1.pipe(fused)).toBe(expected, { x: 'a123', f: '2-flush3', g: '3-flush' }, new Error('2 refused b1'));
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
      testScheduler.flush();
      expect(log.filter((entry) => entry.endsWith('teardown'))).toEqual(['1:teardown', '2:teardown', '3:teardown']);
    });
  });

  it('should stop the source and tear down the operators before one that ends early', () => {
    const testScheduler = createTestScheduler();
    testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
      // prettier-ignore
      const e1 =  cold('-a-b-c|');
      const e1subs =   '^--!';
      const expected = '-x-(y|)';
      const log: string[] = [];
      const fused = fuse(recording('1', log), recording('2', log, { endOn: 'b' }));
      expectObservable(e1.pipe(fused)).toBe(expected, { x: 'a12', y: 'b12' });
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
      testScheduler.flush();
      // Operator 1 goes when 2 stops its source; 2 when the subscriber is done.
      expect(log.filter((entry) => entry.endsWith('teardown'))).toEqual(['1:teardown', '2:teardown']);
    });
  });

  it('should set operators up from the subscriber end, and never subscribe the source when one ends at init', () => {
    const log: string[] = [];
    let subscribed = 0;
    const source$ = new Observable<string>(() => void subscribed++);
    const seen: string[] = [];
    source$.pipe(fuse(recording('1', log), recording('2', log, { endAtInit: true }), recording('3', log))).subscribe({
      next: (value) => seen.push(value),
      complete: () => seen.push('|'),
    });
    expect(seen).toEqual(['2-at-init3', '3-flush', '|']);
    expect(subscribed).toBe(0);
    expect(log).toEqual(['3:init', '2:init', '2:teardown', '3:teardown']);
  });

  it('should tell each operator, first to last, once its source is subscribed', () => {
    const log: string[] = [];
    new Observable<string>((subscriber) => subscriber.next('a')).pipe(fuse(recording('1', log), recording('2', log))).subscribe();
    expect(log.filter((entry) => !entry.endsWith('teardown'))).toEqual(['2:init', '1:init', '1:subscribed', '2:subscribed']);
  });

  it('should hold a value fed back synchronously until the current one has gone through every operator', () => {
    const log: string[] = [];
    const source$ = new Subject<string>();
    const seen: string[] = [];
    source$.pipe(fuse(recording('1', log), recording('2', log))).subscribe((value) => {
      seen.push(value);
      if (value === 'a12') source$.next('b');
    });
    source$.next('a');
    expect(seen).toEqual(['a12', 'b12']);
  });

  it('should fall back to pipe() when an operator was not built by createOperator', async () => {
    const log: string[] = [];
    const mixed: OperatorFunction<string, string> = fuse(recording('1', log), map((value: string) => value.toUpperCase()));
    expect(await collect(of('a').pipe(mixed))).toEqual(['A1', '1-FLUSH']);
    expect(await collect(of('a').pipe(pipe(recording('1', log), map((value: string) => value.toUpperCase()))))).toEqual(['A1', '1-FLUSH']);
  });
});

describe('fuse with operators that pass per-token events on', () => {
  type Tagged = { type: string; seen?: string[] };
  /** Appends `tag` to `seen` of every event it handles; declares it passes per-token events on unchanged. */
  const marking = (tag: string, handled: string[]) =>
    createOperator<Tagged, Tagged>(
      (subscriber) => ({
        next: (event) => {
          handled.push(`${tag}:${event.type}`);
          subscriber.next(event);
        },
      }),
      { passesTokenEvents: true },
    );

  it('should send per-token events past them, and every other event through them', async () => {
    const handled: string[] = [];
    const events: Tagged[] = [{ type: 'TEXT_MESSAGE_START' }, { type: 'TEXT_MESSAGE_CONTENT' }, { type: 'TOOL_CALL_ARGS' }, { type: 'REASONING_MESSAGE_CONTENT' }, { type: 'STATE_SNAPSHOT' }];
    const output = await collect(of(...events).pipe(fuse(passThrough<Tagged>(), marking('m', handled), passThrough<Tagged>())));
    expect(output.map((event) => event.type)).toEqual(events.map((event) => event.type));
    expect(handled).toEqual(['m:TEXT_MESSAGE_START', 'm:STATE_SNAPSHOT']);
  });

  it('should drop per-token events once the operator they skip has closed', () => {
    const handled: string[] = [];
    const source$ = new Subject<Tagged>();
    const seen: string[] = [];
    // The first operator sends two events for each input; the skipped one ends the stream on 'END'.
    const twice = createOperator<Tagged, Tagged>((subscriber) => ({
      next: (event) => {
        subscriber.next(event);
        subscriber.next({ type: 'TEXT_MESSAGE_CONTENT' });
      },
    }));
    const ending = createOperator<Tagged, Tagged>(
      (subscriber, context) => ({
        next: (event) => {
          subscriber.next(event);
          if (event.type === 'END') {
            context.unsubscribeSource();
            subscriber.complete();
          }
        },
      }),
      { passesTokenEvents: true },
    );
    source$.pipe(fuse(twice, ending, marking('m', handled))).subscribe({ next: (event) => seen.push(event.type), complete: () => seen.push('|') });
    source$.next({ type: 'A' });
    source$.next({ type: 'END' });
    source$.next({ type: 'B' });
    expect(seen).toEqual(['A', 'TEXT_MESSAGE_CONTENT', 'END', '|']);
  });

  describe('when an operator says it passes message content (passesMessageContentWhenIdle)', () => {
    // Passes message content unchanged until it sees 'BUSY', and again after 'IDLE'; records what it handled.
    const idling = (handled: string[]) =>
      createOperator<Tagged, Tagged>(
        (subscriber, context) => {
          context.passMessageContent(true);
          return {
            next: (event) => {
              handled.push(event.type);
              subscriber.next(event);
              if (event.type === 'BUSY') context.passMessageContent(false);
              if (event.type === 'IDLE') context.passMessageContent(true);
            },
          };
        },
        { passesMessageContentWhenIdle: true },
      );

    it('should send message content past it only while it says so, in order, and ARGS always through it', async () => {
      const handled: string[] = [];
      const handledAfter: string[] = [];
      const types = ['TEXT_MESSAGE_CONTENT', 'TOOL_CALL_ARGS', 'BUSY', 'TEXT_MESSAGE_CONTENT', 'REASONING_MESSAGE_CONTENT', 'IDLE', 'REASONING_MESSAGE_CONTENT', 'TEXT_MESSAGE_CONTENT'];
      const output = await collect(of(...types.map((type) => ({ type }))).pipe(fuse(passThrough<Tagged>(), idling(handled), marking('m', handledAfter), idling([]))));
      expect(output.map((event) => event.type)).toEqual(types);
      expect(handled).toEqual(['TOOL_CALL_ARGS', 'BUSY', 'TEXT_MESSAGE_CONTENT', 'REASONING_MESSAGE_CONTENT', 'IDLE']);
      // A stage that passes every token event, after it, is skipped too.
      expect(handledAfter).toEqual(['m:BUSY', 'm:IDLE']);
    });

    it('should be read by every event when it is the first operator', async () => {
      const handled: string[] = [];
      await collect(of({ type: 'TEXT_MESSAGE_CONTENT' }).pipe(idling(handled)));
      expect(handled).toEqual(['TEXT_MESSAGE_CONTENT']);
    });
  });
});

describe('fuse with a first operator that tells contentFor and operators that tell passesAsIs', () => {
  // Sends 'tok' on as 'TOK' (and says so through contentFor), anything else as it is.
  const continuing = (handled: string[]) =>
    createOperator<string, string>((subscriber) => ({
      next: (value) => {
        handled.push(value);
        subscriber.next(value === 'tok' ? 'TOK' : value);
      },
      contentFor: (value) => (value === 'tok' ? 'TOK' : undefined),
    }));
  // Passes every value on; says it passes as it is what `accepts` accepts.
  const passing = (handled: string[], accepts: (value: unknown) => boolean) =>
    createOperator<string, string>((subscriber) => ({
      next: (value) => {
        handled.push(value);
        subscriber.next(value);
      },
      passesAsIs: accepts,
    }));

  it('should send a continuing value straight to the subscriber, in the same frames as pipe()', () => {
    const first: string[] = [];
    const second: string[] = [];
    createTestScheduler().run(({ cold, expectObservable }) => {
      const values = { t: 'tok', a: 'a', T: 'TOK' };
      const source = cold('-t-a-(tt)-|', values);
      expectObservable(source.pipe(fuse(continuing(first), passing(second, () => true)))).toBe('-T-a-(TT)-|', values);
      expectObservable(source.pipe(continuing([]), passing([], () => true))).toBe('-T-a-(TT)-|', values);
    });
    // Neither operator's next saw the tokens: only 'a' went through them.
    expect(first).toEqual(['a']);
    expect(second).toEqual(['a']);
  });

  it("should send a value the usual way when an operator on the way does more with it than pass it", async () => {
    const first: string[] = [];
    const second: string[] = [];
    const output = await collect(of('tok', 'tok').pipe(fuse(continuing(first), passing(second, () => false), map((value) => value.toLowerCase()))));
    expect(output).toEqual(['tok', 'tok']);
    // The first operator's answer (contentFor) is sent as its next would send it: to the next operator.
    expect(first).toEqual([]);
    expect(second).toEqual(['TOK', 'TOK']);
  });

  it('should take the usual way when an operator without passesAsIs reads the content after the first', async () => {
    const first: string[] = [];
    expect(await collect(of('tok').pipe(fuse(continuing(first), passThrough<string>())))).toEqual(['TOK']);
    expect(first).toEqual(['tok']);
  });

  it('should send nothing once the operators have closed', () => {
    const first: string[] = [];
    const source = new Subject<string>();
    const output: string[] = [];
    const subscription = source.pipe(fuse(continuing(first), passing([], () => true))).subscribe((value) => output.push(value));
    source.next('tok');
    subscription.unsubscribe();
    source.next('tok');
    expect(output).toEqual(['TOK']);
  });

  it("should route a throw from the subscriber to the last operator's error path, as its next would", () => {
    const errors: unknown[] = [];
    const failing = createOperator<string, string>((subscriber) => ({
      next: (value) => subscriber.next(value),
      passesAsIs: () => true,
      error: (error) => {
        errors.push(error);
        subscriber.error(error);
      },
    }));
    const received: unknown[] = [];
    // A Subscriber is taken as it is (no SafeSubscriber to catch what its next throws).
    class Throwing extends Subscriber<string> {
      override next(): void {
        throw new Error('subscriber failed');
      }
    }
    const subscriber = new Throwing({ next: () => undefined, error: (error: unknown) => void received.push(error), complete: () => undefined });
    of('tok').pipe(fuse(continuing([]), failing)).subscribe(subscriber);
    expect((errors[0] as Error).message).toBe('subscriber failed');
    expect((received[0] as Error).message).toBe('subscriber failed');
  });
});

