import type { SchedulerLike } from 'rxjs';
import type { ChatCompletionChunk, ChatCompletionChunkDelta, ChatCompletionUsage } from '../adapters/index.js';
import type { AguiAgent } from '../transports/createAguiHandler.js';
import { generateId as defaultGenerateId, type IdGenerator } from '../protocol/generateId.js';
import { createChatAgent } from './chatAgent.js';
import type { ChatMessage, ChatModel, ChatModelRequest, ChatToolCall } from './chatTypes.js';
import { paced, type Pace } from './paced.js';
import { demoTools } from './tools.js';

/** Options of {@link createScriptedModel} and {@link createScriptedAgent}. */
export interface ScriptedAgentOptions {
  /** The pause between two chunks, in ms, or `[min, max]`; 0 emits a turn at once (specs). Default: `[20, 40]`. */
  pace?: Pace;
  /** How long each tool takes on the server, in ms, or `[min, max]` (varies per call). Default: `[250, 600]`. */
  toolLatency?: Pace;
  /** Whether the first turn streams a short reasoning (`delta.reasoning_content`, as DeepSeek sends it). Default: true. */
  reasoning?: boolean;
  /** The clock: chunk `created` times and the `get_time` tool. Default: the system clock. */
  now?: () => Date;
  /** Mints completion and tool call ids. Default: nanoid. */
  generateId?: IdGenerator;
  /** The timers' scheduler. Default: async. */
  scheduler?: SchedulerLike;
}

/** The model name the scripted model reports on its chunks and in its usage. */
export const SCRIPTED_MODEL = 'agui-rx-scripted-1';

interface Place {
  city: string;
  timezone: string;
}

// A few cities the script knows the time zone of; any other capitalised place name gets UTC.
const PLACES: readonly Place[] = [
  ['Amsterdam', 'Europe/Amsterdam'], ['Athens', 'Europe/Athens'], ['Auckland', 'Pacific/Auckland'], ['Bangkok', 'Asia/Bangkok'],
  ['Beijing', 'Asia/Shanghai'], ['Berlin', 'Europe/Berlin'], ['Buenos Aires', 'America/Argentina/Buenos_Aires'], ['Cairo', 'Africa/Cairo'],
  ['Cape Town', 'Africa/Johannesburg'], ['Chicago', 'America/Chicago'], ['Dubai', 'Asia/Dubai'], ['Edinburgh', 'Europe/London'],
  ['Hong Kong', 'Asia/Hong_Kong'], ['Honolulu', 'Pacific/Honolulu'], ['Istanbul', 'Europe/Istanbul'], ['Lagos', 'Africa/Lagos'],
  ['Lisbon', 'Europe/Lisbon'], ['London', 'Europe/London'], ['Los Angeles', 'America/Los_Angeles'], ['Madrid', 'Europe/Madrid'],
  ['Mexico City', 'America/Mexico_City'], ['Mumbai', 'Asia/Kolkata'], ['Nairobi', 'Africa/Nairobi'], ['New York', 'America/New_York'],
  ['Oslo', 'Europe/Oslo'], ['Paris', 'Europe/Paris'], ['Reykjavik', 'Atlantic/Reykjavik'], ['Rome', 'Europe/Rome'],
  ['San Francisco', 'America/Los_Angeles'], ['São Paulo', 'America/Sao_Paulo'], ['Seoul', 'Asia/Seoul'], ['Singapore', 'Asia/Singapore'],
  ['Stockholm', 'Europe/Stockholm'], ['Sydney', 'Australia/Sydney'], ['Tokyo', 'Asia/Tokyo'], ['Toronto', 'America/Toronto'],
  ['Vienna', 'Europe/Vienna'], ['Warsaw', 'Europe/Warsaw'], ['Zurich', 'Europe/Zurich'],
].map(([city, timezone]) => ({ city, timezone }));

const DEFAULT_PLACE: Place = { city: 'Lisbon', timezone: 'Europe/Lisbon' };

/** The place a message asks about: a known city, else a capitalised name after "in"/"for"/"at", else none. */
export function findPlace(text: string): Place | undefined {
  const lower = text.toLowerCase();
  const known = PLACES.find(({ city }) => new RegExp(`(^|[^\\p{L}])${city.toLowerCase()}($|[^\\p{L}])`, 'u').test(lower));
  if (known) return known;
  const named = /\b(?:in|for|at)\s+(\p{Lu}[\p{L}'-]*(?:\s+\p{Lu}[\p{L}'-]*)*)/u.exec(text);
  return named ? { city: named[1], timezone: 'UTC' } : undefined;
}

