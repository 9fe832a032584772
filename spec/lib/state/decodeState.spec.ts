import { z } from 'zod';
import { decodeState, type InvalidStateError, type StandardSchemaV1 } from '../../../lib/index.js';

const Todos = z.object({
  todos: z.array(z.object({ title: z.string(), done: z.boolean().default(false) })),
  count: z.number(),
});

/** A hand-written asynchronous Standard Schema validator: `{ user: string }`, checked after a tick. */
const asyncUser: StandardSchemaV1<unknown, { user: string }> = {
  '~standard': {
    version: 1,
    vendor: 'hand-written',
    validate: async (value) => {
      await new Promise((resolve) => setImmediate(resolve));
      const user = (value as { user?: unknown } | null)?.user;
      if (typeof user === 'string') return { value: { user } };
      return { issues: [{ message: 'must be a string', path: [{ key: 'user' }] }, { message: 'needs a user', path: [] }] };
    },
  },
};

/** The error `work` throws or rejects with. */
async function failureOf(work: () => unknown): Promise<InvalidStateError> {
  try {
    await work();
  } catch (error) {
    return error as InvalidStateError;
  }
  throw new Error('expected a failure');
}

describe('decodeState', () => {
  it("should give the typed state a zod schema accepts, synchronously, with the schema's defaults", () => {
    const state = decodeState({ state: { todos: [{ title: 'ship' }], count: 1 } }, Todos);
    expect(state).not.toBeInstanceOf(Promise);
    expect(state).toEqual({ todos: [{ title: 'ship', done: false }], count: 1 });
    // Typed as the schema's output.
    const typed: { todos: { title: string; done: boolean }[]; count: number } = state as Exclude<typeof state, Promise<unknown>>;
    void typed;
  });

  it('should throw INVALID_STATE naming each failing path', async () => {
    const error = await failureOf(() => decodeState({ state: { todos: [{ title: 1, done: 'yes' }] } }, Todos));
    expect(error.name).toBe('AguiRxError');
    expect(error.code).toBe('INVALID_STATE');
    expect(error.issues.map((issue) => issue.path)).toEqual(['todos.0.title', 'todos.0.done', 'count']);
    expect(error.message).toMatch(/^The state does not match its schema: 'todos\.0\.title': .+; 'todos\.0\.done': .+; 'count': .+\. Send a state the schema accepts\.$/);
  });

  it('should read an absent state as undefined, for the schema to judge', async () => {
    expect(decodeState({}, z.object({ n: z.number() }).optional())).toBeUndefined();
    const error = await failureOf(() => decodeState({}, Todos));
    expect(error.issues).toEqual([{ path: '', message: expect.any(String) }]);
    expect(error.message).toMatch(/^The state does not match its schema: the state itself: /);
  });

  it('should return a promise for an asynchronous validator: the state, or a rejection naming each path', async () => {
    const ok = decodeState({ state: { user: 'ada' } }, asyncUser);
    expect(ok).toBeInstanceOf(Promise);
    await expect(ok).resolves.toEqual({ user: 'ada' });
    const error = await failureOf(() => decodeState({ state: { user: 7 } }, asyncUser));
    expect([error.code, error.issues, error.message]).toEqual([
      'INVALID_STATE',
      [{ path: 'user', message: 'must be a string' }, { path: '', message: 'needs a user' }],
      "The state does not match its schema: 'user': must be a string; the state itself: needs a user. Send a state the schema accepts.",
    ]);
  });

  it('should give INVALID_STATE_SCHEMA for something that is not a validator, or a validator that throws or rejects', async () => {
    const notSchema = await failureOf(() => decodeState({ state: {} }, {} as StandardSchemaV1));
    expect([notSchema.code, notSchema.message]).toEqual([
      'INVALID_STATE_SCHEMA',
      "The state schema is not a Standard Schema validator (it has no '~standard.validate'). Pass a zod (3.24+), valibot or arktype schema, or an object implementing Standard Schema v1.",
    ]);
    const throwing: StandardSchemaV1 = { '~standard': { version: 1, vendor: 'broken', validate: () => { throw new Error('boom'); } } };
    const thrown = await failureOf(() => decodeState({ state: {} }, throwing));
    expect([thrown.code, thrown.message]).toEqual(['INVALID_STATE_SCHEMA', 'The state schema (broken) threw while checking the state: boom. Fix the validator.']);
    const rejecting: StandardSchemaV1 = { '~standard': { version: 1, vendor: 'broken', validate: () => Promise.reject(new Error('down')) } };
    const rejected = await failureOf(() => decodeState({ state: {} }, rejecting));
    expect([rejected.code, rejected.message]).toEqual(['INVALID_STATE_SCHEMA', 'The state schema (broken) failed while checking the state: down. Fix the validator.']);
  });

  it('should take zod 4 schemas too', async () => {
    const { z: z4 } = await import('zod/v4');
    expect(decodeState({ state: { n: 1 } }, z4.object({ n: z4.number() }))).toEqual({ n: 1 });
    const error = await failureOf(() => decodeState({ state: { n: 'one' } }, z4.object({ n: z4.number() })));
    expect(error.issues.map((issue) => issue.path)).toEqual(['n']);
  });
});
