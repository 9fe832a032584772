import type { Operation } from 'fast-json-patch';
import { AguiRxError, describeValue } from '../protocol/errors.js';
import { firstLine } from './jsonPatch.js';
import { keepShapes } from '../protocol/recordType.js';

/** Options of {@link createStateMirror}. */
export interface StateMirrorOptions {
  /**
   * The producer never mutates a state it has emitted: a subtree or array element that is the same
   * object as last time is unchanged, and is skipped without looking inside. Default `false`.
   */
  immutable?: boolean | undefined;
}

/** What a whole-state snapshot becomes on the wire (see {@link StateMirror.update}). */
export type StateChange =
  | { readonly type: 'none' }
  | { readonly type: 'delta'; readonly delta: Operation[] }
  | { readonly type: 'snapshot'; readonly snapshot: unknown };

const none: StateChange = { type: 'none' };

/**
 * Subtrees found deep-frozen (every object in them frozen, plain and without `toJSON`): they can
 * never change. Shared by every mirror, since freezing is for ever. A mirror's base holds the
 * producer's object only where it was found deep-frozen, so the diff's `previous === next` is the
 * skip; this set spares walking a deep-frozen subtree again where it turns up in a new place.
 */
const deepFrozen = new WeakSet<object>();
/** The subtrees of {@link deepFrozen} that are plain JSON as they stand (can go on the wire by reference). */
const deepFrozenJson = new WeakSet<object>();

/** Flags of a diff's `inspect` (see {@link inspect}). */
const frozenFlag = 1;
const jsonFlag = 2;

/** Beyond this depth a walk checks the whole state for reference cycles (once per update). */
const maxDepth = 1000;

/** Keys a client refuses in a patch path (`fast-json-patch` bans them; see lib/jsonPatch.ts). */
const prototypeKeys = new Set(['__proto__', 'constructor', 'prototype']);

