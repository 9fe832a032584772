import {
  EventType,
  type JsonPatchOperation,
  type ReasoningEndEvent,
  type ReasoningMessageChunkEvent,
  type ReasoningMessageContentEvent,
  type ReasoningMessageEndEvent,
  type ReasoningMessageStartEvent,
  type ReasoningStartEvent,
  type RunErrorEvent,
  type RunFinishedEvent,
  type RunStartedEvent,
  type StateDeltaEvent,
  type StateSnapshotEvent,
  type TextMessageChunkEvent,
  type TextMessageContentEvent,
  type TextMessageEndEvent,
  type TextMessageStartEvent,
  type ToolCallArgsEvent,
  type ToolCallChunkEvent,
  type ToolCallEndEvent,
  type ToolCallStartEvent,
} from '@ag-ui/core';
import type { AgentToolCallResultEvent } from '../protocol/agentEvent.js';
import type { IdGenerator } from '../protocol/generateId.js';

/** Extra fields for an event a factory builds (`subagentRunId`, `timestamp`, `parentMessageId`…); they override the defaults. */
export type EventFields<E> = Partial<Omit<E, 'type'>>;

/** Options of {@link aguiMarbles}. */
export interface AguiMarblesOptions {
  /** The run's thread id, on RUN_STARTED / RUN_FINISHED and in `runOptions`. Default: `'thread-1'`. */
  threadId?: string | undefined;
  /** The run's id, on RUN_STARTED / RUN_FINISHED and in `runOptions`. Default: `'run-1'`. */
  runId?: string | undefined;
  /** What `generateId` puts before its counter. Default: `'id-'`, so ids are `id-1`, `id-2`, … */
  idPrefix?: string | undefined;
}

/** The run options {@link AguiMarbles.runOptions} gives, for `toAgui` / `mapRunLifecycle`. */
export interface AguiMarblesRunOptions {
  /** The run's thread id. */
  threadId: string;
  /** The run's id. */
  runId: string;
  /** The {@link AguiMarbles.generateId} of the same `aguiMarbles()`: ids `id-1`, `id-2`, … */
  generateId: IdGenerator;
}

/** The events of one text message (`role: 'assistant'`), all with the `messageId` given to {@link AguiMarbles.text}. */
export interface TextMarbles {
  /** TEXT_MESSAGE_START `{ messageId, role: 'assistant' }`. */
  start(fields?: EventFields<TextMessageStartEvent>): TextMessageStartEvent;
  /** TEXT_MESSAGE_CONTENT `{ messageId, delta }`. */
  content(delta: string, fields?: EventFields<TextMessageContentEvent>): TextMessageContentEvent;
  /** TEXT_MESSAGE_END `{ messageId }`. */
  end(fields?: EventFields<TextMessageEndEvent>): TextMessageEndEvent;
  /** TEXT_MESSAGE_CHUNK `{ messageId, delta }`: input that names its message. */
  chunk(delta: string, fields?: EventFields<TextMessageChunkEvent>): TextMessageChunkEvent;
}

/** The events of one reasoning message and its span, all with the `messageId` given to {@link AguiMarbles.reasoning}. */
export interface ReasoningMarbles {
  /** REASONING_START `{ messageId }`: opens the span. */
  start(fields?: EventFields<ReasoningStartEvent>): ReasoningStartEvent;
  /** REASONING_MESSAGE_START `{ messageId, role: 'reasoning' }`. */
  messageStart(fields?: EventFields<ReasoningMessageStartEvent>): ReasoningMessageStartEvent;
  /** REASONING_MESSAGE_CONTENT `{ messageId, delta }`. */
  content(delta: string, fields?: EventFields<ReasoningMessageContentEvent>): ReasoningMessageContentEvent;
  /** REASONING_MESSAGE_END `{ messageId }`. */
  messageEnd(fields?: EventFields<ReasoningMessageEndEvent>): ReasoningMessageEndEvent;
  /** REASONING_END `{ messageId }`: closes the span. */
  end(fields?: EventFields<ReasoningEndEvent>): ReasoningEndEvent;
  /** REASONING_MESSAGE_CHUNK `{ messageId, delta }`: input that names its message. */
  chunk(delta: string, fields?: EventFields<ReasoningMessageChunkEvent>): ReasoningMessageChunkEvent;
}

/** The events of one tool call, all with the `toolCallId` (and name) given to {@link AguiMarbles.toolCall}. */
export interface ToolCallMarbles {
  /** TOOL_CALL_START `{ toolCallId, toolCallName }`; pass `{ parentMessageId }` when a text message was open. */
  start(fields?: EventFields<ToolCallStartEvent>): ToolCallStartEvent;
  /** TOOL_CALL_ARGS `{ toolCallId, delta }`: a fragment of the JSON arguments. */
  args(delta: string, fields?: EventFields<ToolCallArgsEvent>): ToolCallArgsEvent;
  /** TOOL_CALL_END `{ toolCallId }`. */
  end(fields?: EventFields<ToolCallEndEvent>): ToolCallEndEvent;
  /**
   * TOOL_CALL_RESULT `{ toolCallId, content, messageId? }`. On the wire `messageId` is required and
   * `content` is text (the operators serialise an object to JSON); as input both may be left to the operators.
   */
  result(content: AgentToolCallResultEvent['content'], messageId?: string, fields?: EventFields<AgentToolCallResultEvent>): AgentToolCallResultEvent;
  /** TOOL_CALL_CHUNK `{ toolCallId, toolCallName, delta }`: input that names its call. */
  chunk(delta: string, fields?: EventFields<ToolCallChunkEvent>): ToolCallChunkEvent;
}

