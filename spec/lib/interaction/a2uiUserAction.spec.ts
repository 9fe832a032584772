import type { RunAgentInput } from '@ag-ui/core';
import { a2uiUserAction } from '../../../lib/interaction/a2uiUserAction.js';

const inputWith = (forwardedProps: unknown): RunAgentInput =>
  ({ threadId: 'thread-1', runId: 'run-1', state: {}, messages: [], tools: [], context: [], forwardedProps }) as RunAgentInput;

const userAction = {
  name: 'book_table',
  surfaceId: 'booking',
  sourceComponentId: 'submit-btn',
  timestamp: '2025-01-01T12:00:00Z',
  context: { guests: 2, time: '19:00' },
};

describe('a2uiUserAction', () => {
  it('should read the forwarded user action back as a v1.0 action message by default', () => {
    expect(a2uiUserAction(inputWith({ a2uiAction: { userAction } }))).toEqual({ version: 'v1.0', action: userAction });
    expect(a2uiUserAction(inputWith({ a2uiAction: { userAction } }), 'v1.0')).toEqual({ version: 'v1.0', action: userAction });
  });

  it('should read it back as a v0.8 userAction message', () => {
    expect(a2uiUserAction(inputWith({ a2uiAction: { userAction } }), 'v0.8')).toEqual({ userAction });
  });

  it('should keep only the required fields when the others are absent', () => {
    expect(a2uiUserAction(inputWith({ a2uiAction: { userAction: { name: 'ok', surfaceId: 's' } } }))).toEqual({ version: 'v1.0', action: { name: 'ok', surfaceId: 's' } });
  });

  it('should return a copy that does not share the input', () => {
    const input = inputWith({ a2uiAction: { userAction } });
    const message = a2uiUserAction(input)!;
    message.action.context!.guests = 9;

    expect(userAction.context.guests).toBe(2);
  });

  it.each([
    ['no forwardedProps', undefined],
    ['forwardedProps without a2uiAction', { other: true }],
    ['a2uiAction without userAction', { a2uiAction: {} }],
    ['a null userAction', { a2uiAction: { userAction: null } }],
    ['a string userAction', { a2uiAction: { userAction: 'book_table' } }],
    ['an array userAction', { a2uiAction: { userAction: [userAction] } }],
    ['a userAction without a name', { a2uiAction: { userAction: { surfaceId: 's' } } }],
    ['a userAction without a surfaceId', { a2uiAction: { userAction: { name: 'ok' } } }],
    ['a numeric surfaceId', { a2uiAction: { userAction: { name: 'ok', surfaceId: 1 } } }],
    ['a non-object context', { a2uiAction: { userAction: { name: 'ok', surfaceId: 's', context: 'x' } } }],
    ['a string a2uiAction', { a2uiAction: 'userAction' }],
  ])('should return undefined for %s', (_, forwardedProps) => {
    expect(a2uiUserAction(inputWith(forwardedProps))).toBeUndefined();
    expect(a2uiUserAction(inputWith(forwardedProps), 'v0.8')).toBeUndefined();
  });

  it('should return undefined for a missing input', () => {
    expect(a2uiUserAction(undefined as unknown as RunAgentInput)).toBeUndefined();
  });
});
