import { EventType, type RunAgentInput } from '@ag-ui/core';
import { NEVER, concat, of, type Subscription } from 'rxjs';
import { createMemoryRunStore } from '../../../lib/broker/createMemoryRunStore.js';
import { createRunBroker, type BrokerActivity } from '../../../lib/broker/createRunBroker.js';
import type { RunStore } from '../../../lib/broker/runStore.js';

const input: RunAgentInput = { threadId: 't1', runId: 'r1', messages: [], tools: [], context: [], state: {}, forwardedProps: {} };
const access = { request: undefined };

/** A memory store whose `countReaders` answers only when the spec releases it, with what the store counts then; releasing resolves once it answered. */
function slowCountingStore(): { store: RunStore; pending: (() => Promise<void>)[] } {
  const inner = createMemoryRunStore();
  const pending: (() => Promise<void>)[] = [];
  const store: RunStore = {
    ...inner,
    countReaders: (...args) => new Promise<number>((resolve, reject) => pending.push(() => inner.countReaders(...args).then(resolve, reject))),
  };
  return { store, pending };
}

/** Resolves once every promise reaction queued now has run: the end of the current turn of the event loop, not a duration. */
const drainMicrotasks = () => new Promise((resolve) => setImmediate(resolve));

describe('createRunBroker detachment', () => {
  it('should not start the grace when a reader arrived while the last one\'s departure was being counted', async () => {
    const { store, pending } = slowCountingStore();
    const activity: BrokerActivity[] = [];
    // A long lease: no tick runs a check of its own during the case.
    const broker = createRunBroker({ store, detachGraceMs: 0, leaseMs: 600_000, authorize: () => true, onActivity: (entry) => activity.push(entry) });
    let aborted = false;
    const started = concat(of({ type: EventType.RUN_STARTED, threadId: 't1', runId: 'r1' } as const), NEVER);
    const first$ = await broker.run(
      input,
      (signal) => {
        signal.addEventListener('abort', () => (aborted = true));
        return started;
      },
      access,
    );
    const readerA: Subscription = first$.subscribe();
    // A leaves: its check asks the store how many readers there are, and waits.
    readerA.unsubscribe();
    expect(pending).toHaveLength(1);
    // B arrives before the store answers; its own check sees it.
    const second$ = await broker.events('t1', 'r1', undefined, access);
    const readerB = second$.subscribe();
    // The store answers A's stale question now: no reader registered with it (B is local).
    await Promise.all(pending.splice(0).map((answer) => answer()));
    // The stale check decides (and would report run-detached) in the reactions of that answer.
    await drainMicrotasks();
    expect(activity.filter((entry) => entry.type === 'run-detached')).toEqual([]);
    expect(aborted).toBe(false);
    readerB.unsubscribe();
    await broker.close();
  });
});
