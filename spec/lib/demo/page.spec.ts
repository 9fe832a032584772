import { existsSync } from 'node:fs';
import { Script } from 'node:vm';
import { chromium, type Browser, type Page } from 'playwright-core';
import { finalize } from 'rxjs';
import { renderDemoPage } from '../../../lib/demo/page.js';
import { createScriptedAgent } from '../../../lib/demo/scriptedAgent.js';
import { startDemoServer, type DemoServer } from '../../../lib/demo/server.js';

const CHROMIUM = '/usr/bin/chromium';
const haveChromium = existsSync(CHROMIUM);
// Without the background-networking flags Chromium keeps trying to reach outside hosts.
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

const NOW = new Date('2026-11-29T12:34:00Z');

describe('renderDemoPage', () => {
  it('should be one file whose inline script parses', () => {
    const html = renderDemoPage({ agentLabel: 'test </script><b>' });
    const scripts = [...html.matchAll(/<script>([\s\S]*?)<\/script>/g)].map((match) => match[1]);
    expect(scripts).toHaveLength(1);
    expect(() => new Script(scripts[0])).not.toThrow();
    expect(html).not.toMatch(/\b(?:src|href)="(?:https?:)?\/\//);
  });

  it('should embed its options as JSON that cannot close the script element', () => {
    const html = renderDemoPage({ agentLabel: 'test </script><b>', suggestions: ['a'] });
    const config = /<script type="application\/json" id="config">(.*?)<\/script>/.exec(html)![1];
    expect(config).not.toContain('<');
    expect(JSON.parse(config)).toEqual({ agentLabel: 'test </script><b>', endpoint: '/agent', suggestions: ['a'] });
  });
});

(haveChromium ? describe : describe.skip)(`the demo page in headless Chromium${haveChromium ? '' : ` (skipped: no Chromium at ${CHROMIUM}; .ci/run installs it)`}`, () => {
  let server: DemoServer;
  let browser: Browser;
  let page: Page;
  const errors: string[] = [];
  const bodies: { messages: { role: string; content?: string }[]; state: Record<string, unknown> }[] = [];

  beforeAll(async () => {
    server = await startDemoServer({ port: 0, agent: createScriptedAgent({ pace: 4, toolLatency: [60, 140], now: () => NOW }), page: { agentLabel: 'scripted agent · no key, no network' } });
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    page.on('pageerror', (error) => errors.push(error.message));
    page.on('console', (message) => void (message.type() === 'error' && errors.push(message.text())));
    page.on('request', (request) => void (request.method() === 'POST' && bodies.push(request.postDataJSON())));
  });

  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  /** Sends a message and waits for its run to end (each run ends with one summary line). */
  const send = async (text: string) => {
    const runs = await page.locator('.run-summary').count();
    await page.fill('#input', text);
    await page.click('#send');
    await page.waitForFunction((before) => document.querySelectorAll('.run-summary').length > before, runs);
  };

  it('should render the streamed text, the two tool calls with their arguments and results, and the state', async () => {
    await page.goto(server.url);
    expect(await page.textContent('#agent-label')).toBe('scripted agent · no key, no network');
    await send("What's the weather in Tokyo?");

    expect(await page.getAttribute('#status', 'data-status')).toBe('finished');
    const texts = await page.locator('.msg.assistant .text').allTextContents();
    expect(texts[0]).toBe('Let me look up the weather and the local time in Tokyo.');
    expect(texts[1]).toMatch(/^In Tokyo it is -?\d+ °C and .* The local time there is 21:34 on Sunday \(2026-11-29, Asia\/Tokyo\)\./);
    expect(await page.locator('.msg.reasoning .text').textContent()).toContain('get_weather and get_time in parallel');

    const cards = page.locator('.tool-call');
    expect(await cards.count()).toBe(2);
    expect(await cards.evaluateAll((nodes) => nodes.map((node) => node.getAttribute('data-name')))).toEqual(['get_weather', 'get_time']);
    expect(await cards.evaluateAll((nodes) => nodes.map((node) => node.getAttribute('data-status')))).toEqual(['done', 'done']);
    const args = (await page.locator('.tool-call .args').allTextContents()).map((text) => JSON.parse(text));
    expect(args).toEqual([{ city: 'Tokyo' }, { timezone: 'Asia/Tokyo' }]);
    const results = (await page.locator('.tool-call .result').allTextContents()).map((text) => JSON.parse(text));
    expect(results).toEqual([expect.objectContaining({ city: 'Tokyo', condition: expect.any(String) }), { timezone: 'Asia/Tokyo', date: '2026-11-29', time: '21:34', weekday: 'Sunday' }]);

    expect(JSON.parse((await page.textContent('#state'))!)).toEqual({ lastCity: 'Tokyo', lastTimezone: 'Asia/Tokyo', lookups: 2 });
    expect(await page.textContent('#run-outcome')).toBe('success');
    expect(await page.textContent('#run-usage')).toMatch(/^\d+ \(agui-rx-scripted-1\)$/);

    await page.screenshot({ path: '/tmp/demo-page.png' });
    expect(errors).toEqual([]);
  });

  it('should send the conversation and the state back on the next turn', async () => {
    await send('And in Oslo?');
    expect(bodies).toHaveLength(2);
    const [first, second] = bodies;
    expect(first.messages.map((message) => message.role)).toEqual(['user']);
    expect(first).toMatchObject({ threadId: expect.stringMatching(/^thread-/), runId: expect.stringMatching(/^run-/), state: {}, tools: [], context: [] });
    expect(second.messages.map((message) => message.role)).toEqual(['user', 'assistant', 'tool', 'tool', 'assistant', 'user']);
    expect(second.state).toEqual({ lastCity: 'Tokyo', lastTimezone: 'Asia/Tokyo', lookups: 2 });
    expect(JSON.parse((await page.textContent('#state'))!)).toEqual({ lastCity: 'Oslo', lastTimezone: 'Europe/Oslo', lookups: 4 });
    expect(await page.locator('.tool-call').count()).toBe(4);
    await page.screenshot({ path: '/tmp/demo-page-second-turn.png' });
    expect(errors).toEqual([]);
  });

  it('should stop a run with the Stop button, and the server should unsubscribe the agent', async () => {
    // A slow agent of its own, so that the click surely lands mid-run.
    let unsubscribed!: () => void;
    const agentStopped = new Promise<void>((resolve) => (unsubscribed = resolve));
    const scripted = createScriptedAgent({ pace: 40, toolLatency: 5_000, now: () => NOW });
    const slow = await startDemoServer({ port: 0, agent: (input, ctx) => scripted(input, ctx).pipe(finalize(() => unsubscribed())) });
    try {
      await page.goto(slow.url);
      await page.fill('#input', 'Lisbon, slowly');
      await page.click('#send');
      await page.waitForSelector('.msg.reasoning');
      await page.click('#stop');
      await page.waitForSelector('#status[data-status="cancelled"]');
      await agentStopped;
      expect(await page.textContent('.notice.cancelled')).toBe('Stopped: the request was aborted, so the server unsubscribed the agent.');
      expect(await page.isEnabled('#send')).toBe(true);
      expect(await page.isHidden('#stop')).toBe(true);
      expect(errors).toEqual([]);
    } finally {
      await slow.close();
    }
  });
});
