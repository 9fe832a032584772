import { EventType, type Event } from '@ag-ui/core';
import { existsSync } from 'node:fs';
import { createServer, connect, type AddressInfo, type Server, type Socket } from 'node:net';
import { Script } from 'node:vm';
import { chromium, type Browser, type Page } from 'playwright-core';
import { NEVER, concat, finalize, of } from 'rxjs';
import type { AgentEvent } from '../../../lib/protocol/agentEvent.js';
import { toAgui } from '../../../operators/toAgui.js';
import type { BrokerActivity } from '../../../lib/broker/createRunBroker.js';
import { describeActivity } from '../../../lib/demo/demoBroker.js';
import { renderDemoPage } from '../../../lib/demo/page.js';
import { createScriptedAgent } from '../../../lib/demo/scriptedAgent.js';
import { startDemoServer, type DemoServer } from '../../../lib/demo/server.js';
import { collect } from '../../support/helpers.js';

const CHROMIUM = '/usr/bin/chromium';
const haveChromium = existsSync(CHROMIUM);
// Without the background-networking flags Chromium keeps trying to reach outside hosts.
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

const NOW = new Date('2026-11-29T12:34:00Z');

/** The texts of each assistant message an uninterrupted run of the scripted agent streams for `text`, in order. */
async function expectedAnswer(text: string): Promise<string[]> {
  const agent = createScriptedAgent({ pace: 0, toolLatency: 0, now: () => NOW });
  const input = { threadId: 't', runId: 'r', state: {}, messages: [{ id: 'u', role: 'user' as const, content: text }], tools: [], context: [] };
  const events: Event[] = await collect(agent(input, { signal: new AbortController().signal }).pipe(toAgui({ threadId: 't', runId: 'r', input })));
  const texts = new Map<string, string>();
  for (const event of events) if (event.type === EventType.TEXT_MESSAGE_CONTENT) texts.set(event.messageId, (texts.get(event.messageId) ?? '') + event.delta);
  return [...texts.values()];
}

/** The broker's activity of a demo server, and a promise of its first run's end. */
function activityLog() {
  const lines: string[] = [];
  let ended!: (activity: BrokerActivity & { type: 'run-ended' }) => void;
  const runEnded = new Promise<BrokerActivity & { type: 'run-ended' }>((resolve) => (ended = resolve));
  const onActivity = (activity: BrokerActivity) => {
    lines.push(describeActivity(activity));
    if (activity.type === 'run-ended') ended(activity);
  };
  return { lines, runEnded, onActivity };
}

/**
 * A TCP proxy to `port` that cuts the first SSE response passing through it once `frames` frames have
 * gone by: half of the next chunk is forwarded, then both sockets are destroyed (a proxy or a network
 * change cutting a stream). Everything else passes through.
 */
