import { EventType, type AssistantMessage, type Message, type ToolCall, type ToolMessage } from '@ag-ui/core';
import { EMPTY, concat, defer, from, merge, mergeMap, of, tap, timer, type Observable, type SchedulerLike } from 'rxjs';
import { fromOpenAIChatCompletions } from '../adapters/index.js';
import type { AgentEvent } from '../protocol/agentEvent.js';
import type { AguiAgent } from '../transports/createAguiHandler.js';
import { generateId, type IdGenerator } from '../protocol/generateId.js';
import { isObject } from '../protocol/values.js';
import type { AgentEventModel, ChatMessage, ChatModel } from './chatTypes.js';
import { paceDelay, type Pace } from './paced.js';
import { toChatMessages } from './toChatMessages.js';
import { demoTools, runDemoTool, type DemoState, type DemoTool } from './tools.js';

/** Options of {@link createChatAgent}, whatever the model. */
interface ChatAgentCommonOptions {
  /** The tools the model may call, run on the server. Default: `get_weather` and `get_time`. */
  tools?: Readonly<Record<string, DemoTool>>;
  /** A system message put before the conversation. Default: none. */
  systemPrompt?: string;
  /** The most model turns in one run; a model still calling tools then is not asked again. Default: 4. */
  maxTurns?: number;
  /** How long each tool call takes, in ms, or `[min, max]` (varies per call); 0 runs them at once. Default: 0. */
  toolLatency?: Pace;
  /** The clock the tools read. Default: the system clock. */
  now?: () => Date;
  /** The timers' scheduler. Default: async. */
  scheduler?: SchedulerLike;
  /** Ids for the assistant and tool messages the loop adds to the conversation when the model names none. Default: nanoid. */
  generateId?: IdGenerator;
}

/**
 * Options of {@link createChatAgent}: the model is either `model`, an OpenAI-style chat model
 * (chat completion chunks, read with `fromOpenAIChatCompletions()`), or `eventModel`, one that
 * delivers agent events itself (e.g. the Anthropic Messages API through `fromAnthropicMessages()`).
 */
export type ChatAgentOptions = ChatAgentCommonOptions &
  (
    | {
        /** The model: one cold Observable of chat completion chunks per request. */
        model: ChatModel;
        eventModel?: never;
      }
    | {
        /** The model: one cold Observable of agent events per request. */
        eventModel: AgentEventModel;
        model?: never;
      }
  );

/**
 * The assistant message of one model turn, gathered from its agent events, to send back to the
 * model: the text of its TEXT_MESSAGE_CHUNK (or _CONTENT) deltas, and its tool calls from
 * TOOL_CALL_CHUNK (or _START / _ARGS) pieces, matched by `toolCallId` (a piece without one
 * continues the latest call). Reasoning is the client's to show, not sent back.
 */
class ReplyAccumulator {
  private content = '';
  private messageId: string | undefined;
  // Every call, in order of their first piece.
  private readonly calls: ToolCall[] = [];
  private readonly byId = new Map<string, ToolCall>();
  private latest: ToolCall | undefined;

  add(event: AgentEvent): void {
    switch (event.type) {
      case EventType.TEXT_MESSAGE_CHUNK:
      case EventType.TEXT_MESSAGE_CONTENT:
        this.content += event.delta ?? '';
        this.messageId ??= event.messageId;
        break;
      case EventType.TOOL_CALL_START:
        this.piece(event.toolCallId, event.toolCallName, undefined, event.parentMessageId);
        break;
      case EventType.TOOL_CALL_CHUNK:
        this.piece(event.toolCallId, event.toolCallName, event.delta, event.parentMessageId);
        break;
      case EventType.TOOL_CALL_ARGS:
        this.piece(event.toolCallId, undefined, event.delta, undefined);
        break;
      default:
        break;
    }
  }

  private piece(id: string | undefined, name: string | undefined, delta: string | undefined, parentMessageId: string | undefined): void {
    const known = id === undefined ? this.latest : this.byId.get(id);
    if (known) {
      known.function.arguments += delta ?? '';
      this.latest = known;
    } else if (id !== undefined) {
      const call: ToolCall = { id, type: 'function', function: { name: name ?? '', arguments: delta ?? '' } };
      this.calls.push(call);
      this.byId.set(id, call);
      this.latest = call;
      this.messageId ??= parentMessageId;
    }
  }

  message(generateId: IdGenerator): AssistantMessage {
    const message: AssistantMessage = { id: this.messageId ?? generateId(), role: 'assistant' };
    if (this.content !== '' || this.calls.length === 0) message.content = this.content;
    if (this.calls.length > 0) message.toolCalls = [...this.calls];
    return message;
  }
}

