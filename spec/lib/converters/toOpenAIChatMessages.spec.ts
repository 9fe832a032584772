import type { Message } from '@ag-ui/core';
import { toOpenAIChatMessages } from '../../../lib/converters/toOpenAIChatMessages.js';
import { filesOfEveryProvider, malformedMessages, thrown } from '../../support/malformedMessages.js';

const png = { type: 'data', value: 'iVBORw0KGgo=', mimeType: 'image/png' } as const;
const call = (id: string) => ({ id, type: 'function' as const, function: { name: 'look', arguments: '{}' } });
// The assistant message that made calls `ids`, and what it converts to: a result needs its call before it.
const calling = (...ids: string[]): Message => ({ id: 'a0', role: 'assistant', toolCalls: ids.map(call) });
const called = (...ids: string[]) => ({ role: 'assistant', content: null, tool_calls: ids.map(call) });

/** Converts with a warning sink, and returns both. */
function convert(messages: Message[]) {
  const warnings: string[] = [];
  const result = toOpenAIChatMessages(messages, { onWarning: (message) => void warnings.push(message) });
  return { result, warnings };
}

describe('toOpenAIChatMessages', () => {
  it.each(malformedMessages('toOpenAIChatMessages'))('should refuse %s with an error that says what is wrong and where', (_, messages, error) => {
    expect(thrown(() => toOpenAIChatMessages(messages as never))).toEqual({ name: 'AguiRxError', code: error.code, message: error.message });
  });

  it('should take an assistant message with null content or null toolCalls as one without', () => {
    expect(() => toOpenAIChatMessages([{ id: 'u1', role: 'user', content: 'Hi' }, { id: 'a1', role: 'assistant', content: null, toolCalls: null } as never], { onWarning: () => undefined })).not.toThrow();
  });

  it('should keep system and developer messages in the list with their role and name', () => {
    expect(
      convert([
        { id: 's1', role: 'system', content: 'Be brief.' },
        { id: 'd1', role: 'developer', content: 'Answer in French.', name: 'ops' },
        { id: 'u1', role: 'user', content: 'Hi', name: 'ann' },
      ]),
    ).toEqual({
      result: [
        { role: 'system', content: 'Be brief.' },
        { role: 'developer', content: 'Answer in French.', name: 'ops' },
        { role: 'user', content: 'Hi', name: 'ann' },
      ],
      warnings: [],
    });
  });

  it('should turn assistant text and tool calls into content and tool_calls, content null when there is no text', () => {
    const call = (id: string, name: string, args: string) => ({ id, type: 'function' as const, function: { name, arguments: args } });
    expect(
      convert([
        { id: 'a1', role: 'assistant', content: 'Checking.', toolCalls: [call('c1', 'weather', '{"city":"Paris"}')] },
        { id: 't1', role: 'tool', toolCallId: 'c1', content: 'Sunny' },
        { id: 'a2', role: 'assistant', toolCalls: [call('c2', 'now', '')] },
        { id: 't2', role: 'tool', toolCallId: 'c2', content: 'noon' },
        { id: 'a3', role: 'assistant', content: 'Done.' },
      ]),
    ).toEqual({
      result: [
        { role: 'assistant', content: 'Checking.', tool_calls: [{ id: 'c1', type: 'function', function: { name: 'weather', arguments: '{"city":"Paris"}' } }] },
        { role: 'tool', tool_call_id: 'c1', content: 'Sunny' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'c2', type: 'function', function: { name: 'now', arguments: '' } }] },
        { role: 'tool', tool_call_id: 'c2', content: 'noon' },
        { role: 'assistant', content: 'Done.' },
      ],
      warnings: [],
    });
  });

  it('should answer a call that no tool message answers with a failed result and a warning, before the next turn and at the end', () => {
    expect(
      convert([
        { id: 'u1', role: 'user', content: 'Weather in Oslo?' },
        // A run cut inside the call: its arguments stop short.
        { id: 'a1', role: 'assistant', content: 'Checking.', toolCalls: [{ id: 'c1', type: 'function', function: { name: 'weather', arguments: '{"city":"Os' } }] },
        { id: 'u2', role: 'user', content: 'Try again please.' },
        // A client tool the user has not answered yet.
        { id: 'a2', role: 'assistant', toolCalls: [call('c2')] },
      ]),
    ).toEqual({
      result: [
        { role: 'user', content: 'Weather in Oslo?' },
        { role: 'assistant', content: 'Checking.', tool_calls: [{ id: 'c1', type: 'function', function: { name: 'weather', arguments: '{"city":"Os' } }] },
        { role: 'tool', tool_call_id: 'c1', content: 'Error: the call did not complete, and no result was returned for it.' },
        { role: 'user', content: 'Try again please.' },
        { role: 'assistant', content: null, tool_calls: [call('c2')] },
        { role: 'tool', tool_call_id: 'c2', content: 'Error: the call did not complete, and no result was returned for it.' },
      ],
      warnings: [
        `toOpenAIChatMessages sent tool call 'c1' (weather) of assistant message 'a1' with a failed result ("Error: the call did not complete, and no result was returned for it."): no tool message answers it, and the API refuses a call without its result. A run cut or stopped mid-call, or a client tool never answered, leaves such a call; to send its real result, add a tool message for it to the messages before converting them.`,
        `toOpenAIChatMessages sent tool call 'c2' (look) of assistant message 'a2' with a failed result ("Error: the call did not complete, and no result was returned for it."): no tool message answers it, and the API refuses a call without its result. A run cut or stopped mid-call, or a client tool never answered, leaves such a call; to send its real result, add a tool message for it to the messages before converting them.`,
      ],
    });
  });

  it('should answer the parallel calls that got no result after the results that came, in the order they came', () => {
    const { result, warnings } = convert([
      calling('c1', 'c2', 'c3'),
      { id: 't3', role: 'tool', toolCallId: 'c3', content: 'three' },
      { id: 't1', role: 'tool', toolCallId: 'c1', content: 'one' },
      { id: 'u2', role: 'user', content: 'Never mind.' },
    ]);
    expect(result).toEqual([
      called('c1', 'c2', 'c3'),
      { role: 'tool', tool_call_id: 'c3', content: 'three' },
      { role: 'tool', tool_call_id: 'c1', content: 'one' },
      { role: 'tool', tool_call_id: 'c2', content: 'Error: the call did not complete, and no result was returned for it.' },
      { role: 'user', content: 'Never mind.' },
    ]);
    expect(warnings).toEqual([expect.stringMatching(/^toOpenAIChatMessages sent tool call 'c2' \(look\) of assistant message 'a0' with a failed result/)]);
  });

  it('should move a result that comes after other messages to directly after its call, as the API wants it', () => {
    expect(
      convert([
        calling('c1'),
        { id: 'u2', role: 'user', content: 'Still there?' },
        { id: 's1', role: 'system', content: 'Be brief.' },
        { id: 'a2', role: 'assistant', content: 'Still waiting.' },
        { id: 't1', role: 'tool', toolCallId: 'c1', content: 'late' },
      ]),
    ).toEqual({
      result: [
        called('c1'),
        { role: 'tool', tool_call_id: 'c1', content: 'late' },
        { role: 'user', content: 'Still there?' },
        { role: 'system', content: 'Be brief.' },
        { role: 'assistant', content: 'Still waiting.' },
      ],
      warnings: [],
    });
  });

  it('should answer a call whose only result came before it, dropping that result', () => {
    const { result, warnings } = convert([{ id: 't1', role: 'tool', toolCallId: 'c1', content: 'early' }, calling('c1')]);
    expect(result).toEqual([called('c1'), { role: 'tool', tool_call_id: 'c1', content: 'Error: the call did not complete, and no result was returned for it.' }]);
    expect(warnings).toEqual([
      expect.stringMatching(/^toOpenAIChatMessages sent tool call 'c1' \(look\) of assistant message 'a0' with a failed result/),
      "toOpenAIChatMessages dropped tool message 't1': it answers tool call 'c1', which assistant message 'a0' makes only after it, and a result answers a call made before it (the API takes a call's result only after the call). Put the tool message after the assistant message with the call.",
    ]);
  });

  it("should send a call marked as a custom tool's as a custom call with its raw input text, its result as a tool message", () => {
    const custom = (id: string, args: string) => ({ id, type: 'function' as const, function: { name: 'run_sql', arguments: args }, metadata: { openai: { type: 'custom_tool_call' } } });
    expect(
      convert([
        { id: 'a0', role: 'assistant', toolCalls: [custom('c1', JSON.stringify({ input: 'SELECT 1;\n' })), custom('c2', 'SELECT 2;'), call('c3')] },
        { id: 't1', role: 'tool', toolCallId: 'c1', content: '1' },
        { id: 't2', role: 'tool', toolCallId: 'c2', content: '2' },
        { id: 't3', role: 'tool', toolCallId: 'c3', content: '3' },
      ]),
    ).toEqual({
      result: [
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 'c1', type: 'custom', custom: { name: 'run_sql', input: 'SELECT 1;\n' } },
            { id: 'c2', type: 'custom', custom: { name: 'run_sql', input: 'SELECT 2;' } },
            { id: 'c3', type: 'function', function: { name: 'look', arguments: '{}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'c1', content: '1' },
        { role: 'tool', tool_call_id: 'c2', content: '2' },
        { role: 'tool', tool_call_id: 'c3', content: '3' },
      ],
      warnings: [
        'toOpenAIChatMessages sent custom tool call \'c2\' (run_sql) of assistant message \'a0\' with its arguments as its input text: they are not the {"input": "<text>"} fromOpenAIChatCompletions gives a custom tool\'s call.',
      ],
    });
  });

  describe('tool call ids used twice', () => {
    const renamed = (id: string, name: string, messageId: string, as: string) =>
      `toOpenAIChatMessages sent tool call '${id}' (${name}) of assistant message '${messageId}' as '${as}', and the results that answer it with that id: an earlier call has the id '${id}', and a request must name each call once (Anthropic refuses a repeated tool_use id; the OpenAI APIs pair results by id). A tool message answers the latest call of its id made before it.`;

    it('should send a call whose id an earlier turn used under a new id, with the result that answers it', () => {
      const { result, warnings } = convert([
        { id: 'a1', role: 'assistant', toolCalls: [call('call_0')] },
        { id: 't1', role: 'tool', toolCallId: 'call_0', content: 'one' },
        { id: 'u2', role: 'user', content: 'Again.' },
        { id: 'a2', role: 'assistant', toolCalls: [call('call_0')] },
        { id: 't2', role: 'tool', toolCallId: 'call_0', content: 'two' },
      ]);
      expect(result).toEqual([
        called('call_0'),
        { role: 'tool', tool_call_id: 'call_0', content: 'one' },
        { role: 'user', content: 'Again.' },
        called('call_0_2'),
        { role: 'tool', tool_call_id: 'call_0_2', content: 'two' },
      ]);
      expect(warnings).toEqual([renamed('call_0', 'look', 'a2', 'call_0_2')]);
    });

    it('should pair a result with the latest call of its id, and answer the earlier one with a failed result', () => {
      const { result } = convert([{ id: 'a1', role: 'assistant', toolCalls: [call('c1')] }, { id: 'u2', role: 'user', content: 'Again.' }, { id: 'a2', role: 'assistant', toolCalls: [call('c1')] }, { id: 't2', role: 'tool', toolCallId: 'c1', content: 'two' }]);
      expect(result).toEqual([
        called('c1'),
        { role: 'tool', tool_call_id: 'c1', content: 'Error: the call did not complete, and no result was returned for it.' },
        { role: 'user', content: 'Again.' },
        called('c1_2'),
        { role: 'tool', tool_call_id: 'c1_2', content: 'two' },
      ]);
    });

    it('should pair the results of one message that names an id twice with its calls in order, and pick a new id no call has', () => {
      const { result, warnings } = convert([
        calling('c1', 'c1', 'c1_2'),
        { id: 't1', role: 'tool', toolCallId: 'c1', content: 'first' },
        { id: 't2', role: 'tool', toolCallId: 'c1', content: 'second' },
        { id: 't3', role: 'tool', toolCallId: 'c1_2', content: 'third' },
      ]);
      expect(result).toEqual([
        called('c1', 'c1_3', 'c1_2'),
        { role: 'tool', tool_call_id: 'c1', content: 'first' },
        { role: 'tool', tool_call_id: 'c1_3', content: 'second' },
        { role: 'tool', tool_call_id: 'c1_2', content: 'third' },
      ]);
      expect(warnings).toEqual([renamed('c1', 'look', 'a0', 'c1_3')]);
    });
  });

  it('should leave out an assistant message with neither text nor tool calls, without a warning', () => {
    expect(convert([{ id: 'a1', role: 'assistant', content: '', toolCalls: [] }, { id: 'a2', role: 'assistant' }])).toEqual({ result: [], warnings: [] });
  });

  it('should turn tool messages into tool role messages, with the text of their parts and their error', () => {
    expect(
      convert([
        calling('c1', 'c2', 'c3', 'c4'),
        { id: 't1', role: 'tool', toolCallId: 'c1', content: 'Sunny' },
        { id: 't2', role: 'tool', toolCallId: 'c2', content: [{ type: 'text', text: 'a' }, { type: 'text', text: 'b' }] },
        { id: 't3', role: 'tool', toolCallId: 'c3', content: '', error: 'timeout' },
        { id: 't4', role: 'tool', toolCallId: 'c4', content: 'partial', error: 'cut' },
      ]),
    ).toEqual({
      result: [
        called('c1', 'c2', 'c3', 'c4'),
        { role: 'tool', tool_call_id: 'c1', content: 'Sunny' },
        { role: 'tool', tool_call_id: 'c2', content: 'a\nb' },
        { role: 'tool', tool_call_id: 'c3', content: 'Error: timeout' },
        { role: 'tool', tool_call_id: 'c4', content: 'partial\nError: cut' },
      ],
      warnings: [],
    });
  });

  it("should send a call's encryptedValue marked as Gemini's thought signature back as extra_content, and leave out (with a warning) one it has no field for", () => {
    const gemini = { google: { encryptedValue: 'thought_signature' } };
    expect(
      convert([
        {
          id: 'a1',
          role: 'assistant',
          toolCalls: [
            { ...call('c1'), encryptedValue: 'SIG', metadata: gemini },
            { ...call('c2'), encryptedValue: 'OTHER' },
            { ...call('c3'), metadata: gemini },
          ],
        },
        ...['c1', 'c2', 'c3'].map((id): Message => ({ id: `t-${id}`, role: 'tool', toolCallId: id, content: 'ok' })),
      ]),
    ).toEqual({
      result: [
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ ...call('c1'), extra_content: { google: { thought_signature: 'SIG' } } }, call('c2'), call('c3')],
        },
        ...['c1', 'c2', 'c3'].map((id) => ({ role: 'tool', tool_call_id: id, content: 'ok' })),
      ],
      warnings: [
        "toOpenAIChatMessages left out the encryptedValue of tool call 'c2' of assistant message 'a1': Chat Completions has no field for it. Only Gemini's thought signature, marked metadata: { google: { encryptedValue: 'thought_signature' } } as fromOpenAIChatCompletions marks it, is sent back (as extra_content), and OpenRouter's encrypted reasoning, marked metadata: { openrouter: { encryptedValue: 'reasoning.encrypted' } } (as reasoning_details); OpenAI and strict servers refuse unknown fields.",
      ],
    });
  });

  describe('reasoningContent (DeepSeek, Moonshot/Kimi thinking mode)', () => {
    const convertWith = (messages: Message[], options = { reasoningContent: true }) => {
      const warnings: string[] = [];
      const result = toOpenAIChatMessages(messages, { ...options, onWarning: (message) => void warnings.push(message) });
      return { result, warnings };
    };
    const dropped = (id: string) =>
      `toOpenAIChatMessages dropped reasoning message '${id}': no assistant message with text or tool calls follows it in its turn (its completion was cut while the model reasoned, say), so it has no message to go on as reasoning_content.`;

    it("should send a turn's reasoning as the reasoning_content of the assistant message after it, joining several and skipping empty ones", () => {
      expect(
        convertWith([
          { id: 'u1', role: 'user', content: 'Weather?' },
          { id: 'r1', role: 'reasoning', content: 'Need a tool.' },
          { id: 'r2', role: 'reasoning', content: '' },
          { id: 'act', role: 'activity', activityType: 'progress', content: {} },
          { id: 'r3', role: 'reasoning', content: 'Call look.' },
          calling('c1'),
          { id: 't1', role: 'tool', toolCallId: 'c1', content: 'Sunny' },
          { id: 'r4', role: 'reasoning', content: '' },
          { id: 'a2', role: 'assistant', content: 'Sunny.' },
        ]),
      ).toEqual({
        result: [
          { role: 'user', content: 'Weather?' },
          { ...called('c1'), reasoning_content: 'Need a tool.\n\nCall look.' },
          { role: 'tool', tool_call_id: 'c1', content: 'Sunny' },
          { role: 'assistant', content: 'Sunny.', reasoning_content: '' },
        ],
        warnings: ["toOpenAIChatMessages dropped activity message 'act' (progress): activity is shown to the user, not sent to the model."],
      });
    });

    it('should drop, with a warning, reasoning that no assistant message follows in its turn, and the encrypted value of reasoning it sends', () => {
      expect(
        convertWith([
          { id: 'r1', role: 'reasoning', content: 'Cut off.' },
          { id: 'u1', role: 'user', content: 'Again?' },
          { id: 'r2', role: 'reasoning', content: 'Hmm' },
          { id: 'a1', role: 'assistant', content: '' },
          { id: 'r3', role: 'reasoning', content: 'Yes.', encryptedValue: 'SIG' },
          { id: 'a2', role: 'assistant', content: 'Yes.' },
          { id: 'r4', role: 'reasoning', content: 'Trailing' },
        ]),
      ).toEqual({
        result: [
          { role: 'user', content: 'Again?' },
          { role: 'assistant', content: 'Yes.', reasoning_content: 'Yes.' },
        ],
        warnings: [
          dropped('r1'),
          dropped('r2'),
          "toOpenAIChatMessages left out the encryptedValue of reasoning message 'r3': Chat Completions has no field for it; only its text goes back, as the reasoning_content of assistant message 'a2'.",
          dropped('r4'),
        ],
      });
    });

    it('should keep dropping reasoning with the warning it always gave when the option is off', () => {
      expect(convertWith([{ id: 'r1', role: 'reasoning', content: 'Think' }, { id: 'a1', role: 'assistant', content: 'Hi' }], { reasoningContent: false })).toEqual({
        result: [{ role: 'assistant', content: 'Hi' }],
        warnings: ["toOpenAIChatMessages dropped reasoning message 'r1': Chat Completions takes no reasoning as input. Use the Responses API (toOpenAIResponsesInput) to send encrypted reasoning back."],
      });
    });
  });

  it("should send OpenRouter's encrypted reasoning of marked calls back as the message's reasoning_details, in call order", () => {
    const openrouter = (format?: string) => ({ openrouter: { encryptedValue: 'reasoning.encrypted', ...(format === undefined ? {} : { format }) } });
    expect(
      convert([
        { id: 'a1', role: 'assistant', toolCalls: [{ ...call('c1'), encryptedValue: 'E1', metadata: openrouter('google-gemini-v1') }, call('c2'), { ...call('c3'), encryptedValue: 'E3', metadata: openrouter() }] },
        ...['c1', 'c2', 'c3'].map((id): Message => ({ id: `t-${id}`, role: 'tool', toolCallId: id, content: 'ok' })),
      ]).result[0],
    ).toEqual({
      role: 'assistant',
      content: null,
      reasoning_details: [
        { type: 'reasoning.encrypted', id: 'c1', data: 'E1', format: 'google-gemini-v1', index: 0 },
        { type: 'reasoning.encrypted', id: 'c3', data: 'E3', index: 1 },
      ],
      tool_calls: [call('c1'), call('c2'), call('c3')],
    });
  });

  it('should drop a tool message that answers no earlier call, with a warning, as the API refuses it', () => {
    expect(convert([{ id: 't0', role: 'tool', toolCallId: 'c0', content: 'early' }, calling('c1'), { id: 't1', role: 'tool', toolCallId: 'c1', content: 'ok' }, { id: 't2', role: 'tool', toolCallId: 'c9', content: 'stray' }])).toEqual({
      result: [called('c1'), { role: 'tool', tool_call_id: 'c1', content: 'ok' }],
      warnings: [
        "toOpenAIChatMessages dropped tool message 't0': it answers tool call 'c0', which no earlier assistant message made, and the API refuses a result without its call. Keep the assistant message with the call in the history, or leave the result out.",
        "toOpenAIChatMessages dropped tool message 't2': it answers tool call 'c9', which no earlier assistant message made, and the API refuses a result without its call. Keep the assistant message with the call in the history, or leave the result out.",
      ],
    });
  });

  it('should drop the media parts of a tool message with a warning that names them', () => {
    expect(convert([calling('c1'), { id: 't1', role: 'tool', toolCallId: 'c1', content: [{ type: 'text', text: 'chart:' }, { type: 'image', source: png }] }])).toEqual({
      result: [called('c1'), { role: 'tool', tool_call_id: 'c1', content: 'chart:' }],
      warnings: ["toOpenAIChatMessages dropped the image part at index 1 of tool message 't1': Chat Completions tool messages take text only. Describe the image in text, or send it in a user message."],
    });
  });

  it('should read a file handle whose provider is empty or padded as OpenAI reads it, image/jpg as image/jpeg, and write a data URL with the bare type', () => {
    expect(
      convert([
        {
          id: 'u1',
          role: 'user',
          content: [
            { type: 'document', source: { type: 'file', value: 'file-a', provider: '' } },
            { type: 'document', source: { type: 'file', value: 'file-b', provider: ' openai ' } },
            { type: 'image', source: { type: 'data', value: 'AAAA', mimeType: 'image/jpg' } },
            { type: 'image', source: { type: 'data', value: 'iVBOR=', mimeType: 'IMAGE/PNG; charset=x' } },
          ],
        },
      ]),
    ).toEqual({
      result: [
        {
          role: 'user',
          content: [
            { type: 'file', file: { file_id: 'file-a' } },
            { type: 'file', file: { file_id: 'file-b' } },
            { type: 'image_url', image_url: { url: 'data:image/jpeg;base64,AAAA' } },
            { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBOR=' } },
          ],
        },
      ],
      warnings: [],
    });
  });

  it('should drop a file handle another provider issued, and an image type Chat Completions does not take, each with a warning', () => {
    expect(
      convert([
        {
          id: 'u1',
          role: 'user',
          content: filesOfEveryProvider,
        },
      ]),
    ).toEqual({
      result: [
        {
          role: 'user',
          content: [
            { type: 'file', file: { file_id: 'file-doc' } },
            { type: 'file', file: { file_id: 'file-plain' } },
            { type: 'image_url', image_url: { url: 'https://example.com/a' } },
            { type: 'image_url', image_url: { url: 'data:image/gif;base64,R0lGOD==' } },
          ],
        },
      ],
      warnings: [
        "toOpenAIChatMessages dropped the image part at index 0 of user message 'u1': Chat Completions takes images as URLs or base64 data, not as a provider file (file-abc123). Send the image's bytes or URL instead.",
        "toOpenAIChatMessages dropped the image part at index 1 of user message 'u1': it is a file handle that 'google' issued ('files/abc-gemini'), and only the provider that issued a handle can resolve it: Chat Completions would refuse it. Send the file's bytes (base64) or its URL instead, or upload the file to OpenAI's Files API and send that id (with provider: 'openai').",
        "toOpenAIChatMessages dropped the document part at index 2 of user message 'u1': it is a file handle that 'anthropic' issued ('file_011CNha8'), and only the provider that issued a handle can resolve it: Chat Completions would refuse it. Send the file's bytes (base64) or its URL instead, or upload the file to OpenAI's Files API and send that id (with provider: 'openai').",
        "toOpenAIChatMessages dropped the image part at index 5 of user message 'u1': Chat Completions takes images only as image/jpeg, image/png, image/gif, image/webp, and this is base64 (image/svg+xml). Convert it to PNG or JPEG first.",
        "toOpenAIChatMessages dropped the image part at index 6 of user message 'u1': Chat Completions takes images only as image/jpeg, image/png, image/gif, image/webp, and this is URL (image/heic). Convert it to PNG or JPEG first.",
      ],
    });
  });

  it('should turn user parts into text, image_url, input_audio and file parts', () => {
    expect(
      convert([
        {
          id: 'u1',
          role: 'user',
          content: [
            { type: 'text', text: 'Look:' },
            { type: 'image', source: png },
            { type: 'image', source: { type: 'url', value: 'https://example.com/a.jpg' } },
            { type: 'audio', source: { type: 'data', value: 'UklGRg==', mimeType: 'audio/wav' } },
            { type: 'audio', source: { type: 'data', value: 'SUQz', mimeType: 'audio/mpeg' } },
            { type: 'document', source: { type: 'data', value: 'JVBERi0=', mimeType: 'application/pdf' } },
            { type: 'document', source: { type: 'data', value: 'JVBERi0=', mimeType: 'application/pdf' }, metadata: { filename: 'report.pdf' } },
            { type: 'document', source: { type: 'file', value: 'file-abc', provider: 'openai' } },
          ],
        },
      ]),
    ).toEqual({
      result: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Look:' },
            { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
            { type: 'image_url', image_url: { url: 'https://example.com/a.jpg' } },
            { type: 'input_audio', input_audio: { data: 'UklGRg==', format: 'wav' } },
            { type: 'input_audio', input_audio: { data: 'SUQz', format: 'mp3' } },
            { type: 'file', file: { filename: 'u1-5.pdf', file_data: 'data:application/pdf;base64,JVBERi0=' } },
            { type: 'file', file: { filename: 'report.pdf', file_data: 'data:application/pdf;base64,JVBERi0=' } },
            { type: 'file', file: { file_id: 'file-abc' } },
          ],
        },
      ],
      warnings: [],
    });
  });

  it('should drop each media part it cannot send with a warning that names the message, index and type', () => {
    expect(
      convert([
        {
          id: 'u1',
          role: 'user',
          content: [
            { type: 'video', source: { type: 'url', value: 'https://example.com/v.mp4' } },
            { type: 'audio', source: { type: 'data', value: 'T2dn', mimeType: 'audio/ogg' } },
            { type: 'audio', source: { type: 'url', value: 'https://example.com/a.wav', mimeType: 'audio/wav' } },
            { type: 'document', source: { type: 'url', value: 'https://example.com/a.pdf' } },
            { type: 'document', source: { type: 'data', value: 'aGk=', mimeType: 'text/plain' } },
            { type: 'image', source: { type: 'file', value: 'file-img' } },
            { type: 'text', text: 'kept' },
          ],
        },
      ]),
    ).toEqual({
      result: [{ role: 'user', content: [{ type: 'text', text: 'kept' }] }],
      warnings: [
        "toOpenAIChatMessages dropped the video part at index 0 of user message 'u1': Chat Completions takes no video. Send frames as images, or a transcript as text.",
        "toOpenAIChatMessages dropped the audio part at index 1 of user message 'u1': Chat Completions takes audio only as base64 wav or mp3, and this is base64 (audio/ogg). Convert it to wav or mp3 bytes first.",
        "toOpenAIChatMessages dropped the audio part at index 2 of user message 'u1': Chat Completions takes audio only as base64 wav or mp3, and this is URL (audio/wav). Convert it to wav or mp3 bytes first.",
        "toOpenAIChatMessages dropped the document part at index 3 of user message 'u1': Chat Completions takes documents only as base64 PDF or an uploaded file id, and this is URL. Send the PDF's bytes, or its text as a text part.",
        "toOpenAIChatMessages dropped the document part at index 4 of user message 'u1': Chat Completions takes documents only as base64 PDF or an uploaded file id, and this is base64 (text/plain). Send the PDF's bytes, or its text as a text part.",
        "toOpenAIChatMessages dropped the image part at index 5 of user message 'u1': Chat Completions takes images as URLs or base64 data, not as a provider file (file-img). Send the image's bytes or URL instead.",
      ],
    });
  });

  it('should leave out a user message whose every part was dropped', () => {
    expect(convert([{ id: 'u1', role: 'user', content: [{ type: 'video', source: { type: 'url', value: 'https://example.com/v.mp4' } }] }]).result).toEqual([]);
  });

  it('should drop reasoning and activity messages with a warning that names them', () => {
    expect(
      convert([
        { id: 'r1', role: 'reasoning', content: 'thinking…', encryptedValue: 'enc' },
        { id: 'x1', role: 'activity', activityType: 'plan', content: { steps: [] } },
        { id: 'u1', role: 'user', content: 'Hi' },
      ]),
    ).toEqual({
      result: [{ role: 'user', content: 'Hi' }],
      warnings: [
        "toOpenAIChatMessages dropped reasoning message 'r1': Chat Completions takes no reasoning as input. Use the Responses API (toOpenAIResponsesInput) to send encrypted reasoning back.",
        "toOpenAIChatMessages dropped activity message 'x1' (plan): activity is shown to the user, not sent to the model.",
      ],
    });
  });

  it('should warn through console.warn with an [agui-rx] prefix by default', () => {
    const warn = jest.spyOn(console, 'warn').mockImplementation(() => undefined);
    try {
      toOpenAIChatMessages([{ id: 'u1', role: 'user', content: [{ type: 'video', source: { type: 'url', value: 'https://example.com/v.mp4' } }] }]);
      expect(warn.mock.calls).toEqual([["[agui-rx] toOpenAIChatMessages dropped the video part at index 0 of user message 'u1': Chat Completions takes no video. Send frames as images, or a transcript as text."]]);
    } finally {
      warn.mockRestore();
    }
  });

  it('should give what its doc example promises', () => {
    const messages = toOpenAIChatMessages([
      { id: 's1', role: 'system', content: 'Be brief.' },
      { id: 'u1', role: 'user', content: 'Weather in Paris?' },
      { id: 'a1', role: 'assistant', toolCalls: [{ id: 'c1', type: 'function', function: { name: 'weather', arguments: '{"city":"Paris"}' } }] },
      { id: 't1', role: 'tool', toolCallId: 'c1', content: 'Sunny' },
    ]);
    expect(JSON.stringify(messages)).toBe(
      '[{"role":"system","content":"Be brief."},{"role":"user","content":"Weather in Paris?"},{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"weather","arguments":"{\\"city\\":\\"Paris\\"}"}}]},{"role":"tool","tool_call_id":"c1","content":"Sunny"}]',
    );
  });
});
