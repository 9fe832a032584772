import { from } from 'rxjs';
import type { AgentEvent } from '../../../lib/protocol/agentEvent.js';
import { hintForUnknownType, hintForUntyped } from '../../../lib/protocol/agentEvent.js';
import { toAgui } from '../../../operators/toAgui.js';
import { collect, diagnosticsSink } from '../../support/helpers.js';

describe('hintForUnknownType', () => {
  it('should name the AG-UI type an event spells in another case', () => {
    for (const type of ['text_message_chunk', 'Tool_Call_Chunk', 'state-snapshot', 'run.finished']) {
      expect(hintForUnknownType(type)).toMatch(/^ Did you mean '[A-Z_]+'\? AG-UI's event types are written in upper case\.$/);
    }
    expect(hintForUnknownType('text_message_chunk')).toContain("'TEXT_MESSAGE_CHUNK'");
  });

  it("should name the adapter of a provider's stream event", () => {
    expect(hintForUnknownType('content_block_delta')).toBe(" It looks like an Anthropic Messages stream event: read the provider's stream with fromAnthropicMessages() before toAgui.");
    expect(hintForUnknownType('response.output_text.delta')).toContain('fromOpenAIResponses()');
    expect(hintForUnknownType('text-delta')).toContain('fromAiSdkStream()');
    expect(hintForUnknownType('tool-input-start')).toContain('fromAiSdkStream()');
  });

  it("should name the adapter of every part type of the AI SDK's streams (fullStream and UI message stream)", () => {
    const parts = [
      'start', 'finish', 'abort', 'stream-start', 'start-step', 'finish-step', 'response-metadata', 'message-metadata',
      'text-start', 'text-end', 'reasoning-start', 'reasoning-delta', 'reasoning-end', 'tool-input-delta', 'tool-input-end',
      'tool-call', 'tool-result', 'tool-error', 'tool-input-available', 'tool-input-error', 'tool-output-available', 'tool-output-error', 'tool-output-denied', 'tool-approval-request',
      'source', 'source-url', 'source-document', 'file', 'data-weather',
    ];
    for (const type of parts) expect([type, hintForUnknownType(type)]).toEqual([type, expect.stringContaining('fromAiSdkStream()')]);
    // Two of them spell AG-UI types as well: both are named.
    expect(hintForUnknownType('reasoning-start')).toBe(" Did you mean 'REASONING_START'? AG-UI's event types are written in upper case. If it is an AI SDK stream event, read the provider's stream with fromAiSdkStream() before toAgui.");
    // AI SDK 4's fullStream and provider parts too.
    for (const type of ['reasoning', 'reasoning-signature', 'redacted-reasoning', 'tool-call-streaming-start', 'tool-call-delta', 'step-start', 'step-finish']) {
      expect([type, hintForUnknownType(type)]).toEqual([type, " It looks like an AI SDK stream event: read the provider's stream with fromAiSdkStream() before toAgui."]);
    }
    // A part named after nothing the SDK sends is no AI SDK part.
    for (const type of ['data-', 'finish-line', 'tool-input', 'step-end', 'reasoning-text']) expect(hintForUnknownType(type)).toBe('');
  });

  it("should name both adapters whose streams send a bare 'error' event, and RUN_ERROR", () => {
    const hint = hintForUnknownType('error');
    for (const part of ['fromAnthropicMessages()', 'fromAiSdkStream()', 'RUN_ERROR']) expect(hint).toContain(part);
  });

  it('should have nothing to say of another type', () => {
    for (const type of ['MY_EVENT', 'weather_update', 'TEXT_MESSAGE_CHUNKS']) expect(hintForUnknownType(type)).toBe('');
  });
});

describe('hintForUntyped', () => {
  it("should name the adapter of a provider's chunk, and nothing else", () => {
    expect(hintForUntyped({ id: 'c1', object: 'chat.completion.chunk', choices: [] })).toContain('fromOpenAIChatCompletions()');
    expect(hintForUntyped({ event: 'on_chat_model_stream', data: {} })).toContain('fromLangChainStreamEvents()');
    expect(hintForUntyped({ delta: 'Hi' })).toBe('');
  });

  it('should give no hint, and never throw, for an event whose fields throw when read', async () => {
    const hostile = Object.defineProperty({ kind: 'x' }, 'choices', {
      get() {
        throw new Error('lazy getter failed');
      },
    });
    expect(hintForUntyped(hostile)).toBe('');
    const trap = new Proxy({}, { get: () => { throw new Error('trap'); } });
    expect(hintForUntyped(trap)).toBe('');
    // The error it would add to is the run's, as before.
    const events = await collect(from([hostile] as unknown as AgentEvent[]).pipe(toAgui({ threadId: 't', runId: 'r', onDiagnostic: () => undefined, onError: () => undefined })));
    expect(events.at(-1)).toMatchObject({ type: 'RUN_ERROR', code: 'INVALID_EVENT', message: "Received an event without a string 'type' (got undefined). Every event needs a type, e.g. 'TEXT_MESSAGE_CHUNK'." });
  });
});

describe('toAgui and an event it cannot read', () => {
  it('should say in its diagnostic and its error what was most likely meant', async () => {
    const sink = diagnosticsSink();
    const events = await collect(
      from([{ type: 'text_message_chunk', delta: 'x' }, { object: 'chat.completion.chunk', choices: [] }] as unknown as AgentEvent[]).pipe(
        toAgui({ threadId: 't', runId: 'r', onDiagnostic: sink.onDiagnostic, onError: () => undefined }),
      ),
    );
    expect(sink.messages).toEqual([expect.stringMatching(/^Dropped an event of unknown type 'text_message_chunk': .* Did you mean 'TEXT_MESSAGE_CHUNK'\?/)]);
    expect(events.at(-1)).toMatchObject({ type: 'RUN_ERROR', code: 'INVALID_EVENT', message: expect.stringContaining('fromOpenAIChatCompletions() before toAgui') });
  });

  it("should point a content event without its id to its kind's chunk, which gets one", async () => {
    const failure = async (event: Record<string, unknown>) =>
      (await collect(from([event] as unknown as AgentEvent[]).pipe(toAgui({ threadId: 't', runId: 'r', onDiagnostic: () => undefined, onError: () => undefined })))).at(-1);
    expect(await failure({ type: 'TEXT_MESSAGE_CONTENT', delta: 'x' })).toMatchObject({
      code: 'INVALID_EVENT',
      message: "TEXT_MESSAGE_CONTENT has no 'messageId'. Add 'messageId' (a string) to the event, or send TEXT_MESSAGE_CHUNK, whose messageId toAgui fills in.",
    });
    expect(await failure({ type: 'TOOL_CALL_ARGS', delta: '{}' })).toMatchObject({ message: expect.stringContaining('or send TOOL_CALL_CHUNK, whose toolCallId toAgui fills in.') });
    // A start names what it starts: no chunk can stand for it.
    expect(await failure({ type: 'TEXT_MESSAGE_END' })).toMatchObject({ message: expect.not.stringContaining('CHUNK') });
  });
});