async function startCuttingProxy(port: number, frames: number): Promise<{ url: string; cuts: number; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const proxy = { url: '', cuts: 0, close: () => new Promise<void>((done) => { sockets.forEach((socket) => socket.destroy()); server.close(() => done()); }) };
  const server: Server = createServer((client) => {
    const upstream = connect(port, '127.0.0.1');
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => undefined);
    }
    client.pipe(upstream);
    let seen = '';
    upstream.on('data', (chunk: Buffer) => {
      if (proxy.cuts === 0) {
        seen += chunk.toString('latin1');
        const body = seen.indexOf('text/event-stream');
        if (body >= 0 && seen.slice(body).split('\nid: ').length - 1 >= frames) {
          proxy.cuts++;
          client.write(chunk.subarray(0, chunk.length >> 1));
          client.destroy();
          upstream.destroy();
          return;
        }
      }
      client.write(chunk);
    });
    upstream.on('end', () => client.end());
    upstream.on('close', () => client.destroy());
    client.on('close', () => upstream.destroy());
  });
  await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
  proxy.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  return proxy;
}

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

  it('should stop a run with the Stop button: the stop route cancels it, the agent is unsubscribed and the log ends cancelled', async () => {
    // A slow agent of its own, so that the click surely lands mid-run.
    let unsubscribed!: () => void;
    const agentStopped = new Promise<void>((resolve) => (unsubscribed = resolve));
    const scripted = createScriptedAgent({ pace: 40, toolLatency: 5_000, now: () => NOW });
    const log = activityLog();
    const stops: string[] = [];
    const slow = await startDemoServer({ port: 0, agent: (input, ctx) => scripted(input, ctx).pipe(finalize(() => unsubscribed())), broker: { onActivity: log.onActivity } });
    page.on('request', (request) => void (request.url().endsWith('/stop') && stops.push(request.method())));
    try {
      await page.goto(slow.url);
      await page.fill('#input', 'Lisbon, slowly');
      await page.click('#send');
      await page.waitForSelector('.msg.reasoning');
      await page.click('#stop');
      await page.waitForSelector('#status[data-status="cancelled"]');
      await agentStopped;
      const ended = await log.runEnded;
      expect(ended).toMatchObject({ outcome: 'cancelled' });
      expect(stops).toEqual(['POST']);
      expect(log.lines[log.lines.length - 1]).toMatch(/^broker: run ended +thread-[^/]+\/run-\S+ cancelled · \d+ events in /);
      expect(await page.textContent('.notice.cancelled')).toBe('Stopped: the server cancelled the run, which ended with RUN_FINISHED (outcome cancelled).');
      expect(await page.textContent('#run-outcome')).toBe('cancelled');
      expect(await page.isEnabled('#send')).toBe(true);
      expect(await page.isHidden('#stop')).toBe(true);
      expect(errors).toEqual([]);
    } finally {
      await slow.close();
    }
  });

  it('should finish the answer after a reload mid-run: connect rebuilds the turn and streams the rest, nothing twice', async () => {
    const question = 'Weather and local time in Oslo, please.';
    const expected = await expectedAnswer(question);
    const log = activityLog();
    const slow = await startDemoServer({ port: 0, agent: createScriptedAgent({ pace: 25, toolLatency: 400, now: () => NOW }), broker: { onActivity: log.onActivity } });
    const tab = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const tabErrors: string[] = [];
    tab.on('pageerror', (error) => tabErrors.push(error.message));
    tab.on('console', (message) => void (message.type() === 'error' && tabErrors.push(message.text())));
    const connects: string[] = [];
    tab.on('request', (request) => void (request.url().endsWith('/agent/connect') && connects.push(request.postDataJSON().threadId)));
    try {
      await tab.goto(slow.url);
      const threadId = await tab.textContent('#run-thread');
      await tab.fill('#input', question);
      await tab.click('#send');
      // Mid-run: the first sentence is on its way, the tools have not answered.
      await tab.waitForFunction(() => (document.querySelector('.msg.assistant .text')?.textContent ?? '').length > 10);
      await tab.reload();
      await tab.waitForSelector('#status[data-status="finished"]', { timeout: 20_000 });
      const ended = await log.runEnded;

      expect(connects).toEqual([threadId]);
      expect(await tab.textContent('#run-thread')).toBe(threadId);
      expect(await tab.locator('.msg.user').allTextContents()).toEqual([question]);
      expect(await tab.locator('.msg.assistant .text').allTextContents()).toEqual(expected);
      expect(await tab.locator('.msg.reasoning').count()).toBe(1);
      expect(await tab.locator('.tool-call').evaluateAll((nodes) => nodes.map((node) => node.getAttribute('data-status')))).toEqual(['done', 'done']);
      expect(JSON.parse((await tab.textContent('#state'))!)).toEqual({ lastCity: 'Oslo', lastTimezone: 'Europe/Oslo', lookups: 2 });
      expect(await tab.locator('.notice').count()).toBe(0);
      expect(await tab.textContent('#run-outcome')).toBe('success');
      // Every logged event once, plus the run's input state that connect puts after RUN_STARTED.
      expect(await tab.textContent('#run-events')).toBe(String(ended.events + 1));
      // The reload left the run (a reader went away mid-run), and the run went on to success.
      expect(log.lines.findIndex((line) => line.startsWith('broker: reader left'))).toBeLessThan(log.lines.findIndex((line) => line.startsWith('broker: run ended')));
      expect(ended.outcome).toBe('success');
      expect(tabErrors).toEqual([]);

      // The next turn sends the rebuilt conversation back.
      const bodies: { messages: { role: string }[] }[] = [];
      tab.on('request', (request) => void (request.method() === 'POST' && new URL(request.url()).pathname === '/agent' && bodies.push(request.postDataJSON())));
      await tab.fill('#input', 'Thanks!');
      await tab.click('#send');
      await tab.waitForFunction(() => document.querySelectorAll('.run-summary').length === 2, undefined, { timeout: 20_000 });
      expect(bodies.map((body) => body.messages.map((message) => message.role))).toEqual([['user', 'assistant', 'tool', 'tool', 'assistant', 'user']]);
    } finally {
      await tab.close();
      await slow.close();
    }
  });

  describe('on a phone, 390 px wide', () => {
    const phone = { width: 390, height: 844 };
    /** A fresh tab at phone size, with its errors collected. */
    const openPhone = async (url: string) => {
      const tab = await browser.newPage({ viewport: phone });
      const tabErrors: string[] = [];
      tab.on('pageerror', (error) => tabErrors.push(error.message));
      tab.on('console', (message) => void (message.type() === 'error' && tabErrors.push(message.text())));
      await tab.goto(url);
      return { tab, tabErrors };
    };
    /** A reasoning that never ends, in a run that never ends: only a stop or a cut ends it. */
    const thinkingForever = () => concat(of<AgentEvent>({ type: 'REASONING_MESSAGE_CHUNK', delta: 'Thinking it over' }), NEVER);

    it('should reach the State, Run and Events panel through the header button, and go back to the chat', async () => {
      const { tab, tabErrors } = await openPhone(server.url);
      try {
        const toggle = tab.locator('#panel-toggle');
        expect(await toggle.isVisible()).toBe(true);
        expect(await tab.isVisible('.chat')).toBe(true);
        expect(await tab.isHidden('#side')).toBe(true);
        await tab.fill('#input', 'Weather in Tokyo?');
        await tab.click('#send');
        await tab.waitForSelector('#status[data-status="finished"]');

        await toggle.click();
        expect(await toggle.getAttribute('aria-expanded')).toBe('true');
        expect(await toggle.textContent()).toBe('Chat');
        expect(await tab.isHidden('.chat')).toBe(true);
        for (const id of ['#state', '#run', '#log']) expect(await tab.isVisible(id)).toBe(true);
        expect(JSON.parse((await tab.textContent('#state'))!)).toEqual({ lastCity: 'Tokyo', lastTimezone: 'Asia/Tokyo', lookups: 2 });
        expect(await tab.textContent('#run-outcome')).toBe('success');
        // The event log has room to show events, and the last one (the run's end) is in view.
        const log = (await tab.locator('#log').boundingBox())!;
        expect(log.height).toBeGreaterThan(100);
        expect(await tab.locator('#log li').last().isVisible()).toBe(true);
        expect(await tab.locator('#log li .type').last().textContent()).toBe('RUN_FINISHED');
        // Nothing wider than the screen.
        expect(await tab.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(phone.width);
        await tab.screenshot({ path: '/tmp/demo-page-phone-panel.png' });

        await toggle.click();
        expect(await toggle.getAttribute('aria-expanded')).toBe('false');
        expect(await tab.isVisible('.chat')).toBe(true);
        expect(await tab.isHidden('#side')).toBe(true);
        expect(await tab.locator('.tool-call').count()).toBe(2);
        await tab.screenshot({ path: '/tmp/demo-page-phone-chat.png' });
        expect(tabErrors).toEqual([]);
      } finally {
        await tab.close();
      }
    });

    it('should clear the "reasoning…" label of a run stopped mid-reasoning', async () => {
      const slow = await startDemoServer({ port: 0, agent: thinkingForever });
      const { tab, tabErrors } = await openPhone(slow.url);
      try {
        await tab.fill('#input', 'Think, then stop');
        await tab.click('#send');
        await tab.waitForFunction(() => document.querySelector('.msg.reasoning .text')?.textContent === 'Thinking it over');
        expect(await tab.textContent('.msg.reasoning summary')).toBe('reasoning…');
        await tab.click('#stop');
        await tab.waitForSelector('#status[data-status="cancelled"]');
        expect(await tab.textContent('.msg.reasoning summary')).toBe('reasoning stopped');
        expect(await tab.locator('.msg.reasoning.streaming').count()).toBe(0);
        expect(await tab.textContent('#run-outcome')).toBe('cancelled');
        expect(tabErrors).toEqual([]);
      } finally {
        await tab.close();
        await slow.close();
      }
    });

    it('should clear the "reasoning…" label of a run whose stream broke and could not be resumed', async () => {
      const slow = await startDemoServer({ port: 0, agent: thinkingForever });
      const tab = await browser.newPage({ viewport: phone });
      try {
        // The run's first frames, then the connection ends; the resume is refused (the run is gone).
        const frames = [
          { type: 'RUN_STARTED', threadId: 't', runId: 'r' },
          { type: 'REASONING_START', messageId: 'm1' },
          { type: 'REASONING_MESSAGE_START', messageId: 'm1', role: 'reasoning' },
          { type: 'REASONING_MESSAGE_CONTENT', messageId: 'm1', delta: 'Halfway' },
        ];
        await tab.route('**/agent', (route) => route.fulfill({ status: 200, contentType: 'text/event-stream', body: frames.map((frame, i) => `id: ${i + 1}\ndata: ${JSON.stringify(frame)}\n\n`).join('') }));
        await tab.route('**/events', (route) => route.fulfill({ status: 404, contentType: 'application/json', body: JSON.stringify({ error: 'No such run.' }) }));
        await tab.goto(slow.url);
        await tab.fill('#input', 'Think, then lose the connection');
        await tab.click('#send');
        await tab.waitForSelector('#status[data-status="error"]', { timeout: 10_000 });
        expect(await tab.textContent('.msg.reasoning .text')).toBe('Halfway');
        expect(await tab.textContent('.msg.reasoning summary')).toBe('reasoning cut off');
        expect(await tab.locator('.msg.reasoning.streaming').count()).toBe(0);
      } finally {
        await tab.close();
        await slow.close();
      }
    });
  });

  it('should resume a cut stream with Last-Event-ID, showing "reconnecting…", and show the whole answer once', async () => {
    const question = 'Is it a good evening for a walk in Lisbon?';
    const expected = await expectedAnswer(question);
    const log = activityLog();
    const slow = await startDemoServer({ port: 0, agent: createScriptedAgent({ pace: 15, toolLatency: 200, now: () => NOW }), broker: { onActivity: log.onActivity } });
    const proxy = await startCuttingProxy(slow.port, 20);
    const tab = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const tabErrors: string[] = [];
    tab.on('pageerror', (error) => tabErrors.push(error.message));
    const resumes: { url: string; lastEventId?: string }[] = [];
    tab.on('request', (request) => void (request.url().endsWith('/events') && resumes.push({ url: new URL(request.url()).pathname, lastEventId: request.headers()['last-event-id'] })));
    // Every status the page shows, however briefly.
    await tab.addInitScript(() => {
      const seen: string[] = ((window as unknown as { statuses: string[] }).statuses = []);
      new MutationObserver(() => {
        const text = document.getElementById('status-text')?.textContent ?? '';
        if (seen[seen.length - 1] !== text) seen.push(text);
      }).observe(document, { subtree: true, childList: true, characterData: true });
    });
    try {
      await tab.goto(proxy.url);
      await tab.fill('#input', question);
      await tab.click('#send');
      await tab.waitForSelector('#status[data-status="finished"]', { timeout: 20_000 });
      const ended = await log.runEnded;

      expect(proxy.cuts).toBe(1);
      const runId = await tab.textContent('#run-id');
      expect(resumes).toEqual([{ url: `/agent/threads/${await tab.textContent('#run-thread')}/runs/${runId}/events`, lastEventId: expect.stringMatching(/^\d+$/) }]);
      const statuses = await tab.evaluate(() => (window as unknown as { statuses: string[] }).statuses);
      expect(statuses.slice(statuses.indexOf('reconnecting…'))).toEqual(['reconnecting…', 'streaming', 'finished']);
      expect(await tab.textContent('.notice.reconnect')).toBe(`Reconnected: resumed after event ${resumes[0].lastEventId} (Last-Event-ID).`);
      expect(await tab.locator('.msg.assistant .text').allTextContents()).toEqual(expected);
      expect(await tab.locator('.tool-call').count()).toBe(2);
      expect(await tab.locator('.notice.error').count()).toBe(0);
      // Every event of the run exactly once: none lost in the cut, none repeated by the resume.
      expect(await tab.textContent('#run-events')).toBe(String(ended.events));
      expect(ended.outcome).toBe('success');
      expect(tabErrors).toEqual([]);
    } finally {
      await tab.close();
      await proxy.close();
      await slow.close();
    }
  });
});
