import type { Message } from '@ag-ui/core';
import type { ChatMessage, ChatToolCall } from './chatTypes.js';

/** The text of a message's content: a string as it is, the text parts of a part list joined. */
function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .filter((part): part is { type: 'text'; text: string } => part?.type === 'text' && typeof part.text === 'string')
    .map((part) => part.text)
    .join('\n');
}

/**
 * Converts an AG-UI conversation (RunAgentInput `messages`) into OpenAI chat completions messages.
 *
 * - `system`, `developer` and `user` messages keep their role; a part list keeps its text parts.
 * - `assistant` messages become `{ role: 'assistant', content, tool_calls }`.
 * - `tool` messages become `{ role: 'tool', tool_call_id, content }`.
 * - `reasoning` and `activity` messages are the client's view only and are left out.
 *
 * OpenAI refuses a request where an assistant's tool call has no answering tool message, or a
 * tool message answers no call. A run that was stopped or failed mid-call leaves exactly that in
 * the client's history, so such calls and results are dropped, and an assistant message left
 * with neither text nor calls with them.
 *
 * @param messages The AG-UI messages, oldest first.
 * @return The OpenAI messages, oldest first.
 */
export function toChatMessages(messages: readonly Message[]): ChatMessage[] {
  const callIds = new Set<string>();
  const answered = new Set<string>();
  for (const message of messages) {
    if (message.role === 'assistant') for (const call of message.toolCalls ?? []) callIds.add(call.id);
    if (message.role === 'tool') answered.add(message.toolCallId);
  }
  const out: ChatMessage[] = [];
  for (const message of messages) {
    switch (message.role) {
      case 'system':
      case 'developer':
      case 'user':
        out.push({ role: message.role, content: textOf(message.content) });
        break;
      case 'assistant': {
        const toolCalls: ChatToolCall[] = (message.toolCalls ?? [])
          .filter((call) => answered.has(call.id))
          .map((call) => ({ id: call.id, type: 'function', function: { name: call.function.name, arguments: call.function.arguments } }));
        const content = message.content ?? '';
        if (content === '' && toolCalls.length === 0) break;
        out.push(toolCalls.length > 0 ? { role: 'assistant', content: content === '' ? null : content, tool_calls: toolCalls } : { role: 'assistant', content });
        break;
      }
      case 'tool':
        if (callIds.has(message.toolCallId)) out.push({ role: 'tool', tool_call_id: message.toolCallId, content: textOf(message.content) });
        break;
      default:
        // reasoning and activity messages: what the client showed, not what the model is told.
        break;
    }
  }
  return out;
}
