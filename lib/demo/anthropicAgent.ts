import type { Message } from '@ag-ui/core';
import { map } from 'rxjs';
import { fromAnthropicMessages, type AnthropicStreamEvent } from '../adapters/index.js';
import { toAnthropicMessages, toAnthropicTools } from '../converters/index.js';
import type { AguiAgent } from '../transports/createAguiHandler.js';
import { AguiRxError } from '../protocol/errors.js';
import { createChatAgent } from './chatAgent.js';
import type { AgentEventModel } from './chatTypes.js';
import { excerpt, fetchSSE } from './fetchSSE.js';
import { DEMO_SYSTEM_PROMPT } from './openAIAgent.js';
import { demoTools } from './tools.js';

/** Options of {@link createAnthropicModel} and {@link createAnthropicAgent}. */
export interface AnthropicAgentOptions {
  /** The API key, sent as `x-api-key`. */
  apiKey: string;
  /** The model. Default: `claude-sonnet-4-5`. */
  model?: string;
  /** The most tokens one answer may have (`max_tokens`). Default: 4096. */
  maxTokens?: number;
  /** The API's base URL. Default: `https://api.anthropic.com`. */
  baseUrl?: string;
  /** The `fetch` to use (a fake one in specs). Default: the global `fetch`. */
  fetch?: typeof fetch;
  /** The clock the tools read. Default: the system clock. */
  now?: () => Date;
}

/** The default model of the demo's Anthropic agent. */
export const DEFAULT_ANTHROPIC_MODEL = 'claude-sonnet-4-5';

/** The Messages API version the demo speaks (`anthropic-version`). */
export const ANTHROPIC_VERSION = '2023-06-01';

/**
 * The part of an AG-UI conversation the Messages API takes from the demo: user, assistant and
 * tool messages (system ones are split out by `toAnthropicMessages`). Left out, as
 * `toChatMessages` leaves them out for OpenAI:
 * - tool calls no tool message answers, and tool messages that answer no call: a run that was
 *   stopped or failed mid-call leaves them in the client's history, and Anthropic refuses a
 *   `tool_use` without its `tool_result` (and the reverse); an assistant message left with neither
 *   text nor calls goes with them;
 * - reasoning and activity messages: what the client showed, not what the model is told (the
 *   demo does not ask for extended thinking, so there are no signed thinking blocks to send back).
 */
function demoConversation(messages: readonly Message[]): Message[] {
  const callIds = new Set<string>();
  const answered = new Set<string>();
  for (const message of messages) {
    if (message.role === 'assistant') for (const call of message.toolCalls ?? []) callIds.add(call.id);
    if (message.role === 'tool') answered.add(message.toolCallId);
  }
  const out: Message[] = [];
  for (const message of messages) {
    if (message.role === 'reasoning' || message.role === 'activity') continue;
    if (message.role === 'tool' && !callIds.has(message.toolCallId)) continue;
    if (message.role === 'assistant') {
      const toolCalls = (message.toolCalls ?? []).filter((call) => answered.has(call.id));
      if ((message.content ?? '') === '' && toolCalls.length === 0) continue;
      const { toolCalls: _all, ...rest } = message;
      out.push(toolCalls.length > 0 ? { ...rest, toolCalls } : rest);
      continue;
    }
    out.push(message);
  }
  return out;
}

/** What to check after an HTTP error status from the Messages API. */
function httpErrorHint(status: number, model: string): string {
  if (status === 401 || status === 403) return 'Check ANTHROPIC_API_KEY: it must be a valid key of the Anthropic API (console.anthropic.com), with access to the model.';
  if (status === 404) return `Check ANTHROPIC_MODEL (now '${model}'): it must name a model the key may use, e.g. '${DEFAULT_ANTHROPIC_MODEL}'.`;
  if (status === 429) return 'Anthropic rate-limited the key: wait a moment and try again, or check the rate limits of the key\'s organisation.';
  if (status === 529) return 'Anthropic is overloaded: try again in a moment.';
  if (status >= 500) return 'Anthropic had an error: try again in a moment, and check status.anthropic.com if it persists.';
  return `Check ANTHROPIC_API_KEY and ANTHROPIC_MODEL (now '${model}').`;
}

