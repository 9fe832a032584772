import { EventType, type Message } from '@ag-ui/core';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { from } from 'rxjs';
import type { AgentEvent } from '../../lib/protocol/agentEvent.js';
import { toAgui } from '../../operators/toAgui.js';
import { collect, diagnosticsSink, terminals } from '../support/helpers.js';
import { runWithOracle } from '../support/oracle.js';

type Raw = Record<string, any>;

const ownDir = resolve(__dirname, '../fixtures/ag-ui');

const read = (name: string): Raw[] =>
  readFileSync(resolve(ownDir, name), 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line));

/**
 * What the capture says, by content: each text message's deltas and each call's argument
 * fragments, concatenated in order, by their upstream ids (text messages in the order they first
 * appear). The messages of the RUN_STARTED input are the history, not the run's.
 */
function upstreamContent(events: readonly Raw[]) {
  const texts = new Map<string, string>();
  const args = new Map<string, string>();
  for (const event of events) {
    if (event.type === EventType.TEXT_MESSAGE_START || event.type === EventType.TEXT_MESSAGE_CONTENT) {
      texts.set(event.messageId, (texts.get(event.messageId) ?? '') + (event.delta ?? ''));
    } else if (event.type === EventType.TOOL_CALL_START || event.type === EventType.TOOL_CALL_ARGS) {
      args.set(event.toolCallId, (args.get(event.toolCallId) ?? '') + (event.delta ?? ''));
    }
  }
  const history: Message[] = events.find((event) => event.type === EventType.RUN_STARTED)?.input?.messages ?? [];
  return { texts: [...texts.values()], args, history };
}

/** The capture repaired as `agui-rx verify --fix` repairs it (toAgui, with the ids of its RUN_STARTED), then judged by the official client. */
async function repair(events: readonly Raw[]) {
  const started = events.find((event) => event.type === EventType.RUN_STARTED)!;
  const { onDiagnostic, messages: diagnostics } = diagnosticsSink();
  const fixed = await collect(from(events as AgentEvent[]).pipe(toAgui({ threadId: started.threadId, runId: started.runId, onDiagnostic })));
  const run = await runWithOracle(from(fixed), { runId: started.runId });
  return { fixed, run, diagnostics };
}

/** Whether `events` has an event matching `later` after one matching `first`, with one matching `between` in between. */
function hasBetween(events: readonly Raw[], first: (e: Raw) => boolean, between: (e: Raw) => boolean, later: (e: Raw) => boolean): boolean {
  const at = events.findIndex(first);
  const mid = events.findIndex((e, i) => i > at && between(e));
  return at >= 0 && mid > at && events.some((e, i) => i > mid && later(e));
}

const isStep = (e: Raw) => e.type === EventType.STEP_STARTED || e.type === EventType.STEP_FINISHED;

