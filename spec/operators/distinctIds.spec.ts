import { EventType, type Message } from '@ag-ui/core';
import { from, Observable, of, retry, take } from 'rxjs';
import type { TestScheduler } from 'rxjs/testing';
import type { AgentEvent } from '../../lib/protocol/agentEvent.js';
import { AguiRxError } from '../../lib/protocol/errors.js';
import { distinctIds } from '../../operators/distinctIds.js';
import { toAgui } from '../../operators/toAgui.js';
import { collect, createTestScheduler, diagnosticsSink, sequentialIds } from '../support/helpers.js';
import { runWithOracle } from '../support/oracle.js';

type Fields = Record<string, unknown>;

// Event builders: inputs and expected outputs are plain objects, compared with toEqual.
const ev = (type: EventType, fields: Fields = {}) => ({ type, ...fields }) as unknown as AgentEvent;
const textStart = (messageId: string, fields: Fields = {}) => ev(EventType.TEXT_MESSAGE_START, { messageId, role: 'assistant', ...fields });
const textContent = (messageId: string, delta: string) => ev(EventType.TEXT_MESSAGE_CONTENT, { messageId, delta });
const textEnd = (messageId: string) => ev(EventType.TEXT_MESSAGE_END, { messageId });
const callStart = (toolCallId: string, parentMessageId?: string, toolCallName = 'search') =>
  ev(EventType.TOOL_CALL_START, { toolCallId, toolCallName, ...(parentMessageId === undefined ? {} : { parentMessageId }) });
const callArgs = (toolCallId: string, delta: string) => ev(EventType.TOOL_CALL_ARGS, { toolCallId, delta });
const callEnd = (toolCallId: string) => ev(EventType.TOOL_CALL_END, { toolCallId });
const callResult = (toolCallId: string, messageId: string, content = 'done') => ev(EventType.TOOL_CALL_RESULT, { toolCallId, messageId, content });
const activity = (messageId: string, content: Fields, fields: Fields = {}) => ev(EventType.ACTIVITY_SNAPSHOT, { messageId, activityType: 'a2ui-surface', content, ...fields });

// The conversation before the run: a user message, an assistant message with a tool call (and its result), an A2UI surface.
const history: Message[] = [
  { id: 'u1', role: 'user', content: 'Find rxjs' },
  { id: 'a1', role: 'assistant', content: '', toolCalls: [{ id: 'c1', type: 'function', function: { name: 'search', arguments: '{"q":"old"}' } }] },
  { id: 't1', role: 'tool', toolCallId: 'c1', content: '3 hits' },
  { id: 'surface-1', role: 'activity', activityType: 'a2ui-surface', content: { a2ui_operations: [] } },
];

/** The operator under test with deterministic ids (`id-1`, `id-2`, …). */
const distinct = (sink = diagnosticsSink(), messages: Message[] = history) => distinctIds({ messages, generateId: sequentialIds(), onDiagnostic: sink.onDiagnostic });

const advice = 'Give every message and tool call the run starts an id of its own: the client finds messages and tool calls by id, and would change the one it already holds.';

