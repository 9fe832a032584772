import { strayFieldsOf } from '../../../lib/protocol/strayFields.js';

const chunkFields = new Set(['type', 'timestamp', 'rawEvent', 'metadata', 'subagentRunId', 'messageId', 'role', 'delta', 'name']);

describe('strayFieldsOf', () => {
  it('should name a field AG-UI does not define and suggest delta for it', () => {
    expect(strayFieldsOf({ type: 'TEXT_MESSAGE_CHUNK', text: 'Hi' }, chunkFields)).toEqual([{ field: 'text', likely: 'delta' }]);
  });

  it('should suggest a defined field of a near spelling: case, underscores, one typo', () => {
    expect(strayFieldsOf({ type: 'TEXT_MESSAGE_CHUNK', messageID: 'm1', Role: 'user', detla: 'x', meta_data: {} }, chunkFields)).toEqual([
      { field: 'messageID', likely: 'messageId' },
      { field: 'Role', likely: 'role' },
      { field: 'detla', likely: 'delta' },
      { field: 'meta_data', likely: 'metadata' },
    ]);
  });

  it('should not suggest a field the event already has', () => {
    expect(strayFieldsOf({ type: 'TEXT_MESSAGE_CHUNK', messageId: 'm1', messageID: 'm2' }, chunkFields)).toEqual([{ field: 'messageID', likely: 'delta' }]);
  });

  it('should find nothing in an event of defined fields only', () => {
    expect(strayFieldsOf({ type: 'TEXT_MESSAGE_CHUNK', messageId: 'm1', role: 'assistant' }, chunkFields)).toEqual([]);
  });
});
