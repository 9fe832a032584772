import type { Tool } from '@ag-ui/core';
import { parametersOf } from './converterInternals.js';

/** A function tool of a Chat Completions request. */
export interface OpenAIChatTool {
  /** Discriminant: `'function'`. */
  type: 'function';
  /** The function. */
  function: {
    /** The tool's name. */
    name: string;
    /** What the tool does, for the model. */
    description: string;
    /** The arguments' JSON Schema (`{ type: "object", properties: {} }` when the AG-UI tool has none). */
    parameters: Record<string, unknown>;
  };
}

/**
 * Converts AG-UI tools (`RunAgentInput.tools`) into the `tools` of an OpenAI Chat Completions request.
 *
 * A tool without `parameters` gets `{ type: 'object', properties: {} }`; `metadata` is not sent.
 *
 * ## Example
 *
 * ```ts
 * console.log(JSON.stringify(toOpenAITools([{ name: 'now', description: 'The time' }])));
 * // results: [{"type":"function","function":{"name":"now","description":"The time","parameters":{"type":"object","properties":{}}}}]
 * ```
 *
 * @param tools The AG-UI tools.
 * @return The Chat Completions function tools, in the same order.
 */
export function toOpenAITools(tools: readonly Tool[]): OpenAIChatTool[] {
  return tools.map((tool) => ({ type: 'function', function: { name: tool.name, description: tool.description, parameters: parametersOf(tool.parameters) } }));
}
