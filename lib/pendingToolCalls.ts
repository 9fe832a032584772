import type { RunFinishedOutcome } from '@ag-ui/core';

/**
 * The RUN_FINISHED outcome with `pendingToolCallIds` extended by `ids` (tool calls left without a
 * TOOL_CALL_RESULT, for the client to answer). An interrupt or cancelled outcome is kept as is;
 * no outcome becomes `{ type: "success" }`. Ids are not repeated; order is first appearance.
 */
export function withPendingToolCalls(outcome: RunFinishedOutcome | undefined, ids: readonly string[]): RunFinishedOutcome {
  if (outcome !== undefined && outcome.type !== 'success') return outcome;
  const pending = new Set([...(outcome?.pendingToolCallIds ?? []), ...ids]);
  return pending.size === 0 ? { ...outcome, type: 'success' } : { ...outcome, type: 'success', pendingToolCallIds: [...pending] };
}