/** What {@link aguiMarbles} returns: ids, the run's options, and a factory for each event a marble value stands for. */
export interface AguiMarbles {
  /** The run's thread id (default `'thread-1'`). */
  readonly threadId: string;
  /** The run's id (default `'run-1'`). */
  readonly runId: string;
  /** A deterministic id generator for the operators' `generateId` option: `id-1`, `id-2`, … (one counter per `aguiMarbles()`). */
  readonly generateId: IdGenerator;
  /** `{ threadId, runId, generateId }`: the options `toAgui` / `mapRunLifecycle` need, for this run. */
  readonly runOptions: AguiMarblesRunOptions;
  /** The `n`-th id `generateId` mints (from 1): `id(2)` is `'id-2'`. Does not advance the counter. */
  id(n: number): string;
  /** Input chunks that name no id, as an agent emits them: the operators mint the ids. */
  readonly chunk: {
    /** TEXT_MESSAGE_CHUNK `{ delta }`. */
    text(delta: string, fields?: EventFields<TextMessageChunkEvent>): TextMessageChunkEvent;
    /** REASONING_MESSAGE_CHUNK `{ delta }`. */
    reasoning(delta: string, fields?: EventFields<ReasoningMessageChunkEvent>): ReasoningMessageChunkEvent;
    /** TOOL_CALL_CHUNK `{ toolCallName, delta }`. */
    toolCall(toolCallName: string, delta: string, fields?: EventFields<ToolCallChunkEvent>): ToolCallChunkEvent;
  };
  /** The events of text message `messageId`. */
  text(messageId: string): TextMarbles;
  /** The events of reasoning message `messageId` and its reasoning span. */
  reasoning(messageId: string): ReasoningMarbles;
  /** The events of tool call `toolCallId` to tool `toolCallName`. */
  toolCall(toolCallId: string, toolCallName: string): ToolCallMarbles;
  /** State events. */
  readonly state: {
    /** STATE_SNAPSHOT `{ snapshot }`: the whole state. */
    snapshot(snapshot: unknown, fields?: EventFields<StateSnapshotEvent>): StateSnapshotEvent;
    /** STATE_DELTA `{ delta }`: RFC 6902 JSON Patch operations. */
    delta(operations: JsonPatchOperation[], fields?: EventFields<StateDeltaEvent>): StateDeltaEvent;
  };
  /** The run's lifecycle events, as `mapRunLifecycle` (and `toAgui`) send them. */
  readonly run: {
    /** RUN_STARTED `{ threadId, runId, protocolVersion: '1.0' }`. */
    started(fields?: EventFields<RunStartedEvent>): RunStartedEvent;
    /** RUN_FINISHED `{ threadId, runId, outcome: { type: 'success' } }`; pass `{ outcome }` for pending tool calls or an interrupt. */
    finished(fields?: EventFields<RunFinishedEvent>): RunFinishedEvent;
    /** RUN_ERROR `{ message, code? }`. */
    error(message: string, fields?: EventFields<RunErrorEvent>): RunErrorEvent;
  };
}

/**
 * A deterministic {@link IdGenerator}: `${prefix}1`, `${prefix}2`, … with a fresh counter per call,
 * for the operators' `generateId` option in tests.
 *
 * @param prefix What goes before the counter. Default: `'id-'`.
 * @return A generator whose n-th call returns `${prefix}${n}`.
 */
export function sequentialIds(prefix = 'id-'): IdGenerator {
  let n = 0;
  return () => `${prefix}${++n}`;
}

