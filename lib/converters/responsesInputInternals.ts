import type { ResumeEntry, ToolCall } from '@ag-ui/core';
import { AguiRxError, describeValue } from '../protocol/errors.js';

/**
 * How `toOpenAIResponsesInput` sends back each kind of tool call, told by the mark
 * `fromOpenAIResponses` puts on a call made by a Responses tool item (`metadata: { openai: { type,
 * server_label? } }`). Not part of the public API.
 */

/** What a call is to the Responses API: a function, a custom (freeform) tool, a tool OpenAI ran itself, or an MCP approval request. */
export type ResponsesCallKind = 'function' | 'custom' | 'server' | 'approval';

/** The item types of the tools OpenAI runs itself: the item carries the call and its result. */
const serverItemTypes: ReadonlySet<unknown> = new Set(['web_search_call', 'file_search_call', 'mcp_call', 'code_interpreter_call']);

/** A call's `metadata.openai`, when it is an object. */
export function openAIMark(call: ToolCall): Record<string, unknown> | undefined {
  const mark = (call.metadata as { openai?: unknown } | undefined)?.openai;
  return typeof mark === 'object' && mark !== null && !Array.isArray(mark) ? (mark as Record<string, unknown>) : undefined;
}

/** The kind of a call: by its mark's `type`; an unmarked call (or another client tool item's) is a function call. */
export function callKind(call: ToolCall): ResponsesCallKind {
  const type = openAIMark(call)?.type;
  if (type === 'custom_tool_call') return 'custom';
  if (type === 'mcp_approval_request') return 'approval';
  return serverItemTypes.has(type) ? 'server' : 'function';
}

/** A custom tool call's input text: the `input` of the `{"input": "<text>"}` arguments `fromOpenAIResponses` gives it; `undefined` when they are not that. */
export function customInput(args: string): string | undefined {
  try {
    const parsed: unknown = JSON.parse(args);
    const input = typeof parsed === 'object' && parsed !== null ? (parsed as { input?: unknown }).input : undefined;
    return typeof input === 'string' ? input : undefined;
  } catch {
    return undefined;
  }
}

/** The user's answer to an MCP approval request. */
export interface ApprovalAnswer {
  approve: boolean;
  reason?: string | undefined;
}

/**
 * The run's `resume` entries, checked: an array of objects each with a string `interruptId`.
 *
 * @throws {AguiRxError} `INVALID_ARGUMENT` naming what is wrong and where.
 */
export function assertResume(resume: unknown): asserts resume is readonly ResumeEntry[] | undefined {
  if (resume === undefined) return;
  const fail = (detail: string) => new AguiRxError('INVALID_ARGUMENT', `toOpenAIResponsesInput's options.resume ${detail}: pass the run's RunAgentInput.resume (an array of { interruptId, status, payload? }), or leave it out.`);
  if (!Array.isArray(resume)) throw fail(`is ${describeValue(resume)}, not an array`);
  Array.from(resume as unknown[]).forEach((entry, index) => {
    if (typeof entry !== 'object' || entry === null) throw fail(`[${index}] is ${describeValue(entry)}, not a resume entry`);
    const id = (entry as { interruptId?: unknown }).interruptId;
    if (typeof id !== 'string') throw fail(`[${index}].interruptId is ${describeValue(id)}, not the id of an interrupt (a string)`);
  });
}

/**
 * The answer a resume entry gives to an approval request: `status: 'resolved'` with payload
 * `{ approved: boolean, reason?: string }` (or a bare boolean) approves or declines; `cancelled`
 * declines (a call nobody approved must not run), with the payload's `reason` when it has one.
 *
 * @throws {AguiRxError} `INVALID_RESUME` for a resolved entry whose payload says neither, or a status that is neither.
 */
export function approvalAnswer(entry: ResumeEntry, requestId: string): ApprovalAnswer {
  const payload: unknown = entry.payload;
  const reasonOf = (value: unknown) => {
    const reason = typeof value === 'object' && value !== null ? (value as { reason?: unknown }).reason : undefined;
    return typeof reason === 'string' && reason !== '' ? { reason } : {};
  };
  if (entry.status === 'cancelled') return { approve: false, ...reasonOf(payload) };
  if (entry.status !== 'resolved') {
    throw new AguiRxError(
      'INVALID_RESUME',
      `toOpenAIResponsesInput cannot answer MCP approval request '${requestId}': its resume entry's status is ${describeValue(entry.status)}, but it must be 'resolved' (answered: payload { approved }) or 'cancelled' (declined).`,
    );
  }
  if (typeof payload === 'boolean') return { approve: payload };
  const approved = typeof payload === 'object' && payload !== null ? (payload as { approved?: unknown }).approved : undefined;
  if (typeof approved === 'boolean') return { approve: approved, ...reasonOf(payload) };
  throw new AguiRxError(
    'INVALID_RESUME',
    `toOpenAIResponsesInput cannot answer MCP approval request '${requestId}': its resume entry's payload is ${describeValue(payload)}, but it must say whether the call is approved: { approved: true } or { approved: false, reason: '…' } (or a bare boolean).`,
  );
}
