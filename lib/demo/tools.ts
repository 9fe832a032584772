import type { ChatToolDeclaration } from './chatTypes.js';

/** What a demo tool may use while it runs. */
export interface DemoToolContext {
  /** The current time. Injectable so that specs are deterministic. */
  now: () => Date;
}

/** A tool that runs on the demo server: its declaration for the model, its code, and how it changes the agent's state. */
export interface DemoTool {
  /** The function declaration sent to the model (name, description, JSON Schema of the arguments). */
  declaration: ChatToolDeclaration;
  /** Runs the tool on parsed arguments; returns a JSON-serialisable result. Throws for bad arguments. */
  run(args: Record<string, unknown>, context: DemoToolContext): unknown;
  /** The agent's state after a successful call. */
  updateState(state: DemoState, args: Record<string, unknown>, result: unknown): DemoState;
}

/** The demo agent's state, as the page shows it. Unknown keys the client sent are kept. */
export type DemoState = Record<string, unknown> & { lastCity?: string; lastTimezone?: string; lookups?: number };

const CONDITIONS = ['sunny', 'partly cloudy', 'overcast', 'light rain', 'clear', 'windy', 'foggy', 'showers'] as const;

/** A small, stable hash of a string (FNV-1a, 32 bits): the same city always gets the same weather. */
function hash(text: string): number {
  let h = 0x811c9dc5;
  for (const char of text.toLowerCase()) {
    h ^= char.codePointAt(0)!;
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

function requireString(args: Record<string, unknown>, name: string, example: string): string {
  const value = args[name];
  if (typeof value !== 'string' || value.trim() === '') {
    throw new Error(`Argument '${name}' must be a non-empty string, e.g. ${JSON.stringify(example)}.`);
  }
  return value.trim();
}

const countLookup = (state: DemoState): number => (typeof state.lookups === 'number' ? state.lookups : 0) + 1;

/**
 * `get_weather(city)`: made-up but deterministic current weather (°C, %, km/h) for any city name.
 */
export const getWeather: DemoTool = {
  declaration: {
    type: 'function',
    function: {
      name: 'get_weather',
      description: 'Current weather for a city: condition, temperature in °C, humidity in %, wind in km/h.',
      parameters: {
        type: 'object',
        properties: { city: { type: 'string', description: 'City name, e.g. "Paris".' } },
        required: ['city'],
        additionalProperties: false,
      },
    },
  },
  run(args) {
    const city = requireString(args, 'city', 'Paris');
    const h = hash(city);
    return {
      city,
      condition: CONDITIONS[h % CONDITIONS.length],
      temperatureC: (h >>> 3) % 30 - 2,
      humidityPercent: 35 + ((h >>> 8) % 60),
      windKmh: 3 + ((h >>> 14) % 35),
    };
  },
  updateState: (state, args) => ({ ...state, lastCity: String(args.city).trim(), lookups: countLookup(state) }),
};

/**
 * `get_time(timezone)`: the local date and time in an IANA time zone, from the injected clock.
 */
export const getTime: DemoTool = {
  declaration: {
    type: 'function',
    function: {
      name: 'get_time',
      description: 'Current local date and time in an IANA time zone.',
      parameters: {
        type: 'object',
        properties: { timezone: { type: 'string', description: 'IANA time zone, e.g. "Europe/Paris".' } },
        required: ['timezone'],
        additionalProperties: false,
      },
    },
  },
  run(args, { now }) {
    const timezone = requireString(args, 'timezone', 'Europe/Paris');
    let format: Intl.DateTimeFormat;
    try {
      format = new Intl.DateTimeFormat('en-GB', { timeZone: timezone, weekday: 'long', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' });
    } catch {
      throw new Error(`Unknown time zone ${JSON.stringify(timezone)}: use an IANA name such as "Europe/Paris" or "UTC".`);
    }
    const parts = Object.fromEntries(format.formatToParts(now()).map((part) => [part.type, part.value]));
    return { timezone, date: `${parts.year}-${parts.month}-${parts.day}`, time: `${parts.hour}:${parts.minute}`, weekday: parts.weekday };
  },
  updateState: (state, args) => ({ ...state, lastTimezone: String(args.timezone).trim(), lookups: countLookup(state) }),
};

/** The tools of the demo agent, by name. */
export const demoTools: Readonly<Record<string, DemoTool>> = { get_weather: getWeather, get_time: getTime };

/** The outcome of one tool call: the text sent back to the model and to the client, and the new state. */
export interface DemoToolOutcome {
  /** The result (or `{ error }`) as JSON text. */
  content: string;
  /** The state after the call; unchanged when the call failed. */
  state: DemoState;
}

/**
 * Runs one tool call as the model asked for it. Bad JSON arguments, an unknown tool or a throwing
 * tool give `{ "error": "…" }` as the result, which the model reads and can recover from; they never fail the run.
 *
 * @param tools The tools by name.
 * @param name The function name the model called.
 * @param argumentsJson The arguments, as the JSON text the model streamed.
 * @param state The agent's state before the call.
 * @param context The clock.
 * @return The result text and the state after the call.
 */
export function runDemoTool(tools: Readonly<Record<string, DemoTool>>, name: string, argumentsJson: string, state: DemoState, context: DemoToolContext): DemoToolOutcome {
  const tool = Object.prototype.hasOwnProperty.call(tools, name) ? tools[name] : undefined;
  if (!tool) {
    return { content: JSON.stringify({ error: `There is no tool named ${JSON.stringify(name)}. Call one of: ${Object.keys(tools).join(', ')}.` }), state };
  }
  let args: unknown;
  try {
    args = argumentsJson.trim() === '' ? {} : JSON.parse(argumentsJson);
  } catch (error) {
    return { content: JSON.stringify({ error: `The arguments are not valid JSON (${(error as Error).message}). Send a JSON object.` }), state };
  }
  if (typeof args !== 'object' || args === null || Array.isArray(args)) {
    return { content: JSON.stringify({ error: 'The arguments must be a JSON object.' }), state };
  }
  try {
    const result = tool.run(args as Record<string, unknown>, context);
    return { content: JSON.stringify(result), state: tool.updateState(state, args as Record<string, unknown>, result) };
  } catch (error) {
    return { content: JSON.stringify({ error: error instanceof Error ? error.message : String(error) }), state };
  }
}
