import type { Event, Message, RunAgentInput, State } from '@ag-ui/core';
import { loadavg } from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { from } from 'rxjs';
import { runWithOfficialClient } from '../../lib/testing/runWithOfficialClient.js';
import { toAgui } from '../../operators/toAgui.js';
import type { AgentEvent } from '../../lib/protocol/agentEvent.js';
import { entityKinds } from '../../lib/protocol/table.js';
import { collect, pollUntil } from '../support/helpers.js';
import { describeWithRedis, startRedisServer, type RedisServer } from '../support/redisServer.js';
import {
  compareCursors,
  getEvents,
  isTerminal,
  pool,
  postRun,
  prng,
  readStream,
  runPath,
  scriptOf,
  startInstance,
  summarize,
  type Frame,
  type Instance,
  type ReadResult,
} from './harness.js';

/**
 * Chaos over real loopback HTTP: three server instances (child processes, spec/chaos/worker.cjs)
 * share one redis-server; runs are cut and resumed on random instances, owners are killed, runs
 * stopped from elsewhere, Redis restarted; the official client judges what the readers got.
 *
 * `CHAOS_RUNS` (default 200) seeded runs, seeds `CHAOS_FROM` (default 1) onwards; `CHAOS_SEED`
 * replays one seed; `CHAOS_CONCURRENCY` (default 16) runs at once. `npm run chaos` runs 1,000.
 */
const LEASE_MS = 2000;
const replaySeed = process.env.CHAOS_SEED === undefined ? undefined : Number(process.env.CHAOS_SEED);
const runs = replaySeed !== undefined ? 1 : Number(process.env.CHAOS_RUNS ?? 200);
const firstSeed = replaySeed ?? Number(process.env.CHAOS_FROM ?? 1);
const concurrency = Number(process.env.CHAOS_CONCURRENCY ?? 16);

/** The figures of this spec run, printed in one line at the end. */
const figures = {
  runs: 0,
  cuts: 0,
  resumes: 0,
  attaches: 0,
  stops: 0,
  cancelled: 0,
  frames: 0,
  gaps: [] as number[],
  runLostMs: [] as number[],
  stopMs: [] as number[],
  redisRestartMs: [] as number[],
  redisRestartCodes: [] as string[],
  stopAfterRestartMs: [] as number[],
  wallMs: 0,
  jestLagP99Ms: 0,
  workerLagP99Ms: [] as number[],
  judgeMs: 0,
  workerCpuMs: [] as number[],
};

/** The input of a seed's run: a user turn, a starting state, and the seed for the worker's agent. */
function inputOf(seed: number, chaos: { long?: number; paceMs?: number } = {}, threadId = `thread-${seed}`, runId = `run-${seed}`): RunAgentInput {
  return {
    threadId,
    runId,
    messages: [{ id: `u-${seed}`, role: 'user', content: `seed ${seed}` }],
    state: { seed, started: true },
    tools: [],
    context: [],
    forwardedProps: { chaos: { seed, ...chaos } },
  };
}

/** What the official client builds from `events` in the run's thread, starting from its input. */
async function judge(input: RunAgentInput, events: Event[]): Promise<{ messages: Message[]; state: State }> {
  const { messages, state } = await runWithOfficialClient(from(events), { threadId: input.threadId, runId: input.runId, initialMessages: input.messages, initialState: input.state });
  return { messages, state };
}

/** The events of an uninterrupted run of the input's seed, computed here from the same script. */
function expectedEvents(input: RunAgentInput): Promise<Event[]> {
  const chaos = (input.forwardedProps as { chaos: { seed: number; long?: number; paceMs?: number } }).chaos;
  const events = scriptOf(chaos.seed, chaos).map((step) => step.e as AgentEvent);
  return collect(from(events).pipe(toAgui({ threadId: input.threadId, runId: input.runId, input })));
}

/** One chaos run as read: its seed and input, the frames stitched from every connection, and what its stop (if any) answered. */
interface ChaosRun {
  seed: number;
  input: RunAgentInput;
  frames: Frame[];
  stopStatus?: number | undefined;
}

/** Frames with their events only, ids dropped, for comparing with the computed events. */
const eventsOf = (frames: Frame[]) => frames.map((frame) => frame.event);

