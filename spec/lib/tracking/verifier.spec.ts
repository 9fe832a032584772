import type { Event, Message } from '@ag-ui/core';
import { from } from 'rxjs';
import { createAguiVerifier, type AguiViolation } from '../../../lib/tracking/verifier.js';
import { fixtureFiles, haveFixtures, readAguiRecording } from '../../support/fixtures.js';
import { runWithOracle } from '../../support/oracle.js';

const RS = { type: 'RUN_STARTED', threadId: 't1', runId: 'r1' };
const RF = { type: 'RUN_FINISHED', threadId: 't1', runId: 'r1' };
const start = (messageId: string, extra: Record<string, unknown> = {}) => ({ type: 'TEXT_MESSAGE_START', messageId, role: 'assistant', ...extra });
const content = (messageId: string, extra: Record<string, unknown> = {}) => ({ type: 'TEXT_MESSAGE_CONTENT', messageId, delta: 'hi', ...extra });
const end = (messageId: string, extra: Record<string, unknown> = {}) => ({ type: 'TEXT_MESSAGE_END', messageId, ...extra });
const toolStart = (toolCallId: string, extra: Record<string, unknown> = {}) => ({ type: 'TOOL_CALL_START', toolCallId, toolCallName: 'search', ...extra });
const toolEnd = (toolCallId: string) => ({ type: 'TOOL_CALL_END', toolCallId });
const subagentStarted = (subagentRunId: string, extra: Record<string, unknown> = {}) => ({ type: 'SUBAGENT_STARTED', subagentRunId, name: 'helper', ...extra });

// What the AG-UI specification (1.1) tolerates, and our own stricter checks: warnings. Every other rule is a violation.
const warningRules = new Set(['unknown-type', 'unknown-outcome', 'unknown-content-part', 'unknown-patch-op', 'not-an-event', 'no-terminal-event', 'open-at-end', 'no-run']);

/**
 * Every finding of a whole stream: each event in order, then the end of the stream. Each one's
 * severity is checked against its rule here, and left out of what is returned.
 */
function violationsOf(events: readonly unknown[]): Omit<AguiViolation, 'severity'>[] {
  const verifier = createAguiVerifier();
  const found = [...events.flatMap((event, index) => verifier.verify(event, index)), ...verifier.end()];
  for (const violation of found) expect([violation.rule, violation.severity]).toEqual([violation.rule, warningRules.has(violation.rule) ? 'warning' : 'violation']);
  return found.map(({ severity: _severity, ...rest }) => rest);
}

/** The official client's verdict on a stream: accepted, or rejected. */
async function officialVerdict(events: readonly unknown[]): Promise<'valid' | 'invalid'> {
  // The client warns about the unknown events some of these streams hold on purpose; the verdict is what counts.
  const warn = jest.spyOn(console, 'warn').mockImplementation(() => undefined);
  try {
    await runWithOracle(from(events as Event[]));
    return 'valid';
  } catch {
    return 'invalid';
  } finally {
    warn.mockRestore();
  }
}

