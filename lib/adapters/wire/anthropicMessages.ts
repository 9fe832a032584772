/**
 * The Anthropic Messages API streaming format (`stream: true`): what `fromAnthropicMessages` reads.
 * Types only: the adapter checks every field it reads, so these document the format, they do not vouch for it.
 */

/**
 * One event of the Anthropic Messages API stream (`stream: true`), the `data:` payload of one
 * server-sent event parsed as JSON (the `event:` line repeats its `type`).
 */
export type AnthropicStreamEvent =
  | AnthropicMessageStartEvent
  | AnthropicContentBlockStartEvent
  | AnthropicContentBlockDeltaEvent
  | AnthropicContentBlockStopEvent
  | AnthropicMessageDeltaEvent
  | AnthropicMessageStopEvent
  | AnthropicPingEvent
  | AnthropicErrorEvent;

/** Opens a message: its id, model and input token counts (`content` is empty when streaming). */
export interface AnthropicMessageStartEvent {
  /** Discriminant: `'message_start'`. */
  type: 'message_start';
  /** The message that starts: its `id` names the assistant message. */
  message: {
    /** The message's id (`msg_…`): the AG-UI assistant message's id. */
    id: string;
    /** Discriminant: `'message'`. */
    type?: 'message' | undefined;
    /** Always `assistant`. */
    role?: 'assistant' | undefined;
    /** The model that served the request, e.g. `claude-sonnet-4-20250514`. */
    model?: string | undefined;
    /** Empty at the start; the blocks follow as events. */
    content?: unknown[] | undefined;
    /** Null at the start; see `message_delta`. */
    stop_reason?: AnthropicStopReason | null | undefined;
    /** Null at the start; see `message_delta`. */
    stop_sequence?: string | null | undefined;
    /** Usage so far (the input tokens). */
    usage?: AnthropicUsage | undefined;
  };
}

/** Opens content block `index` of the message; its content arrives in deltas. */
export interface AnthropicContentBlockStartEvent {
  /** Discriminant: `'content_block_start'`. */
  type: 'content_block_start';
  /** The block's position in the message: keys the events of one block. */
  index: number;
  /** The block that starts (text, thinking, tool use, a server tool's result …). */
  content_block: AnthropicContentBlock;
}

/** A piece of content block `index`. */
export interface AnthropicContentBlockDeltaEvent {
  /** Discriminant: `'content_block_delta'`. */
  type: 'content_block_delta';
  /** The block's position in the message: keys the events of one block. */
  index: number;
  /** What the block gained: text, JSON arguments, thinking or a signature. */
  delta: AnthropicContentBlockDelta;
}

/** Closes content block `index`. */
export interface AnthropicContentBlockStopEvent {
  /** Discriminant: `'content_block_stop'`. */
  type: 'content_block_stop';
  /** The block's position in the message: keys the events of one block. */
  index: number;
}

/** The message's end: why it stopped, and the output token count (cumulative). */
export interface AnthropicMessageDeltaEvent {
  /** Discriminant: `'message_delta'`. */
  type: 'message_delta';
  /** The message's final fields. */
  delta: {
    /** Why the model stopped; `refusal` also sends CUSTOM `anthropic.refusal`. */
    stop_reason?: AnthropicStopReason | null | undefined;
    /** The stop sequence that ended the message, if one did; not read. */
    stop_sequence?: string | null | undefined;
    /** Newer API versions: what a refusal was about (`{ type: 'refusal', category, explanation }`). */
    stop_details?: Record<string, unknown> | null | undefined;
    /** Code execution: the container the message ran in (`{ id, expires_at }`); sends CUSTOM `anthropic.container`. */
    container?: { id: string; expires_at?: string | undefined; [field: string]: unknown } | null | undefined;
  };
  /** Cumulative usage, over `message_start`'s. */
  usage?: AnthropicUsage | undefined;
}

/** The message is complete. */
export interface AnthropicMessageStopEvent {
  /** Discriminant: `'message_stop'`. */
  type: 'message_stop';
}

/** A keep-alive; carries nothing. */
export interface AnthropicPingEvent {
  /** Discriminant: `'ping'`. */
  type: 'ping';
}

