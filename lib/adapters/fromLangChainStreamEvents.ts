import { EventType } from '@ag-ui/core';
import type { OperatorFunction } from 'rxjs';
import type { AgentEvent } from '../protocol/agentEvent.js';
import { AguiRxError, describeValue } from '../protocol/errors.js';
import { generateId as defaultGenerateId, type IdGenerator } from '../protocol/generateId.js';
import { createOperator } from '../protocol/createOperator.js';
import { warnDiagnostic, type DiagnosticHandler } from '../protocol/diagnostics.js';
import { createLangChainMessageReader, labelled, messageFields, modelName, resultText, usageOf, type ModelTurn } from './langChainMessages.js';
import { createDropReporter, errorMessage, fieldReaders, isObject, nonEmpty, rawEvent, tokenUsageEvent, type Fields } from './readers.js';
import { noCallWaiting, noInput } from './toolRunMatch.js';
import type { LangChainStreamEvent } from './wire/langChain.js';

// The provider's stream format, importable from here too.
export type * from './wire/langChain.js';

/** Options of {@link fromLangChainStreamEvents}. */
export interface FromLangChainStreamEventsOptions {
  /** Also send graph nodes as steps: STEP_STARTED / STEP_FINISHED named after the node. Default: false. */
  steps?: boolean | undefined;
  /** Also send each event as it came, as `RAW { event, source: 'langchain' }`, before the events made from it. Default: false. */
  raw?: boolean | undefined;
  /** Told of each kind of content block that has no AG-UI form and is dropped (`image_url` …), once per type per subscription, and of each tool run whose call it cannot tell. Default: `console.warn`. */
  onDiagnostic?: DiagnosticHandler | undefined;
  /** Mints ids for tool calls whose pieces carry none. Default: nanoid. */
  generateId?: IdGenerator | undefined;
}

