import { EventType, type Event } from '@ag-ui/core';
import { createMemoryRunStore } from '../../../lib/broker/createMemoryRunStore.js';
import type { RunRecord, RunStore } from '../../../lib/broker/runStore.js';
import { AguiRxError } from '../../../lib/protocol/errors.js';
import { createTestScheduler } from '../../support/helpers.js';

const S: Event = { type: EventType.RUN_STARTED, threadId: 't', runId: 'r' };
const C: Event = { type: EventType.CUSTOM, name: 'tick', value: 1 };
const D: Event = { type: EventType.CUSTOM, name: 'tick', value: 2 };
const F: Event = { type: EventType.RUN_FINISHED, threadId: 't', runId: 'r' };
const record = (runId = 'r'): RunRecord => ({ threadId: 't', runId, input: { threadId: 't', runId, messages: [], tools: [], context: [], forwardedProps: {} }, owner: 'i1', status: 'running', startedAt: 0, leaseUntil: Infinity });

/**
 * The memory store's read(): replay, then live, then completion right after the terminal entry.
 * Its appends are synchronous (the store's promise resolves later, but readers are told at once),
 * so a hot marble of appends drives it on the TestScheduler's frames.
 */
describe('createMemoryRunStore read()', () => {
  let testScheduler: ReturnType<typeof createTestScheduler>;
  let stores: RunStore[];
  const storeWithRun = () => {
    const store = createMemoryRunStore();
    stores.push(store);
    void store.createRun(record());
    return store;
  };
  beforeEach(() => {
    testScheduler = createTestScheduler();
    stores = [];
  });
  afterEach(() => Promise.all(stores.map((store) => store.close())));

  it('should emit each appended batch live and complete right after the terminal entry', () => {
    testScheduler.run(({ hot, expectObservable }) => {
      const store = storeWithRun();
      // prettier-ignore
      const e1 =       hot('--a---b----c--', { a: [S], b: [C, D], c: [F] });
      // prettier-ignore
      const expected =     '--a---b----(c|)';
      e1.subscribe((events) => void store.append('t', 'r', events));
      expectObservable(store.read('t', 'r')).toBe(expected, {
        a: [{ cursor: '1', event: S }],
        b: [
          { cursor: '2', event: C },
          { cursor: '3', event: D },
        ],
        c: [{ cursor: '4', event: F }],
      });
    });
  });

  it('should replay what the log holds in one batch, then go live, for a reader that comes late', () => {
    testScheduler.run(({ hot, expectObservable }) => {
      const store = storeWithRun();
      // prettier-ignore
      const e1 =       hot('--a---b----c--', { a: [S], b: [C, D], c: [F] });
      // prettier-ignore
      const e1subs =       '--------^------';
      // prettier-ignore
      const expected =     '--------r--(c|)';
      e1.subscribe((events) => void store.append('t', 'r', events));
      expectObservable(store.read('t', 'r'), e1subs).toBe(expected, {
        r: [
          { cursor: '1', event: S },
          { cursor: '2', event: C },
          { cursor: '3', event: D },
        ],
        c: [{ cursor: '4', event: F }],
      });
    });
  });

  it('should read strictly after a cursor', () => {
    testScheduler.run(({ hot, expectObservable }) => {
      const store = storeWithRun();
      // prettier-ignore
      const e1 =       hot('--a---b----c--', { a: [S], b: [C, D], c: [F] });
      // prettier-ignore
      const e1subs =       '--------^------';
      // prettier-ignore
      const expected =     '--------r--(c|)';
      e1.subscribe((events) => void store.append('t', 'r', events));
      expectObservable(store.read('t', 'r', '2'), e1subs).toBe(expected, { r: [{ cursor: '3', event: D }], c: [{ cursor: '4', event: F }] });
    });
  });

  it('should hold its live batches strictly after a cursor ahead of the log (one kept from an earlier run of the same id)', () => {
    testScheduler.run(({ hot, expectObservable }) => {
      const store = storeWithRun();
      // prettier-ignore
      const e1 =       hot('--a---b----c--', { a: [S], b: [C, D], c: [F] });
      // prettier-ignore
      const e1subs =       '^-------------';
      // Cursor 2 is ahead of the empty log: entries 1 and 2 are not after it, entries 3 and 4 are.
      // prettier-ignore
      const expected =     '------r----(c|)';
      e1.subscribe((events) => void store.append('t', 'r', events));
      expectObservable(store.read('t', 'r', '2'), e1subs).toBe(expected, { r: [{ cursor: '3', event: D }], c: [{ cursor: '4', event: F }] });
    });
  });

  it('should replay a finished run and complete at once, and be empty after its last cursor', () => {
    testScheduler.run(({ hot, expectObservable }) => {
      const store = storeWithRun();
      // prettier-ignore
      const e1 =       hot('-(abc)-', { a: [S], b: [C], c: [F] });
      // prettier-ignore
      const e1subs =       '---^---';
      // prettier-ignore
      const expected =     '---(r|)';
      e1.subscribe((events) => void store.append('t', 'r', events));
      expectObservable(store.read('t', 'r'), e1subs).toBe(expected, {
        r: [
          { cursor: '1', event: S },
          { cursor: '2', event: C },
          { cursor: '3', event: F },
        ],
      });
      expectObservable(store.read('t', 'r', '3'), e1subs).toBe('---|');
    });
  });

  it('should stop delivering when unsubscribed, while the log goes on', () => {
    testScheduler.run(({ hot, expectObservable }) => {
      const store = storeWithRun();
      // prettier-ignore
      const e1 =       hot('--a---b----c--', { a: [S], b: [C, D], c: [F] });
      // prettier-ignore
      const unsub =        '-----!';
      // prettier-ignore
      const expected =     '--a---';
      e1.subscribe((events) => void store.append('t', 'r', events));
      expectObservable(store.read('t', 'r'), unsub).toBe(expected, { a: [{ cursor: '1', event: S }] });
      expectObservable(store.read('t', 'r')).toBe('--a---b----(c|)', { a: [{ cursor: '1', event: S }], b: [{ cursor: '2', event: C }, { cursor: '3', event: D }], c: [{ cursor: '4', event: F }] });
    });
  });

  it('should error RUN_NOT_FOUND for an unknown run and INVALID_CURSOR for a malformed cursor', () => {
    testScheduler.run(({ expectObservable }) => {
      const store = storeWithRun();
      expectObservable(store.read('t', 'nope')).toBe(
        '#',
        undefined,
        new AguiRxError('RUN_NOT_FOUND', "Run 'nope' of thread 't' is not in the run store: it never started here, or it finished longer ago than the store retains runs."),
      );
      expectObservable(store.read('t', 'r', 'x1')).toBe('#', undefined, new AguiRxError('INVALID_CURSOR', "'x1' is not a cursor of this run log."));
    });
  });

  it('should keep the cursors of two runs of one thread ordered in one log', () => {
    testScheduler.run(({ hot, expectObservable }) => {
      const store = storeWithRun();
      void store.createRun(record('r2'));
      const S2: Event = { type: EventType.RUN_STARTED, threadId: 't', runId: 'r2' };
      // prettier-ignore
      const e1 =       hot('--a---b---', { a: [S], b: [C] });
      // prettier-ignore
      const e2 =       hot('----x---y-', { x: [S2], y: [F] });
      e1.subscribe((events) => void store.append('t', 'r', events));
      e2.subscribe((events) => void store.append('t', 'r2', events));
      expectObservable(store.read('t', 'r')).toBe('--a---b---', { a: [{ cursor: '1', event: S }], b: [{ cursor: '3', event: C }] });
      expectObservable(store.read('t', 'r2')).toBe('----x---(y|)', { x: [{ cursor: '2', event: S2 }], y: [{ cursor: '4', event: F }] });
    });
  });
});