describe('createAguiVerifier', () => {
  it('should accept a well-formed run', () => {
    expect(
      violationsOf([
        RS,
        { type: 'STEP_STARTED', stepName: 'answer' },
        { type: 'REASONING_START', messageId: 'r1' },
        { type: 'REASONING_MESSAGE_START', messageId: 'r1', role: 'reasoning' },
        { type: 'REASONING_MESSAGE_CONTENT', messageId: 'r1', delta: 'thinking' },
        { type: 'REASONING_MESSAGE_END', messageId: 'r1' },
        { type: 'REASONING_END', messageId: 'r1' },
        start('m1'),
        content('m1'),
        toolStart('c1', { parentMessageId: 'm1' }),
        { type: 'TOOL_CALL_ARGS', toolCallId: 'c1', delta: '{}' },
        toolEnd('c1'),
        end('m1'),
        { type: 'TOOL_CALL_RESULT', messageId: 't1', toolCallId: 'c1', content: 'done' },
        { type: 'STATE_SNAPSHOT', snapshot: { n: 1 } },
        { type: 'STEP_FINISHED', stepName: 'answer' },
        RF,
      ]),
    ).toEqual([]);
  });

  it('should accept a run that starts with RUN_ERROR, and RUN_ERROR after RUN_FINISHED, as the client does', () => {
    expect(violationsOf([{ type: 'RUN_ERROR', message: 'no model' }])).toEqual([]);
    expect(violationsOf([RS, RF, { type: 'RUN_ERROR', message: 'late' }])).toEqual([]);
  });

  it('should accept a new RUN_STARTED after a run ended, and check the new run afresh', () => {
    expect(violationsOf([RS, start('m1'), end('m1'), RF, { ...RS, runId: 'r2' }, start('m1'), end('m1'), { ...RF, runId: 'r2' }])).toEqual([]);
  });

  it('should not compare the runId of RUN_FINISHED with RUN_STARTED, as the client does not', () => {
    expect(violationsOf([RS, { ...RF, runId: 'another' }])).toEqual([]);
  });

  describe('schema', () => {
    it('should report an event that fails the schema, naming the field (invalid-event)', () => {
      expect(violationsOf([RS, start('m1', { role: 'wizard' }), content('m1'), end('m1'), RF])).toEqual([
        {
          index: 1,
          type: 'TEXT_MESSAGE_START',
          rule: 'invalid-event',
          message: `TEXT_MESSAGE_START is not a valid AG-UI event: 'role': Invalid option: expected one of "developer"|"system"|"assistant"|"user". Fix the field in the event your agent emits.`,
        },
      ]);
    });

    it('should report null for an optional field (invalid-event)', () => {
      expect(violationsOf([RS, start('m1', { name: null }), end('m1'), RF])).toEqual([
        {
          index: 1,
          type: 'TEXT_MESSAGE_START',
          rule: 'invalid-event',
          message: `TEXT_MESSAGE_START is not a valid AG-UI event: 'name': Invalid input: expected string, received null. Fix the field in the event your agent emits (omit optional fields rather than sending null).`,
        },
      ]);
    });

    it('should report null on a per-token event through the fast path (invalid-event)', () => {
      expect(violationsOf([RS, start('m1'), content('m1', { subagentRunId: null }), end('m1'), RF])).toEqual([
        {
          index: 2,
          type: 'TEXT_MESSAGE_CONTENT',
          rule: 'invalid-event',
          message: `TEXT_MESSAGE_CONTENT has 'subagentRunId: null', but 'subagentRunId' must be absent or set: omit an optional field rather than sending null.`,
        },
      ]);
    });

    it('should warn about a value that is not an event object (not-an-event)', () => {
      expect(violationsOf([RS, 42, { messageId: 'm1' }, RF])).toEqual([
        { index: 1, rule: 'not-an-event', message: 'Expected an AG-UI event object, got number 42; a consumer cannot read it as an event.' },
        { index: 2, rule: 'not-an-event', message: `The event has no string 'type' (got undefined). Every AG-UI event names its type, e.g. 'TEXT_MESSAGE_START'.` },
      ]);
    });

    it('should warn about an event type AG-UI 1.0 does not have, which a consumer drops (unknown-type)', () => {
      expect(violationsOf([RS, { type: 'THINKING_START' }, RF])).toEqual([
        {
          index: 1,
          type: 'THINKING_START',
          rule: 'unknown-type',
          message: `'THINKING_START' is not an AG-UI 1.0 event type: a consumer drops it with a warning (AG-UI spec 1.1, Processing Model). Send one of the EventType values of @ag-ui/core, or carry other data in a CUSTOM or RAW event.`,
        },
      ]);
    });
  });

  describe('what the specification tolerates (AG-UI spec 1.1)', () => {
    it('should warn about a RUN_FINISHED outcome of an unknown type, and end the run there (unknown-outcome)', () => {
      const found = violationsOf([RS, { ...RF, outcome: { type: 'handoff', to: 'billing' } }, start('m1')]);
      expect(found.map(({ index, rule }) => `#${index} ${rule}`)).toEqual(['#1 unknown-outcome', '#2 event-after-run-finished']);
      expect(found[0].message).toContain("at /outcome, the outcome of type 'handoff', which AG-UI does not describe, was removed");
    });

    it('should warn about content parts of an unknown type, and keep checking the snapshot (unknown-content-part)', () => {
      const snapshot = {
        type: 'MESSAGES_SNAPSHOT',
        messages: [
          { id: 'u1', role: 'user', content: [{ type: 'text', text: 'look' }, { type: 'hologram', frames: 3 }, { type: 'image', source: { type: 'telepathy', id: 'x' } }] },
          { id: 'a1', role: 'assistant', content: '', toolCalls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }] },
        ],
      };
      const found = violationsOf([RS, snapshot, { type: 'TOOL_CALL_ARGS', toolCallId: 'c1', delta: '{}', subagentRunId: 's1' }, RF]);
      expect(found.map(({ index, rule }) => `#${index} ${rule}`)).toEqual(['#1 unknown-content-part', '#1 unknown-content-part', '#2 content-without-start']);
      expect(found[0].message).toContain("at /messages/0/content/1, a content part of type 'hologram'");
      expect(found[1].message).toContain("at /messages/0/content/2/source, a image part whose source is of type 'telepathy'");
    });

    it('should warn about a patch operation whose op RFC 6902 does not define (unknown-patch-op)', () => {
      const delta = { type: 'STATE_DELTA', delta: [{ op: 'merge', path: '/a', value: {} }, { op: 'add', path: '/b', value: 1 }] };
      expect(violationsOf([RS, delta, RF]).map(({ index, rule }) => `#${index} ${rule}`)).toEqual(['#1 unknown-patch-op']);
    });

    it('should still report a malformed known value beside an unrecognised one (invalid-event)', () => {
      const delta = { type: 'STATE_DELTA', delta: [{ op: 'merge', path: '/a' }, { op: 'add', path: '/b' }] };
      expect(violationsOf([RS, delta, RF]).map(({ index, rule }) => `#${index} ${rule}`)).toEqual(['#1 unknown-patch-op', '#1 invalid-event']);
      // A discriminator that is not a string is malformed, not unrecognised.
      expect(violationsOf([RS, { ...RF, outcome: { type: 7 } }]).map(({ rule }) => rule)).toEqual(['invalid-event']);
    });

    const tolerated: [string, unknown[], string[]][] = [
      ['an unknown event type', [RS, start('m1'), { type: 'PROGRESS_UPDATE', percent: 50 }, content('m1'), end('m1'), RF], ['unknown-type']],
      ['an unknown outcome', [RS, { ...RF, outcome: { type: 'handoff' } }], ['unknown-outcome']],
      ['an unknown content part', [RS, { type: 'MESSAGES_SNAPSHOT', messages: [{ id: 'u1', role: 'user', content: [{ type: 'hologram' }] }] }, RF], ['unknown-content-part']],
      ['an unknown patch op', [RS, { type: 'STATE_DELTA', delta: [{ op: 'merge', path: '/a', value: 1 }] }, RF], ['unknown-patch-op']],
      ['an untagged continuation of a subagent message', [RS, subagentStarted('s1'), start('m1', { subagentRunId: 's1' }), content('m1'), end('m1'), { type: 'SUBAGENT_FINISHED', subagentRunId: 's1' }, RF], []],
    ];

    it.each(tolerated)('should not call a violation, as the client accepts it, %s', async (_name, events, rules) => {
      const found = violationsOf(events);
      expect(found.map(({ rule }) => rule)).toEqual(rules);
      expect(found.every(({ rule }) => warningRules.has(rule))).toBe(true);
      expect(await officialVerdict(events)).toBe('valid');
    });
  });

  describe('run lifecycle', () => {
    it('should report a stream that does not start with RUN_STARTED, and check the rest as a run (first-event)', () => {
      expect(violationsOf([start('m1'), content('m2'), end('m1'), RF])).toEqual([
        {
          index: 0,
          type: 'TEXT_MESSAGE_START',
          rule: 'first-event',
          message: 'The stream starts with TEXT_MESSAGE_START, but an AG-UI run starts with RUN_STARTED. Send RUN_STARTED first; the rest is checked as if it had been sent.',
        },
        {
          index: 1,
          type: 'TEXT_MESSAGE_CONTENT',
          rule: 'content-without-start',
          message: `TEXT_MESSAGE_CONTENT for text message 'm2', which is not open. Send TEXT_MESSAGE_START first, and nothing for the text message after its TEXT_MESSAGE_END.`,
        },
      ]);
    });

    it('should report RUN_STARTED while a run is going, and ignore it (run-already-started)', () => {
      expect(violationsOf([RS, start('m1'), { ...RS, runId: 'r2' }, end('m1'), RF])).toEqual([
        {
          index: 2,
          type: 'RUN_STARTED',
          rule: 'run-already-started',
          message: `RUN_STARTED while run 'r1' (started at #0) is still going. End a run with RUN_FINISHED or RUN_ERROR before starting the next.`,
        },
      ]);
    });

    it('should report the first event after RUN_FINISHED, once (event-after-run-finished)', () => {
      expect(violationsOf([RS, RF, start('m1'), end('m1'), RF])).toEqual([
        {
          index: 2,
          type: 'TEXT_MESSAGE_START',
          rule: 'event-after-run-finished',
          message: 'TEXT_MESSAGE_START after RUN_FINISHED (at #1) ended the run. Send nothing after RUN_FINISHED but a new RUN_STARTED; until one comes, later events are only checked against the schema.',
        },
      ]);
    });

    it('should still check the schema of events after the run ended', () => {
      expect(violationsOf([RS, RF, content('m1'), { type: 'TEXT_MESSAGE_END' }]).map(({ index, rule }) => ({ index, rule }))).toEqual([
        { index: 2, rule: 'event-after-run-finished' },
        { index: 3, rule: 'invalid-event' },
      ]);
    });

    it('should report an event after RUN_ERROR, even RUN_FINISHED (event-after-run-error)', () => {
      expect(violationsOf([RS, { type: 'RUN_ERROR', message: 'boom' }, RF])).toEqual([
        {
          index: 2,
          type: 'RUN_FINISHED',
          rule: 'event-after-run-error',
          message: 'RUN_FINISHED after RUN_ERROR (at #1) ended the run. Send nothing after RUN_ERROR but a new RUN_STARTED; until one comes, later events are only checked against the schema.',
        },
      ]);
    });

    it('should report everything still open at RUN_FINISHED, one violation per kind, and end the run there (open-at-run-finished)', () => {
      expect(
        violationsOf([
          RS,
          subagentStarted('s1'),
          { type: 'STEP_STARTED', stepName: 'plan' },
          { type: 'STEP_STARTED', stepName: 'plan', subagentRunId: 's1' },
          start('m1'),
          start('m2'),
          { type: 'REASONING_START', messageId: 'r1' },
          { type: 'REASONING_MESSAGE_START', messageId: 'r1', role: 'reasoning' },
          toolStart('c1'),
          RF,
        ]),
      ).toEqual([
        { index: 9, type: 'RUN_FINISHED', rule: 'open-at-run-finished', message: `RUN_FINISHED while steps 'plan', 'plan' (subagent 's1') are still open. End them with STEP_FINISHED before RUN_FINISHED.` },
        { index: 9, type: 'RUN_FINISHED', rule: 'open-at-run-finished', message: `RUN_FINISHED while text messages 'm1', 'm2' are still open. End them with TEXT_MESSAGE_END before RUN_FINISHED.` },
        { index: 9, type: 'RUN_FINISHED', rule: 'open-at-run-finished', message: `RUN_FINISHED while reasoning message 'r1' is still open. End it with REASONING_MESSAGE_END before RUN_FINISHED.` },
        { index: 9, type: 'RUN_FINISHED', rule: 'open-at-run-finished', message: `RUN_FINISHED while reasoning span 'r1' is still open. End it with REASONING_END before RUN_FINISHED.` },
        { index: 9, type: 'RUN_FINISHED', rule: 'open-at-run-finished', message: `RUN_FINISHED while tool call 'c1' is still open. End it with TOOL_CALL_END before RUN_FINISHED.` },
        { index: 9, type: 'RUN_FINISHED', rule: 'open-at-run-finished', message: `RUN_FINISHED while subagent 's1' is still open. End it with SUBAGENT_FINISHED or SUBAGENT_ERROR before RUN_FINISHED.` },
      ]);
    });

    it('should report a stream that stops mid-run, and what it leaves open (no-terminal-event, open-at-end)', () => {
      expect(violationsOf([RS, start('m1'), content('m1'), toolStart('c1'), toolStart('c2')])).toEqual([
        { index: 5, rule: 'no-terminal-event', message: `The stream ended during run 'r1' (started at #0) without RUN_FINISHED or RUN_ERROR. End every run with one of them.` },
        { index: 5, rule: 'open-at-end', message: `The stream ended while text message 'm1' is still open. End it with TEXT_MESSAGE_END, then end the run.` },
        { index: 5, rule: 'open-at-end', message: `The stream ended while tool calls 'c1', 'c2' are still open. End them with TOOL_CALL_END, then end the run.` },
      ]);
    });

    it('should report a stream with no run at all (no-run)', () => {
      const message = 'The stream holds no run. An AG-UI stream starts with RUN_STARTED and ends each run with RUN_FINISHED or RUN_ERROR.';
      expect(violationsOf([])).toEqual([{ index: 0, rule: 'no-run', message }]);
      expect(violationsOf([{ type: 'NOT_AN_EVENT' }])).toEqual([expect.objectContaining({ rule: 'unknown-type' }), { index: 1, rule: 'no-run', message }]);
    });
  });

  describe('messages, tool calls and reasoning', () => {
    it('should report a second TEXT_MESSAGE_START for an open id (duplicate-start)', () => {
      expect(violationsOf([RS, start('m1'), start('m1'), end('m1'), RF])).toEqual([
        {
          index: 2,
          type: 'TEXT_MESSAGE_START',
          rule: 'duplicate-start',
          message: `TEXT_MESSAGE_START for text message 'm1', which is already open (since #1). End it with TEXT_MESSAGE_END before starting it again.`,
        },
      ]);
    });

    it('should report TEXT_MESSAGE_CONTENT for no open message, also after its END (content-without-start)', () => {
      expect(violationsOf([RS, start('m1'), end('m1'), content('m1'), RF])).toEqual([
        {
          index: 3,
          type: 'TEXT_MESSAGE_CONTENT',
          rule: 'content-without-start',
          message: `TEXT_MESSAGE_CONTENT for text message 'm1', which is not open. Send TEXT_MESSAGE_START first, and nothing for the text message after its TEXT_MESSAGE_END.`,
        },
      ]);
    });

    it('should check a token afresh after any other event, also for the message the token before it continued', () => {
      const stream = [RS, start('m1'), content('m1'), content('m1'), end('m1'), content('m1'), start('m2'), content('m2'), Object.assign([], content('m2')), content('m2'), RF, content('m2'), RS, content('m2'), RF];
      expect(violationsOf(stream).map(({ index, rule }) => `#${index} ${rule}`)).toEqual([
        '#5 content-without-start',
        '#8 not-an-event',
        '#10 open-at-run-finished',
        '#11 event-after-run-finished',
        '#13 content-without-start',
      ]);
    });

    it('should report TEXT_MESSAGE_END for no open message (end-without-start)', () => {
      expect(violationsOf([RS, end('m9'), RF])).toEqual([
        {
          index: 1,
          type: 'TEXT_MESSAGE_END',
          rule: 'end-without-start',
          message: `TEXT_MESSAGE_END for text message 'm9', which is not open. Send TEXT_MESSAGE_START first, and nothing for the text message after its TEXT_MESSAGE_END.`,
        },
      ]);
    });

    it('should report a second TOOL_CALL_START for an open call (duplicate-start)', () => {
      expect(violationsOf([RS, toolStart('c1'), toolStart('c1'), toolEnd('c1'), RF])).toEqual([
        {
          index: 2,
          type: 'TOOL_CALL_START',
          rule: 'duplicate-start',
          message: `TOOL_CALL_START for tool call 'c1', which is already open (since #1). End it with TOOL_CALL_END before starting it again.`,
        },
      ]);
    });

    it('should report TOOL_CALL_ARGS and TOOL_CALL_END for no open call (content-without-start, end-without-start)', () => {
      expect(violationsOf([RS, { type: 'TOOL_CALL_ARGS', toolCallId: 'c9', delta: '{}' }, toolEnd('c9'), RF])).toEqual([
        {
          index: 1,
          type: 'TOOL_CALL_ARGS',
          rule: 'content-without-start',
          message: `TOOL_CALL_ARGS for tool call 'c9', which is not open. Send TOOL_CALL_START first, and nothing for the tool call after its TOOL_CALL_END.`,
        },
        {
          index: 2,
          type: 'TOOL_CALL_END',
          rule: 'end-without-start',
          message: `TOOL_CALL_END for tool call 'c9', which is not open. Send TOOL_CALL_START first, and nothing for the tool call after its TOOL_CALL_END.`,
        },
      ]);
    });

    it('should tell a reasoning span from the reasoning message inside it (content-without-start, end-without-start)', () => {
      expect(
        violationsOf([
          RS,
          { type: 'REASONING_START', messageId: 'r1' },
          { type: 'REASONING_MESSAGE_CONTENT', messageId: 'r1', delta: 'x' },
          { type: 'REASONING_END', messageId: 'r1' },
          { type: 'REASONING_END', messageId: 'r1' },
          RF,
        ]),
      ).toEqual([
        {
          index: 2,
          type: 'REASONING_MESSAGE_CONTENT',
          rule: 'content-without-start',
          message: `REASONING_MESSAGE_CONTENT for reasoning message 'r1', which is not open. Send REASONING_MESSAGE_START first, and nothing for the reasoning message after its REASONING_MESSAGE_END.`,
        },
        {
          index: 4,
          type: 'REASONING_END',
          rule: 'end-without-start',
          message: `REASONING_END for reasoning span 'r1', which is not open. Send REASONING_START first, and nothing for the reasoning span after its REASONING_END.`,
        },
      ]);
    });

    it('should report a second REASONING_MESSAGE_START for an open reasoning message (duplicate-start)', () => {
      const open = { type: 'REASONING_MESSAGE_START', messageId: 'r1', role: 'reasoning' };
      expect(violationsOf([RS, open, open, { type: 'REASONING_MESSAGE_END', messageId: 'r1' }, RF])).toEqual([
        {
          index: 2,
          type: 'REASONING_MESSAGE_START',
          rule: 'duplicate-start',
          message: `REASONING_MESSAGE_START for reasoning message 'r1', which is already open (since #1). End it with REASONING_MESSAGE_END before starting it again.`,
        },
      ]);
    });

    it('should keep checking after a violation, treating the offending event as not sent', () => {
      // The duplicate START is ignored, so the first END closes m1 and the second END is the next mistake.
      expect(violationsOf([RS, start('m1'), start('m1'), content('m1'), end('m1'), end('m1'), RF]).map(({ index, rule }) => ({ index, rule }))).toEqual([
        { index: 2, rule: 'duplicate-start' },
        { index: 5, rule: 'end-without-start' },
      ]);
    });

    it('should still track an event whose ids are fine when another field fails the schema', () => {
      expect(violationsOf([RS, start('m1', { role: 'wizard' }), content('m1'), end('m1'), RF]).map(({ rule }) => rule)).toEqual(['invalid-event']);
    });
  });

  describe('steps', () => {
    it('should report a second STEP_STARTED for a running step (duplicate-step)', () => {
      const step = { type: 'STEP_STARTED', stepName: 'plan' };
      expect(violationsOf([RS, step, step, { type: 'STEP_FINISHED', stepName: 'plan' }, RF])).toEqual([
        {
          index: 2,
          type: 'STEP_STARTED',
          rule: 'duplicate-step',
          message: `STEP_STARTED for step 'plan' of the parent agent, which is already running (since #1). Finish it with STEP_FINISHED before starting it again.`,
        },
      ]);
    });

    it('should allow the same step name in two lanes at once', () => {
      expect(
        violationsOf([
          RS,
          subagentStarted('s1'),
          { type: 'STEP_STARTED', stepName: 'tools' },
          { type: 'STEP_STARTED', stepName: 'tools', subagentRunId: 's1' },
          { type: 'STEP_FINISHED', stepName: 'tools', subagentRunId: 's1' },
          { type: 'SUBAGENT_FINISHED', subagentRunId: 's1' },
          { type: 'STEP_FINISHED', stepName: 'tools' },
          RF,
        ]),
      ).toEqual([]);
    });

    it('should report STEP_FINISHED for a step not running (step-not-started)', () => {
      expect(violationsOf([RS, { type: 'STEP_FINISHED', stepName: 'plan' }, RF])).toEqual([
        {
          index: 1,
          type: 'STEP_FINISHED',
          rule: 'step-not-started',
          message: `STEP_FINISHED for step 'plan' of the parent agent, which is not running. Send STEP_STARTED first, and finish each step once.`,
        },
      ]);
    });

    it('should report STEP_FINISHED for a step running in another lane (step-owner-mismatch)', () => {
      expect(
        violationsOf([RS, subagentStarted('s1'), { type: 'STEP_STARTED', stepName: 'plan' }, { type: 'STEP_FINISHED', stepName: 'plan', subagentRunId: 's1' }, { type: 'STEP_FINISHED', stepName: 'plan' }, { type: 'SUBAGENT_FINISHED', subagentRunId: 's1' }, RF]),
      ).toEqual([
        {
          index: 3,
          type: 'STEP_FINISHED',
          rule: 'step-owner-mismatch',
          message: `STEP_FINISHED for step 'plan' of subagent 's1', but that step is running in the parent agent. Finish a step with the subagentRunId it was started with.`,
        },
      ]);
    });
  });

  describe('subagents', () => {
    it('should report SUBAGENT_STARTED for a running subagent (subagent-already-active)', () => {
      expect(violationsOf([RS, subagentStarted('s1'), subagentStarted('s1'), { type: 'SUBAGENT_FINISHED', subagentRunId: 's1' }, RF])).toEqual([
        {
          index: 2,
          type: 'SUBAGENT_STARTED',
          rule: 'subagent-already-active',
          message: `SUBAGENT_STARTED for subagent 's1', which is already running (since #1). End it with SUBAGENT_FINISHED or SUBAGENT_ERROR first.`,
        },
      ]);
    });

    it('should report a subagent id used for a second invocation (subagent-id-reused)', () => {
      expect(violationsOf([RS, subagentStarted('s1'), { type: 'SUBAGENT_FINISHED', subagentRunId: 's1' }, subagentStarted('s1'), RF])).toEqual([
        {
          index: 3,
          type: 'SUBAGENT_STARTED',
          rule: 'subagent-id-reused',
          message: `SUBAGENT_STARTED reuses subagentRunId 's1', which already ended in this run. Give each subagent invocation its own subagentRunId.`,
        },
      ]);
    });

    it('should report a parentSubagentRunId that never started (subagent-parent-unknown)', () => {
      expect(violationsOf([RS, subagentStarted('s2', { parentSubagentRunId: 's0' }), RF])).toEqual([
        {
          index: 1,
          type: 'SUBAGENT_STARTED',
          rule: 'subagent-parent-unknown',
          message: `SUBAGENT_STARTED for subagent 's2' names parentSubagentRunId 's0', which has not started in this run. Start the parent subagent first.`,
        },
      ]);
    });

    it('should accept a parent subagent that started, running or ended', () => {
      expect(
        violationsOf([RS, subagentStarted('s1'), subagentStarted('s2', { parentSubagentRunId: 's1' }), { type: 'SUBAGENT_FINISHED', subagentRunId: 's1' }, subagentStarted('s3', { parentSubagentRunId: 's1' }), { type: 'SUBAGENT_FINISHED', subagentRunId: 's2' }, { type: 'SUBAGENT_ERROR', subagentRunId: 's3', message: 'x' }, RF]),
      ).toEqual([]);
    });

    it('should report SUBAGENT_FINISHED or SUBAGENT_ERROR for no running subagent (subagent-not-active)', () => {
      expect(violationsOf([RS, { type: 'SUBAGENT_ERROR', subagentRunId: 's3', message: 'failed' }, RF])).toEqual([
        {
          index: 1,
          type: 'SUBAGENT_ERROR',
          rule: 'subagent-not-active',
          message: `SUBAGENT_ERROR for subagent 's3', which is not running. Send SUBAGENT_STARTED first, and end each subagent once.`,
        },
      ]);
    });
  });

  describe('attribution', () => {
    it('should report a continuation tagged with another subagent than its opener (subagent-mismatch)', () => {
      expect(violationsOf([RS, start('m1'), content('m1', { subagentRunId: 's1' }), end('m1'), RF])).toEqual([
        {
          index: 2,
          type: 'TEXT_MESSAGE_CONTENT',
          rule: 'subagent-mismatch',
          message: `TEXT_MESSAGE_CONTENT for text message 'm1' has subagentRunId 's1', but the text message belongs to the parent agent. Tag every event of an entity with the subagentRunId it was opened with, or leave the tag out.`,
        },
      ]);
    });

    it('should accept an untagged continuation of a subagent entity', () => {
      expect(violationsOf([RS, start('m1', { subagentRunId: 's1' }), content('m1'), end('m1'), RF])).toEqual([]);
    });

    it('should report an id reopened by another subagent in the same run (subagent-mismatch)', () => {
      expect(violationsOf([RS, start('m1', { subagentRunId: 's1' }), end('m1'), start('m1', { subagentRunId: 's2' }), RF]).map(({ index, rule, message }) => ({ index, rule, message }))).toEqual([
        {
          index: 3,
          rule: 'subagent-mismatch',
          message: `TEXT_MESSAGE_START for text message 'm1' has subagentRunId 's2', but the text message belongs to subagent 's1'. Tag every event of an entity with the subagentRunId it was opened with, or leave the tag out.`,
        },
      ]);
    });

    it('should take owners from MESSAGES_SNAPSHOT (subagent-mismatch)', () => {
      const snapshot = { type: 'MESSAGES_SNAPSHOT', messages: [{ id: 'm1', role: 'assistant', content: 'x', subagentRunId: 's1' }] };
      expect(violationsOf([RS, snapshot, start('m1', { subagentRunId: 's2' }), RF]).map(({ index, rule }) => ({ index, rule }))).toEqual([{ index: 2, rule: 'subagent-mismatch' }]);
    });

    it('should report a tool call tagged unlike its parent message (parent-message-mismatch)', () => {
      expect(violationsOf([RS, start('m1'), toolStart('c1', { parentMessageId: 'm1', subagentRunId: 's1' }), end('m1'), RF])).toEqual([
        {
          index: 2,
          type: 'TOOL_CALL_START',
          rule: 'parent-message-mismatch',
          message: `TOOL_CALL_START for tool call 'c1' has subagentRunId 's1', but its parent message 'm1' belongs to the parent agent. A tool call belongs to the message that carries it: give it that message's subagentRunId.`,
        },
      ]);
    });

    it('should report REASONING_ENCRYPTED_VALUE and ACTIVITY_DELTA tagged unlike their entity (subagent-mismatch)', () => {
      expect(
        violationsOf([
          RS,
          toolStart('c1', { subagentRunId: 's1' }),
          toolEnd('c1'),
          { type: 'REASONING_ENCRYPTED_VALUE', subtype: 'tool-call', entityId: 'c1', encryptedValue: 'xyz', subagentRunId: 's2' },
          { type: 'ACTIVITY_SNAPSHOT', messageId: 'a1', activityType: 'plan', content: {} },
          { type: 'ACTIVITY_DELTA', messageId: 'a1', activityType: 'plan', patch: [], subagentRunId: 's1' },
          RF,
        ]).map(({ index, message }) => ({ index, message })),
      ).toEqual([
        { index: 3, message: `REASONING_ENCRYPTED_VALUE for tool call 'c1' has subagentRunId 's2', but the tool call belongs to subagent 's1'. Tag every event of an entity with the subagentRunId it was opened with, or leave the tag out.` },
        { index: 5, message: `ACTIVITY_DELTA for activity 'a1' has subagentRunId 's1', but the activity belongs to the parent agent. Tag every event of an entity with the subagentRunId it was opened with, or leave the tag out.` },
      ]);
    });
  });

  describe('chunk events', () => {
    it('should accept chunk streams, closed by the next other event or by RUN_FINISHED', () => {
      expect(
        violationsOf([
          RS,
          { type: 'TEXT_MESSAGE_CHUNK', messageId: 'm1', delta: 'Hel' },
          { type: 'TEXT_MESSAGE_CHUNK', delta: 'lo' },
          { type: 'TOOL_CALL_CHUNK', toolCallId: 'c1', toolCallName: 'search', parentMessageId: 'm1', delta: '{"q":' },
          { type: 'TOOL_CALL_CHUNK', delta: '"x"}' },
          { type: 'TOOL_CALL_RESULT', messageId: 't1', toolCallId: 'c1', content: 'ok' },
          { type: 'REASONING_MESSAGE_CHUNK', messageId: 'r1', delta: 'hmm' },
          RF,
        ]),
      ).toEqual([]);
    });

    it('should report an id-less chunk with no stream to continue (chunk-without-id)', () => {
      expect(violationsOf([RS, { type: 'TEXT_MESSAGE_CHUNK', delta: 'x' }, RF])).toEqual([
        {
          index: 1,
          type: 'TEXT_MESSAGE_CHUNK',
          rule: 'chunk-without-id',
          message: 'TEXT_MESSAGE_CHUNK has no messageId, and the parent agent is not streaming a text message to continue. Give the first chunk of each text message its messageId.',
        },
      ]);
    });

    it('should report the first TOOL_CALL_CHUNK of a call without a name (chunk-without-name)', () => {
      expect(violationsOf([RS, { type: 'TOOL_CALL_CHUNK', toolCallId: 'c1', delta: '{}' }, RF])).toEqual([
        {
          index: 1,
          type: 'TOOL_CALL_CHUNK',
          rule: 'chunk-without-name',
          message: `TOOL_CALL_CHUNK starts tool call 'c1' without a toolCallName. Name the tool on the first chunk of each call.`,
        },
      ]);
    });

    it('should report a later chunk that changes an opener field (chunk-mismatch)', () => {
      expect(violationsOf([RS, { type: 'TEXT_MESSAGE_CHUNK', messageId: 'm1', delta: 'x' }, { type: 'TEXT_MESSAGE_CHUNK', role: 'user', delta: 'y' }, RF])).toEqual([
        {
          index: 2,
          type: 'TEXT_MESSAGE_CHUNK',
          rule: 'chunk-mismatch',
          message: `TEXT_MESSAGE_CHUNK for text message 'm1' has role 'user', but the text message started with role 'assistant'. Repeat a field on a later chunk only with the value it started with.`,
        },
      ]);
    });

    it('should report an untagged, id-less chunk when several lanes stream (ambiguous-chunk)', () => {
      expect(
        violationsOf([
          RS,
          subagentStarted('s1'),
          subagentStarted('s2'),
          { type: 'TEXT_MESSAGE_CHUNK', messageId: 'a', subagentRunId: 's1', delta: 'x' },
          { type: 'TEXT_MESSAGE_CHUNK', messageId: 'b', subagentRunId: 's2', delta: 'x' },
          { type: 'TEXT_MESSAGE_CHUNK', delta: 'y' },
          { type: 'SUBAGENT_FINISHED', subagentRunId: 's1' },
          { type: 'SUBAGENT_FINISHED', subagentRunId: 's2' },
          RF,
        ]),
      ).toEqual([
        {
          index: 5,
          type: 'TEXT_MESSAGE_CHUNK',
          rule: 'ambiguous-chunk',
          message: `TEXT_MESSAGE_CHUNK has neither messageId nor subagentRunId, but 2 lanes (subagent 's1', subagent 's2') are streaming a text message. Tag the chunk with the subagentRunId it belongs to.`,
        },
      ]);
    });

    it('should report a chunk that reopens an explicitly open message (duplicate-start)', () => {
      expect(violationsOf([RS, start('m1'), { type: 'TEXT_MESSAGE_CHUNK', messageId: 'm1', delta: 'x' }, end('m1'), RF]).map(({ index, rule }) => ({ index, rule }))).toEqual([
        { index: 2, rule: 'duplicate-start' },
      ]);
    });
  });

  it('should do what its doc example says', () => {
    const verifier = createAguiVerifier();
    const events = [
      { type: 'RUN_STARTED', threadId: 't1', runId: 'r1' },
      { type: 'TEXT_MESSAGE_CONTENT', messageId: 'm1', delta: 'Hi' },
      { type: 'RUN_FINISHED', threadId: 't1', runId: 'r1' },
    ];
    const violations = [...events.flatMap((event, index) => verifier.verify(event, index)), ...verifier.end()];
    expect(violations.map((violation) => `#${violation.index} ${violation.rule}`)).toEqual(['#1 content-without-start']);
  });

  it('should give each verifier its own state', () => {
    const first = createAguiVerifier();
    const second = createAguiVerifier();
    expect(first.verify(RS, 0)).toEqual([]);
    expect(first.verify(start('m1'), 1)).toEqual([]);
    expect(second.verify(RS, 0)).toEqual([]);
    expect(second.verify(content('m1'), 1).map(({ rule }) => rule)).toEqual(['content-without-start']);
    expect(first.verify(content('m1'), 2)).toEqual([]);
  });

  it('should check a long token stream quickly', () => {
    const verifier = createAguiVerifier();
    verifier.verify(RS, 0);
    verifier.verify(start('m1'), 1);
    const token = content('m1');
    const began = performance.now();
    for (let index = 2; index < 200_002; index++) verifier.verify(token, index);
    // About 0.1 µs per token on a laptop: a generous bound that still catches a zod parse per token.
    expect(performance.now() - began).toBeLessThan(1000);
  });

  describe('agreement with the official client (@ag-ui/client runAgent)', () => {
    // Hand-made broken streams: both must reject them. Each names the rules this verifier reports.
    const broken: [string, unknown[], string[]][] = [
      ['no RUN_STARTED', [start('m1'), end('m1'), RF], ['first-event']],
      ['a second RUN_STARTED', [RS, RS, RF], ['run-already-started']],
      ['an event after RUN_FINISHED', [RS, RF, start('m1')], ['event-after-run-finished']],
      ['RUN_FINISHED after RUN_ERROR', [RS, { type: 'RUN_ERROR', message: 'boom' }, RF], ['event-after-run-error']],
      ['a duplicate TEXT_MESSAGE_START', [RS, start('m1'), start('m1'), end('m1'), RF], ['duplicate-start']],
      ['content without a start', [RS, content('m1'), RF], ['content-without-start']],
      ['an END without a start', [RS, toolEnd('c1'), RF], ['end-without-start']],
      ['a message left open at RUN_FINISHED', [RS, start('m1'), RF], ['open-at-run-finished']],
      ['a step left open at RUN_FINISHED', [RS, { type: 'STEP_STARTED', stepName: 's' }, RF], ['open-at-run-finished']],
      ['a reasoning span left open at RUN_FINISHED', [RS, { type: 'REASONING_START', messageId: 'r' }, RF], ['open-at-run-finished']],
      ['a subagent left open at RUN_FINISHED', [RS, subagentStarted('s1'), RF], ['open-at-run-finished']],
      ['a duplicate step', [RS, { type: 'STEP_STARTED', stepName: 's' }, { type: 'STEP_STARTED', stepName: 's' }, RF], ['duplicate-step', 'open-at-run-finished']],
      ['a step finished that never started', [RS, { type: 'STEP_FINISHED', stepName: 's' }, RF], ['step-not-started']],
      ['a subagent id reused', [RS, subagentStarted('s1'), { type: 'SUBAGENT_FINISHED', subagentRunId: 's1' }, subagentStarted('s1'), RF], ['subagent-id-reused']],
      ['an unknown parent subagent', [RS, subagentStarted('s2', { parentSubagentRunId: 's0' }), RF], ['subagent-parent-unknown']],
      ['a subagent finished twice', [RS, subagentStarted('s1'), { type: 'SUBAGENT_FINISHED', subagentRunId: 's1' }, { type: 'SUBAGENT_FINISHED', subagentRunId: 's1' }, RF], ['subagent-not-active']],
      ['a continuation with another subagent', [RS, start('m1', { subagentRunId: 's1' }), content('m1', { subagentRunId: 's2' }), end('m1'), RF], ['subagent-mismatch']],
      ['a tool call unlike its parent message', [RS, start('m1'), toolStart('c1', { parentMessageId: 'm1', subagentRunId: 's1' }), end('m1'), RF], ['parent-message-mismatch']],
      ['null for an optional field', [RS, start('m1', { name: null }), end('m1'), RF], ['invalid-event']],
      ['a bad role', [RS, start('m1', { role: 'wizard' }), end('m1'), RF], ['invalid-event']],
      ['an id-less first chunk', [RS, { type: 'TEXT_MESSAGE_CHUNK', delta: 'x' }, RF], ['chunk-without-id']],
      ['a nameless first tool chunk', [RS, { type: 'TOOL_CALL_CHUNK', toolCallId: 'c1', delta: '{}' }, RF], ['chunk-without-name']],
      [
        "a subagent's chunk stream ended by an untagged END",
        [RS, { type: 'TEXT_MESSAGE_CHUNK', messageId: 'a', delta: 'c', subagentRunId: 's2' }, end('a'), RF],
        ['end-without-start'],
      ],
      [
        "a subagent's tool chunks ended by an untagged END, then another lane's event",
        [RS, { type: 'TOOL_CALL_CHUNK', toolCallId: 'c1', toolCallName: 'f', delta: '{}', subagentRunId: 's2' }, toolEnd('c1'), { type: 'STEP_STARTED', stepName: 'x', subagentRunId: 's2' }, RF],
        ['end-without-start', 'open-at-run-finished'],
      ],
    ];

    it.each(broken)('should reject, as the client does, %s', async (_name, events, rules) => {
      expect(violationsOf(events).map(({ rule }) => rule)).toEqual(rules);
      expect(await officialVerdict(events)).toBe('invalid');
    });

    // Stricter on purpose, as warnings: the client drops what it does not know with a warning and
    // accepts a stream that simply stops; a verifier says so, as a producer should send neither.
    const stricter: [string, unknown[], string[]][] = [
      ['an unknown event type', [RS, { type: 'PROGRESS_UPDATE', percent: 50 }, RF], ['unknown-type']],
      ['a value that is not an event', [RS, 'oops', RF], ['not-an-event']],
      ['a stream that stops mid-run', [RS, start('m1')], ['no-terminal-event', 'open-at-end']],
      ['an empty stream', [], ['no-run']],
    ];

    it.each(stricter)('should warn, where the client accepts, about %s', async (_name, events, rules) => {
      expect(violationsOf(events).map(({ rule }) => rule)).toEqual(rules);
      expect(await officialVerdict(events)).toBe('valid');
    });

    const recordings = fixtureFiles('ag-ui', ['.json', '.jsonl']);

    (haveFixtures ? describe : describe.skip)(`recorded AG-UI streams${haveFixtures ? '' : ' (skipped: ../shared/fixtures is absent)'}`, () => {
      it('should find the recordings', () => {
        expect(recordings.length).toBeGreaterThanOrEqual(8);
      });

      it.each(recordings)('should accept %s as the client does', async (name) => {
        const events = readAguiRecording('ag-ui', name);
        expect(violationsOf(events)).toEqual([]);
        expect(await officialVerdict(events)).toBe('valid');
      });

      it('should accept the dojo trace, whose RUN_FINISHED runId differs from RUN_STARTED, as the client does', async () => {
        const events = readAguiRecording('ag-ui', 'dojo-langgraph-ts-frontend-tool-call.agui.json');
        const runIds = events.filter((event) => event.type === 'RUN_STARTED' || event.type === 'RUN_FINISHED').map((event) => event.runId);
        expect(new Set(runIds).size).toBe(2);
        expect(violationsOf(events)).toEqual([]);
        expect(await officialVerdict(events)).toBe('valid');
      });

      // Each recording broken three ways (the third only where it has an explicit START): both must reject every variant.
      const variants: [string, (events: Record<string, unknown>[]) => Record<string, unknown>[] | undefined, string[]][] = [
        ['without its RUN_STARTED', (events) => events.slice(1), ['first-event']],
        ['with an event after RUN_FINISHED', (events) => [...events, { type: 'STATE_SNAPSHOT', snapshot: {} }], ['event-after-run-finished']],
        [
          'without its first explicit START',
          (events) => {
            const first = events.findIndex((event) => event.type === 'TEXT_MESSAGE_START' || event.type === 'TOOL_CALL_START');
            return first === -1 ? undefined : events.filter((_, index) => index !== first);
          },
          // Dropping a START orphans its CONTENT, or its END when it had none.
          ['content-without-start', 'end-without-start'],
        ],
      ];
      const cases = recordings.flatMap((name) =>
        variants.flatMap(([how, breakIt, rules]) => {
          const events = breakIt(readAguiRecording('ag-ui', name));
          return events === undefined ? [] : [[name, how, events, rules] as const];
        }),
      );

      it.each(cases)('should reject %s %s, as the client does', async (_name, _how, events, rules) => {
        expect(violationsOf(events).some((violation) => rules.includes(violation.rule))).toBe(true);
        expect(await officialVerdict(events)).toBe('invalid');
      });
    });
  });
});

