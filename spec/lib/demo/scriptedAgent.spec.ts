import { EventType, type Message, type RunAgentInput } from '@ag-ui/core';
import type { ChatCompletionChunk } from '../../../lib/adapters/index.js';
import { createChatAgent } from '../../../lib/demo/chatAgent.js';
import type { ChatModelRequest } from '../../../lib/demo/chatTypes.js';
import { paced } from '../../../lib/demo/paced.js';
import { createScriptedAgent, findPlace, scriptedChunks, SCRIPTED_MODEL, tokenPieces } from '../../../lib/demo/scriptedAgent.js';
import { toChatMessages } from '../../../lib/demo/toChatMessages.js';
import { demoTools, getTime, getWeather, runDemoTool } from '../../../lib/demo/tools.js';
import { toAgui } from '../../../operators/toAgui.js';
import { collect, createTestScheduler, sequentialIds } from '../../support/helpers.js';
import { runWithOracle } from '../../support/oracle.js';

const NOW = new Date('2026-11-29T12:34:00Z');
const now = () => NOW;

const request = (text: string): ChatModelRequest => ({ messages: [{ role: 'user', content: text }], tools: Object.values(demoTools).map((tool) => tool.declaration) });

const chunksOnly = (items: (ChatCompletionChunk | '[DONE]')[]) => items.filter((item): item is ChatCompletionChunk => item !== '[DONE]');

const input = (text: string, state: Record<string, unknown> = {}): RunAgentInput => ({
  threadId: 'thread-1',
  runId: 'run-1',
  state,
  messages: [{ id: 'user-1', role: 'user', content: text }],
  tools: [],
  context: [],
});

