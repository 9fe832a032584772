import type { ToolCall } from '@ag-ui/core';

/** A tool call as OpenAI returns it: a Chat Completions `tool_calls` entry, or a Responses `function_call` output item. */
export type OpenAIToolCallLike =
  | {
      /** Chat Completions: the call id. Responses: the item id (`fc_…`), not used. */
      id: string;
      /** `function` (Chat Completions) or `function_call` (Responses). */
      type?: 'function' | (string & {}) | undefined;
      /** The function called (Chat Completions). */
      function: {
        /** The function's name. */
        name: string;
        /** The arguments as JSON text, as the model wrote them. */
        arguments?: string | null | undefined;
      };
    }
  | {
      /** `function` (Chat Completions) or `function_call` (Responses). */
      type: 'function_call';
      /** The call id (Responses): the AG-UI tool call id. */
      call_id: string;
      /** The function's name (Responses). */
      name: string;
      /** The arguments as JSON text (Responses). */
      arguments?: string | null | undefined;
      /** Chat Completions: the call id. Responses: the item id (`fc_…`), not used. */
      id?: string | undefined;
    };

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
