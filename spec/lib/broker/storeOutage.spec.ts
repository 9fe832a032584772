import { EventType, type Event, type RunAgentInput } from '@ag-ui/core';
import { Observable, Subject, firstValueFrom, toArray, type Observer } from 'rxjs';
import { createMemoryRunStore } from '../../../lib/broker/createMemoryRunStore';
import { createRunBroker, type BrokerActivity, type RunBroker } from '../../../lib/broker/createRunBroker';
import type { RunStore } from '../../../lib/broker/runStore';
import { AguiRxError } from '../../../lib/protocol/errors';
import { toAgui } from '../../../operators/toAgui';
import type { AgentEvent } from '../../../lib/protocol/agentEvent';
import { runWithOracle } from '../../support/oracle';
import { from } from 'rxjs';

const input: RunAgentInput = { threadId: 't1', runId: 'r1', messages: [{ id: 'u1', role: 'user', content: 'hi' }], tools: [], context: [], state: {}, forwardedProps: {} };
const access = { request: undefined };

/** A memory store whose reads and appends start failing with STORE_UNAVAILABLE when `down()` is called, as a Redis that went away. */
/** Starts run r1 on `broker` with an agent fed by hand: its events, the run's frames, and whether the agent was aborted. */
async function startRun(broker: RunBroker) {
  const agent$ = new Subject<AgentEvent>();
  let aborted = false;
  const frames$ = await broker.run(
    input,
    (signal) => {
      signal.addEventListener('abort', () => (aborted = true));
      return agent$.pipe(toAgui({ threadId: 't1', runId: 'r1', input, signal }));
    },
    access,
  );
  return { agent$, frames$, aborted: () => aborted };
}

function failingStore(): { store: RunStore; down(): void } {
  const inner = createMemoryRunStore();
  let isDown = false;
  const failures = new Set<Observer<never>>();
  const unavailable = () => new AguiRxError('STORE_UNAVAILABLE', 'The run store (a test double of a Redis that went away) cannot be reached.');
  const store: RunStore = {
    ...inner,
    // It fails as a shared store does: not one in this process.
    inProcess: false,
    append: (threadId, runId, events) => (isDown ? Promise.reject(unavailable()) : inner.append(threadId, runId, events)),
    renewLease: (...args) => (isDown ? Promise.reject(unavailable()) : inner.renewLease(...args)),
    read: (threadId, runId, after) =>
      new Observable((subscriber) => {
        if (isDown) return subscriber.error(unavailable());
        failures.add(subscriber as Observer<never>);
        const subscription = inner.read(threadId, runId, after).subscribe(subscriber);
        return () => {
          failures.delete(subscriber as Observer<never>);
          subscription.unsubscribe();
        };
      }),
  };
  return {
    store,
    down() {
      isDown = true;
      for (const subscriber of failures) subscriber.error(unavailable());
    },
  };
}

