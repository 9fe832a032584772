import { HttpAgent } from '@ag-ui/client';
import { EventType, type Message } from '@ag-ui/core';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { NEVER, Observable, ReplaySubject, Subject, concat, concatMap, delay, filter, firstValueFrom, from, map, of, race, startWith, take, timeout, timer } from 'rxjs';
import type { AgentEvent } from '../../lib/protocol/agentEvent.js';
import { createAguiHandler, type AguiAgent } from '../../lib/transports/createAguiHandler.js';
import { fullGc } from '../support/gc.js';

const gc = fullGc();

/*
 * Load on loopback: one createAguiHandler server on 127.0.0.1, many official HttpAgent clients at once.
 *
 * Memory: `global.gc` exists only when node runs with --expose-gc, which jest does not pass; the
 * flag is set at runtime instead (v8.setFlagsFromString + vm), so that a full collection runs in each
 * settle round. `heapUsed` is measured after a warm-up and again after the runs' results are
 * dropped and a few settle rounds. Measured here: about 104 MB of growth without a full GC (garbage
 * not yet collected), a few MB with it. The bound is generous (50 MB for 1,000 runs) and would also
 * hold if the runtime flag were refused, as long as the runs themselves are released.
 */

const TOTAL = 1000;
const IN_FLIGHT = 250;
const GATE = 200;
const ABORTED_EVERY = 10; // every 10th client aborts mid-run: 100 of 1,000

/** A short scripted agent: text, a tool call and its result, a state change, text, the rest 1 ms apart. */
function script(runId: string): AgentEvent[] {
  return [
    { type: EventType.TEXT_MESSAGE_CHUNK, delta: `Run ${runId}: ` },
    { type: EventType.TEXT_MESSAGE_CHUNK, delta: 'checking.' },
    { type: EventType.TOOL_CALL_CHUNK, toolCallId: `call-${runId}`, toolCallName: 'lookup', delta: `{"run":"${runId}"}` },
    { type: EventType.TOOL_CALL_RESULT, toolCallId: `call-${runId}`, content: { ok: true } },
    { type: EventType.STATE_SNAPSHOT, snapshot: { runId, done: true } },
    { type: EventType.TEXT_MESSAGE_CHUNK, delta: 'Done.' },
  ];
}

function expectedMessages(runId: string, userMessage: Message): unknown[] {
  return [
    userMessage,
    {
      id: expect.any(String),
      role: 'assistant',
      content: `Run ${runId}: checking.`,
      toolCalls: [{ id: `call-${runId}`, type: 'function', function: { name: 'lookup', arguments: `{"run":"${runId}"}` } }],
    },
    { id: expect.any(String), role: 'tool', toolCallId: `call-${runId}`, content: '{"ok":true}' },
    { id: expect.any(String), role: 'assistant', content: 'Done.' },
  ];
}

/** Counts what the server's agents did: subscribed, completed, and unsubscribed before completing (cancelled). */
function instrumentedAgent() {
  // The clients' own CPU work (the official client validates every event) is what limits overlap on
  // two cores: so the first wave holds its first event until ${GATE} agents run at once (at most 5 s),
  // which proves that many concurrent runs; later runs pass the opened gate after 1 ms.
  const opened$ = new ReplaySubject<void>(1);
  const gate$ = race(opened$.pipe(take(1)), timer(5000)).pipe(delay(1));
  const counts = { started: 0, completed: 0, cancelled: 0, inFlight: 0, maxInFlight: 0 };
  // The `ctx.signal` of each cancelled agent: the handler unsubscribes first, then aborts it.
  const cancelledSignals: AbortSignal[] = [];
  // Ticks whenever an agent is torn down: specs wait on it, not on a clock.
  const tornDown$ = new Subject<void>();
  const agent: AguiAgent = (input, { signal }) =>
    new Observable<AgentEvent>((subscriber) => {
      counts.started++;
      counts.inFlight++;
      counts.maxInFlight = Math.max(counts.maxInFlight, counts.inFlight);
      if (counts.inFlight >= GATE) opened$.next();
      let ended = false;
      const abortable = input.runId.startsWith('abort-');
      // An aborting client's agent sends its first text, then waits (a slow model) until it is cancelled.
      const events$ = abortable
        ? concat(of<AgentEvent>({ type: EventType.TEXT_MESSAGE_CHUNK, delta: 'thinking…' }), NEVER)
        : from(script(input.runId)).pipe(concatMap((event, index) => (index === 0 && !input.runId.startsWith('warm-') ? gate$ : timer(1)).pipe(map(() => event))));
      const subscription = events$.subscribe({
        next: (event) => subscriber.next(event),
        error: (error) => subscriber.error(error),
        complete: () => {
          ended = true;
          counts.completed++;
          subscriber.complete();
        },
      });
      return () => {
        counts.inFlight--;
        if (!ended) {
          counts.cancelled++;
          cancelledSignals.push(signal);
        }
        ended = true;
        subscription.unsubscribe();
        tornDown$.next();
      };
    });
  return { agent, counts, cancelledSignals, tornDown$ };
}

