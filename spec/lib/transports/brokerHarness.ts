import type { RunAgentInput } from '@ag-ui/core';
import { HttpAgent, runHttpRequest, transformHttpEventStream } from '@ag-ui/client';
import type { BaseEvent } from '@ag-ui/core';
import { Observable, ReplaySubject, concat, delay, from, mergeMap, take } from 'rxjs';
import type { AgentEvent } from '../../../lib/protocol/agentEvent.js';
import type { AguiAgent } from '../../../lib/transports/createAguiHandler.js';

/** A small complete run: text, a tool call with its result, a state change, more text. */
export const SCRIPT: AgentEvent[] = [
  { type: 'TEXT_MESSAGE_CHUNK', delta: 'Checking ' },
  { type: 'TEXT_MESSAGE_CHUNK', delta: 'the weather.' },
  { type: 'TOOL_CALL_CHUNK', toolCallId: 'call-1', toolCallName: 'weather', delta: '{"city":"Oslo"}' },
  { type: 'TOOL_CALL_RESULT', toolCallId: 'call-1', content: { celsius: -3 } },
  { type: 'STATE_SNAPSHOT', snapshot: { count: 1, city: 'Oslo' } },
  { type: 'TEXT_MESSAGE_CHUNK', delta: 'It is -3°C.' },
];

/** What the official client holds after one run of {@link SCRIPT} that answered user message `userId` ('Weather in Oslo?'). */
export const scriptMessages = (userId = 'u1') => [
  { id: userId, role: 'user', content: 'Weather in Oslo?' },
  {
    id: expect.any(String),
    role: 'assistant',
    content: 'Checking the weather.',
    toolCalls: [{ id: 'call-1', type: 'function', function: { name: 'weather', arguments: '{"city":"Oslo"}' } }],
  },
  { id: expect.any(String), role: 'tool', toolCallId: 'call-1', content: '{"celsius":-3}' },
  { id: expect.any(String), role: 'assistant', content: 'It is -3°C.' },
];

/**
 * A controllable agent for the broker specs: counts its starts, keeps each run's abort signal, and
 * plays a script per runId (default: {@link SCRIPT}, paced by a millisecond). `hold(runId, before,
 * after)` plays `before`, then waits for `release(runId)` before `after`; `endless(runId, events)`
 * plays `events` and never ends.
 */
export function agentHarness() {
  const starts: string[] = [];
  const signals = new Map<string, AbortSignal>();
  const scripts = new Map<string, () => Observable<AgentEvent>>();
  const gates = new Map<string, ReplaySubject<void>>();
  const unsubscribed = new Set<string>();
  const gate = (runId: string) => {
    let subject = gates.get(runId);
    if (subject === undefined) gates.set(runId, (subject = new ReplaySubject<void>(1)));
    return subject;
  };
  const agent: AguiAgent = (input: RunAgentInput, { signal }) => {
    starts.push(input.runId);
    signals.set(input.runId, signal);
    const script = scripts.get(input.runId) ?? (() => from(SCRIPT).pipe(delay(1)));
    return new Observable<AgentEvent>((subscriber) => {
      const subscription = script().subscribe(subscriber);
      return () => {
        unsubscribed.add(input.runId);
        subscription.unsubscribe();
      };
    });
  };
  return {
    agent,
    starts,
    signals,
    unsubscribed,
    script(runId: string, events$: () => Observable<AgentEvent>) {
      scripts.set(runId, events$);
    },
    hold(runId: string, before: AgentEvent[], after: AgentEvent[]) {
      scripts.set(runId, () => concat(from(before), gate(runId).pipe(take(1), mergeMap(() => from(after)))));
    },
    endless(runId: string, events: AgentEvent[]) {
      scripts.set(runId, () => concat(from(events), new Observable<AgentEvent>(() => undefined)));
    },
    /** A script played with a millisecond's pause first. */
    scriptOf(events: readonly AgentEvent[]): Observable<AgentEvent> {
      return from(events).pipe(delay(1));
    },
    release(runId: string) {
      gate(runId).next();
    },
  };
}

/**
 * The official HttpAgent with `connect()` implemented against route 3, parsing the answer with
 * the official client's own `runHttpRequest` and `transformHttpEventStream`.
 */
export class ConnectingHttpAgent extends HttpAgent {
  protected override connect(input: RunAgentInput): Observable<BaseEvent> {
    return transformHttpEventStream(runHttpRequest(() => this.fetch(`${this.url}/connect`, this.requestInit(input))));
  }
}

/** Runs `work` with console.error silenced (the official client logs failed runs). */
export async function quietly<T>(work: () => Promise<T>): Promise<T> {
  const consoleError = console.error;
  console.error = () => undefined;
  try {
    return await work();
  } finally {
    console.error = consoleError;
  }
}
