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
});