/** Splits text into pieces of a few characters, roughly as a tokenizer would (a word, a number, a sign). */
export function tokenPieces(text: string): string[] {
  return text.match(/\s*[\p{L}\p{M}']{1,7}|\s*\d{1,3}|\s*[^\s\p{L}\p{M}\d']|\s+/gu) ?? [];
}

/** Splits a tool call's JSON arguments into fragments of 3 to 6 characters, as OpenAI streams them. */
function argumentPieces(json: string): string[] {
  const sizes = [4, 6, 3, 5];
  const pieces: string[] = [];
  for (let at = 0, i = 0; at < json.length; i++) {
    const size = sizes[i % sizes.length];
    pieces.push(json.slice(at, at + size));
    at += size;
  }
  return pieces;
}

const lastUserText = (messages: readonly ChatMessage[]): string => {
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i];
    if (message.role === 'user') return message.content;
  }
  return '';
};

/** Builds one completion's chunks in the order and shapes OpenAI streams them. */
class CompletionWriter {
  readonly chunks: (ChatCompletionChunk | '[DONE]')[] = [];
  private pieces = 0;

  constructor(
    private readonly id: string,
    private readonly created: number,
  ) {}

  private push(delta: ChatCompletionChunkDelta, finishReason: string | null = null): void {
    this.chunks.push({
      id: this.id,
      object: 'chat.completion.chunk',
      created: this.created,
      model: SCRIPTED_MODEL,
      system_fingerprint: 'fp_agui_rx_demo',
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
    });
  }

  /** A chunk that carries one generated token, counted for the usage. */
  private piece(delta: ChatCompletionChunkDelta): void {
    this.push(delta);
    this.pieces++;
  }

  role(): this {
    this.push({ role: 'assistant', content: '', refusal: null });
    return this;
  }

  reasoning(text: string): this {
    for (const piece of tokenPieces(text)) this.piece({ reasoning_content: piece });
    return this;
  }

  content(text: string): this {
    for (const piece of tokenPieces(text)) this.piece({ content: piece });
    return this;
  }

  toolCall(index: number, call: ChatToolCall): this {
    this.push({ tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.function.name, arguments: '' } }] });
    for (const piece of argumentPieces(call.function.arguments)) this.piece({ tool_calls: [{ index, function: { arguments: piece } }] });
    return this;
  }

  finish(reason: 'stop' | 'tool_calls', request: ChatModelRequest): this {
    this.push({}, reason);
    // The usage-only final chunk (stream_options.include_usage), then the end of the stream.
    const usage: ChatCompletionUsage = {
      prompt_tokens: Math.ceil(JSON.stringify(request).length / 4),
      completion_tokens: this.pieces,
      total_tokens: Math.ceil(JSON.stringify(request).length / 4) + this.pieces,
    };
    this.chunks.push({ id: this.id, object: 'chat.completion.chunk', created: this.created, model: SCRIPTED_MODEL, system_fingerprint: 'fp_agui_rx_demo', choices: [], usage });
    this.chunks.push('[DONE]');
    return this;
  }
}

/** The results of the tool calls that answered the last assistant message, by tool name. */
function toolResults(messages: readonly ChatMessage[]): Map<string, Record<string, unknown>> {
  const results = new Map<string, Record<string, unknown>>();
  let i = messages.length - 1;
  while (i >= 0 && messages[i].role === 'tool') i--;
  const assistant = messages[i];
  const calls = assistant?.role === 'assistant' ? (assistant.tool_calls ?? []) : [];
  for (const message of messages.slice(i + 1)) {
    if (message.role !== 'tool') continue;
    const call = calls.find((candidate) => candidate.id === message.tool_call_id);
    let result: unknown;
    try {
      result = JSON.parse(message.content);
    } catch {
      result = { error: message.content };
    }
    if (call && typeof result === 'object' && result !== null) results.set(call.function.name, result as Record<string, unknown>);
  }
  return results;
}

/** The final answer, written from the tool results. */
function finalAnswer(results: Map<string, Record<string, unknown>>): string {
  const weather = results.get('get_weather');
  const time = results.get('get_time');
  const parts: string[] = [];
  if (weather && weather.error === undefined) {
    parts.push(
      `In ${weather.city} it is ${weather.temperatureC} °C and ${weather.condition}, with ${weather.humidityPercent} % humidity and wind at ${weather.windKmh} km/h.`,
    );
  } else {
    parts.push(`I could not get the weather${weather ? `: ${weather.error}` : '.'}`);
  }
  if (time && time.error === undefined) {
    parts.push(`The local time there is ${time.time} on ${time.weekday} (${time.date}, ${time.timezone}).`);
  } else {
    parts.push(`I could not get the local time${time ? `: ${time.error}` : '.'}`);
  }
  if (weather && weather.error === undefined) {
    const condition = String(weather.condition);
    const temperature = Number(weather.temperatureC);
    parts.push(
      /rain|showers/.test(condition)
        ? 'Take an umbrella if you head out.'
        : temperature < 8
          ? 'Wrap up warm if you head out.'
          : 'A fine time to be outside.',
    );
  }
  return parts.join(' ');
}

