import { EventType, type Event, type Message } from '@ag-ui/core';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { concat, from, of, type Observable, type OperatorFunction } from 'rxjs';
import type { AgentEvent } from '../../lib/protocol/agentEvent.js';
import { fromAnthropicMessages, type AnthropicStreamEvent } from '../../lib/adapters/fromAnthropicMessages.js';
import { fromOpenAIChatCompletions, type ChatCompletionChunk } from '../../lib/adapters/fromOpenAIChatCompletions.js';
import { fromOpenAIResponses, type ResponseOutputItem, type ResponseStreamEvent } from '../../lib/adapters/fromOpenAIResponses.js';
import { toAnthropicMessages, type AnthropicContentBlockParam, type AnthropicMessageParam } from '../../lib/converters/toAnthropicMessages.js';
import { toOpenAIChatMessages, type OpenAIChatMessage } from '../../lib/converters/toOpenAIChatMessages.js';
import { toOpenAIResponsesInput, type ResponsesInputItem } from '../../lib/converters/toOpenAIResponsesInput.js';
import { toAgui } from '../../operators/toAgui.js';
import { fixturesDir, haveFixtures } from '../support/fixtures.js';
import { diagnosticsSink } from '../support/helpers.js';
import { runWithOracle } from '../support/oracle.js';

/**
 * Round trips: an AG-UI conversation becomes a provider's request format; its assistant turns are
 * then played back as that provider's own streaming events (built here, in the real wire shape,
 * from the converted turns), its tool results as the agent's TOOL_CALL_RESULTs, through the
 * provider's adapter, toAgui and the official client: the conversation the client ends with must
 * be the one we started from.
 */

const call = (id: string, name: string, args: string) => ({ id, type: 'function' as const, function: { name, arguments: args } });

const conversation: Message[] = [
  { id: 'u1', role: 'user', content: 'What is the weather in Paris, and the time in Tokyo?' },
  { id: 'a1', role: 'assistant', content: 'Let me check both.', toolCalls: [call('call_weather', 'get_weather', '{"city":"Paris","unit":"celsius"}'), call('call_time', 'get_time', '{"zone":"Asia/Tokyo"}')] },
  { id: 't1', role: 'tool', toolCallId: 'call_weather', content: '{"temp":21,"sky":"clear"}' },
  { id: 't2', role: 'tool', toolCallId: 'call_time', content: '09:00' },
  { id: 'a2', role: 'assistant', content: 'Paris is clear at 21°C, and it is 09:00 in Tokyo.' },
];

/** The same conversation with the model's signed thinking before its tool calls (Anthropic extended thinking). */
const withThinking: Message[] = [
  conversation[0],
  { id: 'r1', role: 'reasoning', content: 'Two independent lookups: call both tools at once.', encryptedValue: 'EqQBCkgIARABGAIiQL7signature' },
  ...conversation.slice(1),
];

/**
 * The same conversation with the model's encrypted reasoning (Responses API, `store: false`):
 * summarised before the calls, without a summary (the default) before the answer.
 */
const withEncryptedReasoning: Message[] = [
  conversation[0],
  { id: 'rs_1', role: 'reasoning', content: 'Two independent lookups: call both tools at once.', encryptedValue: 'gAAAAABo-first-reasoning' },
  ...conversation.slice(1, 4),
  { id: 'rs_2', role: 'reasoning', content: '', encryptedValue: 'gAAAAABo-second-reasoning' },
  conversation[4],
];

/** A conversation with a custom (freeform) tool's call, marked as fromOpenAIChatCompletions and fromOpenAIResponses mark it. */
const withCustomCall: Message[] = [
  conversation[0],
  {
    id: 'a1',
    role: 'assistant',
    content: 'Let me run that.',
    toolCalls: [{ ...call('call_sql', 'run_sql', JSON.stringify({ input: 'SELECT "temp"\nFROM weather;' })), metadata: { openai: { type: 'custom_tool_call' } } }, call('call_time', 'get_time', '{"zone":"Asia/Tokyo"}')],
  },
  { id: 't1', role: 'tool', toolCallId: 'call_sql', content: '21' },
  conversation[3],
  conversation[4],
];

