import { splitSystemMessages } from '../../../lib/converters/splitSystemMessages.js';

describe('splitSystemMessages', () => {
  it('should gather system and developer messages from anywhere, in order, joined by a blank line', () => {
    expect(
      splitSystemMessages([
        { id: 's1', role: 'system', content: 'Be brief.' },
        { id: 'u1', role: 'user', content: 'Hi' },
        { id: 's2', role: 'system', content: '' },
        { id: 'd1', role: 'developer', content: 'Answer in French.' },
        { id: 'a1', role: 'assistant', content: 'Salut' },
      ]),
    ).toEqual({
      system: 'Be brief.\n\nAnswer in French.',
      messages: [
        { id: 'u1', role: 'user', content: 'Hi' },
        { id: 'a1', role: 'assistant', content: 'Salut' },
      ],
    });
  });

  it('should leave system out when there are no instructions', () => {
    expect(splitSystemMessages([{ id: 'u1', role: 'user', content: 'Hi' }])).toEqual({ messages: [{ id: 'u1', role: 'user', content: 'Hi' }] });
    expect(splitSystemMessages([{ id: 's1', role: 'system', content: '' }])).toEqual({ messages: [] });
  });

  it('should give what its doc example promises', () => {
    const { system, messages } = splitSystemMessages([
      { id: 's1', role: 'system', content: 'Be brief.' },
      { id: 'd1', role: 'developer', content: 'Answer in French.' },
      { id: 'u1', role: 'user', content: 'Hi' },
    ]);
    expect(JSON.stringify({ system, ids: messages.map((message) => message.id) })).toBe('{"system":"Be brief.\\n\\nAnswer in French.","ids":["u1"]}');
  });
});
