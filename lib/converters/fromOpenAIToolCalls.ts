import type { ToolCall } from '@ag-ui/core';

/** A tool call as OpenAI returns it: a Chat Completions `tool_calls` entry, or a Responses `function_call` output item. */
export type OpenAIToolCallLike =
  | { id: string; type?: 'function' | (string & {}); function: { name: string; arguments?: string | null } }
  | { type: 'function_call'; call_id: string; name: string; arguments?: string | null; id?: string };

/**
 * Converts OpenAI tool calls (a Chat Completions message's `tool_calls`, or Responses
 * `function_call` items) into AG-UI tool calls.
 *
 * The id is the call's `id` (Chat Completions) or `call_id` (Responses, whose own `id` names the
 * item, not the call); the arguments stay JSON text as the model wrote them, `''` when absent.
 *
 * ## Example
 *
 * ```ts
 * const calls = fromOpenAIToolCalls([
 *   { id: 'c1', type: 'function', function: { name: 'weather', arguments: '{"city":"Paris"}' } },
 *   { type: 'function_call', id: 'fc_1', call_id: 'c2', name: 'now', arguments: '{}' },
 * ]);
 * console.log(JSON.stringify(calls));
 * // results: [{"id":"c1","type":"function","function":{"name":"weather","arguments":"{\"city\":\"Paris\"}"}},{"id":"c2","type":"function","function":{"name":"now","arguments":"{}"}}]
 * ```
 *
 * @param toolCalls The provider's tool calls.
 * @return The AG-UI tool calls, in the same order.
 */
export function fromOpenAIToolCalls(toolCalls: readonly OpenAIToolCallLike[]): ToolCall[] {
  return toolCalls.map((call) =>
    'call_id' in call
      ? { id: call.call_id, type: 'function', function: { name: call.name, arguments: call.arguments ?? '' } }
      : { id: call.id, type: 'function', function: { name: call.function.name, arguments: call.function.arguments ?? '' } },
  );
}
