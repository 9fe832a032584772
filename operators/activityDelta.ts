import { EventType } from '@ag-ui/core';
import jsonpatch, { type Operation } from 'fast-json-patch';
import type { OperatorFunction } from 'rxjs';
import { eventTypeOf, type AgentEvent } from '../lib/protocol/agentEvent.js';
import { AguiRxError, describeValue } from '../lib/protocol/errors.js';
import { applyPatchInOrder, assertSafePatch, firstLine, isPrototypePointer } from '../lib/state/jsonPatch.js';
import { createOperator, type OperatorHandlers, type OperatorSink } from '../lib/protocol/createOperator.js';
import { recordType } from '../lib/protocol/recordType.js';
import { warnDiagnostic, type DiagnosticHandler } from '../lib/protocol/diagnostics.js';
import { stripWithDiagnostic } from '../lib/protocol/unrecognised.js';
import { copyWith, isObject } from '../lib/protocol/values.js';

/** Options of {@link activityDelta}. */
export interface ActivityDeltaOptions {
  /** Only activities of these types are diffed; others pass as they are. Default: every type. */
  activityTypes?: readonly string[] | undefined;
  /** Told of each operation of an unknown `op` dropped and each patch that does not apply. Default: `console.warn`. */
  onDiagnostic?: DiagnosticHandler | undefined;
}

/** What the client holds for one activity message. */
interface Tracked {
  activityType: string;
  subagentRunId: unknown;
  /** Our own JSON copy of the content; never shared with the producer or the wire. */
  content: Record<string, unknown>;
}

/**
 * Turns repeated ACTIVITY_SNAPSHOTs of one activity message into RFC 6902 ACTIVITY_DELTA patches,
 * sending only what changed: `stateDelta` for activities.
 *
 * An agent (or `a2uiSurfaces`) may send an activity's whole content on every change; the operator
 * keeps its own copy of what the client holds, per `messageId`, and diffs against it.
 *
 * ```text
 * source:  --s1--s2--s2--s3--|     s = ACTIVITY_SNAPSHOT of one messageId
 * output:  --S---D-------D---|     S = ACTIVITY_SNAPSHOT, D = ACTIVITY_DELTA (no change: nothing)
 * ```
 *
 * Rules:
 * 1. The first snapshot of a `messageId` passes, and its content becomes that message's base.
 * 2. A later snapshot (`replace` absent or `true`) becomes an ACTIVITY_DELTA
 *    `{ messageId, activityType, patch }` computed with fast-json-patch `compare`, or passes whole
 *    when that is no larger than the patch (sizes in JSON characters), when no safe patch can say
 *    it (a content key named `__proto__`), or when its `activityType` or `subagentRunId` changed.
 * 3. A snapshot whose content equals the base sends nothing.
 * 4. A snapshot with `replace: false` passes as it is; it sets the base only of a message not yet
 *    seen (a client keeps an existing message then).
 * 5. An upstream ACTIVITY_DELTA of a tracked message is applied to its base (RFC 6902, atomic) and
 *    passed on; one of an unknown message (the client may hold it from an earlier run) passes untracked.
 * 6. MESSAGES_SNAPSHOT passes and forgets every base: the next snapshot of each message is sent whole.
 * 7. As AG-UI has a consumer do (spec 1.1, Snapshots and Deltas): an operation of an unknown `op`
 *    is dropped and the others applied, and a well-formed patch that does not apply to a tracked
 *    activity is dropped with its content kept, each reported through `onDiagnostic`. A malformed
 *    operation, a path through `__proto__`, `constructor` or `prototype`, and content that is not a
 *    JSON object are errors (`INVALID_ACTIVITY_DELTA`, `INVALID_PATCH`, `INVALID_ACTIVITY`:
 *    RUN_ERROR under `mapRunLifecycle`).
 *
 * Memory: the last content of every activity message seen in the subscription.
 *
 * ## Example
 *
 * ```ts
 * const plan = (steps: string[]): AgentEvent => ({ type: EventType.ACTIVITY_SNAPSHOT, messageId: 'plan', activityType: 'plan', content: { title: 'Release checklist for the next version', steps } });
 * of(plan(['write the spec']), plan(['write the spec']), plan(['write the spec', 'ship it']))
 *   .pipe(activityDelta())
 *   .subscribe((e) => console.log(e.type));
 * // results: ACTIVITY_SNAPSHOT, ACTIVITY_DELTA
 * ```
 *
 * @param options The activity types to diff.
 * @return A function that returns an Observable in which activity changes travel as the smaller
 * of a snapshot and a patch; other events pass through.
 */
export function activityDelta(options: ActivityDeltaOptions = {}): OperatorFunction<AgentEvent, AgentEvent> {
  const types = options.activityTypes === undefined ? undefined : new Set(options.activityTypes);
  const diagnose = options.onDiagnostic ?? warnDiagnostic;
  // One record per subscription (its handlers), with a `next` every subscription shares.
  return createOperator<AgentEvent, AgentEvent>((subscriber) => {
    const activities = new ActivitiesRecord();
    activities.subscriber = subscriber;
    activities.diagnose = diagnose;
    activities.types = types;
    activities.tracked = undefined;
    return ActivitiesRecord.shaped(activities);
  }, {
    passesTokenEvents: true,
    readsAgentEvents: diagnose,
  });
}

