import type { Event, Message } from '@ag-ui/core';
import fc from 'fast-check';
import { concat, finalize, from, Observable, take, throwError } from 'rxjs';
import type { AgentEvent } from '../../lib/protocol/agentEvent.js';
import { createAguiVerifier, type AguiViolation } from '../../lib/tracking/verifier.js';
import { toAgui } from '../../operators/toAgui.js';
import { collect, terminals } from '../support/helpers.js';
import { runWithOracle } from '../support/oracle.js';
import { cutCase, historyCase, hostileCase, shuffledTurn, wellFormedTurn, type HistoryCase, type HostileCase, type TurnIntent } from './arbitraries.js';

/**
 * Property-based specs of toAgui: arbitrary agent event sequences in, one well-formed AG-UI run out.
 * `FUZZ_RUNS` sets the total number of cases (default 10,000), split across the properties below.
 */
const totalRuns = Number(process.env.FUZZ_RUNS ?? 10000);
const share = (fraction: number) => Math.max(1, Math.round(totalRuns * fraction));
const seed = process.env.FUZZ_SEED === undefined ? undefined : Number(process.env.FUZZ_SEED);
const params = (numRuns: number): fc.Parameters<unknown> => ({ numRuns, ...(seed === undefined ? {} : { seed }) });

const run = { threadId: 'thread-1', runId: 'run-1' };
let casesRun = 0;
// Generous per-property time: about 5 ms a case on a laptop, so several times that for a slow CI machine.
const timeout = Math.max(60_000, totalRuns * 25);

/** The agent's events as a source: optionally failing after `errorAt` events. */
function source(events: readonly unknown[], errorAt?: number): Observable<AgentEvent> {
  const events$ = from(events as AgentEvent[]);
  if (errorAt === undefined) return events$;
  return concat(from(events.slice(0, errorAt) as AgentEvent[]), throwError(() => new Error('agent failed')));
}

/** Every violation the verifier finds in `events`; `ended` adds what the end of the stream leaves wrong; `messages` turns on id-collision. */
function violationsOf(events: readonly Event[], ended = true, messages?: Message[]): AguiViolation[] {
  const verifier = createAguiVerifier({ messages });
  const found = events.flatMap((event, index) => verifier.verify(event, index));
  return ended ? [...found, ...verifier.end()] : found;
}

/** The output as the official client receives it: must be accepted, verifier-clean, with one terminal event, last. */
async function checkAccepted(events$: Observable<AgentEvent>) {
  const output = await collect(events$.pipe(toAgui({ ...run, onDiagnostic: () => {} })));
  expect(violationsOf(output)).toEqual([]);
  expect(terminals(output)).toEqual([output[output.length - 1]]);
  const oracle = await runWithOracle(from(output));
  // The client strips fields its schemas do not know; it must still have seen every event, in order.
  expect(oracle.events.map((event) => event.type)).toEqual(output.map((event) => event.type));
  return { output, oracle };
}

/** What the client's messages say, in the shape of a {@link TurnIntent}. */
function reconstructed(messages: Message[], state: unknown): TurnIntent {
  const intent: TurnIntent = { texts: new Map(), reasonings: new Map(), toolCalls: new Map(), results: new Map(), state: state as Record<string, unknown> };
  for (const message of messages) {
    if (message.role === 'assistant') {
      if (typeof message.content === 'string' && message.content !== '') intent.texts.set(message.id, message.content);
      for (const call of message.toolCalls ?? []) intent.toolCalls.set(call.id, { name: call.function.name, arguments: call.function.arguments });
    } else if (message.role === 'reasoning') {
      intent.reasonings.set(message.id, message.content);
    } else if (message.role === 'tool') {
      intent.results.set(message.toolCallId, typeof message.content === 'string' ? message.content : JSON.stringify(message.content));
    }
  }
  return intent;
}

/** A multiset of strings, as a sorted list, for comparing what was built regardless of the ids it got. */
const bag = (items: readonly string[]) => [...items].sort();

/** What the run added to the client's messages, id-free: text, reasoning, calls with their results, activities. */
function builtByRun(messages: Message[]) {
  const calls = new Map<string, string>();
  for (const message of messages) if (message.role === 'assistant') for (const call of message.toolCalls ?? []) calls.set(call.id, `${call.function.name} ${call.function.arguments}`);
  const texts: string[] = [];
  const reasonings: string[] = [];
  const results: string[] = [];
  const activities: string[] = [];
  for (const message of messages) {
    if (message.role === 'assistant' && typeof message.content === 'string' && message.content !== '') texts.push(message.content);
    else if (message.role === 'reasoning') reasonings.push(message.content);
    else if (message.role === 'tool') results.push(`${calls.get(message.toolCallId)} -> ${String(message.content)}`);
    else if (message.role === 'activity') activities.push(`${message.activityType} ${JSON.stringify(message.content)}`);
  }
  return { texts: bag(texts), reasonings: bag(reasonings), calls: bag([...calls.values()]), results: bag(results), activities: bag(activities) };
}

