import { isCompleteJson } from '../../../lib/tracking/json.js';

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
