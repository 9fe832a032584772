import { EventType, type State } from '@ag-ui/core';
import type { Operation } from 'fast-json-patch';
import type { OperatorFunction } from 'rxjs';
import { eventTypeOf, type AgentEvent } from '../lib/protocol/agentEvent.js';
import { warnDiagnostic, type DiagnosticHandler } from '../lib/protocol/diagnostics.js';
import { stripWithDiagnostic } from '../lib/protocol/unrecognised.js';
import { AguiRxError } from '../lib/protocol/errors.js';
import { applyPatchInOrder, assertSafePatch } from '../lib/state/jsonPatch.js';
import { createOperator, type OperatorHandlers, type OperatorSink } from '../lib/protocol/createOperator.js';
import { keepShapes, recordType } from '../lib/protocol/recordType.js';
import { createStateMirror, serialiseState, type StateMirror } from '../lib/state/stateDiff.js';

/** Options of {@link stateDelta}. */
export interface StateDeltaOptions {
  /** The state the client starts from (RunAgentInput `state`); the first snapshot is diffed against it. */
  initialState?: State | undefined;
  /**
   * The producer promises never to mutate a state, or any object in it, once emitted (immutable
   * updates: spreads, `Array.prototype.with`, Immer): a subtree or array element that is the same
   * object as in the last snapshot is unchanged and skipped without looking inside, and plain-JSON
   * values go on the wire by reference instead of as copies. Default `false`.
   */
  immutable?: boolean | undefined;
  /** Told about each upstream STATE_DELTA operation dropped, and each patch that did not apply. Default: `console.warn`. */
  onDiagnostic?: DiagnosticHandler | undefined;
}

