import { HttpAgent } from '@ag-ui/client';
import type { RunAgentInput } from '@ag-ui/core';
import { execFile } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { promisify } from 'node:util';
import { concatMap, from, map, timer } from 'rxjs';
import type { AgentEvent } from '../../../lib/protocol/agentEvent.js';
import { createAguiFetchHandler, createAguiHandler, type AnyAguiAgent } from '../../../lib/transports/createAguiHandler.js';
import { pollUntil } from '../../support/helpers.js';
import { runWithOracle } from '../../support/oracle.js';
import { SCRIPT, scriptMessages } from './brokerHarness.js';
import { eventsOf } from './pipelinedClient.js';

/*
 * Agents that return an iterable or async iterable of events, served over real loopback HTTP: the
 * handler pulls them in slices, so that a synchronous flood never stalls another stream, and a client
 * that goes away stops the pull.
 */

const input = (runId: string): RunAgentInput => ({
  threadId: 'thread-1',
  runId,
  state: { count: 0 },
  messages: [{ id: 'u1', role: 'user', content: 'Weather in Oslo?' }],
  tools: [],
  context: [],
  forwardedProps: {},
});

const expectedMessages = scriptMessages();

/** The official client (the oracle: it verifies every event) running one run against `url`. */
async function runOfficialClient(url: string, runId: string) {
  const agent = new HttpAgent({ url, threadId: 'thread-1', initialMessages: input(runId).messages, initialState: { count: 0 } });
  await agent.runAgent({ runId });
  return agent;
}

/**
 * Reads one SSE run in a child process (the 1M-event stream is read flat out, without taking this
 * process's event loop): prints how many frames came, how many delta characters they carried, and the last one.
 */
const READER = `
const http = require('node:http');
const [url, body] = process.argv.slice(1);
const req = http.request(url, { method: 'POST', headers: { 'Content-Type': 'application/json', Accept: 'text/event-stream' } }, (res) => {
  let frames = 0;
  let deltaChars = 0;
  let carry = '';
  let last = '';
  res.setEncoding('utf8');
  res.on('data', (chunk) => {
    const parts = (carry + chunk).split('\\n\\n');
    carry = parts.pop();
    frames += parts.length;
    for (const part of parts) if (part.includes('"delta"')) deltaChars += JSON.parse(part.slice(6)).delta.length;
    if (parts.length > 0) last = parts[parts.length - 1];
  });
  res.on('end', () => process.stdout.write(JSON.stringify({ status: res.statusCode, frames, deltaChars, last })));
});
req.end(body);
`;