describe('distinctIds', () => {
  let testScheduler: TestScheduler;

  beforeEach(() => {
    testScheduler = createTestScheduler();
  });

  it('should send a text message whose id names a history message under a fresh id, in the same frames, with one diagnostic', () => {
    const sink = diagnosticsSink();
    testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
      const values = {
        s: textStart('u1'),
        c: textContent('u1', 'Hi'),
        e: textEnd('u1'),
        S: textStart('id-1'),
        C: textContent('id-1', 'Hi'),
        E: textEnd('id-1'),
      };
      // prettier-ignore
      const e1 =  cold('--s--c--e--|', values);
      // prettier-ignore
      const e1subs =   '^----------!';
      // prettier-ignore
      const expected = '--S--C--E--|';
      expectObservable(e1.pipe(distinct(sink))).toBe(expected, values);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    });
    expect(sink.messages).toEqual([`TEXT_MESSAGE_START starts a text message under id 'u1', which names a user message of the conversation history; it was sent as 'id-1'. ${advice}`]);
  });

  it('should pass every event unchanged when no id collides', () => {
    const sink = diagnosticsSink();
    testScheduler.run(({ cold, expectObservable }) => {
      const values = { s: textStart('m1'), c: textContent('m1', 'Hi'), k: callStart('c2', 'm1'), a: callArgs('c2', '{}'), x: callEnd('c2'), r: callResult('c2', 'r2'), e: textEnd('m1') };
      // prettier-ignore
      const e1 =  cold('-s-c-k-a-x-r-e-|', values);
      // prettier-ignore
      const expected = '-s-c-k-a-x-r-e-|';
      expectObservable(e1.pipe(distinct(sink))).toBe(expected, values);
    });
    expect(sink.messages).toEqual([]);
  });

  it('should pass a source error through', () =>
    testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
      const values = { s: textStart('u1'), S: textStart('id-1') };
      // prettier-ignore
      const e1 =  cold('--s--#', values);
      // prettier-ignore
      const e1subs =   '^----!';
      // prettier-ignore
      const expected = '--S--#';
      expectObservable(e1.pipe(distinct())).toBe(expected, values);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    }));

  it('should complete with an empty source, not complete with a never source, and error with a throw source', () =>
    testScheduler.run(({ cold, expectObservable }) => {
      expectObservable(cold<AgentEvent>('|').pipe(distinct())).toBe('|');
      expectObservable(cold<AgentEvent>('-').pipe(distinct())).toBe('-');
      expectObservable(cold<AgentEvent>('#').pipe(distinct())).toBe('#');
    }));

  it('should allow unsubscribing early and explicitly, and through a chain', () =>
    testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
      const values = { s: textStart('u1'), c: textContent('u1', 'Hi'), S: textStart('id-1'), C: textContent('id-1', 'Hi') };
      // prettier-ignore
      const e1 =  cold('--s--c--c--|', values);
      // prettier-ignore
      const unsub =    '-------!    ';
      // prettier-ignore
      const e1subs =   '^------!    ';
      // prettier-ignore
      const expected = '--S--C-     ';
      expectObservable(e1.pipe(distinct(), take(10)), unsub).toBe(expected, values);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    }));

  it('should stop listening to a synchronous observable when unsubscribed', async () => {
    const seen: string[] = [];
    const source$ = new Observable<AgentEvent>((subscriber) => {
      for (let i = 0; !subscriber.closed && i < 10; i++) {
        seen.push(`e${i}`);
        subscriber.next(textContent('m1', String(i)));
      }
      subscriber.complete();
    });
    expect(await collect(source$.pipe(distinct(), take(2)))).toHaveLength(2);
    expect(seen).toEqual(['e0', 'e1']);
  });

  it('should keep state per subscription, and start afresh when retried', async () => {
    const operator = distinctIds({ messages: history, generateId: sequentialIds(), onDiagnostic: () => {} });
    const source$ = of(textStart('m1'), callStart('c1', 'm1'));
    const first = await collect(source$.pipe(operator));
    const second = await collect(source$.pipe(operator));
    // Each subscription replaces 'c1' once; its later text 'm1' is its own run's message in both.
    expect(first).toEqual([textStart('m1'), callStart('id-1', 'm1')]);
    expect(second).toEqual([textStart('m1'), callStart('id-2', 'm1')]);
    let attempt = 0;
    const failingOnce$ = new Observable<AgentEvent>((subscriber) => {
      subscriber.next(textStart('m1'));
      if (attempt++ === 0) subscriber.error(new Error('flaky'));
      else subscriber.complete();
    });
    // Had the retry kept state, 'm1' would name the first attempt's message and... still be a text message: no diagnostic either way.
    const sink = diagnosticsSink();
    expect(await collect(failingOnce$.pipe(distinct(sink), retry(1)))).toEqual([textStart('m1'), textStart('m1')]);
    expect(sink.messages).toEqual([]);
  });

  describe('tool calls', () => {
    it('should send a call whose id names a history call under a fresh id, and its ARGS, END, RESULT and pending id under it', () => {
      const sink = diagnosticsSink();
      testScheduler.run(({ cold, expectObservable }) => {
        const values = {
          k: callStart('c1', 'm1'),
          a: callArgs('c1', '{"q":"new"}'),
          x: callEnd('c1'),
          r: callResult('c1', 'r1'),
          f: ev(EventType.RUN_FINISHED, { outcome: { type: 'success', pendingToolCallIds: ['c1', 'c9'] } }),
          K: callStart('id-1', 'm1'),
          A: callArgs('id-1', '{"q":"new"}'),
          X: callEnd('id-1'),
          R: callResult('id-1', 'r1'),
          F: ev(EventType.RUN_FINISHED, { outcome: { type: 'success', pendingToolCallIds: ['id-1', 'c9'] } }),
        };
        // prettier-ignore
        const e1 =  cold('-k-a-x-r-f-|', values);
        // prettier-ignore
        const expected = '-K-A-X-R-F-|';
        expectObservable(e1.pipe(distinct(sink))).toBe(expected, values);
      });
      expect(sink.messages).toEqual([`TOOL_CALL_START starts a tool call under id 'c1', which names a tool call of the conversation history; it was sent as 'id-1'. ${advice}`]);
    });

    it('should keep the toolCallId of a TOOL_CALL_RESULT answering a history call (a client tool), and replace only a colliding messageId', () => {
      const sink = diagnosticsSink();
      testScheduler.run(({ cold, expectObservable }) => {
        const values = { r: callResult('c1', 't2'), q: callResult('c1', 'u1'), Q: callResult('c1', 'id-1') };
        // prettier-ignore
        const e1 =  cold('-r-q-|', values);
        // prettier-ignore
        const expected = '-r-Q-|';
        expectObservable(e1.pipe(distinct(sink))).toBe(expected, values);
      });
      expect(sink.messages).toEqual([`TOOL_CALL_RESULT starts a tool result message under id 'u1', which names a user message of the conversation history; it was sent as 'id-1'. ${advice}`]);
    });

    it('should put a call whose parentMessageId names a history message into a new assistant message, which later text of the turn joins', () => {
      const sink = diagnosticsSink();
      testScheduler.run(({ cold, expectObservable }) => {
        const values = {
          k: callStart('c2', 'a1'),
          s: textStart('a1'),
          c: textContent('a1', 'Done'),
          K: callStart('c2', 'id-1'),
          S: textStart('id-1'),
          C: textContent('id-1', 'Done'),
        };
        // prettier-ignore
        const e1 =  cold('-k-s-c-|', values);
        // prettier-ignore
        const expected = '-K-S-C-|';
        expectObservable(e1.pipe(distinct(sink))).toBe(expected, values);
      });
      expect(sink.messages).toEqual([
        `TOOL_CALL_START for tool call 'c2' names parentMessageId 'a1', which is an assistant message of the conversation history; the call was put in a new assistant message 'id-1'. ${advice}`,
      ]);
    });

    it('should replace the id of a call without parent that names a message: the client names the call\'s message after the call', () => {
      const sink = diagnosticsSink();
      testScheduler.run(({ cold, expectObservable }) => {
        const values = { k: callStart('u1'), a: callArgs('u1', '{}'), K: callStart('id-1'), A: callArgs('id-1', '{}') };
        // prettier-ignore
        const e1 =  cold('-k-a-|', values);
        // prettier-ignore
        const expected = '-K-A-|';
        expectObservable(e1.pipe(distinct(sink))).toBe(expected, values);
      });
      expect(sink.messages).toEqual([
        `TOOL_CALL_START starts a tool call under id 'u1', which names a user message of the conversation history (the client names the assistant message of a call without an assistant parentMessageId after the call); it was sent as 'id-1'. ${advice}`,
      ]);
    });

    it('should give a fresh id to a call the producer starts under the id this run gave another call, which goes on under its own', () => {
      const sink = diagnosticsSink();
      testScheduler.run(({ cold, expectObservable }) => {
        const values = {
          k: callStart('c1'),
          l: callStart('id-1', 'm2'),
          a: callArgs('c1', '{"a":1}'),
          b: callArgs('id-1', '{"b":2}'),
          e: callEnd('c1'),
          f: callEnd('id-1'),
          K: callStart('id-1'),
          L: callStart('id-2', 'm2'),
          A: callArgs('id-1', '{"a":1}'),
          B: callArgs('id-2', '{"b":2}'),
          E: callEnd('id-1'),
          F: callEnd('id-2'),
        };
        // prettier-ignore
        const e1 =  cold('-k-l-a-b-e-f-|', values);
        // prettier-ignore
        const expected = '-K-L-A-B-E-F-|';
        expectObservable(e1.pipe(distinct(sink))).toBe(expected, values);
      });
      expect(sink.messages).toEqual([
        `TOOL_CALL_START starts a tool call under id 'c1', which names a tool call of the conversation history; it was sent as 'id-1'. ${advice}`,
        `TOOL_CALL_START starts a tool call under id 'id-1', which names the tool call this run sent under it for the producer's 'c1' (generateId makes ids the producer also uses); it was sent as 'id-2'. ${advice}`,
      ]);
    });

    it('should read an empty parentMessageId as none: a call named after a history message is renamed, as one without a parent is', () => {
      const sink = diagnosticsSink();
      testScheduler.run(({ cold, expectObservable }) => {
        const values = { k: callStart('u1', ''), a: callArgs('u1', '{}'), K: callStart('id-1', ''), A: callArgs('id-1', '{}') };
        // prettier-ignore
        const e1 =  cold('-k-a-|', values);
        // prettier-ignore
        const expected = '-K-A-|';
        expectObservable(e1.pipe(distinct(sink))).toBe(expected, values);
      });
      expect(sink.messages).toEqual([
        `TOOL_CALL_START starts a tool call under id 'u1', which names a user message of the conversation history (the client names the assistant message of a call without an assistant parentMessageId after the call); it was sent as 'id-1'. ${advice}`,
      ]);
    });

    it("should send a call whose parentMessageId names a message of the run that is no assistant message without parentMessageId, and say so", () => {
      const sink = diagnosticsSink();
      testScheduler.run(({ cold, expectObservable }) => {
        const values = {
          r: ev(EventType.REASONING_MESSAGE_START, { messageId: 'r1', role: 'reasoning' }),
          e: ev(EventType.REASONING_MESSAGE_END, { messageId: 'r1' }),
          k: callStart('k1', 'r1'),
          t: callResult('k1', 'tr9'),
          l: callStart('k2', 'tr9'),
          K: callStart('k1'),
          L: callStart('k2'),
        };
        // prettier-ignore
        const e1 =  cold('-r-e-k-t-l-|', values);
        // prettier-ignore
        const expected = '-r-e-K-t-L-|';
        expectObservable(e1.pipe(distinct(sink))).toBe(expected, values);
      });
      expect(sink.messages).toEqual([
        "TOOL_CALL_START for tool call 'k1' names parentMessageId 'r1', which is this run's reasoning message, not an assistant message; it was sent without parentMessageId, and the client puts the call in an assistant message named after it. Name an assistant message as parentMessageId, or none.",
        "TOOL_CALL_START for tool call 'k2' names parentMessageId 'tr9', which is this run's tool result message, not an assistant message; it was sent without parentMessageId, and the client puts the call in an assistant message named after it. Name an assistant message as parentMessageId, or none.",
      ]);
    });

    it('should map REASONING_ENCRYPTED_VALUE entityId to the renamed call or message', () =>
      testScheduler.run(({ cold, expectObservable }) => {
        const values = {
          k: callStart('c1', 'm1'),
          v: ev(EventType.REASONING_ENCRYPTED_VALUE, { subtype: 'tool-call', entityId: 'c1', encryptedValue: 'x' }),
          s: textStart('u1'),
          w: ev(EventType.REASONING_ENCRYPTED_VALUE, { subtype: 'message', entityId: 'u1', encryptedValue: 'y' }),
          K: callStart('id-1', 'm1'),
          V: ev(EventType.REASONING_ENCRYPTED_VALUE, { subtype: 'tool-call', entityId: 'id-1', encryptedValue: 'x' }),
          S: textStart('id-2'),
          W: ev(EventType.REASONING_ENCRYPTED_VALUE, { subtype: 'message', entityId: 'id-2', encryptedValue: 'y' }),
        };
        // prettier-ignore
        const e1 =  cold('-k-v-s-w-|', values);
        // prettier-ignore
        const expected = '-K-V-S-W-|';
        expectObservable(e1.pipe(distinct())).toBe(expected, values);
      }));
  });

  describe('across kinds', () => {
    it('should send an ACTIVITY_SNAPSHOT reusing an open text message\'s id as a new activity, its deltas too', () => {
      const sink = diagnosticsSink();
      testScheduler.run(({ cold, expectObservable }) => {
        const values = {
          s: textStart('m1'),
          v: activity('m1', { a: 1 }),
          d: ev(EventType.ACTIVITY_DELTA, { messageId: 'm1', activityType: 'a2ui-surface', patch: [] }),
          c: textContent('m1', 'Hi'),
          V: activity('id-1', { a: 1 }),
          D: ev(EventType.ACTIVITY_DELTA, { messageId: 'id-1', activityType: 'a2ui-surface', patch: [] }),
        };
        // prettier-ignore
        const e1 =  cold('-s-v-d-c-|', values);
        // prettier-ignore
        const expected = '-s-V-D-c-|';
        expectObservable(e1.pipe(distinct(sink))).toBe(expected, values);
      });
      expect(sink.messages).toEqual([`ACTIVITY_SNAPSHOT starts an activity under id 'm1', which names this run's text message; it was sent as 'id-1'. ${advice}`]);
    });

    it('should send a text or reasoning message reusing an activity\'s or a tool result\'s id under a fresh id', () => {
      const sink = diagnosticsSink();
      testScheduler.run(({ cold, expectObservable }) => {
        const values = {
          v: activity('x1', {}, { activityType: 'plan' }),
          s: textStart('x1'),
          r: callResult('c1', 'x2'),
          g: ev(EventType.REASONING_MESSAGE_START, { messageId: 'x2', role: 'reasoning' }),
          S: textStart('id-1'),
          G: ev(EventType.REASONING_MESSAGE_START, { messageId: 'id-2', role: 'reasoning' }),
        };
        // prettier-ignore
        const e1 =  cold('-v-s-r-g-|', values);
        // prettier-ignore
        const expected = '-v-S-r-G-|';
        expectObservable(e1.pipe(distinct(sink))).toBe(expected, values);
      });
      expect(sink.messages).toEqual([
        `TEXT_MESSAGE_START starts a text message under id 'x1', which names this run's activity 'plan'; it was sent as 'id-1'. ${advice}`,
        `REASONING_MESSAGE_START starts a reasoning message under id 'x2', which names this run's tool result message; it was sent as 'id-2'. ${advice}`,
      ]);
    });

    it('should keep a reasoning message inside a span of its own id, and text joining the assistant message its tool call created', () => {
      const sink = diagnosticsSink();
      testScheduler.run(({ cold, expectObservable }) => {
        const values = {
          p: ev(EventType.REASONING_START, { messageId: 'r1' }),
          g: ev(EventType.REASONING_MESSAGE_START, { messageId: 'r1', role: 'reasoning' }),
          k: callStart('c2', 'm2'),
          s: textStart('m2'),
        };
        // prettier-ignore
        const e1 =  cold('-p-g-k-s-|', values);
        // prettier-ignore
        const expected = '-p-g-k-s-|';
        expectObservable(e1.pipe(distinct(sink))).toBe(expected, values);
      });
      expect(sink.messages).toEqual([]);
    });
  });

  describe('reopened messages', () => {
    it('should keep the id of a START that reopens an ended text message of the same role, and rename one of another role', () => {
      const sink = diagnosticsSink();
      testScheduler.run(({ cold, expectObservable }) => {
        const values = {
          a: textStart('m2'),
          b: textContent('m2', 'Hi'),
          c: textEnd('m2'),
          d: textStart('m2', { role: 'user' }),
          e: textContent('m2', 'Me'),
          D: textStart('id-1', { role: 'user' }),
          E: textContent('id-1', 'Me'),
        };
        // prettier-ignore
        const e1 =  cold('-a-b-c-a-b-c-d-e-|', values);
        // prettier-ignore
        const expected = '-a-b-c-a-b-c-D-E-|';
        expectObservable(e1.pipe(distinct(sink))).toBe(expected, values);
      });
      expect(sink.messages).toEqual([`TEXT_MESSAGE_START starts a text message under id 'm2', which names this run's text message; it was sent as 'id-1'. ${advice}`]);
    });

    it('should rename a user-role START under the id of the assistant message a tool call created', () => {
      const sink = diagnosticsSink();
      testScheduler.run(({ cold, expectObservable }) => {
        const values = { k: callStart('c2', 'm2'), s: textStart('m2', { role: 'user' }), S: textStart('id-1', { role: 'user' }) };
        // prettier-ignore
        const e1 =  cold('-k-s-|', values);
        // prettier-ignore
        const expected = '-k-S-|';
        expectObservable(e1.pipe(distinct(sink))).toBe(expected, values);
      });
      expect(sink.messages).toEqual([`TEXT_MESSAGE_START starts a text message under id 'm2', which names this run's assistant message of a tool call; it was sent as 'id-1'. ${advice}`]);
    });
  });

  describe('activities', () => {
    it('should keep the id of a snapshot updating a history activity of the same type (an A2UI surface across runs), and replace it for another type', () => {
      const sink = diagnosticsSink();
      testScheduler.run(({ cold, expectObservable }) => {
        const values = {
          p: activity('surface-1', { steps: [] }, { activityType: 'plan' }),
          q: activity('surface-1', { steps: [1] }, { activityType: 'plan' }),
          P: activity('id-1', { steps: [] }, { activityType: 'plan' }),
          Q: activity('id-1', { steps: [1] }, { activityType: 'plan' }),
        };
        // prettier-ignore
        const e1 =  cold('-p-q-|', values);
        // prettier-ignore
        const expected = '-P-Q-|';
        expectObservable(e1.pipe(distinct(sink))).toBe(expected, values);
      });
      expect(sink.messages).toEqual([`ACTIVITY_SNAPSHOT starts an activity under id 'surface-1', which names an activity 'a2ui-surface' of the conversation history; it was sent as 'id-1'. ${advice}`]);
    });

    it('should keep a history surface the run updated its own from then on: a later snapshot may change its type, with replace true or false', () => {
      const sink = diagnosticsSink();
      testScheduler.run(({ cold, expectObservable }) => {
        const values = {
          v: activity('surface-1', { a2ui_operations: [1] }, { replace: true }),
          w: activity('surface-1', { a2ui_operations: [2] }, { replace: false }),
          p: activity('surface-1', { steps: [] }, { activityType: 'plan' }),
        };
        // prettier-ignore
        const e1 =  cold('-v-w-p-|', values);
        // prettier-ignore
        const expected = '-v-w-p-|';
        expectObservable(e1.pipe(distinct(sink))).toBe(expected, values);
      });
      expect(sink.messages).toEqual([]);
    });
  });

  describe('history from the stream', () => {
    it('should take the ids of an upstream RUN_STARTED input and of a MESSAGES_SNAPSHOT as the history\'s', () => {
      const sink = diagnosticsSink();
      testScheduler.run(({ cold, expectObservable }) => {
        const values = {
          a: ev(EventType.RUN_STARTED, { threadId: 't', runId: 'r', input: { threadId: 't', runId: 'r', messages: [{ id: 'h1', role: 'user', content: 'x' }], tools: [], context: [], state: {}, forwardedProps: {} } }),
          s: textStart('h1'),
          m: ev(EventType.MESSAGES_SNAPSHOT, { messages: [{ id: 'h2', role: 'assistant', content: 'y' }] }),
          t: textStart('h2'),
          S: textStart('id-1'),
          T: textStart('id-2'),
        };
        // prettier-ignore
        const e1 =  cold('-a-s-m-t-|', values);
        // prettier-ignore
        const expected = '-a-S-m-T-|';
        expectObservable(e1.pipe(distinctIds({ generateId: sequentialIds(), onDiagnostic: sink.onDiagnostic }))).toBe(expected, values);
      });
      expect(sink.messages).toHaveLength(2);
    });
  });

  describe('bad input', () => {
    it('should throw INVALID_OPTIONS at call time when messages is not an array', () => {
      expect(() => distinctIds({ messages: 'u1' as unknown as Message[] })).toThrow(
        new AguiRxError('INVALID_OPTIONS', `distinctIds 'messages' must be the conversation's messages, an array (got "u1"). Pass RunAgentInput 'messages', or omit it.`),
      );
    });

    it('should pass events whose ids are not strings, and skip history entries that are not messages', async () => {
      const messages = [null, 3, { id: 5 }, { id: 'u1', role: 'user', content: 'x', toolCalls: [null, { id: 7 }] }] as unknown as Message[];
      const events = [textStart(5 as unknown as string), callStart(undefined as unknown as string), textStart('u1')];
      const out = await collect(from(events).pipe(distinctIds({ messages, generateId: sequentialIds(), onDiagnostic: () => {} })));
      expect(out).toEqual([events[0], events[1], textStart('id-1')]);
    });
  });
});

