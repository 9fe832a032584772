import { matchToolRun, noCallWaiting, noInput, sameJson } from '../../../lib/adapters/toolRunMatch.js';

describe('matchToolRun', () => {
  const paris = { id: 'A', args: '{"city":"Paris"}' };
  const rome = { id: 'B', args: '{ "city": "Rome" }' };

  it('should find the one call whose arguments equal the input, as an object or JSON text', () => {
    expect(matchToolRun([paris, rome], { city: 'Rome' })).toEqual({ toolCallId: 'B' });
    expect(matchToolRun([paris, rome], '{"city":"Paris"}')).toEqual({ toolCallId: 'A' });
  });

  it('should prefer an equal call over one the input merely contains, and take a contained one alone', () => {
    expect(matchToolRun([{ id: 'E', args: '' }, rome], { city: 'Rome' })).toEqual({ toolCallId: 'B' });
    expect(matchToolRun([paris, rome], { city: 'Paris', state: {} })).toEqual({ toolCallId: 'A' });
  });

  it('should name no call when the input fits several or none, saying why', () => {
    expect(matchToolRun([paris, { id: 'C', args: '{"city":"Paris"}' }], { city: 'Paris' })).toEqual({ reason: `its input {"city":"Paris"} fits 'A', 'C' alike` });
    expect(matchToolRun([paris, rome], { city: 'Oslo' })).toEqual({ reason: `its input {"city":"Oslo"} fits none of 'A', 'B'` });
  });

  it('should take the only waiting call whatever shape the tool gave its input (a string, coerced types, cut arguments)', () => {
    expect(matchToolRun([{ id: 'c1', args: '{"input":"rxjs"}' }], 'rxjs')).toEqual({ toolCallId: 'c1' });
    expect(matchToolRun([{ id: 'c2', args: '{"n":"5"}' }], { n: 5 })).toEqual({ toolCallId: 'c2' });
    expect(matchToolRun([{ id: 'X', args: '{"city":' }], { city: 'Paris' })).toEqual({ toolCallId: 'X' });
  });

  it('should take the only call when there is no input, and no call of several', () => {
    expect(matchToolRun([paris], noInput)).toEqual({ toolCallId: 'A' });
    expect(matchToolRun([paris, rome], noInput)).toEqual({ reason: "its events carry no input to tell 'A', 'B' apart" });
    expect(matchToolRun([], { city: 'Paris' })).toEqual({ reason: noCallWaiting });
  });

  it('should compare JSON values with keys in any order', () => {
    expect(sameJson({ a: 1, b: [1, { c: 2 }] }, { b: [1, { c: 2 }], a: 1 })).toBe(true);
    expect(sameJson({ a: 1 }, { a: 1, b: 2 })).toBe(false);
    expect(sameJson([1], { 0: 1 })).toBe(false);
  });
});
