import { EventType, tokenUsageFromLangChainMetadata, type TokenUsage } from '@ag-ui/core';
import type { AgentEvent } from '../protocol/agentEvent.js';
import { AguiRxError, describeValue } from '../protocol/errors.js';
import type { IdGenerator } from '../protocol/generateId.js';
import { countKeys, fieldReaders, isObject, nonEmpty, toolCallStart, type DropReporter, type Fields } from './readers.js';
import { continuedCall, startCall, unnamedCall, type ToolCallPieces } from './toolCallPieces.js';
import { createReasoningBlocks, type ReasoningBlocks } from './reasoningBlocks.js';
import { matchToolRun, type ToolRunMatch } from './toolRunMatch.js';

/**
 * Reading LangChain messages (plain, Python-serialised or lc-serialised chunks) into agent events:
 * what `fromLangChainStreamEvents` and `fromLangGraphStream` share. Not part of the public API.
 */

/** One model message being read: its id, its tool calls, its usage so far. @internal */
export interface ModelTurn extends ToolCallPieces {
  messageId: string;
  /** Its reasoning messages: one per thinking block (by `index`), with the block's signature. */
  reasoning: ReasoningBlocks;
  /** The reasoning summary part last read, to separate parts. */
  summaryIndex?: number | undefined;
  /** Whether any chunk of it was read (else its end event's output is). */
  streamed: boolean;
  model?: string | undefined;
  /** The sum of its chunks' usage. */
  usage?: TokenUsage | undefined;
}

/** Reads LangChain message chunks into agent events. @internal */
export interface LangChainMessageReader {
  turn(messageId: string): ModelTurn;
  /** Sends what one chunk (or whole message) of the turn says. */
  read(turn: ModelTurn, message: Fields, where: string): void;
  /** The unanswered call of that tool's name that a tool run with this input (or `noInput`) answers, or why none is (see `matchToolRun`). */
  callOfRun(name: unknown, input: unknown): ToolRunMatch;
  /**
   * Marks a call answered, `named` when the result names it by id (else it was matched by input);
   * false when it already was. A named result after a matched one is taken (`'overrides'`): its id settles it.
   */
  answer(toolCallId: string, named: boolean): boolean | 'overrides';
}