describe('createAguiHandler with an iterable agent', () => {
  let server: Server;
  let url: string;
  const listen = async (agent: AnyAguiAgent, options = {}) => {
    server = createServer(createAguiHandler(agent, options));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/agent`;
  };
  afterEach(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('should keep a paced neighbour streaming while it pulls a 1M-event synchronous iterable', async () => {
    const TOTAL = 1_000_000;
    let pulled = 0;
    // The big run's progress each time the neighbour emitted: it moved on between them.
    const pulledAtNeighbourEvents: number[] = [];
    const agent: AnyAguiAgent = (runInput) => {
      if (runInput.runId === 'big') {
        return (function* flood(): Generator<AgentEvent> {
          for (let i = 0; i < TOTAL; i++) {
            pulled++;
            yield { type: 'TEXT_MESSAGE_CHUNK', messageId: 'big', delta: 'x' };
          }
        })();
      }
      // The neighbour: the script, one event per millisecond timer.
      return from(SCRIPT).pipe(
        concatMap((event) => timer(1).pipe(map(() => event))),
        map((event) => {
          pulledAtNeighbourEvents.push(pulled);
          return event;
        }),
      );
    };
    await listen(agent, { heartbeatMs: 0 });
    const reader = promisify(execFile)(process.execPath, ['-e', READER, url, JSON.stringify(input('big'))], { maxBuffer: 1 << 20, timeout: 60_000 });
    await pollUntil(
      () => pulled,
      (count) => count > 0,
      { what: 'the big run to start' },
    );

    const neighbour = await runOfficialClient(url, 'run-1');
    const pulledWhenNeighbourDone = pulled;
    expect(neighbour.messages).toEqual(expectedMessages);
    expect(neighbour.state).toEqual({ count: 1, city: 'Oslo' });
    // Every neighbour event came while the flood was under way, and the flood moved between them.
    expect(pulledAtNeighbourEvents).toHaveLength(SCRIPT.length);
    expect(pulledAtNeighbourEvents[0]).toBeGreaterThan(0);
    expect(pulledWhenNeighbourDone).toBeLessThan(TOTAL);

    const { stdout } = await reader;
    const big = JSON.parse(stdout) as { status: number; frames: number; deltaChars: number; last: string };
    expect(big.status).toBe(200);
    // Every delta came; since issue 17 the deltas that waited for the socket together share frames (coalescing).
    expect(big.deltaChars).toBe(TOTAL);
    expect(big.frames).toBeLessThanOrEqual(TOTAL + 4);
    expect(JSON.parse(big.last.replace(/^data: /, ''))).toMatchObject({ type: 'RUN_FINISHED', runId: 'big' });
  }, 60_000);

  it('should stop pulling, call return() and abort the signal when the client goes away mid-iterable', async () => {
    const TOTAL = 1_000_000;
    const seen = { pulled: 0, returned: false, signal: undefined as AbortSignal | undefined };
    await listen(
      (_input, { signal }) => {
        seen.signal = signal;
        return (function* flood(): Generator<AgentEvent> {
          try {
            for (let i = 0; i < TOTAL; i++) {
              seen.pulled++;
              yield { type: 'TEXT_MESSAGE_CHUNK', messageId: 'big', delta: 'x' };
            }
          } finally {
            seen.returned = true;
          }
        })();
      },
      { heartbeatMs: 0 },
    );
    const controller = new AbortController();
    const response = await fetch(url, { method: 'POST', body: JSON.stringify(input('big')), headers: { 'Content-Type': 'application/json' }, signal: controller.signal });
    const reader = response.body!.getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toContain('RUN_STARTED');
    controller.abort();
    await pollUntil(
      () => seen.returned,
      (returned) => returned,
      { what: 'the iterator\'s return()' },
    );
    const pulled = seen.pulled;
    for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
    expect(seen.pulled).toBe(pulled);
    expect(pulled).toBeLessThan(TOTAL);
    expect(seen.signal?.aborted).toBe(true);
  });

  it('should serve an async generator agent to the official client', async () => {
    await listen(async function* paced(): AsyncGenerator<AgentEvent> {
      for (const event of SCRIPT) {
        // Each event a macrotask apart, as a model's tokens arrive.
        await new Promise((resolve) => setImmediate(resolve));
        yield event;
      }
    });
    const agent = await runOfficialClient(url, 'run-1');
    expect(agent.messages).toEqual(expectedMessages);
    expect(agent.state).toEqual({ count: 1, city: 'Oslo' });
  });

  it('should serve an array and a synchronous generator agent to the official client', async () => {
    await listen((runInput) => (runInput.runId === 'run-1' ? SCRIPT : SCRIPT.values()));
    for (const runId of ['run-1', 'run-2']) {
      const agent = await runOfficialClient(url, runId);
      expect(agent.messages).toEqual(expectedMessages);
      expect(agent.state).toEqual({ count: 1, city: 'Oslo' });
    }
  });

  it('should end the run with RUN_ERROR INVALID_AGENT_RESULT when the agent returns no events', async () => {
    await listen(() => 'It is -3°C.' as unknown as AgentEvent[]);
    const response = await fetch(url, { method: 'POST', body: JSON.stringify(input('run-1')), headers: { 'Content-Type': 'application/json' } });
    const events = (await response.text())
      .split('\n\n')
      .filter(Boolean)
      .map((frame) => JSON.parse(frame.replace(/^data: /, '')) as { type: string; code?: string; message?: string });
    expect(events.map((event) => event.type)).toEqual(['RUN_STARTED', 'RUN_ERROR']);
    expect(events[1]).toMatchObject({ code: 'INVALID_AGENT_RESULT' });
    expect(events[1].message).toContain('The agent returned "It is -3°C."');
  });
});

describe('createAguiFetchHandler with an iterable agent', () => {
  it('should stream an async generator agent as SSE the official client accepts', async () => {
    const handle = createAguiFetchHandler(async function* paced(): AsyncGenerator<AgentEvent> {
      for (const event of SCRIPT) {
        await Promise.resolve();
        yield event;
      }
    });
    const response = await handle(new Request('http://127.0.0.1/agent', { method: 'POST', body: JSON.stringify(input('run-1')), headers: { 'Content-Type': 'application/json' } }));
    const run = await runWithOracle(from(await eventsOf(await response.text())), { initialMessages: input('run-1').messages, initialState: { count: 0 } });
    expect(run.messages).toEqual(expectedMessages);
    expect(run.state).toEqual({ count: 1, city: 'Oslo' });
  });

  it.each([
    ['a generator', false],
    ['an async generator', true],
  ])('should pull %s no faster than the response is read: 30 MB past an 8 MB maxBufferedBytes reach a slow reader whole', async (_name, isAsync) => {
    const delta = 'x'.repeat(100_000);
    const count = 300;
    let pulled = 0;
    function* events(): Generator<AgentEvent> {
      for (let i = 0; i < count; i++) {
        pulled++;
        yield { type: 'TEXT_MESSAGE_CHUNK', messageId: 'm1', delta };
      }
    }
    async function* asyncEvents(): AsyncGenerator<AgentEvent> {
      yield* events();
    }
    const handle = createAguiFetchHandler(() => (isAsync ? asyncEvents() : events()), { maxBufferedBytes: 8 * 1024 * 1024, heartbeatMs: 0 });
    const response = await handle(new Request('http://127.0.0.1/agent', { method: 'POST', body: JSON.stringify(input('run-1')), headers: { 'Content-Type': 'application/json' } }));
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    let bytes = 0;
    let tail = '';
    let mostAhead = 0;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      bytes += value.byteLength;
      // How far the pull ran ahead of what was read, in events.
      mostAhead = Math.max(mostAhead, pulled - Math.floor(bytes / delta.length));
      tail = (tail + decoder.decode(value, { stream: true })).slice(-500);
      // A reader slower than the producer: a turn of the event loop per chunk.
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(pulled).toBe(count);
    expect(bytes).toBeGreaterThan(count * delta.length);
    expect(tail).toContain('"type":"RUN_FINISHED"');
    expect(tail).not.toContain('SEND_BUFFER_FULL');
    // Held back by the reader: never more than the 8 MB bound ahead (80 events), or the run would have been cut.
    expect(mostAhead).toBeLessThan(80);
  });
});
