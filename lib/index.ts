/**
 * agui-rx: RxJS operators that turn any agent's event Observable into a well-formed AG-UI 1.0
 * event stream. This is the package root (`import … from 'agui-rx'`).
 *
 * @packageDocumentation
 */
export * from '../operators/index.js';
export {
  ToolkitEventType,
  isAgentEvent,
  isAgentEventType,
  isTerminalEvent,
  isToolkitEvent,
  type AgentEvent,
  type AgentRunFinishedEvent,
  type AgentRunStartedEvent,
  type AgentToolCallResultEvent,
  type TerminalEventType,
  type TokenUsageEvent,
  type ToolkitEvent,
  type WithTypeString,
} from './agentEvent.js';
export { warnDiagnostic, type AguiDiagnostic, type DiagnosticHandler } from './diagnostics.js';
export { AguiRxError } from './errors.js';
export { approvalInterrupt, interrupt, matchResume, type ApprovalInterruptOptions, type ResumeAnswer, type ResumeMatch } from './interrupts.js';
export { clientToolNames, isClientTool, toolResultsFromInput, type InputToolResult, type ToolNames } from './clientTools.js';
export { a2uiUserAction, type A2uiUserActionPayload, type A2uiV08ActionMessage, type A2uiV1ActionMessage } from './a2uiUserAction.js';
export { createAguiVerifier, type AguiVerifier, type AguiViolation } from './verifier.js';
export { parseSSE, type ParseSSEOptions, type SSEMessage } from './adapters/parseSSE.js';
export { createAguiFetchHandler, createAguiHandler, type AguiAgent, type AguiHandlerOptions } from './createAguiHandler.js';
export { encodeSSE, type EncodeSSEOptions } from './encodeSSE.js';
export { HEARTBEAT, type FrameOptions } from './frames.js';
export { sendSSE, type SendSSEOptions } from './sendSSE.js';
export { toSSEResponse, toSSEStream, type ToSSEResponseInit, type ToSSEStreamOptions } from './toSSEStream.js';
export { generateId, type IdGenerator } from './generateId.js';
export { trackOpenEntities, type CloseReason, type OpenEntities, type SequenceProblem } from './openEntities.js';
