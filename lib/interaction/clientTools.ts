import type { AssistantMessage, RunAgentInput, ToolMessage } from '@ag-ui/core';

/** Server tool names, as a list or a set. */
export type ToolNames = readonly string[] | ReadonlySet<string>;

const asSet = (names: ToolNames): ReadonlySet<string> => (names instanceof Set ? names : new Set(names as readonly string[]));

/**
 * The names of the client's (frontend) tools: those in `RunAgentInput.tools` that the server has
 * no tool of its own for. A call to one of them is left pending: the run finishes, the client runs
 * the tool, and the next run's input carries the result.
 *
 * ## Example
 *
 * ```ts
 * const input = { threadId: 't1', runId: 'r1', messages: [], context: [], state: {}, tools: [
 *   { name: 'confirm', description: 'Ask the user', parameters: {} },
 *   { name: 'search', description: 'Search the web', parameters: {} },
 * ] };
 * console.log(clientToolNames(input, ['search']));
 * // results: [ 'confirm' ]
 * ```
 *
 * @param input The run's input.
 * @param serverTools The names of the tools the server runs itself; a name in both is the server's.
 * @return The client tool names, in `input.tools` order.
 */
export function clientToolNames(input: Pick<RunAgentInput, 'tools'>, serverTools: ToolNames): string[] {
  const server = asSet(serverTools);
  return [...new Set((input.tools ?? []).map((tool) => tool.name))].filter((name) => !server.has(name));
}

/**
 * Whether `toolName` is one of the client's tools (see {@link clientToolNames}).
 *
 * @param input The run's input.
 * @param serverTools The names of the tools the server runs itself.
 * @param toolName The tool a call names.
 * @return `true` when `input.tools` has it and the server does not.
 */
export function isClientTool(input: Pick<RunAgentInput, 'tools'>, serverTools: ToolNames, toolName: string): boolean {
  return !asSet(serverTools).has(toolName) && (input.tools ?? []).some((tool) => tool.name === toolName);
}

/** A tool result a run's input carries, for a call a previous run left pending. */
export interface InputToolResult {
  /** The tool call this result answers. */
  toolCallId: string;
  /** The result the client sent, as the tool message's content (text or content parts). */
  content: ToolMessage['content'];
  /** The tool's name, from the assistant message that made the call, when it is in the input. */
  toolName?: string | undefined;
  /** The tool message's `error`, when the tool failed. */
  error?: string | undefined;
}

/**
 * The results a new run carries for the tool calls a previous run left pending: the tool messages
 * at the end of `input.messages`, after the last message of any other role (normally the assistant
 * message with the calls), as the seed PromptKit's `ToolResultsFromAGUI` reads them.
 *
 * ## Example
 *
 * ```ts
 * const input = { threadId: 't1', runId: 'r2', tools: [], context: [], state: {}, messages: [
 *   { id: 'u1', role: 'user' as const, content: 'Book it' },
 *   { id: 'a1', role: 'assistant' as const, toolCalls: [{ id: 'call-1', type: 'function' as const, function: { name: 'confirm', arguments: '{}' } }] },
 *   { id: 't1', role: 'tool' as const, toolCallId: 'call-1', content: 'yes' },
 * ] };
 * console.log(toolResultsFromInput(input));
 * // results: [ { toolCallId: 'call-1', content: 'yes', toolName: 'confirm' } ]
 * ```
 *
 * @param input The new run's input.
 * @return The trailing tool results in order; empty when the messages do not end with a tool message.
 */
export function toolResultsFromInput(input: Pick<RunAgentInput, 'messages'>): InputToolResult[] {
  const messages = input.messages ?? [];
  let start = messages.length;
  while (start > 0 && messages[start - 1].role === 'tool') start--;
  const names = new Map<string, string>();
  for (const message of messages.slice(0, start)) {
    if (message.role === 'assistant') for (const call of (message as AssistantMessage).toolCalls ?? []) names.set(call.id, call.function.name);
  }
  return (messages.slice(start) as ToolMessage[]).map((message) => {
    const result: InputToolResult = { toolCallId: message.toolCallId, content: message.content };
    const toolName = names.get(message.toolCallId);
    if (toolName !== undefined) result.toolName = toolName;
    if (message.error !== undefined) result.error = message.error;
    return result;
  });
}
