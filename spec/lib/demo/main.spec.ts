import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { DEMO_USAGE, parseDemoArgs, runDemo } from '../../../lib/demo/main.js';

const transcript = resolve(__dirname, '../../fixtures/openai-chat-completions/refusal.sse');

/** Starts runDemo on a free port, hands its URL and banner to `check`, then stops it. */
async function withDemo(argv: string[], env: NodeJS.ProcessEnv, check: (url: string, lines: string[]) => Promise<void>): Promise<void> {
  const lines: string[] = [];
  const stop = new AbortController();
  let listening!: (url: string) => void;
  const url = new Promise<string>((resolve) => (listening = resolve));
  const done = runDemo(argv, { env: { PORT: '0', ...env }, log: (line) => lines.push(line), signal: stop.signal, onListening: listening });
  try {
    await check(await Promise.race([url, done.then(() => Promise.reject(new Error('runDemo ended before listening')))]), lines);
  } finally {
    stop.abort();
    await done;
  }
}

describe('parseDemoArgs', () => {
  it('should read --replay, --port and PORT, with 8000 by default', () => {
    expect(parseDemoArgs([], {})).toEqual({ port: 8000, help: false });
    expect(parseDemoArgs([], { PORT: '8123' })).toEqual({ port: 8123, help: false });
    expect(parseDemoArgs(['--replay', 'a.sse', '--port=9000'], { PORT: '8123' })).toEqual({ port: 9000, replay: 'a.sse', help: false });
    expect(parseDemoArgs(['--replay=b.jsonl', '-h'], {})).toEqual({ port: 8000, replay: 'b.jsonl', help: true });
  });

  it('should refuse unknown arguments, missing values and bad ports with the usage', () => {
    expect(() => parseDemoArgs(['--open'], {})).toThrow(`Unknown argument "--open".\n\n${DEMO_USAGE}`);
    expect(() => parseDemoArgs(['--replay'], {})).toThrow('--replay needs a value.');
    expect(() => parseDemoArgs([], { PORT: 'http' })).toThrow('The port must be an integer from 0 to 65535, not "http".');
    expect(() => parseDemoArgs(['--port', '70000'], {})).toThrow('The port must be an integer from 0 to 65535, not "70000".');
    expect(() => parseDemoArgs(['--provider', 'gemini'], {})).toThrow('--provider must be one of openai, anthropic, not "gemini".');
  });

  it('should read --provider', () => {
    expect(parseDemoArgs(['--provider', 'anthropic'], {})).toEqual({ port: 8000, provider: 'anthropic', help: false });
    expect(parseDemoArgs(['--provider=OpenAI'], {})).toEqual({ port: 8000, provider: 'openai', help: false });
  });
});

