import type { Event, Message, RunAgentInput, State } from '@ag-ui/core';
import type { Observable } from 'rxjs';
import { runWithOfficialClient, type OfficialClientRun } from '../../lib/testing/runWithOfficialClient.js';

/** What the official client built from a stream: messages, state, new messages, RUN_FINISHED `result`, and every event it applied. */
export type OracleRun = OfficialClientRun;

/**
 * The oracle: runs `events$` through `@ag-ui/client`'s `AbstractAgent.runAgent()` (schema
 * enforcement, chunk transform, sequence verification, event application) and resolves with the
 * messages and state it built. Rejects with the client's error when the stream is not well-formed.
 *
 * It is `agui-rx/testing`'s `runWithOfficialClient` (thread `thread-1`, run `run-1` unless given),
 * so that the specs and the package's users check against the same oracle.
 */
export function runWithOracle(
  events$: Observable<Event> | ((input: RunAgentInput) => Observable<Event>),
  config: { initialState?: State; initialMessages?: Message[]; runId?: string } = {},
): Promise<OracleRun> {
  return runWithOfficialClient(events$, config);
}