/** The reader of one subscription; `report` is told of each content block it drops. @internal */
export function createLangChainMessageReader(emit: (event: AgentEvent) => void, mint: IdGenerator, adapter: string, report: DropReporter): LangChainMessageReader {
  // Every call opened, in order, with its tool's name and argument text; answered ones are removed.
  const unanswered = new Map<string, { name: string; args: string }>();
  // Answered calls: true when the result named the call, false when it was matched by its input.
  const answered = new Map<string, boolean>();
  const { invalid: fail, object, string, list, toolCallIndex } = fieldReaders({ adapter, malformed: 'a malformed LangChain message', unit: 'message' });

  const text = (turn: ModelTurn, delta: unknown) => {
    if (typeof delta === 'string' && delta !== '') emit({ type: EventType.TEXT_MESSAGE_CHUNK, messageId: turn.messageId, delta });
  };
  // Reasoning text; a thinking block's `index` keys its own reasoning message.
  const reasoning = (turn: ModelTurn, delta: unknown, key?: string) => {
    if (typeof delta !== 'string' || delta === '') return;
    turn.reasoning.text(turn.messageId, key, delta);
  };
  // A thinking block's signature, or a redacted_thinking block's data: the reasoning message's encrypted value.
  const encrypted = (turn: ModelTurn, block: Fields, kind: 'signature' | 'redacted', position: number) => {
    const value = nonEmpty(kind === 'signature' ? block.signature : block.data);
    if (value !== undefined) turn.reasoning.encrypted(turn.messageId, blockKey(block, position), { kind, value });
  };

  const piece = (turn: ModelTurn, fields: Fields, where: string) => {
    const index = toolCallIndex(fields.index, where);
    const id = nonEmpty(string(fields, 'id', where));
    const name = nonEmpty(string(fields, 'name', where));
    const args = nonEmpty(string(fields, 'args', where));
    const continued = continuedCall(turn, index, id);
    if (continued !== undefined) {
      if (args === undefined) return;
      const call = unanswered.get(continued);
      if (call !== undefined) call.args += args;
      emit({ type: EventType.TOOL_CALL_CHUNK, toolCallId: continued, delta: args });
      return;
    }
    if (name === undefined) throw fail(unnamedCall(where, id, 'a name'));
    const toolCallId = startCall(turn, index, id ?? mint());
    unanswered.set(toolCallId, { name, args: args ?? '' });
    emit(toolCallStart(toolCallId, name, turn.messageId, args));
  };

  const drop = (block: Fields, where: string) => {
    const type = typeof block.type === 'string' ? `'${block.type}'` : `type-less (type: ${describeValue(block.type)})`;
    report(
      String(block.type),
      `${adapter} dropped a ${type} content block (${where}): it has no AG-UI form, as only text, thinking / reasoning and tool call blocks are read. Later ${type} blocks of this stream are dropped without another warning.`,
      block,
    );
  };

  const read = (turn: ModelTurn, message: Fields, where: string) => {
    const kwargs = message.additional_kwargs;
    if (isObject(kwargs)) {
      reasoning(turn, kwargs.reasoning_content);
      const summary = kwargs.reasoning;
      if (typeof summary === 'string') reasoning(turn, summary);
      else if (isObject(summary) && Array.isArray(summary.summary)) {
        for (const part of summary.summary) {
          if (!isObject(part) || typeof part.text !== 'string' || part.text === '') continue;
          const index = typeof part.index === 'number' ? part.index : turn.summaryIndex;
          const separator = turn.summaryIndex !== undefined && index !== turn.summaryIndex ? '\n\n' : '';
          turn.summaryIndex = index;
          reasoning(turn, separator + part.text);
        }
      }
    }
    const model = modelName(message);
    if (model !== undefined) turn.model = model;

    const chunks = message.tool_call_chunks;
    const hasChunks = Array.isArray(chunks) && chunks.length > 0;
    const content = message.content;
    const hasToolBlocks = Array.isArray(content) && content.some((block) => isObject(block) && (block.type === 'tool_use' || block.type === 'input_json_delta'));
    if (typeof content === 'string') text(turn, content);
    else if (Array.isArray(content)) {
      content.forEach((entry, i) => {
        if (typeof entry === 'string') return text(turn, entry);
        const block = object(entry, `${where}.content[${i}]`, "{ type: 'text', text: 'Hi' }");
        switch (block.type) {
          case 'text':
          case 'text_delta':
            return text(turn, block.text);
          case 'thinking':
            reasoning(turn, block.thinking, blockKey(block, i));
            return encrypted(turn, block, 'signature', i);
          case 'redacted_thinking':
            return encrypted(turn, block, 'redacted', i);
          case 'reasoning':
            return reasoning(turn, block.reasoning);
          case 'tool_use':
            if (hasChunks) return;
            return piece(turn, { id: block.id, name: block.name, args: wholeInput(block.input), index: block.index }, `${where}.content[${i}]`);
          case 'input_json_delta':
            if (hasChunks) return;
            return piece(turn, { args: block.partial_json, index: block.index }, `${where}.content[${i}]`);
          case 'tool_call':
          case 'tool_call_chunk':
            // LangChain's standard blocks repeat the message's tool_calls / tool_call_chunks, read below.
            if (hasChunks || (Array.isArray(message.tool_calls) && message.tool_calls.length > 0)) return;
            return drop(block, `${where}.content[${i}]`);
          default:
            return drop(block, `${where}.content[${i}]`);
        }
      });
    } else if (content !== undefined && content !== null) {
      throw fail(`${where}.content is ${describeValue(content)}, but it must be a string or a list of content blocks.`);
    }

    list(message, 'tool_call_chunks', where).forEach((chunk, i) => piece(turn, object(chunk, `${where}.tool_call_chunks[${i}]`, "{ index: 0, args: '…' }"), `${where}.tool_call_chunks[${i}]`));
    if (chunks === undefined && !hasToolBlocks && Array.isArray(message.tool_calls)) {
      // A whole message (not streamed): its calls, each with its arguments as JSON.
      message.tool_calls.forEach((entry, i) => {
        const call = object(entry, `${where}.tool_calls[${i}]`, '{ id, name, args: {} }');
        const id = nonEmpty(call.id);
        if (id !== undefined && (unanswered.has(id) || answered.has(id))) return;
        turn.latestCall = undefined;
        piece(turn, { id: id ?? mint(), name: call.name, args: call.args === undefined ? undefined : JSON.stringify(call.args) }, `${where}.tool_calls[${i}]`);
      });
    }

    const usage = usageOf(message.usage_metadata, undefined);
    if (usage !== undefined) turn.usage = turn.usage === undefined ? usage : addUsage(turn.usage, usage);
  };

  return {
    turn: (messageId) => ({ messageId, calls: new Map(), streamed: false, reasoning: createReasoningBlocks(emit) }),
    read,
    callOfRun(name, input) {
      const candidates = [...unanswered].filter(([, call]) => call.name === name).map(([id, call]) => ({ id, args: call.args }));
      return matchToolRun(candidates, input);
    },
    answer(toolCallId, named) {
      const before = answered.get(toolCallId);
      if (before === true || (before === false && !named)) return false;
      answered.set(toolCallId, named);
      unanswered.delete(toolCallId);
      return before === false ? 'overrides' : true;
    },
  };
}