describe('runDemo', () => {
  it('should serve the scripted agent without a key, print where, and stop when asked', async () => {
    await withDemo([], {}, async (url, lines) => {
      expect(lines[0]).toMatch(/^agui-rx demo: open http:\/\/localhost:\d+\/$/);
      expect(lines[1]).toBe('  agent:  scripted agent · no key, no network');
      expect(await (await fetch(url)).text()).toContain('scripted agent · no key, no network');
    });
  });

  it('should say where runs live and that authorize allows all for the demo only, and log each broker activity', async () => {
    await withDemo([], {}, async (url, lines) => {
      expect(lines).toContainEqual(expect.stringMatching(/^ {2}runs: {3}in memory \(set REDIS_URL to share them between demos through Redis\), broker instance \S+$/));
      expect(lines).toContain('  authorize: allow-all, FOR THE DEMO ONLY: anyone who can reach this server may read and stop any run. Configure a real `authorize` hook in your server.');
      const response = await fetch(`${url}agent`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Accept: 'text/event-stream' },
        body: JSON.stringify({ threadId: 't', runId: 'r', messages: [{ id: 'u', role: 'user', content: 'Hello' }] }),
      });
      await response.text();
      const broker = lines.filter((line) => line.startsWith('broker: '));
      expect(broker[0]).toMatch(/^broker: run started {3}t\/r on \S+$/);
      expect(broker).toContainEqual(expect.stringMatching(/^broker: run ended {5}t\/r success · \d+ events in /));
    });
  });

  // Until agui-rx/broker/redis is built into this checkout, REDIS_URL must fail before serving, saying why.
  (existsSync(resolve(__dirname, '../../../lib/broker/redis/index.ts')) ? it.skip : it)('should refuse REDIS_URL with what to do when the Redis store cannot be loaded', async () => {
    await expect(runDemo([], { env: { REDIS_URL: 'redis://127.0.0.1:1' }, log: () => undefined })).rejects.toThrow(
      /^REDIS_URL is set, but the Redis run store could not be loaded: [\s\S]*Install the redis package \(npm install redis\) and rebuild, or unset REDIS_URL to keep runs in memory\.$/,
    );
  });

  it('should use OpenAI when OPENAI_API_KEY is set, with OPENAI_MODEL', async () => {
    await withDemo([], { OPENAI_API_KEY: 'sk-test', OPENAI_MODEL: 'gpt-4.1-mini' }, async (_url, lines) => {
      expect(lines[1]).toBe('  agent:  OpenAI · gpt-4.1-mini');
    });
  });

  it('should use Anthropic when ANTHROPIC_API_KEY is set (and OPENAI_API_KEY is not), with ANTHROPIC_MODEL', async () => {
    await withDemo([], { ANTHROPIC_API_KEY: 'sk-ant-test' }, async (url, lines) => {
      expect(lines[1]).toBe('  agent:  Anthropic · claude-sonnet-4-5');
      expect(await (await fetch(url)).text()).toContain('<code>fromAnthropicMessages()</code>');
    });
    await withDemo([], { ANTHROPIC_API_KEY: 'sk-ant-test', ANTHROPIC_MODEL: 'claude-haiku-4-5' }, async (_url, lines) => {
      expect(lines[1]).toBe('  agent:  Anthropic · claude-haiku-4-5');
    });
  });

  it('should prefer OpenAI when both keys are set, say so, and let --provider choose', async () => {
    const both = { OPENAI_API_KEY: 'sk-test', ANTHROPIC_API_KEY: 'sk-ant-test' };
    await withDemo([], both, async (_url, lines) => {
      expect(lines[1]).toBe('  agent:  OpenAI · gpt-4o-mini');
      expect(lines).toContain('  ANTHROPIC_API_KEY is set too: --provider anthropic uses Anthropic instead.');
    });
    await withDemo(['--provider', 'anthropic'], both, async (_url, lines) => {
      expect(lines[1]).toBe('  agent:  Anthropic · claude-sonnet-4-5');
    });
    await withDemo(['--provider', 'openai'], both, async (_url, lines) => {
      expect(lines[1]).toBe('  agent:  OpenAI · gpt-4o-mini');
      expect(lines.join('\n')).not.toContain('is set too');
    });
  });

  it('should refuse --provider without its key, before serving', async () => {
    await expect(runDemo(['--provider', 'anthropic'], { env: { OPENAI_API_KEY: 'sk-test' }, log: () => undefined })).rejects.toThrow(/^--provider anthropic needs ANTHROPIC_API_KEY in the environment\./);
  });

  it('should replay a transcript with --replay, even with a key', async () => {
    await withDemo(['--replay', transcript], { OPENAI_API_KEY: 'sk-test' }, async (url, lines) => {
      expect(lines[1]).toBe('  agent:  replay · refusal.sse');
      const response = await fetch(`${url}agent`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Accept: 'text/event-stream' },
        body: JSON.stringify({ threadId: 't', runId: 'r', messages: [{ id: 'u', role: 'user', content: 'Open it' }] }),
      });
      expect(await response.text()).toContain('"delta":"I can"');
    });
  });

  it('should print the usage for --help and fail before serving for a missing transcript', async () => {
    const lines: string[] = [];
    await runDemo(['--help'], { log: (line) => lines.push(line) });
    expect(lines).toEqual([DEMO_USAGE]);
    await expect(runDemo(['--replay', '/nonexistent.sse'], { log: () => undefined })).rejects.toThrow(/^Cannot read the transcript \/nonexistent\.sse/);
  });
});
