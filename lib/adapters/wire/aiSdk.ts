/**
 * The Vercel AI SDK's stream parts (`fullStream`, provider `doStream()` parts, UI message stream chunks): what `fromAiSdkStream` reads.
 * Types only: the adapter checks every field it reads, so these document the format, they do not vouch for it.
 */

/**
 * Token counts as the AI SDK reports them: v5's flat `LanguageModelUsage` (v6 adds the
 * `inputTokenDetails`/`outputTokenDetails`; v4 names the counts `promptTokens` and
 * `completionTokens`), or the provider-level LanguageModelV3 form whose `inputTokens` and
 * `outputTokens` are objects. A count the provider did not return is absent, `undefined` or `NaN`.
 */
export type AiSdkUsage = AiSdkFlatUsage | AiSdkNestedUsage;

/** `LanguageModelUsage` of `streamText` (v4, v5, v6) and LanguageModelV1 usage: counts at the top level. */
export interface AiSdkFlatUsage {
  /** Prompt tokens (AI SDK 5 and later). */
  inputTokens?: number | undefined;
  /** Completion tokens (AI SDK 5 and later). */
  outputTokens?: number | undefined;
  /** Prompt tokens (AI SDK 4, LanguageModelV1 `finish`). */
  promptTokens?: number | undefined;
  /** Completion tokens (AI SDK 4, LanguageModelV1 `finish`). */
  completionTokens?: number | undefined;
  /** Prompt plus completion tokens. */
  totalTokens?: number | undefined;
  /** Reasoning tokens, part of `outputTokens`. */
  reasoningTokens?: number | undefined;
  /** Prompt tokens read from the provider's cache. */
  cachedInputTokens?: number | undefined;
  /** v6: the input split by cache use. */
  inputTokenDetails?: {
    /** Prompt tokens neither read from nor written to the cache. */
    noCacheTokens?: number | undefined;
    /** Prompt tokens read from the cache. */
    cacheReadTokens?: number | undefined;
    /** Prompt tokens written to the cache. */
    cacheWriteTokens?: number | undefined;
  } | undefined;
  /** v6: the output split into text and reasoning. */
  outputTokenDetails?: {
    /** Completion tokens of text. */
    textTokens?: number | undefined;
    /** Completion tokens of reasoning. */
    reasoningTokens?: number | undefined;
  } | undefined;
  /** The provider's own usage object; not read. */
  raw?: unknown;
}

/** LanguageModelV3 usage (`doStream`'s `finish` part, AI SDK 6 providers): counts nested by kind. */
export interface AiSdkNestedUsage {
  /** Prompt token counts (AI SDK 6 / provider v3 nested usage). */
  inputTokens: {
    /** All prompt tokens. */
    total?: number | undefined;
    /** Prompt tokens neither read from nor written to the cache. */
    noCache?: number | undefined;
    /** Prompt tokens read from the cache. */
    cacheRead?: number | undefined;
    /** Prompt tokens written to the cache. */
    cacheWrite?: number | undefined;
  };
  /** Completion token counts. */
  outputTokens: {
    /** All completion tokens. */
    total?: number | undefined;
    /** Completion tokens of text. */
    text?: number | undefined;
    /** Completion tokens of reasoning. */
    reasoning?: number | undefined;
  };
  /** The provider's own usage object; not read. */
  raw?: unknown;
}

/**
 * Start, delta or end of a text or reasoning part. `fullStream` spells the delta `text`, providers
 * and UI streams `delta`; AI SDK 4 sends only deltas, `text-delta` and `reasoning`, without id, as `textDelta`.
 */
export interface AiSdkTextPart {
  /** Discriminant: `'text-start'`, `'text-delta'`, `'text-end'`, `'reasoning-start'`, `'reasoning-delta'`, `'reasoning-end'`, AI SDK 4's `'reasoning'`. */
  type: 'text-start' | 'text-delta' | 'text-end' | 'reasoning-start' | 'reasoning-delta' | 'reasoning-end' | 'reasoning';
  /** The part's id: the same on its start, deltas and end (absent in AI SDK 4). */
  id?: string | undefined;
  /** A piece of the text (LanguageModelV2/V3 parts, UI message stream chunks). */
  delta?: string | undefined;
  /** A piece of the text (`streamText().fullStream`). */
  text?: string | undefined;
  /** A piece of the text (AI SDK 4 `fullStream`, LanguageModelV1 parts). */
  textDelta?: string | undefined;
  /** Provider-specific data: on reasoning parts, Anthropic's `{ anthropic: { signature } }` or `{ anthropic: { redactedData } }` is read. */
  providerMetadata?: Record<string, unknown> | undefined;
}