/** What a conversation says, without the ids a provider renames (message ids; call ids are kept). */
function said(messages: readonly Message[]) {
  return messages.map((message) => {
    switch (message.role) {
      case 'assistant':
        return { role: 'assistant', text: message.content ?? '', calls: (message.toolCalls ?? []).map((c) => ({ id: c.id, name: c.function.name, arguments: c.function.arguments })) };
      case 'tool':
        return { role: 'tool', toolCallId: message.toolCallId, content: message.content };
      case 'reasoning':
        return { role: 'reasoning', text: message.content, encryptedValue: message.encryptedValue };
      default:
        return { role: message.role, content: message.content };
    }
  });
}

/** Text in pieces of five characters, as a model streams it. */
function pieces(text: string): string[] {
  const out: string[] = [];
  for (let at = 0; at < text.length; at += 5) out.push(text.slice(at, at + 5));
  return out;
}

/** The agent's tool result, as it would emit it after running the tool. */
function toolResult(toolCallId: string, content: string): AgentEvent {
  return { type: EventType.TOOL_CALL_RESULT, toolCallId, content };
}

/** Plays a run back: the turns' events through toAgui and the official client, the user's message as the run's input. */
async function playBack(input: Message[], turns: Observable<AgentEvent>[]) {
  const events$ = concat(...turns).pipe(toAgui({ threadId: 'thread-1', runId: 'run-1' })) as Observable<Event>;
  const run = await runWithOracle(events$, { initialMessages: input });
  const last = run.events[run.events.length - 1] as Event;
  expect(last.type).toBe(EventType.RUN_FINISHED);
  return run;
}

/** Converts with a warning sink that must stay empty. */
function noWarnings() {
  const warnings: string[] = [];
  return { onWarning: (message: string) => void warnings.push(message), warnings };
}

