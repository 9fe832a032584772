/**
 * Fields a streaming event carries that AG-UI does not define for it, when it has no `delta`:
 * `{ type: 'TEXT_MESSAGE_CHUNK', text: 'Hi' }` would otherwise stream nothing, without a word.
 */

/** One field AG-UI does not define on an event without `delta`, with the field it likely meant. */
export interface StrayField {
  /** The field as the event names it: `text`. */
  field: string;
  /** The defined field it most likely meant: a near spelling of one (`messageID` → `messageId`), else `delta`. */
  likely: string;
}

/** `name` folded for a near-spelling match: case, `_` and `-` ignored. */
const fold = (name: string) => name.toLowerCase().replace(/[_-]/g, '');

/** Whether `a` and `b` differ by at most one edit (insert, delete, replace, or swap of neighbours). */
function oneEditApart(a: string, b: string): boolean {
  if (Math.abs(a.length - b.length) > 1) return false;
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  const restA = a.slice(i);
  const restB = b.slice(i);
  return (
    restA.slice(1) === restB.slice(1) ||
    restA.slice(1) === restB ||
    restA === restB.slice(1) ||
    (restA.length > 1 && restA[0] === restB[1] && restA[1] === restB[0] && restA.slice(2) === restB.slice(2))
  );
}

/**
 * The fields of `event` that are not in `known` (the fields AG-UI defines for its type), each with
 * the field it likely meant: a known field of a near spelling (same letters but for case, `_`, `-`,
 * or one typo away), else `delta`, the field the event streams and lacks. Pure; call it only for
 * an event without `delta` (the caller's slow path), never once per token.
 *
 * @param event A streaming event (a chunk or a content event) with no `delta`, read as camelCase.
 * @param known The field names AG-UI defines for its type.
 * @return The stray fields in the event's key order; empty when there are none.
 */
export function strayFieldsOf(event: Record<string, unknown>, known: ReadonlySet<string>): StrayField[] {
  const stray: StrayField[] = [];
  for (const field of Object.keys(event)) {
    if (known.has(field)) continue;
    const folded = fold(field);
    let likely = 'delta';
    for (const candidate of known) {
      if (candidate === 'type' || event[candidate] !== undefined) continue;
      if (fold(candidate) === folded || oneEditApart(fold(candidate), folded)) {
        likely = candidate;
        break;
      }
    }
    stray.push({ field, likely });
  }
  return stray;
}