/** Characters that JSON.stringify escapes, and lone surrogates (escaped by well-formed JSON.stringify). */
const escaped = /["\\\u0000-\u001f\ud800-\udfff]/;

const hasOwn = Object.prototype.hasOwnProperty;
const isEnumerable = Object.prototype.propertyIsEnumerable;

type Json = Record<string, unknown>;

/**
 * The state a client holds, kept in step with a producer's whole-state snapshots: each
 * {@link update} says what to send (nothing, an RFC 6902 patch, or the snapshot) and moves the
 * mirror to the new state. Made by {@link createStateMirror}.
 *
 * Values are read with JSON.stringify's semantics (ECMA-262 `SerializeJSONProperty`): own
 * enumerable string keys in `Object.keys` order; `toJSON` is called (Dates become strings);
 * Number, String and Boolean objects are unwrapped; NaN and ±Infinity are `null`; keys whose value
 * is `undefined`, a function or a symbol are absent, and such array elements are `null`. A BigInt
 * or a reference cycle is an `INVALID_STATE` error.
 *
 * Default mode keeps its own copy of the state and updates it in place while diffing, so a
 * producer that mutates one object and re-emits it gets correct deltas; deep-frozen subtrees are
 * held and skipped by reference. With `immutable`, the mirror holds the producer's own objects and
 * skips every subtree that is the same object as last time.
 */
export interface StateMirror {
  /** The state the client holds, `undefined` before the first snapshot. Read it, never change it. */
  readonly state: unknown;

  /**
   * Takes `state` as what the client now holds (a parsed `initialState`, a state an upstream patch
   * was applied to). It must be plain JSON that the caller hands over and will not touch again.
   */
  reset(state: unknown): void;

  /**
   * Moves the mirror to `snapshot` and says what the client needs (rules 1–3 of `stateDelta`):
   * the first snapshot whole; then nothing when the JSON is unchanged; else the RFC 6902 patch,
   * or the snapshot when the patch is not shorter in JSON characters, would go through a key
   * `__proto__`, `constructor` or `prototype`, or would replace the whole document. Values in the
   * result are JSON values the producer cannot change later: copies, or in immutable mode (and for
   * deep-frozen values) the producer's own objects when they are already plain JSON.
   *
   * @param what Names the snapshot in error messages, e.g. `STATE_SNAPSHOT` (the default).
   * @throws {AguiRxError} `INVALID_STATE` when `snapshot` has no JSON value or is not
   * JSON-serialisable (a BigInt, a cycle, a throwing `toJSON`); the mirror is then unusable.
   */
  update(snapshot: unknown, what?: string): StateChange;
}

/**
 * A mirror as the module's functions see it: {@link StateMirror} and its own fields. Its updates
 * are one module function taking the mirror, not a closure per mirror, for the reason of {@link Walk}.
 */
interface Mirror extends StateMirror {
  /** What the client holds: our own JSON copy, the producer's objects (immutable mode), or a mix with deep-frozen subtrees. */
  state: unknown;
  readonly immutable: boolean;
  /**
   * One walk per mirror, reused by each update (a subscription's updates never overlap); made at
   * the first update, so that a run that never sends a state snapshot holds none of it.
   */
  walk: Walk | undefined;
}

/** A new {@link StateMirror}, holding nothing yet: its first update sends the snapshot whole. */
export function createStateMirror(options: StateMirrorOptions = {}): StateMirror {
  const mirror: Mirror = {
    // A data property, as a getter would leave the object in dictionary mode and every call on it slower.
    state: undefined,
    immutable: options.immutable === true,
    walk: undefined,
    reset(state) {
      mirror.state = state;
    },
    update(snapshot, what = 'STATE_SNAPSHOT') {
      return updateMirror(mirror, snapshot, what);
    },
  };
  return mirror;
}

/** {@link StateMirror.update}. */
function updateMirror(mirror: Mirror, snapshot: unknown, what: string): StateChange {
  const immutable = mirror.immutable;
  const diff = (mirror.walk ??= createWalk());
  startWalk(diff, immutable, snapshot);
  try {
    const next = toJsonValue(snapshot, '');
    if (next === undefined) {
      throw new AguiRxError('INVALID_STATE', `${what} has no JSON value (got ${describeValue(snapshot)}). Send the whole state object as 'snapshot'.`);
    }
    if (mirror.state === undefined) {
      if (immutable) {
        mirror.state = snapshot;
        return { type: 'snapshot', snapshot: emit(diff, next) };
      }
      mirror.state = adopt(diff, next, snapshot);
      return { type: 'snapshot', snapshot: emit(diff, mirror.state, diff.shareable) };
    }
    const previous = mirror.state;
    // The same object again: unchanged if the producer promised so, or if it is deep-frozen
    // (in default mode the base is otherwise our own copy, never the producer's object).
    if (previous === snapshot) return none;
    const updated = diffValue(diff, toJsonValue(previous, ''), snapshot, next);
    mirror.state = immutable ? snapshot : updated;
    const ops = diff.ops;
    if (ops.length === 0) return none;
    // The whole document replaced (object, array and primitive swapped): a snapshot says it.
    if (ops[0].path === '') return { type: 'snapshot', snapshot: (ops[0] as { value: unknown }).value };
    if (!diff.unsafe) {
      // Each value of the patch is also in the new state, at its path: the patch is shorter than
      // the state exactly when the rest of the patch (brackets, ops, paths) is shorter than the
      // rest of the state, which is at least what the diff saw unchanged (2 characters an
      // element, 5 a key): mostly enough to decide without reading a value.
      if (patchLength(ops, 'none') < diff.unchangedSize) return { type: 'delta', delta: ops };
      const state = immutable ? next : updated;
      // Then without reading any string's characters: whatever the patch's strings add in
      // escapes adds as much to the state, so a patch shorter than the state with every string
      // counted unescaped is shorter escaped too. The state's JSON is at least 2 characters an
      // element or 5 a key (`"":0,`), plus brackets.
      const rawPatch = patchLength(ops, 'unescaped');
      if (rawPatch < diff.rootSize || lengthOf(state, rawPatch, true) > rawPatch) return { type: 'delta', delta: ops };
      // Close (a patch about as long as the state): exact lengths, escapes counted.
      const patchSize = patchLength(ops, 'exact');
      if (lengthOf(state, patchSize, false) > patchSize) return { type: 'delta', delta: ops };
    }
    return { type: 'snapshot', snapshot: immutable || diff.trusted ? emit(diff, immutable ? next : updated) : emit(diff, updated, false) };
  } catch (error) {
    if (error instanceof AguiRxError) throw error;
    // Nested deeper than the walk's stack allows (JSON.stringify goes deeper): the whole
    // state goes as a snapshot, and the mirror starts again from its JSON.
    if (error instanceof RangeError && /call stack/i.test(error.message)) return resetFromJson(mirror, snapshot, what);
    throw notSerialisable(what, error);
  } finally {
    finishWalk(diff);
  }
}

/** Sends `snapshot` whole and takes its JSON as the mirror's state (a state too deep to walk). */
function resetFromJson(mirror: Mirror, snapshot: unknown, what: string): StateChange {
  let json: string | undefined;
  try {
    json = JSON.stringify(snapshot);
  } catch (error) {
    if (error instanceof RangeError && /call stack/i.test(error.message)) {
      throw new AguiRxError('INVALID_STATE', `${what} is nested too deeply to serialise (JSON.stringify ran out of stack). Flatten deeply nested structures in your state.`);
    }
    throw notSerialisable(what, error);
  }
  if (json === undefined) throw notSerialisable(what, new TypeError('no JSON value'));
  mirror.state = mirror.immutable ? snapshot : JSON.parse(json);
  return { type: 'snapshot', snapshot: JSON.parse(json) };
}

function notSerialisable(what: string, error: unknown): AguiRxError {
  return new AguiRxError(
    'INVALID_STATE',
    `${what} is not JSON-serialisable: ${firstLine((error as Error)?.message ?? String(error))}. State must be plain JSON: convert BigInts to strings or numbers and break reference cycles.`,
  );
}

/**
 * The RFC 6902 patch that turns JSON value `from` into `to` (both read with JSON.stringify's
 * semantics), in the same operations, order and pointers as fast-json-patch `compare`: removals
 * and replacements walking each object's keys (and each array's indexes) from the last, then
 * additions in the new order. Treats both values as immutable: a subtree that is the same object
 * on both sides is not looked into. Values in the patch are `to`'s own objects where already plain
 * JSON, else copies.
 *
 * @throws {TypeError} from JSON semantics: a BigInt, a cycle, a throwing `toJSON`.
 */
export function diffJson(from: unknown, to: unknown): Operation[] {
  if (from === to) return [];
  const next = toJsonValue(to, '');
  const previous = toJsonValue(from, '');
  if (next === undefined || previous === undefined) throw new TypeError('diffJson needs two values that have a JSON text');
  const diff = createWalk();
  startWalk(diff, true, to);
  try {
    diffValue(diff, previous, to, next);
    return diff.ops;
  } finally {
    finishWalk(diff);
  }
}

/**
 * The length of `JSON.stringify(value)` in UTF-16 code units, exact (escapes and lone surrogates
 * included), without building the text; or, once the count passes `limit`, some number above
 * `limit` (the walk stops there). `undefined` for a value with no JSON text.
 */
export function jsonLength(value: unknown, limit = Infinity): number | undefined {
  const json = toJsonValue(value, '');
  return json === undefined ? undefined : lengthOf(json, limit, false);
}

/**
 * {@link jsonLength} of a JSON value (whose containers may hold raw values); with `unescaped`, every
 * string counted as its length and quotes, without reading its characters (a lower bound).
 */
function lengthOf(json: unknown, limit: number, unescaped: boolean): number {
  const counter: Counter = { size: 0, limit, depth: 0, unescaped };
  addLength(json, counter);
  return counter.size;
}

interface Counter {
  size: number;
  limit: number;
  depth: number;
  /** Count strings as their length and quotes (escapes left out: a lower bound, O(1) a string). */
  unescaped: boolean;
}

/** Adds the JSON length of `value` (a JSON value whose containers may hold raw values) to the counter; true once past the limit. */
function addLength(value: unknown, counter: Counter): boolean {
  if (typeof value !== 'object' || value === null) {
    counter.size += typeof value === 'string' && counter.unescaped ? value.length + 2 : primitiveLength(value);
    return counter.size > counter.limit;
  }
  // A cycle (only a producer that broke the immutable promise can sneak one past the diff): too long.
  if (++counter.depth > maxDepth) {
    counter.size = Infinity;
    return true;
  }
  if (Array.isArray(value)) {
    // '[', then each element followed by ',' or ']'.
    counter.size += value.length === 0 ? 2 : 1 + value.length;
    for (let i = 0; i < value.length && counter.size <= counter.limit; i++) addLength(toJsonValue(value[i], i) ?? null, counter);
  } else {
    // '{', then each '"key":value' followed by ',' or '}'.
    counter.size += 1;
    let entries = 0;
    for (const key of Object.keys(value)) {
      const item = toJsonValue((value as Json)[key], key);
      if (item === undefined) continue;
      entries++;
      counter.size += (counter.unescaped ? key.length + 2 : stringLength(key)) + 2;
      if (addLength(item, counter)) break;
    }
    if (entries === 0) counter.size += 1;
  }
  counter.depth--;
  return counter.size > counter.limit;
}

/**
 * JSON length of a patch: `[`, the operations separated by `,`, `]`; its values' as `values` says:
 * left out (`none`), with strings counted unescaped, or exact. Paths are always exact (they are not
 * part of the state).
 */
function patchLength(ops: readonly Operation[], values: 'none' | 'unescaped' | 'exact'): number {
  let size = 1 + ops.length;
  for (const op of ops) {
    // {"op":"<op>","path":<path>} with ,"value":<value> before the closing brace.
    size += 17 + op.op.length + stringLength(op.path);
    if ('value' in op) size += 9 + (values === 'none' ? 0 : lengthOf(op.value, Infinity, values === 'unescaped'));
  }
  return size;
}

function primitiveLength(value: unknown): number {
  switch (typeof value) {
    case 'string':
      return stringLength(value);
    case 'number':
      return String(value).length;
    case 'boolean':
      return value ? 4 : 5;
    default:
      return 4; // null
  }
}

/** JSON length of a string: its length and quotes, or the escaped length when something needs escaping. */
function stringLength(value: string): number {
  return escaped.test(value) ? JSON.stringify(value).length : value.length + 2;
}

/**
 * What JSON.stringify writes for `value` held under `key`: a primitive, or an object or array to
 * walk (returned as is); `undefined` when it writes nothing (the key is left out, an element is
 * `null`). Throws what JSON.stringify throws for a BigInt.
 */
function toJsonValue(value: unknown, key: string | number): unknown {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return value;
    case 'number':
      return jsonNumber(value);
    case 'object': {
      if (value === null) return null;
      const toJSON = (value as { toJSON?: unknown }).toJSON;
      if (typeof toJSON === 'function') return unwrap(toJSON.call(value, String(key)));
      const prototype = Object.getPrototypeOf(value);
      return prototype === Object.prototype || prototype === Array.prototype || prototype === null ? value : unwrap(value);
    }
    case 'bigint':
    case 'function': {
      const toJSON = (value as { toJSON?: unknown }).toJSON;
      if (typeof toJSON === 'function') return unwrap(toJSON.call(value, String(key)));
      return unwrap(value);
    }
    default:
      return undefined; // undefined, symbol
  }
}

