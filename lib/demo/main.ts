import { existsSync } from 'node:fs';
import { basename, relative, resolve } from 'node:path';
import type { AguiAgent } from '../createAguiHandler.js';
import { AguiRxError } from '../errors.js';
import { createOpenAIAgent, DEFAULT_OPENAI_MODEL } from './openAIAgent.js';
import { createReplayAgent, readTranscript } from './replayAgent.js';
import { createScriptedAgent } from './scriptedAgent.js';
import { startDemoServer } from './server.js';

/** The demo's command line help. */
export const DEMO_USAGE = `Usage: agui-rx demo [--replay <file>] [--port <n>]

Serves a web page on http://localhost:8000/ (PORT or --port changes the port) and the AG-UI
HTTP binding on POST /agent. The agent is, in order of preference:
  --replay <file>   a recorded OpenAI chat completions stream (.sse or .jsonl), replayed live
  OPENAI_API_KEY    the OpenAI chat completions API (model: OPENAI_MODEL, default ${DEFAULT_OPENAI_MODEL};
                    OPENAI_BASE_URL for a compatible server)
  otherwise         a scripted agent: no key, no network
`;

/** What the demo was asked to run, from its arguments and environment. */
export interface DemoConfig {
  port: number;
  replay?: string;
  help: boolean;
}

/**
 * Reads the demo's arguments (`--replay <file>`, `--port <n>`, `--help`) and `PORT`.
 *
 * @param argv The arguments after `demo`.
 * @param env The environment (`PORT`).
 * @return The port (default 8000), the replay file and whether help was asked for.
 * @throws {AguiRxError} `INVALID_ARGUMENTS` for an unknown argument, a missing value or a bad port.
 */
export function parseDemoArgs(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): DemoConfig {
  const config: DemoConfig = { port: 8000, help: false };
  let port = env.PORT;
  const fail = (reason: string) => new AguiRxError('INVALID_ARGUMENTS', `${reason}\n\n${DEMO_USAGE}`);
  for (let i = 0; i < argv.length; i++) {
    const [name, inline] = argv[i].startsWith('--') && argv[i].includes('=') ? [argv[i].slice(0, argv[i].indexOf('=')), argv[i].slice(argv[i].indexOf('=') + 1)] : [argv[i], undefined];
    const value = () => {
      const next = inline ?? argv[++i];
      if (next === undefined || next === '') throw fail(`${name} needs a value.`);
      return next;
    };
    if (name === '--help' || name === '-h') config.help = true;
    else if (name === '--replay') config.replay = value();
    else if (name === '--port') port = value();
    else throw fail(`Unknown argument ${JSON.stringify(argv[i])}.`);
  }
  if (port !== undefined && port !== '') {
    const n = Number(port);
    if (!Number.isInteger(n) || n < 0 || n > 65535) throw fail(`The port must be an integer from 0 to 65535, not ${JSON.stringify(port)}.`);
    config.port = n;
  }
  return config;
}

/** Where the shared recordings sit beside this clone (run from its root), when they do: for a hint. */
function sharedRecordings(): string | undefined {
  const dir = resolve(process.cwd(), '../shared/fixtures/openai-chat-completions');
  return existsSync(dir) ? dir : undefined;
}

/** Optional hooks of {@link runDemo}, for specs: the environment, the output, and a stop signal. */
export interface RunDemoOptions {
  /** The environment (`PORT`, `OPENAI_API_KEY`, `OPENAI_MODEL`, `OPENAI_BASE_URL`). Default: `process.env`. */
  env?: NodeJS.ProcessEnv;
  /** Where the banner goes. Default: `console.log`. */
  log?: (line: string) => void;
  /** Stops the server when aborted. Default: SIGINT or SIGTERM. */
  signal?: AbortSignal;
  /** Called once the server listens, with its URL. */
  onListening?: (url: string) => void;
}

/**
 * `npm run demo` / `agui-rx demo`: serves the demo page on http://localhost:8000/ and its agent on
 * POST /agent, until Ctrl+C (SIGINT) or SIGTERM.
 *
 * The agent: with `--replay <file>`, a recorded OpenAI chat completions stream replayed live; with
 * `OPENAI_API_KEY`, the OpenAI chat completions API (`OPENAI_MODEL`, default `gpt-4o-mini`); otherwise
 * the scripted agent, which needs no key and no network. Every one of them streams through
 * `fromOpenAIChatCompletions()` and `toAgui()`.
 *
 * @param argv The arguments after `demo`: `[--replay <file>] [--port <n>] [--help]`.
 * @param options The environment, the output and a stop signal (for specs).
 * @return A promise that resolves when the server has stopped (at once for `--help`).
 * @throws {AguiRxError} `INVALID_ARGUMENTS`, `TRANSCRIPT_NOT_FOUND` or `INVALID_TRANSCRIPT` before
 * anything is served; a listen error (port in use) as a rejection.
 */
export async function runDemo(argv: string[], options: RunDemoOptions = {}): Promise<void> {
  const env = options.env ?? process.env;
  const log = options.log ?? ((line: string) => console.log(line));
  const config = parseDemoArgs(argv, env);
  if (config.help) return log(DEMO_USAGE);

  let agent: AguiAgent;
  let label: string;
  let hint: string | undefined;
  if (config.replay !== undefined) {
    agent = createReplayAgent(readTranscript(config.replay));
    label = `replay · ${basename(config.replay)}`;
  } else if (env.OPENAI_API_KEY) {
    const model = env.OPENAI_MODEL || DEFAULT_OPENAI_MODEL;
    agent = createOpenAIAgent({ apiKey: env.OPENAI_API_KEY, model, baseUrl: env.OPENAI_BASE_URL || undefined });
    label = `OpenAI · ${model}`;
  } else {
    agent = createScriptedAgent();
    label = 'scripted agent · no key, no network';
    hint = 'Set OPENAI_API_KEY to talk to OpenAI instead.';
    const shared = sharedRecordings();
    if (shared) hint += `\n  Replay a recording: npm run demo -- --replay ${relative(process.cwd(), resolve(shared, 'oaipy-gpt4o-parallel-tool-calls.sse'))}`;
  }

  const server = await startDemoServer({ agent, port: config.port, page: { agentLabel: label } });
  const pageUrl = `http://localhost:${server.port}/`;
  log(`agui-rx demo: open ${pageUrl}`);
  log(`  agent:  ${label}`);
  log(`  AG-UI:  POST ${pageUrl}agent (RunAgentInput in, SSE out)`);
  if (hint) log(`  ${hint}`);
  log('  Press Ctrl+C to stop.');
  options.onListening?.(server.url);

  await new Promise<void>((done) => {
    const stop = () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      options.signal?.removeEventListener('abort', stop);
      done();
    };
    if (options.signal) {
      if (options.signal.aborted) return stop();
      options.signal.addEventListener('abort', stop);
    } else {
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
    }
  });
  await server.close();
}
