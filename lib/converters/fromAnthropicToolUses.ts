import type { ToolCall } from '@ag-ui/core';

/** An Anthropic content block as the API returns it: only `tool_use` (and `server_tool_use`, `mcp_tool_use`) blocks are read. */
export type AnthropicResponseBlock = {
  /** The block's type: `tool_use`, `server_tool_use` and `mcp_tool_use` blocks are read, others skipped. */
  type: 'tool_use' | 'server_tool_use' | 'mcp_tool_use';
  /** The tool call's id (`toolu_…`): the AG-UI tool call id. */
  id: string;
  /** The tool's name. */
  name: string;
  /** The tool call's arguments, an object: sent as JSON text. */
  input?: unknown;
} | {
  /** The block's type: `tool_use`, `server_tool_use` and `mcp_tool_use` blocks are read, others skipped. */
  type: string;
  [field: string]: unknown;
};

/**
 * Converts the tool calls in an Anthropic message's content (its `tool_use` blocks, and the
 * `server_tool_use` and `mcp_tool_use` blocks of server-side tools) into AG-UI tool calls.
 *
 * Other blocks (text, thinking …) are skipped, so a whole `content` array can be passed. The
 * arguments are the block's `input` as JSON text, `{}` when it has none.
 *
 * ## Example
 *
 * ```ts
 * const calls = fromAnthropicToolUses([
 *   { type: 'text', text: 'Let me check.' },
 *   { type: 'tool_use', id: 'toolu_1', name: 'weather', input: { city: 'Paris' } },
 * ]);
 * console.log(JSON.stringify(calls));
 * // results: [{"id":"toolu_1","type":"function","function":{"name":"weather","arguments":"{\"city\":\"Paris\"}"}}]
 * ```
 *
 * @param blocks An Anthropic message's content blocks.
 * @return The AG-UI tool calls, in the order of their blocks.
 */
export function fromAnthropicToolUses(blocks: readonly AnthropicResponseBlock[]): ToolCall[] {
  const calls: ToolCall[] = [];
  for (const block of blocks) {
    if (block.type !== 'tool_use' && block.type !== 'server_tool_use' && block.type !== 'mcp_tool_use') continue;
    const { id, name, input } = block as { id: string; name: string; input?: unknown };
    calls.push({ id, type: 'function', function: { name, arguments: JSON.stringify(input ?? {}) } });
  }
  return calls;
}
