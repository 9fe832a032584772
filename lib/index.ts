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
} from './protocol/agentEvent.js';
export { warnDiagnostic, type AguiDiagnostic, type DiagnosticHandler } from './protocol/diagnostics.js';
export { AguiRxError } from './protocol/errors.js';
export { decodeState, type InferSchemaOutput, type InvalidStateError, type StandardSchemaIssue, type StandardSchemaResult, type StandardSchemaV1, type StateIssue } from './state/decodeState.js';
export { approvalInterrupt, interrupt, matchResume, type ApprovalInterruptOptions, type ResumeAnswer, type ResumeMatch } from './interaction/interrupts.js';
export { clientToolNames, isClientTool, toolResultsFromInput, type InputToolResult, type ToolNames } from './interaction/clientTools.js';
export { a2uiUserAction, type A2uiUserActionPayload, type A2uiV08ActionMessage, type A2uiV1ActionMessage } from './interaction/a2uiUserAction.js';
export { aguiRuleSeverity, createAguiVerifier, type AguiSeverity, type AguiVerifier, type AguiVerifierOptions, type AguiViolation } from './tracking/verifier.js';
export { parseSSE, type ParseSSEOptions, type SSEMessage } from './transports/parseSSE.js';
export { createAguiFetchHandler, createAguiHandler, type AgentContext, type AguiAgent, type AguiHandlerOptions, type AnyAguiAgent, type HandlerErrorReport, type HandlerOptionsArgument } from './transports/createAguiHandler.js';
export type { CorsOptions } from './transports/cors.js';
export { INTERNAL_ERROR, type ErrorMessagePolicy, type RunErrorHandler, type RunErrorReport } from './protocol/runErrors.js';
export type { AgentResult } from './transports/fromAgentResult.js';
export { encodeSSE, type EncodeSSEOptions } from './transports/encodeSSE.js';
export { HEARTBEAT, type FrameOptions } from './transports/frames.js';
export { DEFAULT_MAX_BUFFERED_BYTES, DEFAULT_STALL_TIMEOUT_MS, SEND_BUFFER_FULL, SLOW_CLIENT, createDemandGate, type DemandGate, type FlowOptions } from './transports/flowControl.js';
export { sendSSE, type SendSSEOptions } from './transports/sendSSE.js';
export { toSSEResponse, toSSEStream, type ToSSEResponseInit, type ToSSEStreamOptions } from './transports/toSSEStream.js';
export { generateId, type IdGenerator } from './protocol/generateId.js';
export { createRunBroker, type AuthorizeRequest, type BrokerAction, type BrokerRequest, type BrokerActivity, type RunBroker, type RunBrokerOptions } from './broker/createRunBroker.js';
export { createMemoryRunStore, type MemoryRunStoreOptions } from './broker/createMemoryRunStore.js';
export type { RunLogEntry, RunRecord, RunRef, RunStatus, RunStore } from './broker/runStore.js';
export type { BrokerAccess, BrokerFrame, RunBrokerApi, RunStopStatus } from './transports/brokerRoutes.js';
