import type { Event, RunAgentInput } from '@ag-ui/core';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { NEVER, Subject, concat, map, of } from 'rxjs';
import { toAgui } from '../../../operators/toAgui.js';
import type { AgentEvent } from '../../../lib/protocol/agentEvent.js';
import { createRunBroker } from '../../../lib/broker/createRunBroker.js';
import type { RunBrokerApi } from '../../../lib/transports/brokerRoutes.js';
import { createAguiFetchHandler, createAguiHandler, type AguiAgent, type AguiHandlerOptions } from '../../../lib/transports/createAguiHandler.js';
import { isCollected } from '../../support/gc.js';

/*
 * An open run holds none of the RunAgentInput once RUN_STARTED has echoed it, unless an `onError`
 * of the user's is to be given it in a failure report: a client posts its whole history with every
 * run, and a server of many open streams would otherwise keep one copy per stream (about 13 KB more
 * per open stream for 20 short messages, in the bench's server). Checked with WeakRefs and full GCs.
 */

/** A RunAgentInput with a history of `n` messages, made afresh (the caller keeps no reference to it). */
const historyInput = (n = 20): RunAgentInput => ({
  threadId: 'thread-1',
  runId: 'run-1',
  state: { count: 0 },
  messages: Array.from({ length: n }, (_, i) => ({ id: `h${i}`, role: i % 2 === 0 ? ('user' as const) : ('assistant' as const), content: 'lorem ipsum '.repeat(40) })),
  tools: [],
  context: [],
  forwardedProps: {},
});

const token: AgentEvent = { type: 'TEXT_MESSAGE_CHUNK', messageId: 'm1', delta: 'Hi' };

/** An agent that streams one token and stays open (or fails when `fail` emits), keeping WeakRefs to its input and history. */
function openAgent(refs: WeakRef<object>[], fail = new Subject<void>()): AguiAgent {
  return (input) => {
    refs.push(new WeakRef(input), new WeakRef(input.messages));
    return concat(
      of(token),
      fail.pipe(
        map((): AgentEvent => {
          throw new Error('The model went away.');
        }),
      ),
      NEVER,
    );
  };
}

