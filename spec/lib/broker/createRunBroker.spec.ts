import { EventType, type Event } from '@ag-ui/core';
import { Observable, Subject, firstValueFrom, from, take, throwError, toArray } from 'rxjs';
import { createMemoryRunStore } from '../../../lib/broker/createMemoryRunStore.js';
import { createRunBroker, type BrokerActivity, type RunBroker, type RunBrokerOptions } from '../../../lib/broker/createRunBroker.js';
import type { RunStore } from '../../../lib/broker/runStore.js';
import { AguiRxError } from '../../../lib/protocol/errors.js';
import { runWithOfficialClient } from '../../../lib/testing/runWithOfficialClient.js';
import type { BrokerFrame, RunBrokerApi } from '../../../lib/transports/brokerRoutes.js';
import type { AgentEvent } from '../../../lib/protocol/agentEvent.js';
import { toAgui } from '../../../operators/toAgui.js';
import type { CancelSignal } from '../../../lib/protocol/cancelSignal.js';
import { createAguiFetchHandler, createAguiHandler, type AguiHandlerOptions } from '../../../lib/transports/createAguiHandler.js';
import { agentHarness } from '../transports/brokerHarness.js';
import { eventually, framesOf, open, post, runInput, serveFetch, serveNode, type Loopback } from '../transports/brokerHttp.js';

const allowAll = () => true;
const access = { request: {} };
const collect = <T>(items$: Observable<T>) => firstValueFrom(items$.pipe(toArray()));
const lastOf = (frames: readonly BrokerFrame[]) => frames[frames.length - 1]?.event;

/** A memory store whose methods fail as `failing` says, with STORE_UNAVAILABLE. */
function failingStore(failing: { append?: boolean; read?: boolean; renewLease?: boolean; getRun?: boolean; endRun?: boolean }): RunStore {
  const store = createMemoryRunStore();
  const down = () => new AguiRxError('STORE_UNAVAILABLE', 'The run store cannot be reached (connection refused).');
  return {
    ...store,
    // It fails as a shared store does: not one in this process.
    inProcess: false,
    append: (...args) => (failing.append ? Promise.reject(down()) : store.append(...args)),
    read: (...args) => (failing.read ? throwError(down) : store.read(...args)),
    renewLease: (...args) => (failing.renewLease ? Promise.reject(down()) : store.renewLease(...args)),
    getRun: (...args) => (failing.getRun ? Promise.reject(down()) : store.getRun(...args)),
    endRun: (...args) => (failing.endRun ? Promise.reject(down()) : store.endRun(...args)),
  };
}

const servers = [
  ['node:http', (agent: Parameters<typeof createAguiHandler>[0], options: AguiHandlerOptions) => serveNode(createAguiHandler(agent, options))],
  ['the fetch handler served through node', (agent: Parameters<typeof createAguiHandler>[0], options: AguiHandlerOptions) => serveFetch(createAguiFetchHandler(agent, options))],
] as const;