describe('toAgui under fuzzing (fast-check)', () => {
  const started = Date.now();
  // The official client warns about every field it strips from hostile events; thousands of warnings would drown the report.
  // (A plain swap, not jest.spyOn: a spy would keep every call's arguments for the whole run.)
  const consoleWarn = console.warn;
  beforeAll(() => {
    console.warn = () => undefined;
  });
  afterAll(() => {
    console.warn = consoleWarn;
    console.log(`fuzz: ${casesRun} cases in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  });

  it('should turn every well-formed turn into a run the client accepts, rebuilding exactly the intended messages and state', async () => {
    await fc.assert(
      fc.asyncProperty(wellFormedTurn, async ({ events, intent }) => {
        casesRun++;
        const { oracle } = await checkAccepted(source(events));
        expect(oracle.events[oracle.events.length - 1].type).toBe('RUN_FINISHED');
        const rebuilt = reconstructed(oracle.messages, oracle.state);
        expect(rebuilt.texts).toEqual(intent.texts);
        expect(rebuilt.reasonings).toEqual(intent.reasonings);
        expect(rebuilt.toolCalls).toEqual(intent.toolCalls);
        expect(rebuilt.results).toEqual(intent.results);
        expect(oracle.state).toEqual(intent.state ?? {});
      }),
      params(share(0.25)),
    );
  }, timeout);

  it('should turn every shuffled or truncated turn into one accepted run ending once', async () => {
    await fc.assert(
      fc.asyncProperty(shuffledTurn, async (events) => {
        casesRun++;
        await checkAccepted(source(events));
      }),
      params(share(0.2)),
    );
  }, timeout);

  it('should turn hostile input (unknown types, wrong field types, nulls, duplicate ids, events after terminal events, errors at random points) into one accepted run ending once', async () => {
    await fc.assert(
      fc.asyncProperty(hostileCase, async ({ events, errorAt }: HostileCase) => {
        casesRun++;
        const { output } = await checkAccepted(source(events, errorAt));
        // An error the agent raises inside its run ends it with RUN_ERROR (a RUN_FINISHED or RUN_ERROR it sent earlier ends it first).
        const endedEarlier = events.slice(0, errorAt).some((event) => ['RUN_FINISHED', 'RUN_ERROR'].includes((event as { type?: unknown } | null)?.type as string));
        if (errorAt !== undefined && !endedEarlier) expect(output[output.length - 1].type).toBe('RUN_ERROR');
      }),
      params(share(0.4)),
    );
  }, timeout);

  it('should keep the history intact and build exactly the intended messages when the run reuses history ids and ids across kinds', async () => {
    const tally = { cases: 0, collided: 0 };
    await fc.assert(
      fc.asyncProperty(historyCase, async ({ history, events, intent, activities }: HistoryCase) => {
        casesRun++;
        const input = { ...run, messages: history, tools: [], context: [], state: {}, forwardedProps: {} };
        let diagnostics = 0;
        const output = await collect(from(events).pipe(toAgui({ ...run, input, onDiagnostic: () => void diagnostics++ })));
        tally.cases++;
        if (diagnostics > 0) tally.collided++;
        expect(violationsOf(output, true, history)).toEqual([]);
        const oracle = await runWithOracle(from(output), { initialMessages: structuredClone(history) });
        // The history is untouched, but for the surfaces the run updated in place (same id, same activity type).
        const updated = new Map([...activities].filter(([, activity]) => activity.updatesHistory));
        const expectedHistory = history.map((message) => {
          const activity = updated.get(message.id);
          return activity === undefined ? message : { ...message, activityType: activity.activityType, content: activity.content };
        });
        expect(oracle.messages.slice(0, history.length)).toEqual(expectedHistory);
        // Every message and tool call has an id of its own.
        const messageIds = oracle.messages.map((message) => message.id);
        expect(new Set(messageIds).size).toBe(messageIds.length);
        const callIds = oracle.messages.flatMap((message) => (message.role === 'assistant' ? (message.toolCalls ?? []).map((call) => call.id) : []));
        expect(new Set(callIds).size).toBe(callIds.length);
        // What the run added is what it meant, whatever ids it went under.
        const built = builtByRun(oracle.messages.slice(history.length));
        expect(built.texts).toEqual(bag([...intent.texts.values()]));
        expect(built.reasonings).toEqual(bag([...intent.reasonings.values()]));
        expect(built.calls).toEqual(bag([...intent.toolCalls.values()].map((call) => `${call.name} ${call.arguments}`)));
        const answered = [...intent.results].map(([id, content]) => `${intent.toolCalls.get(id)!.name} ${intent.toolCalls.get(id)!.arguments} -> ${content}`);
        expect(built.results).toEqual(bag(answered));
        const created = [...activities.values()].filter((activity) => !activity.updatesHistory);
        expect(built.activities).toEqual(bag(created.map((activity) => `${activity.activityType} ${JSON.stringify(activity.content)}`)));
        expect(oracle.state).toEqual(intent.state ?? {});
      }),
      params(share(0.1)),
    );
    // The generator must exercise collisions, and runs without any.
    expect(tally.collided).toBeGreaterThan(tally.cases / 5);
    expect(tally.collided).toBeLessThan(tally.cases);
  }, timeout);

  it('should emit only a valid prefix and tear the agent down when the consumer unsubscribes at a random point', async () => {
    await fc.assert(
      fc.asyncProperty(cutCase, async ({ events, errorAt, takeCount }: HostileCase) => {
        casesRun++;
        let tornDown = 0;
        const agent$ = source(events, errorAt).pipe(finalize(() => void tornDown++));
        const output = await collect(agent$.pipe(toAgui({ ...run, onDiagnostic: () => {} }), take(takeCount!)));
        expect(output.length).toBeLessThanOrEqual(takeCount!);
        // Cut or not, nothing emitted breaks a rule; only the end may be missing.
        expect(violationsOf(output, false)).toEqual([]);
        const ends = terminals(output);
        expect(ends.length).toBeLessThanOrEqual(1);
        if (ends.length === 1) expect(output[output.length - 1]).toBe(ends[0]);
        expect(tornDown).toBe(takeCount === 0 ? 0 : 1);
      }),
      params(share(0.15)),
    );
  }, timeout);
});
