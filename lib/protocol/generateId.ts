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

/** How many ids {@link mintUnused} draws at most for one name, each one the run or its history already uses. */
export const MAX_DRAWS = 10_000;

/**
 * An id from `mint` (an operator's `generateId`) that no entity of the run uses yet (`taken` says
 * which are): the way every operator names what the producer left unnamed. A repeated id would
 * put a second START under one id on the wire, which the client refuses, or merge two entities.
 * An id `taken` holds is passed over and another drawn: a counter whose ids the producer or the
 * conversation history also uses (`id-1`, `id-2`, …) goes on to the next free one.
 *
 * @throws {AguiRxError} `INVALID_OPTIONS` when `mint` returns anything but a non-empty string,
 * returns again an id it returned for this name (a constant, a clock reading), or returns
 * {@link MAX_DRAWS} taken ids in a row (the run ends with RUN_ERROR saying so).
 */
export function mintUnused(mint: IdGenerator, taken: (id: string) => boolean): string {
  const id = draw(mint);
  if (!taken(id)) return id;
  // Made only when the first id was taken: a generator that repeats itself is told from a counter passing the run's ids.
  const drawn = new Set<string>([id]);
  let next = id;
  while (drawn.size < MAX_DRAWS) {
    next = draw(mint);
    if (!taken(next)) return next;
    if (drawn.has(next)) {
      throw new AguiRxError(
        'INVALID_OPTIONS',
        `generateId returned '${next.slice(0, 80)}' again, an id this run or its conversation history already uses. It must return a new id at every call: a random one (the default, nanoid) or a counter, not a constant or a clock reading.`,
      );
    }
    drawn.add(next);
  }
  throw new AguiRxError(
    'INVALID_OPTIONS',
    `generateId returned ${MAX_DRAWS} ids in a row that this run or its conversation history already uses (the last '${next.slice(0, 80)}'). Make its ids unlike the producer's and the history's: a random one (the default, nanoid), or a counter with a prefix of its own.`,
  );
}

// One id from `mint`, checked to be one.
function draw(mint: IdGenerator): string {
  const id: unknown = mint();
  if (typeof id !== 'string' || id === '') {
    throw new AguiRxError('INVALID_OPTIONS', `generateId returned ${describeValue(id)}, not an id: it must return a non-empty string, a new one at every call (the default, nanoid, does).`);
  }
  return id;
}
