import { EventType, type Event } from '@ag-ui/core';
import { EMPTY, Subject, concat, from, of, throwError } from 'rxjs';
import type { AgentEvent } from '../../../lib/protocol/agentEvent.js';
import { AguiStreamError, checkAguiStream, expectAgui } from '../../../lib/testing/index.js';
import { toAgui } from '../../../operators/toAgui.js';
import { runWithOracle } from '../../support/oracle.js';
import { errorOf, sequentialIds } from '../../support/helpers.js';

const run = { threadId: 't1', runId: 'r1' };
const started = { type: EventType.RUN_STARTED, ...run } as Event;
const finished = { type: EventType.RUN_FINISHED, ...run } as Event;
const content = { type: EventType.TEXT_MESSAGE_CONTENT, messageId: 'm1', delta: 'Hi' } as Event;

const contentWithoutStart =
  "#1 TEXT_MESSAGE_CONTENT: TEXT_MESSAGE_CONTENT for text message 'm1', which is not open. Send TEXT_MESSAGE_START first, and nothing for the text message after its TEXT_MESSAGE_END. [content-without-start]";

describe('expectAgui', () => {
  it('should list the first 50 violations in the message, and keep them all on the error', async () => {
    const stray = Array.from({ length: 60 }, (_, index) => ({ type: EventType.TEXT_MESSAGE_CONTENT, messageId: `m${index}`, delta: 'x' }));
    const error = (await errorOf(expectAgui([{ type: EventType.RUN_STARTED, threadId: 't', runId: 'r' }, ...stray, { type: EventType.RUN_FINISHED, threadId: 't', runId: 'r' }]).toBeWellFormed())) as AguiStreamError;
    expect(error.violations).toHaveLength(60);
    const lines = error.message.split('\n');
    expect(lines).toHaveLength(1 + 50 + 1);
    expect(lines[51]).toBe("  … and 10 more (all of them are on the error's `violations`)");
  });

  describe('toBeWellFormed', () => {
    it('should resolve with the events of a well-formed stream', async () => {
      const agent$ = of<AgentEvent[]>({ type: EventType.TEXT_MESSAGE_CHUNK, delta: 'Hi' }).pipe(toAgui({ ...run, generateId: sequentialIds() }));
      const events = await expectAgui(agent$).toBeWellFormed();
      expect(events.map((event) => event.type)).toEqual([
        EventType.RUN_STARTED,
        EventType.TEXT_MESSAGE_START,
        EventType.TEXT_MESSAGE_CONTENT,
        EventType.TEXT_MESSAGE_END,
        EventType.RUN_FINISHED,
      ]);
      // The official client agrees.
      await expect(runWithOracle(from(events))).resolves.toMatchObject({ messages: [{ id: 'id-1', role: 'assistant', content: 'Hi' }] });
    });

    it('should accept an array and an async iterable of events', async () => {
      async function* generate() {
        yield started;
        yield finished;
      }
      await expect(expectAgui([started, finished]).toBeWellFormed()).resolves.toEqual([started, finished]);
      await expect(expectAgui(generate()).toBeWellFormed()).resolves.toEqual([started, finished]);
    });

    it('should reject with every violation, one readable line each, index, type, message and rule', async () => {
      const error = await errorOf(expectAgui([started, content, { type: 'NOPE' }, 42]).toBeWellFormed());
      expect(error).toBeInstanceOf(AguiStreamError);
      expect((error as Error).message).toBe(
        [
          'Expected a well-formed AG-UI stream, but found 4 violations in 4 events:',
          `  ${contentWithoutStart}`,
          "  #2 NOPE: 'NOPE' is not an AG-UI 1.0 event type: a consumer drops it with a warning (AG-UI spec 1.1, Processing Model). Send one of the EventType values of @ag-ui/core, or carry other data in a CUSTOM or RAW event. [unknown-type, warning]",
          '  #3 (not an event): Expected an AG-UI event object, got number 42; a consumer cannot read it as an event. [not-an-event, warning]',
          "  #4 (end of stream): The stream ended during run 'r1' (started at #0) without RUN_FINISHED or RUN_ERROR. End every run with one of them. [no-terminal-event, warning]",
        ].join('\n'),
      );
      expect(error).toMatchObject({ name: 'AguiStreamError', code: 'AGUI_VIOLATION', events: [started, content, { type: 'NOPE' }, 42] });
      // Warnings count too: a well-formed stream of our own has none.
      expect((error as AguiStreamError).violations.map((violation) => [violation.index, violation.type, violation.rule, violation.severity])).toEqual([
        [1, 'TEXT_MESSAGE_CONTENT', 'content-without-start', 'violation'],
        [2, 'NOPE', 'unknown-type', 'warning'],
        [3, undefined, 'not-an-event', 'warning'],
        [4, undefined, 'no-terminal-event', 'warning'],
      ]);
    });

    it('should reject a stream the official client also rejects', async () => {
      await expect(runWithOracle(of(started, content, finished))).rejects.toThrow("Cannot send 'TEXT_MESSAGE_CONTENT' event");
      await expect(expectAgui(of(started, content, finished)).toBeWellFormed()).rejects.toThrow(
        `Expected a well-formed AG-UI stream, but found 1 violation in 3 events:\n  ${contentWithoutStart}`,
      );
    });

    it('should reject an empty stream, which holds no run', async () => {
      await expect(expectAgui(EMPTY).toBeWellFormed()).rejects.toThrow(
        'Expected a well-formed AG-UI stream, but found 1 violation in 0 events:\n  #0 (end of stream): The stream holds no run. An AG-UI stream starts with RUN_STARTED and ends each run with RUN_FINISHED or RUN_ERROR. [no-run, warning]',
      );
    });

    it('should reject a stream that errors instead of ending its run with RUN_ERROR', async () => {
      const error = await errorOf(expectAgui(concat(of(started), throwError(() => new Error('boom')))).toBeWellFormed());
      expect((error as Error).message).toBe(
        'Expected a well-formed AG-UI stream, but found 1 violation in 1 event:\n' +
          '  #1 (end of stream): The stream errored (Error: boom) instead of completing. An AG-UI run reports a failure with RUN_ERROR and then completes: end the pipeline with toAgui or mapRunLifecycle, which turn errors into RUN_ERROR. [source-error]',
      );
      expect((error as AguiStreamError).violations).toEqual([{ index: 1, rule: 'source-error', severity: 'violation', message: expect.stringContaining('The stream errored (Error: boom)') }]);
    });

    it('should wait for an asynchronous stream to end', async () => {
      const events$ = new Subject<Event>();
      const result = expectAgui(events$).toBeWellFormed();
      events$.next(started);
      events$.next(finished);
      events$.complete();
      await expect(result).resolves.toEqual([started, finished]);
    });

    it('should reject what is not a stream of events', async () => {
      await expect(expectAgui(42 as never).toBeWellFormed()).rejects.toThrow('Expected an Observable of AG-UI events or an array of them, got number 42.');
      await expect(expectAgui(null as never).toBeWellFormed()).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    });
  });

  describe('checkAguiStream', () => {
    it('should resolve with the events and no violations for a well-formed stream', async () => {
      await expect(checkAguiStream([started, finished])).resolves.toEqual({ events: [started, finished], violations: [], lines: [] });
    });

    it('should resolve, not reject, with the violations of a malformed stream', async () => {
      const check = await checkAguiStream([started, content, finished]);
      expect(check.lines).toEqual([contentWithoutStart]);
    });
  });
});
