import { fromAnthropicToolUses } from '../../../lib/converters/fromAnthropicToolUses.js';

describe('fromAnthropicToolUses', () => {
  it('should turn tool_use, server_tool_use and mcp_tool_use blocks into AG-UI tool calls and skip other blocks', () => {
    expect(
      fromAnthropicToolUses([
        { type: 'thinking', thinking: 'hm', signature: 's' },
        { type: 'text', text: 'Let me check.' },
        { type: 'tool_use', id: 'toolu_1', name: 'weather', input: { city: 'Paris', days: [1, 2] } },
        { type: 'tool_use', id: 'toolu_2', name: 'now', input: {} },
        { type: 'tool_use', id: 'toolu_3', name: 'noop' },
        { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: { query: 'rxjs' } },
        { type: 'mcp_tool_use', id: 'mcptoolu_1', name: 'lookup', input: { q: 1 }, server_name: 'kb' },
        { type: 'web_search_tool_result', tool_use_id: 'srvtoolu_1', content: [] },
      ]),
    ).toEqual([
      { id: 'toolu_1', type: 'function', function: { name: 'weather', arguments: '{"city":"Paris","days":[1,2]}' } },
      { id: 'toolu_2', type: 'function', function: { name: 'now', arguments: '{}' } },
      { id: 'toolu_3', type: 'function', function: { name: 'noop', arguments: '{}' } },
      { id: 'srvtoolu_1', type: 'function', function: { name: 'web_search', arguments: '{"query":"rxjs"}' } },
      { id: 'mcptoolu_1', type: 'function', function: { name: 'lookup', arguments: '{"q":1}' } },
    ]);
  });

  it('should give what its doc example promises', () => {
    const calls = fromAnthropicToolUses([
      { type: 'text', text: 'Let me check.' },
      { type: 'tool_use', id: 'toolu_1', name: 'weather', input: { city: 'Paris' } },
    ]);
    expect(JSON.stringify(calls)).toBe('[{"id":"toolu_1","type":"function","function":{"name":"weather","arguments":"{\\"city\\":\\"Paris\\"}"}}]');
  });
});
