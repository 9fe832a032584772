/**
 * The OpenAI Chat Completions streaming format (`stream: true`): what `fromOpenAIChatCompletions` reads.
 * Types only: the adapter checks every field it reads, so these document the format, they do not vouch for it.
 */

/**
 * One streamed chunk of the OpenAI Chat Completions API (`stream: true`), the `data:` payload
 * of one server-sent event parsed as JSON. OpenAI-compatible servers (Azure OpenAI, DeepSeek,
 * vLLM, OpenRouter …) send the same shape, some with extra fields.
 */
export interface ChatCompletionChunk {
  /** The completion's id, the same on every chunk of one completion (`chatcmpl-…`). */
  id: string;
  /** `chat.completion.chunk` (Azure's filter-only chunk has `''`). */
  object?: string | undefined;
  /** Unix time of the completion's creation, in seconds. */
  created?: number | undefined;
  /** The model that served the request, e.g. `gpt-4o-2024-08-06`. */
  model?: string | undefined;
  /** The backend configuration's fingerprint; not read. */
  system_fingerprint?: string | null | undefined;
  /** The service tier that ran the request; not read. */
  service_tier?: string | null | undefined;
  /** One entry per streamed choice; empty on the usage-only final chunk and on Azure's filter-only chunk. */
  choices: ChatCompletionChunkChoice[];
  /** Token counts: on the final chunk (`choices: []`) with `stream_options.include_usage`; DeepSeek puts them on the last chunk with choices. */
  usage?: ChatCompletionUsage | null | undefined;
  /** Azure OpenAI: the prompt's content filter verdicts, on a first chunk with `choices: []`. */
  prompt_filter_results?: unknown[] | undefined;
  /** Groq: its request id, and on the last chunk `usage` (read as the chunk's usage when it has no top-level `usage`). */
  x_groq?: { id?: string | undefined; usage?: ChatCompletionUsage | null | undefined } | null | undefined;
}

/** One choice of a {@link ChatCompletionChunk}. */
export interface ChatCompletionChunkChoice {
  /** Which of the `n` requested choices this is (0 for the first). */
  index: number;
  /** What this chunk adds to the choice's message. */
  delta: ChatCompletionChunkDelta;
  /** Why the choice ended, on its last chunk; `null` before. */
  finish_reason: 'stop' | 'length' | 'tool_calls' | 'content_filter' | 'function_call' | (string & {}) | null;
  /** Log probabilities, when requested; not read. */
  logprobs?: unknown;
  /** Azure OpenAI: the content filter verdicts of this piece of output. */
  content_filter_results?: unknown;
}

/** The part of an assistant message one chunk adds. Every field is optional; `null` means absent. */
export interface ChatCompletionChunkDelta {
  /** The role, on the first chunk (`assistant`). */
  role?: 'assistant' | (string & {}) | null | undefined;
  /** A piece of the assistant's text; Mistral may send an array of content parts instead. */
  content?: string | ChatCompletionContentPart[] | null | undefined;
  /** A piece of the model's refusal, sent instead of `content`. */
  refusal?: string | null | undefined;
  /** DeepSeek (and vLLM): a piece of the model's reasoning, before its answer. */
  reasoning_content?: string | null | undefined;
  /** OpenRouter (and newer vLLM): the same as `reasoning_content`, read when that is absent. */
  reasoning?: string | null | undefined;
  /** OpenRouter: the reasoning as typed blocks; their text is `reasoning`'s, their encrypted data and signatures are kept as encrypted values. */
  reasoning_details?: ChatCompletionReasoningDetail[] | null | undefined;
  /** Pieces of tool calls, each keyed by the call's `index`. */
  tool_calls?: ChatCompletionChunkToolCall[] | null | undefined;
  /** Gemini's OpenAI-compatible endpoint: `{ google: { thought_signature } }` of the text; not read (reported). */
  extra_content?: Record<string, unknown> | null | undefined;
  /** Audio output (`modalities: ['text', 'audio']`): the answer's text comes as its `transcript`, not as `content`. */
  audio?: ChatCompletionChunkAudio | null | undefined;
  /** The legacy `functions` API's single call (deprecated by OpenAI). */
  function_call?: {
    /** The deprecated single function call's name; not read. */
    name?: string | undefined;
    /** The deprecated single function call's arguments; not read. */
    arguments?: string | undefined;
  } | null | undefined;
}

/** A piece of the audio answer of an audio-output model (`gpt-4o-audio-preview` …): each chunk carries some of its fields. */
export interface ChatCompletionChunkAudio {
  /** The audio's id, on the first piece: a later request may name the audio by it (until `expires_at`). */
  id?: string | undefined;
  /** A piece of the spoken answer's transcript: the assistant's text. */
  transcript?: string | undefined;
  /** A piece of the audio, base64 bytes in the requested format. */
  data?: string | undefined;
  /** When the audio stops being available for later requests, Unix seconds; on the last piece. */
  expires_at?: number | undefined;
}