/**
 * Turns whole-state STATE_SNAPSHOTs into RFC 6902 STATE_DELTA patches, sending only what changed.
 *
 * The agent may emit its whole state on every change, even the same object mutated in place:
 * the operator keeps its own copy of the last state sent, updates it while diffing, and diffs
 * against it. Deep-frozen subtrees (Object.freeze all the way down, as Immer makes them) cannot
 * change: once found so they are held and skipped by reference, option or not. With `immutable`,
 * every subtree that is the same object as last time is skipped, so a step costs about the parts
 * that changed plus one pass over each changed array's elements.
 *
 * ```text
 * source:  --s1--s2--s2--s3--|     s = STATE_SNAPSHOT
 * output:  --S---D-------D---|     S = STATE_SNAPSHOT, D = STATE_DELTA (no change: nothing)
 * ```
 *
 * Rules:
 * 1. The first snapshot, with no `initialState`, is sent as a STATE_SNAPSHOT and becomes the base.
 * 2. Each later snapshot becomes a STATE_DELTA: `add`, `remove` and `replace` operations (RFC 6902,
 *    section 4) at JSON Pointers (RFC 6901, `~` written `~0` and `/` written `~1`), in the same
 *    operations and order as fast-json-patch `compare` (arrays compared index by index). It is a
 *    STATE_SNAPSHOT instead when that is no longer than the patch, or when no safe patch can say
 *    it (the state changes between object, array and primitive; a path through a key named
 *    `__proto__`, `constructor` or `prototype`). Lengths are JSON characters (UTF-16 code units
 *    of the JSON text, exact, escapes included), counted without writing the JSON out and, for
 *    the state, only as far as needed to know it is longer than the patch.
 * 3. A snapshot equal to the base sends nothing.
 * 4. An upstream STATE_DELTA is applied to the base (RFC 6902, section 4; with fast-json-patch) and
 *    passed on.
 * 5. As the AG-UI specification has a consumer do (1.1, Snapshots and Deltas, "When a patch does
 *    not apply"): an operation whose `op` RFC 6902 does not define is dropped from the patch, the
 *    others are applied and sent; a well-formed patch that does not apply (a path that does not
 *    resolve, a failed `test`) is not sent and the state is kept as it was (atomically: none of
 *    its operations applied). Each is reported through `onDiagnostic`.
 * 6. A malformed patch (not an array, an operation without a string `op`, a path that is not a
 *    JSON Pointer), a path through `__proto__`, `constructor` or `prototype`, and a snapshot that
 *    is not JSON-serialisable (BigInt, cycles, a `toJSON` that throws) are errors (`INVALID_PATCH`,
 *    `INVALID_STATE`: RUN_ERROR under `mapRunLifecycle`). With `immutable`, only the first
 *    snapshot and the changed parts of later ones are checked.
 *
 * States are read as JSON.stringify reads them (ECMA-262 `SerializeJSONProperty`), so the client
 * gets what the wire would carry: own enumerable keys; `toJSON` is called (a Date is its ISO
 * string); Number, String and Boolean objects are unwrapped; NaN and ±Infinity are `null`; keys
 * whose value is `undefined`, a function or a symbol are absent, and such array elements `null`.
 * Values in the events are JSON values the producer will not change: copies; or, for deep-frozen
 * values and with `immutable`, the producer's own objects when already plain JSON. A frozen
 * object's getters are taken to answer the same every time.
 *
 * A producer that breaks the `immutable` promise, changing in place an object it already emitted,
 * loses that change: the object is skipped as unchanged, and the operator's view of it is the
 * changed object itself, so the client keeps the old value until that value changes again or the
 * state is sent whole; events already emitted may share the changed object.
 *
 * ## Example
 *
 * ```ts
 * const todos = ['write the spec', 'review the docs', 'ship it'];
 * of<AgentEvent[]>(
 *   { type: EventType.STATE_SNAPSHOT, snapshot: { todos } },
 *   { type: EventType.STATE_SNAPSHOT, snapshot: { todos } }, // unchanged: nothing sent
 *   { type: EventType.STATE_SNAPSHOT, snapshot: { todos: [...todos, 'tag the release'] } },
 * ).pipe(stateDelta()).subscribe((e) => console.log(e.type));
 * // results: STATE_SNAPSHOT, STATE_DELTA
 * ```
 *
 * @param options The client's starting state, whether the producer updates its state immutably, and where diagnostics go.
 * @return A function that returns an Observable in which state changes travel as the smaller of a
 * snapshot and a patch; other events pass through.
 * @throws {AguiRxError} `INVALID_STATE` at call time when `initialState` is not JSON-serialisable.
 */
export function stateDelta(options: StateDeltaOptions = {}): OperatorFunction<AgentEvent, AgentEvent> {
  const initialJson = options.initialState === undefined ? undefined : serialiseState(options.initialState, 'stateDelta initialState');
  const immutable = options.immutable === true;
  const diagnose = options.onDiagnostic ?? warnDiagnostic;
  // One record per subscription (its handlers), with a `next` every subscription shares.
  return createOperator<AgentEvent, AgentEvent>(
    (subscriber) => {
      const run = new RunRecord();
      run.subscriber = subscriber;
      run.immutable = immutable;
      run.diagnose = diagnose;
      run.mirror = undefined;
      run.initialJson = initialJson;
      return RunRecord.shaped(run);
    },
    { passesTokenEvents: true, readsAgentEvents: diagnose },
  );
}
// The options a call makes once, one kept (see keepShapes).
keepShapes({ passesTokenEvents: true, readsAgentEvents: undefined });

const runMethods: Pick<Run, 'next'> = Object.freeze({
  next(this: Run, event: AgentEvent) {
    switch (eventTypeOf(event)) {
      case EventType.STATE_SNAPSHOT:
        return onSnapshot(this, event as unknown as Record<string, unknown>);
      case EventType.STATE_DELTA:
        return onDelta(this, event as unknown as Record<string, unknown>);
      case EventType.RUN_STARTED: {
        const inputState = (event as { input?: { state?: State } }).input?.state;
        if ((this.mirror === undefined ? this.initialJson : this.mirror.state) === undefined && inputState !== undefined) {
          const json = serialiseState(inputState, 'RUN_STARTED input.state');
          if (this.mirror === undefined) this.initialJson = json;
          else this.mirror.reset(JSON.parse(json));
        }
        return this.subscriber.next(event);
      }
      default:
        return this.subscriber.next(event);
    }
  },
});
const RunRecord = recordType<Run>(runMethods);

