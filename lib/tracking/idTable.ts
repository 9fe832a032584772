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

/** One table's state: its first id and value in the record, `Map`s for the ids after it. */
interface IdTableRecord<V> extends IdTable<V> {
  /** The first id recorded (ids are strings: `undefined` while the table is empty). */
  firstId: string | undefined;
  firstValue: V | undefined;
  /** Made at the second id; holds up to {@link REST_LIMIT} ids. */
  rest: Map<string, V> | undefined;
  /** Made when `rest` is full: {@link SHARDS} `Map`s for the ids after, each id in `shards[shardOf(id)]`. */
  shards: Map<string, V>[] | undefined;
}

/**
 * The most ids one `Map` of a table holds. V8 keeps a `Map` of up to 4,096 entries in a backing
 * store of under 128 KB; at the 4,097th it allocates one of about 230 KB, in the large-object
 * space, and that allocation alone takes 0.5–0.9 ms (mapped and faulted in page by page), against
 * about 25 ns for an ordinary `set`: a run's 4,097th message cost each of its four tables that
 * much (docs/performance-history.md, the fourteenth round). Sixteen `Map`s of up to 4,096 hold up
 * to 65,536 ids before one of them gets there; the ids a run uses spread over them unevenly (a
 * trial: counters `m1`, `m2`… and UUIDs past 41,000, ids ending alike, `call_1_0`, past 8,194).
 */
const REST_LIMIT = 4096;
const SHARDS = 16;

/**
 * Which of the shards an id goes to: from its last two characters, where the ids runs use differ
 * (random ids, UUIDs, counters such as `m41`). A string's own hash is not readable from
 * JavaScript; an id of fewer than two characters goes to the first shard. Ids that agree in their
 * last two characters share a shard, which then grows as one `Map` does: slower, never wrong.
 */
function shardOf(id: string): number {
  const n = id.length;
  // NaN (an index out of range) & 15 is 0.
  return (id.charCodeAt(n - 1) - id.charCodeAt(n - 2)) & (SHARDS - 1);
}

/**
 * Creates an empty {@link IdTable}: a record that holds its first id and value itself and makes a
 * `Map` at the second id. An open stream's trackers each record one message, and an empty `Map`
 * alone holds about 190 bytes (its hash table has room for four entries): this holds about 56.
 * Lookups cost one string comparison more than a `Map`'s; past {@link REST_LIMIT} ids, one more
 * lookup (the full `Map`, then a shard).
 */
export function createIdTable<V>(): IdTable<V> {
  const table = new IdTableType() as IdTableRecord<unknown>;
  table.firstId = undefined;
  table.firstValue = undefined;
  table.rest = undefined;
  table.shards = undefined;
  return IdTableType.shaped(table) as IdTable<V>;
}

function get<V>(this: IdTableRecord<V>, id: string): V | undefined {
  if (id === this.firstId) return this.firstValue;
  const rest = this.rest;
  if (rest === undefined) return undefined;
  const value = rest.get(id);
  const shards = this.shards;
  // An id is in `rest` or in its shard, never both (see set): one recorded as `undefined` in `rest` is in no shard.
  return value !== undefined || shards === undefined ? value : shards[shardOf(id)].get(id);
}

function has<V>(this: IdTableRecord<V>, id: string): boolean {
  if (this.firstId !== undefined && id === this.firstId) return true;
  const rest = this.rest;
  if (rest === undefined) return false;
  if (rest.has(id)) return true;
  const shards = this.shards;
  return shards !== undefined && shards[shardOf(id)].has(id);
}

function set<V>(this: IdTableRecord<V>, id: string, value: V): void {
  if (this.firstId === undefined || id === this.firstId) {
    this.firstId = id;
    this.firstValue = value;
    return;
  }
  const rest = (this.rest ??= new Map());
  if (rest.size < REST_LIMIT || rest.has(id)) rest.set(id, value);
  else (this.shards ??= makeShards<V>())[shardOf(id)].set(id, value);
}

function makeShards<V>(): Map<string, V>[] {
  const shards: Map<string, V>[] = [];
  for (let i = 0; i < SHARDS; i++) shards.push(new Map());
  return shards;
}

const idTableMethods: IdTable<unknown> = Object.freeze({ get, has, set });
const IdTableType = recordType<IdTableRecord<unknown>>(idTableMethods);
