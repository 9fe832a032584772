import { EventType, type TokenUsage } from '@ag-ui/core';
import { ToolkitEventType, type AgentEvent } from '../protocol/agentEvent.js';
import type { DiagnosticHandler } from '../protocol/diagnostics.js';
import { AguiRxError, describeValue, errorMessage } from '../protocol/errors.js';
import { isObject } from '../protocol/values.js';

export { errorMessage };

/**
 * What every adapter reads provider data with: the object check, field readers whose errors name
 * the field's path (one wording for each kind of mistake), the adapter's error, and the RAW and
 * TOKEN_USAGE events it sends. Not part of the public API.
 */

/** A record read without trusting its types. */
export type Fields = Record<string, unknown>;

export { isObject };

/** A non-empty string, else `undefined`. */
export function nonEmpty(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** Whether `value` is a position: a non-negative safe integer. */
export function isIndex(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

/** The path of `field` inside the record at `where` (`''` for the input itself). */
export function fieldPath(where: string, field: string): string {
  return where === '' ? field : `${where}.${field}`;
}

/** How one adapter names itself and its input in its errors. */
export interface FieldReadersOptions {
  /** The adapter's name, e.g. `fromOpenAIChatCompletions`. */
  adapter: string;
  /** What a malformed input is called, e.g. `a malformed chat.completion.chunk`. */
  malformed: string;
  /** What one input is called in "Each … must carry one": `event`, `part`, `chunk`. */
  unit: string;
  /** Whether `null` is an absent field (JSON wire formats) or a wrong type (the AI SDK's objects). Default: true. */
  nullIsAbsent?: boolean | undefined;
}

/** Field readers bound to one adapter: each throws its `INVALID_EVENT` error, naming the field's path. */
export interface FieldReaders {
  /** The adapter's `INVALID_EVENT` error: `<adapter> received <malformed>: <detail>`. */
  invalid(detail: string): AguiRxError;
  /** `value` as a record; anything else is an error (`<where> is …, but it must be an object such as <example>.`). */
  object(value: unknown, where: string, example?: string): Fields;
  /** An optional string field: absent (and `null`, where null means absent) is `undefined`; another type is an error. */
  string(fields: Fields, field: string, where: string): string | undefined;
  /** A string field that must be there (it may be empty). */
  requiredString(fields: Fields, field: string, where: string): string;
  /** A string field that must be there and not be empty: an id, a name. */
  requiredName(fields: Fields, field: string, where: string): string;
  /** An optional array field: absent and `null` are `[]`; another type is an error (`it must be <what>`, default `an array`). */
  list(fields: Fields, field: string, where: string, what?: string): unknown[];
  /** A position (a non-negative integer) that must be there; `hint` says what it counts. */
  index(fields: Fields, field: string, where: string, hint?: string): number;
  /** The `index` of a tool call piece: absent and `null` are `undefined`; it may be any integer (some servers start at 1, or count down). */
  toolCallIndex(index: unknown, where: string): number | undefined;
  /** A token count at `path`: absent and `null` are `undefined`; anything but a non-negative integer is an error. */
  count(value: unknown, path: string): number | undefined;
}

/** The field readers of one adapter, made once per adapter module. */
export function fieldReaders(options: FieldReadersOptions): FieldReaders {
  const { adapter, malformed, unit } = options;
  const nullIsAbsent = options.nullIsAbsent ?? true;
  const invalid = (detail: string) => new AguiRxError('INVALID_EVENT', `${adapter} received ${malformed}: ${detail}`);
  const string = (fields: Fields, field: string, where: string): string | undefined => {
    const value = fields[field];
    if (value === undefined || typeof value === 'string') return value;
    if (value === null && nullIsAbsent) return undefined;
    throw invalid(`${fieldPath(where, field)} is ${describeValue(value)}, but it must be a string.`);
  };
  const missing = (field: string, where: string) => invalid(`${where} has no '${field}'. Each ${where} ${unit} must carry one.`);
  return {
    invalid,
    object(value, where, example) {
      if (isObject(value)) return value;
      throw invalid(`${where} is ${describeValue(value)}, but it must be an object${example === undefined ? '' : ` such as ${example}`}.`);
    },
    string,
    requiredString(fields, field, where) {
      const value = string(fields, field, where);
      if (value === undefined) throw missing(field, where);
      return value;
    },
    requiredName(fields, field, where) {
      const value = string(fields, field, where);
      if (value === undefined || value === '') throw missing(field, where);
      return value;
    },
    list(fields, field, where, what = 'an array') {
      const value = fields[field];
      if (value === undefined || value === null) return [];
      if (Array.isArray(value)) return value;
      throw invalid(`${fieldPath(where, field)} is ${describeValue(value)}, but it must be ${what}.`);
    },
    index(fields, field, where, hint) {
      const value = fields[field];
      if (isIndex(value)) return value;
      throw invalid(`${fieldPath(where, field)} is ${describeValue(value)}, but it must be a non-negative integer${hint === undefined ? '' : `: ${hint}`}.`);
    },
    toolCallIndex(index, where) {
      if (index === undefined || index === null) return undefined;
      if (typeof index === 'number' && Number.isSafeInteger(index)) return index;
      throw invalid(`${fieldPath(where, 'index')} is ${describeValue(index)}, but a tool call's index must be an integer.`);
    },
    count(value, path) {
      if (value === undefined || value === null) return undefined;
      if (isIndex(value)) return value;
      throw invalid(`${path} is ${describeValue(value)}, but token counts must be non-negative integers.`);
    },
  };
}

/** The counts of TokenUsage, in the order a report lists them. */
export const countKeys = ['inputTokens', 'outputTokens', 'totalTokens', 'reasoningTokens', 'cachedInputTokens', 'cacheWriteInputTokens'] as const;

/** The counts a provider reported, by TokenUsage field; `undefined` for one it did not report. */
export type UsageCounts = Partial<Record<(typeof countKeys)[number], number | undefined>>;

/** A provider's counts as TokenUsage, labelled with `model` when it is a non-empty string; `undefined` when no count was reported. */
export function usageReport(counts: UsageCounts, model: unknown): TokenUsage | undefined {
  let report: Record<string, unknown> | undefined;
  for (const key of countKeys) {
    const value = counts[key];
    if (value !== undefined) (report ??= {})[key] = value;
  }
  if (report === undefined) return undefined;
  if (typeof model === 'string' && model !== '') report.model = model;
  return report as TokenUsage;
}

/** The toolkit's TOKEN_USAGE event: `toAgui` sends it on as a CUSTOM event (or drops it). */
export function tokenUsageEvent(usage: TokenUsage): AgentEvent {
  return { type: ToolkitEventType.TOKEN_USAGE, usage };
}

/** The first TOOL_CALL_CHUNK of a call: its id, tool name and parent message, its first argument text unless empty, and `metadata` when given. */
export function toolCallStart(toolCallId: string, toolCallName: string, parentMessageId: string, args?: string, metadata?: Record<string, unknown>): AgentEvent {
  const start: AgentEvent =
    args === undefined || args === '' ? { type: EventType.TOOL_CALL_CHUNK, toolCallId, toolCallName, parentMessageId } : { type: EventType.TOOL_CALL_CHUNK, toolCallId, toolCallName, parentMessageId, delta: args };
  return metadata === undefined ? start : { ...start, metadata };
}

/** Reports a drop through `onDiagnostic` unless one with the same `key` (a type) was reported already. */
export type DropReporter = (key: string, message: string, event?: unknown) => void;

/**
 * The drop reporter of one subscription: input an adapter drops is reported once per type, so that
 * a stream full of one kind of part warns once, not once a part. Made inside the subscription, so
 * that a second subscriber (or a `retry`) reports again.
 */
export function createDropReporter(onDiagnostic: DiagnosticHandler): DropReporter {
  // The keys reported so far.
  const reported = new Set<string>();
  return (key, message, event) => {
    if (reported.has(key)) return;
    reported.add(key);
    onDiagnostic({ message, event });
  };
}

/** The RAW event an adapter sends (with `raw: true`) for each provider input, before the events made from it. */
export function rawEvent(event: unknown, source: string): AgentEvent {
  return { type: EventType.RAW, event, source };
}

/**
 * A provider's mid-stream failure as a `PROVIDER_ERROR`, in the provider's words:
 * `<what>: <message> (<type>, <code>). <advice>`; an empty type or code, and the type `error`, say nothing.
 */
export function providerError(what: string, error: Fields, advice = "Retry the request; if it keeps failing, check the request and the provider's status."): AguiRxError {
  const message = nonEmpty(error.message) ?? 'no message given';
  const kind = [error.type, error.code].filter((part) => (typeof part === 'string' && part !== '' && part !== 'error') || typeof part === 'number').join(', ');
  return new AguiRxError('PROVIDER_ERROR', `${what}: ${message}${kind === '' ? '' : ` (${kind})`}. ${advice}`);
}
