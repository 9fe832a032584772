import type { RunAgentInput } from '@ag-ui/core';
import { AguiRxError, errorMessage } from '../protocol/errors.js';

// The Standard Schema interface (standardschema.dev, v1), declared here as types only: zod (3.24+),
// valibot and arktype schemas carry it, so that any of them checks a state without an adapter.

/** A validator that implements Standard Schema v1 (`~standard`): zod 3.24+, valibot, arktype, or your own. */
export interface StandardSchemaV1<Input = unknown, Output = Input> {
  readonly '~standard': {
    readonly version: 1;
    readonly vendor: string;
    /** Checks a value: the (possibly transformed) value, or the issues; synchronously or as a promise. */
    readonly validate: (value: unknown) => StandardSchemaResult<Output> | Promise<StandardSchemaResult<Output>>;
    readonly types?: { readonly input: Input; readonly output: Output } | undefined;
  };
}

/** What a Standard Schema validator returns: `{ value }` when valid, `{ issues }` when not. */
export type StandardSchemaResult<Output> = { readonly value: Output; readonly issues?: undefined } | { readonly issues: readonly StandardSchemaIssue[] };

/** One problem a Standard Schema validator found, and where. */
export interface StandardSchemaIssue {
  readonly message: string;
  readonly path?: readonly (PropertyKey | { readonly key: PropertyKey })[] | undefined;
}

/** The type a Standard Schema validator gives for a valid value. */
export type InferSchemaOutput<Schema extends StandardSchemaV1> = NonNullable<Schema['~standard']['types']>['output'];

/** One failing path of a state, as {@link decodeState} reports it. */
export interface StateIssue {
  /** Where, as dotted segments (`todos.0.done`); `''` for the state itself. */
  path: string;
  /** What the validator said is wrong there. */
  message: string;
}

/** The error {@link decodeState} rejects with: an {@link AguiRxError} `INVALID_STATE` that lists each failing path. */
export type InvalidStateError = AguiRxError & { readonly issues: readonly StateIssue[] };

/** `issues` as {@link StateIssue}s: each path written with dots. */
export function stateIssuesOf(issues: readonly StandardSchemaIssue[]): StateIssue[] {
  return issues.map((issue) => ({
    path: (issue.path ?? []).map((segment) => String(typeof segment === 'object' && segment !== null ? segment.key : segment)).join('.'),
    message: issue.message,
  }));
}

/** The issues as one line for a person: `'todos.0.done': Expected boolean; the state itself: Required`. */
export function describeStateIssues(issues: readonly StateIssue[]): string {
  return issues.map((issue) => `${issue.path === '' ? 'the state itself' : `'${issue.path}'`}: ${issue.message}`).join('; ');
}

/** What a validator's result means: its value, or the INVALID_STATE error naming each failing path. */
function settle<Output>(result: StandardSchemaResult<Output>, vendor: string): Output {
  if (typeof result !== 'object' || result === null) {
    throw new AguiRxError('INVALID_STATE_SCHEMA', `The state schema (${vendor}) returned ${String(result)} instead of { value } or { issues }. Pass a Standard Schema validator.`);
  }
  if (result.issues === undefined) return result.value;
  const issues = stateIssuesOf(result.issues);
  const error = new AguiRxError('INVALID_STATE', `The state does not match its schema: ${describeStateIssues(issues)}. Send a state the schema accepts.`);
  throw Object.assign(error, { issues });
}

/**
 * Checks a value against a Standard Schema validator: its (typed, possibly transformed) value, or
 * an `INVALID_STATE` error naming each failing path. Synchronous when the validator is; a promise
 * when it returns one. A validator that throws, or is not one, is an `INVALID_STATE_SCHEMA` error.
 */
export function validateState<Schema extends StandardSchemaV1>(value: unknown, schema: Schema): InferSchemaOutput<Schema> | Promise<InferSchemaOutput<Schema>> {
  const standard = (schema as Partial<StandardSchemaV1> | null | undefined)?.['~standard'];
  if (typeof standard?.validate !== 'function') {
    throw new AguiRxError('INVALID_STATE_SCHEMA', `The state schema is not a Standard Schema validator (it has no '~standard.validate'). Pass a zod (3.24+), valibot or arktype schema, or an object implementing Standard Schema v1.`);
  }
  let result: StandardSchemaResult<unknown> | Promise<StandardSchemaResult<unknown>>;
  try {
    result = standard.validate(value);
  } catch (error) {
    throw new AguiRxError('INVALID_STATE_SCHEMA', `The state schema (${standard.vendor}) threw while checking the state: ${errorMessage(error, 'no reason given')}. Fix the validator.`);
  }
  if (result instanceof Promise) {
    return result.then(
      (settled) => settle(settled, standard.vendor) as InferSchemaOutput<Schema>,
      (error: unknown) => {
        throw new AguiRxError('INVALID_STATE_SCHEMA', `The state schema (${standard.vendor}) failed while checking the state: ${errorMessage(error, 'no reason given')}. Fix the validator.`);
      },
    );
  }
  return settle(result, standard.vendor) as InferSchemaOutput<Schema>;
}

/**
 * The run's state, typed and checked by any Standard Schema validator (zod 3.24+, valibot,
 * arktype, or your own object with `~standard`).
 *
 * Input: a `RunAgentInput` (what an agent receives; its `state` is read). Output: the validator's
 * value (with its defaults and transforms), typed as the schema's output. Synchronous when the
 * validator is; a promise when the validator is asynchronous (so `await` it either way).
 *
 * Errors (thrown, or the promise rejects): `INVALID_STATE` when the state does not match, with a
 * message naming each failing path and an `issues` list (`{ path: 'todos.0.done', message }`);
 * `INVALID_STATE_SCHEMA` when the schema is not a validator or throws. Inside an agent, after the
 * response has started, either becomes the run's RUN_ERROR; to refuse a bad state with a 400
 * before the stream starts, give the handler `stateSchema` instead.
 *
 * AG-UI rule: `state` is any JSON value the client holds; the protocol does not type it, the agent does.
 *
 * ## Example
 *
 * ```ts
 * const Todos = z.object({ todos: z.array(z.object({ title: z.string(), done: z.boolean() })) });
 * const agent: AguiAgent = (input) => defer(async () => {
 *   const state = await decodeState(input, Todos); // { todos: { title: string; done: boolean }[] }
 *   return myModel$(input.messages, state);
 * }).pipe(mergeAll());
 * // results: a state { todos: [{ title: 1 }] } ends the run with RUN_ERROR INVALID_STATE:
 * // "The state does not match its schema: 'todos.0.title': …; 'todos.0.done': …"
 * ```
 *
 * @param input The run's input (its `state` is checked; absent reads as `undefined`).
 * @param schema A Standard Schema validator of the state.
 * @return The typed state, or a promise of it when the validator is asynchronous.
 */
export function decodeState<Schema extends StandardSchemaV1>(input: Pick<RunAgentInput, 'state'> | { state?: unknown }, schema: Schema): InferSchemaOutput<Schema> | Promise<InferSchemaOutput<Schema>> {
  return validateState((input as { state?: unknown } | null | undefined)?.state, schema);
}
