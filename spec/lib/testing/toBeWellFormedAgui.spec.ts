import { EventType, type Event } from '@ag-ui/core';
import { concat, of, throwError } from 'rxjs';
import type { AgentEvent } from '../../../lib/protocol/agentEvent.js';
import { toBeWellFormedAgui } from '../../../lib/testing/index.js';
import { toAgui } from '../../../operators/toAgui.js';
import { errorOf, sequentialIds } from '../../support/helpers.js';
import { runWithOracle } from '../../support/oracle.js';

const run = { threadId: 't1', runId: 'r1' };
const started = { type: EventType.RUN_STARTED, ...run } as Event;
const finished = { type: EventType.RUN_FINISHED, ...run } as Event;
const end = { type: EventType.TEXT_MESSAGE_END, messageId: 'm1' } as Event;

const endWithoutStart =
  "#1 TEXT_MESSAGE_END: TEXT_MESSAGE_END for text message 'm1', which is not open. Send TEXT_MESSAGE_START first, and nothing for the text message after its TEXT_MESSAGE_END. [end-without-start]";

// jest's printing helpers colour their output; the messages are compared without the colours.
const plain = (text: string) => text.replace(/\u001b\[\d+m/g, '');

describe('toBeWellFormedAgui', () => {
  beforeAll(() => {
    expect.extend({ toBeWellFormedAgui });
  });

  it('should pass for a well-formed Observable and array', async () => {
    const events$ = of<AgentEvent[]>({ type: EventType.TEXT_MESSAGE_CHUNK, delta: 'Hi' }).pipe(toAgui({ ...run, generateId: sequentialIds() }));
    await expect(events$).toBeWellFormedAgui();
    await expect([started, finished]).toBeWellFormedAgui();
    await expect(runWithOracle(events$)).resolves.toMatchObject({ messages: [{ role: 'assistant', content: 'Hi' }] });
  });

  it('should fail a malformed stream with a message that lists every violation', async () => {
    const error = await errorOf(expect(of(started, end, finished)).toBeWellFormedAgui());
    expect(plain((error as Error).message)).toBe(
      `expect(received).toBeWellFormedAgui()\n\nExpected a well-formed AG-UI stream, but found 1 violation in 3 events:\n  ${endWithoutStart}`,
    );
  });

  it('should pass under .not for a malformed stream, and fail for a well-formed one', async () => {
    await expect([started, end]).not.toBeWellFormedAgui();
    await expect(concat(of(started), throwError(() => new Error('boom')))).not.toBeWellFormedAgui();
    const error = await errorOf(expect([started, finished]).not.toBeWellFormedAgui());
    expect(plain((error as Error).message)).toBe(
      'expect(received).not.toBeWellFormedAgui()\n\nExpected a stream that breaks the AG-UI protocol, but its 2 events form a well-formed AG-UI stream.',
    );
  });

  it('should fail for a value that is not a stream of events, with or without .not', async () => {
    const message = 'received value must be an Observable of AG-UI events or an array of them, got an object.';
    expect(plain(String(await errorOf(expect({ type: 'RUN_STARTED' }).toBeWellFormedAgui())))).toContain(message);
    expect(plain(String(await errorOf(expect({ type: 'RUN_STARTED' }).not.toBeWellFormedAgui())))).toContain(message);
  });

  it('should work without jest, called as a plain function', async () => {
    await expect(toBeWellFormedAgui.call(undefined, [started, end])).resolves.toMatchObject({ pass: false });
    const result = await toBeWellFormedAgui.call({ isNot: false }, [started, end]);
    expect(result.message()).toBe(`expect(received).toBeWellFormedAgui()\n\nExpected a well-formed AG-UI stream, but found 2 violations in 2 events:\n  ${endWithoutStart}\n  #2 (end of stream): The stream ended during run 'r1' (started at #0) without RUN_FINISHED or RUN_ERROR. End every run with one of them. [no-terminal-event, warning]`);
  });
});
