import type { RunAgentInput } from '@ag-ui/core';

/**
 * The option key by which a caller that has validated a RunAgentInput already (the HTTP handlers,
 * which check every request body against the schema and more) hands it to `mapRunLifecycle`, so
 * that the run does not validate it a second time: that walks the whole history again, for every
 * run. Its value is the validated input itself; any other `input` is validated as usual. Not part
 * of the public API.
 */
export const checkedInput: unique symbol = Symbol('agui-rx validated RunAgentInput');

/**
 * The option key by which a caller whose `onError` does not read a failure report's `input` (an
 * HTTP handler without an `onError` of the user's: it logs the ids and the reference) says so, so
 * that the run does not keep its input once RUN_STARTED has echoed it: an open stream then holds
 * none of the history the client posted (about 13 KB per open stream for a history of 20 short
 * messages). Not part of the public API.
 */
export const unreportedInput: unique symbol = Symbol('agui-rx input left out of failure reports');

/** An options object that may carry {@link checkedInput} and {@link unreportedInput}. */
export interface CheckedInputOption {
  [checkedInput]?: RunAgentInput | undefined;
  [unreportedInput]?: boolean | undefined;
}