async function listen(handler: Parameters<typeof createServer>[1]): Promise<{ server: Server; url: string }> {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/agent` };
}

/** Posts a fresh history input and reads until `until` (the token's frame): the run is open, past RUN_STARTED. */
async function openStream(url: string, signal: AbortSignal, until = 'TEXT_MESSAGE_CONTENT'): Promise<string> {
  const response = await fetch(url, { method: 'POST', headers: { 'Content-Type': 'application/json', Accept: 'text/event-stream' }, body: JSON.stringify(historyInput()), signal });
  expect(response.status).toBe(200);
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  while (!text.includes(until)) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`The stream ended before its token: ${text}`);
    text += decoder.decode(value, { stream: true });
  }
  return text;
}

describe('an open run and its input', () => {
  // The server of each spec, and its streams, closed after it.
  let server: Server | undefined;
  let controllers: AbortController[] = [];
  const signal = () => controllers[controllers.push(new AbortController()) - 1].signal;
  afterEach(async () => {
    for (const controller of controllers) controller.abort();
    controllers = [];
    const closing = server;
    server = undefined;
    if (closing === undefined) return;
    closing.closeAllConnections();
    await new Promise((resolve) => closing.close(resolve));
  });

  describe('createAguiHandler (node:http)', () => {
    async function serveOpenRun(options: AguiHandlerOptions, fail?: Subject<void>): Promise<WeakRef<object>[]> {
      const refs: WeakRef<object>[] = [];
      let url: string;
      ({ server, url } = await listen(createAguiHandler(openAgent(refs, fail), options)));
      const text = await openStream(url, signal());
      // The echo went out with the history: dropping the input afterwards loses nothing on the wire.
      expect(text).toContain('"input":{"threadId":"thread-1"');
      expect(text).toContain('"id":"h19"');
      expect(refs).toHaveLength(2);
      return refs;
    }

    it('should hold neither the input nor its history once RUN_STARTED is out, without an onError of the user\'s', async () => {
      const refs = await serveOpenRun({ onDiagnostic: () => undefined });
      expect(await Promise.all(refs.map(isCollected))).toEqual([true, true]);
    });

    it('should keep the input for an onError of the user\'s, and give it in the failure report', async () => {
      const fail = new Subject<void>();
      const reports: { input?: RunAgentInput; runId?: string }[] = [];
      let reported!: () => void;
      const firstReport = new Promise<void>((resolve) => (reported = resolve));
      const refs = await serveOpenRun({ onDiagnostic: () => undefined, onError: (_error, report) => (reports.push(report), reported()) }, fail);
      // The control: the same check sees an input that is still held.
      expect(await Promise.all(refs.map(isCollected))).toEqual([false, false]);
      fail.next();
      await firstReport;
      expect(reports).toHaveLength(1);
      expect(reports[0]).toMatchObject({ runId: 'run-1', input: { threadId: 'thread-1', runId: 'run-1' } });
      expect(reports[0].input!.messages).toHaveLength(20);
    });
  });

  describe('createAguiHandler with a run broker', () => {
    /** A memory-store broker whose connect and run keep WeakRefs to the input each request posted. */
    function watchedBroker(refs: WeakRef<object>[]): RunBrokerApi {
      const broker = createRunBroker({ authorize: () => true });
      return {
        run: (input, start, access, after) => (refs.push(new WeakRef(input)), broker.run(input, start, access, after)),
        runWithCancel: (input, start, access, after) => (refs.push(new WeakRef(input)), broker.runWithCancel(input, start, access, after)),
        events: (threadId, runId, after, access) => broker.events(threadId, runId, after, access),
        connect: (input, access) => (refs.push(new WeakRef(input)), broker.connect(input, access)),
        stop: (threadId, runId, access) => broker.stop(threadId, runId, access),
      };
    }

    it("should hold no input of a POST that attaches to the running run, nor of a POST /connect, without an onError of the user's", async () => {
      const refs: WeakRef<object>[] = [];
      let url: string;
      ({ server, url } = await listen(createAguiHandler(openAgent([]), { broker: watchedBroker(refs), onDiagnostic: () => undefined, basePath: '/agent' })));
      // The run's first POST starts it: the broker's store keeps that input for connect, by design.
      await openStream(url, signal());
      // The same run posted again attaches to it; a connect replays the thread: each with its own copy of the history.
      await openStream(url, signal());
      await openStream(`${url}/connect`, signal());
      expect(refs).toHaveLength(3);
      expect(await Promise.all(refs.slice(1).map(isCollected))).toEqual([true, true]);
      // The control: the starting POST's input, kept by the store, is still held.
      expect(await isCollected(refs[0])).toBe(false);
    });
  });

  describe('createAguiFetchHandler (Web Request/Response)', () => {
    it('should hold neither the input nor its history once RUN_STARTED is out, without an onError of the user\'s', async () => {
      const refs: WeakRef<object>[] = [];
      const handle = createAguiFetchHandler(openAgent(refs), { onDiagnostic: () => undefined });
      let url: string;
      // The Web handler on node:http: a Request from the body, the Response's stream piped back.
      ({ server, url } = await listen(async (req, res) => {
        const chunks: Buffer[] = [];
        for await (const chunk of req) chunks.push(chunk as Buffer);
        const response = await handle(new Request(`http://127.0.0.1${req.url}`, { method: 'POST', headers: req.headers as Record<string, string>, body: Buffer.concat(chunks) }));
        res.writeHead(response.status, Object.fromEntries(response.headers));
        const reader = response.body!.getReader();
        res.on('close', () => void reader.cancel().catch(() => undefined));
        for (let read = await reader.read(); !read.done; read = await reader.read()) res.write(read.value);
        res.end();
      }));
      const text = await openStream(url, signal());
      expect(text).toContain('"input":{"threadId":"thread-1"');
      expect(refs).toHaveLength(2);
      expect(await Promise.all(refs.map(isCollected))).toEqual([true, true]);
    });
  });

  describe('toAgui', () => {
    /** A run of toAgui left open after its first token, its input made and dropped in here; only the types it sent are kept. */
    function openRun(onError?: (error: unknown, report: { input?: RunAgentInput }) => void): { refs: WeakRef<object>[]; types: string[]; source: Subject<AgentEvent> } {
      const input = historyInput();
      const refs = [new WeakRef(input), new WeakRef(input.messages)];
      const source = new Subject<AgentEvent>();
      const types: string[] = [];
      source.pipe(toAgui({ threadId: input.threadId, runId: input.runId, input, onError, onDiagnostic: () => undefined })).subscribe({ next: (event: Event) => void types.push(event.type), error: () => undefined });
      source.next(token);
      return { refs, types, source };
    }

    it('should hold neither the input nor its history once RUN_STARTED is out, without onError', async () => {
      const { refs, types, source } = openRun();
      expect(types).toEqual(['RUN_STARTED', 'TEXT_MESSAGE_START', 'TEXT_MESSAGE_CONTENT']);
      expect(await Promise.all(refs.map(isCollected))).toEqual([true, true]);
      // The run was open (its source held) while the GCs ran: it still ends well.
      source.complete();
      expect(types.slice(3)).toEqual(['TEXT_MESSAGE_END', 'RUN_FINISHED']);
    });

    it('should keep the input for its onError, which is given it when the run fails', async () => {
      const reports: { input?: RunAgentInput }[] = [];
      const { refs, source, types } = openRun((_error, report) => void reports.push(report));
      expect(await Promise.all(refs.map(isCollected))).toEqual([false, false]);
      source.error(new Error('The model went away.'));
      expect(types.at(-1)).toBe('RUN_ERROR');
      expect(reports).toHaveLength(1);
      expect(reports[0].input!.messages).toHaveLength(20);
    });
  });
});
