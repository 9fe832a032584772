import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { copyWith, copyWithout, isObject } from '../../../lib/protocol/values.js';

// Runs `body` in a child Node with V8's test functions (%…), against the built package (`agui-rx` is `dist/cjs/lib/index.js`).
function inV8(body: string): { status: number | null; stdout: string; stderr: string } {
  const dist = resolve(__dirname, '../../../dist/cjs');
  const script = `const rx = require('rxjs'); const lib = require(${JSON.stringify(`${dist}/lib/index.js`)}); const values = require(${JSON.stringify(`${dist}/lib/protocol/values.js`)});\n${body}`;
  return spawnSync(process.execPath, ['--allow-natives-syntax', '-e', script], { encoding: 'utf8', timeout: 20000, cwd: resolve(__dirname, '../../..') });
}

describe('isObject', () => {
  it('should take plain records only', () => {
    expect([{}, { a: 1 }, [], null, 'x', 1, undefined].map(isObject)).toEqual([true, true, false, false, false, false, false]);
  });
});

describe('copyWith', () => {
  const sources: (Record<string, unknown> | undefined)[] = [
    undefined,
    {},
    { type: 'RUN_FINISHED', threadId: 't1', runId: 'r1' },
    { type: 'RUN_FINISHED', threadId: 't1', runId: 'r1', outcome: { type: 'interrupt' }, result: [1] },
    JSON.parse('{"type":"CUSTOM","name":"n","value":{"deep":true}}'),
  ];

  it.each(sources.map((source) => [source]))('should give what { ...source, ...fields } gives, fields in the same order, for %j', (source) => {
    const fields = { outcome: { type: 'success' }, threadId: 'mine' };
    const copy = copyWith(source, fields);
    const spread = { ...source, ...fields };

    expect(copy).toEqual(spread);
    expect(Object.keys(copy)).toEqual(Object.keys(spread));
    expect(copy).not.toBe(source);
  });

  it('should change neither argument, and share the values (a shallow copy, as a spread)', () => {
    const value = { deep: [1] };
    const source = { type: 'CUSTOM', value };
    const fields = { name: 'n' };
    const copy = copyWith(source, fields);

    expect(source).toEqual({ type: 'CUSTOM', value });
    expect(fields).toEqual({ name: 'n' });
    expect(copy.value).toBe(value);
  });

  it('should copy own fields only, not inherited ones', () => {
    const source = Object.create({ inherited: 1 }) as Record<string, unknown>;
    source.own = 2;

    expect(copyWith(source, { added: 3 })).toEqual({ own: 2, added: 3 });
  });

  it('should copy an own __proto__ field as a field, never as the prototype (as a spread does)', () => {
    const source = JSON.parse('{"type":"CUSTOM","__proto__":{"polluted":true}}') as Record<string, unknown>;
    const copy = copyWith(source, JSON.parse('{"__proto__":{"again":true}}') as Record<string, unknown>);

    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype);
    expect((copy as { polluted?: unknown }).polluted).toBeUndefined();
    expect(Object.keys(copy)).toEqual(['type', '__proto__']);
    expect(JSON.stringify(copy)).toBe('{"type":"CUSTOM","__proto__":{"again":true}}');
  });
});

describe('copyWithout', () => {
  it('should leave out the named fields and keep the others in order', () => {
    const source = { type: 'RUN_FINISHED', outcome: { type: 'odd' }, threadId: 't1', runId: 'r1' };
    const copy = copyWithout(source, ['outcome', 'absent']);

    expect(copy).toEqual({ type: 'RUN_FINISHED', threadId: 't1', runId: 'r1' });
    expect(Object.keys(copy)).toEqual(['type', 'threadId', 'runId']);
    expect(source.outcome).toEqual({ type: 'odd' });
  });

  it('should copy an own __proto__ field as a field', () => {
    const copy = copyWithout(JSON.parse('{"a":1,"__proto__":{"b":2}}') as Record<string, unknown>, ['a']);

    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype);
    expect(JSON.stringify(copy)).toBe('{"__proto__":{"b":2}}');
  });
});

describe('hidden classes of the events the operators make', () => {
  it('should give copies made by copyWith and copyWithout of like objects one hidden class', () => {
    const { status, stdout, stderr } = inV8(`
      const made = (i) => ({ type: 'RUN_FINISHED', threadId: 't' + i, runId: 'r' + i });
      const withs = [], withouts = [];
      for (let i = 0; i < 200; i++) {
        withs.push(values.copyWith(made(i), { outcome: { type: 'success' } }));
        withouts.push(values.copyWithout(made(i), ['runId']));
      }
      console.log(JSON.stringify([withs.every((c) => %HaveSameMap(c, withs[0])), withouts.every((c) => %HaveSameMap(c, withouts[0]))]));
    `);
    expect({ status, stderr }).toEqual({ status: 0, stderr: '' });
    expect(JSON.parse(stdout)).toEqual([true, true]);
  });

  // V8 11 (Node 20) gives an object made by a leading spread and then given a field it lacked a hidden class
  // of its own each time (every run's RUN_FINISHED, every subagent event), and a `delete` turns an object
  // into a dictionary (ACTIVITY_DELTA): each then costs its own hidden class, and every inline cache that
  // reads such events goes megamorphic and misses.
  it('should give the RUN_FINISHED of every run, a minted TOOL_CALL_RESULT id, a subagent event and an ACTIVITY_DELTA one hidden class each, with fast properties', () => {
    const { status, stdout, stderr } = inV8(`
      const { of } = rx;
      const seen = {};
      const keep = (key, event) => (seen[key] ??= []).push(event);
      for (let i = 0; i < 60; i++) {
        const agent$ = of(
          { type: 'TEXT_MESSAGE_CHUNK', messageId: 'm' + i, delta: 'Hi' },
          { type: 'TOOL_CALL_CHUNK', toolCallId: 'c' + i, toolCallName: 'search', delta: '{}' },
          { type: 'TOOL_CALL_RESULT', toolCallId: 'c' + i, content: 'found' },
          { type: 'ACTIVITY_SNAPSHOT', messageId: 'a' + i, activityType: 'PLAN', content: { steps: ['one', 'two', 'three', 'four'], done: 0 } },
          { type: 'ACTIVITY_SNAPSHOT', messageId: 'a' + i, activityType: 'PLAN', content: { steps: ['one', 'two', 'three', 'four'], done: 1 } },
          { type: 'RUN_FINISHED' },
        );
        agent$.pipe(lib.toAgui({ threadId: 't' + i, runId: 'r' + i, onDiagnostic() {} })).subscribe((event) => keep(event.type, event));
        of({ type: 'TEXT_MESSAGE_CHUNK', messageId: 's' + i, delta: 'sub' })
          .pipe(lib.mapSubagentLifecycle({ name: 'helper', subagentRunId: 'sub' + i }))
          .subscribe((event) => keep('subagent ' + event.type, event));
      }
      const shared = {};
      for (const key of ['RUN_FINISHED', 'TOOL_CALL_RESULT', 'ACTIVITY_DELTA', 'subagent TEXT_MESSAGE_CHUNK']) {
        const events = seen[key] ?? [];
        shared[key] = events.length === 60 && events.every((event) => %HaveSameMap(event, events[0]) && %HasFastProperties(event));
      }
      console.log(JSON.stringify(shared));
    `);
    expect({ status, stderr }).toEqual({ status: 0, stderr: '' });
    expect(JSON.parse(stdout)).toEqual({ RUN_FINISHED: true, TOOL_CALL_RESULT: true, ACTIVITY_DELTA: true, 'subagent TEXT_MESSAGE_CHUNK': true });
  });
});