/**
 * The start, a piece or the end of a tool call's input, streamed as JSON text. AI SDK 4 spells
 * them `tool-call-streaming-start` and `tool-call-delta` (its provider parts have no start: each
 * delta names the tool).
 */
export interface AiSdkToolInputPart {
  /** Discriminant: `'tool-input-start'`, `'tool-input-delta'`, `'tool-input-end'`, AI SDK 4's `'tool-call-streaming-start'`, `'tool-call-delta'`. */
  type: 'tool-input-start' | 'tool-input-delta' | 'tool-input-end' | 'tool-call-streaming-start' | 'tool-call-delta';
  /** The call's id in `fullStream` and provider parts. */
  id?: string | undefined;
  /** The call's id in UI message stream chunks. */
  toolCallId?: string | undefined;
  /** The tool's name, on `tool-input-start`. */
  toolName?: string | undefined;
  /** A piece of the input's JSON text (`fullStream`, provider parts). */
  delta?: string | undefined;
  /** A piece of the input's JSON text (UI message stream). */
  inputTextDelta?: string | undefined;
  /** A piece of the input's JSON text (AI SDK 4 `tool-call-delta`). */
  argsTextDelta?: string | undefined;
  /** Set for tools the provider ran itself; not read. */
  providerExecuted?: boolean | undefined;
  /** Set for tools not known statically (MCP tools); not read. */
  dynamic?: boolean | undefined;
}

/**
 * A tool call with its whole input: `tool-call` (`fullStream`: input parsed; provider parts: input
 * as JSON text), the UI stream's `tool-input-available`, or `tool-input-error` (input the model
 * got wrong, kept as it came).
 */
export interface AiSdkToolCallPart {
  /** Discriminant: `'tool-call'`, `'tool-input-available'`, `'tool-input-error'`. */
  type: 'tool-call' | 'tool-input-available' | 'tool-input-error';
  /** The tool call's id. */
  toolCallId: string;
  /** The tool's name. */
  toolName: string;
  /** The call's whole arguments: sent as JSON text when no fragment was. */
  input?: unknown;
  /** The call's whole arguments (AI SDK 4: parsed in `fullStream`, JSON text in LanguageModelV1 parts). */
  args?: unknown;
  /** `tool-input-error`: why the input was rejected. */
  errorText?: string | undefined;
  /** Set for tools the provider ran itself; not read. */
  providerExecuted?: boolean | undefined;
  /** Set for tools not known statically (MCP tools); not read. */
  dynamic?: boolean | undefined;
  /** Set when the model's arguments failed the tool's schema (`tool-input-error`). */
  invalid?: boolean | undefined;
}

/** A tool's output: `tool-result` (`fullStream` `output`, provider parts `result`) or the UI stream's `tool-output-available`. */
export interface AiSdkToolResultPart {
  /** Discriminant: `'tool-result'`, `'tool-output-available'`. */
  type: 'tool-result' | 'tool-output-available';
  /** The tool call's id. */
  toolCallId: string;
  /** The tool's name. */
  toolName?: string | undefined;
  /** The tool's output (`tool-output-available`, AI SDK 5 `tool-result`): TOOL_CALL_RESULT `content`. */
  output?: unknown;
  /** The tool's output (AI SDK 4 `tool-result`): TOOL_CALL_RESULT `content`. */
  result?: unknown;
  /** Provider parts: the result is the tool's error. */
  isError?: boolean | undefined;
  /** A streamed tool's intermediate output; only the final one is kept. */
  preliminary?: boolean | undefined;
  /** The call's input, which `fullStream` repeats on its result; not read. */
  input?: unknown;
  /** Set for tools the provider ran itself: what follows the result is a new assistant message. */
  providerExecuted?: boolean | undefined;
  /** Set for tools not known statically (MCP tools); not read. */
  dynamic?: boolean | undefined;
}

/** A tool that failed (`fullStream` `tool-error`, UI `tool-output-error`) or whose call the user denied (`tool-output-denied`). */
export interface AiSdkToolErrorPart {
  /** Discriminant: `'tool-error'`, `'tool-output-error'`, `'tool-output-denied'`. */
  type: 'tool-error' | 'tool-output-error' | 'tool-output-denied';
  /** The tool call's id. */
  toolCallId: string;
  /** The tool's name. */
  toolName?: string | undefined;
  /** The arguments the failed call had; not read. */
  input?: unknown;
  /** `tool-error`: what was thrown. */
  error?: unknown;
  /** `tool-output-error`: the error's message. */
  errorText?: string | undefined;
}