describe.each(servers)('createRunBroker over %s', (_name, serve) => {
  let server: Loopback | undefined;
  let broker: RunBroker | undefined;
  let h: ReturnType<typeof agentHarness>;
  let base: string;
  let activity: BrokerActivity[];
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => void unhandled.push(reason);

  async function setup(options: RunBrokerOptions = {}) {
    h = agentHarness();
    activity = [];
    broker = createRunBroker({ onActivity: (happening) => void activity.push(happening), ...options });
    server = await serve(h.agent, { broker, basePath: '/agent', heartbeatMs: 0 });
    base = `${server.origin}/agent`;
    return broker;
  }
  const happened = (type: BrokerActivity['type']) => () => activity.some((happening) => happening.type === type);

  beforeEach(() => {
    unhandled.length = 0;
    process.on('unhandledRejection', onUnhandled);
  });
  afterEach(async () => {
    await server?.close();
    await broker?.close();
    server = undefined;
    broker = undefined;
    process.off('unhandledRejection', onUnhandled);
    expect(unhandled).toEqual([]);
  });

  describe('detached runs', () => {
    it('should go on for detachGraceMs after the last reader leaves, then cancel the run (its log ends cancelled)', async () => {
      const b = await setup({ detachGraceMs: 100, authorize: allowAll });
      h.endless('r1', [{ type: 'TEXT_MESSAGE_CHUNK', delta: 'Working' }, { type: 'TOOL_CALL_CHUNK', toolCallId: 'c1', toolCallName: 'slow', delta: '{' }]);
      const posted = await open(base, { body: runInput('t1', 'r1') });
      await posted.until((frame) => frame.event.type === EventType.TOOL_CALL_ARGS);
      const left = Date.now();
      posted.leave();
      await eventually(happened('run-detached'), 5000, 'the run to detach');
      expect(h.signals.get('r1')?.aborted).toBe(false);
      await eventually(happened('run-ended'), 5000, 'the run to end');
      expect(Date.now() - left).toBeGreaterThanOrEqual(90);
      expect(activity.find((happening) => happening.type === 'run-ended')).toMatchObject({ outcome: 'cancelled' });
      expect(h.signals.get('r1')?.aborted).toBe(true);
      const log = await collect(await b.events('t1', 'r1', undefined, access));
      expect(lastOf(log)).toMatchObject({ type: EventType.RUN_FINISHED, outcome: { type: 'cancelled' } });
      const oracle = await runWithOfficialClient(log.map((frame) => frame.event), { threadId: 't1', runId: 'r1' });
      expect(oracle.messages.map((message) => message.role)).toEqual(['assistant']);
    });

    it('should keep the run going when a reader comes back within the grace', async () => {
      await setup({ detachGraceMs: 100, authorize: allowAll });
      h.hold('r1', [{ type: 'TEXT_MESSAGE_CHUNK', delta: 'Hel' }], [{ type: 'TEXT_MESSAGE_CHUNK', delta: 'lo' }]);
      h.hold('r2', [{ type: 'TEXT_MESSAGE_CHUNK', delta: 'Hel' }], [{ type: 'TEXT_MESSAGE_CHUNK', delta: 'lo' }]);
      const posted = await open(base, { body: runInput('t1', 'r1') });
      const seen = await posted.take(3);
      posted.leave();
      await eventually(happened('run-detached'), 5000, 'the run to detach');
      const back = await open(`${base}/threads/t1/runs/r1/events`, { method: 'GET', headers: { 'Last-Event-ID': seen[2].id! } });
      expect(back.status).toBe(200);
      // A witness detached after r1 and never read again: once its grace has cancelled it, r1's grace has passed too.
      const witness = await open(base, { body: runInput('t2', 'r2') });
      await witness.take(3);
      witness.leave();
      await eventually(() => h.signals.get('r2')?.aborted === true, 5000, 'the witness run to be cancelled by its grace');
      expect(h.signals.get('r1')?.aborted).toBe(false);
      h.release('r1');
      const rest = await back.ended;
      expect(rest[rest.length - 1].event).toMatchObject({ type: EventType.RUN_FINISHED });
      expect(rest[rest.length - 1].event).not.toHaveProperty('outcome.type', 'cancelled');
      const events = [...seen, ...rest].map((frame) => frame.event);
      expect((await runWithOfficialClient(events, { threadId: 't1', runId: 'r1' })).messages).toEqual([{ id: expect.any(String), role: 'assistant', content: 'Hello' }]);
    });

    it('should let the run finish with detachGraceMs: Infinity', async () => {
      const b = await setup({ detachGraceMs: Infinity, authorize: allowAll });
      h.hold('r1', [{ type: 'TEXT_MESSAGE_CHUNK', delta: 'Hel' }], [{ type: 'TEXT_MESSAGE_CHUNK', delta: 'lo' }]);
      const posted = await open(base, { body: runInput('t1', 'r1') });
      await posted.take(3);
      posted.leave();
      await eventually(happened('reader-left'), 5000, 'the reader to leave');
      // A tick of the broker (which checks detachment) has passed once the run's lease was renewed.
      const leased = (await b.store.getRun('t1', 'r1'))!.leaseUntil;
      await eventually(async () => (await b.store.getRun('t1', 'r1'))!.leaseUntil > leased, 5000, 'a lease renewal');
      h.release('r1');
      await eventually(happened('run-ended'), 5000, 'the run to end');
      expect(activity.find((happening) => happening.type === 'run-ended')).toMatchObject({ outcome: 'success' });
      expect(activity.some((happening) => happening.type === 'run-detached')).toBe(false);
      const log = await collect(await b.events('t1', 'r1', undefined, access));
      expect((await runWithOfficialClient(log.map((frame) => frame.event), { threadId: 't1', runId: 'r1' })).messages).toEqual([{ id: expect.any(String), role: 'assistant', content: 'Hello' }]);
    });
  });

  describe('onActivity', () => {
    it('should report the start, a reader attaching, the end with its outcome, and the reader leaving', async () => {
      await setup();
      const frames = framesOf((await post(base, runInput('t1', 'r1'))).body);
      await eventually(happened('reader-left'), 5000, 'the reader to leave');
      await eventually(happened('run-ended'), 5000, 'the run to end');
      // A spurious detach (the reader left as the run ended) would come from a store count in flight: let it settle.
      await new Promise((resolve) => setImmediate(resolve));
      // The reader leaves on the terminal event, as the store delivers it; the run ends once the append resolves.
      expect(activity.map((happening) => happening.type)).toEqual(['run-started', 'reader-attached', 'reader-left', 'run-ended']);
      expect(activity).toEqual([
        { type: 'run-started', threadId: 't1', runId: 'r1', instanceId: broker!.instanceId },
        { type: 'reader-attached', threadId: 't1', runId: 'r1', readerId: expect.any(String), readers: 1 },
        { type: 'reader-left', threadId: 't1', runId: 'r1', readerId: expect.any(String), readers: 0, delivered: frames.length, lag: 0 },
        { type: 'run-ended', threadId: 't1', runId: 'r1', instanceId: broker!.instanceId, outcome: 'success', code: undefined, events: frames.length, durationMs: expect.any(Number) },
      ]);
    });

    it('should report a cancelled run and a failed one with their outcomes', async () => {
      await setup({ authorize: allowAll });
      h.endless('r1', [{ type: 'TEXT_MESSAGE_CHUNK', delta: 'Working' }]);
      h.script('r2', () => throwError(() => Object.assign(new Error('No API key.'), { code: 'CONFIG' })));
      const posted = await open(base, { body: runInput('t1', 'r1') });
      await posted.take(2);
      await post(`${base}/threads/t1/runs/r1/stop`, '');
      await posted.ended;
      const failed = framesOf((await post(base, runInput('t1', 'r2'))).body);
      expect(failed[failed.length - 1].event).toEqual({ type: EventType.RUN_ERROR, message: 'No API key.', code: 'CONFIG' });
      await eventually(() => activity.filter((happening) => happening.type === 'run-ended').length === 2, 5000, 'both runs to end');
      expect(activity.filter((happening) => happening.type === 'run-ended')).toEqual([
        expect.objectContaining({ runId: 'r1', outcome: 'cancelled', code: undefined }),
        expect.objectContaining({ runId: 'r2', outcome: 'error', code: 'CONFIG' }),
      ]);
    });

    it('should survive an onActivity hook that throws', async () => {
      h = agentHarness();
      broker = createRunBroker({
        onActivity: () => {
          throw new Error('observer bug');
        },
      });
      server = await serve(h.agent, { broker, basePath: '/agent', heartbeatMs: 0 });
      const frames = framesOf((await post(`${server.origin}/agent`, runInput('t1', 'r1'))).body);
      expect(frames[frames.length - 1].event.type).toBe(EventType.RUN_FINISHED);
    });
  });

  describe('a store that fails', () => {
    it('should go on from the owner\'s memory when the store cannot be read, to the run\'s own end', async () => {
      await setup({ store: failingStore({ read: true }), detachGraceMs: 50 });
      const answer = await post(base, runInput('t1', 'r1'));
      expect(answer.status).toBe(200);
      const frames = framesOf(answer.body);
      expect(frames[0].event.type).toBe(EventType.RUN_STARTED);
      expect(frames[frames.length - 1].event.type).toBe(EventType.RUN_FINISHED);
      // Every event once, in order: ids are on the wire only for events the reader saw written.
      expect(new Set(frames.map((frame) => JSON.stringify(frame.event))).size).toBe(frames.length);
      await runWithOfficialClient(from(frames.map((frame) => frame.event)));
    });

    it('should end a reader on another instance with a RUN_ERROR frame carrying the code and a clear message when the store cannot be read', async () => {
      const store = failingStore({ read: true });
      await setup({ store, detachGraceMs: Infinity, authorize: () => true });
      await post(base, runInput('t1', 'r1'));
      const other = createRunBroker({ store, authorize: () => true });
      const frames = await firstValueFrom((await other.events('t1', 'r1', undefined, { request: undefined })).pipe(toArray()));
      expect(frames).toEqual([{ event: { type: EventType.RUN_ERROR, code: 'STORE_UNAVAILABLE', message: 'The run store cannot be reached (connection refused).' } }]);
    });

    it('should end the reader with a RUN_ERROR frame, not hang, when the store cannot be written', async () => {
      await setup({ store: failingStore({ append: true }), leaseMs: 300 });
      const answer = await post(base, runInput('t1', 'r1'));
      expect(answer.status).toBe(200);
      const frames = framesOf(answer.body);
      expect(frames).toHaveLength(1);
      expect(frames[0].event).toMatchObject({ type: EventType.RUN_ERROR, code: 'STORE_UNAVAILABLE' });
      expect((frames[0].event as { message: string }).message).toMatch(/run store/i);
      await eventually(happened('run-ended'), 5000, 'the run to end');
      expect(activity.some((happening) => happening.type === 'store-error')).toBe(true);
      // The agent had finished its run (its terminal event was emitted, only the store failed): its
      // signal stays unaborted, so work after the run may use it (issue 14 item 6 changed this rule).
      expect(h.signals.get('r1')?.aborted).toBe(false);
    });

    it('should abort the signal of an agent still running when the store cannot be written', async () => {
      await setup({ store: failingStore({ append: true }), leaseMs: 300 });
      h.endless('r1', [{ type: 'TEXT_MESSAGE_CHUNK', delta: 'Working' }]);
      const answer = await post(base, runInput('t1', 'r1'));
      expect(framesOf(answer.body).at(-1)?.event).toMatchObject({ type: EventType.RUN_ERROR, code: 'STORE_UNAVAILABLE' });
      await eventually(() => h.signals.get('r1')?.aborted === true, 5000, 'the running agent to be aborted');
      expect(h.unsubscribed.has('r1')).toBe(true);
    });

    it('should end the reader with a RUN_ERROR frame, not hang, when the store is down altogether', async () => {
      await setup({ store: failingStore({ append: true, renewLease: true, getRun: true, endRun: true }), leaseMs: 300 });
      const answer = await post(base, runInput('t1', 'r1'));
      const frames = framesOf(answer.body);
      // The owner's reader gets the run from memory, none of it written (no cursors), and the stream ends.
      expect(frames[0].event.type).toBe(EventType.RUN_STARTED);
      expect(frames.every((frame) => frame.id === undefined)).toBe(true);
      expect([EventType.RUN_FINISHED, EventType.RUN_ERROR]).toContain(frames[frames.length - 1].event.type);
      await runWithOfficialClient(from(frames.map((frame) => frame.event)));
    });
  });
});

