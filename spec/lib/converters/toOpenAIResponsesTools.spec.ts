import { toOpenAIResponsesTools } from '../../../lib/converters/toOpenAIResponsesTools.js';

const schema = { type: 'object', properties: { city: { type: 'string' } } };

describe('toOpenAIResponsesTools', () => {
  it('should turn each tool into a flat, non-strict function tool, with the default schema when it has none', () => {
    expect(
      toOpenAIResponsesTools([
        { name: 'weather', description: 'The weather', parameters: schema, metadata: { ui: 'card' } },
        { name: 'now', description: 'The time' },
      ]),
    ).toEqual([
      { type: 'function', name: 'weather', description: 'The weather', parameters: schema, strict: false },
      { type: 'function', name: 'now', description: 'The time', parameters: { type: 'object', properties: {} }, strict: false },
    ]);
  });

  it('should give what its doc example promises', () => {
    expect(JSON.stringify(toOpenAIResponsesTools([{ name: 'now', description: 'The time' }]))).toBe(
      '[{"type":"function","name":"now","description":"The time","parameters":{"type":"object","properties":{}},"strict":false}]',
    );
  });
});