/**
 * A content block's key: its `index` (a streamed block's position); without one, its place in the
 * content list (a whole message's blocks, each its own; a stream's chunks each hold their one block
 * at place 0, so without indexes they continue one block).
 */
function blockKey(block: Fields, position: number): string {
  return typeof block.index === 'number' || typeof block.index === 'string' ? String(block.index) : `@${position}`;
}

/**
 * The fields of a LangChain message: the `kwargs` of its `lc`-serialised form, else the object
 * itself; `undefined` when it is not an object. @internal
 */
export function messageFields(message: unknown): Fields | undefined {
  if (!isObject(message)) return undefined;
  if (message.lc !== undefined && message.type === 'constructor' && isObject(message.kwargs)) return message.kwargs;
  return message;
}

/** The class of a LangChain message: `ai`, `tool`, `human`, `system` …, or `undefined`. @internal */
export function messageKind(message: unknown): string | undefined {
  if (!isObject(message)) return undefined;
  let name: unknown;
  if (message.lc !== undefined && message.type === 'constructor' && Array.isArray(message.id)) name = message.id[message.id.length - 1];
  else if (typeof message._getType === 'function') name = (message._getType as () => unknown)();
  else name = message.type;
  if (typeof name !== 'string') return undefined;
  return name.replace(/MessageChunk$|Message$/, '').toLowerCase();
}

/** Token usage from LangChain's `usage_metadata`, labelled with the model when known. @internal */
export function usageOf(metadata: unknown, model: string | undefined): TokenUsage | undefined {
  if (!isObject(metadata)) return undefined;
  return tokenUsageFromLangChainMetadata(metadata, model === undefined ? {} : { model });
}

/** The served model's name from a message's `response_metadata`. @internal */
export function modelName(message: Fields | undefined): string | undefined {
  const metadata = message?.response_metadata;
  return isObject(metadata) ? nonEmpty(metadata.model_name) : undefined;
}

/** A tool's result as text: strings as they are, text blocks joined, anything else as JSON. @internal */
export function resultText(content: unknown, toolCallId: string): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content) && content.length > 0 && content.every((block) => typeof block === 'string' || (isObject(block) && block.type === 'text' && typeof block.text === 'string'))) {
    return content.map((block) => (typeof block === 'string' ? block : (block as { text: string }).text)).join('');
  }
  try {
    const json = JSON.stringify(content);
    if (json !== undefined) return json;
  } catch (error) {
    throw new AguiRxError('INVALID_EVENT', `The result of tool call '${toolCallId}' (${describeValue(content)}) cannot be serialised to JSON: ${(error as Error).message}. Return text, or plain data, from the tool.`);
  }
  return String(content);
}

/** A `tool_use` block's `input` as argument text: a non-empty object as JSON, else nothing (its deltas follow). */
export function wholeInput(input: unknown): string | undefined {
  if (typeof input === 'string') return input;
  if (isObject(input) && Object.keys(input).length > 0) return JSON.stringify(input);
  return undefined;
}

export function labelled(usage: TokenUsage, model: string | undefined): TokenUsage {
  return model === undefined ? usage : { ...usage, model };
}

export function addUsage(a: TokenUsage, b: TokenUsage): TokenUsage {
  const sum: Record<string, unknown> = {};
  for (const key of countKeys) {
    const x = a[key as keyof TokenUsage] as number | undefined;
    const y = b[key as keyof TokenUsage] as number | undefined;
    if (x !== undefined || y !== undefined) sum[key] = (x ?? 0) + (y ?? 0);
  }
  return sum as TokenUsage;
}
