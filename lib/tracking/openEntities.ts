import { EventType, type Event } from '@ag-ui/core';
import { laneFields, type Lane } from '../protocol/agentEvent.js';
import { entityEvents, entityKind, entityKinds, operatorLifecycleMessage, lifecycleRules, type EntityKind } from '../protocol/table.js';
import { trackStepsAndSubagents, type LifecycleProblem, type StepsAndSubagents } from './steps.js';
import { recordType } from '../protocol/recordType.js';

/** Why what is open gets closed: a successful end of run, or an error (which closes subagents with SUBAGENT_ERROR). */
export type CloseReason =
  | {
      /** The run finished: subagents close with SUBAGENT_FINISHED. */
      type: 'finished';
    }
  | {
      /** The run failed: subagents close with SUBAGENT_ERROR. */
      type: 'error';
      /** The run's error message, carried by each SUBAGENT_ERROR. */
      message: string;
    };

/** Why an event cannot be sent as it is (see {@link OpenEntities.sequenceProblem}). */
export interface SequenceProblem {
  /** `true`: an `INVALID_EVENT` error ends the run; `false`: the event is dropped with a diagnostic. */
  fatal: boolean;
  /** What is wrong and how to fix it, for a person. */
  message: string;
}

// What a turn holds: tracked here by id. Steps and subagents are tracked by the step and subagent rules' tracker.
const turnKinds: readonly EntityKind[] = entityKinds.filter((kind) => kind.inTurn);

/** The closing event sent for an entity left open. */
function closerOf(kind: EntityKind, id: string, lane: Lane, reason: CloseReason): Event {
  if (kind.perLane) return { type: kind.end[0], [kind.idField]: id, ...laneFields(lane) } as Event;
  // A subagent is a lane of its own: it ends with success, or with the run's error (its second closer).
  return (reason.type === 'error' && kind.end.length > 1
    ? { type: kind.end[1], [kind.idField]: id, message: reason.message }
    : { type: kind.end[0], [kind.idField]: id, outcome: { type: 'success' } }) as unknown as Event;
}

/** A broken step or subagent rule as {@link OpenEntities.sequenceProblem} reports it. */
function toSequenceProblem({ rule, facts }: LifecycleProblem): SequenceProblem {
  return { fatal: lifecycleRules[rule].fatal, message: operatorLifecycleMessage(rule, facts) };
}

/** What is open on an AG-UI stream, and what it takes to close it. Call its functions as methods: they are shared, and read the record they are called on. */
export interface OpenEntities {
  /** Records one outgoing event. */
  observe(event: Event): void;
  /** The closing events for everything still open (innermost first), and forgets them. */
  closeAll(reason: CloseReason): Event[];
  /** Tool calls started on the stream that have had no TOOL_CALL_RESULT, in start order. */
  pendingToolCallIds(): string[];
  /**
   * Why a step or subagent event cannot be sent as it is, or `undefined` when it can: a closer
   * for nothing open or a second opener (`fatal: false`, the event can be dropped), a subagent id
   * used again or a parent subagent never started (`fatal: true`).
   */
  sequenceProblem(event: Event): SequenceProblem | undefined;
}

/**
 * Tracks the entities an AG-UI stream has opened and not closed (text and reasoning messages,
 * reasoning spans, tool calls, steps, subagents), so that a run can be ended without leaving any
 * of them open: the protocol's rule that all of these are closed before RUN_FINISHED.
 */
export function trackOpenEntities(): OpenEntities {
  // Its methods on a shared prototype (`openEntitiesMethods`): a record holds only its fields.
  const entities = new OpenEntitiesRecord();
  entities.few = undefined;
  entities.open = undefined;
  entities.pending = undefined;
  entities.lifecycles = undefined;
  return OpenEntitiesRecord.shaped(entities);
}

// How many entities `few` holds before they move to a map per kind: a scan of a few triples costs
// less than a lookup, and no run pays more than a bounded scan per event (no superlinear path).
const FEW = 16;

/** One run's open entities; the methods are the shared functions below (no closures per run). */
interface OpenRecord extends OpenEntities {
  // Each table made at its first write: an open stream holds only what it opened.
  /**
   * What is open while it is at most {@link FEW} entities: `place, id, lane` triples in open order
   * (`place`: the kind's index in `turnKinds`). One open message costs an array of three slots
   * instead of a Map and its hash table (about 190 bytes less per open stream).
   */
  few: (number | Lane)[] | undefined;
  /**
   * Past {@link FEW}: one map per kind a turn holds (at the kind's place in `turnKinds`), in open
   * order, keyed by id. An array rather than a Map of kinds: a run that opens only text holds one table, not two.
   */
  open: (Map<string, Lane> | undefined)[] | undefined;
  pending: Set<string> | undefined;
  lifecycles: StepsAndSubagents | undefined;
}

