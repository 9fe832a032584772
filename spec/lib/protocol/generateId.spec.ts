import { AguiRxError } from '../../../lib/protocol/errors.js';
import { MAX_DRAWS, generateId, mintUnused } from '../../../lib/protocol/generateId.js';
import { sequentialIds } from '../../support/helpers.js';

describe('generateId', () => {
  it('should return a new 21-character URL-safe id at every call', () => {
    const ids = new Set(Array.from({ length: 1000 }, () => generateId()));
    expect(ids.size).toBe(1000);
    for (const id of ids) expect(id).toMatch(/^[A-Za-z0-9_-]{21}$/);
  });
});

describe('mintUnused', () => {
  it('should return the first id when nothing holds it, drawing once', () => {
    const mint = jest.fn(sequentialIds());
    expect(mintUnused(mint, () => false)).toBe('id-1');
    expect(mint).toHaveBeenCalledTimes(1);
  });

  it("should pass over the ids in use, as a counter whose ids the producer or the history also uses goes on to the next free one", () => {
    const taken = new Set(['id-1', 'id-2', 'id-4']);
    const mint = sequentialIds();
    expect(mintUnused(mint, (id) => taken.has(id))).toBe('id-3');
    expect(mintUnused(mint, (id) => taken.has(id))).toBe('id-5');
  });

  it('should throw INVALID_OPTIONS when the generator returns again an id in use (a constant, a clock reading)', () => {
    let calls = 0;
    const constant = () => (++calls, 'm1');
    expect(() => mintUnused(constant, (id) => id === 'm1')).toThrow(
      new AguiRxError(
        'INVALID_OPTIONS',
        "generateId returned 'm1' again, an id this run or its conversation history already uses. It must return a new id at every call: a random one (the default, nanoid) or a counter, not a constant or a clock reading.",
      ),
    );
    expect(calls).toBe(2);
  });

  it('should throw INVALID_OPTIONS after MAX_DRAWS ids in use in a row, never looping for ever', () => {
    const mint = jest.fn(sequentialIds());
    expect(() => mintUnused(mint, () => true)).toThrow(
      new AguiRxError(
        'INVALID_OPTIONS',
        `generateId returned ${MAX_DRAWS} ids in a row that this run or its conversation history already uses (the last 'id-${MAX_DRAWS}'). Make its ids unlike the producer's and the history's: a random one (the default, nanoid), or a counter with a prefix of its own.`,
      ),
    );
    expect(mint).toHaveBeenCalledTimes(MAX_DRAWS);
  });

  it.each([
    ['a number', 42, 'number 42'],
    ['an empty string', '', '""'],
    ['undefined', undefined, 'undefined'],
  ])('should throw INVALID_OPTIONS for a generator that returns %s, at the first draw or after an id in use', (_name, value, described) => {
    const message = `generateId returned ${described}, not an id: it must return a non-empty string, a new one at every call (the default, nanoid, does).`;
    expect(() => mintUnused(() => value as string, () => false)).toThrow(new AguiRxError('INVALID_OPTIONS', message));
    let calls = 0;
    const afterOne = () => (calls++ === 0 ? 'taken' : value) as string;
    expect(() => mintUnused(afterOne, (id) => id === 'taken')).toThrow(new AguiRxError('INVALID_OPTIONS', message));
    expect(calls).toBe(2);
  });
});
