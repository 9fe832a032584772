/**
 * The OpenAI Responses API streaming format (`stream: true`): what `fromOpenAIResponses` reads.
 * Types only: the adapter checks every field it reads, so these document the format, they do not vouch for it.
 */

/** The `response` object that the lifecycle events of the OpenAI Responses API carry. Fields this adapter does not read are kept as `unknown`. */
export interface ResponseObject {
  /** The response's id (`resp_…`). */
  id: string;
  /** Always `response`. */
  object?: 'response' | undefined;
  /** The response's status (`in_progress`, `completed`, `incomplete`, `failed` …). */
  status?: 'queued' | 'in_progress' | 'completed' | 'failed' | 'incomplete' | 'cancelled' | (string & {}) | undefined;
  /** The model that served the request, e.g. `gpt-4o-2024-08-06`. */
  model?: string | undefined;
  /** The output items: complete on `response.completed` and `response.incomplete`, empty before. */
  output?: ResponseOutputItem[] | undefined;
  /** Token counts, on `response.completed` (and `response.incomplete` / `response.failed` when the provider sends them). */
  usage?: ResponseUsage | null | undefined;
  /** Why the response failed, on `response.failed`. */
  error?: {
    /** The failure's code. */
    code?: string | null | undefined;
    /** The failure's message: the RUN_ERROR message. */
    message?: string | undefined;
  } | null | undefined;
  /** Why the response stopped early, on `response.incomplete` (e.g. `max_output_tokens`, `content_filter`). */
  incomplete_details?: {
    /** Why the response is incomplete (`max_output_tokens`, `content_filter`). */
    reason?: string | undefined;
  } | null | undefined;
  [field: string]: unknown;
}

/** Token counts of one response. */
export interface ResponseUsage {
  /** Every input token, cached ones included. */
  input_tokens?: number | undefined;
  /** Every output token, reasoning included. */
  output_tokens?: number | undefined;
  /** Input plus output tokens: `totalTokens`. */
  total_tokens?: number | undefined;
  /** `cached_tokens`; GitHub Copilot also sends `cache_write_tokens`. */
  input_tokens_details?: {
    /** Input tokens read from the cache: `cachedInputTokens`. */
    cached_tokens?: number | undefined;
    /** Input tokens written to the cache: `cacheWriteInputTokens`. */
    cache_write_tokens?: number | undefined;
  } | null | undefined;
  /** Output token breakdown. */
  output_tokens_details?: {
    /** Reasoning tokens: `reasoningTokens`. */
    reasoning_tokens?: number | undefined;
  } | null | undefined;
}

/** An assistant message item: its text (`output_text`) or refusal parts. */
export interface ResponseOutputMessage {
  /** Discriminant: `'message'`. */
  type: 'message';
  /** The item id: names a second message item of the response. */
  id: string;
  /** Always `assistant`. */
  role?: 'assistant' | undefined;
  /** The item's status; an `incomplete` item was cut off. */
  status?: 'in_progress' | 'completed' | 'incomplete' | undefined;
  /** The message's parts: `output_text` and `refusal`. */
  content: ResponseOutputContent[];
  /** gpt-5 codex models: `commentary` or `final_answer`. */
  phase?: string | undefined;
}

/** A part of a message item. */
export type ResponseOutputContent = {
  /** Discriminant: `'output_text'`. */
  type: 'output_text';
  /** The text. */
  text: string;
  /** Annotations (citations) of an `output_text` part: no AG-UI form, each dropped and reported once. */
  annotations?: unknown[] | undefined;
  /** Log probabilities, when requested; not read. */
  logprobs?: unknown[] | undefined;
} | {
  /** Discriminant: `'refusal'`. */
  type: 'refusal';
  /** The refusal text of a `refusal` part. */
  refusal: string;
};

/** A function tool call item: `call_id` is the id the tool's result refers to. */
export interface ResponseFunctionToolCall {
  /** Discriminant: `'function_call'`. */
  type: 'function_call';
  /** The item's id (`fc_…`). */
  id?: string | undefined;
  /** The call's id (`call_…`), which the tool's output must carry. */
  call_id: string;
  /** The function's name: `toolCallName`. */
  name: string;
  /** The arguments' JSON text: `''` on `response.output_item.added`, whole on `response.output_item.done`. */
  arguments: string;
  /** The item's status; an `incomplete` call was cut off (`INCOMPLETE_STREAM`). */
  status?: 'in_progress' | 'completed' | 'incomplete' | undefined;
}

