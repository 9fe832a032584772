import { EventType, type Event } from '@ag-ui/core';
import { Observable, Subject, config, from, of, type Subscriber } from 'rxjs';
import type { AgentEvent } from '../../lib/protocol/agentEvent.js';
import { toSSEStream } from '../../lib/transports/toSSEStream.js';
import { coalesceDeltas } from '../../operators/coalesceDeltas.js';
import { toAgui } from '../../operators/toAgui.js';
import { collect, sequentialIds, terminals, typesOf } from '../support/helpers.js';
import { runWithOracle } from '../support/oracle.js';

const run = { threadId: 'thread-1', runId: 'run-1' };

/**
 * Watches the process for the duration of one test: every unhandled rejection, uncaught exception
 * and error RxJS reports through `config.onUnhandledError` is recorded instead of crashing jest.
 */
function watchEscapes() {
  const escaped: { kind: string; error: unknown }[] = [];
  const onRejection = (error: unknown) => void escaped.push({ kind: 'unhandledRejection', error });
  const onException = (error: unknown) => void escaped.push({ kind: 'uncaughtException', error });
  const onUnhandled = (error: unknown) => void escaped.push({ kind: 'rxjs.onUnhandledError', error });
  const previous = config.onUnhandledError;
  process.on('unhandledRejection', onRejection);
  process.on('uncaughtException', onException);
  config.onUnhandledError = onUnhandled;
  return {
    escaped,
    /** What escaped, by kind, after letting RxJS's deferred reports (setTimeout 0) and pending microtasks run. */
    async settle(): Promise<{ kind: string; error: unknown }[]> {
      // RxJS defers each report with setTimeout(fn); a timer set now fires after all of them (same
      // delay, first in first out), so this waits for exactly the reports already made.
      await new Promise((resolve) => setTimeout(resolve));
      await new Promise((resolve) => setImmediate(resolve));
      return escaped;
    },
    stop() {
      process.off('unhandledRejection', onRejection);
      process.off('uncaughtException', onException);
      config.onUnhandledError = previous;
    },
  };
}

