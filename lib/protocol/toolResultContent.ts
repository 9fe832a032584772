import type { ToolCallResultEvent } from '@ag-ui/core';
import { AguiRxError, describeValue } from './errors.js';

const contentPartTypes = new Set(['text', 'image', 'audio', 'video', 'document']);

/**
 * TOOL_CALL_RESULT `content` as AG-UI carries it: a string, or a list of content parts, kept as
 * they are; anything else (an object, a number, a list of other things) serialised to JSON text.
 *
 * An Error becomes its text (`<name>: <message>`): JSON would write it as `{}`.
 *
 * @throws {AguiRxError} `INVALID_EVENT` when the content is absent or cannot be serialised (BigInt, cycles, a function), or
 *   holds a Map or a Set (which JSON writes as `{}`).
 */
export function toolResultContent(content: unknown, toolCallId: string): ToolCallResultEvent['content'] {
  if (typeof content === 'string') return content;
  if (Array.isArray(content) && content.length > 0 && content.every(isContentPart)) return content as ToolCallResultEvent['content'];
  if (content === undefined) {
    throw new AguiRxError('INVALID_EVENT', `TOOL_CALL_RESULT for tool call '${toolCallId}' has no content. Send the tool's output as a string (or an object to be serialised).`);
  }
  // A tool that returned (or threw) an Error: JSON would write it as {}, telling the model nothing.
  if (isError(content)) return `${content.name || 'Error'}: ${content.message}`;
  let json: string | undefined;
  try {
    json = JSON.stringify(content, refuseLossy);
  } catch (error) {
    throw new AguiRxError(
      'INVALID_EVENT',
      `TOOL_CALL_RESULT for tool call '${toolCallId}' has content (${describeValue(content)}) that cannot be serialised to JSON: ${(error as Error).message}. Convert BigInts, Maps and Sets, and break cycles before emitting it.`,
    );
  }
  if (json === undefined) {
    throw new AguiRxError('INVALID_EVENT', `TOOL_CALL_RESULT for tool call '${toolCallId}' has content (${describeValue(content)}) that JSON cannot carry. Send the tool's output as a string, content parts, or plain data.`);
  }
  return json;
}

/** Whether `value` is an Error (of any realm). */
function isError(value: unknown): value is Error {
  return Object.prototype.toString.call(value) === '[object Error]' || value instanceof Error;
}

// JSON writes a Map or a Set as {}: its entries would be lost without a word.
function refuseLossy(this: unknown, key: string, value: unknown): unknown {
  if (value instanceof Map || value instanceof Set) {
    throw new Error(`a ${value instanceof Map ? 'Map' : 'Set'}${key === '' ? '' : ` under key '${key}'`} (JSON writes it as {}, losing its entries)`);
  }
  return value;
}

function isContentPart(part: unknown): boolean {
  return typeof part === 'object' && part !== null && contentPartTypes.has((part as { type?: unknown }).type as string);
}
