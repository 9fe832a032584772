import type { Event } from '@ag-ui/core';
import type { OperatorFunction } from 'rxjs';
import type { AgentEvent } from '../lib/protocol/agentEvent.js';
import type { DiagnosticHandler } from '../lib/protocol/diagnostics.js';
import type { IdGenerator } from '../lib/protocol/generateId.js';
import { fuse } from '../lib/protocol/createOperator.js';
import { keepShapes } from '../lib/protocol/recordType.js';
import { mapRunLifecycle, type MapRunLifecycleOptions } from './mapRunLifecycle.js';
import { activityDelta } from './activityDelta.js';
import { distinctIds } from './distinctIds.js';
import { mapStepLifecycle } from './mapStepLifecycle.js';
import { openMessageStartContentEnd } from './openMessageStartContentEnd.js';
import { stateDelta } from './stateDelta.js';
import { toolCallCorrelator } from './toolCallCorrelator.js';

/** Options of {@link toAgui}: the run's ids and the options of each operator it composes. */
export interface ToAguiOptions extends MapRunLifecycleOptions {
  /** Mints message and tool call ids. Default: nanoid. */
  generateId?: IdGenerator | undefined;
  /** Told about each event dropped or repaired to keep the stream valid. Default: `console.warn`. */
  onDiagnostic?: DiagnosticHandler | undefined;
  /** The client's starting state. Default: `input.state` when `input` is given. */
  initialState?: unknown;
  /**
   * The agent never mutates a state it has emitted (it updates immutably, as Immer or Redux do):
   * `stateDelta` skips unchanged subtrees by reference. Default: false. See `stateDelta`'s `immutable`.
   */
  immutableState?: boolean | undefined;
}

/**
 * Turns an agent's events into one well-formed AG-UI 1.0 run: the core operators in the
 * recommended order, with the lifecycle outermost so that every error, including one raised by
 * another operator, becomes RUN_ERROR.
 *
 * ```text
 * source:  --t----u--c----r-----s--|       t, u = TEXT_MESSAGE_CHUNK, c = TOOL_CALL_CHUNK,
 * output:  S-(mx)-y--(ka)-(eER)-s--(F|)    r = TOOL_CALL_RESULT, s = STATE_SNAPSHOT
 *
 * S = RUN_STARTED                          m = TEXT_MESSAGE_START, x y = TEXT_MESSAGE_CONTENT (t, u)
 * k = TOOL_CALL_START, a = TOOL_CALL_ARGS  e = TEXT_MESSAGE_END, E = TOOL_CALL_END, R = TOOL_CALL_RESULT
 * s = STATE_SNAPSHOT (the first state)     F = RUN_FINISHED
 * ```
 *
 * RxJS marble syntax: one character per frame, and a group `( )` of events sent in one frame
 * takes as many frames as it has characters (the source is spaced for the groups to fit).
 *
 * Equivalent to `pipe(openMessageStartContentEnd(), toolCallCorrelator(), distinctIds({ messages:
 * input?.messages }), mapStepLifecycle(), stateDelta(), activityDelta(), mapRunLifecycle())`: every
 * operator that needs no options.
 *
 * Ids: each message and tool call the run starts goes out under an id that names nothing the
 * client holds: ids reused within the run, ids of `input.messages` (the history: its messages and
 * their tool calls) and ids of a message of another kind are replaced by fresh ones, with a
 * diagnostic (see `distinctIds`). Updates keep their ids: an ACTIVITY_SNAPSHOT of an activity of
 * the same type, a TOOL_CALL_RESULT answering a tool call of the history, and a START (or content)
 * for an ended message of the run of the same lane, kind and role, which reopens it (the client
 * appends to it).
 *
 * Closing: every message and tool call is closed before RUN_FINISHED; a step boundary closes a
 * tool call only once its arguments are complete JSON (see `toolCallCorrelator`), so argument
 * fragments streamed between step events stay in their call.
 *
 * ## Example
 *
 * ```ts
 * let n = 0; // ids id-1, id-2, …: the message, the tool call and the result's message each get their own
 * const agentEvents$ = of<AgentEvent[]>(
 *   { type: 'TEXT_MESSAGE_CHUNK', delta: 'Looking it up' },
 *   { type: 'TOOL_CALL_CHUNK', toolCallName: 'search', delta: '{"q":"rxjs"}' },
 *   { type: 'TOOL_CALL_RESULT', toolCallId: 'id-2', content: { hits: 3 } },
 * );
 * agentEvents$
 *   .pipe(toAgui({ threadId: 't1', runId: 'r1', generateId: () => `id-${++n}` })) // the call is id-2
 *   .subscribe((event) => console.log(event.type));
 * // results: RUN_STARTED, TEXT_MESSAGE_START, TEXT_MESSAGE_CONTENT, TOOL_CALL_START, TOOL_CALL_ARGS, TEXT_MESSAGE_END, TOOL_CALL_END, TOOL_CALL_RESULT, RUN_FINISHED
 * ```
 *
 * @param options The run's ids (`threadId`, `runId`), `parentRunId`, `input`, `signal`,
 * `generateId`, `onDiagnostic`, `initialState`, `immutableState`, and `onError` / `errorMessages`
 * (see `mapRunLifecycle`: each RUN_ERROR reported once; unknown messages redacted in production).
 * @return A function that returns an Observable of AG-UI events forming exactly one run.
 * @throws {AguiRxError} `INVALID_OPTIONS` / `INVALID_STATE` at call time for bad options.
 */
export function toAgui(options: ToAguiOptions): OperatorFunction<AgentEvent, Event> {
  // Checked by mapRunLifecycle; read defensively so that a missing options object gets its message, not a TypeError.
  const { generateId, onDiagnostic, initialState, immutableState } = options ?? ({} as ToAguiOptions);
  // One subscription for the seven: each event goes straight from one operator's handlers to the next.
  return fuse(
    openMessageStartContentEnd({ generateId, onDiagnostic }),
    toolCallCorrelator({ generateId, onDiagnostic }),
    distinctIds({ messages: options?.input?.messages, generateId, onDiagnostic }),
    mapStepLifecycle({ onDiagnostic }),
    stateDelta({ initialState: initialState ?? options?.input?.state, immutable: immutableState, onDiagnostic }),
    activityDelta({ onDiagnostic }),
    mapRunLifecycle(options),
  );
}

// One of each options object a call makes, kept: their hidden classes outlive the runs (see keepShapes).
keepShapes(
  { generateId: undefined, onDiagnostic: undefined },
  { messages: undefined, generateId: undefined, onDiagnostic: undefined },
  { onDiagnostic: undefined },
  { initialState: undefined, immutable: undefined, onDiagnostic: undefined },
);