describe('our own AG-UI captures, repaired as verify --fix does and judged by the official client', () => {
  describe('langgraph-steps-between-args.agui.jsonl', () => {
    const capture = read('langgraph-steps-between-args.agui.jsonl');

    it('should hold its case: step events, duplicates included, between one call\'s fragments, between a START and its first fragment, and between text deltas', () => {
      const args = (id: string) => (e: Raw) => e.type === EventType.TOOL_CALL_ARGS && e.toolCallId === id;
      expect(hasBetween(capture, args('call_calc_01'), isStep, args('call_calc_01'))).toBe(true);
      expect(hasBetween(capture, (e) => e.type === EventType.TOOL_CALL_START && e.toolCallId === 'call_time_02', isStep, args('call_time_02'))).toBe(true);
      const text = (e: Raw) => e.type === EventType.TEXT_MESSAGE_CONTENT && e.messageId === 'run--7c1e-0';
      expect(hasBetween(capture, text, isStep, text)).toBe(true);
      // A STEP_STARTED for the step already running.
      const running = new Set<string>();
      const duplicates = capture.filter((e) => {
        if (e.type === EventType.STEP_STARTED) return running.has(e.stepName) || (running.add(e.stepName), false);
        if (e.type === EventType.STEP_FINISHED) return !running.delete(e.stepName);
        return false;
      });
      expect(duplicates.map((e) => e.type)).toEqual([EventType.STEP_STARTED, EventType.STEP_STARTED, EventType.STEP_FINISHED]);
    });

    it('should keep every call\'s arguments byte-identical to the capture\'s fragments, and every text message whole', async () => {
      const { run, fixed, diagnostics } = await repair(capture);
      const expected = upstreamContent(capture);

      const calls = run.newMessages.flatMap((message) => (message.role === 'assistant' ? (message.toolCalls ?? []) : []));
      expect(new Map(calls.map((call) => [call.id, call.function.arguments]))).toEqual(expected.args);
      expect(expected.args.get('call_calc_01')).toBe('{"expression": "42 * 7"}');
      expect(run.newMessages.filter((message) => message.role === 'assistant' && typeof message.content === 'string' && message.content !== '').map((message) => message.content)).toEqual(expected.texts);
      expect(run.newMessages.filter((message) => message.role === 'tool').map((message) => message.content)).toEqual(['294', '2025-03-04T12:00:00Z']);

      // One run, ended once; the calls closed where the capture closed them, not at a step event.
      expect(terminals(fixed)).toEqual([fixed[fixed.length - 1]]);
      expect(fixed.filter((e) => e.type === EventType.TOOL_CALL_END)).toEqual([
        { type: EventType.TOOL_CALL_END, toolCallId: 'call_calc_01' },
        { type: EventType.TOOL_CALL_END, toolCallId: 'call_time_02' },
      ]);
      // The duplicate step events are dropped, and said so; nothing of a call is.
      expect(diagnostics.filter((message) => message.includes('TOOL_CALL'))).toEqual([]);
      expect(diagnostics.filter((message) => message.startsWith('Dropped STEP_'))).toHaveLength(3);
    });
  });

  describe('reused-message-ids.agui.jsonl', () => {
    const capture = read('reused-message-ids.agui.jsonl');

    it('should hold its case: a START for an ended message, content after an END without START, and a START under a history message\'s id', () => {
      const ended = (id: string) => (e: Raw) => e.type === EventType.TEXT_MESSAGE_END && e.messageId === id;
      const endAt = capture.findIndex(ended('msg-a'));
      expect(capture.findIndex((e, i) => i > endAt && e.type === EventType.TEXT_MESSAGE_START && e.messageId === 'msg-a')).toBeGreaterThan(endAt);
      // Content right after its message's END.
      expect(capture.some((e, i) => ended('msg-a')(e) && capture[i + 1]?.type === EventType.TEXT_MESSAGE_CONTENT && capture[i + 1].messageId === 'msg-a')).toBe(true);
      const history = upstreamContent(capture).history.map((message) => message.id);
      expect(capture.some((e) => e.type === EventType.TEXT_MESSAGE_START && history.includes(e.messageId))).toBe(true);
    });

    it('should keep a reopened message under its id, appended to, and give a reply under a history id its own message', async () => {
      const { run, diagnostics } = await repair(capture);
      const expected = upstreamContent(capture);

      // The history message is untouched; the run's messages hold the capture's text, one message per upstream id.
      expect(run.messages[0]).toEqual(expected.history[0]);
      const texts = run.newMessages.filter((message) => message.role === 'assistant' && typeof message.content === 'string');
      expect(texts.map((message) => message.content)).toEqual(expected.texts);
      expect(texts[0]).toMatchObject({ id: 'msg-a', content: 'Checking your calendar: one event, standup at 09:30.' });
      expect(texts[1].id).not.toBe('msg-user-1');
      expect(run.newMessages.flatMap((message) => (message.role === 'assistant' ? (message.toolCalls ?? []) : [])).map((call) => call.function.arguments)).toEqual([expected.args.get('call-cal')]);

      expect(diagnostics).toEqual([
        "TEXT_MESSAGE_CONTENT for message 'msg-a', which was already ended: it was reopened with TEXT_MESSAGE_START under its id, and the client appends to it. Send TEXT_MESSAGE_START before the content of a message you continue.",
        expect.stringMatching(/^TEXT_MESSAGE_START starts a text message under id 'msg-user-1', which names a user message of the conversation history; it was sent as '[^']+'\./),
      ]);
    });
  });
});
