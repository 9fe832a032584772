import type { Message, ToolMessage } from '@ag-ui/core';
import { toAnthropicMessages } from '../../../lib/converters/toAnthropicMessages.js';
import { filesOfEveryProvider, malformedMessages, thrown } from '../../support/malformedMessages.js';

const png = { type: 'data', value: 'iVBORw0KGgo=', mimeType: 'image/png' } as const;
const call = (id: string, name: string, args: string) => ({ id, type: 'function' as const, function: { name, arguments: args } });

function convert(messages: Message[]) {
  const warnings: string[] = [];
  const result = toAnthropicMessages(messages, { onWarning: (message) => void warnings.push(message) });
  return { result, warnings };
}

describe('toAnthropicMessages', () => {
  it.each(malformedMessages('toAnthropicMessages'))('should refuse %s with an error that says what is wrong and where', (_, messages, error) => {
    expect(thrown(() => toAnthropicMessages(messages as never))).toEqual({ name: 'AguiRxError', code: error.code, message: error.message });
  });

  it('should take an assistant message with null content or null toolCalls as one without', () => {
    expect(() => toAnthropicMessages([{ id: 'u1', role: 'user', content: 'Hi' }, { id: 'a1', role: 'assistant', content: null, toolCalls: null } as never], { onWarning: () => undefined })).not.toThrow();
  });

  it('should split system and developer messages out into system', () => {
    expect(
      convert([
        { id: 's1', role: 'system', content: 'Be brief.' },
        { id: 'd1', role: 'developer', content: 'Answer in French.' },
        { id: 'u1', role: 'user', content: 'Hi' },
      ]),
    ).toEqual({ result: { system: 'Be brief.\n\nAnswer in French.', messages: [{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }] }, warnings: [] });
    expect(convert([{ id: 'u1', role: 'user', content: 'Hi' }]).result).toEqual({ messages: [{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }] });
  });

  it('should turn assistant text and tool calls into text and tool_use blocks, input parsed from the arguments', () => {
    expect(
      convert([
        { id: 'a1', role: 'assistant', content: 'Checking.', toolCalls: [call('c1', 'weather', '{"city":"Paris"}'), call('c2', 'now', ''), call('c3', 'noop', '  ')] },
        ...['c1', 'c2', 'c3'].map((id): Message => ({ id: `t-${id}`, role: 'tool', toolCallId: id, content: 'ok' })),
      ]),
    ).toEqual({
      result: {
        messages: [
          {
            role: 'assistant',
            content: [
              { type: 'text', text: 'Checking.' },
              { type: 'tool_use', id: 'c1', name: 'weather', input: { city: 'Paris' } },
              { type: 'tool_use', id: 'c2', name: 'now', input: {} },
              { type: 'tool_use', id: 'c3', name: 'noop', input: {} },
            ],
          },
          { role: 'user', content: ['c1', 'c2', 'c3'].map((id) => ({ type: 'tool_result', tool_use_id: id, content: 'ok' })) },
        ],
      },
      warnings: [],
    });
  });

  it('should send invalid or non-object arguments as {} with a warning', () => {
    expect(
      convert([
        { id: 'a1', role: 'assistant', toolCalls: [call('c1', 'weather', '{"city":'), call('c2', 'list', '[1,2]')] },
        { id: 't1', role: 'tool', toolCallId: 'c1', content: '', error: 'bad input' },
        { id: 't2', role: 'tool', toolCallId: 'c2', content: '', error: 'bad input' },
      ]),
    ).toEqual({
      result: {
        messages: [
          { role: 'assistant', content: [{ type: 'tool_use', id: 'c1', name: 'weather', input: {} }, { type: 'tool_use', id: 'c2', name: 'list', input: {} }] },
          {
            role: 'user',
            content: [
              { type: 'tool_result', tool_use_id: 'c1', content: 'Error: bad input', is_error: true },
              { type: 'tool_result', tool_use_id: 'c2', content: 'Error: bad input', is_error: true },
            ],
          },
        ],
      },
      warnings: [
        'toAnthropicMessages sent tool call \'c1\' of assistant message \'a1\' with input {}: its arguments "{\\"city\\":" are not a JSON object, and tool_use input must be one.',
        "toAnthropicMessages sent tool call 'c2' of assistant message 'a1' with input {}: its arguments \"[1,2]\" are not a JSON object, and tool_use input must be one.",
      ],
    });
  });

  it('should turn consecutive tool results into tool_result blocks of one user turn, merged with the next user words', () => {
    expect(
      convert([
        { id: 'u1', role: 'user', content: 'Weather and time?' },
        { id: 'a1', role: 'assistant', toolCalls: [call('c1', 'weather', '{}'), call('c2', 'now', '{}')] },
        { id: 't1', role: 'tool', toolCallId: 'c1', content: 'Sunny' },
        { id: 't2', role: 'tool', toolCallId: 'c2', content: '', error: 'clock down' },
        { id: 'u2', role: 'user', content: 'Thanks' },
      ]).result.messages,
    ).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'Weather and time?' }] },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'c1', name: 'weather', input: {} }, { type: 'tool_use', id: 'c2', name: 'now', input: {} }] },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'c1', content: 'Sunny' },
          { type: 'tool_result', tool_use_id: 'c2', content: 'Error: clock down', is_error: true },
          { type: 'text', text: 'Thanks' },
        ],
      },
    ]);
  });

  it('should merge consecutive same-role messages and put tool results first in a user turn', () => {
    expect(
      convert([
        { id: 'a1', role: 'assistant', content: 'One.' },
        { id: 'a2', role: 'assistant', content: 'Two.', toolCalls: [call('c1', 'now', '{}')] },
        { id: 'u1', role: 'user', content: 'Also this.' },
        { id: 't1', role: 'tool', toolCallId: 'c1', content: 'noon' },
      ]).result.messages,
    ).toEqual([
      { role: 'assistant', content: [{ type: 'text', text: 'One.' }, { type: 'text', text: 'Two.' }, { type: 'tool_use', id: 'c1', name: 'now', input: {} }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'c1', content: 'noon' }, { type: 'text', text: 'Also this.' }] },
    ]);
  });

  it('should drop a tool message that answers no earlier call, with a warning, as the API refuses it', () => {
    expect(convert([{ id: 'u1', role: 'user', content: 'Hi' }, { id: 't9', role: 'tool', toolCallId: 'c9', content: 'stray' }])).toEqual({
      result: { messages: [{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }] },
      warnings: [
        "toAnthropicMessages dropped tool message 't9': it answers tool call 'c9', which no earlier assistant message made, and the API refuses a result without its call. Keep the assistant message with the call in the history, or leave the result out.",
      ],
    });
  });

  it('should answer a call that no tool message answers with a failed tool_result in the next user turn, with a warning, also at the end', () => {
    const unanswered = (id: string, name: string, messageId: string) =>
      `toAnthropicMessages sent tool call '${id}' (${name}) of assistant message '${messageId}' with a failed result ("Error: the call did not complete, and no result was returned for it."): no tool message answers it, and the API refuses a call without its result. A run cut or stopped mid-call, or a client tool never answered, leaves such a call; to send its real result, add a tool message for it to the messages before converting them.`;
    expect(
      convert([
        { id: 'u1', role: 'user', content: 'Weather in Oslo?' },
        { id: 'r1', role: 'reasoning', content: 'Need the tool.', encryptedValue: 'sig-1' },
        { id: 'a1', role: 'assistant', content: 'Checking.', toolCalls: [call('c1', 'weather', '{"city":"Oslo"}')] },
        { id: 'u2', role: 'user', content: 'Try again please.' },
        { id: 'a2', role: 'assistant', toolCalls: [call('c2', 'weather', '{"city":"Oslo"}')] },
      ]),
    ).toEqual({
      result: {
        messages: [
          { role: 'user', content: [{ type: 'text', text: 'Weather in Oslo?' }] },
          {
            role: 'assistant',
            content: [
              { type: 'thinking', thinking: 'Need the tool.', signature: 'sig-1' },
              { type: 'text', text: 'Checking.' },
              { type: 'tool_use', id: 'c1', name: 'weather', input: { city: 'Oslo' } },
            ],
          },
          {
            role: 'user',
            content: [
              { type: 'tool_result', tool_use_id: 'c1', content: 'Error: the call did not complete, and no result was returned for it.', is_error: true },
              { type: 'text', text: 'Try again please.' },
            ],
          },
          { role: 'assistant', content: [{ type: 'tool_use', id: 'c2', name: 'weather', input: { city: 'Oslo' } }] },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'c2', content: 'Error: the call did not complete, and no result was returned for it.', is_error: true }] },
        ],
      },
      warnings: [unanswered('c1', 'weather', 'a1'), unanswered('c2', 'weather', 'a2')],
    });
  });

  it('should answer the parallel calls that got no result after the results that came', () => {
    const { result, warnings } = convert([
      { id: 'a1', role: 'assistant', toolCalls: [call('c1', 'weather', '{}'), call('c2', 'now', '{}')] },
      { id: 't2', role: 'tool', toolCallId: 'c2', content: 'noon' },
      { id: 'u2', role: 'user', content: 'And?' },
    ]);
    expect(result.messages).toEqual([
      { role: 'assistant', content: [{ type: 'tool_use', id: 'c1', name: 'weather', input: {} }, { type: 'tool_use', id: 'c2', name: 'now', input: {} }] },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'c2', content: 'noon' },
          { type: 'tool_result', tool_use_id: 'c1', content: 'Error: the call did not complete, and no result was returned for it.', is_error: true },
          { type: 'text', text: 'And?' },
        ],
      },
    ]);
    expect(warnings).toEqual([expect.stringMatching(/^toAnthropicMessages sent tool call 'c1' \(weather\) of assistant message 'a1' with a failed result/)]);
  });

  it('should drop a tool message that comes before its call, with a warning, and answer the call with a failed tool_result', () => {
    expect(convert([{ id: 'u1', role: 'user', content: 'Hi' }, { id: 't1', role: 'tool', toolCallId: 'c1', content: 'early' }, { id: 'a1', role: 'assistant', toolCalls: [call('c1', 'now', '{}')] }])).toEqual({
      result: {
        messages: [
          { role: 'user', content: [{ type: 'text', text: 'Hi' }] },
          { role: 'assistant', content: [{ type: 'tool_use', id: 'c1', name: 'now', input: {} }] },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'c1', content: 'Error: the call did not complete, and no result was returned for it.', is_error: true }] },
        ],
      },
      warnings: [
        expect.stringMatching(/^toAnthropicMessages sent tool call 'c1' \(now\) of assistant message 'a1' with a failed result/),
        "toAnthropicMessages dropped tool message 't1': it answers tool call 'c1', which assistant message 'a1' makes only after it, and a result answers a call made before it (the API takes a call's result only after the call). Put the tool message after the assistant message with the call.",
      ],
    });
  });

  it('should make tool_use ids unique: a call whose id an earlier call has goes under a new id, and so does the tool_result that answers it', () => {
    const { result, warnings } = convert([
      { id: 'u1', role: 'user', content: 'q1' },
      { id: 'a1', role: 'assistant', toolCalls: [call('call_0', 'f', '{"n":1}'), call('call_0', 'g', '{}')] },
      { id: 't1', role: 'tool', toolCallId: 'call_0', content: 'r1' },
      { id: 'u2', role: 'user', content: 'q2' },
      { id: 'a2', role: 'assistant', toolCalls: [call('call_0', 'f', '{"n":2}')] },
      { id: 't2', role: 'tool', toolCallId: 'call_0', content: 'r2' },
    ]);
    expect(result.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'q1' }] },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'call_0', name: 'f', input: { n: 1 } }, { type: 'tool_use', id: 'call_0_2', name: 'g', input: {} }] },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'call_0', content: 'r1' },
          { type: 'tool_result', tool_use_id: 'call_0_2', content: 'Error: the call did not complete, and no result was returned for it.', is_error: true },
          { type: 'text', text: 'q2' },
        ],
      },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'call_0_3', name: 'f', input: { n: 2 } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'call_0_3', content: 'r2' }] },
    ]);
    expect(warnings).toEqual([
      "toAnthropicMessages sent tool call 'call_0' (g) of assistant message 'a1' as 'call_0_2', and the results that answer it with that id: an earlier call has the id 'call_0', and a request must name each call once (Anthropic refuses a repeated tool_use id; the OpenAI APIs pair results by id). A tool message answers the latest call of its id made before it.",
      expect.stringMatching(/^toAnthropicMessages sent tool call 'call_0_2' \(g\) of assistant message 'a1' with a failed result/),
      expect.stringMatching(/^toAnthropicMessages sent tool call 'call_0' \(f\) of assistant message 'a2' as 'call_0_3'/),
    ]);
  });

  it('should send one tool_result per call: a second tool message for it is dropped, with a warning, as Anthropic refuses two', () => {
    const { result, warnings } = convert([
      { id: 'a1', role: 'assistant', toolCalls: [call('c1', 'weather', '{}')] },
      { id: 't1', role: 'tool', toolCallId: 'c1', content: 'sunny' },
      { id: 't1-again', role: 'tool', toolCallId: 'c1', content: 'sunny, retried' },
      { id: 'u2', role: 'user', content: 'Thanks.' },
    ]);
    expect(result.messages).toEqual([
      { role: 'assistant', content: [{ type: 'tool_use', id: 'c1', name: 'weather', input: {} }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'c1', content: 'sunny' }, { type: 'text', text: 'Thanks.' }] },
    ]);
    expect(warnings).toEqual([
      "toAnthropicMessages dropped tool message 't1-again': tool call 'c1' has a result already (tool message 't1'), and the API takes one result per call. Keep one tool message per call.",
    ]);
  });

  it('should move a result that comes after a later assistant turn into the user turn right after its call', () => {
    expect(
      convert([
        { id: 'u1', role: 'user', content: 'Weather?' },
        { id: 'a1', role: 'assistant', toolCalls: [call('c1', 'weather', '{}')] },
        { id: 'u2', role: 'user', content: 'Still there?' },
        { id: 'a2', role: 'assistant', content: 'Still waiting.' },
        { id: 't1', role: 'tool', toolCallId: 'c1', content: 'Sunny' },
      ]),
    ).toEqual({
      result: {
        messages: [
          { role: 'user', content: [{ type: 'text', text: 'Weather?' }] },
          { role: 'assistant', content: [{ type: 'tool_use', id: 'c1', name: 'weather', input: {} }] },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'c1', content: 'Sunny' }, { type: 'text', text: 'Still there?' }] },
          { role: 'assistant', content: [{ type: 'text', text: 'Still waiting.' }] },
        ],
      },
      warnings: [],
    });
  });

  it('should send tool results with media as text, image and document blocks', () => {
    expect(
      convert([
        { id: 'a1', role: 'assistant', toolCalls: [call('c1', 'chart', '{}')] },
        { id: 't1', role: 'tool', toolCallId: 'c1', content: [{ type: 'text', text: 'chart:' }, { type: 'image', source: png }, { type: 'audio', source: { type: 'data', value: 'UklGRg==', mimeType: 'audio/wav' } }] },
      ]),
    ).toEqual({
      result: {
        messages: [
          { role: 'assistant', content: [{ type: 'tool_use', id: 'c1', name: 'chart', input: {} }] },
          {
            role: 'user',
            content: [{ type: 'tool_result', tool_use_id: 'c1', content: [{ type: 'text', text: 'chart:' }, { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } }] }],
          },
        ],
      },
      warnings: ["toAnthropicMessages dropped the audio part at index 2 of tool message 't1': Anthropic takes no audio input. Transcribe it first, or send it to a provider that takes audio."],
    });
  });

  it('should turn image and document parts into image and document blocks', () => {
    expect(
      convert([
        {
          id: 'u1',
          role: 'user',
          content: [
            { type: 'text', text: 'Look:' },
            { type: 'image', source: png },
            { type: 'image', source: { type: 'url', value: 'https://example.com/a.jpg' } },
            { type: 'image', source: { type: 'file', value: 'file_img' } },
            { type: 'document', source: { type: 'data', value: 'JVBERi0=', mimeType: 'application/pdf' }, metadata: { title: 'Report' } },
            { type: 'document', source: { type: 'data', value: Buffer.from('héllo').toString('base64'), mimeType: 'text/plain; charset=utf-8' } },
            { type: 'document', source: { type: 'url', value: 'https://example.com/a.pdf' } },
            { type: 'document', source: { type: 'file', value: 'file_doc' } },
          ],
        },
      ]),
    ).toEqual({
      result: {
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'Look:' },
              { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
              { type: 'image', source: { type: 'url', url: 'https://example.com/a.jpg' } },
              { type: 'image', source: { type: 'file', file_id: 'file_img' } },
              { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0=' }, title: 'Report' },
              { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'héllo' } },
              { type: 'document', source: { type: 'url', url: 'https://example.com/a.pdf' } },
              { type: 'document', source: { type: 'file', file_id: 'file_doc' } },
            ],
          },
        ],
      },
      warnings: [],
    });
  });

  it('should drop a file handle another provider issued, and an image type Anthropic does not take, each with a warning', () => {
    expect(
      convert([
        {
          id: 'u1',
          role: 'user',
          content: filesOfEveryProvider,
        },
      ]),
    ).toEqual({
      result: {
        messages: [
          {
            role: 'user',
            content: [
              { type: 'document', source: { type: 'file', file_id: 'file_011CNha8' } },
              { type: 'document', source: { type: 'file', file_id: 'file-plain' } },
              { type: 'image', source: { type: 'url', url: 'https://example.com/a' } },
              { type: 'image', source: { type: 'base64', media_type: 'image/gif', data: 'R0lGOD==' } },
            ],
          },
        ],
      },
      warnings: [
        "toAnthropicMessages dropped the image part at index 0 of user message 'u1': it is a file handle that 'openai' issued ('file-abc123'), and only the provider that issued a handle can resolve it: Anthropic would refuse it. Send the file's bytes (base64) or its URL instead, or upload the file to Anthropic's Files API and send that id (with provider: 'anthropic').",
        "toAnthropicMessages dropped the image part at index 1 of user message 'u1': it is a file handle that 'google' issued ('files/abc-gemini'), and only the provider that issued a handle can resolve it: Anthropic would refuse it. Send the file's bytes (base64) or its URL instead, or upload the file to Anthropic's Files API and send that id (with provider: 'anthropic').",
        "toAnthropicMessages dropped the document part at index 3 of user message 'u1': it is a file handle that 'OpenAI' issued ('file-doc'), and only the provider that issued a handle can resolve it: Anthropic would refuse it. Send the file's bytes (base64) or its URL instead, or upload the file to Anthropic's Files API and send that id (with provider: 'anthropic').",
        "toAnthropicMessages dropped the image part at index 5 of user message 'u1': Anthropic takes images only as image/jpeg, image/png, image/gif, image/webp, and this is base64 (image/svg+xml). Convert it to PNG or JPEG first.",
        "toAnthropicMessages dropped the image part at index 6 of user message 'u1': Anthropic takes images only as image/jpeg, image/png, image/gif, image/webp, and this is URL (image/heic). Convert it to PNG or JPEG first.",
      ],
    });
  });

  it('should drop audio, video and other documents with warnings that name them, and leave out a turn left empty', () => {
    expect(
      convert([
        { id: 'u1', role: 'user', content: 'Hi' },
        { id: 'a1', role: 'assistant', content: 'Hello' },
        {
          id: 'u2',
          role: 'user',
          content: [
            { type: 'audio', source: { type: 'data', value: 'UklGRg==', mimeType: 'audio/wav' } },
            { type: 'video', source: { type: 'url', value: 'https://example.com/v.mp4' } },
            { type: 'document', source: { type: 'data', value: 'UEsDBA==', mimeType: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document' } },
          ],
        },
      ]),
    ).toEqual({
      result: { messages: [{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }, { role: 'assistant', content: [{ type: 'text', text: 'Hello' }] }] },
      warnings: [
        "toAnthropicMessages dropped the audio part at index 0 of user message 'u2': Anthropic takes no audio input. Transcribe it first, or send it to a provider that takes audio.",
        "toAnthropicMessages dropped the video part at index 1 of user message 'u2': Anthropic takes no video input. Send frames as images, or a transcript as text.",
        "toAnthropicMessages dropped the document part at index 2 of user message 'u2': Anthropic takes documents only as PDF or plain text, and this is base64 (application/vnd.openxmlformats-officedocument.wordprocessingml.document). Convert it to PDF or send its text.",
      ],
    });
  });

  it('should send reasoning with an encryptedValue back as a signed thinking block before the turn’s text and tool_use', () => {
    expect(
      convert([
        { id: 'u1', role: 'user', content: 'Weather?' },
        { id: 'r1', role: 'reasoning', content: 'Need the tool.', encryptedValue: 'sig-1' },
        { id: 'a1', role: 'assistant', content: 'Checking.', toolCalls: [call('toolu_1', 'weather', '{}')] },
        { id: 't1', role: 'tool', toolCallId: 'toolu_1', content: 'Sunny' },
        { id: 'a2', role: 'assistant', content: 'It is sunny.' },
        { id: 'r2', role: 'reasoning', content: 'Late.', encryptedValue: 'sig-2' },
      ]),
    ).toEqual({
      result: {
        messages: [
          { role: 'user', content: [{ type: 'text', text: 'Weather?' }] },
          {
            role: 'assistant',
            content: [
              { type: 'thinking', thinking: 'Need the tool.', signature: 'sig-1' },
              { type: 'text', text: 'Checking.' },
              { type: 'tool_use', id: 'toolu_1', name: 'weather', input: {} },
            ],
          },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'Sunny' }] },
          { role: 'assistant', content: [{ type: 'thinking', thinking: 'Late.', signature: 'sig-2' }, { type: 'text', text: 'It is sunny.' }] },
        ],
      },
      warnings: [],
    });
  });

  it('should send reasoning marked as redacted thinking back as a redacted_thinking block', () => {
    expect(
      convert([
        { id: 'r1', role: 'reasoning', content: '', encryptedValue: 'EmwKAhgB', metadata: { anthropic: { type: 'redacted_thinking' } } },
        { id: 'a1', role: 'assistant', content: 'Done.' },
      ]).result.messages,
    ).toEqual([{ role: 'assistant', content: [{ type: 'redacted_thinking', data: 'EmwKAhgB' }, { type: 'text', text: 'Done.' }] }]);
  });

  describe('whitespace-only text (Anthropic: "text content blocks must contain non-whitespace text")', () => {
    const why = 'its text is only whitespace, and Anthropic refuses a text block without other text ("text content blocks must contain non-whitespace text").';

    it('should leave it out of user, assistant and tool-result content, with a warning each, and leave out a turn it empties', () => {
      expect(
        convert([
          { id: 'u1', role: 'user', content: 'Hi' },
          { id: 'a1', role: 'assistant', content: ' \n', toolCalls: [call('c1', 'now', '{}')] },
          { id: 't1', role: 'tool', toolCallId: 'c1', content: '  ' },
          { id: 'u2', role: 'user', content: [{ type: 'text', text: '\t' }, { type: 'text', text: 'And?' }] },
          { id: 'a2', role: 'assistant', content: ' ' },
          { id: 'u3', role: 'user', content: '  \n ' },
        ]),
      ).toEqual({
        result: {
          messages: [
            { role: 'user', content: [{ type: 'text', text: 'Hi' }] },
            { role: 'assistant', content: [{ type: 'tool_use', id: 'c1', name: 'now', input: {} }] },
            { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'c1', content: '' }, { type: 'text', text: 'And?' }] },
          ],
        },
        warnings: [
          `toAnthropicMessages left out the text of assistant message 'a1': ${why}`,
          `toAnthropicMessages left out the text of tool message 't1': ${why} Its tool_result is sent without text.`,
          `toAnthropicMessages dropped the text part at index 0 of user message 'u2': ${why}`,
          `toAnthropicMessages left out the text of assistant message 'a2': ${why}`,
          `toAnthropicMessages dropped user message 'u3': ${why}`,
        ],
      });
    });

    it('should warn when dropping the only user message leaves the request starting with an assistant turn', () => {
      const first = (ids: string) =>
        `toAnthropicMessages sent a request whose first turn is the assistant's: the user message before it (${ids}) had nothing Anthropic takes, and Anthropic refuses a conversation that does not start with a user turn ("messages: first message must use the \"user\" role"). Give that user message some text, or leave out the messages before the user's first words.`;
      expect(convert([{ id: 'u1', role: 'user', content: ' ' }, { id: 'a1', role: 'assistant', content: 'ok' }])).toEqual({
        result: { messages: [{ role: 'assistant', content: [{ type: 'text', text: 'ok' }] }] },
        warnings: [`toAnthropicMessages dropped user message 'u1': ${why}`, first("'u1'")],
      });
      expect(convert([{ id: 'u1', role: 'user', content: '' }, { id: 'a1', role: 'assistant', content: 'ok' }]).warnings).toEqual([
        "toAnthropicMessages dropped user message 'u1': it has no content, and Anthropic refuses an empty message.",
        first("'u1'"),
      ]);
      // A conversation that starts with the assistant's words is the caller's, sent as it is.
      expect(convert([{ id: 'a1', role: 'assistant', content: 'Hello, how can I help?' }, { id: 'u1', role: 'user', content: 'Hi' }]).warnings).toEqual([]);
    });
  });

  it('should drop reasoning without encryptedValue, activity messages and empty user messages with warnings that name them', () => {
    expect(
      convert([
        { id: 'r1', role: 'reasoning', content: 'plain' },
        { id: 'x1', role: 'activity', activityType: 'plan', content: {} },
        { id: 'u1', role: 'user', content: '' },
      ]),
    ).toEqual({
      result: { messages: [] },
      warnings: [
        "toAnthropicMessages dropped reasoning message 'r1': it has no encryptedValue (signature), and Anthropic refuses thinking blocks without one.",
        "toAnthropicMessages dropped activity message 'x1' (plan): activity is shown to the user, not sent to the model.",
        "toAnthropicMessages dropped user message 'u1': it has no content, and Anthropic refuses an empty message.",
      ],
    });
  });

  describe('server tools (calls Anthropic ran itself)', () => {
    const search = [{ type: 'web_search_result', title: 'Yr', url: 'https://yr.no', encrypted_content: 'Eq..' }];
    const served = (id: string, name: string, args: string, mark: Record<string, unknown> = { type: 'server_tool_use' }) => ({ ...call(id, name, args), metadata: { anthropic: mark } });
    /** A tool message with the search's result; `mark` null for one without metadata. */
    const searchResult = (id: string, toolCallId: string, mark: Record<string, unknown> | null = { type: 'web_search_tool_result', contentFormat: 'json' }, content = JSON.stringify(search)): ToolMessage => ({
      id,
      role: 'tool',
      toolCallId,
      content,
      ...(mark === null ? {} : { metadata: { anthropic: mark } }),
    });

    it("should keep thinking where Anthropic sent it around a server tool's result: first in each stretch of the turn, not all at its start", () => {
      expect(
        convert([
          { id: 'u1', role: 'user', content: 'Search, then look it up.' },
          { id: 'm1-reasoning-0', role: 'reasoning', content: 'Search first.', encryptedValue: 'SIG1' },
          { id: 'm1', role: 'assistant', toolCalls: [served('srvtoolu_1', 'web_search', '{"query":"x"}')] },
          searchResult('t1', 'srvtoolu_1'),
          { id: 'm1-reasoning-3', role: 'reasoning', content: 'Now the client tool.', encryptedValue: 'SIG2' },
          { id: 'm1-3', role: 'assistant', toolCalls: [call('toolu_1', 'lookup', '{"a":1}')] },
          { id: 't2', role: 'tool', toolCallId: 'toolu_1', content: 'found' },
        ]).result.messages[1].content.map((block) => block.type),
      ).toEqual(['thinking', 'server_tool_use', 'web_search_tool_result', 'thinking', 'tool_use']);
    });

    it('should send a marked call and its marked result as the blocks they came as, the result right after its call in the assistant turn, whatever the order of the tool messages', () => {
      expect(
        convert([
          { id: 'u1', role: 'user', content: 'Weather in Oslo, then book a ferry.' },
          { id: 'a1', role: 'assistant', content: 'Looking.', toolCalls: [call('toolu_1', 'book', '{"at":"15:00"}'), served('srvtoolu_1', 'web_search', '{"query":"oslo"}')] },
          { id: 't1', role: 'tool', toolCallId: 'toolu_1', content: 'Booked.' },
          searchResult('t2', 'srvtoolu_1'),
          { id: 'a2', role: 'assistant', content: 'Sunny, and booked.' },
        ]),
      ).toEqual({
        result: {
          messages: [
            { role: 'user', content: [{ type: 'text', text: 'Weather in Oslo, then book a ferry.' }] },
            {
              role: 'assistant',
              content: [
                { type: 'text', text: 'Looking.' },
                { type: 'tool_use', id: 'toolu_1', name: 'book', input: { at: '15:00' } },
                { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: { query: 'oslo' } },
                { type: 'web_search_tool_result', tool_use_id: 'srvtoolu_1', content: search },
              ],
            },
            { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'Booked.' }] },
            { role: 'assistant', content: [{ type: 'text', text: 'Sunny, and booked.' }] },
          ],
        },
        warnings: [],
      });
    });

    it("should keep the marks' other fields, and a result's text content as text", () => {
      expect(
        convert([
          { id: 'a1', role: 'assistant', toolCalls: [served('mcptoolu_1', 'ferry_times', '{"route":"oban"}', { type: 'mcp_tool_use', server_name: 'calmac' })] },
          { id: 't1', role: 'tool', toolCallId: 'mcptoolu_1', content: '{"next":"15:00"}', metadata: { anthropic: { type: 'mcp_tool_result', is_error: false } } },
        ]).result.messages,
      ).toEqual([
        {
          role: 'assistant',
          content: [
            { type: 'mcp_tool_use', id: 'mcptoolu_1', name: 'ferry_times', server_name: 'calmac', input: { route: 'oban' } },
            { type: 'mcp_tool_result', tool_use_id: 'mcptoolu_1', is_error: false, content: '{"next":"15:00"}' },
          ],
        },
      ]);
    });

    it('should drop, with warnings, a server call without a marked result and the tool messages it cannot send, keeping the rest of the turn', () => {
      expect(
        convert([
          { id: 'a1', role: 'assistant', content: 'Searching.', toolCalls: [served('srvtoolu_1', 'web_search', '{"query":"oslo"}'), served('srvtoolu_2', 'web_search', '{"query":"bergen"}')] },
          searchResult('t1', 'srvtoolu_2', null),
          { id: 'a2', role: 'assistant', content: 'Paused.', toolCalls: [served('srvtoolu_3', 'web_fetch', '{"url":"https://yr.no"}')] },
          searchResult('t3', 'srvtoolu_3', { type: 'web_fetch_tool_result', contentFormat: 'json' }),
          searchResult('t4', 'srvtoolu_3', undefined, 'again'),
          { id: 'a3', role: 'assistant', toolCalls: [served('srvtoolu_4', 'web_search', '{}')] },
          searchResult('t5', 'srvtoolu_4', undefined, 'not json'),
        ]),
      ).toEqual({
        result: {
          messages: [
            {
              role: 'assistant',
              content: [
                { type: 'text', text: 'Searching.' },
                { type: 'text', text: 'Paused.' },
                { type: 'server_tool_use', id: 'srvtoolu_3', name: 'web_fetch', input: { url: 'https://yr.no' } },
                { type: 'web_fetch_tool_result', tool_use_id: 'srvtoolu_3', content: search },
              ],
            },
          ],
        },
        warnings: [
          "toAnthropicMessages dropped server tool call 'srvtoolu_1' (web_search) of assistant message 'a1': Anthropic ran it itself and takes it back only followed by its result block, and no tool message gives that result with its block type (metadata.anthropic.type, such as 'web_search_tool_result', as fromAnthropicMessages sets it). Sent apart, Anthropic would refuse the call (or its result).",
          "toAnthropicMessages dropped server tool call 'srvtoolu_2' (web_search) of assistant message 'a1': Anthropic ran it itself and takes it back only followed by its result block, and no tool message gives that result with its block type (metadata.anthropic.type, such as 'web_search_tool_result', as fromAnthropicMessages sets it). Sent apart, Anthropic would refuse the call (or its result).",
          "toAnthropicMessages dropped tool message 't1': it answers tool call 'srvtoolu_2', which Anthropic ran itself (a server tool), and does not name the result block it came as (metadata.anthropic.type, such as 'web_search_tool_result', as fromAnthropicMessages sets it). Anthropic takes a server tool's result only as that block, after its call.",
          "toAnthropicMessages dropped tool message 't4': it answers tool call 'srvtoolu_3', which Anthropic ran itself (a server tool), and another tool message already gives its result. Anthropic takes a server tool's result only as that block, after its call.",
          "toAnthropicMessages dropped server tool call 'srvtoolu_4' (web_search) of assistant message 'a3': Anthropic ran it itself and takes it back only followed by its result block, and the content of tool message 't5' is not the JSON its metadata says it is (contentFormat: 'json'). Sent apart, Anthropic would refuse the call (or its result).",
        ],
      });
    });
  });

  it('should give what its doc example promises', () => {
    const { system, messages } = toAnthropicMessages([
      { id: 's1', role: 'system', content: 'Be brief.' },
      { id: 'u1', role: 'user', content: 'Weather in Paris?' },
      { id: 'a1', role: 'assistant', toolCalls: [{ id: 'c1', type: 'function', function: { name: 'weather', arguments: '{"city":"Paris"}' } }] },
      { id: 't1', role: 'tool', toolCallId: 'c1', content: 'Sunny' },
    ]);
    expect(JSON.stringify({ system, messages })).toBe(
      '{"system":"Be brief.","messages":[{"role":"user","content":[{"type":"text","text":"Weather in Paris?"}]},{"role":"assistant","content":[{"type":"tool_use","id":"c1","name":"weather","input":{"city":"Paris"}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"c1","content":"Sunny"}]}]}',
    );
  });
});
