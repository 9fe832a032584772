import { areArgumentsComplete, isCompleteJson } from '../../../lib/tracking/json.js';

describe('isCompleteJson', () => {
  it('should accept one complete JSON value, surrounded by whitespace or not', () => {
    expect(isCompleteJson('{"q":1}')).toBe(true);
    expect(isCompleteJson(' \n[1, 2]\t')).toBe(true);
    expect(isCompleteJson('"text"')).toBe(true);
    expect(isCompleteJson('42')).toBe(true);
    expect(isCompleteJson('{}')).toBe(true);
  });

  it('should refuse a value still streaming in, an empty text, and two values', () => {
    expect(isCompleteJson('{"q":')).toBe(false);
    expect(isCompleteJson('{"q":"}"')).toBe(false);
    expect(isCompleteJson('[1, 2')).toBe(false);
    expect(isCompleteJson('"unterminated')).toBe(false);
    expect(isCompleteJson('')).toBe(false);
    expect(isCompleteJson('  ')).toBe(false);
    expect(isCompleteJson('{} {}')).toBe(false);
  });
});

describe('areArgumentsComplete', () => {
  it('should accept one complete JSON object or array, surrounded by whitespace or not', () => {
    expect(areArgumentsComplete('{"expression": "42 * 7"}')).toBe(true);
    expect(areArgumentsComplete(' \n[1, 2]\t')).toBe(true);
    expect(areArgumentsComplete('{}')).toBe(true);
  });

  it('should refuse arguments still streaming in, none, and a bare scalar (4 may be the start of 42)', () => {
    expect(areArgumentsComplete('{"expression": "4')).toBe(false);
    expect(areArgumentsComplete('')).toBe(false);
    expect(areArgumentsComplete(' ')).toBe(false);
    expect(areArgumentsComplete('4')).toBe(false);
    expect(areArgumentsComplete('"text"')).toBe(false);
    expect(areArgumentsComplete('{} {}')).toBe(false);
  });
});
