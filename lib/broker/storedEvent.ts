import type { Event } from '@ag-ui/core';
import { AguiRxError, errorMessage } from '../protocol/errors.js';

/**
 * An event as a run log stores it: its JSON. Every store refuses, with this error, an event that
 * JSON cannot carry (a reference cycle, a BigInt, nesting thousands deep), so that a run log only
 * ever holds events every reader can be sent.
 * @throws AguiRxError `INVALID_EVENT`, naming the event's type and what to fix.
 */
export function encodeStoredEvent(event: Event, threadId: string, runId: string): string {
  let json: string | undefined;
  try {
    json = JSON.stringify(event);
  } catch (error) {
    throw notJson(event, threadId, runId, errorMessage(error, 'JSON.stringify failed'));
  }
  if (typeof json !== 'string') throw notJson(event, threadId, runId, 'JSON.stringify gave nothing for it');
  return json;
}

/**
 * Checks that a store can hold `event` (it is valid JSON), for a store that keeps the event itself:
 * an event of strings, numbers and booleans alone (every token: `type`, its id, `delta`) is, and
 * is not encoded for the check; any other is encoded once.
 * @throws AguiRxError `INVALID_EVENT`, as {@link encodeStoredEvent}.
 */
export function assertStorable(event: Event, threadId: string, runId: string): void {
  const fields = event as unknown as Record<string, unknown>;
  for (const key in fields) {
    const value = fields[key];
    if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean' && value !== undefined && value !== null) {
      encodeStoredEvent(event, threadId, runId);
      return;
    }
  }
}

const notJson = (event: Event, threadId: string, runId: string, reason: string) => {
  const type = (event as { type?: unknown } | null)?.type;
  return new AguiRxError(
    'INVALID_EVENT',
    `The ${typeof type === 'string' ? `${type} event` : 'event'} of run '${runId}' (thread '${threadId}') cannot be stored in the run log: it is not valid JSON (${reason}). Events must be plain JSON: convert BigInts to strings or numbers, break reference cycles and flatten values nested thousands deep.`,
  );
};
