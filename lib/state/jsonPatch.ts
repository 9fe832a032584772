import jsonpatch, { type Operation } from 'fast-json-patch';
import { AguiRxError, describeValue } from '../protocol/errors.js';

const forbiddenSegments = new Set(['__proto__', 'constructor', 'prototype']);
const patchOps = new Set(['add', 'remove', 'replace', 'move', 'copy', 'test']);

/**
 * Checks that `patch` is an RFC 6902 JSON Patch whose paths (and `from`s) are JSON Pointers
 * (RFC 6901) that do not go through `__proto__`, `constructor` or `prototype`.
 *
 * @param what Names the patch in error messages, e.g. `STATE_DELTA`.
 * @throws {AguiRxError} `INVALID_PATCH`, naming the operation and why it is refused.
 */
export function assertSafePatch(patch: unknown, what: string): asserts patch is Operation[] {
  if (!Array.isArray(patch)) {
    throw new AguiRxError('INVALID_PATCH', `${what} has 'delta: ${describeValue(patch)}', but it must be an array of RFC 6902 operations, e.g. [{ op: 'replace', path: '/count', value: 2 }].`);
  }
  patch.forEach((operation: unknown, index) => {
    const op = (operation as { op?: unknown } | null)?.op;
    if (typeof op !== 'string' || !patchOps.has(op)) {
      throw new AguiRxError('INVALID_PATCH', `${what} operation ${index} has op ${describeValue(op)}; RFC 6902 allows add, remove, replace, move, copy and test.`);
    }
    for (const field of op === 'move' || op === 'copy' ? ['path', 'from'] : ['path']) {
      const pointer = (operation as Record<string, unknown>)[field];
      if (typeof pointer !== 'string' || (pointer !== '' && !pointer.startsWith('/'))) {
        throw new AguiRxError('INVALID_PATCH', `${what} operation ${index} (${op}) has '${field}: ${describeValue(pointer)}', which is not a JSON Pointer (RFC 6901): use '' or a string starting with '/'.`);
      }
      const segment = forbiddenSegmentOf(pointer);
      if (segment !== undefined) {
        throw new AguiRxError('INVALID_PATCH', `${what} operation ${index} (${op} ${pointer}) goes through '${segment}', which could change object prototypes; it was refused. Rename that key in your state.`);
      }
    }
  });
}

/** Whether JSON Pointer `pointer` goes through `__proto__`, `constructor` or `prototype` (a patch along it is refused). */
export function isPrototypePointer(pointer: string): boolean {
  return forbiddenSegmentOf(pointer) !== undefined;
}

/** The first segment of `pointer`, as written, that unescapes (RFC 6901) to a forbidden key. */
function forbiddenSegmentOf(pointer: string): string | undefined {
  return pointer.split('/').find((segment) => forbiddenSegments.has(segment.replace(/~1/g, '/').replace(/~0/g, '~')));
}

// fast-json-patch's names for an operation that is malformed, rather than well-formed and not applicable.
const malformedOperation: ReadonlySet<string> = new Set([
  'OPERATION_NOT_AN_OBJECT',
  'OPERATION_OP_INVALID',
  'OPERATION_PATH_INVALID',
  'OPERATION_FROM_REQUIRED',
  'OPERATION_VALUE_REQUIRED',
  'OPERATION_VALUE_CANNOT_CONTAIN_UNDEFINED',
]);

/**
 * Whether fast-json-patch's error `name` says an operation is malformed (a member RFC 6902 requires
 * is missing or wrong), which is fatal, rather than well-formed and not applicable to the document,
 * which AG-UI has a consumer skip with a warning (spec 1.1, Snapshots and Deltas).
 */
export function isMalformedOperation(name: string): boolean {
  return malformedOperation.has(name);
}

/** What {@link applyPatchInOrder} made: the patched document, or why an operation failed. */
export type PatchOutcome = { readonly document: unknown; readonly failure?: undefined } | { readonly failure: string; readonly malformed: boolean };

/**
 * Applies an RFC 6902 patch to a copy of `base`, one operation at a time (fast-json-patch reports
 * index 0 for every validation failure otherwise), leaving `base` as it was: a patch is atomic
 * (RFC 6902 §5), so a failed one changes nothing.
 *
 * @param base The document (state or activity content); never changed.
 * @param patch Operations already checked by {@link assertSafePatch}.
 * @return `{ document }`, or `{ failure, malformed }`: which operation failed and why, and whether
 * it is malformed (fatal; see {@link isMalformedOperation}) rather than not applicable.
 */
export function applyPatchInOrder(base: unknown, patch: readonly Operation[]): PatchOutcome {
  let document = jsonpatch.deepClone(base);
  for (let index = 0; index < patch.length; index++) {
    const operation = patch[index];
    try {
      document = jsonpatch.applyOperation(document, operation, true, true, true, index).newDocument;
    } catch (error) {
      const name = (error as { name?: string }).name ?? 'an error';
      return { failure: `operation ${index} (${operation.op} ${operation.path}) failed with ${name}: ${firstLine((error as Error).message)}`, malformed: isMalformedOperation(name) };
    }
  }
  return { document };
}

/** The first line of an error message: what a diagnostic quotes of a library's error. */
export function firstLine(message: string): string {
  return message.split('\n')[0];
}
