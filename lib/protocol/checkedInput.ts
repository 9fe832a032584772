import type { RunAgentInput } from '@ag-ui/core';

/**
 * The option key by which a caller that has validated a RunAgentInput already (the HTTP handlers,
 * which check every request body against the schema and more) hands it to `mapRunLifecycle`, so
 * that the run does not validate it a second time: that walks the whole history again, for every
 * run. Its value is the validated input itself; any other `input` is validated as usual. Not part
 * of the public API.
 */
export const checkedInput: unique symbol = Symbol('agui-rx validated RunAgentInput');

/** An options object that may carry {@link checkedInput}. */
export interface CheckedInputOption {
  [checkedInput]?: RunAgentInput | undefined;
}