/** The provider failed mid-stream (`overloaded_error`, `api_error` …). */
export interface AnthropicErrorEvent {
  /** Discriminant: `'error'`. */
  type: 'error';
  /** What failed: becomes a `PROVIDER_ERROR` error. */
  error: {
    /** The error's type, e.g. `overloaded_error`. */
    type?: string | undefined;
    /** The provider's error message: the RUN_ERROR message. */
    message?: string | undefined;
  };
}

/** Why a message stopped. */
export type AnthropicStopReason = 'end_turn' | 'max_tokens' | 'stop_sequence' | 'tool_use' | 'pause_turn' | 'refusal' | (string & {});

/** Token counts. `input_tokens` excludes the cache's reads and writes, which are reported beside it. */
export interface AnthropicUsage {
  /** Prompt tokens not read from or written to the cache. */
  input_tokens?: number | null | undefined;
  /** Completion tokens. */
  output_tokens?: number | null | undefined;
  /** Prompt tokens written to the cache: `cacheWriteInputTokens`. */
  cache_creation_input_tokens?: number | null | undefined;
  /** Prompt tokens read from the cache: `cachedInputTokens`. */
  cache_read_input_tokens?: number | null | undefined;
  /** Server tool uses (`web_search_requests`, `web_fetch_requests`): no TOKEN_USAGE field; reported, not sent. */
  server_tool_use?: Record<string, unknown> | null | undefined;
  [field: string]: unknown;
}

/** The content blocks a stream opens. Unknown block types are ignored. */
export type AnthropicContentBlock =
  | {
      /** Discriminant: `'text'`. */
      type: 'text';
      /** The text. */
      text: string;
      /** Citations of a text block; not read. */
      citations?: unknown[] | null | undefined;
    }
  | {
      /** Discriminant: `'thinking'`. */
      type: 'thinking';
      /** The reasoning text. */
      thinking: string;
      /** The signature of a thinking block: REASONING_ENCRYPTED_VALUE. */
      signature?: string | undefined;
    }
  | {
      /** Discriminant: `'redacted_thinking'`. */
      type: 'redacted_thinking';
      /** The encrypted reasoning of a redacted block: REASONING_ENCRYPTED_VALUE. */
      data: string;
    }
  | {
      /** Discriminant: `'tool_use'`, `'server_tool_use'`, `'mcp_tool_use'`. */
      type: 'tool_use' | 'server_tool_use' | 'mcp_tool_use';
      /** The id. */
      id: string;
      /** The tool's name. */
      name: string;
      /** The tool call's arguments. */
      input?: unknown;
      /** The MCP server of an `mcp_tool_use` block; not read. */
      server_name?: string | undefined;
      [field: string]: unknown;
    }
  | AnthropicToolResultBlock;

/** A server tool's result (`web_search_tool_result`, `mcp_tool_result`, `tool_search_tool_result`, …). */
export interface AnthropicToolResultBlock {
  /** Discriminant: `…`. */
  type: `${string}_tool_result`;
  /** The id of the `server_tool_use` / `mcp_tool_use` block it answers. */
  tool_use_id: string;
  /** The server tool's result: TOOL_CALL_RESULT `content` (JSON text unless a string). */
  content?: unknown;
  /** Whether the server tool failed; not read. */
  is_error?: boolean | undefined;
  [field: string]: unknown;
}

/** The deltas of a content block. Unknown delta types (`citations_delta` …) are ignored. */
export type AnthropicContentBlockDelta =
  | {
      /** Discriminant: `'text_delta'`. */
      type: 'text_delta';
      /** The text. */
      text: string;
    }
  | {
      /** Discriminant: `'input_json_delta'`. */
      type: 'input_json_delta';
      /** A fragment of a tool call's JSON arguments (`input_json_delta`). */
      partial_json: string;
    }
  | {
      /** Discriminant: `'thinking_delta'`. */
      type: 'thinking_delta';
      /** The reasoning text. */
      thinking: string;
    }
  | {
      /** Discriminant: `'signature_delta'`. */
      type: 'signature_delta';
      /** The thinking block's signature (`signature_delta`): REASONING_ENCRYPTED_VALUE. */
      signature: string;
    }
  | {
      /** Discriminant: `'citations_delta'`. */
      type: 'citations_delta';
      /** A citation added to a text block (`citations_delta`); not read. */
      citation: unknown;
    };
