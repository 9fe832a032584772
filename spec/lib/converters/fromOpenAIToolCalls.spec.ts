import { fromOpenAIToolCalls } from '../../../lib/converters/fromOpenAIToolCalls.js';

describe('fromOpenAIToolCalls', () => {
  it('should turn Chat Completions tool_calls into AG-UI tool calls, arguments kept as JSON text', () => {
    expect(
      fromOpenAIToolCalls([
        { id: 'call_1', type: 'function', function: { name: 'weather', arguments: '{"city":"Paris"}' } },
        { id: 'call_2', function: { name: 'now', arguments: null } },
      ]),
    ).toEqual([
      { id: 'call_1', type: 'function', function: { name: 'weather', arguments: '{"city":"Paris"}' } },
      { id: 'call_2', type: 'function', function: { name: 'now', arguments: '' } },
    ]);
  });

  it('should turn Responses function_call items into AG-UI tool calls named by call_id, not the item id', () => {
    expect(fromOpenAIToolCalls([{ type: 'function_call', id: 'fc_1', call_id: 'call_9', name: 'weather', arguments: '{"city":"Oslo"}' }])).toEqual([
      { id: 'call_9', type: 'function', function: { name: 'weather', arguments: '{"city":"Oslo"}' } },
    ]);
  });

  it('should give what its doc example promises', () => {
    const calls = fromOpenAIToolCalls([
      { id: 'c1', type: 'function', function: { name: 'weather', arguments: '{"city":"Paris"}' } },
      { type: 'function_call', id: 'fc_1', call_id: 'c2', name: 'now', arguments: '{}' },
    ]);
    expect(JSON.stringify(calls)).toBe(
      '[{"id":"c1","type":"function","function":{"name":"weather","arguments":"{\\"city\\":\\"Paris\\"}"}},{"id":"c2","type":"function","function":{"name":"now","arguments":"{}"}}]',
    );
  });
});