describe('createRunBroker', () => {
  it('should refuse, when made, a limit that would silently do something else, naming it and what it takes', () => {
    // NaN is what `Number(process.env.UNSET)` gives: a lease of NaN never lapses, a grace of NaN never cancels.
    expect(() => createRunBroker({ leaseMs: Number.NaN })).toThrow(new RangeError("'leaseMs' must be a number of ms > 0 (finite: a dead owner is found when its lease lapses), not NaN."));
    expect(() => createRunBroker({ leaseMs: Infinity })).toThrow(RangeError);
    expect(() => createRunBroker({ leaseMs: 0 })).toThrow(RangeError);
    expect(() => createRunBroker({ detachGraceMs: Number.NaN })).toThrow(
      new RangeError("'detachGraceMs' must be a number of ms ≥ 0, at most 2147483647 (what a timer holds, about 24.8 days), or Infinity: runs always finish, not NaN."),
    );
    expect(() => createRunBroker({ detachGraceMs: -1 })).toThrow(RangeError);
    // A timer fires a longer delay after 1 ms: 30 days would cancel a run as soon as its reader left.
    expect(() => createRunBroker({ detachGraceMs: 30 * 24 * 3600 * 1000 })).toThrow(RangeError);
    expect(() => createMemoryRunStore({ retainMs: 30 * 24 * 3600 * 1000 })).toThrow(RangeError);
    expect(() => createRunBroker({ maxSubscribers: 0 })).toThrow(new RangeError("'maxSubscribers' must be a whole number of readers ≥ 1 (or Infinity), not 0."));
    expect(() => createRunBroker({ maxSubscribers: 1.5 })).toThrow(RangeError);
    expect(() => createRunBroker({ leaseMs: '300' as unknown as number })).toThrow(new RangeError("'leaseMs' must be a number of ms > 0 (finite: a dead owner is found when its lease lapses), not \"300\"."));
    expect(() => createMemoryRunStore({ retainMs: Number.NaN })).toThrow(
      new RangeError("'retainMs' must be a number of ms ≥ 0, at most 2147483647 (what a timer holds, about 24.8 days), or Infinity: keep finished runs, not NaN."),
    );
    expect(() => createMemoryRunStore({ maxLen: 0.5 })).toThrow(new RangeError("'maxLen' must be a whole number of entries ≥ 1 (or Infinity), not 0.5."));
    const fine = createRunBroker({ leaseMs: 300, detachGraceMs: 2 ** 31 - 1, maxSubscribers: Infinity, store: createMemoryRunStore({ retainMs: Infinity, maxLen: 10 }) });
    return fine.close();
  });

  it('should refuse, when made, a hook that is not a function, a store that is not one and an empty instance id', () => {
    const invalid = (message: string) => expect.objectContaining({ code: 'INVALID_OPTIONS', message });
    // JavaScript lets `authorize: true` through: every request, the starting POST too, would then be a 500.
    expect(() => createRunBroker({ authorize: true as unknown as () => boolean })).toThrow(invalid("'authorize' must be a function of the request, resolving true to allow it, not boolean true."));
    expect(() => createRunBroker({ onActivity: console as unknown as () => void })).toThrow(invalid("'onActivity' must be a function of the activity, not an object."));
    expect(() => createRunBroker({ store: {} as RunStore })).toThrow(
      invalid(
        "'store' must be a run store (createMemoryRunStore() or createRedisRunStore({ url }) from agui-rx/broker/redis), not an object without createRun, getRun, listRuns, append, endRun, read, renewLease, requestStop, stopRequests, touchReader, removeReader, countReaders, compare, isCursor, close.",
      ),
    );
    expect(() => createRunBroker({ store: createMemoryRunStore as unknown as RunStore })).toThrow(expect.objectContaining({ code: 'INVALID_OPTIONS', message: expect.stringContaining('not a function.') }));
    expect(() => createRunBroker({ instanceId: '' })).toThrow(invalid("'instanceId' must be a non-empty string, not \"\"."));
  });

  let broker: RunBroker | undefined;
  afterEach(async () => {
    await broker?.close();
    broker = undefined;
  });

  it('should start the agent once when the same run is posted twice at once', async () => {
    broker = createRunBroker({ authorize: allowAll });
    let starts = 0;
    const start = () => {
      starts++;
      return from<Event[]>([
        { type: EventType.RUN_STARTED, threadId: 't1', runId: 'r1' },
        { type: EventType.RUN_FINISHED, threadId: 't1', runId: 'r1' },
      ]);
    };
    const [a, b] = await Promise.all([broker.run(runInput('t1', 'r1'), start, access), broker.run(runInput('t1', 'r1'), start, access)]);
    const [framesA, framesB] = await Promise.all([collect(a), collect(b)]);
    expect(starts).toBe(1);
    expect(framesB).toEqual(framesA);
    expect(framesA.map((frame) => frame.event.type)).toEqual([EventType.RUN_STARTED, EventType.RUN_FINISHED]);
  });

  it('should read a run from its start for the POST that started it, whatever cursor came with it (one from an earlier run of the same id), and after the cursor for one that attached', async () => {
    broker = createRunBroker({ authorize: allowAll });
    const events = from<Event[]>([
      { type: EventType.RUN_STARTED, threadId: 't1', runId: 'r1' },
      { type: EventType.CUSTOM, name: 'tick', value: 1 },
      { type: EventType.CUSTOM, name: 'tick', value: 2 },
      { type: EventType.RUN_FINISHED, threadId: 't1', runId: 'r1' },
    ]);
    const started = await collect(await broker.run(runInput('t1', 'r1'), () => events, access, '2'));
    const attached = await collect(await broker.run(runInput('t1', 'r1'), () => events, access, started[1].cursor));

    expect(started.map((frame) => frame.event.type)).toEqual([EventType.RUN_STARTED, EventType.CUSTOM, EventType.CUSTOM, EventType.RUN_FINISHED]);
    expect(attached).toEqual(started.slice(2));
  });

  it("should not abort start's signal once the run ended by itself (its terminal event stored), and abort it for a stopped run", async () => {
    const ended: string[] = [];
    broker = createRunBroker({ authorize: allowAll, onActivity: (activity) => void (activity.type === 'run-ended' && ended.push(activity.runId)) });
    const signals = new Map<string, AbortSignal>();
    const finished = (runId: string) => (signal: AbortSignal) => {
      signals.set(runId, signal);
      return from<Event[]>([
        { type: EventType.RUN_STARTED, threadId: 't1', runId },
        { type: EventType.RUN_FINISHED, threadId: 't1', runId },
      ]);
    };
    await collect(await broker.run(runInput('t1', 'done'), finished('done'), access));
    await eventually(() => ended.includes('done'), 5000, 'the run-ended report');
    expect(signals.get('done')?.aborted).toBe(false);

    const endless = (signal: AbortSignal) => {
      signals.set('stopped', signal);
      return new Observable<Event>((subscriber) => subscriber.next({ type: EventType.RUN_STARTED, threadId: 't1', runId: 'stopped' }));
    };
    const frames$ = await broker.run(runInput('t1', 'stopped'), endless, access);
    const subscription = frames$.subscribe();
    // What stopping found: the running run is being cancelled; the finished one had nothing to cancel.
    await expect(broker.stop('t1', 'stopped', access)).resolves.toBe('stopping');
    expect(signals.get('stopped')?.aborted).toBe(true);
    await expect(broker.stop('t1', 'done', access)).resolves.toBe('finished');
    expect(signals.get('done')?.aborted).toBe(false);
    subscription.unsubscribe();
  });

  it('should refuse with FORBIDDEN, RUN_NOT_FOUND and INVALID_CURSOR codes before any stream starts', async () => {
    broker = createRunBroker();
    await expect(broker.events('t1', 'r1', undefined, access)).rejects.toMatchObject({ code: 'FORBIDDEN' });
    await expect(broker.stop('t1', 'r1', access)).rejects.toMatchObject({ code: 'FORBIDDEN' });
    await expect(broker.connect(runInput('t1', 'r1'), access)).rejects.toMatchObject({ code: 'FORBIDDEN' });
    await expect(broker.events('t1', 'r1', 'not a cursor', access)).rejects.toMatchObject({ code: 'INVALID_CURSOR' });
    // Each action is named as what was refused: a hook that refuses starts too.
    const refusing = createRunBroker({ authorize: () => false });
    await expect(refusing.run(runInput('t1', 'r1'), () => from<Event[]>([]), access)).rejects.toMatchObject({
      code: 'FORBIDDEN',
      message:
        "The run broker's `authorize` hook refused this request: it may not start this run (action 'start', thread 't1', run 'r1'). Sign in as a caller the hook allows; a client that makes up its thread id (HttpAgent and ResumableHttpAgent mint one when none is given) must use one the hook accepts.",
    });
    await expect(refusing.connect(runInput('t1', 'r1'), access)).rejects.toMatchObject({ code: 'FORBIDDEN', message: expect.stringContaining("it may not connect to this thread (action 'connect', thread 't1')") });
    // Without a hook, the refusal says to configure one.
    await expect(broker.connect(runInput('t1', 'r1'), access)).rejects.toMatchObject({ message: "This request may not connect to this thread. Configure the run broker's `authorize` hook to allow it." });
    await refusing.close();
    await broker.close();
    broker = createRunBroker({ authorize: allowAll });
    await expect(broker.events('t1', 'r1', undefined, access)).rejects.toMatchObject({ code: 'RUN_NOT_FOUND' });
    await expect(broker.stop('t1', 'r1', access)).rejects.toMatchObject({ code: 'RUN_NOT_FOUND' });
  });

  it('should start no run under an id holding half of a surrogate pair, refusing it with INVALID_ARGUMENT', async () => {
    broker = createRunBroker({ authorize: allowAll });
    const run = (threadId: string, runId: string) =>
      from<Event[]>([
        { type: EventType.RUN_STARTED, threadId, runId },
        { type: EventType.RUN_FINISHED, threadId, runId },
      ]);
    const start = jest.fn(() => run('t1', 'r1'));
    await expect(broker.run(runInput('t\ud800', 'r1'), start, access)).rejects.toMatchObject({ code: 'INVALID_ARGUMENT', message: expect.stringContaining('The threadId "t\\ud800" holds half of a UTF-16 surrogate pair') });
    await expect(broker.run(runInput('t1', '\udc00'), start, access)).rejects.toMatchObject({ code: 'INVALID_ARGUMENT', message: expect.stringContaining('The runId "\\udc00"') });
    expect(start).not.toHaveBeenCalled();
    // A whole pair is a character as any other.
    const whole = await collect(await broker.run(runInput('t\ud83d\ude00', 'r1'), () => run('t\ud83d\ude00', 'r1'), access));
    expect(whole.map((frame) => frame.event.type)).toEqual([EventType.RUN_STARTED, EventType.RUN_FINISHED]);
  });

  it("should end a reader on another instance with RUN_ERROR STORE_UNAVAILABLE once the store has not answered for a lease's time", async () => {
    const store = createMemoryRunStore();
    const owner = createRunBroker({ store: { ...store, close: async () => undefined }, authorize: allowAll, detachGraceMs: Infinity, leaseMs: 300 });
    let down = false;
    broker = createRunBroker({
      store: { ...store, getRun: (...args) => (down ? Promise.reject(new AguiRxError('STORE_UNAVAILABLE', 'Connection refused.')) : store.getRun(...args)) },
      authorize: allowAll,
      leaseMs: 300,
    });
    const started = await owner.run(runInput('t1', 'r1'), () => new Observable<Event>((subscriber) => subscriber.next({ type: EventType.RUN_STARTED, threadId: 't1', runId: 'r1' })), access);
    const first = started.subscribe();
    const frames = collect(await broker.events('t1', 'r1', undefined, access));
    down = true;
    const log = await frames;
    expect(log.map((frame) => frame.event.type)).toEqual([EventType.RUN_STARTED, EventType.RUN_ERROR]);
    expect(lastOf(log)).toMatchObject({ code: 'STORE_UNAVAILABLE', message: expect.stringMatching(/^The run store has not answered for \d+ ms \(Connection refused\.\); the run's remaining events cannot be read\./) });
    first.unsubscribe();
    await owner.close();
  });

  describe('a RUN_ERROR the broker adds mid-message', () => {
    // An owner that dies in the middle of a message and a call: the readers elsewhere end the run RUN_LOST.
    const midMessage = [
      { type: EventType.RUN_STARTED, threadId: 't1', runId: 'r1' },
      { type: EventType.TEXT_MESSAGE_START, messageId: 'm1', role: 'assistant' },
      { type: EventType.TEXT_MESSAGE_CONTENT, messageId: 'm1', delta: 'Half a' },
      { type: EventType.TOOL_CALL_START, toolCallId: 'c1', toolCallName: 'search', parentMessageId: 'm1' },
      { type: EventType.TOOL_CALL_ARGS, toolCallId: 'c1', delta: '{"q":' },
    ] as Event[];
    const closers = [
      { type: EventType.TEXT_MESSAGE_END, messageId: 'm1' },
      { type: EventType.TOOL_CALL_END, toolCallId: 'c1' },
    ];
    let owner: RunBroker | undefined;
    let logged: BrokerFrame[];
    async function ownerDiesMidMessage() {
      const store = createMemoryRunStore();
      // Its lease is never renewed, as a killed server's.
      owner = createRunBroker({ store: { ...store, close: async () => undefined, renewLease: async () => false }, authorize: allowAll, detachGraceMs: Infinity, leaseMs: 300 });
      const frames$ = await owner.run(runInput('t1', 'r1'), () => new Observable<Event>((subscriber) => midMessage.forEach((event) => subscriber.next(event))), access);
      logged = await firstValueFrom(frames$.pipe(take(midMessage.length), toArray()));
      broker = createRunBroker({ store, authorize: allowAll, leaseMs: 300 });
    }
    afterEach(async () => {
      await owner?.close();
      owner = undefined;
    });

    it('should close what the run left open before RUN_LOST, for a reader from the start, as the official client takes it', async () => {
      await ownerDiesMidMessage();
      const frames = await collect(await broker!.events('t1', 'r1', undefined, access));
      expect(frames.slice(0, 5)).toEqual(logged);
      // The closers are the reader's, not the log's: no cursor.
      expect(frames.slice(5, 7)).toEqual(expect.arrayContaining(closers.map((event) => ({ event }))));
      expect(frames).toHaveLength(8);
      expect(lastOf(frames)).toMatchObject({ type: EventType.RUN_ERROR, code: 'RUN_LOST' });
      const result = await runWithOfficialClient(frames.map((frame) => frame.event));
      expect(result.messages).toEqual([expect.objectContaining({ id: 'm1', role: 'assistant', content: 'Half a', toolCalls: [expect.objectContaining({ id: 'c1' })] })]);
    });

    it('should close what its client was given before its cursor too, for a reader that resumed after it', async () => {
      await ownerDiesMidMessage();
      const frames = await collect(await broker!.events('t1', 'r1', logged[2].cursor, access));
      expect(frames.slice(0, 2)).toEqual(logged.slice(3));
      expect(frames.slice(2, 4)).toEqual(expect.arrayContaining(closers.map((event) => ({ event }))));
      expect(frames).toHaveLength(5);
      expect(lastOf(frames)).toMatchObject({ type: EventType.RUN_ERROR, code: 'RUN_LOST' });
      // Resumed after the run ended: its log is read for what was open.
      const late = await collect(await broker!.events('t1', 'r1', logged[4].cursor, access));
      expect(late.slice(0, 2)).toEqual(expect.arrayContaining(closers.map((event) => ({ event }))));
      expect(late.map((frame) => frame.event.type)).toEqual([...closers.map(() => expect.any(String)), EventType.RUN_ERROR]);
    });

    it('should close what it was given before a RUN_ERROR of its own, when the store stops answering it', async () => {
      const store = createMemoryRunStore();
      owner = createRunBroker({ store: { ...store, close: async () => undefined }, authorize: allowAll, detachGraceMs: Infinity, leaseMs: 300 });
      let down = false;
      broker = createRunBroker({
        store: { ...store, getRun: (...args) => (down ? Promise.reject(new AguiRxError('STORE_UNAVAILABLE', 'Connection refused.')) : store.getRun(...args)) },
        authorize: allowAll,
        leaseMs: 300,
      });
      const frames$ = await owner.run(runInput('t1', 'r1'), () => new Observable<Event>((subscriber) => midMessage.forEach((event) => subscriber.next(event))), access);
      logged = await firstValueFrom(frames$.pipe(take(midMessage.length), toArray()));
      const read = collect(await broker.events('t1', 'r1', undefined, access));
      down = true;
      const frames = await read;
      expect(frames.slice(0, 5)).toEqual(logged);
      expect(frames.slice(5, 7)).toEqual(expect.arrayContaining(closers.map((event) => ({ event }))));
      expect(lastOf(frames)).toMatchObject({ type: EventType.RUN_ERROR, code: 'STORE_UNAVAILABLE' });
    });
  });

  it('should cancel the runs it owns on close, each log ending cancelled', async () => {
    const store = createMemoryRunStore();
    const reader = createRunBroker({ store, authorize: allowAll });
    broker = createRunBroker({ store: { ...store, close: async () => undefined }, authorize: allowAll, detachGraceMs: Infinity });
    const frames$ = await broker.run(runInput('t1', 'r1'), (signal) => new Observable<Event>((subscriber) => {
      subscriber.next({ type: EventType.RUN_STARTED, threadId: 't1', runId: 'r1' });
      signal.addEventListener('abort', () => {
        subscriber.next({ type: EventType.RUN_FINISHED, threadId: 't1', runId: 'r1', outcome: { type: 'cancelled' } });
        subscriber.complete();
      });
    }), access);
    const frames = collect(frames$);
    await broker.close();
    broker = undefined;
    expect(lastOf(await frames)).toMatchObject({ type: EventType.RUN_FINISHED, outcome: { type: 'cancelled' } });
    await reader.close();
  });
});

describe('createRunBroker runWithCancel', () => {
  let broker: RunBroker | undefined;
  afterEach(async () => {
    await broker?.close();
    broker = undefined;
    jest.restoreAllMocks();
  });

  it("should give start the run's record as its CancelSignal, no AbortSignal, and end toAgui's run cancelled when stopped", async () => {
    broker = createRunBroker({ authorize: allowAll });
    const agent$ = new Subject<AgentEvent>();
    let given: CancelSignal | undefined;
    const frames$ = await broker.runWithCancel(runInput('t1', 'r1'), (cancel) => {
      given = cancel;
      return agent$.pipe(toAgui({ threadId: 't1', runId: 'r1', signal: cancel }));
    }, access);
    const frames = collect(frames$);
    agent$.next({ type: EventType.TEXT_MESSAGE_CHUNK, messageId: 'm1', delta: 'Hi' });
    expect(given?.aborted).toBe(false);

    await broker.stop('t1', 'r1', access);

    const events = (await frames).map((frame) => frame.event);
    expect(given).not.toBeInstanceOf(AbortSignal);
    expect(given?.aborted).toBe(true);
    expect(agent$.observed).toBe(false);
    expect(events.map((event) => event.type)).toEqual([EventType.RUN_STARTED, EventType.TEXT_MESSAGE_START, EventType.TEXT_MESSAGE_CONTENT, EventType.TEXT_MESSAGE_END, EventType.RUN_FINISHED]);
    expect(events[4]).toMatchObject({ outcome: { type: 'cancelled' } });
    // The log is a run the official client takes, as a cancelled run.
    const { messages } = await runWithOfficialClient(from(events));
    expect(messages).toEqual([expect.objectContaining({ id: 'm1', role: 'assistant', content: 'Hi' })]);
  });

  it('should call its listeners once each, in order, go on past one that throws, and never call one removed or added after the cancel', async () => {
    broker = createRunBroker({ authorize: allowAll });
    let record: CancelSignal | undefined;
    const frames$ = await broker.runWithCancel(runInput('t1', 'r2'), (cancel) => {
      record = cancel;
      return new Observable<Event>((subscriber) => subscriber.next({ type: EventType.RUN_STARTED, threadId: 't1', runId: 'r2' }));
    }, access);
    const subscription = frames$.subscribe();
    const warn = jest.spyOn(console, 'warn').mockImplementation(() => undefined);
    const calls: string[] = [];
    const first = () => void calls.push('first');
    const removed = () => void calls.push('removed');
    const late = () => void calls.push('late');
    record!.addEventListener('abort', first);
    record!.addEventListener('abort', () => {
      throw new Error('boom');
    });
    record!.addEventListener('abort', { handleEvent: () => void calls.push('object') });
    record!.addEventListener('abort', first);
    record!.addEventListener('abort', removed);
    record!.removeEventListener('abort', removed);

    await broker.stop('t1', 'r2', access);
    record!.addEventListener('abort', late);
    await broker.stop('t1', 'r2', access);

    expect(calls).toEqual(['first', 'object']);
    expect(warn).toHaveBeenCalledWith("[agui-rx] An 'abort' listener of run 'r2' threw while the run was cancelled: boom.");
    subscription.unsubscribe();
  });

  it('should be what the handlers start brokered runs with, and a broker with only run still serves them', async () => {
    for (const withCancel of [true, false]) {
      const real = createRunBroker({ authorize: allowAll });
      const used: string[] = [];
      const api: RunBrokerApi = {
        run: (...args) => (used.push('run'), real.run(...args)),
        events: (...args) => real.events(...args),
        connect: (...args) => real.connect(...args),
        stop: (...args) => real.stop(...args),
        ...(withCancel ? { runWithCancel: (...args: Parameters<RunBroker['runWithCancel']>) => (used.push('runWithCancel'), real.runWithCancel(...args)) } : {}),
      };
      const server = await serveNode(createAguiHandler(() => from<AgentEvent[]>([{ type: EventType.TEXT_MESSAGE_CHUNK, delta: 'Hi' }]), { broker: api, basePath: '/agent', heartbeatMs: 0 }));
      try {
        const answer = await post(`${server.origin}/agent`, runInput('t1', 'r1'));
        expect(framesOf(answer.body).map((frame) => frame.event.type)).toEqual([EventType.RUN_STARTED, EventType.TEXT_MESSAGE_START, EventType.TEXT_MESSAGE_CONTENT, EventType.TEXT_MESSAGE_END, EventType.RUN_FINISHED]);
        expect(used).toEqual([withCancel ? 'runWithCancel' : 'run']);
      } finally {
        await server.close();
        await real.close();
      }
    }
  });
});