describe('toAgui with a history (judged by the official client)', () => {
  const run = { threadId: 'thread-1', runId: 'run-1' };
  const input = { ...run, messages: history, tools: [], context: [], state: {}, forwardedProps: {} };

  /** The agent's events through toAgui with the input, then through the client holding the history. */
  async function throughClient(events: AgentEvent[]) {
    const sink = diagnosticsSink();
    const output = await collect(from(events).pipe(toAgui({ ...run, input, generateId: sequentialIds(), onDiagnostic: sink.onDiagnostic })));
    const oracle = await runWithOracle(from(output), { initialMessages: structuredClone(history) });
    return { oracle, diagnostics: sink.messages };
  }

  it('should put a call whose parentMessageId names a reasoning message or an activity of the run into a message named after the call, as the client does, without its warning', async () => {
    const warn = jest.spyOn(console, 'warn').mockImplementation(() => {});
    try {
      const { oracle, diagnostics } = await throughClient([
        { type: EventType.REASONING_MESSAGE_CHUNK, messageId: 'r1', delta: 'Plan' },
        { type: EventType.TOOL_CALL_START, toolCallId: 'x1', toolCallName: 'search', parentMessageId: 'r1' },
        { type: EventType.TOOL_CALL_END, toolCallId: 'x1' },
        { type: EventType.ACTIVITY_SNAPSHOT, messageId: 'v1', activityType: 'plan', content: { step: 1 } },
        { type: EventType.TOOL_CALL_START, toolCallId: 'x2', toolCallName: 'search', parentMessageId: 'v1' },
        { type: EventType.TOOL_CALL_END, toolCallId: 'x2' },
      ]);
      const added = oracle.messages.slice(history.length) as { id: string; role: string; toolCalls?: { id: string }[] }[];
      expect(added.map((message) => [message.id, message.role, (message.toolCalls ?? []).map((call) => call.id)])).toEqual([
        ['r1', 'reasoning', []],
        ['x1', 'assistant', ['x1']],
        ['v1', 'activity', []],
        ['x2', 'assistant', ['x2']],
      ]);
      expect(diagnostics.filter((message) => message.includes('not an assistant message'))).toHaveLength(2);
      expect(warn.mock.calls.filter((call) => String(call[0]).includes('parentMessageId'))).toEqual([]);
    } finally {
      warn.mockRestore();
    }
  });

  it('should keep two calls apart when the producer names its second with the id the run gave its first (a counter generateId)', async () => {
    const first: AgentEvent[] = [
      { type: EventType.TOOL_CALL_CHUNK, toolCallId: 'c1', toolCallName: 'f', delta: '{"a":1}' },
      { type: EventType.TEXT_MESSAGE_CHUNK, messageId: 'm2', delta: 'next' },
    ];
    // The id the run gives the history's call id 'c1' (the generator is the same at each run).
    const given = (await collect(from(first).pipe(toAgui({ ...run, input, generateId: sequentialIds(), onDiagnostic: () => {} })))).find((event) => event.type === EventType.TOOL_CALL_START) as { toolCallId: string };
    for (const second of [
      // After the first call ended, and while it is open.
      [...first, { type: EventType.TOOL_CALL_CHUNK, toolCallId: given.toolCallId, toolCallName: 'g', delta: '{"b":2}' }],
      [first[0], { type: EventType.TOOL_CALL_START, toolCallId: given.toolCallId, toolCallName: 'g' }, { type: EventType.TOOL_CALL_ARGS, toolCallId: given.toolCallId, delta: '{"b":2}' }, { type: EventType.TOOL_CALL_END, toolCallId: given.toolCallId }],
    ] as AgentEvent[][]) {
      const { oracle, diagnostics } = await throughClient(second);
      const calls = oracle.messages.slice(history.length).flatMap((message) => ((message as { toolCalls?: { id: string; function: { name: string; arguments: string } }[] }).toolCalls ?? []));
      expect(calls.map((call) => [call.function.name, call.function.arguments])).toEqual([
        ['f', '{"a":1}'],
        ['g', '{"b":2}'],
      ]);
      expect(new Set(calls.map((call) => call.id)).size).toBe(2);
      expect(diagnostics.filter((message) => message.includes('generateId makes ids the producer also uses'))).toHaveLength(1);
    }
  });

  it('should go on updating an activity whose id is also the id of a history call the run renamed', async () => {
    const { oracle, diagnostics } = await throughClient([
      { type: EventType.ACTIVITY_SNAPSHOT, messageId: 'c1', activityType: 'plan', content: { step: 1 } },
      { type: EventType.TOOL_CALL_CHUNK, toolCallId: 'c1', toolCallName: 'search', delta: '{}' },
      { type: EventType.ACTIVITY_SNAPSHOT, messageId: 'c1', activityType: 'plan', content: { step: 2 } },
    ] as AgentEvent[]);
    const activities = oracle.messages.filter((message) => message.role === 'activity' && (message as { activityType: string }).activityType === 'plan');
    expect(activities).toEqual([{ id: 'c1', role: 'activity', activityType: 'plan', content: { step: 2 } }]);
    expect(diagnostics).toEqual([`TOOL_CALL_START starts a tool call under id 'c1', which names a tool call of the conversation history; it was sent as 'id-2'. ${advice}`]);
  });

  it('should read an empty parentMessageId as none, as the client does: a call under a history message\'s id gets a message of its own', async () => {
    for (const call of [
      // A chunk, through the correlator, and an explicit START, as it is.
      [{ type: EventType.TOOL_CALL_CHUNK, toolCallId: 'u1', parentMessageId: '', toolCallName: 'search', delta: '{}' }],
      [
        { type: EventType.TOOL_CALL_START, toolCallId: 'u1', parentMessageId: '', toolCallName: 'search' },
        { type: EventType.TOOL_CALL_ARGS, toolCallId: 'u1', delta: '{}' },
        { type: EventType.TOOL_CALL_END, toolCallId: 'u1' },
      ],
    ] as AgentEvent[][]) {
      const { oracle } = await throughClient(call);
      const added = oracle.messages.slice(history.length) as { id: string; role: string; toolCalls?: { id: string }[] }[];
      // The history's user message 'u1' stays the only message under its id.
      expect(oracle.messages.filter((message) => message.id === 'u1')).toEqual([history[0]]);
      expect(added).toHaveLength(1);
      expect(added[0].role).toBe('assistant');
      expect(added[0].id).not.toBe('u1');
      expect(added[0].toolCalls).toHaveLength(1);
    }
  });

  it('should keep the user\'s message intact when the reply reuses its id: the reply is a message of its own', async () => {
    const { oracle, diagnostics } = await throughClient([{ type: EventType.TEXT_MESSAGE_CHUNK, messageId: 'u1', delta: 'Here you go' }]);
    expect(oracle.messages).toEqual([...history, { id: 'id-1', role: 'assistant', content: 'Here you go' }]);
    expect(diagnostics).toHaveLength(1);
  });

  it('should append to a message of the run reopened under its id, but never to a history message reopened by the run', async () => {
    const { oracle, diagnostics } = await throughClient([
      { type: EventType.TEXT_MESSAGE_START, messageId: 'm2', role: 'assistant' },
      { type: EventType.TEXT_MESSAGE_CONTENT, messageId: 'm2', delta: 'Found' },
      { type: EventType.TEXT_MESSAGE_END, messageId: 'm2' },
      { type: EventType.TEXT_MESSAGE_START, messageId: 'm2', role: 'assistant' },
      { type: EventType.TEXT_MESSAGE_CONTENT, messageId: 'm2', delta: ' it.' },
      { type: EventType.TEXT_MESSAGE_END, messageId: 'm2' },
      { type: EventType.TEXT_MESSAGE_START, messageId: 'a1', role: 'assistant' },
      { type: EventType.TEXT_MESSAGE_CONTENT, messageId: 'a1', delta: 'More.' },
      { type: EventType.TEXT_MESSAGE_END, messageId: 'a1' },
    ]);
    expect(oracle.messages).toEqual([...history, { id: 'm2', role: 'assistant', content: 'Found it.' }, { id: 'id-1', role: 'assistant', content: 'More.' }]);
    expect(diagnostics).toEqual([
      `TEXT_MESSAGE_START starts a text message under id 'a1', which names an assistant message of the conversation history; it was sent as 'id-1'. ${advice}`,
    ]);
  });

  it('should keep the history\'s tool call arguments when a call reuses its id: the new call has its own', async () => {
    const { oracle } = await throughClient([
      { type: EventType.TOOL_CALL_CHUNK, toolCallId: 'c1', toolCallName: 'search', delta: '{"q":"new"}' },
      { type: EventType.TOOL_CALL_RESULT, toolCallId: 'c1', messageId: 't9', content: '5 hits' },
    ]);
    expect(oracle.messages).toEqual([
      ...history,
      { id: 'id-1', role: 'assistant', toolCalls: [{ id: 'id-2', type: 'function', function: { name: 'search', arguments: '{"q":"new"}' } }] },
      { id: 't9', role: 'tool', toolCallId: 'id-2', content: '5 hits' },
    ]);
    expect(oracle.messages[1]).toEqual(history[1]);
  });

  it('should keep an open text message and its tool call when an ACTIVITY_SNAPSHOT reuses the message\'s id', async () => {
    const { oracle } = await throughClient([
      { type: EventType.TEXT_MESSAGE_CHUNK, messageId: 'm1', delta: 'Planning' },
      { type: EventType.ACTIVITY_SNAPSHOT, messageId: 'm1', activityType: 'plan', content: { steps: ['a'] } },
      { type: EventType.TOOL_CALL_START, toolCallId: 'c2', toolCallName: 'search', parentMessageId: 'm1' },
      { type: EventType.TOOL_CALL_ARGS, toolCallId: 'c2', delta: '{"q":"x"}' },
    ]);
    expect(oracle.messages).toEqual([
      ...history,
      { id: 'm1', role: 'assistant', content: 'Planning', toolCalls: [{ id: 'c2', type: 'function', function: { name: 'search', arguments: '{"q":"x"}' } }] },
      { id: 'id-1', role: 'activity', activityType: 'plan', content: { steps: ['a'] } },
    ]);
  });

  it('should update the history\'s A2UI surface in place when a snapshot replaces it (not a collision)', async () => {
    const { oracle, diagnostics } = await throughClient([
      { type: EventType.ACTIVITY_SNAPSHOT, messageId: 'surface-1', activityType: 'a2ui-surface', content: { a2ui_operations: [{ op: 1 }] }, replace: true },
    ]);
    expect(oracle.messages).toEqual([...history.slice(0, 3), { ...history[3], content: { a2ui_operations: [{ op: 1 }] } }]);
    expect(diagnostics).toEqual([]);
  });

  it('should answer a tool call of the history with its own toolCallId (a client tool\'s result; not a collision)', async () => {
    const pending: Message[] = [
      { id: 'u1', role: 'user', content: 'Delete it' },
      { id: 'a1', role: 'assistant', content: '', toolCalls: [{ id: 'c1', type: 'function', function: { name: 'confirm', arguments: '{}' } }] },
    ];
    const sink = diagnosticsSink();
    const output = await collect(
      from<AgentEvent[]>([{ type: EventType.TOOL_CALL_RESULT, toolCallId: 'c1', content: 'approved' }, { type: EventType.TEXT_MESSAGE_CHUNK, delta: 'Deleted' }]).pipe(
        toAgui({ ...run, input: { ...input, messages: pending }, generateId: sequentialIds(), onDiagnostic: sink.onDiagnostic }),
      ),
    );
    const oracle = await runWithOracle(from(output), { initialMessages: structuredClone(pending) });
    expect(oracle.messages).toEqual([...pending, { id: 'id-1', role: 'tool', toolCallId: 'c1', content: 'approved' }, { id: 'id-2', role: 'assistant', content: 'Deleted' }]);
    expect(sink.messages).toEqual([]);
  });
});