/**
 * Turns LangChain / LangGraph `streamEvents` v2 events into agent events: each chat model run's
 * text, reasoning and tool calls, the tools' results, token usage and, when asked, graph nodes as steps.
 *
 * One chat model run is one assistant message: its id is the run's first chunk `id` (else the
 * `run_id`), and its tool calls name it as their parent.
 *
 * ```text
 * source:  --s--c--c--e--ts--te--|    s = on_chat_model_start, c = on_chat_model_stream, e = on_chat_model_end
 * output:  -----t--k--U------r---|    ts/te = on_tool_start/on_tool_end
 *          t = TEXT_MESSAGE_CHUNK, k = TOOL_CALL_CHUNK, U = TOKEN_USAGE, r = TOOL_CALL_RESULT
 * ```
 *
 * Rules:
 * 1. `on_chat_model_stream` chunks (objects, plain JSON or `lc`-serialised) give, in this order:
 *    reasoning from `additional_kwargs.reasoning_content`, `additional_kwargs.reasoning` (a string,
 *    or OpenAI's `summary` parts, a new part starting after a blank line), then the `content`: a
 *    string is text; in a list, `text` blocks are text and `thinking` / `reasoning` blocks are
 *    reasoning. Text is TEXT_MESSAGE_CHUNK with the run's `messageId`, reasoning is
 *    REASONING_MESSAGE_CHUNK with `messageId` = `<messageId>-reasoning`; a thinking block with
 *    another `index` than the one before is a reasoning message of its own,
 *    `<messageId>-reasoning-<n>` (n from 2). A `thinking` block's `signature` becomes
 *    REASONING_ENCRYPTED_VALUE `{ subtype: 'message', entityId: <that reasoning message> }` (after
 *    REASONING_MESSAGE_START when it said nothing yet); a `redacted_thinking` block is a reasoning
 *    message with no text (START with `metadata: { anthropic: { type: 'redacted_thinking' } }`)
 *    whose encrypted value is its `data`, as `fromAnthropicMessages` sends them, so that
 *    `toAnthropicMessages` can send the thinking back. Empty pieces send nothing.
 *    Blocks of other types (`image_url`, `document`, types added later) have no AG-UI form:
 *    they are dropped, with one `onDiagnostic` per block type per subscription.
 * 2. Tool calls come from `tool_call_chunks`, or, in a chunk without them, from `tool_use` and
 *    `input_json_delta` content blocks. Pieces are keyed by `index` within the run; a piece without
 *    `index` continues the run's latest call unless it brings a new `id`. A call's first piece (its
 *    `id` and `name`) gives TOOL_CALL_CHUNK with `toolCallId`, `toolCallName` and `parentMessageId`;
 *    later pieces give their `args` fragment. A call without `id` gets a minted one.
 * 3. `on_chat_model_end` sends the run's usage as TOKEN_USAGE: `output.usage_metadata` (through
 *    `tokenUsageFromLangChainMetadata`), else the sum of its chunks' `usage_metadata`, with `model` =
 *    `response_metadata.model_name` (else `metadata.ls_model_name`). A run that streamed no chunk
 *    is read from its `output` message, whole `tool_calls` included. Runs still going when the
 *    source ends send their chunks' usage then.
 * 4. `on_tool_end` becomes TOOL_CALL_RESULT for the call named by the output's `tool_call_id` (a
 *    ToolMessage, or the ToolMessages of a LangGraph `Command`'s `update.messages`), else by the
 *    tool run's input (`tool_call_id`, or a `{ type: 'tool_call', id }`), else for the one
 *    unanswered call of that tool whose arguments the run's input (`on_tool_start`'s, else the
 *    event's) equals, else contains; without input, the only unanswered call of that tool. A run
 *    that fits several calls or none answers none, rather than a wrong one: `onDiagnostic` is
 *    told (the calls stay pending); a run of a tool no call waits for sends nothing. A result that
 *    names its call always reaches it (after one matched to it by input, with a diagnostic). The
 *    content is the message's text (text blocks joined), any other value serialised to JSON.
 *    `on_tool_error` answers its call the same way, with `Error: <message>`.
 * 5. With `steps: true`, a chain run whose `name` equals its `metadata.langgraph_node` (a graph
 *    node) gives STEP_STARTED `{ stepName: name }` at `on_chain_start` and STEP_FINISHED at its
 *    `on_chain_end`; a node named like a step still running (a subgraph's) sends no step.
 * 6. `on_custom_event` becomes CUSTOM `{ name, value: data }`; other events send nothing.
 * 7. An input that is not an event object with a string `event`, a chunk that is not a message,
 *    or a call's first piece without a name, is an `INVALID_EVENT` error (RUN_ERROR under `toAgui`).
 *
 * ## Example
 *
 * ```ts
 * of<LangChainStreamEvent[]>(
 *   { event: 'on_chat_model_stream', name: 'ChatOpenAI', run_id: 'r1', data: { chunk: { id: 'm1', content: 'Hi' } } },
 *   { event: 'on_chat_model_end', name: 'ChatOpenAI', run_id: 'r1', data: { output: { id: 'm1', content: 'Hi', usage_metadata: { input_tokens: 5, output_tokens: 1, total_tokens: 6 } } } },
 * ).pipe(fromLangChainStreamEvents()).subscribe((event) => console.log(JSON.stringify(event)));
 * // results: {"type":"TEXT_MESSAGE_CHUNK","messageId":"m1","delta":"Hi"}, {"type":"TOKEN_USAGE","usage":{"inputTokens":5,"outputTokens":1,"totalTokens":6}}
 * ```
 *
 * @param options `steps` to send graph nodes as steps, `raw` to keep each event, the id generator, and where dropped blocks are reported.
 * @return A function that returns an Observable of agent events, to pipe into `toAgui`.
 * @throws Nothing synchronously; malformed events reach the subscriber as `INVALID_EVENT` errors.
 */
