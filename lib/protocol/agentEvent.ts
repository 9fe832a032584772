import {
  EventType,
  type Event,
  type RunFinishedEvent,
  type RunStartedEvent,
  type TokenUsage,
  type ToolCallResultEvent,
} from '@ag-ui/core';
import { AguiRxError, describeValue } from './errors.js';
import { entityEvents, terminalEventTypes } from './table.js';

/**
 * Toolkit-only event types: things AG-UI has no event for, which a producer still needs to say.
 * `mapRunLifecycle` consumes them; they never reach the wire.
 */
export const ToolkitEventType = {
  /** Token usage reported mid-run; aggregated onto RUN_FINISHED / RUN_ERROR `usage`. */
  TOKEN_USAGE: 'TOKEN_USAGE',
} as const;

/**
 * Token usage reported during the run (a provider's per-call usage, say).
 * `mapRunLifecycle` sums every report per (provider, model) with `aggregateTokenUsage`
 * from @ag-ui/core and puts the result on the terminal event's `usage`. Counts are tokens.
 */
export interface TokenUsageEvent {
  /** Always `TOKEN_USAGE`. */
  type: typeof ToolkitEventType.TOKEN_USAGE;
  /** Token counts of one model call, or a list of them (AG-UI `TokenUsage`: non-negative integers). */
  usage: TokenUsage | TokenUsage[];
  /** When the usage was reported, in ms since the epoch. */
  timestamp?: number | undefined;
}

/** A toolkit-only event: consumed by the operators, never sent. */
export type ToolkitEvent = TokenUsageEvent;

/** TOOL_CALL_RESULT as a producer may send it: `messageId` is minted when absent; object content is serialised to JSON text. */
export type AgentToolCallResultEvent = Omit<ToolCallResultEvent, 'messageId' | 'content'> & {
  /** The tool message's id. Default: minted by `toolCallCorrelator`. */
  messageId?: string | undefined;
  /**
   * The result: text, AG-UI content parts, or any JSON value (sent as JSON text). `unknown`, as
   * a tool's output is typed in most frameworks; a value JSON cannot carry (a function, a BigInt,
   * `undefined`) is a RUN_ERROR `INVALID_EVENT` naming the call.
   */
  content: unknown;
};

/** RUN_STARTED as a producer may send it: `threadId`/`runId` come from `mapRunLifecycle`'s options. */
export type AgentRunStartedEvent = Omit<RunStartedEvent, 'threadId' | 'runId'> & {
  /** Default (and overridden by): `mapRunLifecycle`'s `threadId` option. */
  threadId?: string | undefined;
  /** Default (and overridden by): `mapRunLifecycle`'s `runId` option. */
  runId?: string | undefined;
};

/** RUN_FINISHED as a producer may send it: `threadId`/`runId` come from `mapRunLifecycle`'s options. */
export type AgentRunFinishedEvent = Omit<RunFinishedEvent, 'threadId' | 'runId'> & {
  /** Default (and overridden by): `mapRunLifecycle`'s `threadId` option. */
  threadId?: string | undefined;
  /** Default (and overridden by): `mapRunLifecycle`'s `runId` option. */
  runId?: string | undefined;
};

/**
 * What the operators accept: every AG-UI 1.0 event, with what the toolkit can supply itself
 * made optional, plus the {@link ToolkitEvent}s.
 *
 * - ids may be left out where they can be minted: `messageId` on TEXT_MESSAGE_CHUNK,
 *   REASONING_MESSAGE_CHUNK and TOOL_CALL_RESULT, `toolCallId` on TOOL_CALL_CHUNK,
 *   `parentMessageId`, `threadId`/`runId` on RUN_STARTED / RUN_FINISHED;
 * - the chunk events are the normal way to stream;
 * - END events and STEP_FINISHED may be left out: the operators close what is open;
 * - STATE_SNAPSHOT may be sent on every change: `stateDelta` decides what goes on the wire.
 */
export type AgentEvent = WithTypeString<
  | Exclude<Event, ToolCallResultEvent | RunStartedEvent | RunFinishedEvent>
  | AgentToolCallResultEvent
  | AgentRunStartedEvent
  | AgentRunFinishedEvent
  | ToolkitEvent
>;

/**
 * Each event with its `type` also accepted as the plain string (`'TEXT_MESSAGE_CHUNK'` as well as
 * `EventType.TEXT_MESSAGE_CHUNK`): the wire value is the same, and JSON or JavaScript producers have only the string.
 * Its optional fields also admit `undefined` (JSON leaves them out), so that code compiled with
 * `exactOptionalPropertyTypes` can pass a value that may be missing (`toolCallName: name` on every chunk).
 */
export type WithTypeString<E> = E extends { type: infer T extends string }
  ? OptionalAdmitsUndefined<Omit<E, 'type'>> & {
      /** The event type: the `EventType` member or its string value. */
      type: T | `${T}`;
    }
  : never;