async function listen(handler: Parameters<typeof createServer>[1]): Promise<{ server: Server; url: string }> {
  const server = createServer(handler);
  // Longer than the client pool keeps a socket idle: with Node's 5 s default, a busy CI machine can
  // see the server close a kept-alive socket just as a client reuses it ("other side closed"), a
  // race of HTTP keep-alive, not of the handler.
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', 1024, resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/agent` };
}

function close(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}

/** Full GCs with turns of the event loop between them, so that closed sockets and finalizers are released. */
const settle = async (rounds: number) => {
  for (let i = 0; i < rounds; i++) {
    gc?.();
    await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setImmediate(resolve));
  }
};

interface Outcome {
  index: number;
  runId: string;
  aborted: boolean;
  messages: Message[];
  types: string[];
  /** What the run failed with, if it did: recorded, so that one failure cannot leave other clients running unwatched. */
  error?: string;
}

const userMessageOf = (index: number): Message => ({ id: `u-${index}`, role: 'user', content: `Question ${index}` });

/** Whether a completed run is what the agent meant: one run, RUN_STARTED … RUN_FINISHED, and the expected messages (generated ids aside). */
function isExpectedRun(outcome: Outcome): boolean {
  const sameMessages = () => {
    try {
      expect(outcome.messages).toEqual(expectedMessages(outcome.runId, userMessageOf(outcome.index)));
      return true;
    } catch {
      return false;
    }
  };
  return (
    outcome.types[0] === EventType.RUN_STARTED &&
    outcome.types[outcome.types.length - 1] === EventType.RUN_FINISHED &&
    outcome.types.filter((type) => type === EventType.RUN_FINISHED || type === EventType.RUN_ERROR).length === 1 &&
    outcome.messages.every((m) => typeof m.id === 'string' && m.id !== '') &&
    sameMessages()
  );
}

/** One official-client run; an aborting client calls abortRun() once it has seen the first text. */
async function clientRun(url: string, index: number, warmUp = false): Promise<Outcome> {
  const aborted = index % ABORTED_EVERY === 0;
  const runId = `${warmUp ? 'warm' : aborted ? 'abort' : 'run'}-${index}`;
  const userMessage = userMessageOf(index);
  const agent = new HttpAgent({ url, threadId: `thread-${index}`, initialMessages: [userMessage], initialState: {} });
  const types: string[] = [];
  try {
    await agent.runAgent(
      { runId },
      {
        onEvent: ({ event }) => {
          types.push(event.type);
          if (aborted && event.type === EventType.TEXT_MESSAGE_CONTENT) agent.abortRun();
        },
      },
    );
  } catch (error) {
    return { index, runId, aborted, messages: agent.messages, types, error: String((error as Error)?.cause ?? error) };
  }
  return { index, runId, aborted, messages: agent.messages, types };
}

