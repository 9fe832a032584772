import { EventType, type Event } from '@ag-ui/core';
import { from, map, pipe, type OperatorFunction } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import type { AgentEvent } from '../../../lib/protocol/agentEvent.js';
import { aguiMarbles, expectAgui, runWithOfficialClient, toBeWellFormedAgui } from '../../../lib/testing/index.js';
import { toAgui, type ToAguiOptions } from '../../../operators/toAgui.js';

// --- A user's own agent, as the user's code base would have it ------------------------------

/** What a made-up "weather bot" emits: its own event shape, nothing of AG-UI. */
type WeatherBotEvent =
  | { kind: 'think'; text: string }
  | { kind: 'say'; text: string }
  | { kind: 'call'; id: string; tool: string; args: Record<string, unknown> }
  | { kind: 'called'; id: string; output: unknown }
  | { kind: 'progress'; done: number; total: number };

/** The user's mapper: one bot event to one AgentEvent. */
function toAgentEvent(event: WeatherBotEvent): AgentEvent {
  switch (event.kind) {
    case 'think':
      return { type: EventType.REASONING_MESSAGE_CHUNK, delta: event.text };
    case 'say':
      return { type: EventType.TEXT_MESSAGE_CHUNK, delta: event.text };
    case 'call':
      return { type: EventType.TOOL_CALL_CHUNK, toolCallId: event.id, toolCallName: event.tool, delta: JSON.stringify(event.args) };
    case 'called':
      return { type: EventType.TOOL_CALL_RESULT, toolCallId: event.id, content: event.output as Record<string, unknown> };
    case 'progress':
      return { type: EventType.STATE_SNAPSHOT, snapshot: { progress: `${event.done}/${event.total}` } };
  }
}

/** The user's pipeline: their mapper, then agui-rx. */
function weatherBotToAgui(options: ToAguiOptions): OperatorFunction<WeatherBotEvent, Event> {
  return pipe(map(toAgentEvent), toAgui(options));
}

// --- The user's spec --------------------------------------------------------------------------

describe('weatherBotToAgui (a user pipeline tested with agui-rx/testing)', () => {
  let testScheduler: TestScheduler;

  beforeAll(() => {
    expect.extend({ toBeWellFormedAgui });
  });

  beforeEach(() => {
    testScheduler = new TestScheduler((actual, expected) => expect(actual).toEqual(expected));
  });

  it('should stream what the bot says as one text message', () =>
    testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
      const m = aguiMarbles();
      const say = m.text('id-1');
      const values: Record<string, WeatherBotEvent> = {
        a: { kind: 'say', text: 'Sunny' },
        b: { kind: 'say', text: ' today.' },
      };
      // prettier-ignore
      const e1 =  cold('--a----b--|    ', values);
      const e1subs =   '^---------!    ';
      const expected = 'S-(sc)-d--(eF|)';

      expectObservable(e1.pipe(weatherBotToAgui(m.runOptions))).toBe(expected, {
        S: m.run.started(),
        s: say.start(),
        c: say.content('Sunny'),
        d: say.content(' today.'),
        e: say.end(),
        F: m.run.finished(),
      });
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    }));

  it('should think, answer, call a tool and report progress, in the frames they happen', () =>
    testScheduler.run(({ cold, expectObservable }) => {
      const m = aguiMarbles();
      const thought = m.reasoning('id-1');
      const answer = m.text('id-2');
      const weather = m.toolCall('call-1', 'weather');
      const values: Record<string, WeatherBotEvent> = {
        t: { kind: 'think', text: 'Oslo?' },
        s: { kind: 'say', text: 'Checking.' },
        c: { kind: 'call', id: 'call-1', tool: 'weather', args: { city: 'Oslo' } },
        r: { kind: 'called', id: 'call-1', output: { celsius: -3 } },
        p: { kind: 'progress', done: 1, total: 1 },
      };
      const expectedValues = {
        S: m.run.started(),
        a: thought.start(),
        b: thought.messageStart(),
        c: thought.content('Oslo?'),
        d: thought.messageEnd(),
        e: thought.end(),
        f: answer.start(),
        g: answer.content('Checking.'),
        h: weather.start({ parentMessageId: 'id-2' }),
        i: weather.args('{"city":"Oslo"}'),
        j: answer.end(),
        k: weather.end(),
        l: weather.result('{"celsius":-3}', 'id-3'),
        m: m.state.snapshot({ progress: '1/1' }),
        F: m.run.finished(),
      };
      // prettier-ignore
      const e1 =  cold('-t----------s---------c-----------r----------p--|   ', values);
      const expected = 'S(abc)------(defg)----(hi)--------(jkl)------m--(F|)';

      expectObservable(e1.pipe(weatherBotToAgui(m.runOptions))).toBe(expected, expectedValues);
    }));

  it('should end the run with RUN_ERROR when the bot fails', () =>
    testScheduler.run(({ cold, expectObservable }) => {
      const m = aguiMarbles();
      const say = m.text('id-1');
      const values: Record<string, WeatherBotEvent> = { a: { kind: 'say', text: 'Hm' } };
      // prettier-ignore
      const e1 =  cold('--a---#    ', values, new Error('weather API down'));
      const expected = 'S-(sc)(eE|)';

      expectObservable(e1.pipe(weatherBotToAgui(m.runOptions))).toBe(expected, {
        S: m.run.started(),
        s: say.start(),
        c: say.content('Hm'),
        e: say.end(),
        E: m.run.error('weather API down'),
      });
    }));

  const conversation: WeatherBotEvent[] = [
    { kind: 'think', text: 'Oslo?' },
    { kind: 'say', text: 'Checking.' },
    { kind: 'call', id: 'call-1', tool: 'weather', args: { city: 'Oslo' } },
    { kind: 'called', id: 'call-1', output: { celsius: -3 } },
    { kind: 'progress', done: 1, total: 2 },
    { kind: 'say', text: 'It is -3°C.' },
    { kind: 'progress', done: 2, total: 2 },
  ];

  it('should give a well-formed AG-UI stream', async () => {
    const m = aguiMarbles();
    await expectAgui(from(conversation).pipe(weatherBotToAgui(m.runOptions))).toBeWellFormed();
    await expect(from(conversation).pipe(weatherBotToAgui(aguiMarbles().runOptions))).toBeWellFormedAgui();
  });

  it('should give the official client the conversation the bot meant', async () => {
    const run = await runWithOfficialClient(from(conversation).pipe(weatherBotToAgui(aguiMarbles().runOptions)));
    expect(run.newMessages).toEqual([
      { id: 'id-1', role: 'reasoning', content: 'Oslo?' },
      { id: 'id-2', role: 'assistant', content: 'Checking.', toolCalls: [{ id: 'call-1', type: 'function', function: { name: 'weather', arguments: '{"city":"Oslo"}' } }] },
      { id: 'id-3', role: 'tool', toolCallId: 'call-1', content: '{"celsius":-3}' },
      { id: 'id-4', role: 'assistant', content: 'It is -3°C.' },
    ]);
    expect(run.state).toEqual({ progress: '2/2' });
  });
});