describe('converter round trips through the adapters and the official client', () => {
  it.each([
    ['', conversation],
    [', a custom tool call included', withCustomCall],
  ])('should give the same conversation back through OpenAI chat completions%s', async (_, start) => {
    const sink = noWarnings();
    const chat = toOpenAIChatMessages(start, sink);
    expect(sink.warnings).toEqual([]);
    expect(chatPairingFaults(chat)).toEqual([]);

    /** One assistant message as the chunks Chat Completions streams for it. */
    const chunksOf = (message: Extract<OpenAIChatMessage, { role: 'assistant' }>, id: string): (ChatCompletionChunk | '[DONE]')[] => {
      const chunk = (delta: ChatCompletionChunk['choices'][number]['delta'], finish: string | null = null): ChatCompletionChunk => ({
        id,
        object: 'chat.completion.chunk',
        created: 1732900000,
        model: 'gpt-4o-2024-08-06',
        system_fingerprint: 'fp_test',
        choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
      });
      const calls = message.tool_calls ?? [];
      return [
        chunk({ role: 'assistant', content: '', refusal: null }),
        ...pieces(message.content ?? '').map((content) => chunk({ content })),
        ...calls.flatMap((toolCall, index) =>
          toolCall.type === 'custom'
            ? [
                chunk({ tool_calls: [{ index, id: toolCall.id, type: 'custom', custom: { name: toolCall.custom.name, input: '' } } as never] }),
                ...pieces(toolCall.custom.input).map((input) => chunk({ tool_calls: [{ index, type: 'custom', custom: { input } } as never] })),
              ]
            : [
                chunk({ tool_calls: [{ index, id: toolCall.id, type: 'function', function: { name: toolCall.function.name, arguments: '' } }] }),
                ...pieces(toolCall.function.arguments).map((args) => chunk({ tool_calls: [{ index, function: { arguments: args } }] })),
              ],
        ),
        chunk({}, calls.length > 0 ? 'tool_calls' : 'stop'),
        { id, object: 'chat.completion.chunk', created: 1732900000, model: 'gpt-4o-2024-08-06', choices: [], usage: { prompt_tokens: 40, completion_tokens: 20, total_tokens: 60 } },
        '[DONE]',
      ];
    };

    const [user, ...rest] = chat;
    expect(user).toEqual({ role: 'user', content: start[0].content });
    let completion = 0;
    const turns = rest.map((message) => {
      if (message.role === 'assistant') return from(chunksOf(message, `chatcmpl-${++completion}`)).pipe(fromOpenAIChatCompletions());
      if (message.role === 'tool') return of(toolResult(message.tool_call_id, message.content));
      throw new Error(`unexpected ${message.role} message in the played-back turns`);
    });
    const run = await playBack([start[0]], turns);
    expect(said(run.messages)).toEqual(said(start));
    // The client keeps each call's mark (a custom tool's), which the converter reads back.
    expect(run.messages.flatMap((message) => (message.role === 'assistant' ? (message.toolCalls ?? []).map((toolCall) => toolCall.metadata) : []))).toEqual(
      start.flatMap((message) => (message.role === 'assistant' ? (message.toolCalls ?? []).map((toolCall) => toolCall.metadata) : [])),
    );
    expect(run.messages.filter((message) => message.role === 'assistant').map((message) => message.id)).toEqual(['chatcmpl-1', 'chatcmpl-2']);
    // And the client's conversation converts to the very request we started from.
    expect(toOpenAIChatMessages(run.messages, sink)).toEqual(chat);
  });

  it.each([
    ['', conversation],
    [', encrypted reasoning included', withEncryptedReasoning],
  ])('should give the same conversation back through the OpenAI Responses API%s', async (_, start) => {
    const sink = noWarnings();
    const { instructions, input } = toOpenAIResponsesInput(start, sink);
    expect(sink.warnings).toEqual([]);
    expect(responsesPairingFaults(input)).toEqual([]);
    expect(instructions).toBeUndefined();

    /** One response (consecutive output items) as the events the Responses API streams for it. */
    const eventsOf = (items: ResponsesInputItem[], id: string): ResponseStreamEvent[] => {
      let sequence = 0;
      const events: ResponseStreamEvent[] = [];
      const push = (event: ResponseStreamEvent) => events.push({ ...event, sequence_number: sequence++ } as ResponseStreamEvent);
      const base = { id, object: 'response' as const, model: 'gpt-4.1-2025-04-14' };
      push({ type: 'response.created', response: { ...base, status: 'in_progress', output: [] } });
      push({ type: 'response.in_progress', response: { ...base, status: 'in_progress', output: [] } });
      const output: ResponseOutputItem[] = [];
      items.forEach((item, index) => {
        if (item.type === 'message' && item.role === 'assistant') {
          const text = item.content.map((part) => part.text).join('');
          const itemId = `msg_${id}_${index}`;
          push({ type: 'response.output_item.added', output_index: index, item: { id: itemId, type: 'message', status: 'in_progress', role: 'assistant', content: [] } });
          push({ type: 'response.content_part.added', item_id: itemId, output_index: index, content_index: 0, part: { type: 'output_text', text: '', annotations: [] } });
          for (const delta of pieces(text)) push({ type: 'response.output_text.delta', item_id: itemId, output_index: index, content_index: 0, delta });
          push({ type: 'response.output_text.done', item_id: itemId, output_index: index, content_index: 0, text });
          push({ type: 'response.content_part.done', item_id: itemId, output_index: index, content_index: 0, part: { type: 'output_text', text, annotations: [] } });
          const done: ResponseOutputItem = { id: itemId, type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text, annotations: [] }] };
          push({ type: 'response.output_item.done', output_index: index, item: done });
          output.push(done);
        } else if (item.type === 'function_call') {
          const itemId = `fc_${id}_${index}`;
          push({ type: 'response.output_item.added', output_index: index, item: { id: itemId, type: 'function_call', status: 'in_progress', call_id: item.call_id, name: item.name, arguments: '' } });
          for (const delta of pieces(item.arguments)) push({ type: 'response.function_call_arguments.delta', item_id: itemId, output_index: index, delta });
          push({ type: 'response.function_call_arguments.done', item_id: itemId, output_index: index, arguments: item.arguments });
          const done: ResponseOutputItem = { id: itemId, type: 'function_call', status: 'completed', call_id: item.call_id, name: item.name, arguments: item.arguments };
          push({ type: 'response.output_item.done', output_index: index, item: done });
          output.push(done);
        } else if (item.type === 'reasoning') {
          const itemId = item.id ?? `rs_${id}_${index}`;
          // The added item holds the reasoning so far, encrypted; the done item's value is the one to send back.
          push({ type: 'response.output_item.added', output_index: index, item: { id: itemId, type: 'reasoning', summary: [], encrypted_content: `${item.encrypted_content}-so-far` } });
          item.summary.forEach((part, summary_index) => {
            push({ type: 'response.reasoning_summary_part.added', item_id: itemId, output_index: index, summary_index, part: { type: 'summary_text', text: '' } });
            for (const delta of pieces(part.text)) push({ type: 'response.reasoning_summary_text.delta', item_id: itemId, output_index: index, summary_index, delta });
            push({ type: 'response.reasoning_summary_text.done', item_id: itemId, output_index: index, summary_index, text: part.text });
            push({ type: 'response.reasoning_summary_part.done', item_id: itemId, output_index: index, summary_index, part: { type: 'summary_text', text: part.text } });
          });
          const done: ResponseOutputItem = { id: itemId, type: 'reasoning', summary: item.summary, encrypted_content: item.encrypted_content };
          push({ type: 'response.output_item.done', output_index: index, item: done });
          output.push(done);
        } else throw new Error(`unexpected ${item.type} item in a played-back response`);
      });
      push({
        type: 'response.completed',
        response: { ...base, status: 'completed', output, usage: { input_tokens: 40, output_tokens: 20, total_tokens: 60, input_tokens_details: { cached_tokens: 0 }, output_tokens_details: { reasoning_tokens: 0 } } },
      });
      return events;
    };

    const [user, ...rest] = input;
    expect(user).toEqual({ type: 'message', role: 'user', content: [{ type: 'input_text', text: start[0].content }] });
    // Consecutive output items are one response; a function_call_output is the agent's tool result.
    const turns: Observable<AgentEvent>[] = [];
    let response: ResponsesInputItem[] = [];
    const flush = () => {
      if (response.length > 0) turns.push(from(eventsOf(response, `resp_${turns.length + 1}`)).pipe(fromOpenAIResponses()));
      response = [];
    };
    for (const item of rest) {
      if (item.type === 'function_call_output') {
        flush();
        turns.push(of(toolResult(item.call_id, item.output as string)));
      } else response.push(item);
    }
    flush();
    const run = await playBack([start[0]], turns);
    expect(said(run.messages)).toEqual(said(start));
    // And the client's conversation converts to the very request we started from.
    expect(toOpenAIResponsesInput(run.messages, sink)).toEqual({ input });
  });

  it('should give the same conversation back through Anthropic messages, signed thinking included', async () => {
    const sink = noWarnings();
    const { system, messages } = toAnthropicMessages(withThinking, sink);
    expect(sink.warnings).toEqual([]);
    expect(anthropicPairingFaults(messages)).toEqual([]);
    expect(system).toBeUndefined();

    /** One assistant turn as the events the Messages API streams for it. */
    const eventsOf = (turn: AnthropicMessageParam, id: string): AnthropicStreamEvent[] => {
      const events: AnthropicStreamEvent[] = [
        {
          type: 'message_start',
          message: { id, type: 'message', role: 'assistant', model: 'claude-sonnet-4-5-20250929', content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 40, output_tokens: 1 } },
        },
      ];
      turn.content.forEach((block: AnthropicContentBlockParam, index) => {
        if (block.type === 'thinking') {
          events.push({ type: 'content_block_start', index, content_block: { type: 'thinking', thinking: '', signature: '' } });
          for (const thinking of pieces(block.thinking)) events.push({ type: 'content_block_delta', index, delta: { type: 'thinking_delta', thinking } });
          events.push({ type: 'content_block_delta', index, delta: { type: 'signature_delta', signature: block.signature } });
        } else if (block.type === 'text') {
          events.push({ type: 'content_block_start', index, content_block: { type: 'text', text: '' } });
          for (const text of pieces(block.text)) events.push({ type: 'content_block_delta', index, delta: { type: 'text_delta', text } });
        } else if (block.type === 'tool_use') {
          events.push({ type: 'content_block_start', index, content_block: { type: 'tool_use', id: block.id, name: block.name, input: {} } });
          for (const partial_json of pieces(JSON.stringify(block.input))) events.push({ type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json } });
        } else throw new Error(`unexpected ${block.type} block in a played-back assistant turn`);
        events.push({ type: 'content_block_stop', index });
      });
      const usesTools = turn.content.some((block) => block.type === 'tool_use');
      events.push({ type: 'message_delta', delta: { stop_reason: usesTools ? 'tool_use' : 'end_turn', stop_sequence: null }, usage: { output_tokens: 30 } });
      events.push({ type: 'message_stop' });
      return events;
    };

    const [user, ...rest] = messages;
    expect(user).toEqual({ role: 'user', content: [{ type: 'text', text: conversation[0].content }] });
    let message = 0;
    const turns = rest.map((turn) => {
      if (turn.role === 'assistant') return from(eventsOf(turn, `msg_${++message}`)).pipe(fromAnthropicMessages());
      return from(
        turn.content.map((block) => {
          if (block.type !== 'tool_result') throw new Error(`unexpected ${block.type} block in a played-back user turn`);
          return toolResult(block.tool_use_id, block.content as string);
        }),
      );
    });
    // Two assistant turns and, between them, one user turn holding both results.
    expect(rest.map((turn) => turn.role)).toEqual(['assistant', 'user', 'assistant']);
    const run = await playBack([conversation[0]], turns);
    expect(said(run.messages)).toEqual(said(withThinking));
    // And the client's conversation converts to the very request we started from.
    expect(toAnthropicMessages(run.messages, sink)).toEqual({ messages });
  });

  /** A recorded Anthropic stream's events (every event of these files is one `data:` line). */
  const recording = (path: string): AnthropicStreamEvent[] =>
    readFileSync(path, 'utf8')
      .split(/\r\n|\r|\n/)
      .filter((line) => line.startsWith('data:'))
      .map((line) => JSON.parse(line.slice('data:'.length)));

  /**
   * The message a recorded stream holds, as Anthropic's SDK accumulates it, in the form a request
   * takes it back: text without its citations (their deltas have no AG-UI form), a call's input
   * parsed from its fragments, a client call with only `type`, `id`, `name`, `input`.
   */
  const recordedMessage = (events: readonly AnthropicStreamEvent[]): Record<string, unknown>[] => {
    const blocks: Record<string, any>[] = [];
    const json = new Map<number, string>();
    for (const event of events as readonly Record<string, any>[]) {
      if (event.type === 'content_block_start') {
        const { citations: _citations, ...block } = event.content_block;
        blocks[event.index] = block;
        json.set(event.index, '');
      }
      if (event.type === 'content_block_delta' && event.delta.type === 'text_delta') blocks[event.index].text += event.delta.text;
      if (event.type === 'content_block_delta' && event.delta.type === 'input_json_delta') json.set(event.index, json.get(event.index) + event.delta.partial_json);
    }
    return blocks.map((block, index) => {
      if (!block.type.endsWith('tool_use')) return block;
      const input = json.get(index) === '' ? block.input : JSON.parse(json.get(index)!);
      return block.type === 'tool_use' ? { type: 'tool_use', id: block.id, name: block.name, input } : { ...block, input };
    });
  };

  const serverToolRecordings = [
    resolve(__dirname, '../fixtures/anthropic-messages/server-tools.sse'),
    ...(haveFixtures ? [join(fixturesDir, 'anthropic-messages/pydantic-ai-anthropic-tool-search-then-tool-use.sse')] : []),
  ];

  it.each(serverToolRecordings)("should send Anthropic's server tool blocks back as it streamed them, in its order, from %s", async (path) => {
    const events = recording(path);
    const { onDiagnostic } = diagnosticsSink();
    const run = await runWithOracle(from(events).pipe(fromAnthropicMessages({ onDiagnostic }), toAgui({ threadId: 'thread-1', runId: 'run-1' })) as Observable<Event>);
    const sent = recordedMessage(events);
    expect(sent.map((block) => block.type)).toContain('server_tool_use');
    // The client's own calls (the turn stopped for them: stop_reason tool_use) are answered, as the next request does.
    const clientCalls = sent.filter((block) => block.type === 'tool_use');
    const answers: Message[] = clientCalls.map((block) => ({ id: `t-${String(block.id)}`, role: 'tool', toolCallId: String(block.id), content: 'done' }));
    const sink = noWarnings();
    const { messages } = toAnthropicMessages([...run.messages, ...answers], sink);
    expect(sink.warnings).toEqual([]);
    const results = clientCalls.map((block) => ({ type: 'tool_result', tool_use_id: block.id, content: 'done' }));
    expect(messages).toEqual([{ role: 'assistant', content: sent }, ...(results.length > 0 ? [{ role: 'user', content: results }] : [])]);
  });
});

