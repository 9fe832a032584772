import { EventType, type State } from '@ag-ui/core';
import jsonpatch, { type Operation } from 'fast-json-patch';
import type { OperatorFunction } from 'rxjs';
import { eventTypeOf, type AgentEvent } from '../lib/agentEvent.js';
import { AguiRxError, describeValue } from '../lib/errors.js';
import { assertSafePatch, isPrototypePointer } from '../lib/jsonPatch.js';
import { operate } from '../lib/operate.js';

/** Options of {@link stateDelta}. */
export interface StateDeltaOptions {
  /** The state the client starts from (RunAgentInput `state`); the first snapshot is diffed against it. */
  initialState?: State;
}

/**
 * Turns whole-state STATE_SNAPSHOTs into RFC 6902 STATE_DELTA patches, sending only what changed.
 *
 * The agent may emit its whole state on every change, even the same object mutated in place:
 * the operator keeps its own copy of the last state sent and diffs against it.
 *
 * ```text
 * source:  --s1--s2--s2--s3--|     s = STATE_SNAPSHOT
 * output:  --S---D-------D---|     S = STATE_SNAPSHOT, D = STATE_DELTA (no change: nothing)
 * ```
 *
 * Rules:
 * 1. The first snapshot, with no `initialState`, is sent as a STATE_SNAPSHOT and becomes the base.
 * 2. Each later snapshot becomes a STATE_DELTA computed with fast-json-patch `compare`, or a
 *    STATE_SNAPSHOT when that is no larger than the patch (sizes in JSON characters) or no safe
 *    patch can say it (the state changes between object, array and primitive; a key named `__proto__`).
 * 3. A snapshot equal to the base sends nothing.
 * 4. An upstream STATE_DELTA is applied to the base (RFC 6902, section 4) and passed on.
 * 5. A patch that does not apply, or whose path goes through `__proto__`, `constructor` or
 *    `prototype`, and a snapshot that is not JSON-serialisable (BigInt, cycles) are errors
 *    (`INVALID_STATE_DELTA`, `INVALID_PATCH`, `INVALID_STATE`: RUN_ERROR under `mapRunLifecycle`).
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
 * @param options The client's starting state.
 * @return A function that returns an Observable in which state changes travel as the smaller of a
 * snapshot and a patch; other events pass through.
 * @throws {AguiRxError} `INVALID_STATE` at call time when `initialState` is not JSON-serialisable.
 */
export function stateDelta(options: StateDeltaOptions = {}): OperatorFunction<AgentEvent, AgentEvent> {
  const initialJson = options.initialState === undefined ? undefined : serialise(options.initialState, 'stateDelta initialState');
  return operate<AgentEvent, AgentEvent>((subscriber) => {
    // Our own copy of the state the client holds; never shared with the producer or the wire.
    let base: State | undefined = initialJson === undefined ? undefined : JSON.parse(initialJson);

    const onSnapshot = (event: Record<string, unknown>) => {
      const json = serialise(event.snapshot, 'STATE_SNAPSHOT');
      const next = JSON.parse(json);
      if (base === undefined) {
        base = next;
        return subscriber.next({ ...event, snapshot: JSON.parse(json) } as AgentEvent);
      }
      const previous = base;
      base = next;
      // compare() only diffs two objects or two arrays: [] -> {} gives no ops, {} -> null throws.
      const patch = isDiffable(previous, next) ? jsonpatch.compare(previous, next) : undefined;
      if (patch === undefined ? JSON.stringify(previous) === json : patch.length === 0) return;
      // A state key named __proto__ (own, from JSON.parse) gives ops that clients refuse to apply.
      if (patch !== undefined && !patch.some((operation) => isPrototypePointer(operation.path)) && JSON.stringify(patch).length < json.length) {
        const delta: Record<string, unknown> = { ...event, type: EventType.STATE_DELTA, delta: patch };
        delete delta.snapshot;
        return subscriber.next(delta as AgentEvent);
      }
      subscriber.next({ ...event, snapshot: JSON.parse(json) } as AgentEvent);
    };

    const onDelta = (event: Record<string, unknown>) => {
      assertSafePatch(event.delta, 'STATE_DELTA');
      // The JSON form is what is applied and what is sent: the client must get the very patch we
      // applied (an `undefined` value, say, would be refused by the client and leave it behind).
      const patch: Operation[] = JSON.parse(serialise(event.delta, 'STATE_DELTA delta'));
      // One operation at a time: fast-json-patch reports index 0 for every validation failure.
      // The base changes only once the whole patch applied (RFC 6902: a patch is atomic).
      let document = jsonpatch.deepClone(base ?? {});
      patch.forEach((operation, index) => {
        try {
          document = jsonpatch.applyOperation(document, operation, true, true, true, index).newDocument;
        } catch (error) {
          throw new AguiRxError(
            'INVALID_STATE_DELTA',
            `STATE_DELTA does not apply to the current state: operation ${index} (${operation.op} ${operation.path}) failed with ${
              (error as { name?: string }).name ?? 'an error'
            }: ${firstLine((error as Error).message)}. Send a STATE_SNAPSHOT first, or patch only paths the state has.`,
          );
        }
      });
      base = document;
      // Applying may have moved values of `patch` into the base: send a copy of its own.
      subscriber.next({ ...event, delta: JSON.parse(JSON.stringify(patch)) } as AgentEvent);
    };

    return {
      next(event) {
        switch (eventTypeOf(event)) {
          case EventType.STATE_SNAPSHOT:
            return onSnapshot(event as unknown as Record<string, unknown>);
          case EventType.STATE_DELTA:
            return onDelta(event as unknown as Record<string, unknown>);
          case EventType.RUN_STARTED: {
            const inputState = (event as { input?: { state?: State } }).input?.state;
            if (base === undefined && inputState !== undefined) base = JSON.parse(serialise(inputState, 'RUN_STARTED input.state'));
            return subscriber.next(event);
          }
          default:
            return subscriber.next(event);
        }
      },
    };
  });
}

/** JSON text of a state, or an `INVALID_STATE` error saying why it has none. */
function serialise(state: unknown, what: string): string {
  let json: string | undefined;
  try {
    json = JSON.stringify(state);
  } catch (error) {
    throw new AguiRxError('INVALID_STATE', `${what} is not JSON-serialisable: ${firstLine((error as Error).message)}. State must be plain JSON: convert BigInts to strings or numbers and break reference cycles.`);
  }
  if (json === undefined) {
    throw new AguiRxError('INVALID_STATE', `${what} has no JSON value (got ${describeValue(state)}). Send the whole state object as 'snapshot'.`);
  }
  return json;
}

/** Whether fast-json-patch `compare` can diff `from` into `to`: both objects, or both arrays. */
function isDiffable(from: unknown, to: unknown): boolean {
  return typeof from === 'object' && from !== null && typeof to === 'object' && to !== null && Array.isArray(from) === Array.isArray(to);
}

function firstLine(message: string): string {
  return message.split('\n')[0];
}
