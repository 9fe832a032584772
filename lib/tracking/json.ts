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
 * A tool call's argument text as it streams in, read once, fragment by fragment: what
 * {@link isArgumentsComplete} needs to tell, without parsing, whether the text may already be one
 * whole JSON object or array. Held per open call; each fragment costs its own length, so checking a
 * call at every boundary stays linear in its arguments (a growing text is never re-parsed).
 */
export interface ArgumentsText {
  /** The fragments so far, joined. */
  text: string;
  /** Open `{` and `[` outside strings. */
  depth: number;
  /** Inside a string, and whether the last character there was an unescaped `\`. */
  inString: boolean;
  escaped: boolean;
  /** 'empty': only whitespace so far; 'open': inside the top-level object or array; 'closed': it
   *  closed, whitespace at most after it; 'never': a scalar start, or text after the closed value. */
  shape: 'empty' | 'open' | 'closed' | 'never';
  /** `JSON.parse`'s verdict on the text, once it is 'closed' (whitespace after does not change it). */
  parses: boolean | undefined;
}

/** An empty {@link ArgumentsText}. */
export function createArgumentsText(): ArgumentsText {
  return { text: '', depth: 0, inString: false, escaped: false, shape: 'empty', parses: undefined };
}

/** Appends one fragment to `args`, reading only the fragment's characters. */
export function appendArguments(args: ArgumentsText, fragment: string): void {
  args.text += fragment;
  let { depth, inString, escaped, shape } = args;
  for (let i = 0; i < fragment.length && shape !== 'never'; i++) {
    const code = fragment.charCodeAt(i);
    if (inString) {
      if (escaped) escaped = false;
      else if (code === 0x5c) escaped = true; // \
      else if (code === 0x22) inString = false; // "
      continue;
    }
    if (isJsonWhitespace(code)) continue;
    if (shape === 'closed') {
      shape = 'never';
      break;
    }
    if (shape === 'empty') {
      if (code !== 0x7b && code !== 0x5b) {
        shape = 'never';
        break;
      }
      shape = 'open';
    }
    if (code === 0x22) inString = true;
    else if (code === 0x7b || code === 0x5b) depth++;
    else if (code === 0x7d || code === 0x5d) {
      depth--;
      if (depth === 0) {
        shape = 'closed';
        args.parses = undefined;
      }
    }
  }
  args.depth = depth;
  args.inString = inString;
  args.escaped = escaped;
  args.shape = shape;
}

/**
 * Whether the arguments so far are complete: one JSON object or array that parses (a bare scalar
 * is not, since `4` may be the start of `42`). Parses at most once per closed value.
 */
export function isArgumentsComplete(args: ArgumentsText): boolean {
  if (args.shape !== 'closed') return false;
  return (args.parses ??= isCompleteJson(args.text));
}
