import { EventType, type Event, type RunAgentInput } from '@ag-ui/core';
import { NEVER, Observable, Subject, lastValueFrom, of, toArray } from 'rxjs';
import { RunAgentInputSchema } from '@ag-ui/core/schemas';
import { agentRun } from '../../../lib/transports/agentRun.js';
import type { AgentEvent } from '../../../lib/protocol/agentEvent.js';
import { runWithOracle } from '../../support/oracle.js';

const input: RunAgentInput = { threadId: 'thread-1', runId: 'run-1', state: {}, messages: [], tools: [], context: [], forwardedProps: {} };
const options = { toAgui: { onDiagnostic: () => undefined, onError: () => undefined }, slice: {} };
const token: AgentEvent = { type: EventType.TEXT_MESSAGE_CHUNK, messageId: 'm1', delta: 'Hi' };
const types = (events: Event[]) => events.map((event) => event.type);

/** An agent that reads its signal (when `read`), records what happens to it, and emits a token then waits (or completes). */
function recordingAgent(log: string[], { read = true, complete = false } = {}) {
  let signal: AbortSignal | undefined;
  const start = (get: () => AbortSignal) =>
    new Observable<AgentEvent>((subscriber) => {
      if (read) {
        signal = get();
        signal.addEventListener('abort', () => log.push('agent aborted'));
      }
      subscriber.next(token);
      if (complete) subscriber.complete();
    });
  return { start, signal: () => signal };
}

