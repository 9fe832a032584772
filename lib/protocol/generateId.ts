import { nanoid } from 'nanoid';
import { AguiRxError, describeValue } from './errors.js';

/**
 * Makes a fresh id for a message, reasoning message or tool call the producer left unnamed.
 * Operators take one as their `generateId` option so that specs can be deterministic.
 */
export type IdGenerator = () => string;

/**
 * The default {@link IdGenerator}: a 21-character URL-safe nanoid (126 random bits),
 * unique enough that ids never collide across runs of a thread.
 */
export const generateId: IdGenerator = () => {
  const id = nanoid();
  // nanoid appends 21 characters one by one, which V8 keeps as a tree of 20 string pieces (about
  // 330 bytes); reading a character flattens it in place to one 21-character string (about 50
  // bytes). Ids live as long as the logs and trackers that hold them.
  id.charCodeAt(0);
  return id;
};

/**
 * An id from `mint` (an operator's `generateId`) that no entity of the run uses yet (`taken` says
 * which are): the way every operator names what the producer left unnamed. A repeated id would
 * put a second START under one id on the wire, which the client refuses, or merge two entities.
 *
 * @throws {AguiRxError} `INVALID_OPTIONS` when `mint` returns an id `taken` holds, or anything
 * but a non-empty string (the run ends with RUN_ERROR saying so).
 */
export function mintUnused(mint: IdGenerator, taken: (id: string) => boolean): string {
  const id: unknown = mint();
  if (typeof id !== 'string' || id === '') {
    throw new AguiRxError('INVALID_OPTIONS', `generateId returned ${describeValue(id)}, not an id: it must return a non-empty string, a new one at every call (the default, nanoid, does).`);
  }
  if (taken(id)) {
    throw new AguiRxError(
      'INVALID_OPTIONS',
      `generateId returned '${id.slice(0, 80)}', an id this run already uses. It must return a new id at every call: a random one (the default, nanoid) or a counter, not a constant or a clock reading.`,
    );
  }
  return id;
}
