import type { Message, ResumeEntry } from '@ag-ui/core';
import { toOpenAIResponsesInput } from '../../../lib/converters/toOpenAIResponsesInput.js';
import { AguiRxError } from '../../../lib/protocol/errors.js';
import { filesOfEveryProvider, malformedMessages, thrown } from '../../support/malformedMessages.js';

const png = { type: 'data', value: 'iVBORw0KGgo=', mimeType: 'image/png' } as const;
const call = (id: string, args: string) => ({ id, type: 'function' as const, function: { name: 'weather', arguments: args } });

/** A call made by a Responses tool item, marked as fromOpenAIResponses marks it. */
const itemCall = (id: string, name: string, args: string, openai: Record<string, unknown>) => ({ id, type: 'function' as const, function: { name, arguments: args }, metadata: { openai } });
const failed = 'Error: the call did not complete, and no result was returned for it.';

function convert(messages: Message[], resume?: ResumeEntry[]) {
  const warnings: string[] = [];
  const result = toOpenAIResponsesInput(messages, { onWarning: (message) => void warnings.push(message), ...(resume === undefined ? {} : { resume }) });
  return { result, warnings };
}

describe('toOpenAIResponsesInput', () => {
  it.each(malformedMessages('toOpenAIResponsesInput'))('should refuse %s with an error that says what is wrong and where', (_, messages, error) => {
    expect(thrown(() => toOpenAIResponsesInput(messages as never))).toEqual({ name: 'AguiRxError', code: error.code, message: error.message });
  });

  it('should take an assistant message with null content or null toolCalls as one without', () => {
    expect(convert([{ id: 'u1', role: 'user', content: 'Hi' }, { id: 'a1', role: 'assistant', content: null, toolCalls: null } as never]).result.input).toEqual([
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Hi' }] },
    ]);
  });

  it('should split system and developer messages out into instructions', () => {
    expect(
      convert([
        { id: 's1', role: 'system', content: 'Be brief.' },
        { id: 'u1', role: 'user', content: 'Hi' },
        { id: 'd1', role: 'developer', content: 'Answer in French.' },
      ]),
    ).toEqual({
      result: { instructions: 'Be brief.\n\nAnswer in French.', input: [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Hi' }] }] },
      warnings: [],
    });
  });

  it('should leave instructions out when there is no system message', () => {
    expect(convert([{ id: 'u1', role: 'user', content: 'Hi' }]).result).toEqual({ input: [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Hi' }] }] });
  });

  it('should turn user parts into input_text, input_image, input_file and input_audio', () => {
    expect(
      convert([
        {
          id: 'u1',
          role: 'user',
          content: [
            { type: 'text', text: 'Look:' },
            { type: 'image', source: png },
            { type: 'image', source: { type: 'url', value: 'https://example.com/a.jpg' } },
            { type: 'image', source: { type: 'file', value: 'file-img' } },
            { type: 'document', source: { type: 'data', value: 'JVBERi0=', mimeType: 'application/pdf' }, metadata: { filename: 'r.pdf' } },
            { type: 'document', source: { type: 'url', value: 'https://example.com/a.pdf' } },
            { type: 'document', source: { type: 'file', value: 'file-doc' } },
            { type: 'audio', source: { type: 'data', value: 'UklGRg==', mimeType: 'audio/wav' } },
          ],
        },
      ]),
    ).toEqual({
      result: {
        input: [
          {
            type: 'message',
            role: 'user',
            content: [
              { type: 'input_text', text: 'Look:' },
              { type: 'input_image', detail: 'auto', image_url: 'data:image/png;base64,iVBORw0KGgo=' },
              { type: 'input_image', detail: 'auto', image_url: 'https://example.com/a.jpg' },
              { type: 'input_image', detail: 'auto', file_id: 'file-img' },
              { type: 'input_file', filename: 'r.pdf', file_data: 'data:application/pdf;base64,JVBERi0=' },
              { type: 'input_file', file_url: 'https://example.com/a.pdf' },
              { type: 'input_file', file_id: 'file-doc' },
              { type: 'input_audio', input_audio: { data: 'UklGRg==', format: 'wav' } },
            ],
          },
        ],
      },
      warnings: [],
    });
  });

  it('should drop a file handle another provider issued, and an image type the Responses API does not take, each with a warning', () => {
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
        input: [
          {
            type: 'message',
            role: 'user',
            content: [
              { type: 'input_image', detail: 'auto', file_id: 'file-abc123' },
              { type: 'input_file', file_id: 'file-doc' },
              { type: 'input_file', file_id: 'file-plain' },
              { type: 'input_image', detail: 'auto', image_url: 'https://example.com/a' },
              { type: 'input_image', detail: 'auto', image_url: 'data:image/gif;base64,R0lGOD==' },
            ],
          },
        ],
      },
      warnings: [
        "toOpenAIResponsesInput dropped the image part at index 1 of user message 'u1': it is a file handle that 'google' issued ('files/abc-gemini'), and only the provider that issued a handle can resolve it: the Responses API would refuse it. Send the file's bytes (base64) or its URL instead, or upload the file to OpenAI's Files API and send that id (with provider: 'openai').",
        "toOpenAIResponsesInput dropped the document part at index 2 of user message 'u1': it is a file handle that 'anthropic' issued ('file_011CNha8'), and only the provider that issued a handle can resolve it: the Responses API would refuse it. Send the file's bytes (base64) or its URL instead, or upload the file to OpenAI's Files API and send that id (with provider: 'openai').",
        "toOpenAIResponsesInput dropped the image part at index 5 of user message 'u1': the Responses API takes images only as image/jpeg, image/png, image/gif, image/webp, and this is base64 (image/svg+xml). Convert it to PNG or JPEG first.",
        "toOpenAIResponsesInput dropped the image part at index 6 of user message 'u1': the Responses API takes images only as image/jpeg, image/png, image/gif, image/webp, and this is URL (image/heic). Convert it to PNG or JPEG first.",
      ],
    });
  });

  it('should turn assistant text into output_text and each tool call into a function_call item', () => {
    expect(
      convert([
        {
          id: 'a1',
          role: 'assistant',
          content: 'Checking.',
          toolCalls: [
            { id: 'c1', type: 'function', function: { name: 'weather', arguments: '{"city":"Paris"}' } },
            { id: 'c2', type: 'function', function: { name: 'now', arguments: '{}' } },
          ],
        },
        { id: 't1', role: 'tool', toolCallId: 'c1', content: 'Sunny' },
        { id: 't2', role: 'tool', toolCallId: 'c2', content: 'noon' },
        { id: 'a2', role: 'assistant', content: '' },
      ]),
    ).toEqual({
      result: {
        input: [
          { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Checking.' }] },
          { type: 'function_call', call_id: 'c1', name: 'weather', arguments: '{"city":"Paris"}' },
          { type: 'function_call', call_id: 'c2', name: 'now', arguments: '{}' },
          { type: 'function_call_output', call_id: 'c1', output: 'Sunny' },
          { type: 'function_call_output', call_id: 'c2', output: 'noon' },
        ],
      },
      warnings: [],
    });
  });

  it('should turn tool messages into function_call_output items: text as a string, media as parts', () => {
    expect(
      convert([
        { id: 't1', role: 'tool', toolCallId: 'c1', content: 'Sunny' },
        { id: 't2', role: 'tool', toolCallId: 'c2', content: '', error: 'timeout' },
        { id: 't3', role: 'tool', toolCallId: 'c3', content: [{ type: 'text', text: 'chart:' }, { type: 'image', source: png }], error: 'partial' },
      ]),
    ).toEqual({
      result: {
        input: [
          { type: 'function_call_output', call_id: 'c1', output: 'Sunny' },
          { type: 'function_call_output', call_id: 'c2', output: 'Error: timeout' },
          {
            type: 'function_call_output',
            call_id: 'c3',
            output: [
              { type: 'input_text', text: 'chart:' },
              { type: 'input_image', detail: 'auto', image_url: 'data:image/png;base64,iVBORw0KGgo=' },
              { type: 'input_text', text: 'Error: partial' },
            ],
          },
        ],
      },
      warnings: [],
    });
  });

  it('should drop a tool message that comes before its call, with a warning, and send the call one (failed) output', () => {
    expect(convert([{ id: 'u1', role: 'user', content: 'Hi' }, { id: 't1', role: 'tool', toolCallId: 'c1', content: 'early' }, { id: 'a1', role: 'assistant', toolCalls: [call('c1', '{}')] }])).toEqual({
      result: {
        input: [
          { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Hi' }] },
          { type: 'function_call', call_id: 'c1', name: 'weather', arguments: '{}' },
          { type: 'function_call_output', call_id: 'c1', output: failed },
        ],
      },
      warnings: [
        expect.stringMatching(/^toOpenAIResponsesInput sent tool call 'c1' \(weather\) of assistant message 'a1' with a failed result/),
        "toOpenAIResponsesInput dropped tool message 't1': it answers tool call 'c1', which assistant message 'a1' makes only after it, and a result answers a call made before it (the API takes a call's result only after the call). Put the tool message after the assistant message with the call.",
      ],
    });
  });

  it('should send a call whose id an earlier call has under a new id, with its output, one output per call_id', () => {
    const { result, warnings } = convert([
      { id: 'a1', role: 'assistant', toolCalls: [call('c1', '{"n":1}'), call('c1', '{"n":2}')] },
      { id: 't1', role: 'tool', toolCallId: 'c1', content: 'r1' },
      { id: 't2', role: 'tool', toolCallId: 'c1', content: 'r2' },
      { id: 'a2', role: 'assistant', toolCalls: [call('c1', '{"n":3}')] },
      { id: 't3', role: 'tool', toolCallId: 'c1', content: 'r3' },
    ]);
    expect(result.input).toEqual([
      { type: 'function_call', call_id: 'c1', name: 'weather', arguments: '{"n":1}' },
      { type: 'function_call', call_id: 'c1_2', name: 'weather', arguments: '{"n":2}' },
      { type: 'function_call_output', call_id: 'c1', output: 'r1' },
      { type: 'function_call_output', call_id: 'c1_2', output: 'r2' },
      { type: 'function_call', call_id: 'c1_3', name: 'weather', arguments: '{"n":3}' },
      { type: 'function_call_output', call_id: 'c1_3', output: 'r3' },
    ]);
    expect(warnings).toEqual([
      expect.stringMatching(/^toOpenAIResponsesInput sent tool call 'c1' \(weather\) of assistant message 'a1' as 'c1_2', and the results that answer it with that id: an earlier call has the id 'c1'/),
      expect.stringMatching(/^toOpenAIResponsesInput sent tool call 'c1' \(weather\) of assistant message 'a2' as 'c1_3'/),
    ]);
  });

  it('should answer a function call that no tool message answers with a failed output and a warning, before the next turn and at the end', () => {
    const unanswered = (id: string, messageId: string) =>
      `toOpenAIResponsesInput sent tool call '${id}' (weather) of assistant message '${messageId}' with a failed result ("Error: the call did not complete, and no result was returned for it."): no tool message answers it, and the API refuses a call without its result. A run cut or stopped mid-call, or a client tool never answered, leaves such a call; to send its real result, add a tool message for it to the messages before converting them.`;
    expect(
      convert([
        { id: 'u1', role: 'user', content: 'Weather in Oslo?' },
        { id: 'a1', role: 'assistant', content: 'Checking.', toolCalls: [call('c1', '{"city":"Os')] },
        { id: 'u2', role: 'user', content: 'Try again please.' },
        { id: 'a2', role: 'assistant', toolCalls: [call('c2', '{"city":"Oslo"}')] },
      ]),
    ).toEqual({
      result: {
        input: [
          { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Weather in Oslo?' }] },
          { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Checking.' }] },
          { type: 'function_call', call_id: 'c1', name: 'weather', arguments: '{"city":"Os' },
          { type: 'function_call_output', call_id: 'c1', output: 'Error: the call did not complete, and no result was returned for it.' },
          { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Try again please.' }] },
          { type: 'function_call', call_id: 'c2', name: 'weather', arguments: '{"city":"Oslo"}' },
          { type: 'function_call_output', call_id: 'c2', output: 'Error: the call did not complete, and no result was returned for it.' },
        ],
      },
      warnings: [unanswered('c1', 'a1'), unanswered('c2', 'a2')],
    });
  });

  it('should answer the parallel calls that got no output after the outputs that came, and move a late output to its call', () => {
    expect(
      convert([
        { id: 'a1', role: 'assistant', toolCalls: [call('c1', '{}'), call('c2', '{}')] },
        { id: 'u2', role: 'user', content: 'Still there?' },
        { id: 't2', role: 'tool', toolCallId: 'c2', content: 'late' },
      ]),
    ).toEqual({
      result: {
        input: [
          { type: 'function_call', call_id: 'c1', name: 'weather', arguments: '{}' },
          { type: 'function_call', call_id: 'c2', name: 'weather', arguments: '{}' },
          { type: 'function_call_output', call_id: 'c2', output: 'late' },
          { type: 'function_call_output', call_id: 'c1', output: 'Error: the call did not complete, and no result was returned for it.' },
          { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Still there?' }] },
        ],
      },
      warnings: [expect.stringMatching(/^toOpenAIResponsesInput sent tool call 'c1' \(weather\) of assistant message 'a1' with a failed result/)],
    });
  });

  it('should send reasoning with an encryptedValue back as a reasoning item, with the API id when it is one', () => {
    expect(
      convert([
        { id: 'rs_123', role: 'reasoning', content: 'Compared the two.', encryptedValue: 'gAAA1' },
        { id: 'r2', role: 'reasoning', content: '', encryptedValue: 'gAAA2' },
        { id: 'a1', role: 'assistant', content: 'The second.' },
      ]),
    ).toEqual({
      result: {
        input: [
          { type: 'reasoning', id: 'rs_123', encrypted_content: 'gAAA1', summary: [{ type: 'summary_text', text: 'Compared the two.' }] },
          { type: 'reasoning', encrypted_content: 'gAAA2', summary: [] },
          { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'The second.' }] },
        ],
      },
      warnings: [],
    });
  });

  it('should drop, with a warning, reasoning that no assistant message or tool call follows (a response cut while it reasoned), as the API refuses it', () => {
    expect(
      convert([
        { id: 'u1', role: 'user', content: 'Weather?' },
        { id: 'rs_1', role: 'reasoning', content: 'Thinking…', encryptedValue: 'gAAA1' },
        { id: 'u2', role: 'user', content: 'Try again.' },
        { id: 'rs_2', role: 'reasoning', content: '', encryptedValue: 'gAAA2' },
        { id: 'a2', role: 'assistant', toolCalls: [{ id: 'c1', type: 'function', function: { name: 'weather', arguments: '{}' } }] },
        { id: 't1', role: 'tool', toolCallId: 'c1', content: 'sunny' },
        { id: 'rs_3', role: 'reasoning', content: 'Last words', encryptedValue: 'gAAA3' },
      ]),
    ).toEqual({
      result: {
        input: [
          { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Weather?' }] },
          { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Try again.' }] },
          { type: 'reasoning', id: 'rs_2', encrypted_content: 'gAAA2', summary: [] },
          { type: 'function_call', call_id: 'c1', name: 'weather', arguments: '{}' },
          { type: 'function_call_output', call_id: 'c1', output: 'sunny' },
        ],
      },
      warnings: ['rs_1', 'rs_3'].map(
        (id) =>
          `toOpenAIResponsesInput dropped reasoning message '${id}': no assistant message or tool call follows it (its response was cut while the model reasoned), and the API refuses a reasoning item without the item that followed it.`,
      ),
    });
  });

  it('should drop reasoning without encryptedValue, activity, video and unusable audio with warnings that name them, and leave out a message left empty', () => {
    expect(
      convert([
        { id: 'r1', role: 'reasoning', content: 'plain' },
        { id: 'x1', role: 'activity', activityType: 'plan', content: {} },
        {
          id: 'u1',
          role: 'user',
          content: [
            { type: 'video', source: { type: 'url', value: 'https://example.com/v.mp4' } },
            { type: 'audio', source: { type: 'data', value: 'T2dn', mimeType: 'audio/ogg' } },
          ],
        },
      ]),
    ).toEqual({
      result: { input: [] },
      warnings: [
        "toOpenAIResponsesInput dropped reasoning message 'r1': it has no encryptedValue, and the Responses API takes reasoning back only as encrypted_content.",
        "toOpenAIResponsesInput dropped activity message 'x1' (plan): activity is shown to the user, not sent to the model.",
        "toOpenAIResponsesInput dropped the video part at index 0 of user message 'u1': the Responses API takes no video. Send frames as images, or a transcript as text.",
        "toOpenAIResponsesInput dropped the audio part at index 1 of user message 'u1': the Responses API takes audio only as base64 wav or mp3, and this is base64 (audio/ogg). Convert it to wav or mp3 bytes first.",
      ],
    });
  });

  describe('tool items (marked metadata: { openai: { type } } by fromOpenAIResponses)', () => {
    const custom = (id: string, args: string) => itemCall(id, 'run_sql', args, { type: 'custom_tool_call' });

    it("should send a custom tool's call as custom_tool_call with its input text, and its results (a failed one too) as custom_tool_call_output", () => {
      expect(
        convert([
          { id: 'a1', role: 'assistant', toolCalls: [custom('c1', '{"input":"SELECT \\"a\\"\\nFROM t"}'), custom('c2', '{"input":"DROP t"}'), call('c3', '{}')] },
          { id: 't1', role: 'tool', toolCallId: 'c1', content: '3 rows' },
          { id: 't3', role: 'tool', toolCallId: 'c3', content: 'Sunny' },
        ]),
      ).toEqual({
        result: {
          input: [
            { type: 'custom_tool_call', call_id: 'c1', name: 'run_sql', input: 'SELECT "a"\nFROM t' },
            { type: 'custom_tool_call', call_id: 'c2', name: 'run_sql', input: 'DROP t' },
            // An unmarked call stays a function call.
            { type: 'function_call', call_id: 'c3', name: 'weather', arguments: '{}' },
            { type: 'custom_tool_call_output', call_id: 'c1', output: '3 rows' },
            { type: 'function_call_output', call_id: 'c3', output: 'Sunny' },
            { type: 'custom_tool_call_output', call_id: 'c2', output: failed },
          ],
        },
        warnings: [expect.stringContaining("toOpenAIResponsesInput sent tool call 'c2' (run_sql) of assistant message 'a1' with a failed result")],
      });
    });

    it('should send arguments that are not {"input": …} as the input text, with a warning, and keep reasoning before a custom call', () => {
      expect(
        convert([
          { id: 'rs_1', role: 'reasoning', content: '', encryptedValue: 'gAAA' },
          { id: 'a1', role: 'assistant', toolCalls: [custom('c1', 'SELECT 1')] },
          { id: 't1', role: 'tool', toolCallId: 'c1', content: '1' },
        ]),
      ).toEqual({
        result: {
          input: [
            { type: 'reasoning', id: 'rs_1', encrypted_content: 'gAAA', summary: [] },
            { type: 'custom_tool_call', call_id: 'c1', name: 'run_sql', input: 'SELECT 1' },
            { type: 'custom_tool_call_output', call_id: 'c1', output: '1' },
          ],
        },
        warnings: [`toOpenAIResponsesInput sent custom tool call 'c1' (run_sql) of assistant message 'a1' with its arguments as its input text: they are not the {"input": "<text>"} fromOpenAIResponses gives a custom tool's call.`],
      });
    });

    it('should leave out a call OpenAI ran itself and its results with one warning, never a failed output, keeping the text around it', () => {
      const { result, warnings } = convert([
        { id: 'u1', role: 'user', content: 'Roll a die.' },
        {
          id: 'a1',
          role: 'assistant',
          content: 'Rolling.',
          toolCalls: [itemCall('mcp_1', 'roll', '{"sides":6}', { type: 'mcp_call', server_label: 'dice' }), itemCall('ws_1', 'web_search', '{}', { type: 'web_search_call' })],
        },
        { id: 't1', role: 'tool', toolCallId: 'mcp_1', content: '4' },
        { id: 't1b', role: 'tool', toolCallId: 'mcp_1', content: '4 again' },
        { id: 'a2', role: 'assistant', content: 'You rolled 4.' },
      ]);
      expect(result.input).toEqual([
        { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Roll a die.' }] },
        { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Rolling.' }] },
        { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'You rolled 4.' }] },
      ]);
      expect(warnings).toEqual([
        expect.stringMatching(/^toOpenAIResponsesInput left out server tool call 'mcp_1' \(roll\) of assistant message 'a1' and its result: OpenAI ran it itself \(a mcp_call item\)/),
        expect.stringMatching(/^toOpenAIResponsesInput left out server tool call 'ws_1' \(web_search\) of assistant message 'a1' and its result: OpenAI ran it itself \(a web_search_call item\)/),
      ]);
    });

    describe('MCP approval requests', () => {
      const request = itemCall('mcpr_1', 'delete_repo', '{"repo":"x"}', { type: 'mcp_approval_request', server_label: 'github' });
      const asked: Message[] = [
        { id: 'u1', role: 'user', content: 'Delete repo x.' },
        { id: 'a1', role: 'assistant', toolCalls: [request] },
      ];
      const user: Message = { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Delete repo x.' }] } as never;
      const requestItem = { type: 'mcp_approval_request', id: 'mcpr_1', server_label: 'github', name: 'delete_repo', arguments: '{"repo":"x"}' };

      it('should send the request and its mcp_approval_response for a resume entry that answers it (resolved, a bare boolean, or cancelled)', () => {
        expect(convert(asked, [{ interruptId: 'other', status: 'resolved', payload: 'x' }, { interruptId: 'mcpr_1', status: 'resolved', payload: true }])).toEqual({
          result: { input: [user, requestItem, { type: 'mcp_approval_response', approval_request_id: 'mcpr_1', approve: true }] },
          warnings: [],
        });
        expect(convert(asked, [{ interruptId: 'mcpr_1', status: 'cancelled' }]).result.input[2]).toEqual({ type: 'mcp_approval_response', approval_request_id: 'mcpr_1', approve: false });
        expect(convert(asked, [{ interruptId: 'mcpr_1', status: 'resolved', payload: { approved: false, reason: 'No.' } }]).result.input[2]).toEqual({
          type: 'mcp_approval_response',
          approval_request_id: 'mcpr_1',
          approve: false,
          reason: 'No.',
        });
      });

      it('should leave out a request no resume entry answers, with a warning, and never make up a failed output for it', () => {
        expect(convert(asked)).toEqual({
          result: { input: [user] },
          warnings: [
            "toOpenAIResponsesInput left out MCP approval request tool call 'mcpr_1' (delete_repo) of assistant message 'a1': no resume entry answers it, and the API runs the tool only on an mcp_approval_response. To answer it, pass the run's RunAgentInput.resume as options.resume (an entry with interruptId 'mcpr_1').",
          ],
        });
      });

      it('should drop a tool message that answers a request, and send only the answer of a request without server_label, each with a warning', () => {
        const resume: ResumeEntry[] = [{ interruptId: 'mcpr_1', status: 'resolved', payload: { approved: true } }];
        expect(convert([...asked, { id: 't1', role: 'tool', toolCallId: 'mcpr_1', content: 'approved' }], resume)).toEqual({
          result: { input: [user, requestItem, { type: 'mcp_approval_response', approval_request_id: 'mcpr_1', approve: true }] },
          warnings: [
            "toOpenAIResponsesInput dropped tool message 't1': it answers MCP approval request 'mcpr_1', which takes no result; the user's answer goes in options.resume (RunAgentInput.resume), as an mcp_approval_response.",
          ],
        });
        const unlabelled = itemCall('mcpr_1', 'delete_repo', '{"repo":"x"}', { type: 'mcp_approval_request' });
        expect(convert([{ id: 'a1', role: 'assistant', toolCalls: [unlabelled] }], resume)).toEqual({
          result: { input: [{ type: 'mcp_approval_response', approval_request_id: 'mcpr_1', approve: true }] },
          warnings: [
            "toOpenAIResponsesInput sent only the answer to MCP approval request tool call 'mcpr_1' (delete_repo) of assistant message 'a1': its mark has no server_label, so the request item cannot be sent with it, and the API finds the request only through previous_response_id.",
          ],
        });
      });

      it('should fail with INVALID_RESUME naming the request when a resolved entry does not say whether it is approved', () => {
        expect(() => convert(asked, [{ interruptId: 'mcpr_1', status: 'resolved', payload: { ok: 'yes' } }])).toThrow(
          new AguiRxError(
            'INVALID_RESUME',
            `toOpenAIResponsesInput cannot answer MCP approval request 'mcpr_1': its resume entry's payload is an object, but it must say whether the call is approved: { approved: true } or { approved: false, reason: '…' } (or a bare boolean).`,
          ),
        );
      });

      it('should fail with INVALID_RESUME for an entry whose status is neither resolved nor cancelled', () => {
        expect(() => convert(asked, [{ interruptId: 'mcpr_1', status: 'pending', payload: true } as unknown as ResumeEntry])).toThrow(
          new AguiRxError(
            'INVALID_RESUME',
            `toOpenAIResponsesInput cannot answer MCP approval request 'mcpr_1': its resume entry's status is "pending", but it must be 'resolved' (answered: payload { approved }) or 'cancelled' (declined).`,
          ),
        );
      });

      it.each([
        ['a null entry', [null], '[0] is null, not a resume entry'],
        ['an object', { interruptId: 'mcpr_1' }, 'is an object, not an array'],
        ['a string', 'mcpr_1', 'is "mcpr_1", not an array'],
        ['an entry without interruptId', [{ status: 'resolved' }], '[0].interruptId is undefined, not the id of an interrupt (a string)'],
      ])('should refuse options.resume that is %s with INVALID_ARGUMENT saying what to pass', (_, resume, detail) => {
        expect(() => convert(asked, resume as unknown as ResumeEntry[])).toThrow(
          new AguiRxError('INVALID_ARGUMENT', `toOpenAIResponsesInput's options.resume ${detail}: pass the run's RunAgentInput.resume (an array of { interruptId, status, payload? }), or leave it out.`),
        );
      });
    });
  });

  it('should give what its doc example promises', () => {
    const { instructions, input } = toOpenAIResponsesInput([
      { id: 's1', role: 'system', content: 'Be brief.' },
      { id: 'u1', role: 'user', content: 'Weather in Paris?' },
      { id: 'a1', role: 'assistant', toolCalls: [{ id: 'c1', type: 'function', function: { name: 'weather', arguments: '{"city":"Paris"}' } }] },
      { id: 't1', role: 'tool', toolCallId: 'c1', content: 'Sunny' },
    ]);
    expect(JSON.stringify({ instructions, input })).toBe(
      '{"instructions":"Be brief.","input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"Weather in Paris?"}]},{"type":"function_call","call_id":"c1","name":"weather","arguments":"{\\"city\\":\\"Paris\\"}"},{"type":"function_call_output","call_id":"c1","output":"Sunny"}]}',
    );
  });
});