describe('faults: every failure ends in one RUN_ERROR or a clean teardown', () => {
  let watch: ReturnType<typeof watchEscapes>;
  beforeEach(() => {
    watch = watchEscapes();
  });
  afterEach(() => {
    watch.stop();
    jest.useRealTimers();
  });

  describe('a source that throws synchronously on subscribe', () => {
    it('should end the run with RUN_ERROR carrying the thrown message, accepted by the official client', async () => {
      const source$ = new Observable<AgentEvent>(() => {
        throw new Error('cannot connect to the model');
      });
      const { events } = await runWithOracle(source$.pipe(toAgui({ ...run, generateId: sequentialIds() })));
      expect(typesOf(events)).toEqual([EventType.RUN_STARTED, EventType.RUN_ERROR]);
      expect(events[1]).toEqual({ type: EventType.RUN_ERROR, message: 'cannot connect to the model' });
      expect(await watch.settle()).toEqual([]);
    });

    it('should end the run with RUN_ERROR when the source throws a non-Error value on subscribe', async () => {
      const source$ = new Observable<AgentEvent>(() => {
        throw 'plain string failure';
      });
      const events = (await runWithOracle(source$.pipe(toAgui(run)))).events as Event[];
      expect(terminals(events)).toEqual([{ type: EventType.RUN_ERROR, message: 'plain string failure' }]);
      expect(await watch.settle()).toEqual([]);
    });

    it('should end the run with RUN_ERROR when the source throws after emitting synchronously', async () => {
      const source$ = new Observable<AgentEvent>((subscriber) => {
        subscriber.next({ type: EventType.TEXT_MESSAGE_CHUNK, delta: 'partial ' });
        throw new Error('stream cut');
      });
      const { events, messages } = await runWithOracle(source$.pipe(toAgui({ ...run, generateId: sequentialIds() })));
      expect(events[events.length - 1]).toEqual({ type: EventType.RUN_ERROR, message: 'stream cut' });
      expect(terminals(events as Event[])).toHaveLength(1);
      expect(messages).toEqual([{ id: 'id-1', role: 'assistant', content: 'partial ' }]);
      expect(await watch.settle()).toEqual([]);
    });
  });

  describe('a downstream subscriber that throws', () => {
    /*
     * Behaviour (RxJS 7.8): a throwing `next` handler is caught by RxJS's SafeSubscriber and reported
     * asynchronously through `config.onUnhandledError` (by default: rethrown in a setTimeout, which
     * would be an uncaught exception). The subscription is NOT closed by it: RxJS 7 keeps delivering.
     * toAgui therefore goes on: later events are still delivered, the run still ends with exactly
     * one terminal event, and the upstream is unsubscribed when the run ends (or when the consumer
     * unsubscribes). Nothing escapes as an unhandled rejection.
     */
    it('should report the throw through config.onUnhandledError only, and still end the run once', async () => {
      const boom = new Error('consumer bug');
      const seen: string[] = [];
      let completed = false;
      from<AgentEvent[]>([
        { type: EventType.TEXT_MESSAGE_CHUNK, delta: 'a' },
        { type: EventType.TEXT_MESSAGE_CHUNK, delta: 'b' },
      ])
        .pipe(toAgui({ ...run, generateId: sequentialIds() }))
        .subscribe({
          next(event) {
            seen.push(event.type);
            if (event.type === EventType.TEXT_MESSAGE_CONTENT) throw boom;
          },
          complete: () => void (completed = true),
        });
      const escaped = await watch.settle();
      expect(escaped.map(({ kind }) => kind)).toEqual(['rxjs.onUnhandledError', 'rxjs.onUnhandledError']);
      expect(escaped.every(({ error }) => error === boom)).toBe(true);
      expect(seen).toEqual([EventType.RUN_STARTED, EventType.TEXT_MESSAGE_START, EventType.TEXT_MESSAGE_CONTENT, EventType.TEXT_MESSAGE_CONTENT, EventType.TEXT_MESSAGE_END, EventType.RUN_FINISHED]);
      expect(completed).toBe(true);
    });

    it('should unsubscribe the upstream when the run ends even though the consumer threw', async () => {
      let upstreamSubscriber: Subscriber<AgentEvent> | undefined;
      let tornDown = 0;
      const source$ = new Observable<AgentEvent>((subscriber) => {
        upstreamSubscriber = subscriber;
        return () => void tornDown++;
      });
      const output: string[] = [];
      const subscription = source$.pipe(toAgui({ ...run, generateId: sequentialIds() })).subscribe({
        next(event) {
          output.push(event.type);
          throw new Error('consumer bug');
        },
      });
      upstreamSubscriber!.next({ type: EventType.TEXT_MESSAGE_CHUNK, delta: 'x' });
      upstreamSubscriber!.next({ type: EventType.RUN_ERROR, message: 'provider said no' });
      expect(tornDown).toBe(1);
      expect(subscription.closed).toBe(true);
      expect(terminals(output.map((type) => ({ type }) as Event))).toHaveLength(1);
      expect(output[output.length - 1]).toBe(EventType.RUN_ERROR);
      const escaped = await watch.settle();
      expect(escaped.every(({ kind }) => kind === 'rxjs.onUnhandledError')).toBe(true);
      expect(escaped.length).toBe(output.length);
    });

    it('should unsubscribe the upstream when a throwing consumer unsubscribes, with nothing escaping but the report', async () => {
      const source$ = new Subject<AgentEvent>();
      const subscription = source$.pipe(toAgui(run)).subscribe({
        next() {
          throw new Error('consumer bug');
        },
      });
      expect(source$.observed).toBe(true);
      subscription.unsubscribe();
      expect(source$.observed).toBe(false);
      const escaped = await watch.settle();
      // Only RUN_STARTED reached the consumer before it left.
      expect(escaped.map(({ kind }) => kind)).toEqual(['rxjs.onUnhandledError']);
    });
  });

  describe('an option callback that throws', () => {
    it('should end the run with RUN_ERROR carrying the message of a throwing generateId', async () => {
      const generateId = () => {
        throw new Error('id service down');
      };
      const { events } = await runWithOracle(of<AgentEvent[]>({ type: EventType.TEXT_MESSAGE_CHUNK, delta: 'hi' }).pipe(toAgui({ ...run, generateId })));
      expect(typesOf(events)).toEqual([EventType.RUN_STARTED, EventType.RUN_ERROR]);
      expect(events[1]).toEqual({ type: EventType.RUN_ERROR, message: 'id service down' });
      expect(await watch.settle()).toEqual([]);
    });

    it('should end the run with RUN_ERROR when generateId throws mid-run, closing what is open first', async () => {
      let calls = 0;
      const generateId = () => {
        if (++calls > 1) throw new Error('ids exhausted');
        return 'm1';
      };
      const { events, messages } = await runWithOracle(
        from<AgentEvent[]>([
          { type: EventType.TEXT_MESSAGE_CHUNK, delta: 'first' },
          { type: EventType.TOOL_CALL_CHUNK, toolCallName: 'search', delta: '{}' },
        ]).pipe(toAgui({ ...run, generateId })),
      );
      expect(events[events.length - 1]).toEqual({ type: EventType.RUN_ERROR, message: 'ids exhausted' });
      expect(terminals(events as Event[])).toHaveLength(1);
      expect(messages).toEqual([{ id: 'm1', role: 'assistant', content: 'first' }]);
      expect(await watch.settle()).toEqual([]);
    });

    it('should end the run with RUN_ERROR carrying the message of a throwing onDiagnostic (today: the throw fails the run)', async () => {
      const onDiagnostic = () => {
        throw new Error('diagnostic sink full');
      };
      // A late RUN_STARTED is dropped with a diagnostic; the sink's throw is routed to the error path.
      const { events } = await runWithOracle(
        from<AgentEvent[]>([
          { type: EventType.TEXT_MESSAGE_CHUNK, delta: 'hi' },
          { type: EventType.RUN_STARTED, threadId: 'thread-1', runId: 'run-1' } as AgentEvent,
          { type: EventType.TEXT_MESSAGE_CHUNK, delta: ' there' },
        ]).pipe(toAgui({ ...run, generateId: sequentialIds(), onDiagnostic })),
      );
      expect(events[events.length - 1]).toEqual({ type: EventType.RUN_ERROR, message: 'diagnostic sink full' });
      expect(terminals(events as Event[])).toHaveLength(1);
      expect(await watch.settle()).toEqual([]);
    });
  });

  describe('timer-based operators under fake timers', () => {
    it('should flush coalesceDeltas on its window and leave no timer after the run', async () => {
      jest.useFakeTimers();
      const source$ = new Subject<AgentEvent>();
      const out: Event[] = [];
      let done = false;
      source$
        .pipe(toAgui({ ...run, generateId: sequentialIds() }), coalesceDeltas({ intervalMs: 50 }))
        .subscribe({ next: (event) => void out.push(event), complete: () => void (done = true) });
      source$.next({ type: EventType.TEXT_MESSAGE_CHUNK, delta: 'Hel' });
      source$.next({ type: EventType.TEXT_MESSAGE_CHUNK, delta: 'lo' });
      expect(typesOf(out)).toEqual([EventType.RUN_STARTED, EventType.TEXT_MESSAGE_START]);
      expect(jest.getTimerCount()).toBe(1);
      jest.advanceTimersByTime(50);
      expect(out[2]).toMatchObject({ type: EventType.TEXT_MESSAGE_CONTENT, delta: 'Hello' });
      source$.next({ type: EventType.TEXT_MESSAGE_CHUNK, delta: '!' });
      source$.complete();
      expect(done).toBe(true);
      expect(typesOf(out).slice(3)).toEqual([EventType.TEXT_MESSAGE_CONTENT, EventType.TEXT_MESSAGE_END, EventType.RUN_FINISHED]);
      expect(jest.getTimerCount()).toBe(0);
      jest.useRealTimers();
      expect(await watch.settle()).toEqual([]);
    });

    it('should cancel the coalesceDeltas timer when the run errors or is unsubscribed mid-window', async () => {
      jest.useFakeTimers();
      const erroring$ = new Subject<AgentEvent>();
      const out: Event[] = [];
      erroring$.pipe(toAgui({ ...run, generateId: sequentialIds() }), coalesceDeltas({ intervalMs: 50 })).subscribe((event) => void out.push(event));
      erroring$.next({ type: EventType.TEXT_MESSAGE_CHUNK, delta: 'x' });
      expect(jest.getTimerCount()).toBe(1);
      erroring$.error(new Error('upstream died'));
      expect(out[out.length - 1]).toEqual({ type: EventType.RUN_ERROR, message: 'upstream died' });
      expect(jest.getTimerCount()).toBe(0);

      const abandoned$ = new Subject<AgentEvent>();
      const subscription = abandoned$.pipe(toAgui(run), coalesceDeltas({ intervalMs: 50 })).subscribe();
      abandoned$.next({ type: EventType.TEXT_MESSAGE_CHUNK, delta: 'y' });
      expect(jest.getTimerCount()).toBe(1);
      subscription.unsubscribe();
      expect(jest.getTimerCount()).toBe(0);
      expect(abandoned$.observed).toBe(false);
      jest.useRealTimers();
      expect(await watch.settle()).toEqual([]);
    });

    it('should send toSSEStream heartbeats while idle and leave no timer once the run ends', async () => {
      jest.useFakeTimers();
      const source$ = new Subject<AgentEvent>();
      const stream = toSSEStream(source$.pipe(toAgui({ ...run, generateId: sequentialIds() })), { heartbeatMs: 1000 });
      const reader = stream.getReader();
      const decoder = new TextDecoder();
      const read = async () => decoder.decode((await reader.read()).value);
      expect(await read()).toContain('"RUN_STARTED"');
      // The heartbeat's timer (the end of RUN_STARTED's tick is no timer).
      jest.runAllTicks();
      expect(jest.getTimerCount()).toBe(1);
      jest.advanceTimersByTime(1000);
      expect(await read()).toBe(': ping\n\n');
      jest.advanceTimersByTime(1000);
      expect(await read()).toBe(': ping\n\n');
      source$.error(new Error('model timeout'));
      let rest = '';
      for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) rest += decoder.decode(chunk.value);
      expect(rest.match(/^data: /gm)).toHaveLength(1);
      expect(rest).toContain('"RUN_ERROR"');
      jest.runAllTicks();
      expect(jest.getTimerCount()).toBe(0);
      jest.useRealTimers();
      expect(await watch.settle()).toEqual([]);
    });

    it('should leave no toSSEStream heartbeat timer when the reader cancels mid-run', async () => {
      jest.useFakeTimers();
      const source$ = new Subject<AgentEvent>();
      const stream = toSSEStream(source$.pipe(toAgui(run)), { heartbeatMs: 1000 });
      const reader = stream.getReader();
      await reader.read();
      jest.runAllTicks();
      expect(jest.getTimerCount()).toBe(1);
      await reader.cancel();
      expect(jest.getTimerCount()).toBe(0);
      expect(source$.observed).toBe(false);
      jest.useRealTimers();
      expect(await watch.settle()).toEqual([]);
    });
  });
});
