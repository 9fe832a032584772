/**
 * Converters: AG-UI messages and tools into the request formats of model providers, and
 * provider tool calls back into AG-UI tool calls.
 *
 * @packageDocumentation
 */
export { fromAnthropicToolUses, type AnthropicResponseBlock } from './fromAnthropicToolUses.js';
export { fromOpenAIToolCalls, type OpenAIToolCallLike } from './fromOpenAIToolCalls.js';
export { splitSystemMessages, type SplitSystemMessages } from './splitSystemMessages.js';
export {
  toAnthropicMessages,
  type AnthropicContentBlockParam,
  type AnthropicDocumentBlock,
  type AnthropicImageBlock,
  type AnthropicMessageParam,
  type AnthropicRedactedThinkingBlock,
  type AnthropicRequestMessages,
  type AnthropicServerToolResultBlock,
  type AnthropicServerToolUseBlock,
  type AnthropicSource,
  type AnthropicTextBlock,
  type AnthropicThinkingBlock,
  type AnthropicToolResultBlockParam,
  type AnthropicToolUseBlock,
  type ToAnthropicMessagesOptions,
} from './toAnthropicMessages.js';
export { toAnthropicTools, type AnthropicTool } from './toAnthropicTools.js';
export {
  toOpenAIChatMessages,
  type OpenAIChatAudioPart,
  type OpenAIChatContentPart,
  type OpenAIChatCustomToolCall,
  type OpenAIChatFilePart,
  type OpenAIChatFunctionToolCall,
  type OpenAIChatImagePart,
  type OpenAIChatMessage,
  type OpenAIChatTextPart,
  type OpenAIChatToolCall,
  type OpenRouterEncryptedReasoning,
  type ToOpenAIChatMessagesOptions,
} from './toOpenAIChatMessages.js';
export {
  toOpenAIResponsesInput,
  type ResponsesInputAudio,
  type ResponsesInputContent,
  type ResponsesInputFile,
  type ResponsesInputImage,
  type ResponsesInputItem,
  type ResponsesInputText,
  type ResponsesRequestInput,
  type ToOpenAIResponsesInputOptions,
} from './toOpenAIResponsesInput.js';
export { toOpenAIResponsesTools, type ResponsesFunctionTool } from './toOpenAIResponsesTools.js';
export { toOpenAITools, type OpenAIChatTool } from './toOpenAITools.js';
export type { ConverterOptions, ConverterWarning } from './converterInternals.js';
