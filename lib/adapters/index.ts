/**
 * agui-rx/adapters: operators that read a model provider's streaming format and turn it into
 * agent events for `toAgui` (`import … from 'agui-rx/adapters'`).
 *
 * ```ts
 * from(response.body as unknown as AsyncIterable<Uint8Array>).pipe(
 *   parseSSE(),
 *   map((message) => (message.data === '[DONE]' ? '[DONE]' : JSON.parse(message.data))),
 *   fromOpenAIChatCompletions(),
 *   toAgui({ threadId, runId }),
 * );
 * ```
 *
 * @packageDocumentation
 */
export { fromOpenAIChatCompletions, type FromOpenAIChatCompletionsOptions } from './fromOpenAIChatCompletions.js';
export type {
  ChatCompletionChunk,
  ChatCompletionChunkAudio,
  ChatCompletionChunkChoice,
  ChatCompletionChunkDelta,
  ChatCompletionChunkToolCall,
  ChatCompletionContentPart,
  ChatCompletionReasoningDetail,
  ChatCompletionUsage,
} from './wire/openAIChatCompletions.js';
export { parseSSE, type ParseSSEOptions, type SSEMessage } from '../transports/parseSSE.js';
export { fromAnthropicMessages, type FromAnthropicMessagesOptions } from './fromAnthropicMessages.js';
export type {
  AnthropicContentBlock,
  AnthropicContentBlockDelta,
  AnthropicContentBlockDeltaEvent,
  AnthropicContentBlockStartEvent,
  AnthropicContentBlockStopEvent,
  AnthropicErrorEvent,
  AnthropicMessageDeltaEvent,
  AnthropicMessageStartEvent,
  AnthropicMessageStopEvent,
  AnthropicPingEvent,
  AnthropicStopReason,
  AnthropicStreamEvent,
  AnthropicToolResultBlock,
  AnthropicUsage,
} from './wire/anthropicMessages.js';
export { fromAiSdkStream, type FromAiSdkStreamOptions } from './fromAiSdkStream.js';
export type {
  AiSdkErrorPart,
  AiSdkFlatUsage,
  AiSdkIgnoredPart,
  AiSdkLifecyclePart,
  AiSdkNestedUsage,
  AiSdkResponseMetadataPart,
  AiSdkStreamPart,
  AiSdkTextPart,
  AiSdkToolApprovalRequestPart,
  AiSdkToolCallPart,
  AiSdkToolErrorPart,
  AiSdkToolInputPart,
  AiSdkToolResultPart,
  AiSdkUsage,
} from './wire/aiSdk.js';
export { fromOpenAIResponses, type FromOpenAIResponsesOptions } from './fromOpenAIResponses.js';
export type {
  ResponseAudioDeltaEvent,
  ResponseContentPartEvent,
  ResponseCustomToolCallInputEvent,
  ResponseEndEvent,
  ResponseErrorEvent,
  ResponseFunctionCallArgumentsDeltaEvent,
  ResponseFunctionCallArgumentsDoneEvent,
  ResponseFunctionToolCall,
  ResponseLifecycleEvent,
  ResponseObject,
  ResponseOtherEvent,
  ResponseOutputContent,
  ResponseOutputItem,
  ResponseOutputItemEvent,
  ResponseOutputMessage,
  ResponseReasoningItem,
  ResponseReasoningSummaryPartEvent,
  ResponseReasoningSummaryTextDeltaEvent,
  ResponseReasoningSummaryTextDoneEvent,
  ResponseReasoningTextEvent,
  ResponseRefusalDoneEvent,
  ResponseStreamEvent,
  ResponseTextDeltaEvent,
  ResponseTextDoneEvent,
  ResponseUsage,
} from './wire/openAIResponses.js';
export { fromLangChainStreamEvents, type FromLangChainStreamEventsOptions } from './fromLangChainStreamEvents.js';
export type {
  LangChainContentBlock,
  LangChainMessageFields,
  LangChainMessageLike,
  LangChainRunMetadata,
  LangChainSerializedMessage,
  LangChainStreamEvent,
  LangChainStreamEventName,
  LangChainToolCallChunk,
  LangChainUsageMetadata,
} from './wire/langChain.js';
export { fromLangGraphStream, type FromLangGraphStreamOptions } from './fromLangGraphStream.js';
export type { LangGraphMessageMetadata, LangGraphStreamPart } from './wire/langGraph.js';