export function fromLangChainStreamEvents(options: FromLangChainStreamEventsOptions = {}): OperatorFunction<LangChainStreamEvent, AgentEvent> {
  const mint = options.generateId ?? defaultGenerateId;
  const raw = options.raw ?? false;
  const onDiagnostic = options.onDiagnostic ?? warnDiagnostic;
  const steps = options.steps ?? false;
  return createOperator<LangChainStreamEvent, AgentEvent>((subscriber) => {
    const emit = (event: AgentEvent) => subscriber.next(event);
    const reader = createLangChainMessageReader(emit, mint, 'fromLangChainStreamEvents', createDropReporter(onDiagnostic));
    // Chat model runs still going: run_id -> its message.
    const turns = new Map<string, ModelTurn>();
    // Tool runs started: run_id -> the call their input names, if any, and the input (to match a call by its arguments).
    const toolRuns = new Map<string, ToolRun>();
    // Graph nodes open as steps: run_id -> step name.
    const openSteps = new Map<string, string>();

    const turnOf = (runId: string, chunk?: Fields): ModelTurn => {
      let turn = turns.get(runId);
      if (turn === undefined) {
        turn = reader.turn(nonEmpty(chunk?.id) ?? runId);
        turns.set(runId, turn);
      }
      return turn;
    };

    const endTurn = (runId: string, event?: LangChainStreamEvent) => {
      const turn = turns.get(runId) ?? (event === undefined ? undefined : turnOf(runId, messageFields(event.data.output)));
      turns.delete(runId);
      if (turn === undefined) return;
      const output = event === undefined ? undefined : messageFields(event.data.output);
      if (output !== undefined && !turn.streamed) reader.read(turn, output, 'data.output');
      const model = modelName(output) ?? turn.model ?? nonEmpty(event?.metadata?.ls_model_name);
      const usage = usageOf(output?.usage_metadata, model) ?? (turn.usage === undefined ? undefined : labelled(turn.usage, model));
      if (usage !== undefined) emit(tokenUsageEvent(usage));
    };

    // A tool run's result (or error) for the call it names, else for the one call its input matches (rule 4).
    const toolResult = (event: LangChainStreamEvent, content: unknown, named: string | undefined, input: unknown, messageId?: string) => {
      let id = named;
      if (id === undefined) {
        const match = reader.callOfRun(event.name, input);
        if ('reason' in match) {
          if (match.reason !== noCallWaiting) onDiagnostic({ message: unmatchedRun(event, match.reason), event });
          return;
        }
        id = match.toolCallId;
      }
      const answered = reader.answer(id, named !== undefined);
      if (answered === false) return;
      if (answered === 'overrides') {
        onDiagnostic({
          message: `fromLangChainStreamEvents received a result naming tool call '${id}' after it had sent that call the result of a '${String(event.name)}' run matched by its input: both are sent, and the earlier one was another run's. Give tool runs a ToolCall input ({ type: 'tool_call', id, args }) so that each names its call.`,
          event,
        });
      }
      emit({ type: EventType.TOOL_CALL_RESULT, toolCallId: id, content: resultText(content, id), ...(messageId === undefined ? {} : { messageId }) });
    };

    // What a tool run's events say of it: the call its input names, and its input (noInput when none came).
    const toolRunOf = (event: LangChainStreamEvent & { data: Fields }): ToolRun => {
      const runId = runIdOf(event);
      const started = toolRuns.get(runId);
      toolRuns.delete(runId);
      const input = started !== undefined && started.input !== noInput ? started.input : 'input' in event.data ? event.data.input : noInput;
      return { callId: started?.callId ?? callIdOfInput(event.data.input), input };
    };

    return {
      next(input) {
        if (raw) emit(rawEvent(input, 'langchain'));
        const event = checkEvent(input);
        const data = event.data;
        switch (event.event) {
          case 'on_chat_model_stream': {
            const chunk = messageFields(data.chunk);
            if (chunk === undefined) throw invalid(`data.chunk of '${event.name}' is ${describeValue(data.chunk)}, but it must be a message chunk such as { content: 'Hi' }.`);
            const turn = turnOf(runIdOf(event), chunk);
            turn.streamed = true;
            turn.model ??= nonEmpty(event.metadata?.ls_model_name);
            reader.read(turn, chunk, 'data.chunk');
            return;
          }
          case 'on_chat_model_end':
            endTurn(runIdOf(event), event);
            return;
          case 'on_tool_start':
            toolRuns.set(runIdOf(event), { callId: callIdOfInput(data.input), input: 'input' in data ? data.input : noInput });
            return;
          case 'on_tool_end': {
            const run = toolRunOf(event);
            const output = messageFields(data.output);
            const update = output?.update;
            if (isObject(update) && Array.isArray(update.messages)) {
              // A LangGraph Command: its ToolMessages answer their calls.
              for (const message of update.messages) {
                const fields = messageFields(message);
                if (fields !== undefined && typeof fields.tool_call_id === 'string') toolResult(event, fields.content, fields.tool_call_id, run.input, nonEmpty(fields.id));
              }
              return;
            }
            if (output !== undefined && typeof output.tool_call_id === 'string') return toolResult(event, output.content, output.tool_call_id, run.input, nonEmpty(output.id));
            return toolResult(event, data.output, run.callId, run.input);
          }
          case 'on_tool_error': {
            const run = toolRunOf(event);
            return toolResult(event, `Error: ${errorMessage(data.error, 'the tool failed')}`, run.callId, run.input);
          }
          case 'on_chain_start':
            if (steps && typeof event.name === 'string' && event.name !== '' && event.metadata?.langgraph_node === event.name && ![...openSteps.values()].includes(event.name)) {
              openSteps.set(runIdOf(event), event.name);
              emit({ type: EventType.STEP_STARTED, stepName: event.name });
            }
            return;
          case 'on_chain_end': {
            const stepName = openSteps.get(event.run_id);
            if (stepName === undefined) return;
            openSteps.delete(event.run_id);
            emit({ type: EventType.STEP_FINISHED, stepName });
            return;
          }
          case 'on_custom_event':
            emit({ type: EventType.CUSTOM, name: String(event.name), value: data });
            return;
          default:
            return;
        }
      },
      flush() {
        for (const runId of [...turns.keys()]) endTurn(runId);
      },
    };
  });
}

