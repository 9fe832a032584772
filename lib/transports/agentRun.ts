import type { Event, RunAgentInput } from '@ag-ui/core';
import { EventType } from '@ag-ui/core';
import { Observable, defer } from 'rxjs';
import { toAgui, type ToAguiOptions } from '../../operators/toAgui.js';
import type { AgentResult } from './fromAgentResult.js';
import { fromAgentResult, type SliceOptions } from './fromAgentResult.js';
import { safeUnsubscribe } from '../protocol/createOperator.js';

/**
 * One run of an agent: what it returns for `input` (an Observable, or an iterable pulled in
 * slices) piped through `toAgui` with the run's ids, input and signal. The agent's `signal` is
 * aborted only for a run cancelled before its terminal event (unsubscribed, or `cancel` aborted),
 * never after a run that ended by itself, so post-run work may still use it; aborting `cancel`
 * before the end ends the run with RUN_FINISHED `cancelled`. Shared by the HTTP handlers and
 * `InProcessAgent`; not part of the public API.
 *
 * @param start Calls the agent with the signal to give it.
 * @param input The run's RunAgentInput (its `threadId`, `runId`, `parentRunId` name the run).
 * @param options `toAgui`'s other options, and how an iterable agent is sliced.
 * @param cancel Aborting it cancels the run (a broker's cancel, `abortRun()`).
 */
export function agentRun(
  start: (signal: AbortSignal) => AgentResult<unknown>,
  input: RunAgentInput,
  options: { toAgui: Omit<ToAguiOptions, 'threadId' | 'runId' | 'parentRunId' | 'input' | 'signal'>; slice: SliceOptions },
  cancel?: AbortSignal,
): Observable<Event> {
  return new Observable<Event>((subscriber) => {
    const controller = new AbortController();
    let ended = false;
    const abort = () => {
      if (!ended) controller.abort();
    };
    cancel?.addEventListener('abort', abort);
    if (cancel?.aborted) abort();
    const { signal } = controller;
    const subscription = defer(() => fromAgentResult(start(signal), options.slice) as Observable<never>)
      .pipe(toAgui({ ...options.toAgui, threadId: input.threadId, runId: input.runId, parentRunId: input.parentRunId, input, signal }))
      .subscribe({
        next: (event) => {
          // Its terminal event delivered, the run is over, whatever the reader does next.
          if (event.type === EventType.RUN_FINISHED || event.type === EventType.RUN_ERROR) ended = true;
          subscriber.next(event);
        },
        error: (error: unknown) => {
          ended = true;
          subscriber.error(error);
        },
        complete: () => {
          ended = true;
          subscriber.complete();
        },
      });
    return () => {
      cancel?.removeEventListener('abort', abort);
      // Unsubscribed first, so that the lifecycle sends nothing for the abort; then the agent's own work is aborted.
      safeUnsubscribe(subscription);
      abort();
    };
  });
}
