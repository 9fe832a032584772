import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { defer, of, type SchedulerLike } from 'rxjs';
import { fromOpenAIChatCompletions, parseSSE, type ChatCompletionChunk } from '../adapters/index.js';
import type { AguiAgent } from '../transports/createAguiHandler.js';
import { AguiRxError } from '../protocol/errors.js';
import { paced, type Pace } from './paced.js';

/** Options of {@link createReplayAgent}. */
export interface ReplayAgentOptions {
  /** The pause between two chunks, in ms, or `[min, max]`; 0 replays at once. Default: `[20, 40]`. */
  pace?: Pace;
  /** The timers' scheduler. Default: async. */
  scheduler?: SchedulerLike;
}

function parsePayload(data: string, where: string): ChatCompletionChunk | '[DONE]' {
  const text = data.trim();
  if (text === '[DONE]') return '[DONE]';
  try {
    return JSON.parse(text) as ChatCompletionChunk;
  } catch (error) {
    throw new AguiRxError('INVALID_TRANSCRIPT', `${where} is not JSON (${(error as Error).message}). A transcript holds one chat.completion.chunk per SSE 'data:' frame or per line.`);
  }
}

/**
 * Reads a recorded OpenAI chat completions stream: an `.sse` response body (`data:` frames, `[DONE]`
 * kept) or a `.jsonl` file (one chunk per line). Other names are read as SSE when a line starts
 * with `data:`, as JSON lines otherwise.
 *
 * @param text The file's text.
 * @param name The file's name, for its suffix and for messages.
 * @return The chunks, in order.
 * @throws {AguiRxError} `INVALID_TRANSCRIPT` when a payload is not JSON or there is none.
 */
export function parseTranscript(text: string, name: string): (ChatCompletionChunk | '[DONE]')[] {
  const body = text.replace(/^\uFEFF/, '');
  const isSSE = name.endsWith('.sse') || (!name.endsWith('.jsonl') && /^data:/m.test(body));
  const chunks: (ChatCompletionChunk | '[DONE]')[] = [];
  if (isSSE) {
    // parseSSE over one synchronous chunk delivers every message before subscribe returns.
    let failure: unknown;
    of(body.endsWith('\n\n') ? body : `${body}\n\n`)
      .pipe(parseSSE())
      .subscribe({ next: (message) => chunks.push(parsePayload(message.data, `An SSE frame of ${name}`)), error: (error) => (failure = error) });
    if (failure) throw failure;
  } else {
    body.split(/\r?\n/).forEach((line, index) => {
      if (line.trim() !== '') chunks.push(parsePayload(line, `Line ${index + 1} of ${name}`));
    });
  }
  if (chunks.length === 0) throw new AguiRxError('INVALID_TRANSCRIPT', `${name} holds no chat.completion.chunk: expected SSE 'data:' frames or JSON lines.`);
  return chunks;
}

/**
 * Reads a transcript file with {@link parseTranscript}.
 *
 * @param file The path of an `.sse` or `.jsonl` OpenAI chat completions recording.
 * @return The chunks, in order.
 * @throws {AguiRxError} `TRANSCRIPT_NOT_FOUND` when the file cannot be read, `INVALID_TRANSCRIPT` when it holds no chunks.
 */
export function readTranscript(file: string): (ChatCompletionChunk | '[DONE]')[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new AguiRxError('TRANSCRIPT_NOT_FOUND', `Cannot read the transcript ${file}: ${(error as Error).message}. Pass an .sse or .jsonl OpenAI chat completions recording.`);
  }
  return parseTranscript(text, basename(file));
}

/** A chunk with its completion id and tool call ids suffixed, so that a second replay does not reuse the first one's ids. */
function renameIds(chunk: ChatCompletionChunk | '[DONE]', suffix: string): ChatCompletionChunk | '[DONE]' {
  if (chunk === '[DONE]' || typeof chunk !== 'object' || chunk === null || !Array.isArray(chunk.choices)) return chunk;
  return {
    ...chunk,
    ...(typeof chunk.id === 'string' && chunk.id !== '' ? { id: `${chunk.id}${suffix}` } : {}),
    choices: chunk.choices.map((choice) =>
      choice?.delta?.tool_calls
        ? { ...choice, delta: { ...choice.delta, tool_calls: choice.delta.tool_calls.map((call) => (call.id ? { ...call, id: `${call.id}${suffix}` } : call)) } }
        : choice,
    ),
  };
}

/**
 * An agent that replays a recorded OpenAI chat completions stream, paced as if it were live,
 * through `fromOpenAIChatCompletions()`, whatever the user asked. The recording's tool calls are
 * not run (they name the recording's tools), so they end the run as pending tool calls.
 *
 * The first replay keeps the recording's ids; each later one suffixes its completion and tool call
 * ids (`-2`, `-3`, …), because AG-UI ids must stay unique within a conversation.
 *
 * ## Example
 *
 * ```ts
 * createServer(createAguiHandler(createReplayAgent(readTranscript('parallel-tool-calls.sse')))).listen(8000);
 * ```
 *
 * @param chunks The recorded chunks (see {@link readTranscript}).
 * @param options The pace (ms) and the scheduler.
 * @return An {@link AguiAgent}; unsubscribing stops the replay's timers.
 */
export function createReplayAgent(chunks: readonly (ChatCompletionChunk | '[DONE]')[], options: ReplayAgentOptions = {}): AguiAgent {
  let replays = 0;
  return () =>
    defer(() => {
      const replay = ++replays;
      const run = replay === 1 ? chunks : chunks.map((chunk) => renameIds(chunk, `-${replay}`));
      return paced(run, options.pace ?? [20, 40], options.scheduler).pipe(fromOpenAIChatCompletions());
    });
}
