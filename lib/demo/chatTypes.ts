import type { Message } from '@ag-ui/core';
import type { Observable } from 'rxjs';
import type { ChatCompletionChunk } from '../adapters/index.js';
import type { AgentEvent } from '../protocol/agentEvent.js';

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

/** What the agent loop asks of an {@link AgentEventModel}: the conversation as AG-UI messages, the instructions and the tools. */
export interface AgentEventModelRequest {
  /** The agent's instructions (the system prompt), to send beside the conversation; absent when none. */
  system?: string;
  /**
   * The conversation, oldest first: the run's messages, then the assistant and tool messages of
   * this run's earlier turns. The model converts them to its provider's format.
   */
  messages: Message[];
  tools: ChatToolDeclaration[];
}

/**
 * A model turn as an Observable of agent events, for a provider with an adapter of its own
 * (`fromAnthropicMessages()`, …): TEXT_MESSAGE_CHUNK, TOOL_CALL_CHUNK (call id on every chunk,
 * name on the first), reasoning, TOKEN_USAGE. The loop reads the assistant's reply from them.
 * Cold: each subscription is one request; unsubscribing cancels it.
 */
export type AgentEventModel = (request: AgentEventModelRequest) => Observable<AgentEvent>;
