import type { Message } from '@ag-ui/core';
import { createConversationIds, describeKnownMessage } from '../../../lib/tracking/conversationIds.js';

const history: Message[] = [
  { id: 'u1', role: 'user', content: 'Hi' },
  { id: 'a1', role: 'assistant', content: '', toolCalls: [{ id: 'c1', type: 'function', function: { name: 'search', arguments: '{}' } }] },
  { id: 's1', role: 'activity', activityType: 'a2ui-surface', content: {} },
];

describe('createConversationIds', () => {
  it('should take the history\'s message ids (every role) and its tool call ids', () => {
    const ids = createConversationIds(history);
    expect(ids.message('u1')).toEqual({ history: true, role: 'user' });
    expect(ids.message('s1')).toEqual({ history: true, role: 'activity', activityType: 'a2ui-surface' });
    expect(ids.isHistoryCall('c1')).toBe(true);
    expect(ids.isHistoryCall('a1')).toBe(false);
    expect(ids.isRunCall('c1')).toBe(false);
  });

  it('should find every start under a history message id a collision, but a snapshot of a history activity of the same type', () => {
    const ids = createConversationIds(history);
    for (const start of ['text', 'reasoning', 'toolResult', 'toolCallMessage'] as const) expect(ids.messageCollision('u1', start)).toBe('a user message of the conversation history');
    expect(ids.messageCollision('a1', 'text')).toBe('an assistant message of the conversation history');
    expect(ids.messageCollision('s1', 'activity', 'a2ui-surface')).toBeUndefined();
    expect(ids.messageCollision('s1', 'activity', 'plan')).toBe("an activity 'a2ui-surface' of the conversation history");
    expect(ids.messageCollision('free', 'text')).toBeUndefined();
  });

  it('should let a kind continue its own run message, text join a tool call\'s message, and find every other pairing a collision', () => {
    const ids = createConversationIds();
    ids.addMessage('t', 'text', 'assistant');
    ids.addMessage('r', 'reasoning', 'reasoning');
    ids.addMessage('x', 'toolResult', 'tool');
    ids.addMessage('v', 'activity', 'activity', 'plan');
    ids.addMessage('p', 'toolCallMessage', 'assistant');
    const allowed = ['t text', 'r reasoning', 'v activity', 'p text'];
    for (const id of ['t', 'r', 'x', 'v', 'p']) {
      for (const start of ['text', 'reasoning', 'toolResult', 'activity', 'toolCallMessage'] as const) {
        expect([`${id} ${start}`, ids.messageCollision(id, start, 'plan') === undefined]).toEqual([`${id} ${start}`, allowed.includes(`${id} ${start}`)]);
      }
    }
    expect(ids.messageCollision('x', 'text')).toBe("this run's tool result message");
    expect(describeKnownMessage(ids.message('v')!)).toBe("this run's activity 'plan'");
  });

  it('should hold one shared record per AG-UI role for the history, and a record of its own for an activity type or another role', () => {
    const ids = createConversationIds([
      ...history,
      { id: 'u2', role: 'user', content: 'Again' },
      { id: 'a2', role: 'assistant', content: 'Yes' },
      { id: 's2', role: 'activity', activityType: 'plan', content: {} },
      { id: 'x1', role: 'narrator', content: 'Once' },
      { id: 'x2', role: 'narrator', content: 'Twice' },
      { id: 'p1', role: '__proto__', content: '' },
    ]);
    // An open stream keeps the history's ids for the whole run: a table entry per message, no record.
    expect(ids.message('u2')).toBe(ids.message('u1'));
    expect(ids.message('a2')).toBe(ids.message('a1'));
    expect(Object.isFrozen(ids.message('u1'))).toBe(true);
    expect(ids.message('s2')).toEqual({ history: true, role: 'activity', activityType: 'plan' });
    expect(ids.message('s2')).not.toBe(ids.message('s1'));
    expect(ids.message('x1')).toEqual({ history: true, role: 'narrator' });
    expect(ids.message('x2')).not.toBe(ids.message('x1'));
    expect(ids.message('p1')).toEqual({ history: true, role: '__proto__' });
    expect(ids.messageCollision('u2', 'text')).toBe('a user message of the conversation history');
    expect(ids.messageCollision('x2', 'text')).toBe('a narrator message of the conversation history');
    expect(ids.messageCollision('s2', 'activity', 'plan')).toBeUndefined();
  });

  it('should hold one shared record per kind of start and AG-UI role for the messages a run starts, and a record of its own for an activity type or another role', () => {
    const first = createConversationIds();
    const second = createConversationIds();
    first.addMessage('m1', 'text', 'assistant');
    first.addMessage('m2', 'text', 'assistant');
    second.addMessage('m1', 'text', 'assistant');
    first.addMessage('r1', 'reasoning', 'reasoning');
    first.addMessage('u1', 'text', 'user');
    first.addMessage('v1', 'activity', 'activity', 'plan');
    first.addMessage('v2', 'activity', 'activity', 'plan');
    first.addMessage('n1', 'text', 'narrator');
    first.addMessage('n2', 'text', 'narrator');
    first.addMessage('p1', 'text', '__proto__');
    // Shared across messages and runs (an open stream holds a table entry per message, no record), and frozen.
    expect(first.message('m2')).toBe(first.message('m1'));
    expect(second.message('m1')).toBe(first.message('m1'));
    expect(Object.isFrozen(first.message('m1'))).toBe(true);
    expect(first.message('m1')).toEqual({ history: false, role: 'assistant', start: 'text' });
    expect(first.message('r1')).toEqual({ history: false, role: 'reasoning', start: 'reasoning' });
    expect(first.message('u1')).toEqual({ history: false, role: 'user', start: 'text' });
    expect(first.message('u1')).not.toBe(first.message('m1'));
    expect(first.message('v1')).toEqual({ history: false, role: 'activity', start: 'activity', activityType: 'plan' });
    expect(first.message('v2')).not.toBe(first.message('v1'));
    expect(first.message('n1')).toEqual({ history: false, role: 'narrator', start: 'text' });
    expect(first.message('n2')).not.toBe(first.message('n1'));
    expect(first.message('p1')).toEqual({ history: false, role: '__proto__', start: 'text' });
    // What the records say is what the unshared ones said.
    expect(first.messageCollision('m1', 'text', undefined, 'assistant')).toBeUndefined();
    expect(first.messageCollision('m1', 'text', undefined, 'user')).toBe("this run's text message");
    expect(first.messageCollision('u1', 'reasoning')).toBe("this run's user text message");
    expect(first.messageCollision('n1', 'activity', 'plan')).toBe("this run's narrator text message");
    expect(first.messageCollision('v1', 'activity', 'plan')).toBeUndefined();
  });

  it('should skip what is not a message, and seed again from a snapshot', () => {
    const ids = createConversationIds([null, 1, { id: 2 }, { id: 'n', toolCalls: [null, { id: 3 }, { id: 'k' }] }]);
    expect(ids.message('n')).toEqual({ history: true, role: 'unknown' });
    expect(ids.isHistoryCall('k')).toBe(true);
    ids.seed('not a list');
    ids.seed([{ id: 'later', role: 'user' }]);
    expect(ids.message('later')?.history).toBe(true);
  });

  it('should answer for the history it began with as tables of its ids would: the last message under an id, a later record first', () => {
    // A model: what a Map of every id set in order answers.
    const roles = ['user', 'assistant', 'activity', 'tool', 'narrator'];
    for (let round = 0; round < 50; round++) {
      let seedValue = round + 1;
      const random = (n: number) => ((seedValue = (seedValue * 1103515245 + 12345) % 2147483648) % n);
      const idOf = () => ['a', 'b', 'ab', 'b1', 'B', '', 'é', 'a\u{1F600}', 'z9', 'call_1_0'][random(10)];
      const list = Array.from({ length: random(30) }, () => {
        const role = roles[random(roles.length)];
        const calls = Array.from({ length: random(3) }, () => ({ id: idOf(), type: 'function', function: { name: 'f', arguments: '{}' } }));
        return { id: idOf(), role, ...(role === 'activity' ? { activityType: `t${random(2)}` } : {}), ...(calls.length > 0 ? { toolCalls: calls } : {}) };
      });
      const messages = new Map<string, unknown>();
      const calls = new Map<string, boolean>();
      for (const m of list) {
        messages.set(m.id, m.role === 'activity' ? { history: true, role: m.role, activityType: m.activityType } : { history: true, role: m.role });
        for (const c of m.toolCalls ?? []) calls.set(c.id, true);
      }
      const ids = createConversationIds(list);
      // What the run adds after: a message, a call, a snapshot, each replacing what an id named.
      const added = idOf();
      ids.addMessage(added, 'text', 'assistant');
      messages.set(added, { history: false, role: 'assistant', start: 'text' });
      const call = idOf();
      ids.addCall(call);
      calls.set(call, false);
      const snapshotted = idOf();
      ids.seed([{ id: snapshotted, role: 'user', toolCalls: [{ id: snapshotted, type: 'function', function: { name: 'f', arguments: '{}' } }] }]);
      messages.set(snapshotted, { history: true, role: 'user' });
      calls.set(snapshotted, true);
      for (const id of ['a', 'b', 'ab', 'b1', 'B', '', 'é', 'a\u{1F600}', 'z9', 'call_1_0', 'absent']) {
        expect([round, id, ids.message(id)]).toEqual([round, id, messages.get(id)]);
        expect([round, id, ids.isHistoryCall(id), ids.isRunCall(id)]).toEqual([round, id, calls.get(id) === true, calls.get(id) === false]);
      }
    }
  });

  it('should keep the history it began with in sorted arrays, not in a table of its own (16 bytes an id, not about 48)', () => {
    const sets = jest.spyOn(Map.prototype, 'set');
    const history = Array.from({ length: 50 }, (_, i) => ({ id: `h${i}`, role: i % 2 === 0 ? 'user' : 'assistant', toolCalls: [{ id: `c${i}`, type: 'function', function: { name: 'f', arguments: '{}' } }] }));
    const ids = createConversationIds(history);
    expect(sets).not.toHaveBeenCalled();
    expect(ids.message('h49')).toEqual({ history: true, role: 'assistant' });
    expect(ids.isHistoryCall('c0')).toBe(true);
    // What comes after the history goes into the tables.
    ids.addMessage('m1', 'text', 'assistant');
    expect(sets).toHaveBeenCalledTimes(0);
    ids.addMessage('m2', 'text', 'assistant');
    expect(sets).toHaveBeenCalledTimes(1);
    sets.mockRestore();
  });
});
