/**
 * LangChain `streamEvents` v2 events and the LangChain messages they carry: what `fromLangChainStreamEvents` (and `fromLangGraphStream`) read.
 * Types only: the adapter checks every field it reads, so these document the format, they do not vouch for it.
 */

/** The `event` names of LangChain's `streamEvents({ version: 'v2' })`; others (retrievers, prompts, parsers …) are read and ignored. */
export type LangChainStreamEventName =
  | 'on_chat_model_start'
  | 'on_chat_model_stream'
  | 'on_chat_model_end'
  | 'on_llm_start'
  | 'on_llm_stream'
  | 'on_llm_end'
  | 'on_tool_start'
  | 'on_tool_end'
  | 'on_tool_error'
  | 'on_chain_start'
  | 'on_chain_stream'
  | 'on_chain_end'
  | 'on_custom_event'
  | (string & {});

/**
 * One event of LangChain / LangGraph `streamEvents({ version: 'v2' })` (JavaScript) or
 * `astream_events(version="v2")` (Python), as an object or parsed from JSON.
 */
export interface LangChainStreamEvent {
  /** What happened, e.g. `on_chat_model_stream`. */
  event: LangChainStreamEventName;
  /** The runnable's name: the model class (`ChatOpenAI`), the tool's name, a graph node's name … */
  name: string;
  /** The id of the runnable's run: the same on its start, stream and end events. */
  run_id: string;
  /** The run's tags; not read. */
  tags?: string[] | undefined;
  /** The run's metadata; LangGraph adds `langgraph_node`, `langgraph_step` …, models `ls_provider`, `ls_model_name`. */
  metadata?: LangChainRunMetadata | undefined;
  /** The ids of the enclosing runs, outermost first. */
  parent_ids?: string[] | undefined;
  /** `chunk` on `*_stream`, `input` on `*_start` (and `*_end`), `output` on `*_end`, `error` on `on_tool_error`. */
  data: {
    /** A streamed piece (`on_chat_model_stream`: a message chunk). */
    chunk?: unknown;
    /** The run's input (`on_tool_start`/`on_tool_end`: the tool call). */
    input?: unknown;
    /** The run's output (`on_chat_model_end`: the message; `on_tool_end`: the ToolMessage or `Command`). */
    output?: unknown;
    /** The error of an `on_tool_error` event. */
    error?: unknown;
    [key: string]: unknown;
  };
}

/** The metadata LangChain and LangGraph put on each run. */
export interface LangChainRunMetadata {
  /** LangGraph: the graph node the run belongs to. A chain run whose `name` equals it is the node itself. */
  langgraph_node?: string | undefined;
  /** The graph step (superstep) number; not read. */
  langgraph_step?: number | undefined;
  /** The provider LangSmith recorded; not read. */
  ls_provider?: string | undefined;
  /** The model name LangSmith recorded: TOKEN_USAGE `model` when the response names none. */
  ls_model_name?: string | undefined;
  [key: string]: unknown;
}

/**
 * A LangChain message (or message chunk) as the stream carries it: the object itself (an
 * `AIMessageChunk`, a `ToolMessage` …, or their plain JSON from Python), or its `lc`-serialised
 * form `{ lc: 1, type: 'constructor', id: [..., 'AIMessageChunk'], kwargs: { … } }` (`JSON.stringify` of a JS message).
 */
export type LangChainMessageLike = LangChainMessageFields | LangChainSerializedMessage;

/** The `lc`-serialised form of a LangChain JS message. */
export interface LangChainSerializedMessage {
  /** The serialisation format version, `1`. */
  lc: number;
  /** Discriminant: `'constructor'`. */
  type: 'constructor';
  /** The class path; its last element is the class: `AIMessageChunk`, `ToolMessage` … */
  id: string[];
  /** The message's fields. */
  kwargs: LangChainMessageFields;
}