/** `E` with each optional field's type widened by `undefined`: the same object under `exactOptionalPropertyTypes` as without it. */
type OptionalAdmitsUndefined<E> = {
  [K in keyof E]: {} extends Pick<E, K> ? E[K] | undefined : E[K];
};

const agentEventTypes: ReadonlySet<string> = new Set<string>([
  ...Object.values(EventType),
  ...Object.values(ToolkitEventType),
]);

/** Whether `type` names an AG-UI 1.0 event type or a toolkit-only one. */
export function isAgentEventType(type: unknown): type is AgentEvent['type'] {
  return typeof type === 'string' && agentEventTypes.has(type);
}

/** Whether `value` is shaped like an {@link AgentEvent}: an object with a known `type`. Fields are checked by the operators. */
export function isAgentEvent(value: unknown): value is AgentEvent {
  return typeof value === 'object' && value !== null && isAgentEventType((value as { type?: unknown }).type);
}

/** Whether `value` is a {@link ToolkitEvent}, which never reaches the wire. */
export function isToolkitEvent(value: unknown): value is ToolkitEvent {
  return typeof value === 'object' && value !== null && (value as { type?: unknown }).type === ToolkitEventType.TOKEN_USAGE;
}

/** An event that ends a run, as {@link isTerminalEvent} narrows it. */
export interface TerminalEventType {
  /** RUN_FINISHED or RUN_ERROR. */
  type: EventType.RUN_FINISHED | EventType.RUN_ERROR;
}

/** Whether `event` ends a run: RUN_FINISHED or RUN_ERROR. */
export function isTerminalEvent(event: { type: string }): event is TerminalEventType {
  return terminalEventTypes.has(event.type);
}

/**
 * The `type` of an input event, or an {@link AguiRxError} (`INVALID_EVENT`) saying why there is none.
 * Operators call it first so that `null`, a string or a type-less object fails with a message, not a TypeError.
 */
export function eventTypeOf(event: unknown): string {
  if (typeof event !== 'object' || event === null) {
    throw new AguiRxError('INVALID_EVENT', `Received ${describeValue(event)} where an AG-UI event object was expected. Emit objects such as { type: 'TEXT_MESSAGE_CHUNK', delta: 'Hi' }.`);
  }
  const type = (event as { type?: unknown }).type;
  if (typeof type !== 'string') {
    throw new AguiRxError('INVALID_EVENT', `Received an event without a string 'type' (got ${describeValue(type)}). Every event needs a type, e.g. 'TEXT_MESSAGE_CHUNK'.${hintForUntyped(event)}`);
  }
  return type;
}

/** The lane of an event: its `subagentRunId`, or `undefined` for the parent agent. */
export type Lane = string | undefined;

/** Names a lane in messages: `the parent agent` or `subagent 's1'`. */
export function describeLane(lane: Lane): string {
  return lane === undefined ? 'the parent agent' : `subagent '${lane}'`;
}

/** Reads and checks an optional string field; `null` and other types are an `INVALID_EVENT` error. */
export function optionalString(event: Record<string, unknown>, field: string): string | undefined {
  return stringField(event, field, event[field]);
}

/**
 * `value`, read by the caller as `event[field]`, when it is a string or absent.
 * Hot paths read their fields by name and pass them here: a read through a variable key is slow.
 *
 * @throws {AguiRxError} `INVALID_EVENT` when `value` is anything else.
 */
export function stringField(event: Record<string, unknown>, field: string, value: unknown): string | undefined {
  if (value === undefined || typeof value === 'string') return value;
  throw new AguiRxError(
    'INVALID_EVENT',
    `${String(event.type)} has '${field}: ${describeValue(value)}', but '${field}' must be a string${value === null ? ': omit an optional field rather than sending null' : ''}.`,
  );
}

/**
 * The message a `parentMessageId` value names, as the client reads it: a non-empty string; an
 * empty one names none (`@ag-ui/client` names the call's message after the call then), and so
 * does anything that is not a string. Every operator reads it so, as the client will.
 */