/** A reasoning item: its summary parts, and for open-weight models its reasoning text. */
export interface ResponseReasoningItem {
  /** Discriminant: `'reasoning'`. */
  type: 'reasoning';
  /** The item id: the reasoning message's `messageId`. */
  id: string;
  /** The reasoning summary's parts. */
  summary: {
    /** Discriminant: `'summary_text'`. */
    type: 'summary_text';
    /** A summary part's text. */
    text: string;
  }[];
  /** The reasoning text's parts (models that expose it). */
  content?: {
    /** Discriminant: `'reasoning_text'`. */
    type: 'reasoning_text';
    /** A reasoning text part. */
    text: string;
  }[] | undefined;
  /**
   * The reasoning, encrypted (with `include: ['reasoning.encrypted_content']` and `store: false`):
   * REASONING_ENCRYPTED_VALUE on the reasoning message, to send back in the next request.
   */
  encrypted_content?: string | null | undefined;
  /** The item's status. */
  status?: 'in_progress' | 'completed' | 'incomplete' | undefined;
}

/**
 * An output item: a message, a function call, a reasoning item, or another tool item
 * (`custom_tool_call`, `local_shell_call`, `shell_call`, `apply_patch_call`, `computer_call`,
 * `tool_search_call`, `mcp_approval_request`, the server's `web_search_call`, `file_search_call`,
 * `mcp_call`, `code_interpreter_call`, and the `*_output` items that answer them), read by its fields.
 */
export type ResponseOutputItem = ResponseOutputMessage | ResponseFunctionToolCall | ResponseReasoningItem | {
  /** The item's type; items of other types are skipped. */
  type: string & {};
  /** The item id. */
  id?: string | undefined;
  [field: string]: unknown;
};

/** What every event carries. */
interface ResponseEventBase {
  /** The event's position in the stream (starts at 0 for each response). */
  sequence_number?: number;
}

/** `response.created`, `response.queued` and `response.in_progress`: a response begins. */
export interface ResponseLifecycleEvent extends ResponseEventBase {
  /** Discriminant: `'response.created'`, `'response.queued'`, `'response.in_progress'`. */
  type: 'response.created' | 'response.queued' | 'response.in_progress';
  /** The response: its `id` names the turn's assistant message. */
  response: ResponseObject;
}

/** `response.completed`, `response.incomplete` and `response.failed`: a response ends. */
export interface ResponseEndEvent extends ResponseEventBase {
  /** Discriminant: `'response.completed'`, `'response.incomplete'`, `'response.failed'`. */
  type: 'response.completed' | 'response.incomplete' | 'response.failed';
  /** The finished response: its `usage` becomes TOKEN_USAGE, its `output` fills in what the deltas did not send. */
  response: ResponseObject;
}

/** `response.output_item.added` and `.done`: an output item begins, or ends whole. */
export interface ResponseOutputItemEvent extends ResponseEventBase {
  /** Discriminant: `'response.output_item.added'`, `'response.output_item.done'`. */
  type: 'response.output_item.added' | 'response.output_item.done';
  /** The output item's position in the response: keys items (ids are not trusted). */
  output_index: number;
  /** The output item (a message, a function call, reasoning …). */
  item: ResponseOutputItem;
}

/** `response.content_part.added` and `.done`: a part of a message item begins, or ends whole. */
export interface ResponseContentPartEvent extends ResponseEventBase {
  /** Discriminant: `'response.content_part.added'`, `'response.content_part.done'`. */
  type: 'response.content_part.added' | 'response.content_part.done';
  /** The output item's id; not trusted (some servers change it on every event). */
  item_id?: string | undefined;
  /** The output item's position in the response: keys items (ids are not trusted). */
  output_index: number;
  /** The content part's position in its item. */
  content_index: number;
  /** The content part: `output_text` or `refusal` of a message, `reasoning_text` of a reasoning item. */
  part: ResponseOutputContent | {
    /** `output_text`, `refusal` or `reasoning_text`; other types have no AG-UI form. */
    type: string & {};
    [field: string]: unknown;
  };
}

/** `response.output_text.delta` and `response.refusal.delta`: a piece of a message's text or refusal. */
export interface ResponseTextDeltaEvent extends ResponseEventBase {
  /** Discriminant: `'response.output_text.delta'`, `'response.refusal.delta'`. */
  type: 'response.output_text.delta' | 'response.refusal.delta';
  /** The output item's id; not trusted (some servers change it on every event). */
  item_id?: string | undefined;
  /** The output item's position in the response: keys items (ids are not trusted). */
  output_index: number;
  /** The content part's position in its item. */
  content_index?: number | undefined;
  /** The text (or JSON fragment) this event adds. */
  delta: string;
}