const { invalid, object } = fieldReaders({ adapter: 'fromLangChainStreamEvents', malformed: 'a malformed streamEvents v2 event', unit: 'event' });

function checkEvent(input: unknown): LangChainStreamEvent & { data: Fields } {
  if (!isObject(input) || typeof input.event !== 'string') {
    throw new AguiRxError(
      'INVALID_EVENT',
      `fromLangChainStreamEvents received ${isObject(input) ? `an object without a string 'event' (got ${describeValue(input.event)})` : describeValue(input)} where a streamEvents v2 event such as { event: 'on_chat_model_stream', run_id, data: { chunk } } was expected. Pass the events of streamEvents(input, { version: 'v2' }); graph.stream() output needs fromLangGraphStream.`,
    );
  }
  const data = input.data === undefined ? {} : object(input.data, `${input.event}.data`);
  return { ...(input as unknown as LangChainStreamEvent), data };
}

/** A tool run as its start (or end) event told it: the call its input names, and the input itself. */
interface ToolRun {
  callId: string | undefined;
  input: unknown;
}

/** The diagnostic of a tool run that answers no call because it cannot be told which. */
function unmatchedRun(event: LangChainStreamEvent, reason: string): string {
  const what = event.event === 'on_tool_error' ? `error (${errorMessage(event.data?.error, 'no message given')})` : 'result';
  return `fromLangChainStreamEvents could not tell which call the ${what} of a '${String(event.name)}' tool run (run_id '${event.run_id}') answers, because ${reason}; its tool events name no tool_call_id (langchain-ai/langchain#37426). It is not sent rather than given to the wrong call: those calls stay unanswered (RUN_FINISHED pendingToolCallIds). Return a ToolMessage (it names its call), or give the tool a ToolCall input ({ type: 'tool_call', id, args }).`;
}

function runIdOf(event: LangChainStreamEvent): string {
  if (typeof event.run_id !== 'string' || event.run_id === '') throw invalid(`'${event.event}' has run_id: ${describeValue(event.run_id)}, but every event names its run with a non-empty string run_id.`);
  return event.run_id;
}

/** The call a tool run answers, when its input says so (a ToolCall, or a ToolMessage-like input). */
function callIdOfInput(input: unknown): string | undefined {
  if (typeof input === 'string' && input.startsWith('{')) {
    try {
      return callIdOfInput(JSON.parse(input));
    } catch {
      return undefined;
    }
  }
  if (!isObject(input)) return undefined;
  if (typeof input.tool_call_id === 'string') return nonEmpty(input.tool_call_id);
  if (input.type === 'tool_call') return nonEmpty(input.id);
  if (isObject(input.tool_call)) return nonEmpty(input.tool_call.id);
  return undefined;
}
