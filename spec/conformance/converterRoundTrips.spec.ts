import { EventType, type Event, type Message } from '@ag-ui/core';
import { concat, from, of, type Observable } from 'rxjs';
import type { AgentEvent } from '../../lib/protocol/agentEvent.js';
import { fromAnthropicMessages, type AnthropicStreamEvent } from '../../lib/adapters/fromAnthropicMessages.js';
import { fromOpenAIChatCompletions, type ChatCompletionChunk } from '../../lib/adapters/fromOpenAIChatCompletions.js';
import { fromOpenAIResponses, type ResponseOutputItem, type ResponseStreamEvent } from '../../lib/adapters/fromOpenAIResponses.js';
import { toAnthropicMessages, type AnthropicContentBlockParam, type AnthropicMessageParam } from '../../lib/converters/toAnthropicMessages.js';
import { toOpenAIChatMessages, type OpenAIChatMessage } from '../../lib/converters/toOpenAIChatMessages.js';
import { toOpenAIResponsesInput, type ResponsesInputItem } from '../../lib/converters/toOpenAIResponsesInput.js';
import { toAgui } from '../../operators/toAgui.js';
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
  it('should give the same conversation back through OpenAI chat completions', async () => {
    const sink = noWarnings();
    const chat = toOpenAIChatMessages(conversation, sink);
    expect(sink.warnings).toEqual([]);

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
        ...calls.flatMap((toolCall, index) => [
          chunk({ tool_calls: [{ index, id: toolCall.id, type: 'function', function: { name: toolCall.function.name, arguments: '' } }] }),
          ...pieces(toolCall.function.arguments).map((args) => chunk({ tool_calls: [{ index, function: { arguments: args } }] })),
        ]),
        chunk({}, calls.length > 0 ? 'tool_calls' : 'stop'),
        { id, object: 'chat.completion.chunk', created: 1732900000, model: 'gpt-4o-2024-08-06', choices: [], usage: { prompt_tokens: 40, completion_tokens: 20, total_tokens: 60 } },
        '[DONE]',
      ];
    };

    const [user, ...rest] = chat;
    expect(user).toEqual({ role: 'user', content: conversation[0].content });
    let completion = 0;
    const turns = rest.map((message) => {
      if (message.role === 'assistant') return from(chunksOf(message, `chatcmpl-${++completion}`)).pipe(fromOpenAIChatCompletions());
      if (message.role === 'tool') return of(toolResult(message.tool_call_id, message.content));
      throw new Error(`unexpected ${message.role} message in the played-back turns`);
    });
    const run = await playBack([conversation[0]], turns);
    expect(said(run.messages)).toEqual(said(conversation));
    expect(run.messages.filter((message) => message.role === 'assistant').map((message) => message.id)).toEqual(['chatcmpl-1', 'chatcmpl-2']);
    // And the client's conversation converts to the very request we started from.
    expect(toOpenAIChatMessages(run.messages, sink)).toEqual(chat);
  });

  it('should give the same conversation back through the OpenAI Responses API', async () => {
    const sink = noWarnings();
    const { instructions, input } = toOpenAIResponsesInput(conversation, sink);
    expect(sink.warnings).toEqual([]);
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
        } else throw new Error(`unexpected ${item.type} item in a played-back response`);
      });
      push({
        type: 'response.completed',
        response: { ...base, status: 'completed', output, usage: { input_tokens: 40, output_tokens: 20, total_tokens: 60, input_tokens_details: { cached_tokens: 0 }, output_tokens_details: { reasoning_tokens: 0 } } },
      });
      return events;
    };

    const [user, ...rest] = input;
    expect(user).toEqual({ type: 'message', role: 'user', content: [{ type: 'input_text', text: conversation[0].content }] });
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
    const run = await playBack([conversation[0]], turns);
    expect(said(run.messages)).toEqual(said(conversation));
    // And the client's conversation converts to the very request we started from.
    expect(toOpenAIResponsesInput(run.messages, sink)).toEqual({ input });
  });

  it('should give the same conversation back through Anthropic messages, signed thinking included', async () => {
    const sink = noWarnings();
    const { system, messages } = toAnthropicMessages(withThinking, sink);
    expect(sink.warnings).toEqual([]);
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
});
