import { recordType } from '../protocol/recordType.js';

/**
 * What a tracker records per id for the rest of a run (a message's lane, an id's owner): the part
 * of a `Map` the trackers use, `get`, `has` and `set`, never a delete or a walk. Call its functions
 * as methods (`table.get(id)`): they are shared, and read the record they are called on.
 */
export interface IdTable<V> {
  /** The value recorded for `id`, if any. */
  get(id: string): V | undefined;
  /** Whether a value is recorded for `id` (which may be `undefined`). */
  has(id: string): boolean;
  /** Records `value` for `id`, replacing what was recorded for it. */
  set(id: string, value: V): void;
}

/** One table's state: its first id and value in the record, a `Map` for the ids after it. */
interface IdTableRecord<V> extends IdTable<V> {
  /** The first id recorded (ids are strings: `undefined` while the table is empty). */
  firstId: string | undefined;
  firstValue: V | undefined;
  /** Made at the second id. */
  rest: Map<string, V> | undefined;
}

/**
 * Creates an empty {@link IdTable}: a record that holds its first id and value itself and makes a
 * `Map` at the second id. An open stream's trackers each record one message, and an empty `Map`
 * alone holds about 190 bytes (its hash table has room for four entries): this holds about 50.
 * Lookups cost one string comparison more than a `Map`'s.
 */
export function createIdTable<V>(): IdTable<V> {
  const table = new IdTableType() as IdTableRecord<unknown>;
  table.firstId = undefined;
  table.firstValue = undefined;
  table.rest = undefined;
  return IdTableType.shaped(table) as IdTable<V>;
}

function get<V>(this: IdTableRecord<V>, id: string): V | undefined {
  if (id === this.firstId) return this.firstValue;
  const rest = this.rest;
  return rest === undefined ? undefined : rest.get(id);
}

function has<V>(this: IdTableRecord<V>, id: string): boolean {
  if (this.firstId !== undefined && id === this.firstId) return true;
  const rest = this.rest;
  return rest !== undefined && rest.has(id);
}

function set<V>(this: IdTableRecord<V>, id: string, value: V): void {
  if (this.firstId === undefined || id === this.firstId) {
    this.firstId = id;
    this.firstValue = value;
  } else (this.rest ??= new Map()).set(id, value);
}

const idTableMethods: IdTable<unknown> = Object.freeze({ get, has, set });
const IdTableType = recordType<IdTableRecord<unknown>>(idTableMethods);
