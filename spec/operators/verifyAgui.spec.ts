import { EventType, type Event } from '@ag-ui/core';
import { Subject, from, of, throwError } from 'rxjs';
import { AguiRxError } from '../../lib/protocol/errors.js';
import type { AguiViolation } from '../../lib/tracking/verifier.js';
import { mapRunLifecycle } from '../../operators/mapRunLifecycle.js';
import { formatAguiViolation, verifyAgui, type VerifyAguiOptions } from '../../operators/verifyAgui.js';
import { fixtureFiles, haveFixtures, readAguiRecording } from '../support/fixtures.js';
import { collect, createTestScheduler, typesOf } from '../support/helpers.js';
import { runWithOracle } from '../support/oracle.js';

const S = { type: EventType.RUN_STARTED, threadId: 't1', runId: 'r1' } as Event;
const F = { type: EventType.RUN_FINISHED, threadId: 't1', runId: 'r1' } as Event;
const ms = { type: EventType.TEXT_MESSAGE_START, messageId: 'm1', role: 'assistant' } as Event;
const mc = { type: EventType.TEXT_MESSAGE_CONTENT, messageId: 'm1', delta: 'Hi' } as Event;
const me = { type: EventType.TEXT_MESSAGE_END, messageId: 'm1' } as Event;

const contentWithoutStart = `#1 TEXT_MESSAGE_CONTENT: TEXT_MESSAGE_CONTENT for text message 'm1', which is not open. Send TEXT_MESSAGE_START first, and nothing for the text message after its TEXT_MESSAGE_END. [content-without-start]`;
const violation = (message: string) => new AguiRxError('AGUI_VIOLATION', message);

/** Runs `events` through verifyAgui in report mode: the events it passed on and the violations it reported. */
async function report(events: readonly unknown[]): Promise<{ passed: Event[]; violations: AguiViolation[] }> {
  const violations: AguiViolation[] = [];
  const passed = await collect(from(events as Event[]).pipe(verifyAgui({ mode: 'report', onViolation: (found) => void violations.push(found) })));
  return { passed, violations };
}

/** The error verifyAgui (error mode, `strict` as given) ends `events` with, or undefined when it completes. */
async function errorOf(events: readonly unknown[], strict = false): Promise<AguiRxError | undefined> {
  try {
    await collect(from(events as Event[]).pipe(verifyAgui({ strict, onViolation: () => undefined })));
    return undefined;
  } catch (error) {
    return error as AguiRxError;
  }
}

/** The official client's verdict on a stream: accepted, or rejected. */
async function officialVerdict(events: readonly unknown[]): Promise<'valid' | 'invalid'> {
  const warn = jest.spyOn(console, 'warn').mockImplementation(() => undefined);
  try {
    await runWithOracle(from(events as Event[]));
    return 'valid';
  } catch {
    return 'invalid';
  } finally {
    warn.mockRestore();
  }
}

// Only a violation makes a stream invalid: warnings are what the client tolerates, and our own stricter checks.
const fatal = (violations: readonly AguiViolation[]) => violations.filter((v) => v.severity === 'violation');

