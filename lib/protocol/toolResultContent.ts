import type { ToolCallResultEvent } from '@ag-ui/core';
import { AguiRxError, describeValue } from './errors.js';

const contentPartTypes = new Set(['text', 'image', 'audio', 'video', 'document']);

/**
 * TOOL_CALL_RESULT `content` as AG-UI carries it: a string, or a list of content parts, kept as
 * they are; anything else (an object, a number, a list of other things) serialised to JSON text.
 *
 * @throws {AguiRxError} `INVALID_EVENT` when the content is absent or cannot be serialised (BigInt, cycles).
 */
export function toolResultContent(content: unknown, toolCallId: string): ToolCallResultEvent['content'] {
  if (typeof content === 'string') return content;
  if (Array.isArray(content) && content.length > 0 && content.every(isContentPart)) return content as ToolCallResultEvent['content'];
  if (content === undefined) {
    throw new AguiRxError('INVALID_EVENT', `TOOL_CALL_RESULT for tool call '${toolCallId}' has no content. Send the tool's output as a string (or an object to be serialised).`);
  }
  try {
    return JSON.stringify(content);
  } catch (error) {
    throw new AguiRxError(
      'INVALID_EVENT',
      `TOOL_CALL_RESULT for tool call '${toolCallId}' has content (${describeValue(content)}) that cannot be serialised to JSON: ${(error as Error).message}. Convert BigInts and break cycles before emitting it.`,
    );
  }
}

function isContentPart(part: unknown): boolean {
  return typeof part === 'object' && part !== null && contentPartTypes.has((part as { type?: unknown }).type as string);
}
