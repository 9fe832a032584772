// The bench's own Redis: Debian's redis-server on a free port of 127.0.0.1, without persistence,
// never the machine's shared one on 6379. And a loopback TCP proxy in front of it that counts
// round trips, plus `INFO commandstats` read over a raw socket (no client library needed).
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';

export const redisServerPath = '/usr/bin/redis-server';

/** Whether redis-server is installed (the Redis rows are skipped with a note when it is not). */
export const hasRedisServer = () => existsSync(redisServerPath);

/** A free TCP port on 127.0.0.1. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** Starts redis-server (`--save "" --appendonly no`, a temporary --dir); resolves once it is ready. */
export async function startRedis() {
  const dir = mkdtempSync(join(tmpdir(), 'agui-rx-bench-redis-'));
  const port = await freePort();
  const child = spawn(redisServerPath, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir], { stdio: ['ignore', 'pipe', 'pipe'] });
  await new Promise((resolve, reject) => {
    let output = '';
    const onData = (chunk) => {
      output += chunk;
      if (output.includes('Ready to accept connections')) {
        child.stdout.off('data', onData);
        child.stdout.resume();
        child.off('exit', onExit);
        resolve();
      }
    };
    const onExit = (code) => reject(new Error(`redis-server exited (${code}) before it was ready on port ${port}:\n${output}`));
    child.stdout.on('data', onData);
    child.stderr.on('data', (chunk) => void (output += chunk));
    child.once('exit', onExit);
    child.once('error', reject);
  });
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    stop: () =>
      new Promise((resolve) => {
        const done = () => {
          rmSync(dir, { recursive: true, force: true });
          resolve();
        };
        if (child.exitCode !== null || child.signalCode !== null) return done();
        child.once('exit', done);
        child.kill('SIGKILL');
      }),
  };
}

/**
 * A TCP proxy on a free port in front of `port` that counts round trips: per connection, a burst
 * of bytes from the client that starts after the server last answered (or at the start) is one
 * round trip, however many commands it pipelines and however the kernel splits it.
 */
export async function startCountingProxy(port) {
  const sockets = new Set();
  let roundTrips = 0;
  const server = net.createServer((client) => {
    const upstream = net.connect(port, '127.0.0.1');
    sockets.add(client).add(upstream);
    let answered = true;
    client.on('data', (chunk) => {
      if (answered) roundTrips++;
      answered = false;
      upstream.write(chunk);
    });
    upstream.on('data', (chunk) => {
      answered = true;
      client.write(chunk);
    });
    const close = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('close', close).on('error', close);
    upstream.on('close', close).on('error', close);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `redis://127.0.0.1:${server.address().port}`,
    roundTrips: () => roundTrips,
    close: () =>
      new Promise((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** `INFO commandstats` of the server on `port`, as `{ command: calls }`. */
export function commandStats(port) {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.write('*2\r\n$4\r\nINFO\r\n$12\r\ncommandstats\r\n'));
    let text = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk) => {
      text += chunk;
      const header = /^\$(\d+)\r\n/.exec(text);
      if (header === null || Buffer.byteLength(text) < header[0].length + Number(header[1]) + 2) return;
      socket.end();
      const stats = {};
      for (const match of text.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) stats[match[1]] = Number(match[2]);
      resolve(stats);
    });
    socket.on('error', reject);
  });
}

/** The commands run between two `commandStats` (its own INFO calls left out), largest first. */
export function statsDelta(before, after) {
  const delta = {};
  for (const [command, calls] of Object.entries(after)) {
    const n = calls - (before[command] ?? 0);
    if (n > 0 && command !== 'info') delta[command] = n;
  }
  return Object.fromEntries(Object.entries(delta).sort((a, b) => b[1] - a[1]));
}

/**
 * The floor of any Redis store's latency on this machine: `count` PINGs over one raw connection,
 * one every `everyMs` ms (each after the previous answer), timed from write to answer. A hop to
 * another process: on a loaded machine its tail is the scheduler's, not the store's.
 */
export function pingLatencies(port, count, everyMs) {
  return new Promise((resolve, reject) => {
    const latencies = [];
    let sentAt = 0;
    const socket = net.connect(port, '127.0.0.1', () => {
      socket.setNoDelay(true);
      ping();
    });
    const ping = () => {
      sentAt = performance.now();
      socket.write('PING\r\n');
    };
    let text = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk) => {
      const now = performance.now();
      text += chunk;
      if (!text.endsWith('\r\n')) return;
      text = '';
      latencies.push(now - sentAt);
      if (latencies.length === count) {
        socket.end();
        resolve(latencies);
      } else setTimeout(ping, everyMs);
    });
    socket.on('error', reject);
  });
}
