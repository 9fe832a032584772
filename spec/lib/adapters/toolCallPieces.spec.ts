import { continuedCall, startCall, unnamedCall, type ToolCallPieces } from '../../../lib/adapters/toolCallPieces.js';

describe('toolCallPieces', () => {
  const fresh = (): ToolCallPieces => ({ calls: new Map() });

  it('should start nothing by itself: a first piece continues no call', () => {
    const pieces = fresh();
    expect([continuedCall(pieces, 0, 'c1'), continuedCall(pieces, undefined, undefined)]).toEqual([undefined, undefined]);
  });

  it('should continue a started call by its index, with or without its id', () => {
    const pieces = fresh();
    expect(startCall(pieces, 3, 'c1')).toBe('c1');
    expect([continuedCall(pieces, 3, undefined), continuedCall(pieces, 3, 'c1')]).toEqual(['c1', 'c1']);
  });

  it('should keep interleaved calls apart by index, in any order and any numbers', () => {
    const pieces = fresh();
    startCall(pieces, 1, 'a');
    startCall(pieces, -4, 'b');
    expect([continuedCall(pieces, -4, undefined), continuedCall(pieces, 1, undefined), continuedCall(pieces, 2, undefined)]).toEqual(['b', 'a', undefined]);
  });

  it('should take a new id at a known index for a new call', () => {
    const pieces = fresh();
    startCall(pieces, 0, 'c1');
    expect(continuedCall(pieces, 0, 'c2')).toBeUndefined();
    startCall(pieces, 0, 'c2');
    expect(continuedCall(pieces, 0, undefined)).toBe('c2');
  });

  it('should continue the latest call with a piece without index, unless the piece brings a new id', () => {
    const pieces = fresh();
    startCall(pieces, 0, 'a');
    startCall(pieces, undefined, 'b');
    expect(continuedCall(pieces, undefined, undefined)).toBe('b');
    expect(continuedCall(pieces, undefined, 'b')).toBe('b');
    expect(continuedCall(pieces, undefined, 'c')).toBeUndefined();
    // A piece by index makes its call the latest.
    expect(continuedCall(pieces, 0, undefined)).toBe('a');
    expect(continuedCall(pieces, undefined, undefined)).toBe('a');
  });

  it('should record a call started without index only as the latest', () => {
    const pieces = fresh();
    startCall(pieces, undefined, 'x');
    expect(pieces.calls.size).toBe(0);
    expect(pieces.latestCall).toBe('x');
  });

  it('should say why a call cannot start without a name, naming the piece, its id and the name field', () => {
    expect(unnamedCall('choices[0].delta.tool_calls[0]', 'call-1', 'function.name')).toBe(
      "choices[0].delta.tool_calls[0] starts a tool call ('call-1') without function.name. The first piece of each call must carry the tool's name (and id); is the stream cut short or reordered?",
    );
    expect(unnamedCall('tool_call_chunks[0]', undefined, 'a name')).toBe(
      "tool_call_chunks[0] starts a tool call without a name. The first piece of each call must carry the tool's name (and id); is the stream cut short or reordered?",
    );
  });
});
