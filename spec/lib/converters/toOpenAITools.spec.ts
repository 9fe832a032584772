import { toOpenAITools } from '../../../lib/converters/toOpenAITools.js';

const schema = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] };

describe('toOpenAITools', () => {
  it('should turn each tool into a function tool, with the default schema when it has none and without metadata', () => {
    expect(
      toOpenAITools([
        { name: 'weather', description: 'The weather', parameters: schema, metadata: { ui: 'card' } },
        { name: 'now', description: 'The time' },
      ]),
    ).toEqual([
      { type: 'function', function: { name: 'weather', description: 'The weather', parameters: schema } },
      { type: 'function', function: { name: 'now', description: 'The time', parameters: { type: 'object', properties: {} } } },
    ]);
  });

  it('should give what its doc example promises', () => {
    expect(JSON.stringify(toOpenAITools([{ name: 'now', description: 'The time' }]))).toBe(
      '[{"type":"function","function":{"name":"now","description":"The time","parameters":{"type":"object","properties":{}}}}]',
    );
  });
});
