import type { RunAgentInput } from '@ag-ui/core';
import { MessageSchema } from '@ag-ui/core/schemas';
import { parse as parseContentType } from 'content-type';
import { describeValue } from '../protocol/errors.js';
import { valueAt } from '../protocol/validate.js';
import { hasLoneSurrogate } from '../protocol/values.js';
import { describeStateIssues, validateState, type StandardSchemaV1, type StateIssue } from '../state/decodeState.js';

/** A request the handlers refuse before the stream starts: its status and the reason sent as `{ "error": reason }`. */
export interface InputRefusal {
  status: number;
  reason: string;
}

/** A problem the `@ag-ui/core/schemas` validator reports, read only by its stable fields (its messages change between zod majors). */
interface SchemaIssue {
  readonly code?: string;
  readonly path: readonly PropertyKey[];
  readonly expected?: unknown;
  readonly values?: readonly unknown[];
  readonly options?: readonly unknown[];
  readonly keys?: readonly string[];
  readonly errors?: readonly (readonly SchemaIssue[])[];
  readonly unionErrors?: readonly { issues: readonly SchemaIssue[] }[];
}

/** `a string`, `an array`: a schema's type name as a person says it. */
function withArticle(type: unknown): string {
  const name = String(type);
  return `${/^[aeiou]/.test(name) ? 'an' : 'a'} ${name}`;
}

/** What one alternative of a union needed, from its first issue: `a string`, `an array whose '0.text' is a string`. */
function alternative(issues: readonly SchemaIssue[]): string {
  const first = issues[0];
  if (first === undefined) return 'another form';
  const what = first.code === 'invalid_type' ? withArticle(first.expected) : 'a valid value';
  if (first.path.length === 0) return what;
  return `a value whose '${first.path.map(String).join('.')}' is ${what}`;
}

/** The roles of the `@ag-ui/core` message schema's kinds, read from it (none if its form changes). */
const messageRoles: readonly string[] = (() => {
  const kinds = (MessageSchema as unknown as { options?: readonly { shape?: { role?: { value?: unknown } } }[] }).options ?? [];
  const roles = kinds.map((kind) => kind.shape?.role?.value);
  return roles.every((role) => typeof role === 'string') ? (roles as string[]) : [];
})();

/** One issue in our own words: where, what was there, and what is accepted. */
function describeProblem(json: unknown, issue: SchemaIssue): string {
  const where = issue.path.length === 0 ? 'the body' : `'${issue.path.map(String).join('.')}'`;
  const value = valueAt(json, issue.path);
  const got = describeValue(value);
  switch (issue.code) {
    case 'invalid_type':
      return value === undefined ? `${where} is missing: it must be ${withArticle(issue.expected)}` : `${where} must be ${withArticle(issue.expected)}, not ${got}`;
    case 'invalid_union': {
      const alternatives = issue.errors ?? issue.unionErrors?.map((error) => error.issues) ?? [];
      if (alternatives.length === 0) {
        // A message's role names its kind: the schema's kinds are what it accepts there.
        const accepted = issue.path.length === 3 && issue.path[0] === 'messages' && issue.path[2] === 'role' ? messageRoles : [];
        return `${where} is ${got}, which is not one of the values accepted there${accepted.length > 0 ? ` (${accepted.map((role) => JSON.stringify(role)).join(', ')})` : ''}`;
      }
      return `${where} is ${got}, which matches none of the accepted forms (${alternatives.map(alternative).join('; ')})`;
    }
    case 'invalid_value':
    case 'invalid_enum_value':
    case 'invalid_literal': {
      const accepted = issue.values ?? issue.options ?? (issue.expected === undefined ? [] : [issue.expected]);
      return `${where} is ${got}; accepted: ${accepted.map((option) => JSON.stringify(option)).join(', ')}`;
    }
    case 'unrecognized_keys':
      return `${where} has fields that are not allowed: ${(issue.keys ?? []).map((key) => `'${key}'`).join(', ')}`;
    default:
      return `${where} is ${got}, which is not accepted there`;
  }
}

/**
 * Every problem of a request body that should be a RunAgentInput, in our own words: what the
 * `@ag-ui/core/schemas` validator refused (by path, with the value found and what is accepted),
 * then an empty `threadId` / `runId`. Empty when there is none.
 */
export function runInputProblems(json: unknown, issues: readonly SchemaIssue[]): string[] {
  const problems = issues.map((issue) => describeProblem(json, issue));
  for (const field of ['threadId', 'runId'] as const) {
    if (valueAt(json, [field]) === '') problems.push(`'${field}' is empty: it must name the ${field === 'threadId' ? 'thread' : 'run'}`);
  }
  for (const field of ['threadId', 'runId', 'parentRunId'] as const) {
    const value = valueAt(json, [field]);
    // JSON may escape half a surrogate pair; UTF-8 cannot carry it (it becomes U+FFFD): the client
    // would see another id in the run's events, and its resume and stop URLs name no run.
    if (typeof value === 'string' && hasLoneSurrogate(value)) {
      problems.push(`'${field}' holds half of a UTF-16 surrogate pair (${JSON.stringify(value.slice(0, 40))}), which UTF-8 cannot carry: send ids of whole characters`);
    }
  }
  return problems;
}

/** The 400 for a body with these problems (see {@link runInputProblems}): one reason naming each. */
export function invalidRunInput(problems: readonly string[]): InputRefusal {
  return { status: 400, reason: `The request body is not a valid RunAgentInput: ${problems.join('; ')}.` };
}