/** The entities (messages, calls, steps …) that `events` open and never close, as `kind id`: what a client is left with half-open. */
function leftOpen(events: readonly Event[]): string[] {
  const open = new Set<string>();
  for (const event of events) {
    for (const kind of entityKinds) {
      const id = (event as unknown as Record<string, unknown>)[kind.idField];
      if (event.type === kind.start) open.add(`${kind.name} ${String(id)}`);
      else if (kind.end.includes(event.type)) open.delete(`${kind.name} ${String(id)}`);
    }
  }
  return [...open];
}

describeWithRedis('run broker chaos: three instances, one Redis, runs cut and resumed', () => {
  let redis: RedisServer;
  let instances: Instance[] = [];
  const env = () => ({ REDIS_URL: redis.url, LEASE_MS: String(LEASE_MS) });

  beforeAll(async () => {
    redis = await startRedisServer();
    instances = await Promise.all(['a', 'b', 'c'].map((name) => startInstance(name, env())));
  }, 30_000);

  afterAll(async () => {
    await Promise.all(instances.map((instance) => instance.stop()));
    await redis?.stop();
    const gap = summarize(figures.gaps);
    const ms = (values: number[]) => (values.length === 0 ? 'n/a' : values.map((value) => `${Math.round(value)} ms`).join(', '));
    console.log(
      `chaos: ${figures.runs} runs in ${(figures.wallMs / 1000).toFixed(1)} s, judged in ${(figures.judgeMs / 1000).toFixed(1)} s (instances' CPU ${figures.workerCpuMs.map((cpu) => (cpu / 1000).toFixed(1)).join('/')} s, jest's ${(process.cpuUsage().user / 1e6).toFixed(1)} s), ${figures.frames} frames, ${figures.cuts} cuts, ${figures.resumes} resumes (${figures.attaches} by POST attach), ${figures.stops} stops (${figures.cancelled} cancelled the run), ` +
        `resume gap (cut → first frame of the next connection) median ${gap.median.toFixed(1)} ms / max ${gap.max.toFixed(1)} ms ` +
        `(event-loop delay p99: jest ${figures.jestLagP99Ms.toFixed(0)} ms, instances ${figures.workerLagP99Ms.map((value) => value.toFixed(0)).join('/')} ms; load average ${loadavg()[0].toFixed(1)}); ` +
        `RUN_LOST after SIGKILL (lease ${LEASE_MS} ms): ${ms(figures.runLostMs)}; ` +
        `stop via another instance → cancelled: ${ms(figures.stopMs)}; Redis restart → reader RUN_ERROR: ${ms(figures.redisRestartMs)} (${figures.redisRestartCodes.join(', ')}), then stop → cancelled: ${ms(figures.stopAfterRestartMs)}`,
    );
  }, 30_000);

  const pick = <T>(random: () => number, items: T[]) => items[Math.floor(random() * items.length)];

  /**
   * One chaos run: POST on a random instance, cut after a random number of frames (or right after
   * the headers) several times, each time resuming on a random instance (GET events, or POST again
   * to attach) with Last-Event-ID; then read to the end. Resolves with the stitched frames.
   */
  async function cutAndResume(seed: number): Promise<ChaosRun> {
    const random = prng((seed * 2654435761) ^ 0x5bd1e995);
    // Four runs share a thread, and run at once: their entries interleave in the thread's log.
    const input = inputOf(seed, {}, `thread-${Math.floor(seed / 4)}`);
    const cuts = 1 + Math.floor(random() * 4);
    const frames: Frame[] = [];
    let cutAt: number | undefined;
    // Some runs are also stopped, through a random instance, a random moment after they were posted.
    const stopAfter = random() < 0.15 ? Math.floor(random() * 150) : undefined;
    const stopper = pick(random, instances);
    let stopped: Promise<number> | undefined;
    for (let attempt = 0; ; attempt++) {
      if (attempt === 1 || (attempt === 0 && stopAfter !== undefined)) {
        stopped ??=
          stopAfter === undefined
            ? undefined
            : new Promise<void>((resolve) => setTimeout(resolve, stopAfter)).then(async () => {
                figures.stops++;
                const response = await fetch(runPath(stopper.url, input.threadId, input.runId, 'stop'), { method: 'POST' });
                await response.text();
                return response.status;
              });
      }
      if (attempt > cuts + 3) throw new Error(`seed ${seed}: still not at the end after ${attempt} connections`);
      const instance = pick(random, instances);
      const last = frames.length === 0 ? undefined : frames[frames.length - 1].id;
      // -1: before the response (the request may or may not have reached the server), 0: right after the headers.
      const cutAfter = attempt < cuts ? (random() < 0.1 ? (random() < 0.5 ? -1 : 0) : 1 + Math.floor(random() * 40)) : undefined;
      const attach = attempt === 0 || last === undefined || random() < 0.3;
      const result: ReadResult = attach
        ? await readStream(`${instance.url}/agent`, postRun(input, last), { cutAfter })
        : await readStream(runPath(instance.url, input.threadId, input.runId, 'events'), getEvents(last), { cutAfter });
      if (result.status !== 200 && !(cutAfter === -1 && result.status === 0)) throw new Error(`seed ${seed}: connection ${attempt} (${attach ? 'POST' : 'GET events'} on ${instance.name}, after ${last}) answered ${result.status}`);
      if (result.end === 'timeout') throw new Error(`seed ${seed}: connection ${attempt} on ${instance.name} got no end within 30 s (${result.frames.length} frames)`);
      if (attempt > 0) {
        figures.resumes++;
        if (attach) figures.attaches++;
        if (cutAt !== undefined && result.times.length > 0) {
          figures.gaps.push(result.times[0] - cutAt);
          if (process.env.CHAOS_DEBUG) console.log(`seed ${seed} ${attach ? 'POST' : 'GET'} ${instance.name}: headers ${(result.headersAt - result.sentAt).toFixed(0)} ms, first frame ${(result.times[0] - result.headersAt).toFixed(0)} ms`);
        }
      }
      frames.push(...result.frames);
      if (result.end === 'ended') break;
      figures.cuts++;
      cutAt = performance.now();
    }
    return { seed, input, frames, stopStatus: await stopped };
  }

  /** Why a run's stitched frames are wrong on the wire (ids, order, terminal, against a full replay), or undefined. */
  async function checkWire({ input, frames, stopStatus }: ChaosRun): Promise<string | undefined> {
    const missingId = frames.findIndex((frame) => frame.id === undefined || frame.id === '');
    if (missingId >= 0) return `frame ${missingId} (${frames[missingId].event.type}) has no id`;
    for (let i = 1; i < frames.length; i++) {
      if (compareCursors(frames[i - 1].id!, frames[i].id!) >= 0) return `cursors not strictly increasing at frame ${i}: ${frames[i - 1].id} then ${frames[i].id} (duplicated or reordered event)`;
    }
    const terminals = frames.filter(isTerminal);
    if (terminals.length !== 1 || !isTerminal(frames[frames.length - 1])) return `expected one terminal event, last; got ${terminals.map((frame) => frame.event.type).join(', ') || 'none'}`;
    const terminal = frames[frames.length - 1].event as { type: string; outcome?: { type: string } };
    if (terminal.type !== 'RUN_FINISHED') return `the run ended ${JSON.stringify(terminal)}`;
    if (terminal.outcome?.type === 'cancelled' && stopStatus !== 202) return `the run was cancelled, but no stop was accepted (stop answered ${stopStatus})`;
    if (stopStatus !== undefined && stopStatus !== 202 && stopStatus !== 404) return `stop answered ${stopStatus}`;
    // A full replay from the start, on a random instance: the same frames, cursors and all.
    const replay = await readStream(runPath(pick(Math.random, instances).url, input.threadId, input.runId, 'events'), getEvents());
    if (replay.end !== 'ended') return `the full replay did not end (${replay.end})`;
    if (replay.frames.length !== frames.length) return `the full replay has ${replay.frames.length} frames, the cut run ${frames.length} (missing or duplicated events)`;
    for (let i = 0; i < frames.length; i++) {
      if (replay.frames[i].id !== frames[i].id || JSON.stringify(replay.frames[i].event) !== JSON.stringify(frames[i].event)) {
        return `frame ${i} differs from the full replay: ${frames[i].id} ${JSON.stringify(frames[i].event)} vs ${replay.frames[i].id} ${JSON.stringify(replay.frames[i].event)}`;
      }
    }
    return undefined;
  }

  /**
   * Why the official client's view of the stitched events differs from an uninterrupted run's, or
   * undefined. The uninterrupted run is computed here from the seed's script (every id given, so it
   * is deterministic): the stitched events must equal its events, and the official client must
   * accept them; equal events give equal messages and state (compared explicitly when they differ).
   */
  async function checkJudged({ input, frames }: ChaosRun): Promise<string | undefined> {
    let got: { messages: Message[]; state: State };
    try {
      got = await judge(input, eventsOf(frames));
    } catch (error) {
      return `the official client refused the stitched stream: ${(error as Error).message}`;
    }
    const expectedList = await expectedEvents(input);
    if ((frames[frames.length - 1].event as { outcome?: { type: string } }).outcome?.type === 'cancelled') {
      figures.cancelled++;
      // Stopped: the uninterrupted run's events up to the stop, then only closers of what was open, then RUN_FINISHED cancelled.
      const events = eventsOf(frames);
      let same = 0;
      while (same < events.length - 1 && JSON.stringify(events[same]) === JSON.stringify(expectedList[same])) same++;
      const after = events.slice(same, -1).filter((event) => !/_END$/.test(event.type));
      return after.length === 0 ? undefined : `the stopped run's events differ from an uninterrupted run's at ${same} by more than closers: ${JSON.stringify(after[0])} vs ${JSON.stringify(expectedList[same])}`;
    }
    if (JSON.stringify(eventsOf(frames)) === JSON.stringify(expectedList)) return undefined;
    const expected = await judge(input, expectedList);
    if (JSON.stringify(got.messages) !== JSON.stringify(expected.messages)) return `messages differ from an uninterrupted run's:\n${JSON.stringify(got.messages)}\n${JSON.stringify(expected.messages)}`;
    if (JSON.stringify(got.state) !== JSON.stringify(expected.state)) return `state differs from an uninterrupted run's:\n${JSON.stringify(got.state)}\n${JSON.stringify(expected.state)}`;
    const at = expectedList.findIndex((event, i) => JSON.stringify(event) !== JSON.stringify(frames[i]?.event));
    return `events differ from an uninterrupted run's at ${at}: ${JSON.stringify(frames[at]?.event)} vs ${JSON.stringify(expectedList[at])}`;
  }

  /** Agent starts of `runIds`, summed over the live instances. */
  async function startsOf(runIds: string[]): Promise<Record<string, number>> {
    const stats = await Promise.all(instances.map((instance) => instance.stats()));
    return Object.fromEntries(runIds.map((runId) => [runId, stats.reduce((sum, { starts }) => sum + (starts[runId] ?? 0), 0)]));
  }

  it(`should give each of ${runs} runs cut and resumed on random instances the messages and state of an uninterrupted run, every event once, the agent started once`, async () => {
    const seeds = Array.from({ length: runs }, (_, i) => firstSeed + i);
    const failures: string[] = [];
    const began = performance.now();
    const lag = monitorEventLoopDelay({ resolution: 10 });
    lag.enable();
    // First the network part, runs concurrently; then the official client judges, one run at a
    // time: its CPU work would otherwise stall the readers and inflate the resume gaps.
    const done: ChaosRun[] = [];
    await pool(seeds, concurrency, async (seed) => {
      try {
        const run = await cutAndResume(seed);
        figures.runs++;
        figures.frames += run.frames.length;
        const problem = await checkWire(run);
        if (problem !== undefined) failures.push(`seed ${seed}: ${problem}`);
        else done.push(run);
      } catch (error) {
        failures.push(`seed ${seed}: ${(error as Error).message}`);
      }
    });
    figures.wallMs = performance.now() - began;
    lag.disable();
    figures.jestLagP99Ms = lag.percentile(99) / 1e6;
    for (const run of done) {
      const problem = await checkJudged(run);
      if (problem !== undefined) failures.push(`seed ${run.seed}: ${problem}`);
    }
    figures.judgeMs = performance.now() - began - figures.wallMs;
    for (const instance of instances) if (instance.child.exitCode !== null || instance.child.signalCode !== null) failures.push(`instance ${instance.name} died: ${instance.stderr()}`);
    const starts = await startsOf(seeds.map((seed) => `run-${seed}`));
    for (const [runId, count] of Object.entries(starts)) if (count !== 1) failures.push(`${runId}: the agent started ${count} times`);
    const stats = await Promise.all(instances.map((instance) => instance.stats()));
    if (process.env.CHAOS_DEBUG) for (const instance of instances) console.log(instance.stderr());
    figures.workerLagP99Ms = stats.map((entry) => entry.lagP99Ms);
    figures.workerCpuMs = stats.map((entry) => entry.cpuMs);
    if (failures.length > 0) console.log(`chaos failures (replay one with CHAOS_SEED=<seed> npx jest spec/chaos):\n${failures.join('\n')}`);
    expect(failures).toEqual([]);
  }, Math.max(120_000, runs * 1_500));

  /** Starts a long run on `owner` (its POST read in the background) and readers on `others` from the start; resolves mid-run, once the owner's reader has 20 frames. */
  async function longRun(seed: number, owner: Instance, others: Instance[], long = 10_000) {
    const input = inputOf(seed, { long, paceMs: 10 }, `thread-long-${seed}`, `run-long-${seed}`);
    let started!: () => void;
    let midRun!: () => void;
    const startedP = new Promise<void>((resolve) => (started = resolve));
    const midRunP = new Promise<void>((resolve) => (midRun = resolve));
    const ownerRead = readStream(`${owner.url}/agent`, postRun(input), {
      timeoutMs: 60_000,
      onFrame: (_, count) => (count === 1 ? started() : count === 20 ? midRun() : undefined),
    });
    // The run exists once its first frame is out; readers elsewhere then read it from the start.
    await startedP;
    const reads = others.map((instance) => readStream(runPath(instance.url, input.threadId, input.runId, 'events'), getEvents(), { timeoutMs: 60_000 }));
    await midRunP;
    return { input, ownerRead, reads };
  }

  it('should end the run of a SIGKILLed owner with one RUN_ERROR RUN_LOST for readers on the other instances, within the lease', async () => {
    const [owner, ...others] = instances;
    const { input, ownerRead, reads } = await longRun(9001, owner, others, 20_000);
    // Besides: a run of the owner that nobody reads when it dies, and a run of another instance, which goes on.
    const unread = inputOf(9006, { long: 20_000, paceMs: 10 }, 'thread-long-9006', 'run-long-9006');
    const unreadStarted = await readStream(`${owner.url}/agent`, postRun(unread), { cutAfter: 1 });
    const bystander = inputOf(9007, { long: 4_000, paceMs: 10 });
    const bystanderRead = readStream(`${others[0].url}/agent`, postRun(bystander), { timeoutMs: 60_000 });
    // The owner's own connection dies with it.
    const ownerEnd = ownerRead.then(() => 'ended', () => 'reset');
    await owner.kill();
    const killedAt = performance.now();
    const results = await Promise.all(reads);
    for (const result of results) {
      expect(result.end).toBe('ended');
      const last = result.frames[result.frames.length - 1];
      expect(last.event).toMatchObject({ type: 'RUN_ERROR', code: 'RUN_LOST' });
      // Whatever the owner was writing when it died is closed before the RUN_ERROR.
      expect(leftOpen(eventsOf(result.frames))).toEqual([]);
      figures.runLostMs.push(result.times[result.times.length - 1] - killedAt);
    }
    // Appended once: every reader got the same entry, and the log ends with it.
    expect(new Set(results.map((result) => result.frames[result.frames.length - 1].id)).size).toBe(1);
    const replay = await readStream(runPath(others[0].url, input.threadId, input.runId, 'events'), getEvents());
    expect(replay.frames.filter(isTerminal)).toHaveLength(1);
    expect(replay.frames[replay.frames.length - 1]).toEqual(results[0].frames[results[0].frames.length - 1]);
    // Generous: the lease, plus a reader's check period and the time to notice stale events.
    expect(Math.max(...figures.runLostMs)).toBeLessThan(3 * LEASE_MS);
    expect(await ownerEnd).toBeDefined();
    // The killed instance comes back (an empty process), for the cases after this one.
    instances[0] = await startInstance('a', env());
    // Posting the lost run again attaches to its log (which ends RUN_LOST): the agent does not start again.
    const again = await readStream(`${instances[0].url}/agent`, postRun(input, results[0].frames[0].id));
    expect(again.end).toBe('ended');
    expect(again.frames[again.frames.length - 1]).toEqual(results[0].frames[results[0].frames.length - 1]);
    expect(leftOpen([results[0].frames[0].event, ...eventsOf(again.frames)])).toEqual([]);
    expect(await startsOf([input.runId])).toEqual({ [input.runId]: 0 });
    // The unread run: whoever comes to read it later learns it was lost, after what it had written.
    const late = await readStream(runPath(others[1].url, unread.threadId, unread.runId, 'events'), getEvents(unreadStarted.frames[0].id));
    expect(late.end).toBe('ended');
    expect(late.frames[late.frames.length - 1].event).toMatchObject({ type: 'RUN_ERROR', code: 'RUN_LOST' });
    expect(leftOpen([unreadStarted.frames[0].event, ...eventsOf(late.frames)])).toEqual([]);
    // The other instance's run finished as if nothing happened.
    const bystanderResult = await bystanderRead;
    expect(eventsOf(bystanderResult.frames)).toEqual(await expectedEvents(bystander));
  });

  it('should cancel a run stopped through another instance: its log ends RUN_FINISHED cancelled within 2 s', async () => {
    const [owner, reader, stopper] = instances;
    const { input, ownerRead, reads } = await longRun(9002, owner, [reader], 20_000);
    const stoppedAt = performance.now();
    const response = await fetch(runPath(stopper.url, input.threadId, input.runId, 'stop'), { method: 'POST' });
    expect(response.status).toBe(202);
    const results = [await ownerRead, ...(await Promise.all(reads))];
    for (const result of results) {
      expect(result.end).toBe('ended');
      expect(result.frames[result.frames.length - 1].event).toMatchObject({ type: 'RUN_FINISHED', outcome: { type: 'cancelled' } });
      figures.stopMs.push(result.times[result.times.length - 1] - stoppedAt);
    }
    expect(Math.max(...figures.stopMs)).toBeLessThan(2000);
    // The cancelled log is one the official client accepts, and the agent ran once.
    const replay = await readStream(runPath(stopper.url, input.threadId, input.runId, 'events'), getEvents());
    expect(replay.frames[replay.frames.length - 1].event).toMatchObject({ type: 'RUN_FINISHED', outcome: { type: 'cancelled' } });
    await expect(judge(input, eventsOf(replay.frames))).resolves.toBeDefined();
    expect(await startsOf([input.runId])).toEqual({ [input.runId]: 1 });
  });

  it('should end every reader with a clear RUN_ERROR, no gap, when Redis restarts mid-run with its data lost; the owner reports what it could not write', async () => {
    const [owner, ...others] = instances;
    const { input, ownerRead, reads } = await longRun(9003, owner, others, 20_000);
    const restartedAt = performance.now();
    await redis.restart();
    const results = [await ownerRead, ...(await Promise.all(reads))];
    const expected = await expectedEvents(input);
    for (const result of results) {
      expect(result.end).toBe('ended');
      const last = result.frames[result.frames.length - 1];
      expect(last.event).toMatchObject({ type: 'RUN_ERROR', code: expect.any(String), message: expect.any(String) });
      figures.redisRestartMs.push(result.times[result.times.length - 1] - restartedAt);
      figures.redisRestartCodes.push((last.event as { code?: string }).code ?? '');
      // No silent gap: what came before the RUN_ERROR is the run's start, every event once, in order.
      const before = eventsOf(result.frames.slice(0, -1));
      expect(before).toEqual(expected.slice(0, before.length));
    }
    // The owner says what it could not write.
    // The owner is another process: its /stats is polled.
    const storeErrors = await pollUntil(
      async () => (await owner.stats()).activity.filter((entry) => entry.type === 'store-error' && entry.runId === input.runId),
      (errors) => errors.length > 0,
      { timeoutMs: 20_000, intervalMs: 100, what: "the owner's store-error report" },
    );
    expect(storeErrors[0]).toMatchObject({ type: 'store-error', message: expect.any(String), unwritten: expect.any(Number) });
    // And the instances serve new runs on the new Redis, read from elsewhere and stopped from elsewhere (the stop channel is subscribed again).
    const after = await readStream(`${others[0].url}/agent`, postRun(inputOf(9004)));
    expect(after.frames[after.frames.length - 1].event.type).toBe('RUN_FINISHED');
    const next = await longRun(9005, owner, [others[0]], 20_000);
    const stoppedAt = performance.now();
    expect((await fetch(runPath(others[1].url, next.input.threadId, next.input.runId, 'stop'), { method: 'POST' })).status).toBe(202);
    for (const result of [await next.ownerRead, ...(await Promise.all(next.reads))]) {
      expect(result.frames[result.frames.length - 1].event).toMatchObject({ type: 'RUN_FINISHED', outcome: { type: 'cancelled' } });
      figures.stopAfterRestartMs.push(result.times[result.times.length - 1] - stoppedAt);
    }
    expect(Math.max(...figures.stopAfterRestartMs)).toBeLessThan(2000);
  });
});
