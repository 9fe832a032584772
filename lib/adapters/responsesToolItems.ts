import type { Fields } from './readers.js';

/**
 * The OpenAI Responses output items that are tool calls other than `function_call`, and the
 * `*_output` items that answer them: how each becomes an AG-UI tool call (name, id, JSON
 * arguments) and its result. A pure table that `fromOpenAIResponses` reads. Not part of the public API.
 */

/** How one kind of tool call item becomes an AG-UI tool call. */
export interface ToolItemForm {
  /**
   * Who runs it: `client` (the app; the call stays pending until a result answers it), `server`
   * (the provider ran it: the item carries its result), `approval` (nobody yet: the run ends in an
   * interrupt that asks to approve it).
   */
  runs: 'client' | 'server' | 'approval';
  /** The item's fields that are the call's input, sent as a JSON object of them; `arguments` is the arguments themselves. */
  input: readonly string[];
  /** Whether the input is free text streamed by `response.<type>_input.delta` events (custom tools). */
  streamed?: boolean | undefined;
}

/** The tool call items by `type`. */
export const toolItemForms: ReadonlyMap<string, ToolItemForm> = new Map<string, ToolItemForm>([
  ['custom_tool_call', { runs: 'client', input: ['input'], streamed: true }],
  ['apply_patch_call', { runs: 'client', input: ['operation'] }],
  ['local_shell_call', { runs: 'client', input: ['action'] }],
  ['shell_call', { runs: 'client', input: ['action'] }],
  ['computer_call', { runs: 'client', input: ['action', 'actions', 'pending_safety_checks'] }],
  // Client-executed search: its `tool_search_output` comes back as input; a server search sends it in the stream.
  ['tool_search_call', { runs: 'client', input: ['arguments'] }],
  ['mcp_approval_request', { runs: 'approval', input: ['arguments'] }],
  ['web_search_call', { runs: 'server', input: ['action'] }],
  ['file_search_call', { runs: 'server', input: ['queries'] }],
  ['mcp_call', { runs: 'server', input: ['arguments'] }],
  ['code_interpreter_call', { runs: 'server', input: ['code', 'container_id'] }],
]);

/** Fields that identify an item rather than say anything: left out of a result made of the item's fields. */
const identity = new Set(['type', 'id', 'call_id', 'created_by', 'caller', 'execution']);

/** The tool name of a call item: its own `name` (custom tools, MCP), else its type without `_call` (`local_shell`, `apply_patch`). */
export function toolItemName(type: string, item: Fields): string {
  return typeof item.name === 'string' && item.name !== '' ? item.name : type.replace(/_call$/, '');
}

/** A call item's arguments as JSON text: `arguments` as it came (JSON text, or serialised), else an object of its input fields. */
export function toolItemArguments(form: ToolItemForm, item: Fields): string {
  if (form.input.length === 1 && form.input[0] === 'arguments') {
    const args = item.arguments;
    if (typeof args === 'string') return args;
    return JSON.stringify(args ?? {});
  }
  const input: Fields = {};
  for (const field of form.input) if (item[field] !== undefined && item[field] !== null) input[field] = item[field];
  return JSON.stringify(input);
}

/**
 * The result of a server-executed call item, or of a `*_output` item: its `output` when it is
 * text, `Error: <error>` when it failed with a message, else the JSON of its other fields
 * (`status`, `results`, `outputs` …) without its input fields.
 */
export function toolItemResult(item: Fields, input: readonly string[] = []): string {
  if (typeof item.output === 'string') return item.output;
  if (typeof item.error === 'string' && item.error !== '') return `Error: ${item.error}`;
  if (item.output !== undefined && item.output !== null) return JSON.stringify(item.output);
  const rest: Fields = {};
  for (const [field, value] of Object.entries(item)) if (!identity.has(field) && !input.includes(field) && value !== undefined && value !== null) rest[field] = value;
  return JSON.stringify(rest);
}

/**
 * The mark a call made by a tool item carries as its TOOL_CALL_CHUNK `metadata`, so that
 * `toOpenAIResponsesInput` can tell it from a function call: `{ openai: { type: '<item type>' } }`,
 * with the MCP server's `server_label` for `mcp_call` and `mcp_approval_request` (the input items
 * of both need it).
 */
export function toolItemMark(type: string, item: Fields): Record<string, unknown> {
  const label = item.server_label;
  return { openai: typeof label === 'string' && label !== '' ? { type, server_label: label } : { type } };
}

/** JSON string escaping of a piece of free text, without the quotes: what goes between `{"input":"` and `"}`. */
export function jsonStringPiece(text: string): string {
  return JSON.stringify(text).slice(1, -1);
}

/**
 * Whether a stream event type reports the progress of a tool item of the table
 * (`response.mcp_call_arguments.delta`, `response.code_interpreter_call_code.delta`,
 * `response.web_search_call.searching` …): what it streams, the whole item carries when done.
 */
export function isToolItemProgress(eventType: string): boolean {
  const subject = eventType.split('.')[1] ?? '';
  for (const type of toolItemForms.keys()) if (subject === type || subject.startsWith(`${type}_`)) return true;
  return false;
}
