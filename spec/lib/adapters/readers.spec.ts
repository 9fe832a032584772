import { EventType } from '@ag-ui/core';
import { ToolkitEventType } from '../../../lib/protocol/agentEvent.js';
import { AguiRxError } from '../../../lib/protocol/errors.js';
import {
  createDropReporter,
  errorMessage,
  fieldPath,
  fieldReaders,
  isIndex,
  isObject,
  nonEmpty,
  providerError,
  rawEvent,
  tokenUsageEvent,
  toolCallStart,
  usageReport,
} from '../../../lib/adapters/readers.js';

const read = fieldReaders({ adapter: 'fromTest', malformed: 'a malformed test event', unit: 'event' });
const strict = fieldReaders({ adapter: 'fromStrict', malformed: 'a malformed part', unit: 'part', nullIsAbsent: false });
const invalid = (detail: string) => new AguiRxError('INVALID_EVENT', `fromTest received a malformed test event: ${detail}`);
const thrown = (read: () => unknown) => {
  try {
    read();
  } catch (error) {
    return error;
  }
  throw new Error('expected the reader to throw');
};

describe('readers', () => {
  describe('value checks', () => {
    it('should tell a record from null, an array and a primitive', () => {
      expect([{}, { a: 1 }, null, [], 'x', 1, undefined].map(isObject)).toEqual([true, true, false, false, false, false, false]);
    });

    it('should keep only non-empty strings', () => {
      expect(['a', '', 1, null, undefined].map(nonEmpty)).toEqual(['a', undefined, undefined, undefined, undefined]);
    });

    it('should take only non-negative safe integers as positions', () => {
      expect([0, 3, -1, 1.5, Number.MAX_SAFE_INTEGER + 1, '0', NaN, null].map(isIndex)).toEqual([true, true, false, false, false, false, false, false]);
    });

    it("should name a field's path, the input's own fields without a leading dot", () => {
      expect([fieldPath('', 'id'), fieldPath('choices[0].delta', 'content')]).toEqual(['id', 'choices[0].delta.content']);
    });
  });

  describe('fieldReaders', () => {
    it("should build the adapter's INVALID_EVENT error", () => {
      expect(read.invalid('it is odd.')).toEqual(invalid('it is odd.'));
      expect(read.invalid('x').code).toBe('INVALID_EVENT');
    });

    it('should read an optional string, null being absent, and name the path of a wrong one', () => {
      expect([read.string({ a: 'x' }, 'a', 'e'), read.string({ a: '' }, 'a', 'e'), read.string({}, 'a', 'e'), read.string({ a: null }, 'a', 'e')]).toEqual(['x', '', undefined, undefined]);
      expect(thrown(() => read.string({ content: 42 }, 'content', 'choices[0].delta'))).toEqual(invalid('choices[0].delta.content is number 42, but it must be a string.'));
      expect(thrown(() => read.string({ id: {} }, 'id', ''))).toEqual(invalid('id is an object, but it must be a string.'));
    });

    it('should refuse null where null is not absent', () => {
      expect(strict.string({}, 'delta', 'text-delta')).toBeUndefined();
      expect(thrown(() => strict.string({ delta: null }, 'delta', 'text-delta'))).toEqual(
        new AguiRxError('INVALID_EVENT', 'fromStrict received a malformed part: text-delta.delta is null, but it must be a string.'),
      );
    });

    it('should require a string (empty allowed) or a name (empty refused), with one wording for a missing field', () => {
      expect(read.requiredString({ text: '' }, 'text', 'done')).toBe('');
      expect(thrown(() => read.requiredString({}, 'text', 'done'))).toEqual(invalid("done has no 'text'. Each done event must carry one."));
      expect(read.requiredName({ toolName: 'search' }, 'toolName', 'tool-call')).toBe('search');
      expect(thrown(() => read.requiredName({ toolName: '' }, 'toolName', 'tool-call'))).toEqual(invalid("tool-call has no 'toolName'. Each tool-call event must carry one."));
      expect(thrown(() => read.requiredName({ toolName: 3 }, 'toolName', 'tool-call'))).toEqual(invalid('tool-call.toolName is number 3, but it must be a string.'));
    });

    it('should read a record, saying what one looks like when given an example', () => {
      const record = { a: 1 };
      expect(read.object(record, 'e.item')).toBe(record);
      expect(thrown(() => read.object('x', 'e.item'))).toEqual(invalid('e.item is "x", but it must be an object.'));
      expect(thrown(() => read.object([], 'choices[0]', "{ index: 0 }"))).toEqual(invalid('choices[0] is an array of 0, but it must be an object such as { index: 0 }.'));
    });

    it('should read an optional array, absent and null being empty', () => {
      const list = [1];
      expect([read.list({ a: list }, 'a', 'e'), read.list({}, 'a', 'e'), read.list({ a: null }, 'a', 'e')]).toEqual([list, [], []]);
      expect(thrown(() => read.list({ a: {} }, 'a', 'e'))).toEqual(invalid('e.a is an object, but it must be an array.'));
      expect(thrown(() => read.list({ tool_calls: 'x' }, 'tool_calls', 'd', 'an array of tool call pieces'))).toEqual(invalid('d.tool_calls is "x", but it must be an array of tool call pieces.'));
    });

    it('should read a required position, saying what it counts', () => {
      expect(read.index({ output_index: 2 }, 'output_index', 'e')).toBe(2);
      expect(thrown(() => read.index({}, 'index', 'content_block_stop'))).toEqual(invalid('content_block_stop.index is undefined, but it must be a non-negative integer.'));
      expect(thrown(() => read.index({ index: -1 }, 'index', 'stop', 'the position'))).toEqual(invalid('stop.index is number -1, but it must be a non-negative integer: the position.'));
    });

    it("should read a tool call piece's index: any integer, absent and null being none", () => {
      expect([read.toolCallIndex(-1, 'p'), read.toolCallIndex(7, 'p'), read.toolCallIndex(undefined, 'p'), read.toolCallIndex(null, 'p')]).toEqual([-1, 7, undefined, undefined]);
      expect(thrown(() => read.toolCallIndex(1.5, 'tool_calls[0]'))).toEqual(invalid("tool_calls[0].index is number 1.5, but a tool call's index must be an integer."));
    });

    it('should read a token count, absent and null being unreported', () => {
      expect([read.count(0, 'u'), read.count(12, 'u'), read.count(undefined, 'u'), read.count(null, 'u')]).toEqual([0, 12, undefined, undefined]);
      for (const [value, described] of [[-1, 'number -1'], [1.5, 'number 1.5'], ['3', '"3"']] as const) {
        expect(thrown(() => read.count(value, 'usage.prompt_tokens'))).toEqual(invalid(`usage.prompt_tokens is ${described}, but token counts must be non-negative integers.`));
      }
    });
  });

  describe('usageReport', () => {
    it('should list the reported counts in one order, then the model', () => {
      const report = usageReport({ cacheWriteInputTokens: 1, outputTokens: 2, inputTokens: 3, totalTokens: undefined }, 'gpt-x');
      expect(JSON.stringify(report)).toBe('{"inputTokens":3,"outputTokens":2,"cacheWriteInputTokens":1,"model":"gpt-x"}');
    });

    it('should report nothing without a count, and leave out a model that is not a non-empty string', () => {
      expect(usageReport({ inputTokens: undefined }, 'gpt-x')).toBeUndefined();
      expect(usageReport({ inputTokens: 1 }, '')).toEqual({ inputTokens: 1 });
      expect(usageReport({ inputTokens: 1 }, 7)).toEqual({ inputTokens: 1 });
    });
  });

  describe('events', () => {
    it('should build TOKEN_USAGE and RAW events', () => {
      expect(tokenUsageEvent({ inputTokens: 1 })).toEqual({ type: ToolkitEventType.TOKEN_USAGE, usage: { inputTokens: 1 } });
      expect(rawEvent({ id: 'c1' }, 'openai-chat')).toEqual({ type: EventType.RAW, event: { id: 'c1' }, source: 'openai-chat' });
    });

    it("should build a call's first TOOL_CALL_CHUNK, with its arguments only when there are some", () => {
      expect(toolCallStart('c1', 'search', 'm1')).toStrictEqual({ type: EventType.TOOL_CALL_CHUNK, toolCallId: 'c1', toolCallName: 'search', parentMessageId: 'm1' });
      expect(toolCallStart('c1', 'search', 'm1', '')).toStrictEqual({ type: EventType.TOOL_CALL_CHUNK, toolCallId: 'c1', toolCallName: 'search', parentMessageId: 'm1' });
      expect(toolCallStart('c1', 'search', 'm1', '{"q"')).toStrictEqual({ type: EventType.TOOL_CALL_CHUNK, toolCallId: 'c1', toolCallName: 'search', parentMessageId: 'm1', delta: '{"q"' });
    });
  });

  describe('errorMessage', () => {
    it("should give the message of a string, an Error or an object with one", () => {
      expect([errorMessage('boom', 'none'), errorMessage(new Error('bad'), 'none'), errorMessage({ message: 'odd' }, 'none')]).toEqual(['boom', 'bad', 'odd']);
    });

    it('should say anything else as JSON, and fall back when there is nothing to say', () => {
      expect([errorMessage({ type: 'overloaded_error' }, 'none'), errorMessage(42, 'none')]).toEqual(['{"type":"overloaded_error"}', '42']);
      expect([errorMessage(undefined, 'none'), errorMessage(null, 'none'), errorMessage('', 'none'), errorMessage(new Error(''), 'none')]).toEqual(['none', 'none', 'none', '{}']);
    });

    it('should describe what cannot be serialised rather than throw', () => {
      const circular: Record<string, unknown> = {};
      circular.self = circular;
      expect(errorMessage(circular, 'none')).toBe('an object');
    });
  });

  describe('createDropReporter', () => {
    it('should tell onDiagnostic of the first drop of each key only, and a new reporter afresh', () => {
      const told: unknown[] = [];
      const report = createDropReporter((diagnostic) => void told.push(diagnostic));
      report('image', 'first image', { n: 1 });
      report('image', 'second image', { n: 2 });
      report('audio', 'first audio');
      expect(told).toEqual([
        { message: 'first image', event: { n: 1 } },
        { message: 'first audio', event: undefined },
      ]);
      createDropReporter((diagnostic) => void told.push(diagnostic))('image', 'image again');
      expect(told).toHaveLength(3);
    });
  });

  describe('providerError', () => {
    const advice = "Retry the request; if it keeps failing, check the request and the provider's status.";

    it("should say what failed in the provider's words, with its type and code", () => {
      const error = providerError('The model provider failed mid-stream', { message: 'bad', type: 'server_error', code: 503 });
      expect([error.code, error.message]).toEqual(['PROVIDER_ERROR', `The model provider failed mid-stream: bad (server_error, 503). ${advice}`]);
    });

    it("should leave out an empty type or code and the type 'error', and say when there is no message", () => {
      expect(providerError('It failed', { type: 'error', code: '' }).message).toBe(`It failed: no message given. ${advice}`);
      expect(providerError('It failed', { message: '', code: 'x' }, 'Try later.').message).toBe('It failed: no message given (x). Try later.');
    });
  });
});