describe('createAguiHandler under load on loopback', () => {
  let server: Server | undefined;
  afterEach(async () => {
    if (server) await close(server);
    server = undefined;
  });

  it(
    `should serve ${TOTAL} concurrent official-client runs (${IN_FLIGHT} in flight), cancel the aborted ones, and give the memory back`,
    async () => {
      const { agent, counts, cancelledSignals, tornDown$ } = instrumentedAgent();
      let url: string;
      ({ server, url } = await listen(createAguiHandler(agent, { heartbeatMs: 0 })));
      const consoleError = console.error;
      console.error = () => undefined;
      try {
        // Warm-up: JIT, module caches, the client's first-use allocations, so that the baseline is fair.
        for (let i = 1; i <= 20; i++) await clientRun(url, i * ABORTED_EVERY + 1, true);
        await settle(10);
        const baseline = process.memoryUsage().heapUsed;
        const startedBefore = counts.started;
        const completedBefore = counts.completed;

        const started = Date.now();
        const outcomes: Outcome[] = new Array(TOTAL);
        let next = 0;
        let clientsInFlight = 0;
        let maxClientsInFlight = 0;
        const worker = async () => {
          while (next < TOTAL) {
            const index = next++;
            clientsInFlight++;
            maxClientsInFlight = Math.max(maxClientsInFlight, clientsInFlight);
            try {
              outcomes[index] = await clientRun(url, index);
            } finally {
              clientsInFlight--;
            }
          }
        };
        await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
        const elapsed = Date.now() - started;

        const abortedCount = outcomes.filter((outcome) => outcome.aborted).length;
        // The server notices a client's departure on the socket's close: give it a moment.
        // Until every aborted agent is cancelled and none runs (bounded: a hang fails the test, it does not wait forever).
        await firstValueFrom(
          tornDown$.pipe(
            startWith(undefined),
            filter(() => counts.cancelled >= abortedCount && counts.inFlight === 0),
            timeout({ first: 10_000, with: () => of(undefined) }),
          ),
        );

        // No run failed on the way (the aborted ones end quietly: the client ignores its own abort).
        expect(outcomes.filter((outcome) => outcome.error !== undefined).map((outcome) => `${outcome.runId}: ${outcome.error}`)).toEqual([]);
        // Every run was accepted by the official client with the expected messages.
        const wrong = outcomes.filter((outcome) => !outcome.aborted && !isExpectedRun(outcome));
        expect(wrong.map((outcome) => outcome.runId)).toEqual([]);
        for (const outcome of outcomes.filter((o) => !o.aborted).slice(0, 5)) expect(outcome.messages).toEqual(expectedMessages(outcome.runId, userMessageOf(outcome.index)));
        expect(outcomes.filter((o) => o.aborted && o.types.includes(EventType.RUN_FINISHED))).toEqual([]);
        expect(outcomes.filter((o) => o.aborted).every((o) => o.types.includes(EventType.TEXT_MESSAGE_CONTENT))).toBe(true);

        // Concurrency really happened, on both sides.
        expect(maxClientsInFlight).toBe(IN_FLIGHT);
        expect(counts.maxInFlight).toBeGreaterThanOrEqual(GATE);
        // Every request reached an agent; the scripted ones completed, the aborted ones were cancelled.
        expect(counts.started - startedBefore).toBe(TOTAL);
        expect(counts.completed - completedBefore).toBe(TOTAL - abortedCount);
        expect(abortedCount).toBe(TOTAL / ABORTED_EVERY);
        expect(counts.cancelled).toBe(abortedCount);
        expect(cancelledSignals.filter((signal) => signal.aborted)).toHaveLength(abortedCount);
        expect(counts.inFlight).toBe(0);

        // The test's own records of the runs go first: only what the server and clients kept counts.
        outcomes.length = 0;
        await settle(20);
        const growth = process.memoryUsage().heapUsed - baseline;
        // eslint-disable-next-line no-console
        console.log(`[load] ${TOTAL} runs (${abortedCount} aborted), ${IN_FLIGHT} in flight, server peak ${counts.maxInFlight} agents: ${elapsed} ms; heap growth ${(growth / 1024 / 1024).toFixed(1)} MB${gc ? ' (after full gc)' : ' (no gc available)'}`);
        expect(growth).toBeLessThan(50 * 1024 * 1024);
      } finally {
        console.error = consoleError;
      }
    },
    120_000,
  );
});