/** A number as JSON writes it: NaN and ±Infinity are null; -0 is written 0. */
function jsonNumber(value: number): number | null {
  return Number.isFinite(value) ? (value === 0 ? 0 : value) : null;
}

/** The rest of `SerializeJSONProperty` once `toJSON` was called: wrapper objects, then the type. */
function unwrap(value: unknown): unknown {
  if (typeof value === 'object' && value !== null) {
    if (value instanceof Number) value = Number(value);
    else if (value instanceof String) value = String(value);
    else if (value instanceof Boolean || value instanceof BigInt) value = value.valueOf();
    else return value;
  }
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return value;
    case 'number':
      return jsonNumber(value);
    case 'object':
      return value; // null
    case 'bigint':
      // The engine's own message ("Do not know how to serialize a BigInt").
      return JSON.stringify(value);
    default:
      return undefined;
  }
}

/**
 * The last index at or before `from` where the arrays hold different values, or -1: the scan that
 * skips unchanged elements by reference. Long arrays get a copy of the function of their own: V8
 * specialises an element read for the kinds of array it has seen there, and a read that has seen
 * small arrays of strings or numbers as well runs a long scan of objects about three times slower.
 */
function lastDifference(previous: readonly unknown[], next: readonly unknown[], from: number): number {
  return from < 64 ? lastShortDifference(previous, next, from) : lastLongDifference(previous, next, from);
}