/** A tool call that waits for the user's approval (AI SDK 6): the UI stream names the call, `fullStream` carries it. */
export interface AiSdkToolApprovalRequestPart {
  /** Discriminant: `'tool-approval-request'`. */
  type: 'tool-approval-request';
  /** The approval's id: the interrupt's `id`. */
  approvalId: string;
  /** The call awaiting approval (UI message stream chunks). */
  toolCallId?: string | undefined;
  /** The call awaiting approval (`fullStream`). */
  toolCall?: {
    /** The call's id. */
    toolCallId: string;
    /** The tool's name. */
    toolName?: string | undefined;
    /** The call's arguments. */
    input?: unknown;
  } | undefined;
}

/**
 * The run's and each step's start and end. `finish` has the run's usage (`totalUsage` in
 * `fullStream`, `usage` in provider parts and AI SDK 4's `fullStream`). AI SDK 4 spells the steps
 * `step-start` and `step-finish`.
 */
export interface AiSdkLifecyclePart {
  /** Discriminant: `'abort'`, `'start'`, `'finish'`, `'start-step'`, `'finish-step'`, `'stream-start'`, AI SDK 4's `'step-start'`, `'step-finish'`. */
  type: 'start' | 'finish' | 'start-step' | 'finish-step' | 'stream-start' | 'abort' | 'step-start' | 'step-finish';
  /** `start` (UI): the UI message's id, not read; `step-start` (AI SDK 4): the step's message id, which names its assistant message. */
  messageId?: string | undefined;
  /** `finish-step`: the step's usage; `finish` (provider parts): the call's usage. */
  usage?: AiSdkUsage | undefined;
  /** `finish` (`fullStream`): every step's usage summed. */
  totalUsage?: AiSdkUsage | undefined;
  /** `finish-step` (`fullStream`): the model's response. */
  response?: {
    /** The provider's response id: names the step's assistant message. */
    id?: string | undefined;
    /** The model that answered: TOKEN_USAGE `model`. */
    modelId?: string | undefined;
  } | undefined;
  /** Why the model stopped (`finish`, `finish-step`); not read: the text sent is kept whatever the reason. */
  finishReason?: unknown;
  /** Why the stream was aborted (`abort`). */
  reason?: string | undefined;
  [field: string]: unknown;
}

/** Provider parts: the response's id and model, sent as the response begins. */
export interface AiSdkResponseMetadataPart {
  /** Discriminant: `'response-metadata'`. */
  type: 'response-metadata';
  /** The provider's response id: names the assistant message. */
  id?: string | undefined;
  /** The model that answered: TOKEN_USAGE `model`. */
  modelId?: string | undefined;
  /** When the response was created; not read. */
  timestamp?: unknown;
}

/** A failure: `fullStream` and provider parts carry `error`, the UI stream `errorText`. */
export interface AiSdkErrorPart {
  /** Discriminant: `'error'`. */
  type: 'error';
  /** The error (`fullStream`): an Error or any value; its message becomes the `PROVIDER_ERROR` message. */
  error?: unknown;
  /** The error's text (UI message stream chunks). */
  errorText?: string | undefined;
}

/**
 * Parts not sent: raw provider chunks and message metadata (bookkeeping), sources, files, custom
 * `data-*` parts and AI SDK 4's reasoning signatures (dropped, and reported through `onDiagnostic`).
 */
export interface AiSdkIgnoredPart {
  /** Discriminant: `'source'`, `'source-url'`, `'source-document'`, `'file'`, `'raw'`, `'message-metadata'`, `data-…`, `'reasoning-signature'`, `'redacted-reasoning'`. */
  type: 'source' | 'source-url' | 'source-document' | 'file' | 'raw' | 'message-metadata' | `data-${string}` | 'reasoning-signature' | 'redacted-reasoning';
  [field: string]: unknown;
}

/**
 * One part of a Vercel AI SDK stream: `streamText().fullStream` (v4, v5, v6), a provider's
 * `doStream()` (LanguageModelV1/V2/V3 parts), or a UI message stream (`toUIMessageStream()`, the
 * chunks behind `data: {…}` lines of a UI message stream response).
 */
export type AiSdkStreamPart =
  | AiSdkTextPart
  | AiSdkToolInputPart
  | AiSdkToolCallPart
  | AiSdkToolResultPart
  | AiSdkToolErrorPart
  | AiSdkToolApprovalRequestPart
  | AiSdkLifecyclePart
  | AiSdkResponseMetadataPart
  | AiSdkErrorPart
  | AiSdkIgnoredPart;
