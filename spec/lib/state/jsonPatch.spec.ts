import { AguiRxError } from '../../../lib/protocol/errors.js';
import { assertSafePatch, isPrototypePointer } from '../../../lib/state/jsonPatch.js';

/** The error `assertSafePatch` raised for `patch`, or undefined when it accepted it. */
function refusal(patch: unknown, what = 'STATE_DELTA'): unknown {
  try {
    assertSafePatch(patch, what);
  } catch (error) {
    return error;
  }
  return undefined;
}

/** Checks that `patch` is refused with an AguiRxError of code INVALID_PATCH and exactly `message`. */
function expectRefusal(patch: unknown, message: string, what = 'STATE_DELTA'): void {
  const error = refusal(patch, what);
  expect(error).toBeInstanceOf(AguiRxError);
  expect(error).toMatchObject({ name: 'AguiRxError', code: 'INVALID_PATCH', message });
}

const prototypeHint = 'which could change object prototypes; it was refused. Rename that key in your state.';

describe('assertSafePatch', () => {
  it('should accept a patch with each of the six RFC 6902 operations', () => {
    const patch = [
      { op: 'add', path: '/todos/-', value: 'ship' },
      { op: 'remove', path: '/draft' },
      { op: 'replace', path: '/count', value: 2 },
      { op: 'move', from: '/a', path: '/b' },
      { op: 'copy', from: '/b', path: '/c' },
      { op: 'test', path: '/count', value: 2 },
    ];

    expect(refusal(patch)).toBeUndefined();
  });

  it('should accept an empty patch, the root pointer and escaped keys', () => {
    expect(refusal([])).toBeUndefined();
    expect(refusal([{ op: 'replace', path: '', value: {} }])).toBeUndefined();
    // 'a/b', 'x/__proto__', 'my~constructor' and '__proto__x' are ordinary keys.
    expect(
      refusal([
        { op: 'add', path: '/a~1b', value: 1 },
        { op: 'add', path: '/x~1__proto__', value: 1 },
        { op: 'add', path: '/my~0constructor', value: 1 },
        { op: 'copy', from: '/__proto__x', path: '/prototypes' },
      ]),
    ).toBeUndefined();
  });

  it('should narrow the patch to Operation[] once accepted', () => {
    const patch: unknown = [{ op: 'add', path: '/a', value: 1 }];

    assertSafePatch(patch, 'STATE_DELTA');

    expect(patch.map((operation) => operation.op)).toEqual(['add']);
  });

  it.each([
    ['an object', { op: 'add', path: '/a', value: 1 }, 'an object'],
    ['null', null, 'null'],
    ['undefined', undefined, 'undefined'],
    ['a string', '[{"op":"add"}]', '"[{\\"op\\":\\"add\\"}]"'],
  ])('should refuse %s as the patch', (_, patch, described) => {
    expectRefusal(patch, `STATE_DELTA has 'delta: ${described}', but it must be an array of RFC 6902 operations, e.g. [{ op: 'replace', path: '/count', value: 2 }].`);
  });

  it.each([
    ['an unknown op', { op: 'merge', path: '/a' }, '"merge"'],
    ['a missing op', { path: '/a', value: 1 }, 'undefined'],
    ['a non-string op', { op: 1, path: '/a' }, 'number 1'],
    ['a null operation', null, 'undefined'],
    ['an upper-case op', { op: 'ADD', path: '/a', value: 1 }, '"ADD"'],
  ])('should refuse %s', (_, operation, described) => {
    expectRefusal([{ op: 'test', path: '/ok', value: 1 }, operation], `STATE_DELTA operation 1 has op ${described}; RFC 6902 allows add, remove, replace, move, copy and test.`);
  });

  it.each([
    ['a missing path', { op: 'add', value: 1 }, 'add', 'path', 'undefined'],
    ['a path without a leading slash', { op: 'remove', path: 'a/b' }, 'remove', 'path', '"a/b"'],
    ['a numeric path', { op: 'replace', path: 3, value: 1 }, 'replace', 'path', 'number 3'],
    ['a move without from', { op: 'move', path: '/b' }, 'move', 'from', 'undefined'],
    ['a copy with a bad from', { op: 'copy', from: 'a', path: '/b' }, 'copy', 'from', '"a"'],
  ])('should refuse %s', (_, operation, op, field, described) => {
    expectRefusal([operation], `STATE_DELTA operation 0 (${op}) has '${field}: ${described}', which is not a JSON Pointer (RFC 6901): use '' or a string starting with '/'.`);
  });

  it.each([
    ['a path through __proto__', { op: 'add', path: '/__proto__/polluted', value: true }, 'add /__proto__/polluted', '__proto__'],
    ['a path ending in __proto__', { op: 'replace', path: '/a/__proto__', value: {} }, 'replace /a/__proto__', '__proto__'],
    ['a path through constructor', { op: 'add', path: '/constructor/prototype/polluted', value: true }, 'add /constructor/prototype/polluted', 'constructor'],
    ['a path through prototype', { op: 'remove', path: '/fn/prototype' }, 'remove /fn/prototype', 'prototype'],
    ['a test of __proto__', { op: 'test', path: '/__proto__', value: {} }, 'test /__proto__', '__proto__'],
    ['a move from __proto__', { op: 'move', from: '/__proto__', path: '/x' }, 'move /__proto__', '__proto__'],
    ['a copy from constructor', { op: 'copy', from: '/a/constructor', path: '/x' }, 'copy /a/constructor', 'constructor'],
    ['a move into prototype', { op: 'move', from: '/a', path: '/prototype' }, 'move /prototype', 'prototype'],
  ])('should refuse %s', (_, operation, described, segment) => {
    expectRefusal([operation], `STATE_DELTA operation 0 (${described}) goes through '${segment}', ${prototypeHint}`);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('should report the first bad operation by index', () => {
    const patch = [
      { op: 'add', path: '/a', value: 1 },
      { op: 'add', path: '/b', value: 2 },
      { op: 'add', path: '/__proto__/x', value: 3 },
      { op: 'nope', path: '/c' },
    ];

    expectRefusal(patch, `STATE_DELTA operation 2 (add /__proto__/x) goes through '__proto__', ${prototypeHint}`);
  });

  it('should name the patch as the caller says', () => {
    expectRefusal({}, `ACTIVITY_DELTA patch has 'delta: an object', but it must be an array of RFC 6902 operations, e.g. [{ op: 'replace', path: '/count', value: 2 }].`, 'ACTIVITY_DELTA patch');
  });
});

describe('isPrototypePointer', () => {
  it('should tell pointers through __proto__, constructor or prototype from ordinary ones', () => {
    expect(['/__proto__', '/a/constructor', '/a/prototype/b', '/__proto__/x'].map(isPrototypePointer)).toEqual([true, true, true, true]);
    expect(['', '/', '/a', '/a~1b', '/x~1__proto__', '/my~0constructor', '/prototypes'].map(isPrototypePointer)).toEqual([false, false, false, false, false, false, false]);
  });
});
