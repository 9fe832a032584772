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
export const generateId: IdGenerator = () => nanoid();
