import { createIdTable } from '../../../lib/tracking/idTable.js';

describe('createIdTable', () => {
  afterEach(() => jest.restoreAllMocks());

  it('should answer get and has as a Map does, for the first id and the ones after it', () => {
    const table = createIdTable<number>();
    const map = new Map<string, number>();
    const ids = ['m1', 'm2', 'm3', 'm1', 'm4', 'm2'];
    ids.forEach((id, value) => {
      table.set(id, value);
      map.set(id, value);
    });

    for (const id of ['m1', 'm2', 'm3', 'm4', 'm5', '']) {
      expect([table.get(id), table.has(id)]).toStrictEqual([map.get(id), map.has(id)]);
    }
  });

  it('should tell an id recorded with the value undefined from one never recorded', () => {
    const table = createIdTable<string | undefined>();
    table.set('m1', undefined);
    table.set('m2', undefined);

    expect([table.has('m1'), table.get('m1'), table.has('m2'), table.get('m2')]).toStrictEqual([true, undefined, true, undefined]);
    expect(table.has('m3')).toBe(false);
  });

  it('should have nothing while empty, whatever it is asked', () => {
    const table = createIdTable<number>();

    expect([table.has('m1'), table.get('m1'), table.has(undefined as unknown as string), table.get(undefined as unknown as string)]).toStrictEqual([false, undefined, false, undefined]);
  });

  it('should replace the first id value in place, and keep an empty id apart', () => {
    const table = createIdTable<number>();
    table.set('', 1);
    table.set('', 2);
    table.set('m1', 3);

    expect([table.get(''), table.has(''), table.get('m1')]).toStrictEqual([2, true, 3]);
  });

  it('should hold its first id itself and make a Map only at the second', () => {
    const sets = jest.spyOn(Map.prototype, 'set');
    const table = createIdTable<number>();
    table.set('m1', 1);
    table.set('m1', 2);

    expect(sets).not.toHaveBeenCalled();
    table.set('m2', 3);
    expect(sets).toHaveBeenCalledTimes(1);
    expect(sets).toHaveBeenCalledWith('m2', 3);
  });

  it('should answer as a Map does past the ids one Map holds, whatever the ids end with', () => {
    const table = createIdTable<number>();
    const map = new Map<string, number>();
    // Counters, random-looking ids, ids of one and no character, and ids that all end alike.
    const ids = [
      ...Array.from({ length: 6000 }, (_, i) => `m${i}`),
      ...Array.from({ length: 3000 }, (_, i) => `${(i * 2654435761) % 4294967296}x`),
      'a',
      'b',
      '',
      ...Array.from({ length: 2000 }, (_, i) => `same-${i}-zz`),
    ];
    ids.forEach((id, value) => {
      table.set(id, value);
      map.set(id, value);
    });
    // Replaced values, for ids in the full Map and in the shards.
    for (const id of ['m1', 'm4095', 'm5999', 'same-1999-zz', '', 'a']) {
      table.set(id, -1);
      map.set(id, -1);
    }

    for (const id of [...ids, 'm6000', 'z', 'same-2000-zz', '1x', 'never']) {
      expect([table.get(id), table.has(id)]).toStrictEqual([map.get(id), map.has(id)]);
    }
  });

  it('should keep every Map it makes to 4,096 ids or fewer, below the size V8 allocates in its large-object space', () => {
    const original = Map.prototype.set;
    const made = new Set<Map<unknown, unknown>>();
    jest.spyOn(Map.prototype, 'set').mockImplementation(function (this: Map<unknown, unknown>, key: unknown, value: unknown) {
      made.add(this);
      return original.call(this, key, value);
    });
    const table = createIdTable<number>();
    for (let i = 0; i < 20_000; i++) table.set(`msg-${i}`, i);
    jest.restoreAllMocks();

    const sizes = [...made].map((map) => map.size);
    expect(sizes.length).toBeGreaterThan(1);
    expect(Math.max(...sizes)).toBeLessThanOrEqual(4096);
    // Every id after the first, in one Map each.
    expect(sizes.reduce((sum, size) => sum + size, 0)).toBe(20_000 - 1);
    expect([table.get('msg-0'), table.get('msg-19999'), table.has('msg-20000')]).toStrictEqual([0, 19_999, false]);
  });
});
