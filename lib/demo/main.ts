import { existsSync } from 'node:fs';
import { basename, relative, resolve } from 'node:path';
import type { AguiAgent } from '../transports/createAguiHandler.js';
import { AguiRxError } from '../protocol/errors.js';
import { createAnthropicAgent, DEFAULT_ANTHROPIC_MODEL } from './anthropicAgent.js';
import { createOpenAIAgent, DEFAULT_OPENAI_MODEL } from './openAIAgent.js';
import { createReplayAgent, readTranscript } from './replayAgent.js';
import type { RunStore } from '../broker/runStore.js';
import { ALLOW_ALL_NOTICE, describeActivity, loadRedisRunStore } from './demoBroker.js';
import { createScriptedAgent } from './scriptedAgent.js';
import { startDemoServer } from './server.js';

/** The demo's command line help. */
export const DEMO_USAGE = `Usage: agui-rx demo [--replay <file>] [--provider <openai|anthropic>] [--port <n>]

Serves a web page on http://localhost:8000/ (PORT or --port changes the port) and the AG-UI
HTTP binding on POST /agent, through a run broker: runs outlive their connections (resume with
Last-Event-ID, POST /agent/connect, POST /agent/threads/<t>/runs/<r>/stop). Runs live in memory;
with REDIS_URL (e.g. redis://127.0.0.1:6379) in Redis, shared by every demo using that URL.
The agent is, in order of preference:
  --replay <file>    a recorded OpenAI chat completions stream (.sse or .jsonl), replayed live
  OPENAI_API_KEY     the OpenAI chat completions API (model: OPENAI_MODEL, default ${DEFAULT_OPENAI_MODEL};
                     OPENAI_BASE_URL for a compatible server)
  ANTHROPIC_API_KEY  the Anthropic Messages API (model: ANTHROPIC_MODEL, default ${DEFAULT_ANTHROPIC_MODEL};
                     ANTHROPIC_BASE_URL for another endpoint)
  otherwise          a scripted agent: no key, no network
With both keys set, OpenAI is used; --provider anthropic (or openai) chooses, and needs its key.
`;

/** The model providers `--provider` chooses between. */
export const DEMO_PROVIDERS = ['openai', 'anthropic'] as const;

/** A model provider of the demo. */
export type DemoProvider = (typeof DEMO_PROVIDERS)[number];

/** What the demo was asked to run, from its arguments and environment. */
export interface DemoConfig {
  port: number;
  replay?: string;
  /** The provider `--provider` asked for; absent when the keys decide. */
  provider?: DemoProvider;
  help: boolean;
}

/**
 * Reads the demo's arguments (`--replay <file>`, `--provider <openai|anthropic>`, `--port <n>`,
 * `--help`) and `PORT`.
 *
 * @param argv The arguments after `demo`.
 * @param env The environment (`PORT`).
 * @return The port (default 8000), the replay file, the provider and whether help was asked for.
 * @throws {AguiRxError} `INVALID_ARGUMENTS` for an unknown argument, a missing value, an unknown provider or a bad port.
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
    else if (name === '--provider') {
      const provider = value().toLowerCase();
      if (!(DEMO_PROVIDERS as readonly string[]).includes(provider)) throw fail(`--provider must be one of ${DEMO_PROVIDERS.join(', ')}, not ${JSON.stringify(provider)}.`);
      config.provider = provider as DemoProvider;
    }
    else throw fail(`Unknown argument ${JSON.stringify(argv[i])}.`);
  }
  if (port !== undefined && port !== '') {
    const n = Number(port);
    if (!Number.isInteger(n) || n < 0 || n > 65535) throw fail(`The port must be an integer from 0 to 65535, not ${JSON.stringify(port)}.`);
    config.port = n;
  }
  return config;
}

/**
 * The provider whose API the demo talks to: the one `--provider` names (which needs its key), else
 * OpenAI when `OPENAI_API_KEY` is set, else Anthropic when `ANTHROPIC_API_KEY` is, else none (the scripted agent).
 */
function chooseProvider(asked: DemoProvider | undefined, env: NodeJS.ProcessEnv): DemoProvider | undefined {
  const keys: Record<DemoProvider, string> = { openai: 'OPENAI_API_KEY', anthropic: 'ANTHROPIC_API_KEY' };
  if (asked !== undefined) {
    if (!env[keys[asked]]) throw new AguiRxError('INVALID_ARGUMENTS', `--provider ${asked} needs ${keys[asked]} in the environment.\n\n${DEMO_USAGE}`);
    return asked;
  }
  if (env.OPENAI_API_KEY) return 'openai';
  if (env.ANTHROPIC_API_KEY) return 'anthropic';
  return undefined;
}

/** Where the shared recordings sit beside this clone (run from its root), when they do: for a hint. */
function sharedRecordings(): string | undefined {
  const dir = resolve(process.cwd(), '../shared/fixtures/openai-chat-completions');
  return existsSync(dir) ? dir : undefined;
}

/** A URL without its password, for the log. */
function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return 'REDIS_URL';
  }
}

