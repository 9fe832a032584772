import type { Tool } from '@ag-ui/core';
import { parametersOf } from './converterInternals.js';

/** A function tool of a Responses request. */
export interface ResponsesFunctionTool {
  /** Discriminant: `'function'`. */
  type: 'function';
  /** The tool's name. */
  name: string;
  /** What the tool does, for the model. */
  description: string;
  /** The arguments' JSON Schema (`{ type: "object", properties: {} }` when the AG-UI tool has none). */
  parameters: Record<string, unknown>;
  /** Always `false`: AG-UI schemas are not written for strict mode (every property required, no additional properties). */
  strict: false;
}

/**
 * Converts AG-UI tools (`RunAgentInput.tools`) into the `tools` of an OpenAI Responses request.
 *
 * A tool without `parameters` gets `{ type: 'object', properties: {} }`; `strict` is `false`,
 * as an AG-UI schema is not written for strict mode; `metadata` is not sent.
 *
 * ## Example
 *
 * ```ts
 * console.log(JSON.stringify(toOpenAIResponsesTools([{ name: 'now', description: 'The time' }])));
 * // results: [{"type":"function","name":"now","description":"The time","parameters":{"type":"object","properties":{}},"strict":false}]
 * ```
 *
 * @param tools The AG-UI tools.
 * @return The Responses function tools, in the same order.
 */
export function toOpenAIResponsesTools(tools: readonly Tool[]): ResponsesFunctionTool[] {
  return tools.map((tool) => ({ type: 'function', name: tool.name, description: tool.description, parameters: parametersOf(tool.parameters), strict: false }));
}