/** A recorded stream's events: each `data:` line as JSON (Chat Completions' `[DONE]` as it is). */
function recorded(path: string): unknown[] {
  return readFileSync(resolve(__dirname, '../fixtures', path), 'utf8')
    .split(/\r\n|\r|\n/)
    .filter((line) => line.startsWith('data:'))
    .map((line) => line.slice('data:'.length).trim())
    .map((data) => (data === '[DONE]' ? data : JSON.parse(data)));
}

/**
 * A run cut inside a tool call (the output limit), through its adapter, toAgui and the official
 * client: it ends with RUN_ERROR INCOMPLETE_STREAM and leaves the cut call in the client's
 * messages. The user then says something new: the conversation the next request is made from.
 */
async function cutRunThenNewTurn(path: string, adapter: OperatorFunction<never, AgentEvent>): Promise<Message[]> {
  const user: Message = { id: 'u1', role: 'user', content: 'Write it down, please.' };
  const events$ = from(recorded(path) as never[]).pipe(adapter, toAgui({ threadId: 'thread-1', runId: 'run-1', onError: () => undefined })) as Observable<Event>;
  const run = await runWithOracle(events$, { initialMessages: [user] });
  expect(run.events.at(-1)).toMatchObject({ type: EventType.RUN_ERROR, code: 'INCOMPLETE_STREAM' });
  const [, assistant, ...rest] = run.messages;
  expect(rest).toEqual([]);
  expect(assistant).toMatchObject({ role: 'assistant', toolCalls: [{ type: 'function' }] });
  return [...run.messages, { id: 'u2', role: 'user', content: 'Try again, shorter.' }];
}

