import { appendArguments, createArgumentsText, isArgumentsComplete, isCompleteJson } from '../../../lib/tracking/json.js';

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

describe('appendArguments and isArgumentsComplete', () => {
  // The verdict on `text` fed whole, and fed in every split into fragments of `size` characters.
  const verdicts = (text: string) => {
    const results = new Set<boolean>();
    for (const size of [1, 2, 3, text.length || 1]) {
      const args = createArgumentsText();
      for (let i = 0; i < text.length; i += size) appendArguments(args, text.slice(i, i + size));
      if (text === '') appendArguments(args, '');
      expect(args.text).toBe(text);
      results.add(isArgumentsComplete(args));
    }
    return [...results];
  };

  it('should accept one complete JSON object or array, surrounded by whitespace or not', () => {
    for (const text of ['{"expression": "42 * 7"}', ' \n[1, 2]\t', '{}', '{"s": "a } ] \\" {", "n": [{"x": []}]}', '{"q":"\\"}"}']) expect([text, verdicts(text)]).toEqual([text, [true]]);
  });

  it('should refuse arguments still streaming in, none, a bare scalar (4 may be the start of 42), and text after the value', () => {
    for (const text of ['{"expression": "4', '', ' ', '4', '"text"', '{} {}', '{"q":"}"', '{"a":1}}', '{"a":]', '}', '{"q": "\\"}']) {
      expect([text, verdicts(text)]).toEqual([text, [false]]);
    }
  });

  it('should parse a growing text at most once per closed value, however often it is asked', () => {
    const parse = jest.spyOn(JSON, 'parse');
    try {
      const args = createArgumentsText();
      let parsedChars = 0;
      for (let i = 0; i < 2_000; i++) {
        appendArguments(args, i === 0 ? '{"items": [' : `${i > 1 ? ',' : ''}{"n": ${i}}`);
        expect(isArgumentsComplete(args)).toBe(false);
      }
      appendArguments(args, ']}');
      for (let i = 0; i < 100; i++) expect(isArgumentsComplete(args)).toBe(true);
      appendArguments(args, ' \n');
      expect(isArgumentsComplete(args)).toBe(true);
      for (const [text] of parse.mock.calls) parsedChars += String(text).length;
      expect(parse).toHaveBeenCalledTimes(1);
      expect(parsedChars).toBe(args.text.length - 2);
    } finally {
      parse.mockRestore();
    }
  });
});
