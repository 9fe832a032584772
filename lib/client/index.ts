/**
 * agui-rx/client: what runs in the client's process (`import … from 'agui-rx/client'`).
 *
 * - {@link ResumableHttpAgent}: the official `HttpAgent`, with runs that survive a dropped
 *   connection (resumed by SSE `Last-Event-ID` from a server with a run broker) and `connectAgent()`.
 * - {@link InProcessAgent}: an `AbstractAgent` whose runs are an agui-rx agent piped through
 *   `toAgui` in the same process (CopilotKit's `CopilotRuntime({ agents })`, tests, scripts).
 *
 * `@ag-ui/client` is an optional peer dependency of agui-rx, needed by this entry only
 * (`npm install @ag-ui/client`); the package root never loads it.
 *
 * @packageDocumentation
 */
export { InProcessAgent, type InProcessAgentConfig } from './InProcessAgent.js';
export { ResumableHttpAgent, ResumeError, type ReconnectingInfo, type ResumableHttpAgentConfig, type ResumeOptions } from './ResumableHttpAgent.js';