function steps(record: OpenRecord): StepsAndSubagents {
  return (record.lifecycles ??= trackStepsAndSubagents());
}

function observe(this: OpenRecord, event: Event): void {
  if (event.type === EventType.TOOL_CALL_RESULT) {
    this.pending?.delete(event.toolCallId);
    return;
  }
  const entry = entityEvents.get(event.type);
  if (entry === undefined || entry.role === 'content' || entry.role === 'chunk') return;
  const { kind } = entry;
  const fields = event as unknown as Record<string, string | undefined>;
  const id = fields[kind.idField] as string;
  if (kind === entityKind.step) return steps(this).recordStep(event.type, fields.subagentRunId, id);
  if (kind === entityKind.subagent) return steps(this).recordSubagent(event.type, id);
  const place = turnKinds.indexOf(kind);
  if (place < 0) return;
  if (entry.role === 'start') {
    addOpen(this, place, id, fields.subagentRunId);
    if (kind === entityKind.toolCall) (this.pending ??= new Set()).add(id);
  } else removeOpen(this, place, id);
}

// Records `id` as open (a second START of an open id updates its lane in place, as Map.set does).
function addOpen(record: OpenRecord, place: number, id: string, lane: Lane): void {
  if (record.open === undefined) {
    const few = record.few;
    if (few === undefined) {
      // Made with its first entity: three slots (an empty array's first push makes room for 16 or more).
      record.few = [place, id, lane];
      return;
    }
    for (let i = 0; i < few.length; i += 3) {
      if (few[i] === place && few[i + 1] === id) {
        few[i + 2] = lane;
        return;
      }
    }
    if (few.length < FEW * 3) {
      few.push(place, id, lane);
      return;
    }
    // Too many to scan: a map per kind from now on, in the same open order.
    const open = (record.open = new Array<Map<string, Lane> | undefined>(turnKinds.length).fill(undefined));
    for (let i = 0; i < few.length; i += 3) (open[few[i] as number] ??= new Map()).set(few[i + 1] as string, few[i + 2] as Lane);
    record.few = undefined;
  }
  (record.open[place] ??= new Map()).set(id, lane);
}

function removeOpen(record: OpenRecord, place: number, id: string): void {
  const few = record.few;
  if (few === undefined) {
    record.open?.[place]?.delete(id);
    return;
  }
  for (let i = 0; i < few.length; i += 3) {
    if (few[i] === place && few[i + 1] === id) {
      few.splice(i, 3);
      return;
    }
  }
}

function closeAll(this: OpenRecord, reason: CloseReason): Event[] {
  const closers: Event[] = [];
  // Every run ends here once: what was never made or is empty is skipped without an iterator.
  const { few, open, lifecycles } = this;
  for (const kind of entityKinds) {
    // Steps and subagents nest: the tracker gives the latest first.
    if (kind === entityKind.step) {
      if (lifecycles !== undefined) for (const { name, lane } of lifecycles.finishSteps(undefined, true)) closers.push(closerOf(kind, name, lane, reason));
    } else if (kind === entityKind.subagent) {
      if (lifecycles !== undefined) for (const { id } of lifecycles.finishSubagents()) closers.push(closerOf(kind, id, undefined, reason));
    } else if (few !== undefined) {
      const place = turnKinds.indexOf(kind);
      for (let i = 0; i < few.length; i += 3) if (few[i] === place) closers.push(closerOf(kind, few[i + 1] as string, few[i + 2] as Lane, reason));
    } else {
      const entities = open?.[turnKinds.indexOf(kind)];
      if (entities === undefined || entities.size === 0) continue;
      for (const [id, lane] of entities) closers.push(closerOf(kind, id, lane, reason));
      entities.clear();
    }
  }
  if (few !== undefined) few.length = 0;
  return closers;
}

function pendingToolCallIds(this: OpenRecord): string[] {
  return this.pending === undefined ? [] : [...this.pending];
}

function sequenceProblem(this: OpenRecord, event: Event): SequenceProblem | undefined {
  const entry = entityEvents.get(event.type);
  if (entry === undefined) return undefined;
  const fields = event as unknown as Record<string, string | undefined>;
  let problem: LifecycleProblem | undefined;
  if (entry.kind === entityKind.step) problem = steps(this).stepProblem(event.type, fields.subagentRunId, fields.stepName as string);
  else if (entry.kind === entityKind.subagent) problem = steps(this).subagentProblem(event.type, fields.subagentRunId as string, fields.parentSubagentRunId);
  return problem === undefined ? undefined : toSequenceProblem(problem);
}

const openEntitiesMethods: OpenEntities = Object.freeze({ observe, closeAll, pendingToolCallIds, sequenceProblem });
const OpenEntitiesRecord = recordType<OpenRecord>(openEntitiesMethods);
