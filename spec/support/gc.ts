import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/**
 * A full garbage collection: `global.gc` when node runs with --expose-gc, else V8's own, exposed at
 * runtime (`v8.setFlagsFromString` + `vm`: Jest passes no --expose-gc); `undefined` if refused.
 */
export function fullGc(): (() => void) | undefined {
  const exposed = (globalThis as { gc?: () => void }).gc;
  if (exposed) return exposed;
  try {
    setFlagsFromString('--expose-gc');
    return runInNewContext('gc') as () => void;
  } catch {
    return undefined;
  }
}

/**
 * Whether `ref`'s object was collected after two full GCs, each in a turn of its own: a WeakRef
 * keeps its target until the job that made or read it ends. Throws when no full GC is at hand.
 */
export async function isCollected(ref: WeakRef<object>): Promise<boolean> {
  const gc = fullGc();
  if (gc === undefined) throw new Error('No full GC at hand: run node with --expose-gc.');
  for (let turn = 0; turn < 2; turn++) {
    await new Promise((resolve) => setImmediate(resolve));
    gc();
  }
  await new Promise((resolve) => setImmediate(resolve));
  return ref.deref() === undefined;
}
