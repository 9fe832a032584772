import type { Tool } from '@ag-ui/core';
import { parametersOf } from './converterInternals.js';

/** A client tool of an Anthropic Messages request. */
export interface AnthropicTool {
  /** The tool's name. */
  name: string;
  /** What the tool does, for the model. */
  description: string;
  /** The arguments' JSON Schema (`{ type: "object", properties: {} }` when the AG-UI tool has none). */
  input_schema: Record<string, unknown>;
}

/**
 * Converts AG-UI tools (`RunAgentInput.tools`) into the `tools` of an Anthropic Messages request.
 *
 * A tool without `parameters` gets `{ type: 'object', properties: {} }` (Anthropic requires an
 * input schema); `metadata` is not sent.
 *
 * ## Example
 *
 * ```ts
 * console.log(JSON.stringify(toAnthropicTools([{ name: 'now', description: 'The time' }])));
 * // results: [{"name":"now","description":"The time","input_schema":{"type":"object","properties":{}}}]
 * ```
 *
 * @param tools The AG-UI tools.
 * @return The Anthropic tools, in the same order.
 */
export function toAnthropicTools(tools: readonly Tool[]): AnthropicTool[] {
  return tools.map((tool) => ({ name: tool.name, description: tool.description, input_schema: parametersOf(tool.parameters) }));
}
