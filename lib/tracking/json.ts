/**
 * Whether `text` is one complete JSON value (a tool call's arguments so far, say).
 *
 * Tool call arguments are checked on every named chunk while they stream in: a text that cannot
 * end a JSON value is refused without the cost of a failed parse.
 */
export function isCompleteJson(text: string): boolean {
  if (!mayEndJsonValue(text)) return false;
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** Whether `text`, once trimmed, begins and ends as one JSON value could (`{`…`}`, `[`…`]`, or a scalar). */
function mayEndJsonValue(text: string): boolean {
  let start = 0;
  let end = text.length - 1;
  while (start <= end && isJsonWhitespace(text.charCodeAt(start))) start++;
  while (end > start && isJsonWhitespace(text.charCodeAt(end))) end--;
  if (start > end) return false;
  const first = text.charCodeAt(start);
  const last = text.charCodeAt(end);
  if (first === 0x7b) return last === 0x7d; // { … }
  if (first === 0x5b) return last === 0x5d; // [ … ]
  return true;
}

function isJsonWhitespace(code: number): boolean {
  return code === 0x20 || code === 0x0a || code === 0x0d || code === 0x09;
}

/**
 * Whether a tool call's arguments so far are complete: one JSON object or array that parses. A
 * bare scalar is not, since `4` may be the start of `42`: a call's arguments are an object.
 */
export function areArgumentsComplete(text: string): boolean {
  let start = 0;
  while (start < text.length && isJsonWhitespace(text.charCodeAt(start))) start++;
  const first = text.charCodeAt(start);
  return (first === 0x7b || first === 0x5b) && isCompleteJson(text);
}