const unanswered = 'Error: the call did not complete, and no result was returned for it.';

/** Where a Chat Completions request breaks "an assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'", or has a tool message that answers no call of the assistant message before it. */
function chatPairingFaults(messages: readonly OpenAIChatMessage[]): string[] {
  const faults: string[] = [];
  messages.forEach((message, index) => {
    if (message.role === 'assistant') {
      const answered = new Set<string>();
      for (let next = index + 1; messages[next]?.role === 'tool'; next++) answered.add((messages[next] as Extract<OpenAIChatMessage, { role: 'tool' }>).tool_call_id);
      for (const toolCall of message.tool_calls ?? []) if (!answered.has(toolCall.id)) faults.push(`messages[${index}]: no tool message follows for '${toolCall.id}'`);
    } else if (message.role === 'tool') {
      let at = index - 1;
      while (messages[at]?.role === 'tool') at--;
      const owner = messages[at];
      if (owner?.role !== 'assistant' || !(owner.tool_calls ?? []).some((toolCall) => toolCall.id === message.tool_call_id)) faults.push(`messages[${index}]: '${message.tool_call_id}' answers no call just before it`);
    }
  });
  return faults;
}

/** Where an Anthropic request breaks its rules: turns alternate from a user turn; "each tool_use block must have a corresponding tool_result block in the next message", tool_result blocks first; a tool_result answers a tool_use of the turn before. */
function anthropicPairingFaults(messages: readonly AnthropicMessageParam[]): string[] {
  const faults: string[] = [];
  messages.forEach((turn, index) => {
    if (turn.role !== (index % 2 === 0 ? 'user' : 'assistant')) faults.push(`messages[${index}]: ${turn.role} out of turn`);
    const results = turn.content.filter((block) => block.type === 'tool_result');
    if (turn.content.slice(0, results.length).some((block) => block.type !== 'tool_result')) faults.push(`messages[${index}]: tool_result blocks not first`);
    const uses = (messages[index - 1]?.content ?? []).flatMap((block) => (block.type === 'tool_use' ? [block.id] : []));
    for (const block of results) if (block.type === 'tool_result' && !uses.includes(block.tool_use_id)) faults.push(`messages[${index}]: '${block.tool_use_id}' answers no tool_use just before it`);
    const answered = (messages[index + 1]?.content ?? []).flatMap((block) => (block.type === 'tool_result' ? [block.tool_use_id] : []));
    for (const block of turn.content) if (block.type === 'tool_use' && !answered.includes(block.id)) faults.push(`messages[${index}]: no tool_result follows for '${block.id}'`);
  });
  return faults;
}