function lastShortDifference(previous: readonly unknown[], next: readonly unknown[], from: number): number {
  let i = from;
  while (i >= 0 && previous[i] === next[i]) i--;
  return i;
}

function lastLongDifference(previous: readonly unknown[], next: readonly unknown[], from: number): number {
  let i = from;
  while (i >= 0 && previous[i] === next[i]) i--;
  return i;
}

/**
 * Plain copies of long frozen arrays, kept while the array lives and only for the last one copied:
 * the next diff scans it again as the previous state.
 */
const plainCopies = new WeakMap<readonly unknown[], unknown[]>();
let lastCopied: WeakRef<readonly unknown[]> | undefined;

/** A plain copy of a frozen (or sealed) array, to scan. */
function plainCopy(array: readonly unknown[]): readonly unknown[] {
  const cached = plainCopies.get(array);
  if (cached !== undefined) return cached;
  const copy = [...array];
  // Only a frozen array's copy stays right: a sealed one's elements can still change.
  if (array.length >= 64 && Object.isFrozen(array)) {
    const last = lastCopied?.deref();
    if (last !== undefined) plainCopies.delete(last);
    plainCopies.set(array, copy);
    lastCopied = new WeakRef(array);
  }
  return copy;
}

/** Whether two key lists hold the same keys in the same order (keys are interned: mostly a pointer compare). */
function sameList(a: readonly string[], b: readonly string[]): boolean {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** Whether JSON writes `value` under `key` (the common cases without a call to {@link toJsonValue}). */
function isPresent(value: unknown, key: string): boolean {
  const type = typeof value;
  if (type === 'string' || type === 'number' || type === 'boolean' || value === null) return true;
  return toJsonValue(value, key) !== undefined;
}

/** Whether `value` (an object) has a plain prototype: an object literal, an array, `Object.create(null)`. */
function isPlain(value: object): boolean {
  const prototype = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === Array.prototype || prototype === null;
}

/** Sets an own key, `__proto__` included (plain assignment would change the prototype instead). */
function setKey(target: Json, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true });
  else target[key] = value;
}

