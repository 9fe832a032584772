import { EventType } from '@ag-ui/core';
import type { OperatorFunction } from 'rxjs';
import type { AgentEvent } from '../lib/protocol/agentEvent.js';
import { warnDiagnostic, type DiagnosticHandler } from '../lib/protocol/diagnostics.js';
import { describeValue } from '../lib/protocol/errors.js';
import { createOperator } from '../lib/protocol/createOperator.js';

/** The value of an A2UI operation: it names its surface; the rest is the operation's own payload. */
export interface A2uiOperation {
  /** The surface the operation applies to. */
  surfaceId: string;
  [field: string]: unknown;
}

/** A2UI v1.0 (and v0.9) server-to-client messages: one operation key each, plus an optional `version`. */
export type A2uiV1Message =
  | {
      /** The A2UI protocol version, e.g. `"v1.0"`; optional. */
      version?: string | undefined;
      /** Creates a surface (v1.0). */
      createSurface: A2uiOperation;
    }
  | {
      /** The A2UI protocol version, e.g. `"v1.0"`; optional. */
      version?: string | undefined;
      /** Adds or replaces components of a surface (v1.0). */
      updateComponents: A2uiOperation;
    }
  | {
      /** The A2UI protocol version, e.g. `"v1.0"`; optional. */
      version?: string | undefined;
      /** Changes a surface's data model (v1.0). */
      updateDataModel: A2uiOperation;
    }
  | {
      /** The A2UI protocol version, e.g. `"v1.0"`; optional. */
      version?: string | undefined;
      /** Removes a surface (v1.0); `a2uiSurfaces` then forgets it. */
      deleteSurface: A2uiOperation;
    };

/** A2UI v0.8 server-to-client messages: one operation key each. */
export type A2uiV08Message =
  | {
      /** Adds or replaces components of a surface (v0.8). */
      surfaceUpdate: A2uiOperation;
    }
  | {
      /** Changes a surface's data model (v0.8). */
      dataModelUpdate: A2uiOperation;
    }
  | {
      /** Tells the client to render a surface from its root (v0.8). */
      beginRendering: A2uiOperation;
    }
  | {
      /** Removes a surface (v0.8); `a2uiSurfaces` then forgets it. */
      deleteSurface: A2uiOperation;
    };

/** An A2UI server-to-client message of either version. */
export type A2uiMessage = A2uiV1Message | A2uiV08Message;

/** Options of {@link a2uiSurfaces}. */
export interface A2uiSurfacesOptions {
  /** Told about each message left out because it names no surface. Default: `console.warn`. */
  onDiagnostic?: DiagnosticHandler | undefined;
}

/** The activity type A2UI surfaces travel under. */
export const A2UI_ACTIVITY_TYPE = 'a2ui-surface';

/** The activity message id of surface `surfaceId`. */
export function a2uiSurfaceMessageId(surfaceId: string): string {
  return `a2ui-surface-${surfaceId}`;
}

const operationKeys: ReadonlySet<string> = new Set([
  'createSurface',
  'updateComponents',
  'updateDataModel',
  'deleteSurface',
  'surfaceUpdate',
  'dataModelUpdate',
  'beginRendering',
]);

/**
 * Carries A2UI over AG-UI: each A2UI message becomes an ACTIVITY_SNAPSHOT of its surface holding
 * every message of that surface so far.
 *
 * A client replays the surface's operations in order to render it; pipe into `activityDelta()`
 * to send only the new operations.
 *
 * ```text
 * source:  --c--u--x--d--c--|     c = createSurface, u = updateComponents (surface "s"),
 * output:  --A--B-----C--A--|     x = a message with no surface, d = deleteSurface
 *                                 A = ACTIVITY_SNAPSHOT [c], B = [c, u], C = [c, u, d]
 * ```
 *
 * Rules:
 * 1. A message is an object with exactly one operation key: v1.0 `createSurface`,
 *    `updateComponents`, `updateDataModel`, `deleteSurface`, or v0.8 `surfaceUpdate`,
 *    `dataModelUpdate`, `beginRendering`, `deleteSurface`; its value names the surface in a
 *    non-empty string `surfaceId`.
 * 2. Each message gives an ACTIVITY_SNAPSHOT with `messageId: "a2ui-surface-<surfaceId>"`,
 *    `activityType: "a2ui-surface"`, `content: { a2ui_operations: [...] }` (every message of the
 *    surface so far, in order) and `replace: true`, in the same frame.
 * 3. A surface whose last message is `deleteSurface` is forgotten after its snapshot: a later
 *    message for it starts a new list. Only live surfaces are held in memory.
 * 4. A message that names no surface is left out and reported through `onDiagnostic`.
 *
 * ## Example
 *
 * ```ts
 * of<A2uiMessage[]>(
 *   { createSurface: { surfaceId: 'booking', catalogId: 'standard' } },
 *   { updateComponents: { surfaceId: 'booking', components: [{ id: 'root', component: 'Text', text: 'Hi' }] } },
 * ).pipe(a2uiSurfaces()).subscribe((e) => {
 *   if (e.type === EventType.ACTIVITY_SNAPSHOT) console.log(e.type, e.content.a2ui_operations.length);
 * });
 * // results: ACTIVITY_SNAPSHOT 1, ACTIVITY_SNAPSHOT 2
 * ```
 *
 * @param options Where diagnostics go.
 * @return A function that returns an Observable of ACTIVITY_SNAPSHOT events, one per A2UI message
 * that names a surface.
 */
export function a2uiSurfaces(options: A2uiSurfacesOptions = {}): OperatorFunction<A2uiMessage, AgentEvent> {
  const onDiagnostic = options.onDiagnostic ?? warnDiagnostic;
  return createOperator<A2uiMessage, AgentEvent>((subscriber) => {
    // The messages of each live surface, in order; a deleted surface is removed.
    const surfaces = new Map<string, unknown[]>();
    return {
      next(message) {
        const found = surfaceOf(message);
        if (typeof found !== 'string') {
          onDiagnostic({ message: `A2UI message left out: ${found.why}. Each A2UI message needs exactly one operation key (createSurface, updateComponents, updateDataModel, deleteSurface; v0.8: surfaceUpdate, dataModelUpdate, beginRendering) whose value has a 'surfaceId'.`, event: message });
          return;
        }
        const operations = surfaces.get(found) ?? [];
        operations.push(message);
        if ('deleteSurface' in message) surfaces.delete(found);
        else surfaces.set(found, operations);
        subscriber.next({
          type: EventType.ACTIVITY_SNAPSHOT,
          messageId: a2uiSurfaceMessageId(found),
          activityType: A2UI_ACTIVITY_TYPE,
          content: { a2ui_operations: [...operations] },
          replace: true,
        });
      },
    };
  });
}

/** The surface a message names, or why it names none. */
function surfaceOf(message: unknown): string | { why: string } {
  if (typeof message !== 'object' || message === null || Array.isArray(message)) return { why: `got ${describeValue(message)} instead of a message object` };
  const keys = Object.keys(message).filter((key) => operationKeys.has(key));
  if (keys.length !== 1) return { why: keys.length === 0 ? 'it has no operation key' : `it has ${keys.length} operation keys (${keys.join(', ')})` };
  const surfaceId = ((message as Record<string, unknown>)[keys[0]] as { surfaceId?: unknown } | null)?.surfaceId;
  if (typeof surfaceId !== 'string' || surfaceId === '') return { why: `its '${keys[0]}' has 'surfaceId: ${describeValue(surfaceId)}', not a non-empty string` };
  return surfaceId;
}
