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
export {
  fromOpenAIChatCompletions,
  type ChatCompletionChunk,
  type ChatCompletionChunkChoice,
  type ChatCompletionChunkDelta,
  type ChatCompletionChunkToolCall,
  type ChatCompletionUsage,
  type FromOpenAIChatCompletionsOptions,
} from './fromOpenAIChatCompletions.js';
export { parseSSE, type ParseSSEOptions, type SSEMessage } from '../transports/parseSSE.js';
export {
  fromAnthropicMessages,
  type AnthropicContentBlock,
  type AnthropicContentBlockDelta,
  type AnthropicContentBlockDeltaEvent,
  type AnthropicContentBlockStartEvent,
  type AnthropicContentBlockStopEvent,
  type AnthropicErrorEvent,
  type AnthropicMessageDeltaEvent,
  type AnthropicMessageStartEvent,
  type AnthropicMessageStopEvent,
  type AnthropicPingEvent,
  type AnthropicStopReason,
  type AnthropicStreamEvent,
  type AnthropicToolResultBlock,
  type AnthropicUsage,
  type FromAnthropicMessagesOptions,
} from './fromAnthropicMessages.js';
export {
  fromAiSdkStream,
  type AiSdkErrorPart,
  type AiSdkFlatUsage,
  type AiSdkIgnoredPart,
  type AiSdkLifecyclePart,
  type AiSdkNestedUsage,
  type AiSdkResponseMetadataPart,
  type AiSdkStreamPart,
  type AiSdkTextPart,
  type AiSdkToolApprovalRequestPart,
  type AiSdkToolCallPart,
  type AiSdkToolErrorPart,
  type AiSdkToolInputPart,
  type AiSdkToolResultPart,
  type AiSdkUsage,
  type FromAiSdkStreamOptions,
} from './fromAiSdkStream.js';
export {
  fromOpenAIResponses,
  type FromOpenAIResponsesOptions,
  type ResponseContentPartEvent,
  type ResponseEndEvent,
  type ResponseErrorEvent,
  type ResponseFunctionCallArgumentsDeltaEvent,
  type ResponseFunctionCallArgumentsDoneEvent,
  type ResponseFunctionToolCall,
  type ResponseLifecycleEvent,
  type ResponseObject,
  type ResponseOtherEvent,
  type ResponseOutputContent,
  type ResponseOutputItem,
  type ResponseOutputItemEvent,
  type ResponseOutputMessage,
  type ResponseReasoningItem,
  type ResponseReasoningSummaryPartEvent,
  type ResponseReasoningSummaryTextDeltaEvent,
  type ResponseReasoningSummaryTextDoneEvent,
  type ResponseReasoningTextEvent,
  type ResponseRefusalDoneEvent,
  type ResponseStreamEvent,
  type ResponseTextDeltaEvent,
  type ResponseTextDoneEvent,
  type ResponseUsage,
} from './fromOpenAIResponses.js';
export {
  fromLangChainStreamEvents,
  type FromLangChainStreamEventsOptions,
  type LangChainContentBlock,
  type LangChainMessageFields,
  type LangChainMessageLike,
  type LangChainRunMetadata,
  type LangChainSerializedMessage,
  type LangChainStreamEvent,
  type LangChainStreamEventName,
  type LangChainToolCallChunk,
  type LangChainUsageMetadata,
} from './fromLangChainStreamEvents.js';
export { fromLangGraphStream, type FromLangGraphStreamOptions, type LangGraphMessageMetadata, type LangGraphStreamPart } from './fromLangGraphStream.js';
