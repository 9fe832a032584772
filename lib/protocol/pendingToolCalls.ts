import type { RunFinishedOutcome } from '@ag-ui/core';
import { AguiRxError, describeValue } from './errors.js';
import { copyWith } from './values.js';

/**
 * The RUN_FINISHED outcome with `pendingToolCallIds` extended by `ids` (tool calls left without a
 * TOOL_CALL_RESULT, for the client to answer). An interrupt or cancelled outcome is kept as is;
 * no outcome becomes `{ type: "success" }`. Ids are not repeated; order is first appearance.
 *
 * @throws {AguiRxError} `INVALID_EVENT` when `outcome` is not an object or its `pendingToolCallIds` is not a list of strings.
 */
export function withPendingToolCalls(outcome: RunFinishedOutcome | undefined, ids: readonly string[]): RunFinishedOutcome {
  if (outcome !== undefined && (typeof outcome !== 'object' || outcome === null || Array.isArray(outcome))) {
    throw new AguiRxError('INVALID_EVENT', `RUN_FINISHED has 'outcome: ${describeValue(outcome)}', but an outcome is an object such as { type: 'success' }; omit it when there is none.`);
  }
  if (outcome !== undefined && outcome.type !== 'success') return outcome;
  const given: unknown = outcome?.pendingToolCallIds;
  if (given !== undefined && !(Array.isArray(given) && given.every((id) => typeof id === 'string'))) {
    throw new AguiRxError('INVALID_EVENT', `RUN_FINISHED has 'outcome.pendingToolCallIds: ${describeValue(given)}', but it must be a list of tool call ids (strings).`);
  }
  // The common end of a run has nothing pending on either side: no Set to make for it.
  const pending = given === undefined && ids.length === 0 ? undefined : new Set([...((given as string[] | undefined) ?? []), ...ids]);
  return pending === undefined || pending.size === 0 ? { ...outcome, type: 'success' } : copyWith(outcome, { type: 'success', pendingToolCallIds: [...pending] });
}
