import { EventType, type Event, type Message, type MessagesSnapshotEvent, type RunAgentInput } from '@ag-ui/core';
import { Observable, from, map, mergeMap, of, pipe, retry, take, type OperatorFunction } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import type { AgentEvent } from '../../lib/protocol/agentEvent.js';
import { AguiRxError } from '../../lib/protocol/errors.js';
import { mapRunLifecycle } from '../../operators/mapRunLifecycle.js';
import { messagesSnapshot } from '../../operators/messagesSnapshot.js';
import { openMessageStartContentEnd } from '../../operators/openMessageStartContentEnd.js';
import { toAgui } from '../../operators/toAgui.js';
import { toolCallCorrelator } from '../../operators/toolCallCorrelator.js';
import { collect, createTestScheduler, sequentialIds } from '../support/helpers.js';
import { runWithOracle } from '../support/oracle.js';

const ev = (type: string, fields: Record<string, unknown> = {}) => ({ type, ...fields }) as AgentEvent;
const snapshotOf = (messages: unknown[]) => ev(EventType.MESSAGES_SNAPSHOT, { messages });
const call = (id: string, name: string, args: string) => ({ id, type: 'function', function: { name, arguments: args } });

/** The messages of the (one) MESSAGES_SNAPSHOT in `events`. */
const snapshotMessages = (events: readonly { type: string }[]) => {
  const snapshots = events.filter((event) => event.type === EventType.MESSAGES_SNAPSHOT) as MessagesSnapshotEvent[];
  expect(snapshots).toHaveLength(1);
  return snapshots[0].messages;
};

