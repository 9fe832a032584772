import { EventType } from '@ag-ui/core';
import { ContentPartSchema, JsonPatchOperationSchema, PartSourceSchema, RunFinishedOutcomeSchema, SubagentFinishedOutcomeSchema } from '@ag-ui/core/schemas';
import type { DiagnosticHandler } from './diagnostics.js';
import { copyWithout } from './values.js';

/**
 * Unrecognised union members: what the AG-UI specification tolerates in an otherwise valid event.
 *
 * Source: AG-UI specification 1.1, "Processing Model" (docs/spec/1.1/basic/processing): "A union
 * member the implementation does not recognise — a content part of a new kind, an outcome named
 * after it shipped — MUST NOT abort the run"; the consumer strips it with a warning: in an
 * optional position the field goes, in a required one the value containing it, in a list the
 * element. A malformed known value (a discriminator that is not a string, say) stays fatal.
 */

/** The kinds of union member an event may carry, each named after its verifier rule. */
export type UnrecognisedKind = 'unknown-outcome' | 'unknown-content-part' | 'unknown-patch-op';

/** One member removed from an event by {@link stripUnrecognised}. */
export interface UnrecognisedMember {
  /** Which union it was a member of. */
  kind: UnrecognisedKind;
  /** Where it was in the event, as a JSON Pointer (`/outcome`, `/messages/0/content/1`, `/delta/2`). */
  path: string;
  /** Its discriminator's value: the outcome or part `type`, or the patch `op`. */
  name: string;
  /** What removing it means, and the specification page the rule comes from, for a diagnostic. */
  message: string;
}

/** The discriminator values a union of @ag-ui/core/schemas knows, read off the schema itself. */
function knownValues(options: readonly { shape: Record<string, unknown> }[], discriminator: string): ReadonlySet<unknown> {
  return new Set(options.map((option) => (option.shape[discriminator] as { value: unknown }).value));
}

const outcomeTypes = knownValues(RunFinishedOutcomeSchema.options, 'type');
const subagentOutcomeTypes = knownValues(SubagentFinishedOutcomeSchema.options, 'type');
const partTypes = knownValues(ContentPartSchema.options, 'type');
const sourceTypes = knownValues(PartSourceSchema.options, 'type');
const patchOps = knownValues(JsonPatchOperationSchema.options, 'op');

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
/** A discriminator that is a string the union does not know: unrecognised (any other value is malformed, and left for the schema to reject). */
const unknownName = (value: unknown, known: ReadonlySet<unknown>): value is string => typeof value === 'string' && !known.has(value);

const runsAndSteps = 'AG-UI spec 1.1, Runs and Steps: an outcome a consumer does not recognise is stripped, and an absent outcome means success';
const subagents = 'AG-UI spec 1.1, Subagents and Processing Model: an unrecognised outcome is stripped, and an absent outcome means success';
const processingList = 'AG-UI spec 1.1, Processing Model: an unrecognisable element of a list is dropped and the list survives';
const patchRule = 'AG-UI spec 1.1, Snapshots and Deltas: an operation whose op RFC 6902 does not define is dropped from the patch with a warning, the others apply';

/**
 * Content parts of one message content array without the unrecognised ones: parts of an unknown
 * `type`, and media parts whose `source` is of an unknown `type` (a required position: the part
 * goes whole). `undefined` when none is unrecognised.
 */
function recognisedParts(parts: readonly unknown[], at: string, removed: UnrecognisedMember[]): unknown[] | undefined {
  let kept: unknown[] | undefined;
  parts.forEach((part, index) => {
    const type = isRecord(part) ? part.type : undefined;
    const sourceType = isRecord(part) && isRecord(part.source) ? part.source.type : undefined;
    let member: UnrecognisedMember | undefined;
    if (unknownName(type, partTypes)) {
      member = { kind: 'unknown-content-part', path: `${at}/${index}`, name: type, message: `a content part of type '${type}', which AG-UI does not describe, was dropped and the message kept (${processingList})` };
    } else if (type !== 'text' && partTypes.has(type) && unknownName(sourceType, sourceTypes)) {
      member = { kind: 'unknown-content-part', path: `${at}/${index}/source`, name: sourceType, message: `a ${String(type)} part whose source is of type '${sourceType}', which AG-UI does not describe, was dropped whole and the message kept (AG-UI spec 1.1, Processing Model: an unrecognisable value in a required position takes the value containing it along)` };
    }
    if (member === undefined) {
      kept?.push(part);
      return;
    }
    removed.push(member);
    kept ??= parts.slice(0, index);
  });
  return kept;
}

/** The messages of a MESSAGES_SNAPSHOT or RUN_STARTED `input`, with recognised content only; `undefined` when unchanged. */
function recognisedMessages(messages: unknown, at: string, removed: UnrecognisedMember[]): unknown[] | undefined {
  if (!Array.isArray(messages)) return undefined;
  let copy: unknown[] | undefined;
  messages.forEach((message, index) => {
    // An activity's content is its own open object, not a list of parts.
    if (!isRecord(message) || message.role === 'activity' || !Array.isArray(message.content)) return;
    const parts = recognisedParts(message.content, `${at}/${index}/content`, removed);
    if (parts === undefined) return;
    copy ??= [...messages];
    copy[index] = { ...message, content: parts };
  });
  return copy;
}