/** The fields of a LangChain message that the adapters read. */
export interface LangChainMessageFields {
  /** `ai`, `AIMessageChunk`, `tool`, `human` … (plain and Python forms). */
  type?: string | undefined;
  /** The message id: names the assistant message (a chunk's, or a ToolMessage's own). */
  id?: string | null | undefined;
  /** The text, or a list of content blocks. */
  content?: string | LangChainContentBlock[] | undefined;
  /** Pieces of tool calls (chunks only). */
  tool_call_chunks?: LangChainToolCallChunk[] | undefined;
  /** Whole tool calls (a complete message); read only when the message carries no `tool_call_chunks`. */
  tool_calls?: {
    /** The call's id. */
    id?: string | null | undefined;
    /** The tool's name. */
    name: string;
    /** The call's parsed arguments (sent as JSON text). */
    args?: Record<string, unknown> | undefined;
  }[] | undefined;
  /** `reasoning_content` (DeepSeek, vLLM …) or `reasoning` (OpenAI Responses: `{ summary: [{ text, index }] }`). */
  additional_kwargs?: {
    /** Reasoning text (DeepSeek and compatible providers). */
    reasoning_content?: string | undefined;
    /** OpenAI reasoning: a string, or a reasoning item with `summary` parts. */
    reasoning?: string | {
      /** The reasoning summary's parts. */
      summary?: {
        /** The part's text. */
        text?: string | undefined;
        /** The part's position; a new index starts a new paragraph. */
        index?: number | undefined;
      }[] | undefined;
    } | undefined;
    [key: string]: unknown;
  } | undefined;
  /** Provider response metadata. */
  response_metadata?: {
    /** The model that answered: TOKEN_USAGE `model`. */
    model_name?: string | undefined;
    [key: string]: unknown;
  } | undefined;
  /** Token usage of the message or chunk: TOKEN_USAGE. */
  usage_metadata?: LangChainUsageMetadata | null | undefined;
  /** ToolMessage: the call it answers. */
  tool_call_id?: string | undefined;
  /** ToolMessage: `success` or `error`. */
  status?: string | undefined;
  /** The message's (or tool's) name. */
  name?: string | null | undefined;
  [key: string]: unknown;
}

/** A block of list content (Anthropic-style, and LangChain's standard blocks). */
export type LangChainContentBlock =
  | {
      /** The block's type; blocks of other types are skipped. */
      type: 'text';
      /** The text. */
      text: string;
      /** The block's position in the message: keys the events of one block. */
      index?: number | undefined;
    }
  | {
      /** The block's type; blocks of other types are skipped. */
      type: 'thinking';
      /** The reasoning text. */
      thinking: string;
      /** The signature that certifies the reasoning. */
      signature?: string | undefined;
      /** The block's position in the message: keys the events of one block. */
      index?: number | undefined;
    }
  | {
      /** The block's type; blocks of other types are skipped. */
      type: 'reasoning';
      /** The reasoning text of a `reasoning` block. */
      reasoning: string;
      /** The block's position in the message: keys the events of one block. */
      index?: number | undefined;
    }
  | {
      /** The block's type; blocks of other types are skipped. */
      type: 'tool_use';
      /** The id. */
      id?: string | undefined;
      /** The tool's name. */
      name?: string | undefined;
      /** The tool call's arguments. */
      input?: unknown;
      /** The block's position in the message: keys the events of one block. */
      index?: number | undefined;
    }
  | {
      /** The block's type; blocks of other types are skipped. */
      type: 'input_json_delta';
      /** A fragment of a tool call's JSON arguments. */
      partial_json: string;
      /** The block's position in the message: keys the events of one block. */
      index?: number | undefined;
    }
  | {
      /** The block's type; blocks of other types are skipped. */
      type: string & {};
      [key: string]: unknown;
    };

/** A piece of one tool call. */
export interface LangChainToolCallChunk {
  /** The call's id, on its first piece. */
  id?: string | null | undefined;
  /** The tool's name, on its first piece. */
  name?: string | null | undefined;
  /** A fragment of the arguments' JSON text. */
  args?: string | null | undefined;
  /** Which call of the model's message the piece belongs to (absent with some providers). */
  index?: number | null | undefined;
  /** Discriminant: `'tool_call_chunk'`. */
  type?: 'tool_call_chunk' | undefined;
}

/** LangChain's token counts. */
export interface LangChainUsageMetadata {
  /** Prompt tokens. */
  input_tokens?: number | undefined;
  /** Completion tokens. */
  output_tokens?: number | undefined;
  /** Prompt plus completion tokens. */
  total_tokens?: number | undefined;
  /** Prompt token breakdown. */
  input_token_details?: {
    /** Prompt tokens read from the cache: `cachedInputTokens`. */
    cache_read?: number | undefined;
    /** Prompt tokens written to the cache: `cacheWriteInputTokens`. */
    cache_creation?: number | undefined;
    [key: string]: unknown;
  } | undefined;
  /** Completion token breakdown. */
  output_token_details?: {
    /** Reasoning tokens: `reasoningTokens`. */
    reasoning?: number | undefined;
    [key: string]: unknown;
  } | undefined;
}
