import { EventType } from '@ag-ui/core';
import type { assertWireEvent as AssertWireEvent } from '../../../lib/protocol/validate.js';

// agui-rx allows zod "^3.25.76 || ^4.0.0" (@ag-ui/core's schemas load `zod/v4` from it): each
// major must give the same promise. The dev tree has zod 3 as `zod` and zod 4 as the alias `zod4`.
const majors = [
  ['3', 'zod'],
  ['4', 'zod4'],
] as const;

/** What agui-rx promises for an event the schema rejects: the event, the field, zod's reason (any wording), what to do. */
function promised(type: string, path: string, nullHint = false): RegExp {
  const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const hint = nullHint ? ' (omit optional fields rather than sending null)' : '';
  return new RegExp(`^${escape(`${type} is not a valid AG-UI event: '${path}': `)}\\S.*${escape(`. Fix the field in the event your agent emits${hint}.`)}$`, 's');
}

describe.each(majors)('event validation with zod %s', (major, zodPackage) => {
  let assertWireEvent: typeof AssertWireEvent;
  let zodVersion: string;
  beforeAll(() => {
    jest.isolateModules(() => {
      jest.doMock('zod/v4', () => jest.requireActual(`${zodPackage}/v4`));
      jest.doMock('zod', () => jest.requireActual(zodPackage));
      zodVersion = jest.requireActual(`${zodPackage}/package.json`).version;
      // The schemas' own import resolves to this major.
      expect(require('zod/v4')).toBe(jest.requireActual(`${zodPackage}/v4`));
      assertWireEvent = require('../../../lib/protocol/validate').assertWireEvent;
    });
  });
  afterAll(() => {
    jest.dontMock('zod/v4');
    jest.dontMock('zod');
  });

  const rejectionOf = (event: unknown) => {
    try {
      assertWireEvent(event as Record<string, unknown>);
    } catch (error) {
      return error as Error & { code?: string };
    }
    throw new Error('the event was accepted');
  };

  it(`should run on zod ${major}`, () => {
    expect(zodVersion.split('.')[0]).toBe(major);
  });

  it.each([
    ['a missing required field', { type: EventType.TEXT_MESSAGE_START, role: 'assistant' }, 'TEXT_MESSAGE_START', 'messageId', false],
    ['a field of the wrong type', { type: EventType.STEP_STARTED, stepName: 5 }, 'STEP_STARTED', 'stepName', false],
    ['null in an optional field', { type: EventType.STEP_STARTED, stepName: 'plan', subagentRunId: null }, 'STEP_STARTED', 'subagentRunId', true],
    ['a nested field', { type: EventType.RUN_FINISHED, threadId: 't1', runId: 'r1', usage: [{ inputTokens: 1.5 }] }, 'RUN_FINISHED', 'usage.0.inputTokens', false],
    ['a value outside an enum', { type: EventType.TEXT_MESSAGE_START, messageId: 'm1', role: 'tool' }, 'TEXT_MESSAGE_START', 'role', false],
    ['an unknown type', { type: 'TEXT_DELTA', delta: 'Hi' }, 'TEXT_DELTA', 'type', false],
  ])('should reject %s with INVALID_EVENT naming the event and field', (_case, event, type, path, nullHint) => {
    const error = rejectionOf(event);
    expect(error.code).toBe('INVALID_EVENT');
    expect(error.message).toMatch(promised(type, path, nullHint));
  });
});
