import { EventType, type Interrupt, type Metadata, type ResumeEntry, type RunAgentInput } from '@ag-ui/core';
import type { AgentRunFinishedEvent } from '../protocol/agentEvent.js';
import { AguiRxError, describeValue } from '../protocol/errors.js';

/**
 * The AgentEvent that ends a run to ask for approval or input: an upstream RUN_FINISHED with
 * `outcome: { type: "interrupt", interrupts }`. Under `mapRunLifecycle` (or `toAgui`) everything
 * still open is closed first, and the client's `onRunFinishedEvent` gets outcome `interrupt`.
 *
 * ## Example
 *
 * ```ts
 * const asked = interrupt(approvalInterrupt({ toolCallId: 'call-1', message: 'Delete 3 files?' }));
 * console.log(JSON.stringify(asked.outcome));
 * // results: {"type":"interrupt","interrupts":[{"id":"approve-call-1","reason":"tool_approval","toolCallId":"call-1","message":"Delete 3 files?"}]}
 * ```
 *
 * @param interrupts What the run waits for: at least one, each with its own `id`.
 * @return The RUN_FINISHED event to emit as the agent's last event.
 * @throws {AguiRxError} `INVALID_INTERRUPT` when there is no interrupt, or an id is empty or repeated.
 */
export function interrupt(interrupts: Interrupt[] | Interrupt): AgentRunFinishedEvent {
  const list = Array.isArray(interrupts) ? interrupts : [interrupts];
  if (list.length === 0) {
    throw new AguiRxError('INVALID_INTERRUPT', 'interrupt() needs at least one Interrupt: a run that stops to ask must say what it waits for. Finish normally when there is nothing to ask.');
  }
  const ids = new Set<string>();
  for (const entry of list) {
    const id = (entry as Partial<Interrupt> | null)?.id;
    if (typeof id !== 'string' || id === '') {
      throw new AguiRxError('INVALID_INTERRUPT', `Each interrupt needs a non-empty string 'id' (got ${describeValue(id)}); the next run's resume entries answer it by that id.`);
    }
    if (ids.has(id)) {
      throw new AguiRxError('INVALID_INTERRUPT', `Interrupt id '${id}' is used twice in one run. Give each interrupt its own id, so that each resume entry answers exactly one.`);
    }
    ids.add(id);
  }
  return { type: EventType.RUN_FINISHED, outcome: { type: 'interrupt', interrupts: list } };
}

/** Options of {@link approvalInterrupt}. */
export interface ApprovalInterruptOptions {
  /** The tool call awaiting approval. */
  toolCallId: string;
  /** The prompt shown to whoever approves. */
  message?: string | undefined;
  /** The interrupt's id. Default: `approve-<toolCallId>`. */
  id?: string | undefined;
  /** Why the run stopped. Default: `tool_approval`. */
  reason?: string | undefined;
  /** JSON Schema of the expected answer (an edited argument list, say). */
  responseSchema?: Record<string, unknown> | undefined;
  /** When the approval stops being answerable (ISO 8601). */
  expiresAt?: string | undefined;
  /** Extra information for the client. */
  metadata?: Metadata | undefined;
}

/**
 * An Interrupt asking to approve a tool call before it runs: `reason: "tool_approval"`, with its
 * `toolCallId`. Optional fields are left out when not given.
 *
 * @param options The tool call, the prompt, and the interrupt's id.
 * @return The Interrupt, for {@link interrupt}.
 */
export function approvalInterrupt(options: ApprovalInterruptOptions): Interrupt {
  const { toolCallId, id, reason, ...rest } = options;
  const result: Interrupt = { id: id ?? `approve-${toolCallId}`, reason: reason ?? 'tool_approval', toolCallId };
  for (const [key, value] of Object.entries(rest)) if (value !== undefined) (result as Record<string, unknown>)[key] = value;
  return result;
}

/** A resume entry with the interrupt it answers. */
export interface ResumeAnswer {
  /** The client's `RunAgentInput.resume` entry for it (`status`, `payload`). */
  entry: ResumeEntry;
  /** The pending interrupt this entry answers. */
  interrupt: Interrupt;
}

/** What {@link matchResume} found. */
export interface ResumeMatch {
  /** Each `input.resume` entry, in order, with the interrupt it answers. */
  answers: ResumeAnswer[];
  /** The pending interrupts no entry answers, in order. */
  unanswered: Interrupt[];
}

/**
 * Matches each `RunAgentInput.resume` entry to the pending interrupt it answers (by `interruptId`).
 *
 * ## Example
 *
 * ```ts
 * const pending = [approvalInterrupt({ toolCallId: 'call-1' }), approvalInterrupt({ toolCallId: 'call-2' })];
 * const input = { threadId: 't1', runId: 'r2', messages: [], tools: [], context: [], state: {}, resume: [{ interruptId: 'approve-call-1', status: 'resolved' as const, payload: { approved: true } }] };
 * const { answers, unanswered } = matchResume(input, pending);
 * console.log(answers.map((a) => a.interrupt.toolCallId), unanswered.map((i) => i.id));
 * // results: [ 'call-1' ] [ 'approve-call-2' ]
 * ```
 *
 * @param input The new run's input.
 * @param pending The interrupts the previous run ended with (its RUN_FINISHED `outcome.interrupts`).
 * @param now The time `expiresAt` is compared with.
 * @return The answers, and the interrupts left unanswered.
 * @throws {AguiRxError} `INVALID_RESUME` for an entry whose interrupt id is not pending, is answered
 * twice, or has expired (`expiresAt` at or before `now`).
 */
export function matchResume(input: Pick<RunAgentInput, 'resume'>, pending: readonly Interrupt[], now: Date = new Date()): ResumeMatch {
  const byId = new Map(pending.map((entry) => [entry.id, entry]));
  const answered = new Set<string>();
  const answers = (input.resume ?? []).map((entry): ResumeAnswer => {
    const found = byId.get(entry.interruptId);
    if (found === undefined) {
      const known = pending.length === 0 ? 'none is pending' : `pending: ${pending.map((p) => `'${p.id}'`).join(', ')}`;
      throw new AguiRxError('INVALID_RESUME', `Resume entry answers interrupt '${entry.interruptId}', which is not pending (${known}). Answer only the interrupts the previous run ended with.`);
    }
    if (answered.has(found.id)) {
      throw new AguiRxError('INVALID_RESUME', `Interrupt '${found.id}' is answered by two resume entries. Send one entry per interrupt.`);
    }
    if (found.expiresAt !== undefined && new Date(found.expiresAt) <= now) {
      throw new AguiRxError('INVALID_RESUME', `Interrupt '${found.id}' expired at ${found.expiresAt}, so it can no longer be answered. Start a new run without resuming it.`);
    }
    answered.add(found.id);
    return { entry, interrupt: found };
  });
  return { answers, unanswered: pending.filter((entry) => !answered.has(entry.id)) };
}