/** RFC 6901 section 4 escaping of one reference token: `~` as `~0`, `/` as `~1`. */
function escapeToken(token: string | number): string {
  if (typeof token === 'number') return String(token);
  return token.includes('~') || token.includes('/') ? token.replace(/~/g, '~0').replace(/\//g, '~1') : token;
}

/**
 * The JSON text of a state (a snapshot, an initial state, a patch).
 *
 * @param state The value to serialise.
 * @param what What it is, for the error (`'stateDelta initialState'`, `'STATE_DELTA delta'`).
 * @throws {AguiRxError} `INVALID_STATE` when it has none: a BigInt, a reference cycle, `undefined` or a function.
 */
export function serialiseState(state: unknown, what: string): string {
  let json: string | undefined;
  try {
    json = JSON.stringify(state);
  } catch (error) {
    throw new AguiRxError('INVALID_STATE', `${what} is not JSON-serialisable: ${firstLine((error as Error).message)}. State must be plain JSON: convert BigInts to strings or numbers and break reference cycles.`);
  }
  if (json === undefined) {
    throw new AguiRxError('INVALID_STATE', `${what} has no JSON value (got ${describeValue(state)}). Send the whole state object as 'snapshot'.`);
  }
  return json;
}

/**
 * One diff's working state: the walk of the base (what the client holds) against the producer's
 * new state, collecting RFC 6902 operations and, in default mode, updating the base's own nodes in
 * place. Made by {@link createWalk} (one per mirror), begun with {@link startWalk} and reset with
 * {@link finishWalk}; walked by the module's functions below, which take it as their first
 * argument. Module functions rather than closures over per-diff variables: each new mirror (each
 * subscription) made new closures, and V8 compiled the walk again for every one of them (tens of
 * ms of background compiling, and the interpreter meanwhile), which showed up as steps several
 * times slower at random; one function per walk keeps one optimised code, warm for every run.
 */
interface Walk {
  /** The patch, in fast-json-patch `compare` order. */
  ops: Operation[];
  /** Whether some operation's path goes through `__proto__`, `constructor` or `prototype`. */
  unsafe: boolean;
  /** A lower bound of the JSON length of the new state, from its top level. */
  rootSize: number;
  /** A lower bound of the JSON length of what the diff found unchanged in the containers it walked (no part of any operation's value). */
  unchangedSize: number;
  /** Whether the value the last `diffValue`/`adopt` call returned may be kept by reference (a primitive, a deep-frozen subtree). */
  trusted: boolean;
  /** Whether the value the last `adopt` call returned may also go on the wire by reference (deep-frozen and plain JSON). */
  shareable: boolean;
  /** The path of the value being diffed, as unescaped reference tokens. */
  path: (string | number)[];
  depth: number;
  cyclesChecked: boolean;
  /** Whether the producer promised never to mutate what it emitted. */
  immutable: boolean;
  /** The producer's whole state, for the cycle check. */
  root: unknown;
  /** Immutable mode: the keys of the large objects diffed as new, the producer having promised not to change them. */
  keyLists: WeakMap<object, string[]>;
}

/** A new {@link Walk}, idle (every walk has the same fields in the same order: one shape for V8). */
function createWalk(): Walk {
  return {
    ops: [],
    unsafe: false,
    rootSize: 0,
    unchangedSize: 0,
    trusted: false,
    shareable: false,
    path: [],
    depth: 0,
    cyclesChecked: false,
    immutable: false,
    root: null,
    keyLists: new WeakMap<object, string[]>(),
  };
}

// A run makes one mirror, its options and its walk: one of each kept (see keepShapes).
const mirrorOptions = { immutable: false };
keepShapes(mirrorOptions, createStateMirror(mirrorOptions), createWalk());

/** Begins a diff of the producer's state `root`. */
function startWalk(w: Walk, immutable: boolean, root: unknown): void {
  w.immutable = immutable;
  w.root = root;
}

/** Ends a diff: lets go of the state and its patch, and makes the walk available again. */
function finishWalk(w: Walk): void {
  w.ops = [];
  w.path.length = 0;
  w.root = null;
  w.unsafe = w.trusted = w.shareable = w.cyclesChecked = false;
  w.depth = w.rootSize = w.unchangedSize = 0;
}

/**
 * Diffs `previous` (the base's value here) with `next` (the producer's value `raw`, as JSON
 * writes it); both present. Returns what the base holds here now (default mode).
 */
function diffValue(w: Walk, previous: unknown, raw: unknown, next: unknown): unknown {
  if (typeof next === 'object' && next !== null) {
    if (typeof previous === 'object' && previous !== null) {
      const isArray = Array.isArray(next);
      if (isArray === Array.isArray(previous)) {
        if (isArray) return w.immutable ? diffArray(w, previous as unknown[], next as unknown[], raw) : diffOwnArray(w, previous as unknown[], next as unknown[], raw);
        return w.immutable ? diffObject(w, previous as Json, next as Json, raw) : diffOwnObject(w, previous as Json, next as Json, raw);
      }
    }
  } else if (previous === next) {
    w.trusted = true;
    return next;
  }
  return put(w, 'replace', next, raw);
}

/**
 * The base's value for a new object or array `next` (default mode): `next` itself when
 * deep-frozen, else our own copy that keeps deep-frozen parts by reference. Sets `trusted`.
 */
function adopt(w: Walk, next: unknown, raw: unknown): unknown {
  if (typeof next !== 'object' || next === null) {
    w.trusted = true;
    w.shareable = true;
    return next;
  }
  if (next === raw && Object.isFrozen(next)) {
    const flags = inspect(w, next, true);
    if ((flags & frozenFlag) !== 0) {
      deepFrozen.add(next);
      if ((flags & jsonFlag) !== 0) deepFrozenJson.add(next);
      w.trusted = true;
      w.shareable = (flags & jsonFlag) !== 0;
      return next;
    }
  }
  enter(w);
  let copy: unknown;
  if (Array.isArray(next)) {
    const array: unknown[] = [];
    for (let i = 0; i < next.length; i++) {
      const item = next[i];
      array.push(adopt(w, toJsonValue(item, i) ?? null, item));
    }
    copy = array;
  } else {
    const object: Json = {};
    for (const key of Object.keys(next)) {
      const item = (next as Json)[key];
      const json = toJsonValue(item, key);
      if (json !== undefined) setKey(object, key, adopt(w, json, item));
    }
    copy = object;
  }
  w.depth--;
  // Ours, and updated in place later: never on the wire.
  w.trusted = false;
  w.shareable = false;
  return copy;
}

/**
 * A value to put on the wire for `value` (a JSON value whose containers may hold raw values),
 * one the producer will not change: `value` itself when it may be shared (immutable mode, a
 * deep-frozen value; `canShare` when already known) and is plain JSON as it stands, else a
 * JSON copy.
 */
function emit(w: Walk, value: unknown, canShare?: boolean): unknown {
  if (typeof value !== 'object' || value === null) return value;
  return (canShare ?? (inspect(w, value, false) & jsonFlag) !== 0) ? value : copyJson(w, value);
}

/**
 * {@link diffObject} for the common case of default mode, as a function of its own so that its type
 * feedback holds only this mode's objects (after walking immutable or frozen states as well, the
 * shared walk read a mutated state's objects up to half again slower): `previous` our own copy,
 * `next` a plain unfrozen object with the same keys in the same order. Anything else goes to diffObject.
 */
function diffOwnObject(w: Walk, previous: Json, next: Json, raw: unknown): unknown {
  // Past maxDepth too: the general walk's frames give out where they did before (a state that deep
  // goes whole, as the client's own clone overflows on a patch to it).
  if (w.depth >= maxDepth || Object.isFrozen(previous) || Object.isFrozen(next) || !isPlain(next)) return diffObject(w, previous, next, raw);
  const keys = Object.keys(previous);
  const nextKeys = Object.keys(next);
  if (!sameList(keys, nextKeys)) return diffObject(w, previous, next, raw, keys, nextKeys);
  enter(w);
  let present = 0;
  let unchanged = 0;
  for (let i = keys.length - 1; i >= 0; i--) {
    const key = keys[i];
    const before = previous[key];
    const after = next[key];
    if (before === after) {
      unchanged++;
      continue;
    }
    w.path.push(key);
    const n = toJsonValue(after, key);
    if (n === undefined) {
      remove(w);
      delete previous[key];
    } else {
      present++;
      const updated = diffValue(w, before, after, n);
      if (updated !== before) setKey(previous, key, updated);
    }
    w.path.pop();
  }
  if (w.depth === 1) w.rootSize = 5 * (present + unchanged) + 1;
  if (unchanged > 0) w.unchangedSize += 5 * unchanged - 1;
  w.depth--;
  // Ours, updated in place: never on the wire.
  w.trusted = false;
  return previous;
}

function diffObject(w: Walk, previous: Json, next: Json, raw: unknown, ownKeys?: string[], ownNextKeys?: string[]): unknown {
  // Where the base's copy is updated in place (default mode): `previous` when it is ours (ours are
  // never frozen; a frozen base node is a deep-frozen producer object).
  let target: Json | undefined;
  let keep = false;
  const plain = isPlain(next);
  if (!w.immutable) {
    keep = next === raw && plain && Object.isFrozen(next);
    if (!Object.isFrozen(previous)) target = previous;
    else if (!keep) target = previous = ownCopy(previous) as Json;
  }
  // Our own copy holds JSON values only; the producer's objects need reading as JSON does.
  const clean = target !== undefined;
  enter(w);
  // Listing a large object's keys is most of a step's cost: in immutable mode each large object's
  // list is kept for the next step, where the object is `previous`.
  const keys = ownKeys ?? (w.immutable ? w.keyLists.get(previous) : undefined) ?? Object.keys(previous);
  const nextKeys = ownNextKeys ?? Object.keys(next);
  if (w.immutable && nextKeys.length > 32) w.keyLists.set(next, nextKeys);
  // Own keys that JSON leaves out (non-enumerable, from defineProperty) are rare: only then is
  // each key asked (propertyIsEnumerable has no fast path in V8; hasOwnProperty has). Listing
  // every own key costs more than asking each one in a large object, which is asked.
  // The same key list (an immutable update that replaced values, or a state mutated in place) is
  // the common case and needs neither: every key of `previous` is then an own enumerable key of
  // `next`, and `next` has no other key JSON writes. Comparing the lists is a pointer compare a key.
  const sameKeys = sameList(keys, nextKeys);
  const hidden = !sameKeys && (nextKeys.length > 32 || Object.getOwnPropertyNames(next).length !== nextKeys.length);
  // Keys of `previous` (present on the client) that `next` has as own enumerable keys.
  let matched = 0;
  // Keys of `next` that JSON writes.
  let present = 0;
  // Keys of `next` that JSON writes with the same value as before.
  let unchanged = 0;
  for (let i = keys.length - 1; i >= 0; i--) {
    const key = keys[i];
    const before = previous[key];
    // JSON writes own enumerable keys only. A plain object inherits nothing JSON writes
    // (Object.prototype's members are functions, and `__proto__` gives an object that is never in
    // a state), so without hidden keys the same value means the same own key.
    const checked = !sameKeys && (hidden || !plain);
    const enumerable = checked ? isEnumerable.call(next, key) : true;
    const after = enumerable ? next[key] : undefined;
    if (before === after) {
      if (clean || isPresent(before, key)) {
        matched++;
        present++;
        unchanged++;
      }
      continue;
    }
    const p = clean ? before : toJsonValue(before, key);
    if (p === undefined) continue;
    const own = sameKeys || (checked ? enumerable : hasOwn.call(next, key));
    if (own) matched++;
    const n = own ? toJsonValue(after, key) : undefined;
    w.path.push(key);
    if (n === undefined) {
      remove(w);
      if (target !== undefined) delete target[key];
    } else {
      present++;
      const updated = diffValue(w, p, after, n);
      if (target !== undefined && updated !== before) setKey(target, key, updated);
      // A value JSON reads through toJSON (a Date) can change inside a frozen parent.
      if (!w.trusted || n !== after) keep = false;
    }
    w.path.pop();
  }
  if (matched !== nextKeys.length) {
    for (const key of nextKeys) {
      if (hasOwn.call(previous, key) && (clean || toJsonValue(previous[key], key) !== undefined)) continue;
      const after = next[key];
      const n = toJsonValue(after, key);
      if (n === undefined) continue;
      present++;
      w.path.push(key);
      const added = put(w, 'add', n, after);
      if (target !== undefined) setKey(target, key, added);
      if (!w.trusted || n !== after) keep = false;
      w.path.pop();
    }
  }
  if (w.depth === 1) w.rootSize = 5 * present + 1;
  // `"":0` each, with a comma between two.
  if (unchanged > 0) w.unchangedSize += 5 * unchanged - 1;
  w.depth--;
  return settle(w, next, target, keep);
}

/** {@link diffArray} for the common case of default mode, for the reason of {@link diffOwnObject}: `previous` our own copy, `next` a plain extensible array. */
function diffOwnArray(w: Walk, previous: unknown[], next: unknown[], raw: unknown): unknown {
  if (w.depth >= maxDepth || !Object.isExtensible(previous) || !Object.isExtensible(next) || !isPlain(next)) return diffArray(w, previous, next, raw);
  enter(w);
  const length = previous.length;
  const nextLength = next.length;
  if (w.depth === 1) w.rootSize = 2 * nextLength + 1;
  for (let i = length - 1; i >= nextLength; i--) {
    w.path.push(i);
    remove(w);
    w.path.pop();
  }
  const common = Math.min(length, nextLength);
  let changed = 0;
  for (let i = common - 1; i >= 0; i--) {
    const before = previous[i];
    const after = next[i];
    if (before === after) continue;
    changed++;
    w.path.push(i);
    const updated = diffValue(w, before, after, toJsonValue(after, i) ?? null);
    if (updated !== before) previous[i] = updated;
    w.path.pop();
  }
  if (common - changed > 0) w.unchangedSize += 2 * (common - changed) - 1;
  if (nextLength < length) previous.length = nextLength;
  for (let i = length; i < nextLength; i++) {
    const after = next[i];
    w.path.push(i);
    previous.push(put(w, 'add', toJsonValue(after, i) ?? null, after));
    w.path.pop();
  }
  w.depth--;
  w.trusted = false;
  return previous;
}

function diffArray(w: Walk, previous: unknown[], next: unknown[], raw: unknown): unknown {
  let target: unknown[] | undefined;
  let keep = false;
  if (!w.immutable) {
    keep = next === raw && isPlain(next) && Object.isFrozen(next);
    if (!Object.isFrozen(previous)) target = previous;
    else if (!keep) target = previous = ownCopy(previous) as unknown[];
  }
  const clean = target !== undefined;
  enter(w);
  const length = previous.length;
  const nextLength = next.length;
  if (w.depth === 1) w.rootSize = 2 * nextLength + 1;
  for (let i = length - 1; i >= nextLength; i--) {
    w.path.push(i);
    remove(w);
    w.path.pop();
  }
  // V8 reads the elements of a frozen array several times slower than a plain one's (and a scan
  // that has seen both kinds gets slower for plain ones too), but copies them fast: the scan
  // runs on plain arrays only.
  const scanned = Object.isExtensible(previous) ? previous : plainCopy(previous);
  const scanning = Object.isExtensible(next) ? next : plainCopy(next);
  let changed = 0;
  for (let i = lastDifference(scanned, scanning, Math.min(length, nextLength) - 1); i >= 0; i = lastDifference(scanned, scanning, i - 1)) {
    changed++;
    const before = previous[i];
    const after = next[i];
    w.path.push(i);
    const n = toJsonValue(after, i) ?? null;
    const updated = diffValue(w, clean ? before : (toJsonValue(before, i) ?? null), after, n);
    if (target !== undefined && updated !== before) target[i] = updated;
    if (!w.trusted || n !== after) keep = false;
    w.path.pop();
  }
  // One character each, with a comma between two.
  const unchanged = Math.min(length, nextLength) - changed;
  if (unchanged > 0) w.unchangedSize += 2 * unchanged - 1;
  if (target !== undefined && nextLength < length) target.length = nextLength;
  for (let i = length; i < nextLength; i++) {
    const after = next[i];
    w.path.push(i);
    const n = toJsonValue(after, i) ?? null;
    const added = put(w, 'add', n, after);
    if (target !== undefined) target.push(added);
    if (!w.trusted || n !== after) keep = false;
    w.path.pop();
  }
  w.depth--;
  return settle(w, next, target, keep);
}

/** The base's value once `next` was walked: `next` if it can be kept by reference (`keep`), else our updated copy. */
function settle(w: Walk, next: object, target: object | undefined, keep: boolean): unknown {
  if (w.immutable) return next;
  w.trusted = keep;
  if (keep) {
    deepFrozen.add(next);
    return next;
  }
  // A deep-frozen base node gave way to a frozen one with something unfrozen inside (rare).
  return target ?? adopt(w, next, next);
}

/** Adds an `add` or `replace` of `next` (the producer's `raw`, as JSON) at the current path; returns the base's new value. */
function put(w: Walk, op: 'add' | 'replace', next: unknown, raw: unknown): unknown {
  let base: unknown = raw;
  let wire: unknown;
  if (typeof next !== 'object' || next === null) {
    w.trusted = true;
    base = wire = next;
  } else if (w.immutable) {
    wire = emit(w, next);
  } else {
    base = adopt(w, next, raw);
    wire = emit(w, base, w.shareable);
  }
  w.ops.push({ op, path: pointer(w), value: wire } as Operation);
  return base;
}

function remove(w: Walk): void {
  w.ops.push({ op: 'remove', path: pointer(w) });
}

/** The RFC 6901 pointer of the current path; notes a path through a prototype key. */
function pointer(w: Walk): string {
  let pointer = '';
  for (const token of w.path) {
    if (typeof token === 'string' && prototypeKeys.has(token)) w.unsafe = true;
    pointer += '/' + escapeToken(token);
  }
  return pointer;
}

/**
 * Walks `value` (an object) and says what it is: `frozenFlag` when it and everything in it is
 * frozen, plain and without `toJSON` (asked only with `frozen`), `jsonFlag` when it is plain JSON
 * as it stands (no `toJSON`, wrapper, class instance, non-finite number, -0, or key JSON leaves
 * out). Stops once neither can hold. Accessors are read like data: a frozen object's getter is
 * taken to answer the same each time.
 */
function inspect(w: Walk, value: object, frozen: boolean): number {
  if (!isPlain(value) || typeof (value as { toJSON?: unknown }).toJSON === 'function') return 0;
  let flags = jsonFlag;
  if (frozen && Object.isFrozen(value)) {
    if (deepFrozenJson.has(value)) return frozenFlag | jsonFlag;
    flags |= frozenFlag;
  }
  enter(w);
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length && flags !== 0; i++) flags = inspectItem(w, value[i], flags);
  } else {
    // for...in rather than Object.keys: no array per object (a plain object inherits no enumerable key).
    for (const key in value) {
      flags = inspectItem(w, (value as Json)[key], flags);
      if (flags === 0) break;
    }
  }
  w.depth--;
  return flags;
}