/** Where a Responses input (without previous_response_id) has a function_call without its function_call_output after it, or an output without its call before it. */
function responsesPairingFaults(input: readonly ResponsesInputItem[]): string[] {
  const faults: string[] = [];
  input.forEach((item, index) => {
    if (item.type === 'function_call' && !input.slice(index + 1).some((later) => later.type === 'function_call_output' && later.call_id === item.call_id)) faults.push(`input[${index}]: no output for '${item.call_id}'`);
    if (item.type === 'function_call_output' && !input.slice(0, index).some((earlier) => earlier.type === 'function_call' && earlier.call_id === item.call_id)) faults.push(`input[${index}]: no call for '${item.call_id}'`);
  });
  return faults;
}

describe('a run cut inside a tool call, then a new user turn, converted for the next request', () => {
  it('should send OpenAI chat completions the cut call with a failed result before the new turn', async () => {
    const history = await cutRunThenNewTurn('openai-chat-completions/finish-length-in-tool-arguments.sse', fromOpenAIChatCompletions() as OperatorFunction<never, AgentEvent>);
    const warnings: string[] = [];
    const chat = toOpenAIChatMessages(history, { onWarning: (message) => void warnings.push(message) });
    expect(chat).toEqual([
      { role: 'user', content: 'Write it down, please.' },
      {
        role: 'assistant',
        content: 'I will file the report now.',
        tool_calls: [{ id: 'call_r3PortCut00000001', type: 'function', function: { name: 'file_report', arguments: '{"title": "Q3 review", "body": "Revenue rose by 4% while' } }],
      },
      { role: 'tool', tool_call_id: 'call_r3PortCut00000001', content: unanswered },
      { role: 'user', content: 'Try again, shorter.' },
    ]);
    expect(chatPairingFaults(chat)).toEqual([]);
    expect(warnings).toEqual([expect.stringMatching(/^toOpenAIChatMessages sent tool call 'call_r3PortCut00000001' \(file_report\) of assistant message 'chatcmpl-BfLenTool7Qx2' with a failed result/)]);
  });

  it('should send the OpenAI Responses API the cut function_call with a failed output before the new turn', async () => {
    const history = await cutRunThenNewTurn('openai-responses/incomplete-inside-call.sse', fromOpenAIResponses() as OperatorFunction<never, AgentEvent>);
    const warnings: string[] = [];
    const { input } = toOpenAIResponsesInput(history, { onWarning: (message) => void warnings.push(message) });
    expect(input).toEqual([
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Write it down, please.' }] },
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Saving your note now.' }] },
      { type: 'function_call', call_id: 'call_cut_save', name: 'save_note', arguments: '{"title":"Tides","body":"High tide 14:05, low' },
      { type: 'function_call_output', call_id: 'call_cut_save', output: unanswered },
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Try again, shorter.' }] },
    ]);
    expect(responsesPairingFaults(input)).toEqual([]);
    expect(warnings).toEqual([expect.stringMatching(/^toOpenAIResponsesInput sent tool call 'call_cut_save' \(save_note\) of assistant message '[^']+' with a failed result/)]);
  });

  it('should send Anthropic the cut tool_use with a failed tool_result in the new user turn', async () => {
    const history = await cutRunThenNewTurn('anthropic-messages/max-tokens-in-tool-use.sse', fromAnthropicMessages() as OperatorFunction<never, AgentEvent>);
    const warnings: string[] = [];
    const { messages } = toAnthropicMessages(history, { onWarning: (message) => void warnings.push(message) });
    expect(messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'Write it down, please.' }] },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Let me write the summary to the notes file.' },
          { type: 'tool_use', id: 'toolu_01NotesCutOpen000001', name: 'write_notes', input: {} },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'toolu_01NotesCutOpen000001', content: unanswered, is_error: true },
          { type: 'text', text: 'Try again, shorter.' },
        ],
      },
    ]);
    expect(anthropicPairingFaults(messages)).toEqual([]);
    expect(warnings).toEqual([
      expect.stringMatching(/^toAnthropicMessages sent tool call 'toolu_01NotesCutOpen000001' \(write_notes\) of assistant message 'msg_01MaxTokToolOpen0001' with a failed result/),
      expect.stringMatching(/^toAnthropicMessages sent tool call 'toolu_01NotesCutOpen000001' of assistant message 'msg_01MaxTokToolOpen0001' with input {}: its arguments .* are not a JSON object/),
    ]);
  });

  it('should hold the pairing checks to the rules they check: an unanswered call is a fault, and the converters leave none', () => {
    const cut: Message[] = [
      { id: 'u1', role: 'user', content: 'Hi' },
      { id: 'a1', role: 'assistant', toolCalls: [call('c1', 'look', '{}')] },
    ];
    expect(chatPairingFaults([{ role: 'user', content: 'Hi' }, { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'look', arguments: '{}' } }] }])).toEqual(["messages[1]: no tool message follows for 'c1'"]);
    expect(anthropicPairingFaults([{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }, { role: 'assistant', content: [{ type: 'tool_use', id: 'c1', name: 'look', input: {} }] }])).toEqual(["messages[1]: no tool_result follows for 'c1'"]);
    expect(responsesPairingFaults([{ type: 'function_call', call_id: 'c1', name: 'look', arguments: '{}' }])).toEqual(["input[0]: no output for 'c1'"]);
    // The converters answer it, so that the same history passes.
    const quiet = { onWarning: () => undefined };
    expect(chatPairingFaults(toOpenAIChatMessages(cut, quiet))).toEqual([]);
    expect(anthropicPairingFaults(toAnthropicMessages(cut, quiet).messages)).toEqual([]);
    expect(responsesPairingFaults(toOpenAIResponsesInput(cut, quiet).input)).toEqual([]);
  });
});
