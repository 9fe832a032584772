import type { LangChainMessageLike } from './langChain.js';

/**
 * LangGraph JS `graph.stream()` items (`streamMode: ["values", "messages"]`, or `"messages"` alone): what `fromLangGraphStream` reads.
 * Types only: the adapter checks every field it reads, so these document the format, they do not vouch for it.
 */

/** The metadata LangGraph sends beside each message in `"messages"` mode. */
export interface LangGraphMessageMetadata {
  /** The node that produced the message. */
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
 * One item of LangGraph JS `graph.stream(input, { streamMode: ['values', 'messages'] })`:
 * `['messages', [messageChunk, metadata]]` for each message chunk (and each whole message a node
 * returns), `['values', state]` after each step. With `subgraphs: true` the namespace comes first:
 * `[namespace, mode, payload]` (`[]` for the root graph). `updates` items are read for a paused
 * graph's `__interrupt__`, `custom` items become CUSTOM events, other modes (`debug` …) are
 * ignored with a diagnostic. `streamMode: 'messages'` alone yields the bare
 * `[messageChunk, metadata]` pair (with `subgraphs: true`, `[namespace, [messageChunk, metadata]]`).
 */
export type LangGraphStreamPart =
  | ['messages', [LangChainMessageLike, LangGraphMessageMetadata?]]
  | ['values', Record<string, unknown>]
  | [string, unknown]
  | [string[], 'messages', [LangChainMessageLike, LangGraphMessageMetadata?]]
  | [string[], 'values', Record<string, unknown>]
  | [string[], string, unknown]
  | [LangChainMessageLike, LangGraphMessageMetadata?]
  | [string[], [LangChainMessageLike, LangGraphMessageMetadata?]];