/**
 * One part of an array `delta.content` (Mistral): `text` is the assistant's text, `thinking` its
 * reasoning; other types (`reference`, `image_url` …) are dropped with a diagnostic.
 */
export type ChatCompletionContentPart =
  | {
      /** Discriminant: `'text'`. */
      type: 'text';
      /** A piece of the assistant's text. */
      text: string;
    }
  | {
      /** Discriminant: `'thinking'`. */
      type: 'thinking';
      /** A piece of the model's reasoning: `text` parts (other types dropped). */
      thinking: ChatCompletionContentPart[];
      /** Mistral: whether the thinking is over; not read. */
      closed?: boolean | undefined;
    }
  | {
      /** Any other part type (`reference`, `image_url` …): no AG-UI text form. */
      type: string;
      [field: string]: unknown;
    };

/** A piece of one tool call. */
export interface ChatCompletionChunkToolCall {
  /** Which call of the message this piece belongs to; not always 0-based (Anthropic's compatible endpoint starts at 1). */
  index: number;
  /** The call's id, on its first piece only. */
  id?: string | null | undefined;
  /** `function` (or `custom`), on a call's first piece. */
  type?: 'function' | 'custom' | (string & {}) | undefined;
  /** The function: its `name` on the first piece, `arguments` fragments after. */
  function?: {
    /** The tool's name, on the call's first piece only. */
    name?: string | null | undefined;
    /** A fragment of the arguments' JSON text. */
    arguments?: string | null | undefined;
  } | null | undefined;
  /** A custom (freeform) tool's call: its `name` on the first piece, pieces of its free text `input` after. */
  custom?: {
    /** The custom tool's name, on the call's first piece only. */
    name?: string | null | undefined;
    /** A piece of the call's free text input. */
    input?: string | null | undefined;
  } | null | undefined;
  /** Gemini's OpenAI-compatible endpoint: `{ google: { thought_signature } }`, the call's signature, which Gemini 3 needs back. */
  extra_content?: { google?: { thought_signature?: string | undefined; [field: string]: unknown } | undefined; [field: string]: unknown } | null | undefined;
}

/**
 * One entry of OpenRouter's `delta.reasoning_details`: a reasoning block as the upstream provider
 * gave it. `reasoning.text` (Anthropic, Gemini: `text`, maybe a `signature`), `reasoning.summary`
 * (OpenAI: `summary`), `reasoning.encrypted` (`data`, which `id` may tie to a tool call).
 */
export interface ChatCompletionReasoningDetail {
  /** `reasoning.text`, `reasoning.summary` or `reasoning.encrypted`. */
  type: 'reasoning.text' | 'reasoning.summary' | 'reasoning.encrypted' | (string & {});
  /** `reasoning.text`: a piece of the reasoning. */
  text?: string | null | undefined;
  /** `reasoning.text`: the block's signature (Anthropic), on its last piece. */
  signature?: string | null | undefined;
  /** `reasoning.summary`: a piece of the reasoning's summary. */
  summary?: string | null | undefined;
  /** `reasoning.encrypted`: the encrypted reasoning. */
  data?: string | null | undefined;
  /** The block's id: for Gemini's encrypted blocks, the id of the tool call it signs. */
  id?: string | null | undefined;
  /** The upstream format, e.g. `google-gemini-v1`, `anthropic-claude-v1`, `openai-responses-v1`. */
  format?: string | null | undefined;
  /** The block's position among the message's reasoning blocks. */
  index?: number | undefined;
}

/** Token counts of one completion. */
export interface ChatCompletionUsage {
  /** Every input token, cached ones included. */
  prompt_tokens?: number | undefined;
  /** Every output token, reasoning included. */
  completion_tokens?: number | undefined;
  /** Prompt plus completion tokens: `totalTokens`. */
  total_tokens?: number | undefined;
  /** Prompt token breakdown. */
  prompt_tokens_details?: {
    /** Prompt tokens read from the cache: `cachedInputTokens`. */
    cached_tokens?: number | undefined;
    /** Prompt tokens of audio; not read. */
    audio_tokens?: number | undefined;
  } | null | undefined;
  /** Completion token breakdown. */
  completion_tokens_details?: {
    /** Reasoning tokens: `reasoningTokens`. */
    reasoning_tokens?: number | undefined;
    /** Completion tokens of audio; not read. */
    audio_tokens?: number | undefined;
    /** Predicted-output tokens that appeared in the completion; not read. */
    accepted_prediction_tokens?: number | undefined;
    /** Predicted-output tokens that did not; not read. */
    rejected_prediction_tokens?: number | undefined;
  } | null | undefined;
}
