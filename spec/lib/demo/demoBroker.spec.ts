import { createMemoryRunStore } from '../../../lib/broker/createMemoryRunStore.js';
import { allowEveryRequest, describeActivity, loadRedisRunStore } from '../../../lib/demo/demoBroker.js';

describe('describeActivity', () => {
  it('should give one line per broker activity', () => {
    const run = { threadId: 't1', runId: 'r1' };
    expect(
      [
        describeActivity({ type: 'run-started', ...run, instanceId: 'i1' }),
        describeActivity({ type: 'reader-attached', ...run, readerId: 'x', readers: 1 }),
        describeActivity({ type: 'reader-left', ...run, readerId: 'x', readers: 0, delivered: 12, lag: 3 }),
        describeActivity({ type: 'run-detached', ...run, graceMs: 30_000 }),
        describeActivity({ type: 'run-ended', ...run, instanceId: 'i1', outcome: 'cancelled', events: 40, durationMs: 1234 }),
        describeActivity({ type: 'run-ended', ...run, instanceId: 'i1', outcome: 'error', code: 'RUN_LOST', events: 1, durationMs: 20 }),
        describeActivity({ type: 'run-lost', ...run, owner: 'i2' }),
        describeActivity({ type: 'store-error', ...run, message: 'Redis is gone', unwritten: 2 }),
      ],
    ).toEqual([
      'broker: run started   t1/r1 on i1',
      'broker: reader joined t1/r1 (1 reader here)',
      'broker: reader left   t1/r1 after 12 events, lag 3 (0 readers here)',
      'broker: run detached  t1/r1: no reader; cancelled in 30.0 s unless one comes back',
      'broker: run ended     t1/r1 cancelled · 40 events in 1.2 s',
      'broker: run ended     t1/r1 error (RUN_LOST) · 1 event in 20 ms',
      'broker: run lost      t1/r1: its owner i2 stopped renewing its lease',
      'broker: store error   t1/r1: Redis is gone (2 events not written yet)',
    ]);
  });
});

describe('allowEveryRequest', () => {
  it('should allow everything (the demo only)', () => {
    expect(allowEveryRequest({ request: {}, action: 'stop', threadId: 't', runId: 'r' })).toBe(true);
  });
});

describe('loadRedisRunStore', () => {
  it('should refuse with what to do when the Redis store cannot be loaded', async () => {
    await expect(loadRedisRunStore('redis://127.0.0.1:6379', () => Promise.reject(new Error("Cannot find module 'redis'")))).rejects.toThrow(
      "REDIS_URL is set, but the Redis run store could not be loaded: Cannot find module 'redis'. Install the redis package (npm install redis) and rebuild, or unset REDIS_URL to keep runs in memory.",
    );
    await expect(loadRedisRunStore('redis://127.0.0.1:6379', () => Promise.resolve({}))).rejects.toThrow('agui-rx/broker/redis exports no createRedisRunStore');
  });

  it('should call createRedisRunStore with the URL', async () => {
    const store = createMemoryRunStore();
    const urls: string[] = [];
    const createRedisRunStore = ({ url }: { url: string }) => (urls.push(url), store);
    expect(await loadRedisRunStore('redis://h:1', () => Promise.resolve({ createRedisRunStore }))).toBe(store);
    expect(urls).toEqual(['redis://h:1']);
    await store.close();
  });
});
