/**
 * Which tool call an OpenAI-style tool call piece belongs to (Chat Completions `delta.tool_calls`,
 * LangChain `tool_call_chunks`): a pure tracker that `fromOpenAIChatCompletions` and the LangChain
 * adapters share. Not part of the public API.
 *
 * Pieces are keyed by the provider's `index` (any integers, in any order, interleaved); a piece
 * without one (some compatible servers) continues the latest call unless it brings a new id; a new
 * id at a known index is a new call (servers that number every call 0).
 */

/** The tool calls of one model message, as its pieces name them. */
export interface ToolCallPieces {
  /** Provider index -> toolCallId. */
  calls: Map<number, string>;
  /** The latest call: a piece without index continues it. */
  latestCall?: string | undefined;
}

/** The call a piece continues (now the latest), or `undefined` when the piece starts a call. */
export function continuedCall(pieces: ToolCallPieces, index: number | undefined, id: string | undefined): string | undefined {
  let toolCallId: string | undefined;
  if (index !== undefined) {
    const known = pieces.calls.get(index);
    if (known !== undefined && (id === undefined || id === known)) toolCallId = known;
  } else if (id === undefined || id === pieces.latestCall) {
    toolCallId = pieces.latestCall;
  }
  if (toolCallId !== undefined) pieces.latestCall = toolCallId;
  return toolCallId;
}

/** Records the call a piece starts, at its index when it has one; it becomes the latest call. */
export function startCall(pieces: ToolCallPieces, index: number | undefined, toolCallId: string): string {
  if (index !== undefined) pieces.calls.set(index, toolCallId);
  pieces.latestCall = toolCallId;
  return toolCallId;
}

/** Why a piece that would start a call cannot: it has no tool name (`nameField` is its path in the piece). */
export function unnamedCall(where: string, id: string | undefined, nameField: string): string {
  return `${where} starts a tool call${id === undefined ? '' : ` ('${id}')`} without ${nameField}. The first piece of each call must carry the tool's name (and id); is the stream cut short or reordered?`;
}
