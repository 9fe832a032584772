import { EventType, type Event, type Message, type RunFinishedEvent, type State } from '@ag-ui/core';
import jsonpatch from 'fast-json-patch';
import { assertSafePatch } from '../state/jsonPatch.js';
import { trackConversation } from '../tracking/conversation.js';
import type { RunRecord } from './runStore.js';

/** A finished run and its logged events, as `connect` folds it. */
export interface FinishedRun {
  readonly record: RunRecord;
  readonly events: readonly Event[];
}

/** What a thread's finished runs built: its messages and its state, as the official client builds them. */
export interface ThreadSnapshot {
  messages: Message[];
  state: State;
}

/**
 * Folds finished runs, oldest first, into the messages and state a client that watched every
 * one of them live would hold: each run starts from its own input's state (the base its
 * STATE_DELTAs were computed against), its RUN_STARTED `input.messages` add the user's turns,
 * and its events are applied by the same rules as the official client's (see
 * `trackConversation`). Pure; a patch that does not apply is skipped, as the client skips it.
 */
export function foldRuns(runs: readonly FinishedRun[], initialState: State = {}): ThreadSnapshot {
  const conversation = trackConversation();
  let state: State = structuredClone(initialState);
  for (const { record, events } of runs) {
    if (record.input.state !== undefined) state = structuredClone(record.input.state);
    // The input's messages first: a run whose RUN_STARTED carried no input still had them.
    conversation.observe({ type: EventType.RUN_STARTED, input: record.input }, EventType.RUN_STARTED);
    for (const event of events) {
      if (event.type === EventType.STATE_SNAPSHOT) state = structuredClone(event.snapshot);
      else if (event.type === EventType.STATE_DELTA) {
        try {
          assertSafePatch(event.delta, 'STATE_DELTA');
          state = jsonpatch.applyPatch(state, structuredClone(event.delta), true, false).newDocument;
        } catch {
          // The client warns and keeps its state: so does the fold.
        }
      } else conversation.observe(event as unknown as Record<string, unknown>, event.type);
    }
  }
  return { messages: conversation.messages(), state };
}

/**
 * The events that rebuild a thread's finished runs in one short run: RUN_STARTED, a
 * MESSAGES_SNAPSHOT, a STATE_SNAPSHOT, and the last run's RUN_FINISHED (its outcome kept, so an
 * interrupt is still pending for the client) — or a plain RUN_FINISHED when it ended in RUN_ERROR.
 * Empty when there are no finished runs.
 */
export function compactRuns(threadId: string, runs: readonly FinishedRun[]): Event[] {
  if (runs.length === 0) return [];
  const last = runs[runs.length - 1];
  const { messages, state } = foldRuns(runs);
  const runId = last.record.runId;
  const terminal = last.events[last.events.length - 1];
  const finished: RunFinishedEvent =
    terminal?.type === EventType.RUN_FINISHED ? { ...terminal, threadId, runId } : { type: EventType.RUN_FINISHED, threadId, runId };
  return [
    { type: EventType.RUN_STARTED, threadId, runId },
    { type: EventType.MESSAGES_SNAPSHOT, messages },
    { type: EventType.STATE_SNAPSHOT, snapshot: state },
    finished,
  ];
}