/** One subscription of {@link activityDelta}. */
interface Activities extends OperatorHandlers<AgentEvent> {
  readonly subscriber: OperatorSink<AgentEvent>;
  readonly diagnose: DiagnosticHandler;
  readonly types: ReadonlySet<string> | undefined;
  /** What the client holds, per activity messageId; made at the first activity (most runs have none). */
  tracked: Map<string, Tracked> | undefined;
}

function onSnapshot(a: Activities, event: Record<string, unknown>): void {
  const { subscriber, types } = a;
  const messageId = event.messageId as string;
  const json = serialise(event.content, messageId);
  const next: Record<string, unknown> = JSON.parse(json);
  const previous = a.tracked?.get(messageId);
  const wire = () => ({ ...event, content: JSON.parse(json) }) as AgentEvent;
  if (types !== undefined && !types.has(event.activityType as string)) {
    a.tracked?.delete(messageId);
    return subscriber.next(wire());
  }
  const own = { activityType: event.activityType as string, subagentRunId: event.subagentRunId, content: next };
  if (event.replace === false) {
    if (previous === undefined) (a.tracked ??= new Map()).set(messageId, own);
    return subscriber.next(wire());
  }
  (a.tracked ??= new Map()).set(messageId, own);
  if (previous === undefined || previous.activityType !== own.activityType || previous.subagentRunId !== own.subagentRunId) return subscriber.next(wire());
  const patch = jsonpatch.compare(previous.content, next);
  if (patch.length === 0) return;
  if (!patch.some((operation) => isPrototypePointer(operation.path)) && JSON.stringify(patch).length < json.length) {
    // A rest pattern rather than `delete`, which would leave each delta a hidden class of its own (see copyWith).
    const { content: _content, replace: _replace, ...rest } = event as Record<string, unknown>;
    return subscriber.next(copyWith(rest, { type: EventType.ACTIVITY_DELTA, patch }) as unknown as AgentEvent);
  }
  subscriber.next(wire());
}

function onDelta(a: Activities, input: Record<string, unknown>): void {
  const { subscriber, types, diagnose } = a;
  const { event, stripped } = stripWithDiagnostic(input, diagnose);
  assertSafePatch(event.patch, 'ACTIVITY_DELTA');
  const messageId = event.messageId as string;
  // The JSON form is what is applied and what is sent, so that the client applies the very same patch.
  let json: string;
  try {
    json = JSON.stringify(event.patch);
  } catch (error) {
    throw new AguiRxError('INVALID_PATCH', `ACTIVITY_DELTA '${messageId}' patch is not JSON-serialisable: ${firstLine((error as Error).message)}.`);
  }
  const patch: Operation[] = JSON.parse(json);
  // Every operation was dropped: there is nothing left to apply or send.
  if (patch.length === 0 && stripped) return;
  const base = a.tracked?.get(messageId);
  if (base !== undefined && (types === undefined || types.has(event.activityType as string))) {
    const outcome = applyPatchInOrder(base.content, patch);
    if (outcome.failure !== undefined) {
      if (outcome.malformed) throw new AguiRxError('INVALID_ACTIVITY_DELTA', `ACTIVITY_DELTA '${messageId}' is not a valid RFC 6902 patch: ${outcome.failure}. Give each operation the members RFC 6902 requires.`);
      // Skipped, the content kept: what the client does with a patch that does not apply.
      return diagnose({ message: `Dropped an ACTIVITY_DELTA that does not apply to activity '${messageId}', whose content is kept: ${outcome.failure}. Send an ACTIVITY_SNAPSHOT first, or patch only paths the content has.`, event: input });
    }
    const document = outcome.document;
    if (!isObject(document)) {
      throw new AguiRxError('INVALID_ACTIVITY_DELTA', `ACTIVITY_DELTA would make the content of activity '${messageId}' ${describeValue(document)}; activity content must stay an object.`);
    }
    // The client sets the message's activityType from the delta.
    (a.tracked ??= new Map()).set(messageId, { ...base, activityType: event.activityType as string, content: document });
  } else a.tracked?.delete(messageId);
  subscriber.next({ ...event, patch: JSON.parse(json) } as AgentEvent);
}

const activityMethods: Pick<Activities, 'next'> = Object.freeze({
  next(this: Activities, event: AgentEvent) {
    switch (eventTypeOf(event)) {
      case EventType.ACTIVITY_SNAPSHOT:
        return onSnapshot(this, event as unknown as Record<string, unknown>);
      case EventType.ACTIVITY_DELTA:
        return onDelta(this, event as unknown as Record<string, unknown>);
      case EventType.MESSAGES_SNAPSHOT:
        this.tracked?.clear();
        return this.subscriber.next(event);
      default:
        return this.subscriber.next(event);
    }
  },
});
const ActivitiesRecord = recordType<Activities>(activityMethods);

/** JSON text of an activity's content, or an `INVALID_ACTIVITY` error saying why it has none. */
function serialise(content: unknown, messageId: string): string {
  let json: string | undefined;
  try {
    json = JSON.stringify(content);
  } catch (error) {
    throw new AguiRxError('INVALID_ACTIVITY', `ACTIVITY_SNAPSHOT '${messageId}' content is not JSON-serialisable: ${firstLine((error as Error).message)}. Content must be plain JSON: convert BigInts to strings or numbers and break reference cycles.`);
  }
  if (json === undefined || !isObject(content)) {
    throw new AguiRxError('INVALID_ACTIVITY', `ACTIVITY_SNAPSHOT '${messageId}' has 'content: ${describeValue(content)}', but it must be a JSON object.`);
  }
  return json;
}
