import { EventType, type Event } from '@ag-ui/core';
import { describeLane, laneFields, type Lane } from '../protocol/agentEvent.js';

/** How one kind of AG-UI entity is opened, closed, and named. */
interface EntityKind {
  open: EventType;
  close: readonly EventType[];
  /** The field that names the entity. */
  idField: 'messageId' | 'toolCallId' | 'stepName' | 'subagentRunId';
  /** The closing event sent for an entity left open, from its id and lane. */
  closer(id: string, lane: Lane, reason: CloseReason): Event;
}

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

// Order matters: closers are sent in this order, innermost entities first (a tool call inside a
// text turn, a message inside a reasoning span, everything inside a step, steps inside a subagent).
const kinds: readonly EntityKind[] = [
  {
    open: EventType.TOOL_CALL_START,
    close: [EventType.TOOL_CALL_END],
    idField: 'toolCallId',
    closer: (toolCallId, lane) => ({ type: EventType.TOOL_CALL_END, toolCallId, ...laneFields(lane) }),
  },
  {
    open: EventType.TEXT_MESSAGE_START,
    close: [EventType.TEXT_MESSAGE_END],
    idField: 'messageId',
    closer: (messageId, lane) => ({ type: EventType.TEXT_MESSAGE_END, messageId, ...laneFields(lane) }),
  },
  {
    open: EventType.REASONING_MESSAGE_START,
    close: [EventType.REASONING_MESSAGE_END],
    idField: 'messageId',
    closer: (messageId, lane) => ({ type: EventType.REASONING_MESSAGE_END, messageId, ...laneFields(lane) }),
  },
  {
    open: EventType.REASONING_START,
    close: [EventType.REASONING_END],
    idField: 'messageId',
    closer: (messageId, lane) => ({ type: EventType.REASONING_END, messageId, ...laneFields(lane) }),
  },
  {
    open: EventType.STEP_STARTED,
    close: [EventType.STEP_FINISHED],
    idField: 'stepName',
    closer: (stepName, lane) => ({ type: EventType.STEP_FINISHED, stepName, ...laneFields(lane) }),
  },
  {
    open: EventType.SUBAGENT_STARTED,
    close: [EventType.SUBAGENT_FINISHED, EventType.SUBAGENT_ERROR],
    idField: 'subagentRunId',
    closer: (subagentRunId, _lane, reason) =>
      reason.type === 'error'
        ? { type: EventType.SUBAGENT_ERROR, subagentRunId, message: reason.message }
        : { type: EventType.SUBAGENT_FINISHED, subagentRunId, outcome: { type: 'success' } },
  },
];

const kindByType = new Map<string, { kind: EntityKind; index: number; opens: boolean }>();
kinds.forEach((kind, index) => {
  kindByType.set(kind.open, { kind, index, opens: true });
  for (const close of kind.close) kindByType.set(close, { kind, index, opens: false });
});

/** What is open on an AG-UI stream, and what it takes to close it. */
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
  // One map per kind, in open order; a step is keyed by lane and name, the rest by id.
  const open = kinds.map(() => new Map<string, { id: string; lane: Lane }>());
  const pending = new Set<string>();
  // Subagents that have finished or failed: their ids are per invocation and never come back.
  const endedSubagents = new Set<string>();
  const stepIndex = kinds.findIndex((kind) => kind.idField === 'stepName');
  const subagentIndex = kinds.findIndex((kind) => kind.idField === 'subagentRunId');
  return {
    observe(event) {
      if (event.type === EventType.TOOL_CALL_RESULT) {
        pending.delete(event.toolCallId);
        return;
      }
      const entry = kindByType.get(event.type);
      if (entry === undefined) return;
      const fields = event as unknown as Record<string, string | undefined>;
      const id = fields[entry.kind.idField] as string;
      const lane = entry.kind.idField === 'subagentRunId' ? undefined : fields.subagentRunId;
      const key = entry.kind.idField === 'stepName' ? `${lane ?? ''}\u0000${id}` : id;
      if (entry.opens) {
        open[entry.index].set(key, { id, lane });
        if (event.type === EventType.TOOL_CALL_START) pending.add(id);
      } else {
        open[entry.index].delete(key);
        if (entry.kind.idField === 'subagentRunId') endedSubagents.add(id);
      }
    },
    closeAll(reason) {
      const closers: Event[] = [];
      kinds.forEach((kind, index) => {
        // Steps and subagents nest: close the latest first.
        const entities = [...open[index].values()];
        if (kind.idField === 'stepName' || kind.idField === 'subagentRunId') entities.reverse();
        for (const { id, lane } of entities) closers.push(kind.closer(id, lane, reason));
        open[index].clear();
      });
      return closers;
    },
    pendingToolCallIds: () => [...pending],
    sequenceProblem(event) {
      switch (event.type) {
        case EventType.STEP_STARTED:
        case EventType.STEP_FINISHED: {
          const lane = event.subagentRunId;
          const isOpen = open[stepIndex].has(`${lane ?? ''}\u0000${event.stepName}`);
          if (event.type === EventType.STEP_STARTED && isOpen) {
            return { fatal: false, message: `Dropped a second STEP_STARTED for step '${event.stepName}' of ${describeLane(lane)}, which is already running. Finish a step before starting it again.` };
          }
          if (event.type === EventType.STEP_FINISHED && !isOpen) {
            return { fatal: false, message: `Dropped STEP_FINISHED for step '${event.stepName}': no such step of ${describeLane(lane)} is running. Finish a step once, after its STEP_STARTED, with the same subagentRunId.` };
          }
          return undefined;
        }
        case EventType.SUBAGENT_STARTED: {
          const id = event.subagentRunId;
          if (open[subagentIndex].has(id)) {
            return { fatal: false, message: `Dropped a second SUBAGENT_STARTED for subagent '${id}', which is already running.` };
          }
          if (endedSubagents.has(id)) {
            return { fatal: true, message: `SUBAGENT_STARTED reuses subagentRunId '${id}', which already finished in this run. Give each subagent invocation a fresh subagentRunId.` };
          }
          const parent = event.parentSubagentRunId;
          if (parent !== undefined && !open[subagentIndex].has(parent) && !endedSubagents.has(parent)) {
            return { fatal: true, message: `SUBAGENT_STARTED for '${id}' names parentSubagentRunId '${parent}', which was never started in this run. Start the parent subagent first.` };
          }
          return undefined;
        }
        case EventType.SUBAGENT_FINISHED:
        case EventType.SUBAGENT_ERROR:
          return open[subagentIndex].has(event.subagentRunId)
            ? undefined
            : { fatal: false, message: `Dropped ${event.type} for subagent '${event.subagentRunId}': no such subagent is running. Send SUBAGENT_STARTED first, and end a subagent once.` };
        default:
          return undefined;
      }
    },
  };
}
