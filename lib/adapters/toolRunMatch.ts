import { isObject } from './readers.js';

/**
 * Which unanswered tool call a LangChain tool run answers when nothing names the call (a tool run's
 * events carry only the arguments: langchain-ai/langchain#37426): a pure function of the run's
 * input and the candidate calls, so that two parallel calls of one tool never swap results. Not
 * part of the public API.
 */

/** An unanswered call of the run's tool: its id and its argument text as streamed. */
export interface CandidateCall {
  id: string;
  args: string;
}

/** The call found, or why none is: the reason completes "…, because <reason>". */
export type ToolRunMatch = { toolCallId: string } | { reason: string };

/** Why a run of a tool that no call waits for answers none: code may call a tool itself, so it goes unreported. */
export const noCallWaiting = 'no call of that tool is waiting for a result';

/** "No input" (the tool run's events said nothing of it), as opposed to an input of `undefined`. */
export const noInput: unique symbol = Symbol('no input');

/**
 * The one candidate whose arguments the run's input equals (JSON-wise); failing that, the one whose
 * arguments the input contains (a runtime may add injected fields); failing that, or without input,
 * the only candidate (a tool may take its input in another shape than the call's arguments: a
 * string, coerced types). Among several, anything else is no match: the run answers no call rather
 * than a guessed one.
 */
export function matchToolRun(candidates: readonly CandidateCall[], input: unknown): ToolRunMatch {
  if (candidates.length === 0) return { reason: noCallWaiting };
  if (input === noInput) {
    if (candidates.length === 1) return { toolCallId: candidates[0]!.id };
    return { reason: `its events carry no input to tell ${ids(candidates)} apart` };
  }
  const value = parsedInput(input);
  const parsed = candidates.map((call) => ({ id: call.id, args: parseArgs(call.args) }));
  for (const same of [sameJson, contains]) {
    const found = parsed.filter((call) => call.args !== unparsable && same(call.args, value));
    if (found.length === 1) return { toolCallId: found[0]!.id };
    if (found.length > 1) return { reason: `its input ${preview(value)} fits ${ids(found)} alike` };
  }
  // The one call of that tool waiting: its run, whatever shape the tool gave its input (a string, coerced types).
  if (candidates.length === 1) return { toolCallId: candidates[0]!.id };
  return { reason: `its input ${preview(value)} fits none of ${ids(candidates)}` };
}

const unparsable: unique symbol = Symbol('unparsable');

/** A call's argument text as a value: `{}` when empty (a call without arguments). */
function parseArgs(args: string): unknown {
  if (args.trim() === '') return {};
  try {
    return JSON.parse(args) as unknown;
  } catch {
    return unparsable;
  }
}

/** A run's input as a value: JSON text (an object's) parsed, anything else as it is. */
function parsedInput(input: unknown): unknown {
  if (typeof input !== 'string' || !input.trimStart().startsWith('{')) return input;
  try {
    return JSON.parse(input) as unknown;
  } catch {
    return input;
  }
}

/** Whether two values are the same JSON (object keys in any order). */
export function sameJson(a: unknown, b: unknown): boolean {
  if (Array.isArray(a) || Array.isArray(b)) return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((item, i) => sameJson(item, b[i]));
  if (isObject(a) && isObject(b)) {
    const keys = Object.keys(a).filter((key) => a[key] !== undefined);
    return keys.length === Object.keys(b).filter((key) => b[key] !== undefined).length && keys.every((key) => sameJson(a[key], b[key]));
  }
  return Object.is(a, b);
}

/** Whether the input holds every argument of the call (an object input only). */
function contains(args: unknown, input: unknown): boolean {
  return isObject(args) && isObject(input) && Object.keys(args).every((key) => sameJson(args[key], input[key]));
}

function ids(calls: readonly { id: string }[]): string {
  return calls.map((call) => `'${call.id}'`).join(', ');
}

function preview(value: unknown): string {
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    text = String(value);
  }
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}
