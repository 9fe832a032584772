import { toAnthropicTools } from '../../../lib/converters/toAnthropicTools.js';

const schema = { type: 'object', properties: { city: { type: 'string' } } };

describe('toAnthropicTools', () => {
  it('should turn each tool into { name, description, input_schema }, with the default schema when it has none', () => {
    expect(
      toAnthropicTools([
        { name: 'weather', description: 'The weather', parameters: schema, metadata: { ui: 'card' } },
        { name: 'now', description: 'The time' },
      ]),
    ).toEqual([
      { name: 'weather', description: 'The weather', input_schema: schema },
      { name: 'now', description: 'The time', input_schema: { type: 'object', properties: {} } },
    ]);
  });

  it('should give what its doc example promises', () => {
    expect(JSON.stringify(toAnthropicTools([{ name: 'now', description: 'The time' }]))).toBe('[{"name":"now","description":"The time","input_schema":{"type":"object","properties":{}}}]');
  });
});
