import { EventType } from '@ag-ui/core';
import { EMPTY, concat, defer, from, merge, mergeMap, of, tap, timer, type Observable, type SchedulerLike } from 'rxjs';
import type { ChatCompletionChunk } from '../adapters/index.js';
import { fromOpenAIChatCompletions } from '../adapters/index.js';
import type { AgentEvent } from '../agentEvent.js';
import type { AguiAgent } from '../createAguiHandler.js';
import type { ChatMessage, ChatModel, ChatToolCall } from './chatTypes.js';
import { paceDelay, type Pace } from './paced.js';
import { toChatMessages } from './toChatMessages.js';
import { demoTools, runDemoTool, type DemoState, type DemoTool } from './tools.js';

/** Options of {@link createChatAgent}. */
export interface ChatAgentOptions {
  /** The model: one cold Observable of chat completion chunks per request. */
  model: ChatModel;
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
}

/**
 * The assistant message of one completion, gathered from its chunks (choice 0), to send back to
 * the model. Tool call pieces are matched as `fromOpenAIChatCompletions` matches them: by index,
 * a new id at a known index starting a new call, a piece without index continuing the latest call.
 */
class ReplyAccumulator {
  private content = '';
  // Every call, in order of their first piece.
  private readonly calls: ChatToolCall[] = [];
  // The open call at each provider index; cleared by finish_reason.
  private byIndex = new Map<number, ChatToolCall>();
  private latest: ChatToolCall | undefined;

  add(chunk: ChatCompletionChunk | '[DONE]'): void {
    if (typeof chunk !== 'object' || chunk === null || !Array.isArray(chunk.choices)) return;
    const choice = chunk.choices.find((candidate, position) => (candidate?.index ?? position) === 0);
    const delta = choice?.delta;
    if (!delta) return;
    this.content += (delta.content ?? '') + (delta.refusal ?? '');
    for (const piece of delta.tool_calls ?? []) {
      const index = typeof piece.index === 'number' ? piece.index : undefined;
      const known = index === undefined ? this.latest : this.byIndex.get(index);
      if (known && (!piece.id || piece.id === known.id)) {
        known.function.arguments += piece.function?.arguments ?? '';
        this.latest = known;
      } else if (piece.id) {
        const call: ChatToolCall = { id: piece.id, type: 'function', function: { name: piece.function?.name ?? '', arguments: piece.function?.arguments ?? '' } };
        this.calls.push(call);
        if (index !== undefined) this.byIndex.set(index, call);
        this.latest = call;
      }
    }
    if (choice.finish_reason) {
      this.byIndex = new Map();
      this.latest = undefined;
    }
  }

  message(): ChatMessage & { role: 'assistant' } {
    return this.calls.length > 0
      ? { role: 'assistant', content: this.content === '' ? null : this.content, tool_calls: [...this.calls] }
      : { role: 'assistant', content: this.content };
  }
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * An agent loop over an OpenAI-style chat model, as an {@link AguiAgent}: the demo's scripted,
 * OpenAI and any other chat completions model run through it alike.
 *
 * 1. The run's messages (AG-UI) become OpenAI messages ({@link toChatMessages}), after the system prompt.
 * 2. The model turn streams through `fromOpenAIChatCompletions()`: text, reasoning, tool call chunks, usage.
 * 3. When the turn ends with tool calls, they run on the server, in parallel, each after its
 *    `toolLatency`; each result is a TOOL_CALL_RESULT (JSON text) followed by a STATE_SNAPSHOT of
 *    the changed state (the run's `input.state`, extended by the tools).
 * 4. The assistant message and the results are appended and the model is asked again, up to `maxTurns`.
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
 * @param options The model, the tools, the system prompt, the turn limit, the tools' latency (ms), the clock and the scheduler.
 * @return The agent: `(input) => Observable<AgentEvent>`, cold, one run per subscription.
 */
export function createChatAgent(options: ChatAgentOptions): AguiAgent {
  const { model, systemPrompt } = options;
  const tools = options.tools ?? demoTools;
  const maxTurns = options.maxTurns ?? 4;
  const now = options.now ?? (() => new Date());
  const declarations = Object.values(tools).map((tool) => tool.declaration);

  return (input) =>
    defer(() => {
      // The state the tools change, starting from the client's.
      let state: DemoState = isRecord(input.state) ? { ...input.state } : {};

      const runTools = (calls: readonly ChatToolCall[], results: Map<string, string>): Observable<AgentEvent> =>
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

      const turn = (messages: ChatMessage[], turnNumber: number): Observable<AgentEvent> =>
        defer(() => {
          const reply = new ReplyAccumulator();
          const modelTurn$ = model({ messages, tools: declarations }).pipe(
            tap((chunk) => reply.add(chunk)),
            fromOpenAIChatCompletions(),
          );
          const next$ = defer(() => {
            const assistant = reply.message();
            const calls = assistant.tool_calls ?? [];
            if (calls.length === 0 || turnNumber >= maxTurns) return EMPTY;
            const results = new Map<string, string>();
            return concat(
              runTools(calls, results),
              defer(() =>
                turn(
                  [...messages, assistant, ...calls.map((call): ChatMessage => ({ role: 'tool', tool_call_id: call.id, content: results.get(call.id) ?? '' }))],
                  turnNumber + 1,
                ),
              ),
            );
          });
          return concat(modelTurn$, next$);
        });

      const system: ChatMessage[] = systemPrompt ? [{ role: 'system', content: systemPrompt }] : [];
      return turn([...system, ...toChatMessages(input.messages)], 1);
    });
}