describe('createRunBroker when its store fails', () => {
  it('should keep streaming to readers on the owner from memory, then end with the run as the agent ends it', async () => {
    const { store, down } = failingStore();
    const broker = createRunBroker({ store, leaseMs: 60_000 });
    const agent$ = new Subject<AgentEvent>();
    const frames$ = await broker.run(input, (signal) => agent$.pipe(toAgui({ threadId: 't1', runId: 'r1', input, signal })), access);
    const frames = firstValueFrom(frames$.pipe(toArray()));
    agent$.next({ type: EventType.TEXT_MESSAGE_CHUNK, messageId: 'm1', delta: 'Hello' } as AgentEvent);
    await new Promise((resolve) => setImmediate(resolve));
    down();
    agent$.next({ type: EventType.TEXT_MESSAGE_CHUNK, messageId: 'm1', delta: ', world' } as AgentEvent);
    agent$.complete();
    const received = await frames;
    const events = received.map((frame) => frame.event);
    expect(events.map((event) => event.type)).toEqual(['RUN_STARTED', 'TEXT_MESSAGE_START', 'TEXT_MESSAGE_CONTENT', 'TEXT_MESSAGE_CONTENT', 'TEXT_MESSAGE_END', 'RUN_FINISHED']);
    // Written events keep their cursors; those the store never took have none.
    expect(received.slice(0, 3).every((frame) => typeof frame.cursor === 'string')).toBe(true);
    expect(received.slice(3).every((frame) => frame.cursor === undefined)).toBe(true);
    const run = await runWithOracle(from(events as Event[]));
    expect(run.messages.at(-1)).toMatchObject({ id: 'm1', role: 'assistant', content: 'Hello, world' });
    await broker.close();
  });

  it('should give the run up past its lease, report what was not written, and end its local readers with a RUN_ERROR saying so', async () => {
    const { store, down } = failingStore();
    const activity: BrokerActivity[] = [];
    const broker = createRunBroker({ store, leaseMs: 300, onActivity: (entry) => activity.push(entry) });
    const { agent$, frames$, aborted } = await startRun(broker);
    const frames = firstValueFrom(frames$.pipe(toArray()));
    agent$.next({ type: EventType.TEXT_MESSAGE_CHUNK, messageId: 'm1', delta: 'Hello' } as AgentEvent);
    await new Promise((resolve) => setImmediate(resolve));
    down();
    agent$.next({ type: EventType.TEXT_MESSAGE_CHUNK, messageId: 'm1', delta: ' again' } as AgentEvent);
    const received = await frames;
    const last = received.at(-1)!.event as Event & { code?: string; message?: string };
    expect(last).toMatchObject({ type: EventType.RUN_ERROR, code: 'STORE_UNAVAILABLE' });
    expect(last.message).toMatch(/could not be written to the run store for \d+ ms .*: \d+ events were not written, so the run was stopped/);
    // The message it was in the middle of is ended before the RUN_ERROR: nothing is left half-open.
    expect(received.slice(-2).map((frame) => frame.event)).toEqual([{ type: EventType.TEXT_MESSAGE_END, messageId: 'm1' }, last]);
    expect(aborted()).toBe(true);
    expect(activity.some((entry) => entry.type === 'store-error' && entry.unwritten > 0)).toBe(true);
    // What the reader got is still a stream the official client accepts.
    await expect(runWithOracle(from(received.map((frame) => frame.event)))).resolves.toBeDefined();
    await broker.close();
  });

  it.each([
    ['RUN_NOT_FOUND', 'the store lost the run (a Redis restarted without its data)'],
    ['RUN_ENDED', 'another instance ended the run (its lease taken for lapsed)'],
  ])('should report the run ended RUN_LOST when an append finds %s: %s', async (code) => {
    const inner = createMemoryRunStore();
    let lost = false;
    const store: RunStore = {
      ...inner,
      append: (threadId, runId, events) => (lost ? Promise.reject(new AguiRxError(code, `A test double of a store that answers ${code}.`)) : inner.append(threadId, runId, events)),
    };
    const activity: BrokerActivity[] = [];
    const broker = createRunBroker({ store, leaseMs: 60_000, onActivity: (entry) => activity.push(entry) });
    const { agent$, frames$, aborted } = await startRun(broker);
    const subscription = frames$.subscribe();
    agent$.next({ type: EventType.TEXT_MESSAGE_CHUNK, messageId: 'm1', delta: 'Hello' } as AgentEvent);
    await new Promise((resolve) => setImmediate(resolve));
    lost = true;
    agent$.next({ type: EventType.TEXT_MESSAGE_CHUNK, messageId: 'm1', delta: ' again' } as AgentEvent);
    await new Promise((resolve) => setImmediate(resolve));
    expect(aborted()).toBe(true);
    expect(activity.map((entry) => entry.type)).toEqual(['run-started', 'reader-attached', 'store-error', 'run-ended']);
    expect(activity.at(-1)).toMatchObject({ type: 'run-ended', threadId: 't1', runId: 'r1', instanceId: broker.instanceId, outcome: 'error', code: 'RUN_LOST', events: 3 });
    subscription.unsubscribe();
    await broker.close();
  });
});