/** `response.output_text.done`: a text part's whole text. */
export interface ResponseTextDoneEvent extends ResponseEventBase {
  /** Discriminant: `'response.output_text.done'`. */
  type: 'response.output_text.done';
  /** The output item's id; not trusted (some servers change it on every event). */
  item_id?: string | undefined;
  /** The output item's position in the response: keys items (ids are not trusted). */
  output_index: number;
  /** The content part's position in its item. */
  content_index?: number | undefined;
  /** The part's whole text: what the deltas did not send is sent. */
  text: string;
}

/** `response.output_text.annotation.added`: an annotation (a citation) of a text part; no AG-UI form, dropped and reported once. */
export interface ResponseTextAnnotationAddedEvent extends ResponseEventBase {
  /** Discriminant: `'response.output_text.annotation.added'`. */
  type: 'response.output_text.annotation.added';
  /** The output item's id; not trusted (some servers change it on every event). */
  item_id?: string | undefined;
  /** The output item's position in the response. */
  output_index: number;
  /** The content part's position in its item. */
  content_index?: number | undefined;
  /** The annotation's position in its part; not read (an annotation is known by what it says). */
  annotation_index?: number | undefined;
  /** The annotation: `url_citation` (`url`, `title`), `file_citation` (`file_id`, `filename`), `container_file_citation`, `file_path` … */
  annotation: {
    /** Its type. */
    type?: string | undefined;
    [field: string]: unknown;
  };
}

/** `response.refusal.done`: a refusal part's whole text. */
export interface ResponseRefusalDoneEvent extends ResponseEventBase {
  /** Discriminant: `'response.refusal.done'`. */
  type: 'response.refusal.done';
  /** The output item's id; not trusted (some servers change it on every event). */
  item_id?: string | undefined;
  /** The output item's position in the response: keys items (ids are not trusted). */
  output_index: number;
  /** The content part's position in its item. */
  content_index?: number | undefined;
  /** The whole refusal text. */
  refusal: string;
}

/** `response.function_call_arguments.delta`: a fragment of a function call's arguments. */
export interface ResponseFunctionCallArgumentsDeltaEvent extends ResponseEventBase {
  /** Discriminant: `'response.function_call_arguments.delta'`. */
  type: 'response.function_call_arguments.delta';
  /** The output item's id; not trusted (some servers change it on every event). */
  item_id?: string | undefined;
  /** The output item's position in the response: keys items (ids are not trusted). */
  output_index: number;
  /** The text (or JSON fragment) this event adds. */
  delta: string;
}

/** `response.function_call_arguments.done`: a function call's whole arguments (newer servers add its `name`). */
export interface ResponseFunctionCallArgumentsDoneEvent extends ResponseEventBase {
  /** Discriminant: `'response.function_call_arguments.done'`. */
  type: 'response.function_call_arguments.done';
  /** The output item's id; not trusted (some servers change it on every event). */
  item_id?: string | undefined;
  /** The output item's position in the response: keys items (ids are not trusted). */
  output_index: number;
  /** The call's whole JSON arguments: what the deltas did not send is sent. */
  arguments: string;
  /** The function's name. */
  name?: string | undefined;
}

/** `response.reasoning_summary_part.added` and `.done`: a part of a reasoning summary begins, or ends whole. */
export interface ResponseReasoningSummaryPartEvent extends ResponseEventBase {
  /** Discriminant: `'response.reasoning_summary_part.added'`, `'response.reasoning_summary_part.done'`. */
  type: 'response.reasoning_summary_part.added' | 'response.reasoning_summary_part.done';
  /** The output item's id; not trusted (some servers change it on every event). */
  item_id?: string | undefined;
  /** The output item's position in the response: keys items (ids are not trusted). */
  output_index: number;
  /** The summary part's position in its reasoning item. */
  summary_index: number;
  /** The summary part. */
  part: {
    /** Discriminant: `'summary_text'`. */
    type: 'summary_text';
    /** The part's text (whole, on `.done`). */
    text: string;
  };
}

/** `response.reasoning_summary_text.delta`: a piece of a reasoning summary part. */
export interface ResponseReasoningSummaryTextDeltaEvent extends ResponseEventBase {
  /** Discriminant: `'response.reasoning_summary_text.delta'`. */
  type: 'response.reasoning_summary_text.delta';
  /** The output item's id; not trusted (some servers change it on every event). */
  item_id?: string | undefined;
  /** The output item's position in the response: keys items (ids are not trusted). */
  output_index: number;
  /** The summary part's position in its reasoning item. */
  summary_index: number;
  /** The text (or JSON fragment) this event adds. */
  delta: string;
}

