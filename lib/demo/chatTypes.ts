import type { Observable } from 'rxjs';
import type { ChatCompletionChunk } from '../adapters/index.js';

/** A function the model may call, as the OpenAI chat completions API declares it. */
export interface ChatToolDeclaration {
  type: 'function';
  function: {
    name: string;
    description?: string;
    /** JSON Schema of the arguments object. */
    parameters: Record<string, unknown>;
  };
}

/** One tool call of an assistant message, as the OpenAI chat completions API sends and takes it. */
export interface ChatToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

/** A message of an OpenAI chat completions request. */
export type ChatMessage =
  | { role: 'system' | 'developer'; content: string }
  | { role: 'user'; content: string }
  | { role: 'assistant'; content: string | null; tool_calls?: ChatToolCall[] }
  | { role: 'tool'; tool_call_id: string; content: string };

/** What the agent loop asks of a model: the conversation and the tools it may call. */
export interface ChatModelRequest {
  messages: ChatMessage[];
  tools: ChatToolDeclaration[];
}

/**
 * A model turn as an Observable of OpenAI `chat.completion.chunk` objects (and `'[DONE]'`).
 * Cold: each subscription is one request; unsubscribing cancels it (aborts the HTTP request, stops the timers).
 */
export type ChatModel = (request: ChatModelRequest) => Observable<ChatCompletionChunk | '[DONE]'>;