/**
 * Value factories for marble tests of an AG-UI pipeline with RxJS's `TestScheduler`: each letter
 * of a marble diagram stands for an event that one short call builds, with deterministic ids.
 *
 * Input (what an agent emits) uses `chunk.text/reasoning/toolCall` (no ids: the operators mint
 * them) or any factory; the expected output uses the START/CONTENT/END, TOOL_CALL_*, STATE_* and
 * RUN_* factories, shaped exactly as the operators send them, so that `toBe(expected, values)`
 * compares with deep equality. Pass `runOptions` (or `generateId`) to the operators: the ids they
 * mint are then `id-1`, `id-2`, … in the order the operators need them, which `text('id-1')`,
 * `toolCall('id-2', …)` name in the expected values.
 *
 * ```text
 * input:     --a----b--|                a = chunk.text('Hi'), b = chunk.text(' there')
 * expected:  S-(sc)-d--(eF|)            S = run.started(), s/c/d/e = text('id-1').start/content/content/end, F = run.finished()
 * ```
 *
 * Rules (the AG-UI 1.0 shapes the operators send):
 * 1. Text: START `role: 'assistant'`; reasoning: REASONING_MESSAGE_START `role: 'reasoning'`,
 *    inside a REASONING_START/END span with the same `messageId`.
 * 2. TOOL_CALL_START names the call and tool; `parentMessageId` only when given (the operators
 *    set it to the text message open when the call started).
 * 3. RUN_STARTED carries `protocolVersion: '1.0'`; RUN_FINISHED `outcome: { type: 'success' }`;
 *    RUN_ERROR only `message` (and `code` when the error had one), no `threadId`/`runId`.
 * 4. Optional fields are omitted, never `undefined`; `fields` adds or overrides any field.
 *
 * ## Example
 *
 * ```ts
 * const m = aguiMarbles();
 * const testScheduler = new TestScheduler((actual, expected) => console.log(JSON.stringify(actual) === JSON.stringify(expected)));
 * testScheduler.run(({ cold, expectObservable }) => {
 *   const agent$ = cold('--a----b--|', { a: m.chunk.text('Hi'), b: m.chunk.text(' there') });
 *   const hi = m.text('id-1');
 *   expectObservable(agent$.pipe(toAgui(m.runOptions))).toBe('S-(sc)-d--(eF|)', {
 *     S: m.run.started(), s: hi.start(), c: hi.content('Hi'), d: hi.content(' there'), e: hi.end(), F: m.run.finished(),
 *   });
 * });
 * // results: true
 * ```
 *
 * @param options The run's `threadId` / `runId` and the id prefix.
 * @return An {@link AguiMarbles}: ids, `runOptions`, and the event factories.
 */
export function aguiMarbles(options: AguiMarblesOptions = {}): AguiMarbles {
  const threadId = options.threadId ?? 'thread-1';
  const runId = options.runId ?? 'run-1';
  const prefix = options.idPrefix ?? 'id-';
  const generateId = sequentialIds(prefix);

  return {
    threadId,
    runId,
    generateId,
    runOptions: { threadId, runId, generateId },
    id: (n) => `${prefix}${n}`,
    chunk: {
      text: (delta, fields) => ({ type: EventType.TEXT_MESSAGE_CHUNK, delta, ...fields }),
      reasoning: (delta, fields) => ({ type: EventType.REASONING_MESSAGE_CHUNK, delta, ...fields }),
      toolCall: (toolCallName, delta, fields) => ({ type: EventType.TOOL_CALL_CHUNK, toolCallName, delta, ...fields }),
    },
    text: (messageId) => ({
      start: (fields) => ({ type: EventType.TEXT_MESSAGE_START, messageId, role: 'assistant', ...fields }),
      content: (delta, fields) => ({ type: EventType.TEXT_MESSAGE_CONTENT, messageId, delta, ...fields }),
      end: (fields) => ({ type: EventType.TEXT_MESSAGE_END, messageId, ...fields }),
      chunk: (delta, fields) => ({ type: EventType.TEXT_MESSAGE_CHUNK, messageId, delta, ...fields }),
    }),
    reasoning: (messageId) => ({
      start: (fields) => ({ type: EventType.REASONING_START, messageId, ...fields }),
      messageStart: (fields) => ({ type: EventType.REASONING_MESSAGE_START, messageId, role: 'reasoning', ...fields }),
      content: (delta, fields) => ({ type: EventType.REASONING_MESSAGE_CONTENT, messageId, delta, ...fields }),
      messageEnd: (fields) => ({ type: EventType.REASONING_MESSAGE_END, messageId, ...fields }),
      end: (fields) => ({ type: EventType.REASONING_END, messageId, ...fields }),
      chunk: (delta, fields) => ({ type: EventType.REASONING_MESSAGE_CHUNK, messageId, delta, ...fields }),
    }),
    toolCall: (toolCallId, toolCallName) => ({
      start: (fields) => ({ type: EventType.TOOL_CALL_START, toolCallId, toolCallName, ...fields }),
      args: (delta, fields) => ({ type: EventType.TOOL_CALL_ARGS, toolCallId, delta, ...fields }),
      end: (fields) => ({ type: EventType.TOOL_CALL_END, toolCallId, ...fields }),
      result: (content, messageId, fields) => ({ type: EventType.TOOL_CALL_RESULT, toolCallId, content, ...(messageId === undefined ? {} : { messageId }), ...fields }),
      chunk: (delta, fields) => ({ type: EventType.TOOL_CALL_CHUNK, toolCallId, toolCallName, delta, ...fields }),
    }),
    state: {
      snapshot: (snapshot, fields) => ({ type: EventType.STATE_SNAPSHOT, snapshot, ...fields }),
      delta: (operations, fields) => ({ type: EventType.STATE_DELTA, delta: operations, ...fields }),
    },
    run: {
      started: (fields) => ({ type: EventType.RUN_STARTED, threadId, runId, protocolVersion: '1.0', ...fields }),
      finished: (fields) => ({ type: EventType.RUN_FINISHED, threadId, runId, outcome: { type: 'success' }, ...fields }),
      error: (message, fields) => ({ type: EventType.RUN_ERROR, message, ...fields }),
    },
  };
}