describe('scriptedChunks', () => {
  it('should stream a first turn in OpenAI chunk shapes: role, reasoning, text, two tool calls, finish, usage, [DONE]', () => {
    const items = scriptedChunks(request("What's the weather in Tokyo?"), { now, generateId: sequentialIds('id-') });
    const chunks = chunksOnly(items);
    expect(items[items.length - 1]).toBe('[DONE]');
    expect(new Set(chunks.map((chunk) => chunk.id))).toEqual(new Set(['chatcmpl-id-1']));
    expect(chunks.every((chunk) => chunk.object === 'chat.completion.chunk' && chunk.model === SCRIPTED_MODEL && chunk.created === NOW.getTime() / 1000)).toBe(true);
    expect(chunks[0].choices[0].delta).toEqual({ role: 'assistant', content: '', refusal: null });

    const deltas = chunks.flatMap((chunk) => chunk.choices.map((choice) => choice.delta));
    const reasoning = deltas.map((delta) => delta.reasoning_content ?? '').join('');
    const content = deltas.map((delta) => delta.content ?? '').join('');
    expect(reasoning).toBe('The user asks about Tokyo. Weather and local time are independent lookups: I will call get_weather and get_time in parallel.');
    expect(content).toBe('Let me look up the weather and the local time in Tokyo.');
    // A few characters per content chunk, as a model streams tokens.
    expect(deltas.filter((delta) => delta.content).every((delta) => delta.content!.length <= 8)).toBe(true);

    const pieces = deltas.flatMap((delta) => delta.tool_calls ?? []);
    expect(pieces.filter((piece) => piece.id)).toEqual([
      { index: 0, id: 'call_id-2', type: 'function', function: { name: 'get_weather', arguments: '' } },
      { index: 1, id: 'call_id-3', type: 'function', function: { name: 'get_time', arguments: '' } },
    ]);
    const args = (index: number) => pieces.filter((piece) => piece.index === index).map((piece) => piece.function?.arguments ?? '').join('');
    expect(args(0)).toBe('{"city":"Tokyo"}');
    expect(args(1)).toBe('{"timezone":"Asia/Tokyo"}');
    expect(pieces.filter((piece) => !piece.id).every((piece) => piece.function!.name === undefined && piece.function!.arguments!.length <= 6)).toBe(true);

    const finish = chunks.filter((chunk) => chunk.choices[0]?.finish_reason);
    expect(finish.map((chunk) => [chunk.choices[0].finish_reason, chunk.choices[0].delta])).toEqual([['tool_calls', {}]]);
    const last = chunks[chunks.length - 1];
    expect(last.choices).toEqual([]);
    expect(last.usage).toEqual({ prompt_tokens: expect.any(Number), completion_tokens: expect.any(Number), total_tokens: last.usage!.prompt_tokens! + last.usage!.completion_tokens! });
  });

  it('should write the final answer from the tool results', () => {
    const weather = JSON.stringify({ city: 'Oslo', condition: 'light rain', temperatureC: 4, humidityPercent: 80, windKmh: 20 });
    const time = JSON.stringify({ timezone: 'Europe/Oslo', date: '2026-11-29', time: '13:34', weekday: 'Sunday' });
    const items = scriptedChunks(
      {
        messages: [
          { role: 'user', content: 'Oslo?' },
          {
            role: 'assistant',
            content: 'Looking.',
            tool_calls: [
              { id: 'c1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } },
              { id: 'c2', type: 'function', function: { name: 'get_time', arguments: '{"timezone":"Europe/Oslo"}' } },
            ],
          },
          { role: 'tool', tool_call_id: 'c2', content: time },
          { role: 'tool', tool_call_id: 'c1', content: weather },
        ],
        tools: [],
      },
      { now, generateId: sequentialIds() },
    );
    const chunks = chunksOnly(items);
    expect(chunks.flatMap((chunk) => chunk.choices.map((choice) => choice.delta.content ?? '')).join('')).toBe(
      'In Oslo it is 4 °C and light rain, with 80 % humidity and wind at 20 km/h. The local time there is 13:34 on Sunday (2026-11-29, Europe/Oslo). Take an umbrella if you head out.',
    );
    expect(chunks.some((chunk) => chunk.choices[0]?.delta.tool_calls)).toBe(false);
    expect(chunks.find((chunk) => chunk.choices[0]?.finish_reason)!.choices[0].finish_reason).toBe('stop');
  });

  it('should use Lisbon, and say so, when no city is named', () => {
    const content = chunksOnly(scriptedChunks(request('hello'), { now, reasoning: false }))
      .flatMap((chunk) => chunk.choices.map((choice) => choice.delta))
      .map((delta) => {
        expect(delta.reasoning_content).toBeUndefined();
        return delta.content ?? '';
      })
      .join('');
    expect(content).toBe('You did not name a city, so I will use Lisbon: let me look up its weather and local time.');
  });
});

describe('findPlace', () => {
  it('should find a known city anywhere, in any case, and a capitalised name after "in"', () => {
    expect(findPlace('weather and local time in new york, please')).toEqual({ city: 'New York', timezone: 'America/New_York' });
    expect(findPlace('São Paulo now?')).toEqual({ city: 'São Paulo', timezone: 'America/Sao_Paulo' });
    expect(findPlace('How is it in Ouagadougou today?')).toEqual({ city: 'Ouagadougou', timezone: 'UTC' });
    expect(findPlace('romeo and juliet')).toBeUndefined();
  });
});

describe('tokenPieces', () => {
  it('should split text into short pieces that join back to it', () => {
    const text = "It's 21 °C in São Paulo — lovely!\nNext line.";
    const pieces = tokenPieces(text);
    expect(pieces.join('')).toBe(text);
    expect(pieces.every((piece) => piece.length <= 8)).toBe(true);
  });
});

describe('demo tools', () => {
  it('should give the same weather for the same city, and the time in the zone', () => {
    expect(getWeather.run({ city: 'Tokyo' }, { now })).toEqual(getWeather.run({ city: ' tokyo ' }, { now }) && getWeather.run({ city: 'Tokyo' }, { now }));
    expect(getTime.run({ timezone: 'Asia/Tokyo' }, { now })).toEqual({ timezone: 'Asia/Tokyo', date: '2026-11-29', time: '21:34', weekday: 'Sunday' });
  });

  it('should answer bad calls with an error result and keep the state', () => {
    const state = { lookups: 1 };
    const results = [
      runDemoTool(demoTools, 'get_weather', '{"city":', state, { now }),
      runDemoTool(demoTools, 'get_weather', '{}', state, { now }),
      runDemoTool(demoTools, 'get_time', '{"timezone":"Mars/Olympus"}', state, { now }),
      runDemoTool(demoTools, 'toString', '{}', state, { now }),
    ];
    expect(results.map((result) => result.state)).toEqual([state, state, state, state]);
    expect(results.map((result) => JSON.parse(result.content).error)).toEqual([
      expect.stringMatching(/^The arguments are not valid JSON/),
      `Argument 'city' must be a non-empty string, e.g. "Paris".`,
      'Unknown time zone "Mars/Olympus": use an IANA name such as "Europe/Paris" or "UTC".',
      'There is no tool named "toString". Call one of: get_weather, get_time.',
    ]);
  });
});

describe('toChatMessages', () => {
  it('should map AG-UI messages to OpenAI messages and drop tool calls left without a result', () => {
    const messages: Message[] = [
      { id: 's', role: 'system', content: 'Be brief.' },
      { id: 'u', role: 'user', content: [{ type: 'text', text: 'Hi' }] },
      { id: 'r', role: 'reasoning', content: 'thinking' },
      {
        id: 'a',
        role: 'assistant',
        content: 'Looking.',
        toolCalls: [
          { id: 'c1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Rome"}' } },
          { id: 'c2', type: 'function', function: { name: 'get_time', arguments: '{"timezone":"Europe/Rome"}' } },
        ],
      },
      { id: 't1', role: 'tool', toolCallId: 'c1', content: '{"ok":true}' },
      { id: 'a2', role: 'assistant', toolCalls: [{ id: 'c3', type: 'function', function: { name: 'get_time', arguments: '{}' } }] },
      { id: 't9', role: 'tool', toolCallId: 'nobody', content: 'orphan' },
    ];
    expect(toChatMessages(messages)).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Hi' },
      { role: 'assistant', content: 'Looking.', tool_calls: [{ id: 'c1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Rome"}' } }] },
      { role: 'tool', tool_call_id: 'c1', content: '{"ok":true}' },
    ]);
  });
});

