import { EventType } from '@ag-ui/core';
import { from } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { aguiMarbles, expectAgui, runWithOfficialClient, sequentialIds } from '../../../lib/testing/index.js';
import { toAgui } from '../../../operators/toAgui.js';
import { createTestScheduler } from '../../support/helpers.js';
import { runWithOracle } from '../../support/oracle.js';

describe('aguiMarbles', () => {
  let testScheduler: TestScheduler;

  beforeEach(() => {
    testScheduler = createTestScheduler();
  });

  it('should mint id-1, id-2, … and name the n-th id without minting it', () => {
    const m = aguiMarbles();
    expect([m.id(2), m.generateId(), m.generateId(), m.id(1)]).toEqual(['id-2', 'id-1', 'id-2', 'id-1']);
    expect(aguiMarbles().generateId()).toBe('id-1');
    expect(aguiMarbles({ idPrefix: 'msg-' }).generateId()).toBe('msg-1');
  });

  it('should give the run options toAgui needs, with the run ids and the shared generateId', () => {
    const m = aguiMarbles({ threadId: 't9', runId: 'r9' });
    expect(m.runOptions).toEqual({ threadId: 't9', runId: 'r9', generateId: m.generateId });
    expect([m.threadId, m.runId]).toEqual(['t9', 'r9']);
    expect(aguiMarbles().runOptions).toMatchObject({ threadId: 'thread-1', runId: 'run-1' });
  });

  it('should build the events the operators send, with optional fields left out', () => {
    const m = aguiMarbles();
    const text = m.text('m1');
    const reasoning = m.reasoning('r1');
    const call = m.toolCall('c1', 'search');
    expect([
      m.chunk.text('Hi'),
      m.chunk.reasoning('Hmm'),
      m.chunk.toolCall('search', '{}'),
      text.start(),
      text.content('Hi'),
      text.end(),
      text.chunk('Hi'),
      reasoning.start(),
      reasoning.messageStart(),
      reasoning.content('Hmm'),
      reasoning.messageEnd(),
      reasoning.end(),
      reasoning.chunk('Hmm'),
      call.start(),
      call.args('{}'),
      call.end(),
      call.result('42'),
      call.result('42', 'm2'),
      call.chunk('{}'),
      m.state.snapshot({ n: 1 }),
      m.state.delta([{ op: 'replace', path: '/n', value: 2 }]),
      m.run.started(),
      m.run.finished(),
      m.run.error('boom'),
    ]).toStrictEqual([
      { type: EventType.TEXT_MESSAGE_CHUNK, delta: 'Hi' },
      { type: EventType.REASONING_MESSAGE_CHUNK, delta: 'Hmm' },
      { type: EventType.TOOL_CALL_CHUNK, toolCallName: 'search', delta: '{}' },
      { type: EventType.TEXT_MESSAGE_START, messageId: 'm1', role: 'assistant' },
      { type: EventType.TEXT_MESSAGE_CONTENT, messageId: 'm1', delta: 'Hi' },
      { type: EventType.TEXT_MESSAGE_END, messageId: 'm1' },
      { type: EventType.TEXT_MESSAGE_CHUNK, messageId: 'm1', delta: 'Hi' },
      { type: EventType.REASONING_START, messageId: 'r1' },
      { type: EventType.REASONING_MESSAGE_START, messageId: 'r1', role: 'reasoning' },
      { type: EventType.REASONING_MESSAGE_CONTENT, messageId: 'r1', delta: 'Hmm' },
      { type: EventType.REASONING_MESSAGE_END, messageId: 'r1' },
      { type: EventType.REASONING_END, messageId: 'r1' },
      { type: EventType.REASONING_MESSAGE_CHUNK, messageId: 'r1', delta: 'Hmm' },
      { type: EventType.TOOL_CALL_START, toolCallId: 'c1', toolCallName: 'search' },
      { type: EventType.TOOL_CALL_ARGS, toolCallId: 'c1', delta: '{}' },
      { type: EventType.TOOL_CALL_END, toolCallId: 'c1' },
      { type: EventType.TOOL_CALL_RESULT, toolCallId: 'c1', content: '42' },
      { type: EventType.TOOL_CALL_RESULT, toolCallId: 'c1', content: '42', messageId: 'm2' },
      { type: EventType.TOOL_CALL_CHUNK, toolCallId: 'c1', toolCallName: 'search', delta: '{}' },
      { type: EventType.STATE_SNAPSHOT, snapshot: { n: 1 } },
      { type: EventType.STATE_DELTA, delta: [{ op: 'replace', path: '/n', value: 2 }] },
      { type: EventType.RUN_STARTED, threadId: 'thread-1', runId: 'run-1', protocolVersion: '1.0' },
      { type: EventType.RUN_FINISHED, threadId: 'thread-1', runId: 'run-1', outcome: { type: 'success' } },
      { type: EventType.RUN_ERROR, message: 'boom' },
    ]);
  });

  it('should let fields add to and override what a factory sets', () => {
    const m = aguiMarbles();
    expect(m.text('m1').start({ role: 'developer', subagentRunId: 's1' })).toEqual({ type: EventType.TEXT_MESSAGE_START, messageId: 'm1', role: 'developer', subagentRunId: 's1' });
    expect(m.toolCall('c1', 'search').start({ parentMessageId: 'm1' })).toEqual({ type: EventType.TOOL_CALL_START, toolCallId: 'c1', toolCallName: 'search', parentMessageId: 'm1' });
    expect(m.run.finished({ outcome: { type: 'success', pendingToolCallIds: ['c1'] } })).toMatchObject({ outcome: { type: 'success', pendingToolCallIds: ['c1'] } });
    expect(m.run.error('boom', { code: 'E_BOOM' })).toEqual({ type: EventType.RUN_ERROR, message: 'boom', code: 'E_BOOM' });
  });

  it('should give events the official client accepts, one run built from every wire factory', async () => {
    const m = aguiMarbles();
    const text = m.text('m1');
    const reasoning = m.reasoning('r1');
    const call = m.toolCall('c1', 'search');
    const events = [
      m.run.started(),
      reasoning.start(),
      reasoning.messageStart(),
      reasoning.content('Hmm'),
      reasoning.messageEnd(),
      reasoning.end(),
      text.start(),
      text.content('Hi'),
      call.start({ parentMessageId: 'm1' }),
      call.args('{}'),
      call.end(),
      text.end(),
      call.result('42', 'm2'),
      m.state.snapshot({ n: 1 }),
      m.state.delta([{ op: 'replace', path: '/n', value: 2 }]),
      m.run.finished(),
    ];
    await expectAgui(events).toBeWellFormed();
    const run = await runWithOfficialClient(from(events));
    expect(run.state).toEqual({ n: 2 });
    expect(run.messages.map((message) => [message.id, message.role])).toEqual([
      ['r1', 'reasoning'],
      ['m1', 'assistant'],
      ['m2', 'tool'],
    ]);
  });

  it('should describe what toAgui sends, frame by frame, for chunks without ids', () =>
    testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
      const m = aguiMarbles();
      const hi = m.text(m.id(1));
      const search = m.toolCall(m.id(2), 'search');
      const values = {
        a: m.chunk.text('Hi'),
        b: m.chunk.toolCall('search', '{"q":1}'),
        r: search.result({ hits: 3 }),
        S: m.run.started(),
        s: hi.start(),
        c: hi.content('Hi'),
        t: search.start({ parentMessageId: m.id(1) }),
        u: search.args('{"q":1}'),
        e: hi.end(),
        v: search.end(),
        w: search.result('{"hits":3}', m.id(3)),
        F: m.run.finished(),
      };
      // prettier-ignore
      const e1 =  cold('--a----b----r-----|   ', values);
      const e1subs =   '^-----------------!   ';
      const expected = 'S-(sc)-(tu)-(evw)-(F|)';

      expectObservable(e1.pipe(toAgui(m.runOptions))).toBe(expected, values);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    }));

  it('should name the ids the official client then sees for the same input', async () => {
    const m = aguiMarbles();
    const run = await runWithOracle(from([m.chunk.text('Hi'), m.chunk.toolCall('search', '{"q":1}'), m.toolCall(m.id(2), 'search').result({ hits: 3 })]).pipe(toAgui(m.runOptions)));
    expect(run.messages).toEqual([
      { id: m.id(1), role: 'assistant', content: 'Hi', toolCalls: [{ id: m.id(2), type: 'function', function: { name: 'search', arguments: '{"q":1}' } }] },
      { id: m.id(3), role: 'tool', toolCallId: m.id(2), content: '{"hits":3}' },
    ]);
  });
});

describe('sequentialIds', () => {
  it('should count from 1 with a fresh counter per call', () => {
    const a = sequentialIds('x');
    const b = sequentialIds();
    expect([a(), a(), b()]).toEqual(['x1', 'x2', 'id-1']);
  });
});