/** `response.reasoning_summary_text.done`: a reasoning summary part's whole text. */
export interface ResponseReasoningSummaryTextDoneEvent extends ResponseEventBase {
  /** Discriminant: `'response.reasoning_summary_text.done'`. */
  type: 'response.reasoning_summary_text.done';
  /** The output item's id; not trusted (some servers change it on every event). */
  item_id?: string | undefined;
  /** The output item's position in the response: keys items (ids are not trusted). */
  output_index: number;
  /** The summary part's position in its reasoning item. */
  summary_index: number;
  /** The summary part's whole text. */
  text: string;
}

/** `response.reasoning_text.delta` and `.done` (open-weight models such as gpt-oss): the reasoning itself. */
export interface ResponseReasoningTextEvent extends ResponseEventBase {
  /** Discriminant: `'response.reasoning_text.delta'`, `'response.reasoning_text.done'`. */
  type: 'response.reasoning_text.delta' | 'response.reasoning_text.done';
  /** The output item's id; not trusted (some servers change it on every event). */
  item_id?: string | undefined;
  /** The output item's position in the response: keys items (ids are not trusted). */
  output_index: number;
  /** The content part's position in its item. */
  content_index?: number | undefined;
  /** The text (or JSON fragment) this event adds. */
  delta?: string | undefined;
  /** The reasoning text, whole (`.done`). */
  text?: string | undefined;
}

/** `response.custom_tool_call_input.delta` and `.done`: a custom tool call's free-text input, streamed. */
export interface ResponseCustomToolCallInputEvent extends ResponseEventBase {
  /** Discriminant: `'response.custom_tool_call_input.delta'`, `'response.custom_tool_call_input.done'`. */
  type: 'response.custom_tool_call_input.delta' | 'response.custom_tool_call_input.done';
  /** The output item's id. */
  item_id?: string | undefined;
  /** The output item's position in the response. */
  output_index: number;
  /** The text this event adds (`.delta`). */
  delta?: string | undefined;
  /** The whole input (`.done`). */
  input?: string | undefined;
}

/** `error`: the provider failed mid-stream. Some proxies nest the fields under `error`. */
export interface ResponseErrorEvent extends ResponseEventBase {
  /** Discriminant: `'error'`. */
  type: 'error';
  /** The error code (flat form). */
  code?: string | null | undefined;
  /** The error message (flat form): the RUN_ERROR message. */
  message?: string | undefined;
  /** The request parameter at fault, if any; not read. */
  param?: string | null | undefined;
  /** The error (nested form). */
  error?: {
    /** The error code. */
    code?: string | null | undefined;
    /** The error message: the RUN_ERROR message. */
    message?: string | undefined;
    /** The error's type. */
    type?: string | undefined;
  } | null | undefined;
}

/** `response.audio.transcript.delta` and `response.audio.delta`: pieces of an audio answer's transcript (its text) and of its audio (base64, dropped). */
export interface ResponseAudioDeltaEvent extends ResponseEventBase {
  /** Discriminant: `'response.audio.transcript.delta'`, `'response.audio.delta'`. */
  type: 'response.audio.transcript.delta' | 'response.audio.delta';
  /** A piece of the transcript, or of the audio's base64 bytes. */
  delta: string;
}

/** An event this adapter does not read (built-in tools' progress …): skipped. */
export interface ResponseOtherEvent extends ResponseEventBase {
  /** Any other event type: skipped. */
  type: string & {};
  [field: string]: unknown;
}

/**
 * One streamed event of the OpenAI Responses API (`stream: true`), the `data:` payload of one
 * server-sent event parsed as JSON. Azure OpenAI and compatible proxies send the same events.
 */
export type ResponseStreamEvent =
  | ResponseLifecycleEvent
  | ResponseEndEvent
  | ResponseOutputItemEvent
  | ResponseContentPartEvent
  | ResponseTextDeltaEvent
  | ResponseTextDoneEvent
  | ResponseTextAnnotationAddedEvent
  | ResponseRefusalDoneEvent
  | ResponseFunctionCallArgumentsDeltaEvent
  | ResponseFunctionCallArgumentsDoneEvent
  | ResponseReasoningSummaryPartEvent
  | ResponseReasoningSummaryTextDeltaEvent
  | ResponseReasoningSummaryTextDoneEvent
  | ResponseReasoningTextEvent
  | ResponseCustomToolCallInputEvent
  | ResponseAudioDeltaEvent
  | ResponseErrorEvent
  | ResponseOtherEvent;
