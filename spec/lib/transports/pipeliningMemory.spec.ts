import type { RunAgentInput } from '@ag-ui/core';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { pollUntil } from '../../support/helpers.js';
import { pipeline, rawPost } from './pipelinedClient.js';

/*
 * Item 3 of issue 14, where memory is the point: 100 POSTs pipelined on one connection against a
 * server (a child process with --expose-gc, see pipeliningServer.cjs) whose runs each send a 1 MB
 * burst and then wait. Started at once they would hold about 100 MB; served in turn, one run holds
 * its burst, and once the client leaves (no heartbeat to find out) the heap comes back.
 */

interface Stats {
  heapUsed: number;
  starts: number;
  active: number;
}

const MB = 1024 * 1024;
const REQUESTS = 100;

const input = (runId: string): RunAgentInput => ({ threadId: 'thread-1', runId, state: {}, messages: [{ id: 'u1', role: 'user', content: 'Hi' }], tools: [], context: [], forwardedProps: {} });

describe('createAguiHandler and HTTP pipelining: memory (server in a child process)', () => {
  let child: ChildProcess;
  afterAll(() => {
    child?.kill();
  });

  it('should hold one run\'s memory, not one per pipelined request, and free it when the client leaves (heartbeatMs: 0)', async () => {
    const built = join(__dirname, '../../../dist/cjs/lib/index.js');
    if (!existsSync(built)) throw new Error(`${built} is missing: run 'npm run build' first ('npm test' does).`);
    child = spawn(process.execPath, ['--expose-gc', join(__dirname, 'pipeliningServer.cjs')], { stdio: ['ignore', 'pipe', 'inherit'] });
    const { port, statsPort } = await new Promise<{ port: number; statsPort: number }>((resolve, reject) => {
      child.once('exit', (code) => reject(new Error(`The server exited (${code}) before it listened.`)));
      createInterface({ input: child.stdout! }).once('line', (line) => resolve(JSON.parse(line) as { port: number; statsPort: number }));
    });
    const stats = async () => (await (await fetch(`http://127.0.0.1:${statsPort}/stats`)).json()) as Stats;
    const before = await stats();

    const client = pipeline(
      port,
      Array.from({ length: REQUESTS }, (_, i) => rawPost(input(`run-${i + 1}`))),
    );
    await pollUntil(
      () => client.responses[0]?.body.includes('burst over') ?? false,
      (done) => done,
      { what: 'the first run\'s burst' },
    );
    const waiting = await stats();
    expect(waiting.starts).toBe(1);
    expect(waiting.heapUsed - before.heapUsed).toBeLessThan(16 * MB);

    client.socket.destroy();
    const after = await pollUntil(stats, (current) => current.active === 0, { what: 'the running agent to be unsubscribed' });
    expect(after.starts).toBe(1);
    expect(after.heapUsed - before.heapUsed).toBeLessThan(4 * MB);
  });
});