function inspectItem(w: Walk, item: unknown, flags: number): number {
  switch (typeof item) {
    case 'string':
    case 'boolean':
      return flags;
    case 'number':
      return Number.isFinite(item) && !(item === 0 && 1 / item < 0) ? flags : flags & ~jsonFlag;
    case 'object':
      return item === null ? flags : flags & inspect(w, item, (flags & frozenFlag) !== 0);
    case 'bigint':
      toJsonValue(item, ''); // throws, unless BigInt.prototype.toJSON exists
      return flags & ~jsonFlag;
    default:
      return flags & ~jsonFlag; // undefined, a function, a symbol: left out or null
  }
}

/** A JSON copy of `value` (a JSON object or array whose contents may be raw values). */
function copyJson(w: Walk, value: object): unknown {
  enter(w);
  let copy: unknown;
  if (Array.isArray(value)) {
    const array: unknown[] = [];
    for (let i = 0; i < value.length; i++) {
      const item = toJsonValue(value[i], i);
      array.push(item === undefined ? null : typeof item === 'object' && item !== null ? copyJson(w, item) : item);
    }
    copy = array;
  } else {
    const object: Json = {};
    for (const key of Object.keys(value)) {
      const item = toJsonValue((value as Json)[key], key);
      if (item !== undefined) setKey(object, key, typeof item === 'object' && item !== null ? copyJson(w, item) : item);
    }
    copy = object;
  }
  w.depth--;
  return copy;
}

/** Our own shallow copy of a deep-frozen base node, its JSON values only, so that it can be updated in place. */
function ownCopy(value: object): object {
  if (Array.isArray(value)) return value.map((item, i) => toJsonValue(item, i) ?? null);
  const object: Json = {};
  for (const key of Object.keys(value)) {
    const item = toJsonValue((value as Json)[key], key);
    if (item !== undefined) setKey(object, key, item);
  }
  return object;
}

/** One level deeper; past `maxDepth`, a state with a cycle fails here as JSON.stringify fails on it. */
function enter(w: Walk): void {
  if (++w.depth > maxDepth && !w.cyclesChecked) {
    JSON.stringify(w.root);
    w.cyclesChecked = true;
  }
}