/**
 * The scripted model's chunks for one request: no key, no network, the same every time.
 *
 * - When the conversation ends with a user message: a short reasoning (optional), a sentence of
 *   text, then two parallel tool calls, `get_weather({ city })` and `get_time({ timezone })`, for
 *   the place the user named (Lisbon when none), `finish_reason: 'tool_calls'`.
 * - When it ends with tool results: a final answer written from them, `finish_reason: 'stop'`.
 *
 * Either way the chunks are OpenAI's `chat.completion.chunk` shapes: the role first, content of a
 * few characters per chunk, each tool call's id and name on its first piece and its arguments in
 * fragments, the finish reason, a usage-only chunk with `choices: []`, then `'[DONE]'`.
 *
 * @param request The conversation (OpenAI messages) and the declared tools.
 * @param options The clock, the id generator and whether to reason.
 * @return The chunks of one completion.
 */
export function scriptedChunks(request: ChatModelRequest, options: Pick<ScriptedAgentOptions, 'now' | 'generateId' | 'reasoning'> = {}): (ChatCompletionChunk | '[DONE]')[] {
  const mint = options.generateId ?? defaultGenerateId;
  const now = options.now ?? (() => new Date());
  const writer = new CompletionWriter(`chatcmpl-${mint()}`, Math.floor(now().getTime() / 1000)).role();
  const last = request.messages[request.messages.length - 1];
  if (last?.role === 'tool') {
    return writer.content(finalAnswer(toolResults(request.messages))).finish('stop', request).chunks;
  }
  const found = findPlace(lastUserText(request.messages));
  const place = found ?? DEFAULT_PLACE;
  if (options.reasoning ?? true) {
    writer.reasoning(
      `${found ? `The user asks about ${place.city}.` : `No city named, so I will use ${place.city}.`} Weather and local time are independent lookups: I will call get_weather and get_time in parallel.`,
    );
  }
  writer.content(found ? `Let me look up the weather and the local time in ${place.city}.` : `You did not name a city, so I will use ${place.city}: let me look up its weather and local time.`);
  writer.toolCall(0, { id: `call_${mint()}`, type: 'function', function: { name: 'get_weather', arguments: JSON.stringify({ city: place.city }) } });
  writer.toolCall(1, { id: `call_${mint()}`, type: 'function', function: { name: 'get_time', arguments: JSON.stringify({ timezone: place.timezone }) } });
  return writer.finish('tool_calls', request).chunks;
}

/**
 * A {@link ChatModel} that streams {@link scriptedChunks} with a live pace (RxJS timers, cleared on unsubscribe).
 *
 * @param options The pace, the clock, the id generator, whether to reason, and the scheduler.
 * @return The model: `(request) => Observable<ChatCompletionChunk | '[DONE]'>`.
 */
export function createScriptedModel(options: ScriptedAgentOptions = {}): ChatModel {
  return (request) => paced(scriptedChunks(request, options), options.pace ?? [20, 40], options.scheduler);
}

/**
 * The demo's default agent: needs no key and no network. Each run streams a scripted model turn
 * (text, two parallel tool calls), runs `get_weather` and `get_time` on the server, reports their
 * results (TOOL_CALL_RESULT) and the changed state (STATE_SNAPSHOT: `lastCity`, `lastTimezone`,
 * `lookups`), then streams a final answer that uses the results. The model's turns go through
 * `fromOpenAIChatCompletions()`, exactly as a real provider's would.
 *
 * ## Example
 *
 * ```ts
 * createServer(createAguiHandler(createScriptedAgent())).listen(8000);
 * ```
 *
 * @param options The pace of the chunks and of the tools (ms), reasoning, the clock, ids and scheduler.
 * @return An {@link AguiAgent}; unsubscribing stops its timers.
 */
export function createScriptedAgent(options: ScriptedAgentOptions = {}): AguiAgent {
  return createChatAgent({
    model: createScriptedModel(options),
    tools: demoTools,
    toolLatency: options.toolLatency ?? [250, 600],
    now: options.now,
    scheduler: options.scheduler,
  });
}
