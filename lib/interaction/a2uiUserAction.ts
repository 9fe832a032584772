import type { RunAgentInput } from '@ag-ui/core';
import { isObject } from '../protocol/values.js';

/**
 * What the user did on a surface, as A2UI reports it: the action's `name`, the `surfaceId`, and
 * where known the `sourceComponentId`, an ISO 8601 `timestamp` and the resolved `context` values.
 */
export interface A2uiUserActionPayload {
  /** The action's name, as the surface's component declared it. */
  name: string;
  /** The surface the action happened on. */
  surfaceId: string;
  /** The id of the component that raised the action (a button, say). */
  sourceComponentId?: string | undefined;
  /** When the user acted: an ISO 8601 date-time string, as A2UI sends it. */
  timestamp?: string | undefined;
  /** The values the action carries, resolved from the surface's data model. */
  context?: Record<string, unknown> | undefined;
  [field: string]: unknown;
}

/** A2UI v1.0 (as v0.9) client-to-server action message: a `version` and the `action`. */
export interface A2uiV1ActionMessage {
  /** The A2UI protocol version of the message: `"v1.0"`. */
  version: 'v1.0';
  /** The user's action (A2UI v1.0 client-to-server `action`). */
  action: A2uiUserActionPayload;
}

/** A2UI v0.8 client-to-server action message. */
export interface A2uiV08ActionMessage {
  /** The user's action (A2UI v0.8 client-to-server `userAction`). */
  userAction: A2uiUserActionPayload;
}

/**
 * Reads the A2UI user action a front end forwarded with the run (`forwardedProps.a2uiAction.userAction`,
 * as CopilotKit sends it) and returns it as the A2UI client-to-server message of `version`, ready to
 * hand to an A2UI agent.
 *
 * - v1.0: `{ version: 'v1.0', action: { name, surfaceId, sourceComponentId?, timestamp?, context? } }`
 *   (the v0.9 envelope: a `version` and one message key, `action`);
 * - v0.8: `{ userAction: { name, surfaceId, sourceComponentId?, timestamp?, context? } }`.
 *
 * The payload's fields are copied as forwarded (a JSON copy: the input is never shared).
 *
 * @param input The run's input.
 * @param version The A2UI version the agent speaks. Default `'v1.0'`.
 * @return The action message, or `undefined` when the input carries no user action, or one that
 * is not an object with a string `name` and `surfaceId` (and, when present, an object `context`).
 */
export function a2uiUserAction(input: RunAgentInput, version?: 'v1.0'): A2uiV1ActionMessage | undefined;
export function a2uiUserAction(input: RunAgentInput, version: 'v0.8'): A2uiV08ActionMessage | undefined;
export function a2uiUserAction(input: RunAgentInput, version: 'v0.8' | 'v1.0'): A2uiV1ActionMessage | A2uiV08ActionMessage | undefined;
export function a2uiUserAction(input: RunAgentInput, version: 'v0.8' | 'v1.0' = 'v1.0'): A2uiV1ActionMessage | A2uiV08ActionMessage | undefined {
  const forwarded = (input as { forwardedProps?: unknown } | null | undefined)?.forwardedProps;
  const action = fieldOf(fieldOf(forwarded, 'a2uiAction'), 'userAction');
  if (!isObject(action) || typeof action.name !== 'string' || typeof action.surfaceId !== 'string') return undefined;
  if (action.context !== undefined && !isObject(action.context)) return undefined;
  let payload: A2uiUserActionPayload;
  try {
    payload = JSON.parse(JSON.stringify(action));
  } catch {
    return undefined;
  }
  return version === 'v0.8' ? { userAction: payload } : { version: 'v1.0', action: payload };
}

function fieldOf(value: unknown, field: string): unknown {
  return isObject(value) ? value[field] : undefined;
}