describe('verifyAgui', () => {
  describe('marbles', () => {
    it('should pass a well-formed run unchanged', () => {
      createTestScheduler().run(({ cold, expectObservable }) => {
        const values = { S, s: ms, c: mc, e: me, F };
        expectObservable(cold('-S-s-c-e-F-|', values).pipe(verifyAgui())).toBe('-S-s-c-e-F-|', values);
      });
    });

    it('should error at the first violation with AGUI_VIOLATION, naming the index and the rule (error mode)', () => {
      createTestScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
        const source = cold('-S-c-e-F-|', { S, c: mc, e: me, F });
        expectObservable(source.pipe(verifyAgui())).toBe('-S-#', { S }, violation(contentWithoutStart));
        expectSubscriptions(source.subscriptions).toBe('^--!');
      });
    });

    it('should pass every event and report every violation (report mode)', () => {
      createTestScheduler().run(({ cold, expectObservable, flush }) => {
        const found: AguiViolation[] = [];
        const values = { S, c: mc, e: me, F };
        expectObservable(cold('-S-c-e-F-|', values).pipe(verifyAgui({ mode: 'report', onViolation: (v) => void found.push(v) }))).toBe('-S-c-e-F-|', values);
        flush();
        expect(found.map((v) => `#${v.index} ${v.type} ${v.rule}`)).toEqual(['#1 TEXT_MESSAGE_CONTENT content-without-start', '#2 TEXT_MESSAGE_END end-without-start']);
      });
    });

    it('should error instead of completing when the stream stops mid-run (error mode, strict)', () => {
      createTestScheduler().run(({ cold, expectObservable }) => {
        const message = `#2 (end of stream): The stream ended during run 'r1' (started at #0) without RUN_FINISHED or RUN_ERROR. End every run with one of them. [no-terminal-event, warning]`;
        expectObservable(cold('-S-s-|', { S, s: ms }).pipe(verifyAgui({ strict: true }))).toBe('-S-s-#', { S, s: ms }, violation(message));
      });
    });

    it('should report a warning and go on, in error mode unless strict (a stream that stops mid-run)', () => {
      createTestScheduler().run(({ cold, expectObservable, flush }) => {
        const found: AguiViolation[] = [];
        expectObservable(cold('-S-s-|', { S, s: ms }).pipe(verifyAgui({ onViolation: (v) => void found.push(v) }))).toBe('-S-s-|', { S, s: ms });
        flush();
        expect(found.map((v) => `#${v.index} ${v.rule} ${v.severity}`)).toEqual(['#2 no-terminal-event warning', '#2 open-at-end warning']);
      });
    });

    it('should pass an event of an unknown type with a warning, and still error at a violation after it (error mode)', () => {
      createTestScheduler().run(({ cold, expectObservable, flush }) => {
        const found: AguiViolation[] = [];
        const values = { S, u: { type: 'PROGRESS_UPDATE' } as unknown as Event, c: mc };
        expectObservable(cold('-S-u-c-|', values).pipe(verifyAgui({ onViolation: (v) => void found.push(v) }))).toBe('-S-u-#', { S, u: values.u }, violation(contentWithoutStart.replace('#1', '#2')));
        flush();
        expect(found.map((v) => `#${v.index} ${v.rule} ${v.severity}`)).toEqual(['#1 unknown-type warning']);
      });
    });

    it('should report what the end of the stream finds, then complete (report mode)', () => {
      createTestScheduler().run(({ cold, expectObservable, flush }) => {
        const found: AguiViolation[] = [];
        expectObservable(cold('-S-s-|', { S, s: ms }).pipe(verifyAgui({ mode: 'report', onViolation: (v) => void found.push(v) }))).toBe('-S-s-|', { S, s: ms });
        flush();
        expect(found.map((v) => `#${v.index} ${v.rule}`)).toEqual(['#2 no-terminal-event', '#2 open-at-end']);
      });
    });

    it('should pass a source error through unchanged', () => {
      createTestScheduler().run(({ cold, expectObservable }) => {
        const boom = new Error('boom');
        expectObservable(cold('-S-#', { S }, boom).pipe(verifyAgui())).toBe('-S-#', { S }, boom);
      });
    });

    it('should give each subscription its own verifier (indexes from 0)', () => {
      createTestScheduler().run(({ cold, expectObservable }) => {
        const checked = cold('-S-F-|', { S, F }).pipe(verifyAgui());
        expectObservable(checked).toBe('-S-F-|', { S, F });
        expectObservable(checked).toBe('-S-F-|', { S, F });
      });
    });
  });

  describe('error mode', () => {
    it('should name the index, type, message and rule in the error, with code AGUI_VIOLATION', async () => {
      const error = await errorOf([S, mc, F]);
      expect(error).toBeInstanceOf(AguiRxError);
      expect(error?.code).toBe('AGUI_VIOLATION');
      expect(error?.message).toBe(contentWithoutStart);
    });

    it('should show a value that is not an event as (not an event), a warning (strict)', async () => {
      expect((await errorOf([S, 'oops', F], true))?.message).toBe(`#1 (not an event): Expected an AG-UI event object, got "oops"; a consumer cannot read it as an event. [not-an-event, warning]`);
    });

    it('should report an empty stream as no-run, a warning (strict)', async () => {
      expect((await errorOf([], true))?.message).toMatch(/^#0 \(end of stream\): The stream holds no run\..* \[no-run, warning\]$/);
    });

    it('should stop a synchronous source at the violation', async () => {
      let sent = 0;
      const source = new Subject<Event>();
      const errors: unknown[] = [];
      source.pipe(verifyAgui()).subscribe({ error: (error) => void errors.push(error) });
      for (const event of [S, mc, me, F]) {
        if (source.observed) sent++;
        source.next(event);
      }
      expect(sent).toBe(2);
      expect(errors).toHaveLength(1);
    });

    it('should check the wire output of mapRunLifecycle and let a valid run through', async () => {
      const events = await collect(of<Event[]>(ms, mc, me).pipe(mapRunLifecycle({ threadId: 't1', runId: 'r1' }), verifyAgui()));
      expect(typesOf(events)).toEqual(['RUN_STARTED', 'TEXT_MESSAGE_START', 'TEXT_MESSAGE_CONTENT', 'TEXT_MESSAGE_END', 'RUN_FINISHED']);
    });

    it('should become RUN_ERROR under a lifecycle placed after it', async () => {
      // Without its own RUN_STARTED the inner stream breaks first-event; the lifecycle after it turns the error into RUN_ERROR.
      const events = await collect(of<Event[]>(ms, me).pipe(verifyAgui(), mapRunLifecycle({ threadId: 't1', runId: 'r1' })));
      expect(typesOf(events)).toEqual(['RUN_STARTED', 'RUN_ERROR']);
      expect(events[1]).toMatchObject({ code: 'AGUI_VIOLATION', message: expect.stringMatching(/^#0 TEXT_MESSAGE_START: .*\[first-event\]$/) });
    });
  });

  describe('report mode', () => {
    it('should pass every event unchanged and report each violation once', async () => {
      const events = [S, ms, ms, mc, me, F];
      const { passed, violations } = await report(events);
      expect(passed).toEqual(events);
      expect(passed[1]).toBe(ms);
      expect(violations.map(({ index, rule }) => `#${index} ${rule}`)).toEqual(['#2 duplicate-start']);
    });

    it('should warn through console.warn by default, in the error format', async () => {
      const warn = jest.spyOn(console, 'warn').mockImplementation(() => undefined);
      try {
        await collect(from([S, mc, F]).pipe(verifyAgui({ mode: 'report' })));
        expect(warn.mock.calls).toEqual([[`[agui-rx] ${contentWithoutStart}`]]);
      } finally {
        warn.mockRestore();
      }
    });

    it('should error the stream when onViolation throws', async () => {
      const thrown = new Error('stop');
      await expect(
        collect(
          from([S, mc, F]).pipe(
            verifyAgui({
              mode: 'report',
              onViolation: () => {
                throw thrown;
              },
            }),
          ),
        ),
      ).rejects.toBe(thrown);
    });
  });

  describe('options', () => {
    it('should reject an unknown mode and a non-function onViolation at call time (INVALID_OPTIONS)', () => {
      expect(() => verifyAgui({ mode: 'warn' } as unknown as VerifyAguiOptions)).toThrow(expect.objectContaining({ code: 'INVALID_OPTIONS', message: expect.stringContaining("'mode'") }));
      expect(() => verifyAgui({ onViolation: 'log' } as unknown as VerifyAguiOptions)).toThrow(expect.objectContaining({ code: 'INVALID_OPTIONS', message: expect.stringContaining("'onViolation'") }));
    });

    it('should format a violation as #<index> <TYPE>: <message> [<rule>]', () => {
      expect(formatAguiViolation({ index: 3, type: 'RUN_STARTED', rule: 'run-already-started', message: 'Twice.' })).toBe('#3 RUN_STARTED: Twice. [run-already-started]');
      expect(formatAguiViolation({ index: 4, rule: 'no-run', message: 'None.' }, true)).toBe('#4 (end of stream): None. [no-run]');
    });
  });

  it('should do what its doc example says', () => {
    const lines: string[] = [];
    from<Event[]>([S, mc, F])
      .pipe(verifyAgui())
      .subscribe({ next: (e) => void lines.push(e.type), error: (error) => void lines.push(`${error.code} ${error.message}`) });
    expect(lines.join(', ')).toBe(`RUN_STARTED, AGUI_VIOLATION ${contentWithoutStart}`);
  });

  describe('agreement with the official client (@ag-ui/client runAgent)', () => {
    // Warnings (see lib/tracking/verifier.ts): the client accepts these; verifyAgui passes them, and rejects them when strict.
    const stricter: [string, unknown[], string][] = [
      ['an unknown event type', [S, { type: 'PROGRESS_UPDATE', percent: 50 }, F], 'unknown-type'],
      ['an unknown outcome', [S, { ...F, outcome: { type: 'handoff' } }], 'unknown-outcome'],
      ['a value that is not an event', [S, 'oops', F], 'not-an-event'],
      ['a stream that stops mid-run', [S, ms], 'no-terminal-event'],
      ['an empty stream', [], 'no-run'],
    ];

    it.each(stricter)('should pass, and reject only when strict, where the client accepts, %s', async (_name, events, rule) => {
      expect(await errorOf(events)).toBeUndefined();
      expect((await errorOf(events, true))?.message).toMatch(new RegExp(`\\[${rule}, warning\\]$`));
      expect(await officialVerdict(events)).toBe('valid');
    });

    const recordings = fixtureFiles('ag-ui', ['.json', '.jsonl']);

    (haveFixtures ? describe : describe.skip)(`recorded AG-UI streams${haveFixtures ? '' : ' (skipped: ../shared/fixtures is absent)'}`, () => {
      it('should find the recordings', () => {
        expect(recordings.length).toBeGreaterThanOrEqual(8);
      });

      it.each(recordings)('should agree with the client on %s, and on it broken', async (name) => {
        const events = readAguiRecording('ag-ui', name);
        const variants = [events, events.slice(1), [...events, { type: 'STATE_SNAPSHOT', snapshot: {} }], [...events.slice(0, 2), events[1], ...events.slice(2)]];
        for (const variant of variants) {
          const { passed, violations } = await report(variant);
          expect(passed).toEqual(variant);
          const ours = fatal(violations).length > 0 ? 'invalid' : 'valid';
          expect({ name, variant: variants.indexOf(variant), ours }).toEqual({ name, variant: variants.indexOf(variant), ours: await officialVerdict(variant) });
        }
        // The recording itself is valid, end to end, in error mode too.
        expect(await errorOf(events)).toBeUndefined();
      });
    });

    describe('generated streams', () => {
      const COUNT = 400;
      const streams = Array.from({ length: COUNT }, (_, seed) => generateStream(seed));

      it(`should agree with the client on ${COUNT} seeded random streams, valid and broken`, async () => {
        const tally = { valid: 0, invalid: 0, stricterOnly: 0 };
        const disagreements: unknown[] = [];
        for (const [seed, events] of streams.entries()) {
          const { passed, violations } = await report(events);
          expect(passed).toEqual(events);
          const streamed = fatal(violations);
          const official = await officialVerdict(events);
          const ours = streamed.length > 0 ? 'invalid' : 'valid';
          if (ours !== official) disagreements.push({ seed, ours, official, rules: violations.map((v) => `#${v.index} ${v.rule}`), events });
          tally[ours]++;
          // Only warnings may be stricter than the client; error mode rejects exactly the violations report mode reports, and strict mode the warnings too.
          if (streamed.length === 0 && violations.length > 0) tally.stricterOnly++;
          expect((await errorOf(events)) !== undefined).toBe(streamed.length > 0);
          expect((await errorOf(events, true)) !== undefined).toBe(violations.length > 0);
        }
        console.log(`verifyAgui agreement: ${COUNT - disagreements.length}/${COUNT} streams (${tally.valid} valid, ${tally.invalid} invalid; ${tally.stricterOnly} with warnings only, stricter by design)`);
        expect(disagreements).toEqual([]);
        // The generator must exercise both verdicts.
        expect(tally.valid).toBeGreaterThan(COUNT / 5);
        expect(tally.invalid).toBeGreaterThan(COUNT / 5);
      });
    });
  });
});

/** mulberry32: a small seeded PRNG, so a failing stream can be replayed from its seed. */
function prng(seed: number): () => number {
  let a = seed + 0x9e3779b9;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * A random AG-UI stream: a mostly well-formed run built by a state machine over a few ids, then
 * (for most seeds) broken by a few random mutations: drop, duplicate, swap, or insert a random event.
 */
function generateStream(seed: number): Record<string, unknown>[] {
  const random = prng(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)];
  const messageIds = ['m1', 'm2', 'm3'];
  const toolIds = ['c1', 'c2'];
  const reasoningIds = ['r1', 'r2'];
  const steps = ['plan', 'act'];
  const subagents = ['s1', 's2'];
  let resultCount = 0;

  // Any single event, right or wrong for where it lands.
  const anyEvent = (): Record<string, unknown> => {
    const m = pick(messageIds);
    const c = pick(toolIds);
    const r = pick(reasoningIds);
    const choices: (() => Record<string, unknown>)[] = [
      () => ({ type: 'RUN_STARTED', threadId: 't1', runId: 'r1' }),
      () => ({ type: 'RUN_FINISHED', threadId: 't1', runId: 'r1' }),
      () => ({ type: 'RUN_ERROR', message: 'boom' }),
      () => ({ type: 'TEXT_MESSAGE_START', messageId: m, role: 'assistant' }),
      () => ({ type: 'TEXT_MESSAGE_CONTENT', messageId: m, delta: 'x' }),
      () => ({ type: 'TEXT_MESSAGE_END', messageId: m }),
      () => ({ type: 'TEXT_MESSAGE_CHUNK', messageId: random() < 0.8 ? m : undefined, delta: 'y' }),
      () => ({ type: 'TOOL_CALL_START', toolCallId: c, toolCallName: 'search' }),
      () => ({ type: 'TOOL_CALL_ARGS', toolCallId: c, delta: '{}' }),
      () => ({ type: 'TOOL_CALL_END', toolCallId: c }),
      () => ({ type: 'TOOL_CALL_CHUNK', toolCallId: c, ...(random() < 0.7 ? { toolCallName: 'search' } : {}), delta: '{}' }),
      () => ({ type: 'TOOL_CALL_RESULT', messageId: `res${++resultCount}`, toolCallId: c, content: 'ok' }),
      () => ({ type: 'REASONING_START', messageId: r }),
      () => ({ type: 'REASONING_MESSAGE_START', messageId: r, role: 'reasoning' }),
      () => ({ type: 'REASONING_MESSAGE_CONTENT', messageId: r, delta: 'hmm' }),
      () => ({ type: 'REASONING_MESSAGE_END', messageId: r }),
      () => ({ type: 'REASONING_END', messageId: r }),
      () => ({ type: 'STEP_STARTED', stepName: pick(steps) }),
      () => ({ type: 'STEP_FINISHED', stepName: pick(steps) }),
      () => ({ type: 'STATE_SNAPSHOT', snapshot: { n: 1 } }),
      () => ({ type: 'CUSTOM', name: 'note', value: 1 }),
      () => ({ type: 'SUBAGENT_STARTED', subagentRunId: pick(subagents), name: 'helper' }),
      () => ({ type: 'SUBAGENT_FINISHED', subagentRunId: pick(subagents) }),
    ];
    return pick(choices)();
  };

  // A well-formed run: open, continue and close entities in a random interleaving.
  const events: Record<string, unknown>[] = [{ type: 'RUN_STARTED', threadId: 't1', runId: 'r1' }];
  const openMessages = new Set<string>();
  const openTools = new Set<string>();
  const openSteps = new Set<string>();
  const openSubagents = new Set<string>();
  const endedSubagents = new Set<string>();
  let reasoning: { id: string; message: boolean } | undefined;
  const length = 3 + Math.floor(random() * 14);
  for (let i = 0; i < length; i++) {
    const roll = random();
    if (roll < 0.25) {
      const free = messageIds.filter((id) => !openMessages.has(id));
      if (free.length > 0 && random() < 0.5) {
        const id = pick(free);
        openMessages.add(id);
        events.push({ type: 'TEXT_MESSAGE_START', messageId: id, role: 'assistant' });
      } else if (openMessages.size > 0) {
        const id = pick([...openMessages]);
        if (random() < 0.6) events.push({ type: 'TEXT_MESSAGE_CONTENT', messageId: id, delta: 'x' });
        else {
          openMessages.delete(id);
          events.push({ type: 'TEXT_MESSAGE_END', messageId: id });
        }
      }
    } else if (roll < 0.45) {
      const free = toolIds.filter((id) => !openTools.has(id));
      if (free.length > 0 && random() < 0.5) {
        const id = pick(free);
        openTools.add(id);
        events.push({ type: 'TOOL_CALL_START', toolCallId: id, toolCallName: 'search' });
      } else if (openTools.size > 0) {
        const id = pick([...openTools]);
        if (random() < 0.5) events.push({ type: 'TOOL_CALL_ARGS', toolCallId: id, delta: '{}' });
        else {
          openTools.delete(id);
          events.push({ type: 'TOOL_CALL_END', toolCallId: id }, { type: 'TOOL_CALL_RESULT', messageId: `res${++resultCount}`, toolCallId: id, content: 'ok' });
        }
      }
    } else if (roll < 0.55) {
      if (reasoning === undefined) {
        reasoning = { id: pick(reasoningIds), message: false };
        events.push({ type: 'REASONING_START', messageId: reasoning.id });
      } else if (!reasoning.message && random() < 0.6) {
        reasoning.message = true;
        events.push({ type: 'REASONING_MESSAGE_START', messageId: reasoning.id, role: 'reasoning' }, { type: 'REASONING_MESSAGE_CONTENT', messageId: reasoning.id, delta: 'hmm' });
      } else {
        if (reasoning.message) events.push({ type: 'REASONING_MESSAGE_END', messageId: reasoning.id });
        events.push({ type: 'REASONING_END', messageId: reasoning.id });
        reasoning = undefined;
      }
    } else if (roll < 0.65) {
      const name = pick(steps);
      events.push({ type: openSteps.has(name) ? 'STEP_FINISHED' : 'STEP_STARTED', stepName: name });
      if (openSteps.has(name)) openSteps.delete(name);
      else openSteps.add(name);
    } else if (roll < 0.72) {
      const id = pick(subagents);
      if (openSubagents.has(id)) {
        openSubagents.delete(id);
        endedSubagents.add(id);
        events.push({ type: 'SUBAGENT_FINISHED', subagentRunId: id });
      } else if (!endedSubagents.has(id)) {
        openSubagents.add(id);
        events.push({ type: 'SUBAGENT_STARTED', subagentRunId: id, name: 'helper' });
      }
    } else if (roll < 0.82) {
      // A chunk stream of its own: closed by the next event that is not a chunk of it.
      const id = `k${i}`;
      events.push({ type: 'TEXT_MESSAGE_CHUNK', messageId: id, role: 'assistant', delta: 'a' }, { type: 'TEXT_MESSAGE_CHUNK', delta: 'b' });
      events.push({ type: 'CUSTOM', name: 'note', value: i });
    } else {
      events.push(random() < 0.5 ? { type: 'STATE_SNAPSHOT', snapshot: { i } } : { type: 'CUSTOM', name: 'note', value: i });
    }
  }
  // Close what is open, then end the run (mostly with RUN_FINISHED).
  for (const id of openMessages) events.push({ type: 'TEXT_MESSAGE_END', messageId: id });
  for (const id of openTools) events.push({ type: 'TOOL_CALL_END', toolCallId: id });
  if (reasoning !== undefined) {
    if (reasoning.message) events.push({ type: 'REASONING_MESSAGE_END', messageId: reasoning.id });
    events.push({ type: 'REASONING_END', messageId: reasoning.id });
  }
  for (const name of openSteps) events.push({ type: 'STEP_FINISHED', stepName: name });
  for (const id of openSubagents) events.push({ type: 'SUBAGENT_FINISHED', subagentRunId: id });
  events.push(random() < 0.85 ? { type: 'RUN_FINISHED', threadId: 't1', runId: 'r1' } : { type: 'RUN_ERROR', message: 'boom' });

  // Break about 60% of them, 1 to 3 times.
  if (random() < 0.6) {
    const mutations = 1 + Math.floor(random() * 3);
    for (let k = 0; k < mutations; k++) {
      const at = Math.floor(random() * events.length);
      const how = random();
      if (how < 0.3 && events.length > 1) events.splice(at, 1);
      else if (how < 0.5) events.splice(at, 0, { ...events[at] });
      else if (how < 0.7 && at + 1 < events.length) [events[at], events[at + 1]] = [events[at + 1], events[at]];
      else events.splice(at, 0, anyEvent());
    }
  }
  return events;
}