/** Optional hooks of {@link runDemo}, for specs: the environment, the output, and a stop signal. */
export interface RunDemoOptions {
  /** The environment (`PORT`, `REDIS_URL`, `OPENAI_API_KEY`, `OPENAI_MODEL`, `OPENAI_BASE_URL`, `ANTHROPIC_API_KEY`, `ANTHROPIC_MODEL`, `ANTHROPIC_BASE_URL`). Default: `process.env`. */
  env?: NodeJS.ProcessEnv;
  /** Where the banner and the broker's activity lines go. Default: `console.log`. */
  log?: (line: string) => void;
  /** Stops the server when aborted. Default: SIGINT or SIGTERM. */
  signal?: AbortSignal;
  /** Called once the server listens, with its URL. */
  onListening?: (url: string) => void;
  /** How long a run nobody reads goes on before it is cancelled, in ms. Default: 30000. */
  detachGraceMs?: number;
}

/**
 * `npm run demo` / `agui-rx demo`: serves the demo page on http://localhost:8000/ and its agent on
 * POST /agent, until Ctrl+C (SIGINT) or SIGTERM.
 *
 * The agent: with `--replay <file>`, a recorded OpenAI chat completions stream replayed live; with
 * `OPENAI_API_KEY`, the OpenAI chat completions API (`OPENAI_MODEL`, default `gpt-4o-mini`); else
 * with `ANTHROPIC_API_KEY`, the Anthropic Messages API (`ANTHROPIC_MODEL`, default
 * `claude-sonnet-4-5`); otherwise the scripted agent, which needs no key and no network. With both
 * keys, `--provider anthropic|openai` chooses (OpenAI by default). The OpenAI, replayed and
 * scripted agents stream through `fromOpenAIChatCompletions()`, the Anthropic one through
 * `fromAnthropicMessages()`, and all through `toAgui()`.
 *
 * Runs go through a run broker whose log is in memory, or, with `REDIS_URL`, in Redis Streams (so
 * that demos on several ports sharing one Redis serve each other's runs); each broker activity is
 * one log line. Its `authorize` hook allows everything: for the demo only, as the banner says.
 *
 * @param argv The arguments after `demo`: `[--replay <file>] [--provider <openai|anthropic>] [--port <n>] [--help]`.
 * @param options The environment, the output and a stop signal (for specs).
 * @return A promise that resolves when the server has stopped (at once for `--help`).
 * @throws {AguiRxError} `INVALID_ARGUMENTS` (also for `--provider` without its key),
 * `TRANSCRIPT_NOT_FOUND`, `INVALID_TRANSCRIPT` or `REDIS_UNAVAILABLE` (REDIS_URL set, no Redis store to load) before anything is served; a listen error (port in use) as a rejection.
 */
export async function runDemo(argv: string[], options: RunDemoOptions = {}): Promise<void> {
  const env = options.env ?? process.env;
  const log = options.log ?? ((line: string) => console.log(line));
  const config = parseDemoArgs(argv, env);
  if (config.help) return log(DEMO_USAGE);

  let agent: AguiAgent;
  let label: string;
  let hint: string | undefined;
  let adapter: string | undefined;
  const provider = config.replay === undefined ? chooseProvider(config.provider, env) : undefined;
  if (config.replay !== undefined) {
    agent = createReplayAgent(readTranscript(config.replay));
    label = `replay · ${basename(config.replay)}`;
  } else if (provider === 'openai') {
    const model = env.OPENAI_MODEL || DEFAULT_OPENAI_MODEL;
    agent = createOpenAIAgent({ apiKey: env.OPENAI_API_KEY!, model, baseUrl: env.OPENAI_BASE_URL || undefined });
    label = `OpenAI · ${model}`;
    if (env.ANTHROPIC_API_KEY && config.provider === undefined) hint = 'ANTHROPIC_API_KEY is set too: --provider anthropic uses Anthropic instead.';
  } else if (provider === 'anthropic') {
    const model = env.ANTHROPIC_MODEL || DEFAULT_ANTHROPIC_MODEL;
    agent = createAnthropicAgent({ apiKey: env.ANTHROPIC_API_KEY!, model, baseUrl: env.ANTHROPIC_BASE_URL || undefined });
    label = `Anthropic · ${model}`;
    adapter = 'fromAnthropicMessages()';
  } else {
    agent = createScriptedAgent();
    label = 'scripted agent · no key, no network';
    hint = 'Set OPENAI_API_KEY or ANTHROPIC_API_KEY to talk to OpenAI or Anthropic instead.';
    const shared = sharedRecordings();
    if (shared) hint += `\n  Replay a recording: npm run demo -- --replay ${relative(process.cwd(), resolve(shared, 'oaipy-gpt4o-parallel-tool-calls.sse'))}`;
  }

  const redisUrl = env.REDIS_URL || undefined;
  const store: RunStore | undefined = redisUrl === undefined ? undefined : await loadRedisRunStore(redisUrl);
  const server = await startDemoServer({
    agent,
    port: config.port,
    page: { agentLabel: label, adapter },
    broker: { store, detachGraceMs: options.detachGraceMs, onActivity: (activity) => log(describeActivity(activity)) },
  }).catch(async (error: unknown) => {
    await store?.close().catch(() => undefined);
    throw error;
  });
  const pageUrl = `http://localhost:${server.port}/`;
  log(`agui-rx demo: open ${pageUrl}`);
  log(`  agent:  ${label}`);
  log(`  AG-UI:  POST ${pageUrl}agent (RunAgentInput in, SSE out)`);
  log(`  runs:   ${redisUrl === undefined ? 'in memory (set REDIS_URL to share them between demos through Redis)' : `in Redis at ${redactUrl(redisUrl)}`}, broker instance ${server.broker.instanceId}`);
  // The demo's authorize hook lets everyone read and stop every run: say so every time.
  log(`  ${ALLOW_ALL_NOTICE}`);
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