/** One subscription of {@link stateDelta}: its handlers, and what its module functions read and change. */
interface Run extends OperatorHandlers<AgentEvent> {
  readonly subscriber: OperatorSink<AgentEvent>;
  readonly immutable: boolean;
  readonly diagnose: DiagnosticHandler;
  /** The state the client holds; made at the first state event, so that a run that sends none holds no mirror. */
  mirror: StateMirror | undefined;
  /**
   * Until the mirror is made: the JSON of the state the client starts from (undefined: none yet),
   * parsed when the first state event needs it; its text is smaller than its objects in an open run.
   */
  initialJson: string | undefined;
}

/** The run's mirror, made now if it was not (holding the state the client starts from). */
function mirrorOf(run: Run): StateMirror {
  if (run.mirror === undefined) {
    // Our own copy unless the producer's objects can be trusted not to change.
    const mirror = createStateMirror({ immutable: run.immutable });
    if (run.initialJson !== undefined) mirror.reset(JSON.parse(run.initialJson));
    run.initialJson = undefined;
    run.mirror = mirror;
  }
  return run.mirror;
}

function onSnapshot(run: Run, event: Record<string, unknown>): void {
  const change = mirrorOf(run).update(event.snapshot, 'STATE_SNAPSHOT');
  if (change.type === 'none') return;
  if (change.type === 'snapshot') return run.subscriber.next({ ...event, snapshot: change.snapshot } as AgentEvent);
  // Built without `snapshot` rather than deleting it (a `delete` slows every later read of the
  // event, and an object rest pattern is a slow runtime call).
  const delta: Record<string, unknown> = { type: EventType.STATE_DELTA, delta: change.delta };
  for (const key in event) {
    if (key !== 'type' && key !== 'snapshot' && key !== 'delta' && Object.prototype.hasOwnProperty.call(event, key)) delta[key] = event[key];
  }
  run.subscriber.next(delta as AgentEvent);
}

function onDelta(run: Run, input: Record<string, unknown>): void {
  const { event, stripped } = stripWithDiagnostic(input, run.diagnose);
  assertSafePatch(event.delta, 'STATE_DELTA');
  // The JSON form is what is applied and what is sent: the client must get the very patch we
  // applied (an `undefined` value, say, would be refused by the client and leave it behind).
  const patch: Operation[] = JSON.parse(serialiseState(event.delta, 'STATE_DELTA delta'));
  // Every operation was dropped: there is nothing left to apply or send.
  if (patch.length === 0 && stripped) return;
  const mirror = mirrorOf(run);
  const outcome = applyPatchInOrder(mirror.state ?? {}, patch);
  if (outcome.failure !== undefined) {
    // A malformed operation (a required member missing) is fatal, as a malformed known value is.
    if (outcome.malformed) throw new AguiRxError('INVALID_STATE_DELTA', `STATE_DELTA is not a valid RFC 6902 patch: ${outcome.failure}. Give each operation the members RFC 6902 requires.`);
    // A well-formed patch that does not apply is warned about and skipped, the state kept: what the client does too (AG-UI spec 1.1, Snapshots and Deltas).
    return run.diagnose({ message: `Dropped a STATE_DELTA that does not apply to the current state, which is kept: ${outcome.failure}. Send a STATE_SNAPSHOT first, or patch only paths the state has.`, event: input });
  }
  mirror.reset(outcome.document);
  // Applying may have moved values of `patch` into the base: send a copy of its own.
  run.subscriber.next({ ...event, delta: JSON.parse(JSON.stringify(patch)) } as AgentEvent);
}
