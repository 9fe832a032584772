import { AguiRxError } from '../protocol/errors.js';

/**
 * Tool calls cut by the model's output limit (Anthropic `stop_reason: "max_tokens"`, Chat
 * Completions `finish_reason: "length"`), streams cut before the model's message ended, and calls
 * whose arguments are not JSON at a finish the model gave: which calls, and the one error that says
 * so for each case. Shared by the adapters and the tool call tracker; not part of the public API.
 */

/** One tool call of a model message, with the argument text streamed for it so far. */
export interface StreamedCall {
  /** The call's id (`toolCallId`). */
  id: string;
  /** The tool's name. */
  name: string;
  /** The argument fragments sent so far, joined. */
  args: string;
}

/**
 * The calls whose arguments are not one whole JSON value: those the cut went through. A call whose
 * arguments parse was written out before the cut, and stays a call. Checked once, at the cut,
 * never per fragment (parsing a growing text on every fragment is quadratic).
 */
export function cutCalls(calls: Iterable<StreamedCall>): StreamedCall[] {
  const cut: StreamedCall[] = [];
  for (const call of calls) if (!isWholeJson(call.args)) cut.push(call);
  return cut;
}

/**
 * The `INCOMPLETE_STREAM` error of a model output cut inside tool calls: says in plain words that
 * the output was cut by `limit`, names each call (id and tool), and what to do (`advice`).
 */
export function cutToolCallError(adapter: string, limit: string, calls: readonly StreamedCall[], advice: string): AguiRxError {
  return incomplete(adapter, `the model's output was cut by ${limit}`, calls, advice);
}

/**
 * The `INCOMPLETE_STREAM` error of a stream that stopped inside tool calls, with no word from the
 * model that its output ended (`when`: where it stopped): the connection was cut.
 */
export function endedInToolCallError(adapter: string, when: string, calls: readonly StreamedCall[]): AguiRxError {
  return incomplete(adapter, `the stream ended ${when}`, calls, cutConnection);
}

/**
 * The calls whose arguments were written but are not one whole JSON value. At a finish the model
 * gave (not a limit), an empty text is a call without arguments, not a cut one. Checked once, at
 * the finish.
 */
export function unparsedCalls(calls: Iterable<StreamedCall>): StreamedCall[] {
  const broken: StreamedCall[] = [];
  for (const call of calls) if (call.args.trim() !== '' && !isWholeJson(call.args)) broken.push(call);
  return broken;
}

/**
 * The `INCOMPLETE_STREAM` error of tool calls whose arguments are not JSON though the model said
 * its output was finished (`finish`, e.g. `finish_reason: tool_calls`): not a cut, a broken call.
 */
export function unparsedArgumentsError(adapter: string, finish: string, calls: readonly StreamedCall[]): AguiRxError {
  return new AguiRxError(
    'INCOMPLETE_STREAM',
    `${adapter}: the model said its output was finished (${finish}), but the arguments of ${named(calls)} are not valid JSON, so ${calls.length === 1 ? 'the call' : 'the calls'} must not run. The text before it is kept. Retry the request; if it keeps happening, the model (or server) writes broken arguments for this tool: simplify its parameters or use another model.`,
  );
}

/** The calls by id and tool: `tool call 'id' (name)`, `tool calls 'a' (x), 'b' (y)`. */
function named(calls: readonly StreamedCall[]): string {
  const list = calls.map((call) => `'${call.id}' (${call.name})`).join(', ');
  return calls.length === 1 ? `tool call ${list}` : `tool calls ${list}`;
}

/**
 * The `INCOMPLETE_STREAM` error of a stream that stopped outside any tool call but before the
 * event that ends the model's output (`when`: what did not come): the connection was cut, so
 * the output may be missing its end even though every event read was whole.
 */
export function endedEarlyError(adapter: string, when: string): AguiRxError {
  return new AguiRxError('INCOMPLETE_STREAM', `${adapter}: the stream ended ${when}, so the model's output may be cut short. The text before it is kept. ${cutConnection}`);
}

// What a stream that stops early most likely means, and what to do.
const cutConnection = 'The connection was probably cut: retry the request, and check that the whole response body is read.';

function incomplete(adapter: string, what: string, calls: readonly StreamedCall[], advice: string): AguiRxError {
  return new AguiRxError(
    'INCOMPLETE_STREAM',
    `${adapter}: ${what} inside ${named(calls)}, so ${calls.length === 1 ? 'its arguments are' : 'their arguments are'} incomplete JSON and the call must not run. The text before it is kept. ${advice}`,
  );
}

function isWholeJson(text: string): boolean {
  // A cut text ends mid-value; an empty one was never written.
  if (text.trim() === '') return false;
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/**
 * The `INCOMPLETE_STREAM` error of a run that ended (RUN_FINISHED, or its source completed) while
 * tool calls waiting for a result hold arguments that are not JSON: names each call and how its
 * arguments end, so that the cut can be found in the agent's output.
 */
export function unfinishedArgumentsError(calls: readonly StreamedCall[]): AguiRxError {
  const named = calls.map((call) => `'${call.id}' (${call.name}, arguments ending ${JSON.stringify(call.args.slice(-40))})`).join(', ');
  const which = calls.length === 1 ? `tool call ${named}` : `tool calls ${named}`;
  return new AguiRxError(
    'INCOMPLETE_STREAM',
    `The run ended with ${which} waiting for a result, but ${calls.length === 1 ? 'its arguments are' : 'their arguments are'} not complete JSON, so the call must not run. The text before it is kept. The agent's output was probably cut (an output limit, or a dropped connection): retry the run, and check that the agent sends each call's whole arguments before the run ends.`,
  );
}