/** A JSON Patch without the operations of an `op` RFC 6902 does not define; `undefined` when unchanged. */
function recognisedOperations(patch: unknown, at: string, removed: UnrecognisedMember[]): unknown[] | undefined {
  if (!Array.isArray(patch)) return undefined;
  let kept: unknown[] | undefined;
  patch.forEach((operation, index) => {
    const op = isRecord(operation) ? operation.op : undefined;
    if (!unknownName(op, patchOps)) {
      kept?.push(operation);
      return;
    }
    removed.push({ kind: 'unknown-patch-op', path: `${at}/${index}`, name: op, message: `operation ${index} has op '${op}', which RFC 6902 does not define; it was dropped and the other operations kept (${patchRule})` });
    kept ??= patch.slice(0, index);
  });
  return kept;
}

/** An optional outcome of an unknown `type`: recorded, and true when it is to be removed. */
function unknownOutcome(outcome: unknown, known: ReadonlySet<unknown>, rule: string, removed: UnrecognisedMember[]): boolean {
  const type = isRecord(outcome) ? outcome.type : undefined;
  if (!unknownName(type, known)) return false;
  removed.push({ kind: 'unknown-outcome', path: '/outcome', name: type, message: `the outcome of type '${type}', which AG-UI does not describe, was removed (${rule})` });
  return true;
}

/**
 * The event without the union members the specification says a consumer strips (see the module
 * comment): RUN_FINISHED and SUBAGENT_FINISHED `outcome` of an unknown `type` (removed: an absent
 * outcome means success); content parts of an unknown `type`, or whose `source` is of an unknown
 * `type`, in the messages of a MESSAGES_SNAPSHOT or a RUN_STARTED `input` and in a
 * TOOL_CALL_RESULT's `content` (the part dropped, the message kept); STATE_DELTA `delta` and
 * ACTIVITY_DELTA `patch` operations of an `op` RFC 6902 does not define (the operation dropped).
 *
 * Pure: returns a copy, never changes `event`; `undefined` when nothing is unrecognised (the
 * common case, with no allocation). Other events are returned as they are without being read.
 */
export function stripUnrecognised(event: Record<string, unknown>): { event: Record<string, unknown>; removed: UnrecognisedMember[] } | undefined {
  const removed: UnrecognisedMember[] = [];
  let copy: Record<string, unknown> | undefined;
  switch (event.type) {
    case EventType.RUN_FINISHED:
    case EventType.SUBAGENT_FINISHED: {
      const finished = event.type === EventType.RUN_FINISHED;
      if (unknownOutcome(event.outcome, finished ? outcomeTypes : subagentOutcomeTypes, finished ? runsAndSteps : subagents, removed)) {
        copy = copyWithout(event, ['outcome']);
      }
      break;
    }
    case EventType.MESSAGES_SNAPSHOT: {
      const messages = recognisedMessages(event.messages, '/messages', removed);
      if (messages !== undefined) copy = { ...event, messages };
      break;
    }
    case EventType.RUN_STARTED: {
      const input = event.input;
      const messages = isRecord(input) ? recognisedMessages(input.messages, '/input/messages', removed) : undefined;
      if (messages !== undefined) copy = { ...event, input: { ...(input as Record<string, unknown>), messages } };
      break;
    }
    case EventType.TOOL_CALL_RESULT: {
      const parts = Array.isArray(event.content) ? recognisedParts(event.content, '/content', removed) : undefined;
      if (parts !== undefined) copy = { ...event, content: parts };
      break;
    }
    case EventType.STATE_DELTA:
    case EventType.ACTIVITY_DELTA: {
      const field = event.type === EventType.STATE_DELTA ? 'delta' : 'patch';
      const operations = recognisedOperations(event[field], `/${field}`, removed);
      if (operations !== undefined) copy = { ...event, [field]: operations };
      break;
    }
    default:
      return undefined;
  }
  return copy === undefined ? undefined : { event: copy, removed };
}

/** One diagnostic line for what {@link stripUnrecognised} removed from an event of `type`. */
export function describeStripped(type: string, removed: readonly UnrecognisedMember[]): string {
  return `${type}: ${removed.map((member) => `at ${member.path}, ${member.message}`).join('; ')}.`;
}

/**
 * `event` without what AG-UI does not describe in its unions (see {@link stripUnrecognised}): the
 * same object when it holds nothing such, else a copy, with one diagnostic saying what went.
 * Returns whether anything was stripped too, so that a caller can tell an emptied patch.
 */
export function stripWithDiagnostic(event: Record<string, unknown>, diagnose: DiagnosticHandler): { event: Record<string, unknown>; stripped: boolean } {
  const stripped = stripUnrecognised(event);
  if (stripped === undefined) return { event, stripped: false };
  diagnose({ message: `Stripped what AG-UI does not describe from ${describeStripped(event.type as string, stripped.removed)}`, event });
  return { event: stripped.event, stripped: true };
}