describe('messagesSnapshot', () => {
  let testScheduler: TestScheduler;

  beforeEach(() => {
    testScheduler = createTestScheduler();
  });

  const values = {
    s: ev(EventType.TEXT_MESSAGE_START, { messageId: 'm1', role: 'assistant' }),
    c: ev(EventType.TEXT_MESSAGE_CONTENT, { messageId: 'm1', delta: 'Hi' }),
    e: ev(EventType.TEXT_MESSAGE_END, { messageId: 'm1' }),
    f: ev(EventType.RUN_FINISHED, { threadId: 't1', runId: 'r1' }),
    r: ev(EventType.RUN_ERROR, { message: 'boom' }),
    x: ev(EventType.CUSTOM, { name: 'progress', value: 50 }),
    w: ev(EventType.RAW, { event: { any: 'thing' } }),
    M: snapshotOf([{ id: 'm1', role: 'assistant', content: 'Hi' }]),
    H: snapshotOf([{ id: 'm1', role: 'assistant', content: 'H' }]),
    N: snapshotOf([]),
  };

  it('should send the conversation just before RUN_FINISHED', () =>
    testScheduler.run(({ hot, expectObservable, expectSubscriptions }) => {
      // prettier-ignore
      const e1 =  hot('--s--c--e--f---|', values);
      // prettier-ignore
      const e1subs =  '^--------------!';
      // prettier-ignore
      const expected ='--s--c--e--(Mf)|';

      expectObservable(e1.pipe(messagesSnapshot())).toBe(expected, values);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    }));

  it('should send the conversation before completing when no RUN_FINISHED came', () =>
    testScheduler.run(({ hot, expectObservable, expectSubscriptions }) => {
      // prettier-ignore
      const e1 =  hot('--s--c--e--|', values);
      // prettier-ignore
      const e1subs =  '^----------!';
      // prettier-ignore
      const expected ='--s--c--e--(M|)';

      expectObservable(e1.pipe(messagesSnapshot())).toBe(expected, values);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    }));

  it('should raise an error when the source raises an error, with no snapshot', () =>
    testScheduler.run(({ hot, expectObservable, expectSubscriptions }) => {
      // prettier-ignore
      const e1 =  hot('--s--c--#', values);
      // prettier-ignore
      const e1subs =  '^-------!';
      // prettier-ignore
      const expected ='--s--c--#';

      expectObservable(e1.pipe(messagesSnapshot())).toBe(expected, values);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    }));

  it('should send no snapshot after RUN_ERROR', () =>
    testScheduler.run(({ hot, expectObservable }) => {
      // prettier-ignore
      const e1 =  hot('--s--r--|', values);
      // prettier-ignore
      const expected ='--s--r--|';

      expectObservable(e1.pipe(messagesSnapshot())).toBe(expected, values);
    }));

  it('should send an empty snapshot for an empty source', () =>
    testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
      // prettier-ignore
      const e1 =  cold<AgentEvent>('|');
      // prettier-ignore
      const e1subs =   '(^!)';
      // prettier-ignore
      const expected = '(N|)';

      expectObservable(e1.pipe(messagesSnapshot())).toBe(expected, values);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    }));

  it('should not complete with a never source', () =>
    testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
      // prettier-ignore
      const e1 =  cold<AgentEvent>('-');
      // prettier-ignore
      const e1subs =   '^';
      // prettier-ignore
      const expected = '-';

      expectObservable(e1.pipe(messagesSnapshot())).toBe(expected);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    }));

  it('should raise an error with a throw source', () =>
    testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
      // prettier-ignore
      const e1 =  cold<AgentEvent>('#');
      // prettier-ignore
      const e1subs =   '(^!)';
      // prettier-ignore
      const expected = '#';

      expectObservable(e1.pipe(messagesSnapshot())).toBe(expected);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    }));

  it('should allow unsubscribing early and explicitly', () =>
    testScheduler.run(({ hot, expectObservable, expectSubscriptions }) => {
      // prettier-ignore
      const e1 =  hot('--s--c--e--f--|', values);
      // prettier-ignore
      const unsub =   '------!        ';
      // prettier-ignore
      const e1subs =  '^-----!        ';
      // prettier-ignore
      const expected ='--s--c-        ';

      expectObservable(e1.pipe(messagesSnapshot()), unsub).toBe(expected, values);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    }));

  it('should not break unsubscription chains when unsubscribed explicitly', () =>
    testScheduler.run(({ hot, expectObservable, expectSubscriptions }) => {
      // prettier-ignore
      const e1 =  hot('--s--c--e--f--|', values);
      // prettier-ignore
      const unsub =   '------!        ';
      // prettier-ignore
      const e1subs =  '^-----!        ';
      // prettier-ignore
      const expected ='--s--c-        ';

      const result = e1.pipe(
        mergeMap((event) => of(event)),
        messagesSnapshot(),
        mergeMap((event) => of(event)),
      );

      expectObservable(result, unsub).toBe(expected, values);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    }));

  it('should give the first events of a synchronous source and complete when take ends the output', () => {
    let subscriptions = 0;
    const synchronousObservable = new Observable<AgentEvent>((subscriber) => {
      subscriptions++;
      subscriber.next(values.s);
      for (let count = 0; !subscriber.closed && count < 10; count++) subscriber.next(values.c);
    });

    testScheduler.run(({ expectObservable }) => {
      // prettier-ignore
      const expected = '(scc|)';

      expectObservable(synchronousObservable.pipe(messagesSnapshot(), take(3))).toBe(expected, values);
    });

    expect(subscriptions).toBe(1);
  });

  it('should keep a separate conversation for each subscription', () =>
    testScheduler.run(({ hot, expectObservable }) => {
      const h = ev(EventType.TEXT_MESSAGE_CONTENT, { messageId: 'm1', delta: 'H' });
      const i = ev(EventType.TEXT_MESSAGE_CONTENT, { messageId: 'm1', delta: 'i' });
      // prettier-ignore
      const e1 =  hot('--s--h--i--f---|', { ...values, h, i });
      // prettier-ignore
      const sub2 =    '------^---------';
      // prettier-ignore
      const expected1 ='--s--h--i--(Mf)|';
      // prettier-ignore
      const expected2 ='--------i--(Nf)|';

      const source = e1.pipe(messagesSnapshot());
      expectObservable(source).toBe(expected1, { ...values, h, i });
      expectObservable(source, sub2).toBe(expected2, { ...values, h, i });
    }));

  it('should start over on retry', () =>
    testScheduler.run(({ cold, expectObservable }) => {
      // prettier-ignore
      const e1 =  cold('--s--c--#', values);
      // prettier-ignore
      const expected = '--s--c----s--c--#';

      expectObservable(e1.pipe(messagesSnapshot(), retry(1))).toBe(expected, values);
    }));

  it('should pass CUSTOM and RAW untouched, and send once only', () =>
    testScheduler.run(({ hot, expectObservable }) => {
      // prettier-ignore
      const e1 =  hot('--x--w--f---x--|', values);
      // prettier-ignore
      const expected ='--x--w--(Nf)x--|';

      expectObservable(e1.pipe(messagesSnapshot())).toBe(expected, values);
    }));

  describe('rules', () => {
    // The snapshot the operator sends (the last one: an upstream MESSAGES_SNAPSHOT passes through too).
    const run = (events: AgentEvent[], input?: Pick<RunAgentInput, 'messages'>) =>
      collect(from(events).pipe(messagesSnapshot({ input }))).then((out) => (out.at(-1) as MessagesSnapshotEvent).messages);

    it('should start from the input messages and add those RUN_STARTED carries', async () => {
      const user = { id: 'u1', role: 'user', content: 'Hello' };
      const earlier = { id: 'u0', role: 'user', content: 'Earlier' };
      const messages = await run(
        [
          ev(EventType.RUN_STARTED, { threadId: 't1', runId: 'r1', input: { threadId: 't1', runId: 'r1', messages: [user, earlier] } }),
          ev(EventType.TEXT_MESSAGE_START, { messageId: 'm1', role: 'assistant' }),
          ev(EventType.TEXT_MESSAGE_CONTENT, { messageId: 'm1', delta: 'Hi' }),
        ],
        { messages: [user as Message] },
      );
      expect(messages).toEqual([user, earlier, { id: 'm1', role: 'assistant', content: 'Hi' }]);
    });

    it('should not share the input messages or its own with the snapshot', async () => {
      const input = { messages: [{ id: 'u1', role: 'user', content: 'Hello' } as Message] };
      const events = await collect(from([ev(EventType.RUN_FINISHED)]).pipe(messagesSnapshot({ input })));
      const [snapshot] = snapshotMessages(events);
      expect(snapshot).toEqual(input.messages[0]);
      expect(snapshot).not.toBe(input.messages[0]);
    });

    it('should add tool calls to the parent message, creating it when needed, and results after their call', async () => {
      const messages = await run([
        ev(EventType.TEXT_MESSAGE_START, { messageId: 'a1', role: 'assistant' }),
        ev(EventType.TEXT_MESSAGE_CONTENT, { messageId: 'a1', delta: 'Searching' }),
        ev(EventType.TEXT_MESSAGE_END, { messageId: 'a1' }),
        ev(EventType.TOOL_CALL_START, { toolCallId: 'c1', toolCallName: 'search', parentMessageId: 'a1' }),
        ev(EventType.TOOL_CALL_ARGS, { toolCallId: 'c1', delta: '{"q":' }),
        ev(EventType.TOOL_CALL_START, { toolCallId: 'c2', toolCallName: 'open', parentMessageId: 'a1' }),
        ev(EventType.TOOL_CALL_ARGS, { toolCallId: 'c1', delta: '"rx"}' }),
        ev(EventType.TOOL_CALL_ARGS, { toolCallId: 'c2', delta: '{}' }),
        ev(EventType.TOOL_CALL_END, { toolCallId: 'c1' }),
        ev(EventType.TOOL_CALL_END, { toolCallId: 'c2' }),
        ev(EventType.TEXT_MESSAGE_START, { messageId: 'a2', role: 'assistant' }),
        ev(EventType.TEXT_MESSAGE_CONTENT, { messageId: 'a2', delta: 'Meanwhile' }),
        ev(EventType.TOOL_CALL_RESULT, { messageId: 'r1', toolCallId: 'c1', content: 'hits' }),
        ev(EventType.TOOL_CALL_RESULT, { messageId: 'r2', toolCallId: 'c2', content: 'page', role: 'tool' }),
        ev(EventType.TOOL_CALL_START, { toolCallId: 'c3', toolCallName: 'ask', parentMessageId: 'p3' }),
        ev(EventType.TOOL_CALL_START, { toolCallId: 'c4', toolCallName: 'ask' }),
      ]);
      expect(messages).toEqual([
        { id: 'a1', role: 'assistant', content: 'Searching', toolCalls: [call('c1', 'search', '{"q":"rx"}'), call('c2', 'open', '{}')] },
        { id: 'r1', role: 'tool', toolCallId: 'c1', content: 'hits' },
        { id: 'r2', role: 'tool', toolCallId: 'c2', content: 'page' },
        { id: 'a2', role: 'assistant', content: 'Meanwhile' },
        { id: 'p3', role: 'assistant', toolCalls: [call('c3', 'ask', '')] },
        { id: 'c4', role: 'assistant', toolCalls: [call('c4', 'ask', '')] },
      ]);
    });

    it('should build reasoning, activity and encrypted values, and merge metadata', async () => {
      const messages = await run([
        ev(EventType.REASONING_START, { messageId: 'z1' }),
        ev(EventType.REASONING_MESSAGE_START, { messageId: 'z1', role: 'reasoning', metadata: { a: 1 } }),
        ev(EventType.REASONING_MESSAGE_CONTENT, { messageId: 'z1', delta: 'Think' }),
        ev(EventType.REASONING_MESSAGE_END, { messageId: 'z1', metadata: { b: 2 } }),
        ev(EventType.REASONING_END, { messageId: 'z1' }),
        ev(EventType.REASONING_ENCRYPTED_VALUE, { subtype: 'message', entityId: 'z1', encryptedValue: 'enc' }),
        ev(EventType.ACTIVITY_SNAPSHOT, { messageId: 'act1', activityType: 'plan', content: { steps: ['a'] } }),
        ev(EventType.ACTIVITY_DELTA, { messageId: 'act1', activityType: 'plan', patch: [{ op: 'add', path: '/steps/1', value: 'b' }] }),
        ev(EventType.ACTIVITY_SNAPSHOT, { messageId: 'act2', activityType: 'plan', content: { steps: [] }, subagentRunId: 's1' }),
        ev(EventType.ACTIVITY_SNAPSHOT, { messageId: 'act2', activityType: 'plan', content: { steps: ['ignored'] }, replace: false }),
        ev(EventType.TEXT_MESSAGE_START, { messageId: 'm1', role: 'user', name: 'ann', subagentRunId: 's1' }),
      ]);
      expect(messages).toEqual([
        { id: 'z1', role: 'reasoning', content: 'Think', metadata: { a: 1, b: 2 }, encryptedValue: 'enc' },
        { id: 'act1', role: 'activity', activityType: 'plan', content: { steps: ['a', 'b'] } },
        { id: 'act2', role: 'activity', activityType: 'plan', content: { steps: [] }, subagentRunId: 's1' },
        { id: 'm1', role: 'user', content: '', name: 'ann', subagentRunId: 's1' },
      ]);
    });

    it('should take an upstream MESSAGES_SNAPSHOT as the conversation, keeping streamed reasoning', async () => {
      const messages = await run([
        ev(EventType.REASONING_MESSAGE_START, { messageId: 'z1', role: 'reasoning' }),
        ev(EventType.TEXT_MESSAGE_START, { messageId: 'm1', role: 'assistant' }),
        snapshotOf([{ id: 'u1', role: 'user', content: 'Hello' }, { id: 'm1', role: 'assistant', content: 'Stored' }]),
      ]);
      expect(messages).toEqual([
        { id: 'z1', role: 'reasoning', content: '' },
        { id: 'm1', role: 'assistant', content: 'Stored' },
        { id: 'u1', role: 'user', content: 'Hello' },
      ]);
    });

    it('should end with INVALID_PATCH for an ACTIVITY_DELTA through __proto__', async () => {
      const events$ = from([
        ev(EventType.ACTIVITY_SNAPSHOT, { messageId: 'act1', activityType: 'plan', content: {} }),
        ev(EventType.ACTIVITY_DELTA, { messageId: 'act1', activityType: 'plan', patch: [{ op: 'add', path: '/__proto__/polluted', value: 1 }] }),
      ]).pipe(messagesSnapshot());
      await expect(collect(events$)).rejects.toThrow(
        new AguiRxError('INVALID_PATCH', "ACTIVITY_DELTA operation 0 (add /__proto__/polluted) goes through '__proto__', which could change object prototypes; it was refused. Rename that key in your state."),
      );
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    });

    it('should end with INVALID_ACTIVITY_DELTA for a patch that does not apply', async () => {
      const events$ = from([
        ev(EventType.ACTIVITY_SNAPSHOT, { messageId: 'act1', activityType: 'plan', content: {} }),
        ev(EventType.ACTIVITY_DELTA, { messageId: 'act1', activityType: 'plan', patch: [{ op: 'replace', path: '/missing', value: 1 }] }),
      ]).pipe(messagesSnapshot());
      await expect(collect(events$)).rejects.toMatchObject({ code: 'INVALID_ACTIVITY_DELTA' });
      await expect(collect(events$)).rejects.toThrow(/^ACTIVITY_DELTA for activity 'act1' does not apply to its content: .*Send an ACTIVITY_SNAPSHOT first, or patch only paths the content has\.$/);
    });
  });

  describe('conformance', () => {
    const ids = { threadId: 'thread-1', runId: 'run-1' };
    const history: Message[] = [{ id: 'u1', role: 'user', content: 'Plan my trip' }];
    const agent = (): Observable<AgentEvent> =>
      from([
        ev(EventType.REASONING_MESSAGE_CHUNK, { delta: 'The user wants a plan.' }),
        ev(EventType.TEXT_MESSAGE_CHUNK, { messageId: 'm1', delta: 'Let me ' }),
        ev(EventType.TEXT_MESSAGE_CHUNK, { messageId: 'm1', delta: 'look.' }),
        ev(EventType.TOOL_CALL_CHUNK, { toolCallId: 'c1', toolCallName: 'search', delta: '{"q":"trains"}' }),
        ev(EventType.TOOL_CALL_CHUNK, { toolCallId: 'c2', toolCallName: 'confirm', delta: '{"ok": true}' }),
        ev(EventType.TOOL_CALL_RESULT, { toolCallId: 'c1', content: { trains: 2 } }),
        ev(EventType.ACTIVITY_SNAPSHOT, { messageId: 'plan-1', activityType: 'plan', content: { steps: ['book'] } }),
        ev(EventType.TEXT_MESSAGE_CHUNK, { delta: 'Two trains.' }),
      ]);
    /** toAgui with messagesSnapshot placed where the brief says: after the operators that make START/CONTENT. */
    const withSnapshot = (input: RunAgentInput, where: 'before' | 'after'): OperatorFunction<AgentEvent, Event> => {
      const generateId = sequentialIds('id-');
      const options = { ...ids, input, generateId };
      return where === 'after'
        ? pipe(toAgui(options), messagesSnapshot(), map((event) => event as Event))
        : pipe(openMessageStartContentEnd({ generateId }), toolCallCorrelator({ generateId }), messagesSnapshot({ input }), mapRunLifecycle(options));
    };

    for (const where of ['before', 'after'] as const) {
      it(`should equal what the official client built from the streamed events (placed ${where} mapRunLifecycle)`, async () => {
        const plain = await runWithOracle((input) => agent().pipe(toAgui({ ...ids, input, generateId: sequentialIds('id-') })), { initialMessages: history });
        const snapped = await runWithOracle((input) => agent().pipe(withSnapshot(input, where)), { initialMessages: history });

        const messages = snapshotMessages(snapped.events);
        expect(messages).toEqual(plain.messages);
        expect(snapped.messages).toEqual(plain.messages);
        expect(messages.map((message) => message.id)).toEqual(['u1', 'id-1', 'm1', 'id-2', 'plan-1', 'id-3']);
        expect(snapped.events.slice(-2).map((event) => event.type)).toEqual([EventType.MESSAGES_SNAPSHOT, EventType.RUN_FINISHED]);
      });
    }

    it('should come before an interrupt outcome, after everything is closed', async () => {
      const events$ = (input: RunAgentInput) =>
        from([
          ev(EventType.TEXT_MESSAGE_CHUNK, { messageId: 'm1', delta: 'May I?' }),
          ev(EventType.RUN_FINISHED, { outcome: { type: 'interrupt', interrupts: [{ id: 'i1', reason: 'tool_approval' }] } }),
        ]).pipe(withSnapshot(input, 'before'));
      const run = await runWithOracle(events$, { initialMessages: history });

      expect(run.events.map((event) => event.type)).toEqual([
        EventType.RUN_STARTED,
        EventType.TEXT_MESSAGE_START,
        EventType.TEXT_MESSAGE_CONTENT,
        EventType.TEXT_MESSAGE_END,
        EventType.MESSAGES_SNAPSHOT,
        EventType.RUN_FINISHED,
      ]);
      expect(snapshotMessages(run.events)).toEqual([...history, { id: 'm1', role: 'assistant', content: 'May I?' }]);
      expect(run.messages).toEqual(snapshotMessages(run.events));
    });
  });

  it('should keep the wire type after toAgui, so that the stream can be served as it is', async () => {
    // Type-checked by npm test: an Observable<Event>, what sendSSE and toSSEResponse take.
    const served: Observable<Event> = of<AgentEvent[]>({ type: EventType.TEXT_MESSAGE_CHUNK, delta: 'Hi' }).pipe(
      toAgui({ threadId: 't1', runId: 'r1', generateId: sequentialIds() }),
      messagesSnapshot(),
    );
    const run = await runWithOracle(served);
    expect(run.events.map((event) => event.type)).toContain(EventType.MESSAGES_SNAPSHOT);
    expect(run.messages).toEqual([{ id: 'id-1', role: 'assistant', content: 'Hi' }]);
  });
});