/** The 400 for a state the handler's `stateSchema` refuses, naming each failing path. */
function invalidState(issues: readonly StateIssue[]): InputRefusal {
  return { status: 400, reason: `The request's state does not match this agent's state schema: ${describeStateIssues(issues)}. Send a state the agent accepts.` };
}

/** What {@link checkState} decided: the input to run, or the refusal to answer with. */
export type StateCheck = { input: RunAgentInput; refusal?: undefined } | { refusal: InputRefusal };

/**
 * The input, once the handler's `stateSchema` accepts its `state`, or the refusal: 400 naming each
 * failing path; 500 when the validator itself fails (a server error: its message stays on the
 * server, in a console warning). The input goes on unchanged, not as the validator's value: its
 * state is the client's copy, which the run's state deltas are computed against (an agent wanting
 * the typed value with defaults calls `decodeState`). Synchronous unless the validator is asynchronous.
 */
export function checkState(input: RunAgentInput, schema: StandardSchemaV1 | undefined): StateCheck | Promise<StateCheck> {
  if (schema === undefined) return { input };
  const accept = (): StateCheck => ({ input });
  const refuse = (error: unknown): StateCheck => {
    const { code, issues, message } = (error ?? {}) as { code?: unknown; issues?: readonly StateIssue[]; message?: unknown };
    if (code === 'INVALID_STATE' && issues !== undefined) return { refusal: invalidState(issues) };
    console.warn(`[agui-rx] stateSchema could not check a request's state: ${String(message ?? error)}`);
    return { refusal: { status: 500, reason: "The server could not check the request's state: its state schema failed. This is a server error." } };
  };
  try {
    const state = validateState(input.state, schema);
    return state instanceof Promise ? state.then(accept, refuse) : accept();
  } catch (error) {
    return refuse(error);
  }
}

/**
 * `then`, called with the input once its state is checked ({@link checkState}); `refuse` with the
 * refusal instead: for the callback-style node:http handler.
 */
export function withCheckedState(schema: StandardSchemaV1 | undefined, refuse: (refusal: InputRefusal) => void, then: (input: RunAgentInput) => void): (input: RunAgentInput) => void {
  const settle = (checked: StateCheck) => (checked.refusal === undefined ? then(checked.input) : refuse(checked.refusal));
  return (input) => {
    const checked = checkState(input, schema);
    // A throw in `then` after an asynchronous check must not become an unhandled rejection.
    if (checked instanceof Promise) void checked.then(settle).catch(() => refuse({ status: 500, reason: 'The server failed to start the run. This is a server error.' }));
    else settle(checked);
  };
}

/**
 * Why a request's body is not taken as the RunAgentInput for its media type, or `undefined` when it
 * may be: 415 for a `Content-Type` that is not JSON (`application/json`, or a `+json` type: RFC 6839
 * §3.1), and for a browser's request (it has an `Origin`) without one. Why: a browser sends a
 * cross-site POST of `text/plain`, a form or a type-less body without asking the server first
 * (no CORS preflight), cookies included; taken as JSON, it would run the agent for any page the
 * user visits. A JSON type makes the browser ask first, and `cors` answer. A request with neither
 * header (a server's own client that sends no type) is read as JSON; `curl -d` sends a form type
 * and `fetch` a string body as text/plain: both need the header (`curl --json` sets it).
 *
 * @param type The request's `Content-Type` header, if any.
 * @param origin The request's `Origin` header, if any.
 */
export function contentTypeRefusal(type: string | undefined, origin: string | undefined, encoding?: string): InputRefusal | undefined {
  const fix = "POST the RunAgentInput as JSON, with the header 'Content-Type: application/json'";
  // A compressed body would be read as JSON text: garbage in the 400's message, not a reason.
  if (encoding !== undefined && encoding.trim() !== '' && encoding.trim().toLowerCase() !== 'identity') {
    return { status: 415, reason: `The request body is sent with 'Content-Encoding: ${encoding.slice(0, 40)}', which this endpoint does not decode: send the RunAgentInput uncompressed.` };
  }
  if (type === undefined || type === '') {
    return origin === undefined ? undefined : { status: 415, reason: `The request has no Content-Type: ${fix}. A browser sends an untyped body across sites without asking first, so it is refused.` };
  }
  // The media type, lowercased, and its parameters (`; charset=utf-8`).
  const { type: mediaType, parameters } = parseContentType(type);
  const charset = parameters.charset?.toLowerCase();
  if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8') {
    return { status: 415, reason: `The Content-Type says 'charset=${charset.slice(0, 40)}', but JSON is sent as UTF-8 (RFC 8259 §8.1): send the RunAgentInput as UTF-8, with 'charset=utf-8' or none.` };
  }
  if (mediaType === 'application/json' || mediaType.endsWith('+json')) return undefined;
  // What fetch and `new Request` send a string body as when not told otherwise.
  const implicit = mediaType === 'text/plain' ? " (fetch and new Request send a string body as text/plain unless given the header)" : '';
  return { status: 415, reason: `The Content-Type '${mediaType}' is not JSON${implicit}: ${fix}. A browser sends other types across sites without asking first, so they are refused.` };
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * A request body's bytes as text, or the 400 for bytes that are no UTF-8: JSON between systems is
 * UTF-8 (RFC 8259 §8.1), and a body in another encoding read as UTF-8 would change its text silently.
 */
export function bodyText(bytes: Uint8Array): string | InputRefusal {
  try {
    return utf8.decode(bytes);
  } catch {
    return { status: 400, reason: 'The request body is not valid UTF-8: send the RunAgentInput as UTF-8 JSON (RFC 8259 §8.1), converting text that is in another encoding first.' };
  }
}
