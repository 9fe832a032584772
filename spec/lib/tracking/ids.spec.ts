import { createEntityIds, type EntityIds } from '../../../lib/tracking/ids.js';

/** Id bookkeeping that mints `new1`, `new2`, … */
function entityIds(): EntityIds {
  let n = 0;
  return createEntityIds(() => `new${++n}`);
}

describe('createEntityIds', () => {
  describe('claim', () => {
    it("should take the producer's id when it is free, and record it as used and owned", () => {
      const ids = entityIds();

      expect(ids.claim('m1', 's1', true)).toStrictEqual({ id: 'm1' });
      expect(ids.isUsed('m1')).toBe(true);
      expect(ids.hasOwner('m1')).toBe(true);
      expect(ids.ownerOf('m1')).toBe('s1');
      expect(ids.wireId('m1')).toBe('m1');
    });

    it('should mint an id when the producer gave none', () => {
      const ids = entityIds();

      expect(ids.claim(undefined, undefined, true)).toStrictEqual({ id: 'new1' });
      expect(ids.isUsed('new1')).toBe(true);
    });

    it("should send a used id under a fresh one, and map the producer's later events to it", () => {
      const ids = entityIds();
      ids.claim('m1', undefined, true);

      expect(ids.claim('m1', undefined, true)).toStrictEqual({ id: 'new1', conflict: 'used', refused: 'm1', refusedOwner: undefined });
      expect(ids.wireId('m1')).toBe('new1');
    });

    it('should check a reused id as mapped so far: a third use gets another fresh id', () => {
      const ids = entityIds();
      ids.claim('m1', undefined, true);
      ids.claim('m1', undefined, true);

      expect(ids.claim('m1', undefined, true)).toStrictEqual({ id: 'new2', conflict: 'used', refused: 'new1', refusedOwner: undefined });
      expect(ids.wireId('m1')).toBe('new2');
    });

    it("should refuse an id another lane owns only with ownedByLane, and name that lane", () => {
      const ids = entityIds();
      ids.own('x', 's1');

      expect(ids.claim('x', undefined, false)).toStrictEqual({ id: 'x' });
      ids.own('y', 's1');
      expect(ids.claim('y', undefined, true)).toStrictEqual({ id: 'new1', conflict: 'owned', refused: 'y', refusedOwner: 's1' });
      expect(ids.claim('z', 's1', true)).toStrictEqual({ id: 'z' });
    });

    it("should not refuse an id the claiming lane owns", () => {
      const ids = entityIds();
      ids.own('rs', 's1');

      expect(ids.claim('rs', 's1', true)).toStrictEqual({ id: 'rs' });
    });
  });

  describe('claimId', () => {
    it('should check a candidate like a producer id, and map nothing to the fresh id (the caller keeps its renames)', () => {
      const ids = entityIds();
      ids.claim('gen', undefined, true);

      expect(ids.claimId('gen', undefined, true)).toStrictEqual({ id: 'new1', conflict: 'used', refused: 'gen', refusedOwner: undefined });
      expect(ids.wireId('gen')).toBe('gen');
      expect(ids.isUsed('new1')).toBe(true);
    });

    it('should take the candidate as given, without mapping it again', () => {
      const ids = entityIds();
      ids.claim('m1', undefined, true);
      ids.claim('m1', undefined, true);

      expect(ids.claimId('m1-other', undefined, true)).toStrictEqual({ id: 'm1-other' });
      expect(ids.wireId('m1')).toBe('new1');
    });

    it("should refuse an id another lane owns when the lane must own it, and not map it", () => {
      const ids = entityIds();
      ids.own('rs', 's1');

      expect(ids.claimId('rs', 's2', true)).toStrictEqual({ id: 'new1', conflict: 'owned', refused: 'rs', refusedOwner: 's1' });
      expect(ids.wireId('rs')).toBe('rs');
    });
  });

  describe('own', () => {
    it('should record an owner without using the id', () => {
      const ids = entityIds();
      ids.own('rs', undefined);

      expect(ids.hasOwner('rs')).toBe(true);
      expect(ids.ownerOf('rs')).toBeUndefined();
      expect(ids.isUsed('rs')).toBe(false);
      expect(ids.hasOwner('other')).toBe(false);
    });

    it('should keep a used id used when its owner is recorded again', () => {
      const ids = entityIds();
      ids.claim('m1', 's1', true);
      ids.own('m1', 's1');

      expect(ids.isUsed('m1')).toBe(true);
      expect(ids.ownerOf('m1')).toBe('s1');
      expect(ids.claim('m1', 's1', true)).toMatchObject({ conflict: 'used', refused: 'm1', refusedOwner: 's1' });
    });

    it('should use an id it only owned once it is claimed, under the owner lane', () => {
      const ids = entityIds();
      ids.own('rs', 's1');
      expect(ids.claim('rs', 's1', true)).toStrictEqual({ id: 'rs' });

      expect(ids.isUsed('rs')).toBe(true);
      expect(ids.ownerOf('rs')).toBe('s1');
    });
  });

  it('should keep each instance to its own ids', () => {
    const first = entityIds();
    const second = entityIds();
    first.claim('m1', undefined, true);

    expect(second.isUsed('m1')).toBe(false);
    expect(second.claim('m1', undefined, true)).toStrictEqual({ id: 'm1' });
  });
});
