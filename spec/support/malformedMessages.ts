import type { ContentPart } from '@ag-ui/core';
import { AguiRxError } from '../../lib/protocol/errors.js';

/**
 * A user message's parts that each converter must judge by its provider: file handles of every
 * provider (and of none), and images of types the APIs take and refuse, by data, URL and file.
 */
export const filesOfEveryProvider: ContentPart[] = [
  { type: 'image', source: { type: 'file', value: 'file-abc123', provider: 'openai', mimeType: 'image/png' } },
  { type: 'image', source: { type: 'file', value: 'files/abc-gemini', provider: 'google' } },
  { type: 'document', source: { type: 'file', value: 'file_011CNha8', provider: 'anthropic', mimeType: 'application/pdf' } },
  { type: 'document', source: { type: 'file', value: 'file-doc', provider: 'OpenAI' } },
  { type: 'document', source: { type: 'file', value: 'file-plain' } },
  { type: 'image', source: { type: 'data', value: 'PHN2Zz4=', mimeType: 'image/svg+xml' } },
  { type: 'image', source: { type: 'url', value: 'https://example.com/a.heic', mimeType: 'image/heic' } },
  { type: 'image', source: { type: 'url', value: 'https://example.com/a' } },
  { type: 'image', source: { type: 'data', value: 'R0lGOD==', mimeType: 'Image/GIF' } },
];

/** What is not an AG-UI message list, and what a message converter named `converter` must throw for it (exact message). */
export function malformedMessages(converter: string): [string, unknown, AguiRxError][] {
  const invalid = (detail: string) => new AguiRxError('INVALID_ARGUMENT', `${converter} cannot convert the messages: ${detail}`);
  const user = { id: 'u1', role: 'user', content: 'Hi' };
  return [
    [
      'the RunAgentInput itself',
      { threadId: 't1', runId: 'r1', messages: [user], tools: [], context: [], state: {}, forwardedProps: {} },
      new AguiRxError('INVALID_ARGUMENT', `${converter} takes RunAgentInput.messages (an array of messages), not the RunAgentInput itself: call ${converter}(input.messages).`),
    ],
    ['a string', 'hello', invalid(`they are "hello", but ${converter} takes an array of AG-UI messages, such as RunAgentInput.messages.`)],
    ['a null message', [user, null], invalid("messages[1] is null, but each message must be an object with a role, such as { id: 'u1', role: 'user', content: 'Hi' }.")],
    // eslint-disable-next-line no-sparse-arrays
    ['a hole in the list', [, user], invalid("messages[0] is undefined, but each message must be an object with a role, such as { id: 'u1', role: 'user', content: 'Hi' }.")],
    ['null content', [user, { id: 'u2', role: 'user', content: null }], invalid("messages[1].content is null, but a user message's content must be its text (a string) or an array of content parts.")],
    [
      'a null content part',
      [{ id: 'u1', role: 'user', content: [{ type: 'text', text: 'Hi' }, null] }],
      invalid("messages[0].content[1] is null, but a content part must be an object with a type, such as { type: 'text', text: 'Hi' }."),
    ],
    [
      'a tool call without function',
      [user, { id: 'a1', role: 'assistant', toolCalls: [{ id: 'c1', type: 'function' }] }],
      invalid("messages[1].toolCalls[0].function is undefined, but a tool call must have function: { name, arguments }, such as { name: 'search', arguments: '{}' }."),
    ],
    ['a tool message without toolCallId', [{ id: 't1', role: 'tool', content: 'x' }], invalid('messages[0].toolCallId is undefined, but a tool message must name the call it answers (a string).')],
    ['an image part without source', [{ id: 'u1', role: 'user', content: [{ type: 'image' }] }], invalid("messages[0].content[0].source is undefined, but a image part's source must be { type: 'data' | 'url' | 'file', value: '…', mimeType? }.")],
  ];
}

/** What a function throws, as a plain object of its name, code and message (`undefined` when it returns). */
export function thrown(run: () => unknown): { name: unknown; code: unknown; message: unknown } | undefined {
  try {
    run();
    return undefined;
  } catch (error) {
    const { name, code, message } = error as { name?: unknown; code?: unknown; message?: unknown };
    return { name, code, message };
  }
}
