/**
 * The Lua scripts of the Redis run store: each one is a step that must be atomic across instances
 * (and one round trip). Keys of a thread share the hash tag `{<threadId>}`, so a script touches one
 * cluster slot.
 *
 * Errors are returned as error replies holding the agui-rx error code (`RUN_ENDED`,
 * `RUN_NOT_FOUND`), which the store turns back into an `AguiRxError`.
 */

/**
 * Creates a run unless it exists.
 * KEYS: run hash, runs list, running set, thread stream.
 * ARGV: runId, then field/value pairs of the run hash.
 * Returns 1 when created, 0 when it existed. A new running run keeps its thread's keys from expiring.
 */
export const CREATE_RUN = `
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], unpack(ARGV, 2))
redis.call('RPUSH', KEYS[2], ARGV[1])
redis.call('SADD', KEYS[3], ARGV[1])
redis.call('PERSIST', KEYS[2])
redis.call('PERSIST', KEYS[4])
return 1
`;

/**
 * Appends events of a running run and, when the batch ends with its terminal event, finishes it.
 * KEYS: run hash, thread stream, running set, runs list, readers sorted set.
 * ARGV: runId, mode ('append' errors on a finished run, 'end' returns an empty array), now (ms),
 * retainMs (-1: keep forever), maxLen, terminal ('1' when the last event ends the run), events (JSON)…
 * Returns the new entry ids. Finishing expires the run's keys after retainMs, and the thread's
 * stream and runs list too once no run of the thread is running.
 */
export const APPEND = `
local status = redis.call('HGET', KEYS[1], 'status')
if not status then return redis.error_reply('RUN_NOT_FOUND') end
if status ~= 'running' then
  if ARGV[2] == 'end' then return {} end
  return redis.error_reply('RUN_ENDED')
end
local ids = {}
for i = 7, #ARGV do
  ids[#ids + 1] = redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[5], '*', 'run', ARGV[1], 'event', ARGV[i])
end
if #ids > 0 and redis.call('HEXISTS', KEYS[1], 'first') == 0 then
  redis.call('HSET', KEYS[1], 'first', ids[1])
end
if ARGV[6] == '1' then
  redis.call('HSET', KEYS[1], 'status', 'finished', 'finishedAt', ARGV[3])
  redis.call('SREM', KEYS[3], ARGV[1])
  local retain = tonumber(ARGV[4])
  if retain >= 0 then
    redis.call('PEXPIRE', KEYS[1], retain)
    redis.call('PEXPIRE', KEYS[5], retain)
    if redis.call('SCARD', KEYS[3]) == 0 then
      redis.call('PEXPIRE', KEYS[2], retain)
      redis.call('PEXPIRE', KEYS[4], retain)
    end
  end
end
return ids
`;

/**
 * Extends the owner's lease of a running run.
 * KEYS: run hash. ARGV: owner, leaseUntil (ms). Returns 1 when renewed, 0 otherwise.
 */
export const RENEW_LEASE = `
local fields = redis.call('HMGET', KEYS[1], 'status', 'owner')
if fields[1] ~= 'running' or fields[2] ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'leaseUntil', ARGV[2])
return 1
`;

/**
 * Registers a reader of a known run, its readers set expiring with the run (readers that vanished
 * without leaving no longer count once their `until` passed, and go with the run).
 * KEYS: run hash, readers sorted set. ARGV: readerId, until (ms).
 */
export const TOUCH_READER = `
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[1])
local ttl = redis.call('PTTL', KEYS[1])
if ttl > 0 then redis.call('PEXPIRE', KEYS[2], ttl) end
return 1
`;
