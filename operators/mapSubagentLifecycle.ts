import { EventType, type RunFinishedOutcome, type SubagentFinishedEvent, type SubagentFinishedOutcome } from '@ag-ui/core';
import type { OperatorFunction } from 'rxjs';
import { eventTypeOf, optionalString, type AgentEvent } from '../lib/protocol/agentEvent.js';
import { AguiRxError, describeValue } from '../lib/protocol/errors.js';
import { generateId as defaultGenerateId, type IdGenerator } from '../lib/protocol/generateId.js';
import { createOperator } from '../lib/protocol/createOperator.js';
import { warnDiagnostic } from '../lib/protocol/diagnostics.js';
import { entityKind } from '../lib/protocol/table.js';
import { copyWith } from '../lib/protocol/values.js';

/** Options of {@link mapSubagentLifecycle}. */
export interface MapSubagentLifecycleOptions {
  /** The subagent's name (SUBAGENT_STARTED `name`), reusable across invocations. */
  name: string;
  /** This invocation's id. Default: a fresh id per subscription, from `generateId`. */
  subagentRunId?: string | undefined;
  /** What the subagent is for, for the client to display. */
  description?: string | undefined;
  /** The tool call that spawned this subagent (agents exposed to a model as tools). */
  parentToolCallId?: string | undefined;
  /** The message that held the spawning tool call. */
  parentMessageId?: string | undefined;
  /** The subagent invocation that spawned this one, when this wrapper is itself inside a subagent. */
  parentSubagentRunId?: string | undefined;
  /** Mints `subagentRunId` when it is not given. Default: nanoid. */
  generateId?: IdGenerator | undefined;
}

// Events with no `subagentRunId` field to tag (MESSAGES_SNAPSHOT), that carry their own (SUBAGENT_*),
// or that must pass untouched (CUSTOM, RAW, and the toolkit's TOKEN_USAGE).
const untagged: ReadonlySet<string> = new Set<string>([
  EventType.MESSAGES_SNAPSHOT,
  entityKind.subagent.start,
  ...entityKind.subagent.end,
  EventType.CUSTOM,
  EventType.RAW,
  'TOKEN_USAGE',
]);

/** A field of a thrown value, or undefined when reading it throws (a getter, a revoked Proxy). */
function readField(value: unknown, field: 'message' | 'code'): unknown {
  try {
    return (value as Record<string, unknown> | null | undefined)?.[field];
  } catch {
    return undefined;
  }
}

/** SUBAGENT_ERROR `message` and `code` for a thrown value or an inner RUN_ERROR. */
function errorFields(error: unknown): { message: string; code?: string } {
  const reported = readField(error, 'message');
  const message = typeof reported === 'string' ? reported : typeof error === 'string' ? error : `Subagent failed with ${describeValue(error)}`;
  const code = readField(error, 'code');
  return {
    message: message.trim() === '' ? 'The subagent failed without an error message.' : message,
    ...(typeof code === 'string' || typeof code === 'number' ? { code: String(code) } : {}),
  };
}

/**
 * Wraps a subagent's events in one subagent invocation: SUBAGENT_STARTED first, every event
 * tagged with its `subagentRunId`, then SUBAGENT_FINISHED or SUBAGENT_ERROR.
 *
 * The wrapped stream always completes, even when the subagent fails: a failed subagent is the
 * parent's to handle, so the parent run goes on. Merge several wrapped subagents into the parent's
 * events and their text streams at once, each message in its own lane.
 *
 * ```text
 * source:  ---a---b---|
 * output:  S--A---B---(F|)        S = SUBAGENT_STARTED, A/B = a/b tagged with subagentRunId,
 *                                 F = SUBAGENT_FINISHED { outcome: { type: "success" } }
 * source:  ---a---#
 * output:  S--A---(E|)            E = SUBAGENT_ERROR { message, code }
 * ```
 *
 * Rules:
 * 1. SUBAGENT_STARTED (`subagentRunId`, `name`, and `description`, `parentToolCallId`,
 *    `parentMessageId`, `parentSubagentRunId` when given) is sent on subscribe; the id is minted
 *    per subscription when the option is absent, so that a `retry` is a new invocation.
 * 2. Every inner event gets this `subagentRunId`, except one that already has its own (a nested
 *    subagent's), SUBAGENT_* events (they name their own invocation), MESSAGES_SNAPSHOT (no such
 *    field), and CUSTOM, RAW and TOKEN_USAGE, which pass untouched.
 * 3. A nested SUBAGENT_STARTED without `parentSubagentRunId` gets this invocation as its parent.
 * 4. The inner agent's RUN_STARTED is consumed; its RUN_FINISHED ends the subagent with
 *    SUBAGENT_FINISHED (its `result` kept; an `interrupt` outcome becomes
 *    `{ type: "suspended", interruptIds }`), its RUN_ERROR with SUBAGENT_ERROR; the inner stream is
 *    then unsubscribed.
 * 5. Inner completion sends SUBAGENT_FINISHED `{ outcome: { type: "success" } }`; an inner error
 *    (or a RUN_FINISHED `cancelled`) sends SUBAGENT_ERROR `{ message, code }`. Then the output completes.
 *
 * ## Example
 *
 * ```ts
 * of<AgentEvent[]>({ type: EventType.TEXT_MESSAGE_CHUNK, messageId: 'm1', delta: 'Hi' })
 *   .pipe(mapSubagentLifecycle({ name: 'researcher', subagentRunId: 's1' }))
 *   .subscribe((event) => console.log(event.type, (event as { subagentRunId?: string }).subagentRunId));
 * // results: SUBAGENT_STARTED s1, TEXT_MESSAGE_CHUNK s1, SUBAGENT_FINISHED s1
 * ```
 *
 * @param options The subagent's name, its invocation id, and what spawned it.
 * @return A function that returns an Observable of the subagent's events, tagged and wrapped in
 * SUBAGENT_STARTED and SUBAGENT_FINISHED or SUBAGENT_ERROR, that completes whatever the subagent does.
 * @throws {AguiRxError} `INVALID_OPTIONS` at call time when `name` is not a non-empty string, or
 * `subagentRunId`, `description`, `parentToolCallId`, `parentMessageId` or `parentSubagentRunId` is
 * given and not a string (or `subagentRunId` is empty).
 */
