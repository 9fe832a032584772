import type { AuthorizeRequest, BrokerActivity } from '../broker/createRunBroker.js';
import type { RunStore } from '../broker/runStore.js';
import { AguiRxError, errorMessage } from '../protocol/errors.js';

/**
 * The demo's `authorize` hook: every request may attach to, resume, connect to and stop every run.
 *
 * FOR THE DEMO ONLY. It makes a run's ids a credential, which they must never be: a real server
 * decides from the request (its session, its user) whether that user may read that thread.
 *
 * @return true, always.
 */
export function allowEveryRequest(_request: AuthorizeRequest): boolean {
  return true;
}

/** What the demo prints at start-up about its `authorize` hook. */
export const ALLOW_ALL_NOTICE = 'authorize: allow-all, FOR THE DEMO ONLY: anyone who can reach this server may read and stop any run. Configure a real `authorize` hook in your server.';

const seconds = (ms: number) => (ms === Infinity ? 'never' : ms >= 1000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.round(ms)} ms`);
const plural = (n: number, one: string) => `${n} ${one}${n === 1 ? '' : 's'}`;

/**
 * One log line for one broker activity (the demo prints each), e.g.
 * `run ended     thread-1/run-2 cancelled · 42 events in 1.3 s`.
 *
 * @param activity What the broker reported through `onActivity`.
 * @return The line, without a newline.
 */
export function describeActivity(activity: BrokerActivity): string {
  const run = `${activity.threadId}/${activity.runId}`;
  switch (activity.type) {
    case 'run-started':
      return `broker: run started   ${run} on ${activity.instanceId}`;
    case 'run-ended':
      return `broker: run ended     ${run} ${activity.outcome}${activity.code ? ` (${activity.code})` : ''} · ${plural(activity.events, 'event')} in ${seconds(activity.durationMs)}`;
    case 'reader-attached':
      return `broker: reader joined ${run} (${plural(activity.readers, 'reader')} here)`;
    case 'reader-left':
      return `broker: reader left   ${run} after ${plural(activity.delivered, 'event')}${activity.lag === undefined ? '' : `, lag ${activity.lag}`} (${plural(activity.readers, 'reader')} here)`;
    case 'run-detached':
      return `broker: run detached  ${run}: no reader; cancelled in ${seconds(activity.graceMs)} unless one comes back`;
    case 'run-lost':
      return `broker: run lost      ${run}: its owner ${activity.owner} stopped renewing its lease`;
    case 'store-error':
      return `broker: store error   ${run}: ${activity.message} (${plural(activity.unwritten, 'event')} not written yet)`;
    default: {
      const unreachable: never = activity;
      return `broker: ${JSON.stringify(unreachable)}`;
    }
  }
}

/** The Redis store's factory, as the demo calls it. */
type CreateRedisRunStore = (options: { url: string }) => RunStore;

/**
 * The Redis Streams run store for `url`, loaded only when asked for (the root never loads Redis).
 *
 * @param url A Redis URL, e.g. `redis://127.0.0.1:6379`.
 * @param load Loads the `agui-rx/broker/redis` module (specs pass a failing one). Default: a dynamic import.
 * @return The store.
 * @throws {AguiRxError} `REDIS_UNAVAILABLE` when the module (or the `redis` package it needs) cannot be loaded.
 */
export async function loadRedisRunStore(url: string, load: () => Promise<unknown> = importRedisEntry): Promise<RunStore> {
  let createRedisRunStore: CreateRedisRunStore | undefined;
  try {
    createRedisRunStore = ((await load()) as { createRedisRunStore?: CreateRedisRunStore }).createRedisRunStore;
  } catch (error) {
    throw new AguiRxError(
      'REDIS_UNAVAILABLE',
      `REDIS_URL is set, but the Redis run store could not be loaded: ${errorMessage(error, 'no reason given')}. Install the redis package (npm install redis) and rebuild, or unset REDIS_URL to keep runs in memory.`,
    );
  }
  if (typeof createRedisRunStore !== 'function') {
    throw new AguiRxError('REDIS_UNAVAILABLE', 'REDIS_URL is set, but agui-rx/broker/redis exports no createRedisRunStore. Unset REDIS_URL to keep runs in memory.');
  }
  return createRedisRunStore({ url });
}

// A specifier in a variable: the entry is optional, so the type checker must not require it to exist.
const REDIS_ENTRY: string = '../broker/redis/index.js';

function importRedisEntry(): Promise<unknown> {
  return import(REDIS_ENTRY);
}
