import { map } from 'rxjs';
import type { ChatCompletionChunk } from '../adapters/index.js';
import type { AguiAgent } from '../transports/createAguiHandler.js';
import { AguiRxError } from '../protocol/errors.js';
import { createChatAgent } from './chatAgent.js';
import type { ChatModel } from './chatTypes.js';
import { excerpt, fetchSSE } from './fetchSSE.js';
import { demoTools } from './tools.js';

/** Options of {@link createOpenAIChatModel} and {@link createOpenAIAgent}. */
export interface OpenAIAgentOptions {
  /** The API key, sent as `Authorization: Bearer …`. */
  apiKey: string;
  /** The model. Default: `gpt-4o-mini`. */
  model?: string;
  /** The API's base URL (an OpenAI-compatible server also works). Default: `https://api.openai.com/v1`. */
  baseUrl?: string;
  /** The `fetch` to use (a fake one in specs). Default: the global `fetch`. */
  fetch?: typeof fetch;
  /** The clock the tools read. Default: the system clock. */
  now?: () => Date;
}

/** The default model of the demo's OpenAI agent. */
export const DEFAULT_OPENAI_MODEL = 'gpt-4o-mini';

/** The demo agent's instructions to a real model. */
export const DEMO_SYSTEM_PROMPT =
  'You are the agui-rx demo assistant. When the user asks about a place, call get_weather and get_time for it in parallel ' +
  '(use the IANA time zone of the place), then answer briefly using the results. When no place is named, ask which one, ' +
  'or use Lisbon if the user just wants to see the tools at work.';

/**
 * A {@link ChatModel} that streams from the OpenAI chat completions API with plain `fetch`.
 *
 * Each subscription POSTs `{ model, messages, tools, stream: true, stream_options: { include_usage: true } }`
 * to `<baseUrl>/chat/completions` ({@link fetchSSE}: `fetch`, then `parseSSE()`), and emits each `data:`
 * payload parsed as JSON (`'[DONE]'` as it is). Unsubscribing aborts the request (`AbortController.abort()`).
 *
 * Errors: a failed connection is `MODEL_UNREACHABLE`, a non-2xx answer `MODEL_HTTP_ERROR` (with the
 * status and the start of the body), a payload that is not JSON `INVALID_EVENT`; an `error` object
 * sent mid-stream is left to `fromOpenAIChatCompletions` (`PROVIDER_ERROR`).
 *
 * @param options The key, the model, the base URL and the `fetch` to use.
 * @return The model: `(request) => Observable<ChatCompletionChunk | '[DONE]'>`.
 */
export function createOpenAIChatModel(options: OpenAIAgentOptions): ChatModel {
  const url = `${(options.baseUrl ?? 'https://api.openai.com/v1').replace(/\/+$/, '')}/chat/completions`;
  const model = options.model ?? DEFAULT_OPENAI_MODEL;
  return (request) =>
    fetchSSE({
      url,
      headers: { Authorization: `Bearer ${options.apiKey}`, 'Content-Type': 'application/json', Accept: 'text/event-stream' },
      body: JSON.stringify({
        model,
        messages: request.messages,
        tools: request.tools,
        parallel_tool_calls: true,
        stream: true,
        stream_options: { include_usage: true },
      }),
      fetch: options.fetch,
      unreachableHint: 'Check the network (or OPENAI_BASE_URL), or unset OPENAI_API_KEY to use the scripted agent.',
      httpErrorHint: () => `Check OPENAI_API_KEY and OPENAI_MODEL (now '${model}').`,
    }).pipe(
      map((message): ChatCompletionChunk | '[DONE]' => {
        const data = message.data.trim();
        if (data === '[DONE]') return '[DONE]';
        try {
          return JSON.parse(data) as ChatCompletionChunk;
        } catch {
          throw new AguiRxError('INVALID_EVENT', `${url} sent a server-sent event whose data is not JSON: ${excerpt(data)}. Is the base URL an OpenAI-compatible chat completions endpoint?`);
        }
      }),
    );
}

/**
 * The demo agent backed by the real OpenAI chat completions API: the same loop as the scripted
 * agent ({@link createChatAgent}), with the same two tools run on the server and the demo's
 * system prompt. Streams with plain `fetch`; when the browser goes away the handler unsubscribes
 * and the request in flight is aborted.
 *
 * ## Example
 *
 * ```ts
 * createServer(createAguiHandler(createOpenAIAgent({ apiKey: process.env.OPENAI_API_KEY! }))).listen(8000);
 * ```
 *
 * @param options The key, the model (default `gpt-4o-mini`), the base URL, `fetch` and the clock.
 * @return An {@link AguiAgent}.
 */
export function createOpenAIAgent(options: OpenAIAgentOptions): AguiAgent {
  return createChatAgent({ model: createOpenAIChatModel(options), tools: demoTools, systemPrompt: DEMO_SYSTEM_PROMPT, now: options.now });
}