describe('paced', () => {
  it('should wait between items, not before the first', () => {
    createTestScheduler().run(({ expectObservable }) => {
      expectObservable(paced(['a', 'b', 'c'], 3)).toBe('a 2ms b 2ms (c|)');
    });
  });

  it('should clear its timer when unsubscribed', () => {
    createTestScheduler().run(({ expectObservable }) => {
      expectObservable(paced(['a', 'b', 'c'], [20, 40]), '^ 10ms !').toBe('a');
    });
  });
});

describe('createScriptedAgent', () => {
  it('should answer, call two tools in parallel, change state and answer again, accepted by the official client', async () => {
    const agent = createScriptedAgent({ pace: 0, toolLatency: 0, now, generateId: sequentialIds('id-') });
    const signal = new AbortController().signal;
    const run = await runWithOracle(() => agent(input('Weather in Tokyo?', { theme: 'dark' }), { signal }).pipe(toAgui({ threadId: 'thread-1', runId: 'run-1', initialState: { theme: 'dark' } })), {
      initialMessages: input('Weather in Tokyo?').messages,
      initialState: { theme: 'dark' },
    });
    const conversation = run.messages.filter((message) => message.role !== 'reasoning');
    expect(conversation).toEqual([
      { id: 'user-1', role: 'user', content: 'Weather in Tokyo?' },
      {
        id: 'chatcmpl-id-1',
        role: 'assistant',
        content: 'Let me look up the weather and the local time in Tokyo.',
        toolCalls: [
          { id: 'call_id-2', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Tokyo"}' } },
          { id: 'call_id-3', type: 'function', function: { name: 'get_time', arguments: '{"timezone":"Asia/Tokyo"}' } },
        ],
      },
      { id: expect.any(String), role: 'tool', toolCallId: 'call_id-2', content: JSON.stringify(getWeather.run({ city: 'Tokyo' }, { now })) },
      { id: expect.any(String), role: 'tool', toolCallId: 'call_id-3', content: '{"timezone":"Asia/Tokyo","date":"2026-11-29","time":"21:34","weekday":"Sunday"}' },
      { id: 'chatcmpl-id-4', role: 'assistant', content: expect.stringMatching(/^In Tokyo it is -?\d+ °C .* The local time there is 21:34 on Sunday \(2026-11-29, Asia\/Tokyo\)\./) },
    ]);
    expect(run.state).toEqual({ theme: 'dark', lastCity: 'Tokyo', lastTimezone: 'Asia/Tokyo', lookups: 2 });
    // One state change per tool result (a snapshot or a delta, whichever stateDelta finds smaller).
    expect(run.events.filter((event) => event.type === EventType.STATE_DELTA || event.type === EventType.STATE_SNAPSHOT)).toHaveLength(2);
    const finished = run.events[run.events.length - 1] as { type: string; usage?: unknown };
    expect(finished.usage).toEqual([{ model: SCRIPTED_MODEL, inputTokens: expect.any(Number), outputTokens: expect.any(Number), totalTokens: expect.any(Number) }]);
  });

  it('should clear its chunk and tool timers when unsubscribed', () => {
    jest.useFakeTimers();
    try {
      const agent = createScriptedAgent({ pace: 5, toolLatency: 10_000 });
      const received: string[] = [];
      const subscription = agent(input('Rome'), { signal: new AbortController().signal }).subscribe((event) => received.push(event.type));
      jest.advanceTimersByTime(50);
      expect(received).toContain(EventType.REASONING_MESSAGE_CHUNK);
      expect(jest.getTimerCount()).toBe(1);
      subscription.unsubscribe();
      expect(jest.getTimerCount()).toBe(0);

      // Later, while the tools run on the server.
      const later = agent(input('Rome'), { signal: new AbortController().signal }).subscribe((event) => received.push(event.type));
      jest.advanceTimersByTime(5_000);
      expect(received).toContain(EventType.TOOL_CALL_CHUNK);
      expect(received).not.toContain(EventType.TOOL_CALL_RESULT);
      expect(jest.getTimerCount()).toBe(2);
      later.unsubscribe();
      expect(jest.getTimerCount()).toBe(0);
    } finally {
      jest.useRealTimers();
    }
  });
});

describe('createChatAgent', () => {
  it('should gather calls as the adapter does (every call at index 0) and send them back with their results', async () => {
    const requests: ChatModelRequest[] = [];
    const piece = (call: object): ChatCompletionChunk => ({ id: 'c1', choices: [{ index: 0, delta: { tool_calls: [call as never] }, finish_reason: null }] });
    const agent = createChatAgent({
      now,
      model: (req) => {
        requests.push(req);
        if (requests.length > 1) return paced<ChatCompletionChunk>([{ id: 'c2', choices: [{ index: 0, delta: { content: 'Done.' }, finish_reason: 'stop' }] }], 0);
        return paced<ChatCompletionChunk | '[DONE]'>(
          [
            piece({ index: 0, id: 'a', type: 'function', function: { name: 'get_weather', arguments: '{"ci' } }),
            piece({ index: 0, function: { arguments: 'ty":"Rome"}' } }),
            piece({ index: 0, id: 'b', type: 'function', function: { name: 'get_time', arguments: '' } }),
            piece({ index: 0, function: { arguments: '{"timezone":"Europe/Rome"}' } }),
            { id: 'c1', choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }] },
            '[DONE]',
          ],
          0,
        );
      },
    });
    const events = await collect(agent(input('Rome'), { signal: new AbortController().signal }));
    expect(requests[1].messages.slice(1)).toEqual([
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'a', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Rome"}' } },
          { id: 'b', type: 'function', function: { name: 'get_time', arguments: '{"timezone":"Europe/Rome"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'a', content: JSON.stringify(getWeather.run({ city: 'Rome' }, { now })) },
      { role: 'tool', tool_call_id: 'b', content: '{"timezone":"Europe/Rome","date":"2026-11-29","time":"13:34","weekday":"Sunday"}' },
    ]);
    expect(events.filter((event) => event.type === EventType.TOOL_CALL_RESULT).map((event) => (event as { toolCallId: string }).toolCallId)).toEqual(['a', 'b']);
  });

  it('should not ask the model again after maxTurns', async () => {
    let requests = 0;
    const agent = createChatAgent({
      maxTurns: 2,
      model: (req) => {
        requests++;
        return paced(scriptedChunks({ ...req, messages: req.messages.filter((message) => message.role === 'user') }, { now, reasoning: false }), 0);
      },
    });
    const events = await collect(agent(input('Paris'), { signal: new AbortController().signal }));
    expect(requests).toBe(2);
    expect(events.filter((event) => event.type === EventType.TOOL_CALL_RESULT)).toHaveLength(2);
  });
});
