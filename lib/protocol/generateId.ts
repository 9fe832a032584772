import { nanoid } from 'nanoid';

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
