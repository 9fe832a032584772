import { describeValue } from '../protocol/errors.js';
import { checkAguiStream, describeCheck, isAguiEventsInput } from './expectAgui.js';

/**
 * The matchers `agui-rx/testing` adds to `expect`, for a TypeScript declaration augmentation that
 * you opt into in a `.d.ts` file of your tests (jest with `@types/jest` globals):
 *
 * ```ts
 * import type { AguiMatchers } from 'agui-rx/testing';
 * declare global {
 *   namespace jest {
 *     interface Matchers<R> extends AguiMatchers<R> {}
 *   }
 * }
 * ```
 *
 * With `import { expect } from '@jest/globals'`, augment the `expect` module instead:
 * `declare module 'expect' { interface Matchers<R extends void | Promise<void>, T = unknown> extends AguiMatchers<R> {} }`.
 */
export interface AguiMatchers<R> {
  /**
   * Passes when the received Observable (or array) of events is a well-formed AG-UI stream.
   * Async: `await expect(events$).toBeWellFormedAgui()`.
   */
  toBeWellFormedAgui(): Promise<R>;
}

/** The part of jest's `MatcherContext` the matcher reads; typed here so that nothing of jest is imported. */
export interface AguiMatcherContext {
  /** True under `.not`. */
  isNot?: boolean | undefined;
  /** `'resolves'` / `'rejects'` when chained after them. */
  promise?: string | undefined;
  /** jest's printing helpers, used when present. */
  utils?: {
    /** jest's `expect(received).not.toBeWellFormedAgui()` header, in colour. */
    // Its options' fields do not admit `undefined`: jest's own `MatcherHintOptions` does not, and under
    // `exactOptionalPropertyTypes` jest's context would not fit this one.
    matcherHint?: ((name: string, received?: string, expected?: string, options?: { isNot?: boolean; promise?: string }) => string) | undefined;
  } | undefined;
}

/** What a jest matcher returns. */
export interface AguiMatcherResult {
  /** Whether the stream is well-formed AG-UI. */
  pass: boolean;
  /** The failure message: the matcher hint, then one line per violation (or, under `.not`, why it passed). */
  message: () => string;
}

/**
 * A jest matcher (register it with `expect.extend({ toBeWellFormedAgui })`) that passes when the
 * received Observable, array or iterable of events is a well-formed AG-UI stream, as checked by
 * `createAguiVerifier`: the `@ag-ui/core` schema of each event and the sequence rules
 * `@ag-ui/client`'s `verifyEvents` enforces, plus a run that ends with RUN_FINISHED or RUN_ERROR.
 *
 * Async: `await expect(events$).toBeWellFormedAgui()`. The failure message lists every violation,
 * one line each: `#<index> <TYPE>: <message> [<rule>]`. Nothing of jest is imported: the module
 * loads without it, and the matcher reads only `this.isNot`, `this.promise` and `this.utils.matcherHint` when given.
 *
 * Rules:
 * 1. Passes when there is no violation; `.not` passes when there is at least one.
 * 2. A stream that errors instead of completing fails with a `source-error` line.
 * 3. A received value that is neither an Observable nor iterable fails the assertion with an
 *    error saying so, with or without `.not`.
 * 4. Never settles if the stream never ends (the test's timeout then fails it).
 *
 * ## Example
 *
 * ```ts
 * // jest.setup.ts (listed in jest.config `setupFilesAfterEnv`):
 * expect.extend({ toBeWellFormedAgui });
 * // a spec:
 * await expect(of<AgentEvent[]>({ type: 'TEXT_MESSAGE_CHUNK', delta: 'Hi' }).pipe(toAgui({ threadId: 't1', runId: 'r1' }))).toBeWellFormedAgui();
 * await expect([{ type: 'TEXT_MESSAGE_END', messageId: 'm1' }]).not.toBeWellFormedAgui();
 * ```
 *
 * @param received An Observable of AG-UI events, or the events (an array or any iterable).
 * @return A promise of jest's `{ pass, message }`.
 * @throws {Error} (as a rejection) when `received` is neither an Observable nor iterable.
 */
export async function toBeWellFormedAgui(this: AguiMatcherContext | undefined, received: unknown): Promise<AguiMatcherResult> {
  const hint = this?.utils?.matcherHint?.('toBeWellFormedAgui', 'received', '', hintOptions(this)) ?? `expect(received)${this?.isNot ? '.not' : ''}.toBeWellFormedAgui()`;
  if (!isAguiEventsInput(received)) {
    throw new Error(`${hint}\n\nreceived value must be an Observable of AG-UI events or an array of them, got ${describeValue(received)}.`);
  }
  const check = await checkAguiStream(received);
  const count = `${check.events.length} event${check.events.length === 1 ? '' : 's'}`;
  return check.violations.length === 0
    ? { pass: true, message: () => `${hint}\n\nExpected a stream that breaks the AG-UI protocol, but its ${count} form a well-formed AG-UI stream.` }
    : { pass: false, message: () => `${hint}\n\n${describeCheck(check)}` };
}

/** The matcher's `.not` and `.resolves` / `.rejects` for jest's hint, each left out when jest gave none. */
function hintOptions(context: AguiMatcherContext): { isNot?: boolean; promise?: string } {
  const options: { isNot?: boolean; promise?: string } = {};
  if (context.isNot !== undefined) options.isNot = context.isNot;
  if (context.promise !== undefined) options.promise = context.promise;
  return options;
}
