import { storeUnavailable } from '../../../lib/broker/redis/redisClient.js';

describe('storeUnavailable', () => {
  const where = 'redis://127.0.0.1:6390';

  it('should give the cause\'s message in parentheses', () => {
    expect(storeUnavailable(where, new Error('connect ECONNREFUSED 127.0.0.1:6390')).message).toBe(
      'The Redis run store cannot reach Redis at redis://127.0.0.1:6390 (connect ECONNREFUSED 127.0.0.1:6390): check that Redis runs there and answers, and that the URL (e.g. REDIS_URL) is right.',
    );
  });

  it('should name a cause with an empty message by its code, else its name, and never print empty parentheses', () => {
    const coded = Object.assign(new Error(''), { code: 'ECONNRESET' });
    expect(storeUnavailable(where, coded).message).toContain(`${where} (ECONNRESET): check`);
    class SocketClosedUnexpectedlyError extends Error {
      constructor() {
        super('');
        this.name = 'SocketClosedUnexpectedlyError';
      }
    }
    expect(storeUnavailable(where, new SocketClosedUnexpectedlyError()).message).toContain(`${where} (SocketClosedUnexpectedlyError): check`);
    for (const cause of [new Error(''), '', undefined]) {
      const { code, message } = storeUnavailable(where, cause);
      expect(code).toBe('STORE_UNAVAILABLE');
      expect(message).not.toContain('()');
      expect(message).toContain(`cannot reach Redis at ${where}: check that Redis runs there`);
    }
  });
});