/**
 * A {@link ChatModel} as an {@link AgentEventModel}: the conversation becomes OpenAI messages
 * ({@link toChatMessages}) after the system prompt, and the chunks go through `fromOpenAIChatCompletions()`.
 */
function chatModelEvents(model: ChatModel): AgentEventModel {
  return (request) => {
    const system: ChatMessage[] = request.system ? [{ role: 'system', content: request.system }] : [];
    return model({ messages: [...system, ...toChatMessages(request.messages)], tools: request.tools }).pipe(fromOpenAIChatCompletions());
  };
}

/**
 * An agent loop over a chat model, as an {@link AguiAgent}: the demo's scripted, OpenAI,
 * Anthropic and any other model run through it alike.
 *
 * 1. The conversation is the run's messages (AG-UI). A chat completions `model` gets them as
 *    OpenAI messages ({@link toChatMessages}) after the system prompt; an `eventModel` gets them
 *    as they are, with the system prompt beside them, and converts them itself.
 * 2. The model turn streams as agent events (a `model`'s chunks through
 *    `fromOpenAIChatCompletions()`): text, reasoning, tool call chunks, usage. The loop gathers
 *    the assistant's reply from them: its text and its tool calls.
 * 3. When the turn ends with tool calls, they run on the server, in parallel, each after its
 *    `toolLatency`; each result is a TOOL_CALL_RESULT (JSON text) followed by a STATE_SNAPSHOT of
 *    the changed state (the run's `input.state`, extended by the tools).
 * 4. The assistant message and the results (AG-UI `tool` messages) are appended and the model is
 *    asked again, up to `maxTurns`.
 *
 * Unsubscribing (the client went away) unsubscribes the model turn in flight, which cancels its
 * request, and clears the tool timers.
 *
 * ```text
 * model turn 1:  --t--t--k--k--|                 t = text, k = tool call chunk
 * tools:                       ---r--s-r--s|     r = TOOL_CALL_RESULT, s = STATE_SNAPSHOT
 * model turn 2:                             --t--t--|
 * ```
 *
 * @param options The model (`model` or `eventModel`), the tools, the system prompt, the turn limit, the tools' latency (ms), the clock, the scheduler and the id generator.
 * @return The agent: `(input) => Observable<AgentEvent>`, cold, one run per subscription.
 */
export function createChatAgent(options: ChatAgentOptions): AguiAgent {
  const { systemPrompt } = options;
  const model = options.model ? chatModelEvents(options.model) : options.eventModel;
  const newId = options.generateId ?? generateId;
  const tools = options.tools ?? demoTools;
  const maxTurns = options.maxTurns ?? 4;
  const now = options.now ?? (() => new Date());
  const declarations = Object.values(tools).map((tool) => tool.declaration);

  return (input) =>
    defer(() => {
      // The state the tools change, starting from the client's.
      let state: DemoState = isObject(input.state) ? { ...input.state } : {};

      const runTools = (calls: readonly ToolCall[], results: Map<string, string>): Observable<AgentEvent> =>
        merge(
          ...calls.map((call, index) => {
            const delay = paceDelay(options.toolLatency ?? 0, index + 1);
            const wait$ = delay === 0 ? of(0) : timer(delay, options.scheduler);
            return wait$.pipe(
              mergeMap(() => {
                const outcome = runDemoTool(tools, call.function.name, call.function.arguments, state, { now });
                state = outcome.state;
                results.set(call.id, outcome.content);
                return from<AgentEvent[]>([
                  { type: EventType.TOOL_CALL_RESULT, toolCallId: call.id, content: outcome.content },
                  { type: EventType.STATE_SNAPSHOT, snapshot: state },
                ]);
              }),
            );
          }),
        );

      const turn = (messages: Message[], turnNumber: number): Observable<AgentEvent> =>
        defer(() => {
          const reply = new ReplyAccumulator();
          const modelTurn$ = model({ system: systemPrompt || undefined, messages, tools: declarations }).pipe(tap((event) => reply.add(event)));
          const next$ = defer(() => {
            const assistant = reply.message(newId);
            const calls = assistant.toolCalls ?? [];
            if (calls.length === 0 || turnNumber >= maxTurns) return EMPTY;
            const results = new Map<string, string>();
            return concat(
              runTools(calls, results),
              defer(() =>
                turn(
                  [...messages, assistant, ...calls.map((call): ToolMessage => ({ id: newId(), role: 'tool', toolCallId: call.id, content: results.get(call.id) ?? '' }))],
                  turnNumber + 1,
                ),
              ),
            );
          });
          return concat(modelTurn$, next$);
        });

      return turn([...input.messages], 1);
    });
}
