/** Whether `value` is a plain record, as JSON objects are: not `null`, not an array. */
export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