describe('createAguiVerifier on events it cannot read', () => {
  it('should warn about an event whose getter throws as not-an-event, and go on', () => {
    const hostile = Object.defineProperty({ type: 'TEXT_MESSAGE_START', messageId: 'm1' }, 'role', {
      enumerable: true,
      get() {
        throw new Error('role is not available');
      },
    });
    const violations = violationsOf([RS, hostile, RF]);
    expect(violations.map(({ index, rule }) => `${index} ${rule}`)).toEqual(['1 not-an-event']);
    expect(violations[0].message).toBe('The event could not be read: role is not available. Send plain data objects.');
  });
});

describe('createAguiVerifier id-collision (given the history)', () => {
  const history: Message[] = [
    { id: 'u1', role: 'user', content: 'Find rxjs' },
    { id: 'a1', role: 'assistant', content: '', toolCalls: [{ id: 'c1', type: 'function', function: { name: 'search', arguments: '{"q":"old"}' } }] },
    { id: 'surface-1', role: 'activity', activityType: 'a2ui-surface', content: {} },
  ];
  const advice = 'The client finds messages and tool calls by id and would change the one it holds: give every message and tool call a run starts an id of its own.';
  const check = (events: readonly unknown[], messages: Message[] = history) => {
    const verifier = createAguiVerifier({ messages });
    return [...events.flatMap((event, index) => verifier.verify(event, index)), ...verifier.end()];
  };
  const rules = (violations: AguiViolation[]) => violations.map(({ index, rule }) => `#${index} ${rule}`);

  it('should report a text message, a tool call and a tool result message that reuse history ids, naming the id and what it collided with', () => {
    const violations = check([
      RS,
      start('u1'),
      end('u1'),
      toolStart('c1', { parentMessageId: 'm2' }),
      toolEnd('c1'),
      { type: 'TOOL_CALL_RESULT', messageId: 'a1', toolCallId: 'c1', content: 'x' },
      RF,
    ]);
    expect(violations).toEqual([
      { index: 1, type: 'TEXT_MESSAGE_START', rule: 'id-collision', severity: 'violation', message: `TEXT_MESSAGE_START starts a message under id 'u1', which names a user message of the conversation history. ${advice}` },
      { index: 3, type: 'TOOL_CALL_START', rule: 'id-collision', severity: 'violation', message: `TOOL_CALL_START starts a tool call under id 'c1', which names a tool call of the conversation history. ${advice}` },
      { index: 5, type: 'TOOL_CALL_RESULT', rule: 'id-collision', severity: 'violation', message: `TOOL_CALL_RESULT starts a message under id 'a1', which names an assistant message of the conversation history. ${advice}` },
    ]);
  });

  it('should report an ACTIVITY_SNAPSHOT reusing a text message\'s id, a text chunk reusing an activity\'s, and a call put into a history message', () => {
    const violations = check([
      RS,
      start('m1'),
      { type: 'ACTIVITY_SNAPSHOT', messageId: 'm1', activityType: 'plan', content: {} },
      end('m1'),
      { type: 'ACTIVITY_SNAPSHOT', messageId: 'p1', activityType: 'plan', content: {} },
      { type: 'TEXT_MESSAGE_CHUNK', messageId: 'p1', delta: 'x' },
      toolStart('c2', { parentMessageId: 'a1' }),
      toolEnd('c2'),
      RF,
    ]);
    expect(rules(violations)).toEqual(['#2 id-collision', '#5 id-collision', '#6 id-collision']);
    expect(violations[0].message).toBe(`ACTIVITY_SNAPSHOT starts a message under id 'm1', which names this run's text message. ${advice}`);
    expect(violations[2].message).toBe(`TOOL_CALL_START for tool call 'c2' names parentMessageId 'a1', which is an assistant message of the conversation history: the client would add the call to it. ${advice}`);
  });

  it('should accept the updates that keep their ids: a history surface replaced, a history call answered, text in its tool call\'s message', () => {
    expect(
      check([
        RS,
        { type: 'ACTIVITY_SNAPSHOT', messageId: 'surface-1', activityType: 'a2ui-surface', content: { a: 1 }, replace: true },
        { type: 'ACTIVITY_SNAPSHOT', messageId: 'surface-1', activityType: 'a2ui-surface', content: { a: 2 } },
        { type: 'TOOL_CALL_RESULT', messageId: 't2', toolCallId: 'c1', content: 'approved' },
        toolStart('c3', { parentMessageId: 'm3' }),
        toolEnd('c3'),
        start('m3'),
        end('m3'),
        RF,
      ]),
    ).toEqual([]);
  });

  it('should take a RUN_STARTED input and a MESSAGES_SNAPSHOT as history, check each run afresh, and stay off without the option', () => {
    const echo = { ...RS, input: { threadId: 't1', runId: 'r1', messages: [{ id: 'h1', role: 'user', content: 'x' }], tools: [], context: [], state: {}, forwardedProps: {} } };
    const events = [echo, start('h1'), end('h1'), { type: 'MESSAGES_SNAPSHOT', messages: [{ id: 'h2', role: 'user', content: 'y' }] }, start('h2'), end('h2'), RF];
    expect(rules(check(events, []))).toEqual(['#1 id-collision', '#4 id-collision']);
    expect(check([RS, start('m1'), end('m1'), RF, RS, start('m1'), end('m1'), RF], [])).toEqual([]);
    expect(violationsOf(events)).toEqual([]);
  });
});