describe('agentRun', () => {
  it('should abort the signal the agent read when the run is unsubscribed before its end', () => {
    const log: string[] = [];
    const agent = recordingAgent(log);
    const events: Event[] = [];
    const subscription = agentRun(agent.start, input, options).subscribe((event) => events.push(event));
    expect(agent.signal()?.aborted).toBe(false);
    subscription.unsubscribe();
    expect(agent.signal()?.aborted).toBe(true);
    expect(log).toEqual(['agent aborted']);
    // Unsubscribed: the lifecycle sends nothing for the abort.
    expect(types(events)).toEqual([EventType.RUN_STARTED, EventType.TEXT_MESSAGE_START, EventType.TEXT_MESSAGE_CONTENT]);
  });

  it('should never abort the signal after a run that ended by itself, even when cancelled later', async () => {
    const log: string[] = [];
    const agent = recordingAgent(log, { complete: true });
    const cancel = new AbortController();
    const events = await lastValueFrom(agentRun(agent.start, input, options, cancel.signal).pipe(toArray()));
    cancel.abort();
    expect(agent.signal()?.aborted).toBe(false);
    expect(log).toEqual([]);
    expect(events.at(-1)).toMatchObject({ type: EventType.RUN_FINISHED });
  });

  it('should end a cancelled run with RUN_FINISHED cancelled before the agent hears of the abort, then abort it', () => {
    const log: string[] = [];
    const agent = recordingAgent(log);
    const cancel = new AbortController();
    agentRun(agent.start, input, options, cancel.signal).subscribe({ next: (event) => log.push(event.type), complete: () => log.push('complete') });
    cancel.abort();
    expect(log.slice(-4)).toEqual([EventType.TEXT_MESSAGE_END, EventType.RUN_FINISHED, 'complete', 'agent aborted']);
    expect(agent.signal()?.aborted).toBe(true);
  });

  it('should give an agent that reads its signal only after the run was cancelled an aborted one', () => {
    let get: (() => AbortSignal) | undefined;
    const cancel = new AbortController();
    const events: Event[] = [];
    agentRun(
      (signal) => {
        get = signal;
        return NEVER;
      },
      input,
      options,
      cancel.signal,
    ).subscribe((event) => events.push(event));
    cancel.abort();
    expect(events.at(-1)).toMatchObject({ type: EventType.RUN_FINISHED, outcome: { type: 'cancelled' } });
    expect(get?.().aborted).toBe(true);
    expect(get?.()).toBe(get?.());
  });

  it('should not start the agent of a run whose cancel was aborted before it was subscribed', () => {
    const cancel = new AbortController();
    cancel.abort();
    let started = false;
    const events: Event[] = [];
    agentRun(
      () => {
        started = true;
        return of(token);
      },
      input,
      options,
      cancel.signal,
    ).subscribe((event) => events.push(event));
    expect(started).toBe(false);
    expect(types(events)).toEqual([EventType.RUN_STARTED, EventType.RUN_FINISHED]);
  });

  it('should leave no listener of its own on cancel for an agent that never reads its signal', () => {
    const cancel = new AbortController();
    const added = jest.spyOn(cancel.signal, 'addEventListener');
    const source = new Subject<AgentEvent>();
    const subscription = agentRun(() => source, input, options, cancel.signal).subscribe();
    source.next(token);
    // The lifecycle's own, only.
    expect(added).toHaveBeenCalledTimes(1);
    subscription.unsubscribe();
  });

  it("should hand toAgui every shared option, and the run's own onError and checked input over the shared ones", async () => {
    const diagnostics: string[] = [];
    const shared: string[] = [];
    const own: string[] = [];
    const failing = (): Observable<AgentEvent> =>
      new Observable<AgentEvent>((subscriber) => {
        // No messageId (minted by generateId), a snake_case field (read, and told to onDiagnostic), a state past the initial one.
        subscriber.next({ type: EventType.TEXT_MESSAGE_CHUNK, delta: 'Hi' });
        subscriber.next({ type: EventType.TOOL_CALL_START, tool_call_id: 'c1', toolCallName: 'search' } as unknown as AgentEvent);
        subscriber.next({ type: EventType.STATE_SNAPSHOT, snapshot: { count: 2, notes: 'a state long enough that a patch of it is the smaller' } });
        subscriber.error(new Error('secret detail'));
      });
    const sharedOptions = {
      generateId: () => 'minted-1',
      onDiagnostic: ({ message }: { message: string }) => void diagnostics.push(message),
      initialState: { count: 1, notes: 'a state long enough that a patch of it is the smaller' },
      immutableState: true,
      exposeErrorStack: true,
      errorMessages: 'redact' as const,
      onError: (error: unknown) => void shared.push(String(error)),
    };
    const parse = jest.spyOn(RunAgentInputSchema, 'safeParse');
    try {
      const run = agentRun(failing, input, { toAgui: sharedOptions, onError: (error) => void own.push((error as Error).message), checked: input, slice: {} });
      const events = await lastValueFrom(run.pipe(toArray()));
      expect(types(events)).toEqual([
        EventType.RUN_STARTED,
        EventType.TEXT_MESSAGE_START,
        EventType.TEXT_MESSAGE_CONTENT,
        EventType.TOOL_CALL_START,
        EventType.STATE_DELTA,
        EventType.TEXT_MESSAGE_END,
        EventType.TOOL_CALL_ARGS,
        EventType.TOOL_CALL_END,
        EventType.RUN_ERROR,
      ]);
      expect(events[1]).toMatchObject({ messageId: 'minted-1' });
      expect(events[4]).toMatchObject({ delta: [{ op: 'replace', path: '/count', value: 2 }] });
      const error = events[8] as Event & { message: string; code?: string; metadata?: { stack?: string } };
      expect(error.message).not.toContain('secret detail');
      expect(error.code).toBe('INTERNAL_ERROR');
      expect(diagnostics.some((message) => message.includes('tool_call_id'))).toBe(true);
      expect({ own, shared }).toEqual({ own: ['secret detail'], shared: [] });
      // The run's input came checked: not validated again.
      expect(parse).not.toHaveBeenCalled();
      // Without the run's own, the shared onError hears of the failure, and the input is validated;
      // errors exposed, the stack goes with them (exposeErrorStack).
      const exposed = await lastValueFrom(agentRun(failing, input, { toAgui: { ...sharedOptions, errorMessages: 'expose' }, slice: {} }).pipe(toArray()));
      expect(exposed.at(-1)).toMatchObject({ type: EventType.RUN_ERROR, message: 'secret detail', metadata: { stack: expect.stringContaining('secret detail') } });
      expect(shared).toEqual(['Error: secret detail']);
      expect(parse).toHaveBeenCalledTimes(1);
    } finally {
      parse.mockRestore();
    }
  });

  it('should make a run the official client accepts, cancelled or not', async () => {
    const done = await runWithOracle(() => agentRun(() => of(token), input, options));
    expect(done.messages).toEqual([{ id: 'm1', role: 'assistant', content: 'Hi' }]);
    const cancel = new AbortController();
    const cancelled = runWithOracle(() => agentRun(() => NEVER, input, options, cancel.signal));
    cancel.abort();
    await expect(cancelled).resolves.toBeDefined();
  });
});
