import type { RunAgentInput } from '@ag-ui/core';
import type { AguiAgent } from '../../lib/transports/createAguiHandler.js';
import { startDemoServer } from '../../lib/demo/server.js';

/** One request a fake provider received: where to, how, and its parsed JSON body. */
export interface FakeCall<Body> {
  url: string;
  init: RequestInit;
  body: Body;
}

/**
 * A fake `fetch` playing a streaming provider: each request's JSON body is recorded and answered
 * with the SSE reads `readsFor` gives for it. With `hang`, the answer stops after `hangAfter`
 * reads until the client gives up; `abortSeen` resolves once a request's signal aborts.
 */
export function fakeProvider<Body>(readsFor: (body: Body) => Uint8Array[], options: { hang?: boolean; hangAfter: number }) {
  const calls: FakeCall<Body>[] = [];
  let aborted!: () => void;
  const abortSeen = new Promise<void>((resolve) => (aborted = resolve));
  const fetch = (async (url: string, init: RequestInit) => {
    const body = JSON.parse(String(init.body)) as Body;
    calls.push({ url, init, body });
    init.signal?.addEventListener('abort', () => aborted());
    const reads = readsFor(body);
    let next = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        // A hanging server sends its first reads, then nothing until the client gives up.
        if (options.hang && next >= options.hangAfter) return new Promise<void>(() => undefined);
        if (next < reads.length) controller.enqueue(reads[next++]);
        else controller.close();
      },
    });
    return new Response(stream, { status: 200, headers: { 'Content-Type': 'text/event-stream' } });
  }) as unknown as typeof globalThis.fetch;
  return { fetch, calls, abortSeen };
}

/**
 * Serves `agent` with the demo server, posts `input` as a browser would, reads the first frame,
 * then goes away and waits for `abortSeen` (the provider request cancelled) before the server
 * closes; returns the first frame's text. The demo's run broker lets a run go on without readers
 * for `detachGraceMs` (30 s by default): here it is `graceMs` (50 ms), after which the run is cancelled.
 */
export async function leaveDemoServerMidRun(agent: AguiAgent, input: RunAgentInput, abortSeen: Promise<void>, graceMs = 50): Promise<string> {
  const server = await startDemoServer({ port: 0, agent, broker: { detachGraceMs: graceMs } });
  try {
    const browser = new AbortController();
    const response = await globalThis.fetch(`${server.url}agent`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'text/event-stream' },
      body: JSON.stringify(input),
      signal: browser.signal,
    });
    const { value } = await response.body!.getReader().read();
    browser.abort();
    await abortSeen;
    return new TextDecoder().decode(value);
  } finally {
    await server.close();
  }
}