export function namedParentId(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/**
 * The message a tool call's event names as its parent: its `parentMessageId` checked as
 * {@link optionalString} does, read as {@link namedParentId} reads it.
 *
 * @throws {AguiRxError} `INVALID_EVENT` when `parentMessageId` is neither a string nor absent.
 */
export function parentMessageIdOf(event: Record<string, unknown>): string | undefined {
  return namedParentId(stringField(event, 'parentMessageId', event.parentMessageId));
}

/** Reads and checks a required string field. */
export function requiredString(event: Record<string, unknown>, field: string): string {
  const value = optionalString(event, field);
  if (value === undefined) {
    // A content event without its id: the chunk of its kind is what gets an id filled in.
    const entry = entityEvents.get(event.type as string);
    const chunk = entry !== undefined && entry.role === 'content' && entry.kind.idField === field ? entry.kind.chunk : undefined;
    const instead = chunk === undefined ? '' : `, or send ${chunk}, whose ${field} toAgui fills in`;
    throw new AguiRxError('INVALID_EVENT', `${String(event.type)} has no '${field}'. Add '${field}' (a string) to the event${instead}.`);
  }
  return value;
}

/** The lane (`subagentRunId`) of an input event, checked. */
export function laneOf(event: Record<string, unknown>): Lane {
  return stringField(event, 'subagentRunId', event.subagentRunId);
}

/** Copies the base fields every AG-UI event may carry (timestamp, rawEvent, metadata, subagentRunId) when set. */
export function copyBaseFields<T extends object>(from: Record<string, unknown>, to: T): T {
  const target = to as Record<string, unknown>;
  if (from.timestamp !== undefined) target.timestamp = from.timestamp;
  if (from.rawEvent !== undefined) target.rawEvent = from.rawEvent;
  if (from.metadata !== undefined) target.metadata = from.metadata;
  if (from.subagentRunId !== undefined) target.subagentRunId = from.subagentRunId;
  return to;
}

/** Whether `event` carries none of the optional fields every event may carry (read by name). */
export function hasNoBaseFields(event: Record<string, unknown>): boolean {
  return event.subagentRunId === undefined && event.timestamp === undefined && event.metadata === undefined && event.rawEvent === undefined;
}

/** `{ subagentRunId }` when the lane is a subagent, else nothing: optional fields are omitted, never undefined-valued. */
export function laneFields(lane: Lane): { subagentRunId?: string } {
  return lane === undefined ? {} : { subagentRunId: lane };
}

/**
 * What a person most likely meant by an event AG-UI does not describe: the same type written in
 * another case, or a provider's stream event given to the operators without its adapter. Each
 * hint starts with a space, to follow a message; empty when there is none.
 */

// Provider stream event types (from each API's streaming reference), by the adapter that reads them.
const providerTypes: readonly [test: (type: string) => boolean, adapter: string, provider: string][] = [
  [(type) => /^(message_(start|delta|stop)|content_block_(start|delta|stop)|ping)$/.test(type), 'fromAnthropicMessages()', 'an Anthropic Messages'],
  [(type) => type.startsWith('response.'), 'fromOpenAIResponses()', 'an OpenAI Responses'],
  [
    (type) =>
      /^(text|reasoning|tool-input)-(start|delta|end)$|^(start|finish)-step$|^tool-(call|result|error|input-(available|error)|output-(available|error|denied)|approval-request)$|^(start|finish|abort|stream-start|(response|message)-metadata|source(-url|-document)?|file|raw)$|^data-./.test(type) ||
      // AI SDK 4's own part types.
      /^(reasoning|reasoning-signature|redacted-reasoning|tool-call-streaming-start|tool-call-delta|step-start|step-finish)$/.test(type),
    'fromAiSdkStream()',
    'an AI SDK',
  ],
];

// The error event of the Anthropic Messages and AI SDK streams (their other types tell which it is; this one does not).
const providerError = " It looks like a provider's error event (Anthropic Messages and the AI SDK send `{ type: 'error' }`): read the provider's stream with fromAnthropicMessages() or fromAiSdkStream() before toAgui, which turn it into RUN_ERROR; an agent of your own emits RUN_ERROR itself.";

/** For an event whose `type` AG-UI does not describe: the AG-UI type it spells in another case, or the adapter that reads it. */
export function hintForUnknownType(type: string): string {
  if (type === 'error') return providerError;
  const spelled = type.toUpperCase().replace(/[-.\s]/g, '_');
  const meant = spelled !== type && agentEventTypes.has(spelled) ? ` Did you mean '${spelled}'? AG-UI's event types are written in upper case.` : '';
  for (const [test, adapter, provider] of providerTypes) {
    if (!test(type)) continue;
    // Both (an AI SDK 'reasoning-start' spells REASONING_START): the event's fields tell which it is.
    if (meant !== '') return `${meant} If it is ${provider} stream event, read the provider's stream with ${adapter} before toAgui.`;
    return ` It looks like ${provider} stream event: read the provider's stream with ${adapter} before toAgui.`;
  }
  return meant;
}

/** For an event without a string `type`: the adapter that reads it, when it looks like a provider's chunk. */
export function hintForUntyped(event: object): string {
  const fields = event as { object?: unknown; choices?: unknown; event?: unknown };
  // A hint never replaces the error it adds to: a field that throws when read (a hostile getter) gives none.
  try {
    if (fields.object === 'chat.completion.chunk' || Array.isArray(fields.choices)) {
      return ' It looks like an OpenAI Chat Completions chunk: read the provider\'s stream with fromOpenAIChatCompletions() before toAgui.';
    }
    if (typeof fields.event === 'string' && fields.event.startsWith('on_')) return ' It looks like a LangChain stream event: read the stream with fromLangChainStreamEvents() before toAgui.';
  } catch {
    // No hint.
  }
  return '';
}
