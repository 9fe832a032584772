/**
 * `agui-rx/broker/redis`: the run store over Redis Streams, for run brokers of many instances.
 * A separate entry so that only those who use it load the `redis` package (an optional peer dependency).
 */
export { createRedisRunStore, type RedisRunStoreOptions } from './createRedisRunStore.js';
export type { RedisClient } from './redisClient.js';
