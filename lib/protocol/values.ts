/** Whether `value` is a plain record, as JSON objects are: not `null`, not an array. */
export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const hasOwn = Object.prototype.hasOwnProperty;

/**
 * `{ ...source, ...fields }`: `source`'s own enumerable string-keyed fields, then `fields`' (which
 * win), in that order (symbol keys, which no JSON event has, are not copied), on a new plain object
 * whose hidden class V8 shares between calls. Use it where a spread would add a field `source`
 * lacks: V8 11 (Node 20) gives an object made by a leading spread and then given a new field a hidden
 * class of its own on every call (`{ ...event, outcome }` for an event without `outcome`), so each
 * event made so costs a hidden class and its descriptors, and every inline cache that reads them goes
 * megamorphic and misses. A field that replaces one `source` has (`{ ...event,
 * delta }`) costs nothing of the kind: a plain spread is fine there, and faster.
 *
 * @param source The object copied first (`undefined` copies nothing, as a spread does).
 * @param fields The fields set after it.
 * @return A new object; neither argument is changed. An own `__proto__` field is copied as a
 * field, as a spread copies it, never set as the prototype.
 */
export function copyWith<T extends object, const F extends object>(source: T | undefined, fields: F): T & F {
  const copy: Record<string, unknown> = {};
  if (source !== undefined) copyFields(copy, source);
  copyFields(copy, fields);
  return copy as T & F;
}

/**
 * `source` without the fields named in `omitted`: its other own enumerable fields, in order, on a
 * new plain object whose hidden class V8 shares between calls (a `delete` on a copy would turn it
 * into a dictionary of its own; see {@link copyWith}).
 */
export function copyWithout<T extends object>(source: T, omitted: readonly string[]): Partial<T> {
  const copy: Record<string, unknown> = {};
  copyFields(copy, source, omitted);
  return copy as Partial<T>;
}

// Sets `source`'s own enumerable fields on `target`, in order, but the `omitted` ones.
function copyFields(target: Record<string, unknown>, source: object, omitted?: readonly string[]): void {
  for (const key in source) {
    if (!hasOwn.call(source, key) || omitted?.includes(key) === true) continue;
    const value = (source as Record<string, unknown>)[key];
    // An assignment to `__proto__` would set the prototype: defined as a spread defines it.
    if (key === '__proto__') Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
    else target[key] = value;
  }
}

/** A high surrogate not followed by a low one, or a low one not after a high one: half a pair. */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/**
 * Whether `text` holds half of a UTF-16 surrogate pair, which JSON can escape but UTF-8 cannot
 * carry (an encoder writes U+FFFD for it; `encodeURIComponent` throws).
 */
export function hasLoneSurrogate(text: string): boolean {
  return LONE_SURROGATE.test(text);
}

/**
 * The longest delay `setTimeout` takes, in ms (a signed 32-bit count, about 24.8 days): Node fires
 * a longer one after 1 ms, so a limit beyond it must be Infinity or refused.
 */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** The names among `methods` that `value` has no function for: all of them when it is no object. */
export function missingMethods(value: unknown, methods: readonly string[]): string[] {
  return methods.filter((method) => typeof (value as Record<string, unknown> | null | undefined)?.[method] !== 'function');
}