/**
 * An {@link AgentEventModel} that streams from the Anthropic Messages API with plain `fetch`.
 *
 * Each subscription POSTs `{ model, max_tokens, system, messages, tools, stream: true }` to
 * `<baseUrl>/v1/messages` with the headers `x-api-key`, `anthropic-version: 2023-06-01` and
 * `content-type: application/json`. The conversation becomes `system` and `messages` with
 * `toAnthropicMessages()` (assistant text and `tool_use` blocks, tool results as `tool_result`
 * blocks in a user turn), the tools `tools` with `toAnthropicTools()`; the demo's system prompt
 * comes first in `system`, before any system message of the client. The answer is read with
 * `parseSSE()`, each `data:` parsed as JSON, and turned into agent events by
 * `fromAnthropicMessages()`. Unsubscribing aborts the request (`AbortController.abort()`).
 *
 * Errors: a failed connection is `MODEL_UNREACHABLE`, a non-2xx answer `MODEL_HTTP_ERROR` (with
 * the status, the start of the body and what to check), a payload that is not JSON
 * `INVALID_EVENT`; an `error` event mid-stream is `fromAnthropicMessages`' `PROVIDER_ERROR`.
 *
 * @param options The key, the model, `max_tokens`, the base URL and the `fetch` to use.
 * @return The model: `(request) => Observable<AgentEvent>`.
 */
export function createAnthropicModel(options: AnthropicAgentOptions): AgentEventModel {
  const url = `${(options.baseUrl ?? 'https://api.anthropic.com').replace(/\/+$/, '')}/v1/messages`;
  const model = options.model ?? DEFAULT_ANTHROPIC_MODEL;
  return (request) => {
    const converted = toAnthropicMessages(demoConversation(request.messages));
    const system = [request.system, converted.system].filter((part): part is string => part !== undefined && part !== '').join('\n\n');
    const tools = toAnthropicTools(
      request.tools.map((tool) => ({ name: tool.function.name, description: tool.function.description ?? '', parameters: tool.function.parameters })),
    );
    return fetchSSE({
      url,
      headers: { 'x-api-key': options.apiKey, 'anthropic-version': ANTHROPIC_VERSION, 'content-type': 'application/json' },
      body: JSON.stringify({
        model,
        max_tokens: options.maxTokens ?? 4096,
        ...(system === '' ? {} : { system }),
        messages: converted.messages,
        ...(tools.length === 0 ? {} : { tools }),
        stream: true,
      }),
      fetch: options.fetch,
      unreachableHint: 'Check the network (or ANTHROPIC_BASE_URL), or unset ANTHROPIC_API_KEY to use the scripted agent.',
      httpErrorHint: (status) => httpErrorHint(status, model),
    }).pipe(
      map((message): AnthropicStreamEvent => {
        try {
          return JSON.parse(message.data) as AnthropicStreamEvent;
        } catch {
          throw new AguiRxError('INVALID_EVENT', `${url} sent a server-sent event whose data is not JSON: ${excerpt(message.data)}. Is the base URL the Anthropic API?`);
        }
      }),
      fromAnthropicMessages(),
    );
  };
}

/**
 * The demo agent backed by the real Anthropic Messages API: the same loop as the scripted and
 * OpenAI agents ({@link createChatAgent}), with the same two tools run on the server and the
 * demo's system prompt, but the turns stream through `fromAnthropicMessages()` (no OpenAI
 * format in between). When the browser goes away the request in flight is aborted.
 *
 * ## Example
 *
 * ```ts
 * createServer(createAguiHandler(createAnthropicAgent({ apiKey: process.env.ANTHROPIC_API_KEY! }))).listen(8000);
 * ```
 *
 * @param options The key, the model (default `claude-sonnet-4-5`), `max_tokens`, the base URL, `fetch` and the clock.
 * @return An {@link AguiAgent}.
 */
export function createAnthropicAgent(options: AnthropicAgentOptions): AguiAgent {
  return createChatAgent({ eventModel: createAnthropicModel(options), tools: demoTools, systemPrompt: DEMO_SYSTEM_PROMPT, now: options.now });
}
