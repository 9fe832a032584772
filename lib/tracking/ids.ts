import type { Lane } from '../protocol/agentEvent.js';
import { mintUnused, type IdGenerator } from '../protocol/generateId.js';
import { recordType } from '../protocol/recordType.js';
import { createIdTable, type IdTable } from './idTable.js';

/** Why {@link EntityIds.claim} sent a new entity under a fresh id rather than the producer's. */
export type IdConflict = 'used' | 'owned';

/** What {@link EntityIds.claim} decided. */
export interface IdClaim {
  /** The id the new entity goes on the wire under. */
  id: string;
  /** Set when the producer's id could not be used: it was sent already (`used`), or another lane owns it (`owned`). */
  conflict?: IdConflict | undefined;
  /** With a conflict: the id that was refused (the producer's, as mapped so far), and its owner. */
  refused?: string | undefined;
  refusedOwner?: Lane | undefined;
}

/**
 * The ids of one run's entities in one id namespace (messages, or tool calls): which went on the
 * wire, which lane owns each, and the fresh id a producer's reused id was given. Pure bookkeeping,
 * no RxJS; one per subscription.
 *
 * The rules it keeps (AG-UI's, as `@ag-ui/client` checks them): an id, once sent, is never opened
 * again in the run (a second START for an ended id is an error on the client); an id belongs to
 * one lane (a `subagentRunId`) for the whole run.
 *
 * Call its functions as methods (`ids.wireId(id)`): they are shared, and read the state of the record they are called on.
 */
export interface EntityIds {
  /** The wire id of the producer's `producerId`: the fresh id it was given when it reused one, else itself. */
  wireId(producerId: string): string;
  /** Whether `id` went on the wire already, open or ended. */
  isUsed(id: string): boolean;
  /** Whether some lane owns `id` (it was used, or only owned, as a reasoning span's id is). */
  hasOwner(id: string): boolean;
  /** The lane owning `id` (`undefined` for the parent agent, or when none does: ask {@link hasOwner}). */
  ownerOf(id: string): Lane;
  /** Records that `lane` owns `id`, without using it. */
  own(id: string, lane: Lane): void;
  /**
   * The id a new entity of `lane` goes out under: a minted one when the producer gave none; the
   * producer's (mapped by {@link wireId}) when it is free; else a minted one, which the producer's
   * later events are mapped to. With `ownedByLane`, an id another lane owns is not free either.
   * The id is then used and owned by `lane`.
   */
  claim(producerId: string | undefined, lane: Lane, ownedByLane: boolean): IdClaim;
  /**
   * {@link claim} for a candidate the caller holds already, and whose renames it keeps itself: `id`
   * (the producer's as the caller maps it, or a minted one) is checked like a producer's id, and
   * nothing is mapped to the fresh id that replaces a refused one. For callers that check the
   * candidate before claiming it, and map a producer's id per lane and kind (a message tracker).
   */
  claimId(id: string, lane: Lane, ownedByLane: boolean): IdClaim;
}

/** The state of one namespace's ids; the methods are the shared functions below (no closures per run). */
interface EntityIdsRecord extends EntityIds {
  readonly mint: IdGenerator;
  // Each table made at its first write: most runs use few namespaces (an open stream holds only what it used).
  /**
   * The lane of every id used or owned. A used id (sent, open or ended: never opened again) maps
   * to its lane itself; an id only owned (a reasoning span's) to an {@link OwnedOnly} box. One
   * table for both: every used id is owned, and an open stream holds one table fewer.
   */
  owners: IdTable<Lane | OwnedOnly> | undefined;
  /** Producer id -> the fresh id it was given because its own was taken. */
  remap: Map<string, string> | undefined;
}

/** An id a lane owns but has not used. */
interface OwnedOnly {
  readonly lane: Lane;
}

// Lanes are strings or undefined: an object value is an OwnedOnly box.
const laneOf = (value: Lane | OwnedOnly): Lane => (typeof value === 'object' ? value.lane : value);

/**
 * Creates the id bookkeeping of one namespace for one subscription.
 *
 * @param mint Makes a fresh id (an operator's `generateId` option).
 */
export function createEntityIds(mint: IdGenerator): EntityIds {
  // Its methods on a shared prototype: a record holds only its fields.
  const ids = new IdsRecord();
  ids.mint = mint;
  ids.owners = undefined;
  ids.remap = undefined;
  return IdsRecord.shaped(ids);
}

function wireId(this: EntityIdsRecord, producerId: string): string {
  const remap = this.remap;
  return remap === undefined ? producerId : (remap.get(producerId) ?? producerId);
}

function isUsed(this: EntityIdsRecord, id: string): boolean {
  return usedIn(this.owners, id);
}

// A used id maps to its lane itself (a string or undefined), an id only owned to a box.
function usedIn(owners: IdTable<Lane | OwnedOnly> | undefined, id: string): boolean {
  return owners !== undefined && owners.has(id) && typeof owners.get(id) !== 'object';
}

function hasOwner(this: EntityIdsRecord, id: string): boolean {
  return this.owners?.has(id) === true;
}

function ownerOf(this: EntityIdsRecord, id: string): Lane {
  return laneOf(this.owners?.get(id));
}

function own(this: EntityIdsRecord, id: string, lane: Lane): void {
  const owners = (this.owners ??= createIdTable());
  // A used id stays used.
  owners.set(id, usedIn(owners, id) ? lane : { lane });
}

function claim(this: EntityIdsRecord, producerId: string | undefined, lane: Lane, ownedByLane: boolean): IdClaim {
  if (producerId === undefined) return take(this, { id: mintFresh(this) }, lane);
  const claimed = this.claimId(this.wireId(producerId), lane, ownedByLane);
  // The producer's later events name the fresh id.
  if (claimed.conflict !== undefined) (this.remap ??= new Map()).set(producerId, claimed.id);
  return claimed;
}

function claimId(this: EntityIdsRecord, id: string, lane: Lane, ownedByLane: boolean): IdClaim {
  // A new id, nearly every claim: one lookup. (A used id's lane may be `undefined`: `has` tells it from an absent one.)
  const owners = this.owners;
  if (owners === undefined || !owners.has(id)) return take(this, { id }, lane);
  const owner = owners.get(id) as Lane | OwnedOnly;
  const conflict: IdConflict | undefined = typeof owner !== 'object' ? 'used' : ownedByLane && owner.lane !== lane ? 'owned' : undefined;
  if (conflict === undefined) return take(this, { id }, lane);
  return take(this, { id: mintFresh(this), conflict, refused: id, refusedOwner: laneOf(owner) }, lane);
}

// A minted id no lane owns (see mintUnused).
function mintFresh(ids: EntityIdsRecord): string {
  return mintUnused(ids.mint, (id) => ids.owners?.has(id) === true);
}

// Records the claimed id as used and owned by `lane`.
function take(ids: EntityIdsRecord, claimed: IdClaim, lane: Lane): IdClaim {
  (ids.owners ??= createIdTable()).set(claimed.id, lane);
  return claimed;
}

const entityIdsMethods: EntityIds = Object.freeze({ wireId, isUsed, hasOwner, ownerOf, own, claim, claimId });
const IdsRecord = recordType<EntityIdsRecord>(entityIdsMethods);