export function mapSubagentLifecycle(options: MapSubagentLifecycleOptions): OperatorFunction<AgentEvent, AgentEvent> {
  const { name, subagentRunId, description, parentToolCallId, parentMessageId, parentSubagentRunId } = options ?? ({} as MapSubagentLifecycleOptions);
  const generateId = options?.generateId ?? defaultGenerateId;
  if (typeof name !== 'string' || name === '') {
    throw new AguiRxError('INVALID_OPTIONS', `mapSubagentLifecycle needs a non-empty string 'name' option (got ${describeValue(name)}). Name the subagent, e.g. { name: 'researcher' }.`);
  }
  const optional = { subagentRunId, description, parentToolCallId, parentMessageId, parentSubagentRunId };
  for (const [field, value] of Object.entries(optional)) {
    if (value !== undefined && (typeof value !== 'string' || (field === 'subagentRunId' && value === ''))) {
      throw new AguiRxError('INVALID_OPTIONS', `mapSubagentLifecycle '${field}' must be a ${field === 'subagentRunId' ? 'non-empty ' : ''}string (got ${describeValue(value)}). Omit it to leave it out.`);
    }
  }
  return createOperator<AgentEvent, AgentEvent>((subscriber, context) => {
    // One invocation per subscription: a retry or a second subscriber is a new subagent run.
    const id = subagentRunId ?? generateId();
    const started: Record<string, unknown> = { type: EventType.SUBAGENT_STARTED, subagentRunId: id, name };
    for (const [field, value] of Object.entries({ description, parentToolCallId, parentMessageId, parentSubagentRunId })) {
      if (value !== undefined) started[field] = value;
    }
    subscriber.next(started as AgentEvent);

    const end = (closer: Record<string, unknown>) => {
      subscriber.next(closer as AgentEvent);
      context.unsubscribeSource();
      subscriber.complete();
    };
    const finish = (outcome: SubagentFinishedOutcome, result?: unknown) => {
      const event: Partial<SubagentFinishedEvent> = { type: EventType.SUBAGENT_FINISHED, subagentRunId: id, outcome };
      if (result !== undefined) event.result = result;
      end(event);
    };
    const fail = (error: unknown) => end({ type: EventType.SUBAGENT_ERROR, subagentRunId: id, ...errorFields(error) });

    const onRunFinished = (event: Record<string, unknown>) => {
      const outcome = event.outcome as RunFinishedOutcome | undefined;
      if (outcome?.type === 'cancelled') return fail({ message: 'The subagent run was cancelled.', code: 'CANCELLED' });
      if (outcome?.type === 'interrupt') {
        const interruptIds = Array.isArray(outcome.interrupts) ? outcome.interrupts.map((interrupt) => interrupt?.id).filter((x): x is string => typeof x === 'string') : [];
        return finish({ type: 'suspended', interruptIds }, event.result);
      }
      finish({ type: 'success' }, event.result);
    };

    return {
      next(event) {
        const type = eventTypeOf(event);
        const fields = event as unknown as Record<string, unknown>;
        switch (type) {
          case EventType.RUN_STARTED:
            return;
          case EventType.RUN_FINISHED:
            return onRunFinished(fields);
          case EventType.RUN_ERROR:
            return fail(fields);
          case EventType.SUBAGENT_STARTED:
            if (fields.parentSubagentRunId === undefined) return subscriber.next(copyWith(fields, { parentSubagentRunId: id }) as unknown as AgentEvent);
            return subscriber.next(event);
          default:
            // A nested subagent's event keeps its own lane.
            if (untagged.has(type) || optionalString(fields, 'subagentRunId') !== undefined) return subscriber.next(event);
            subscriber.next(copyWith(fields, { subagentRunId: id }) as unknown as AgentEvent);
        }
      },
      complete: () => finish({ type: 'success' }),
      error: fail,
    };
  }, { readsAgentEvents: warnDiagnostic });
}
