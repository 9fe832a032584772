import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Debian's Redis server, which the Redis specs start themselves (never the machine's shared Redis on 6379). */
export const redisServerPath = '/usr/bin/redis-server';

/** A Redis server of one spec file. */
export interface RedisServer {
  /** `redis://127.0.0.1:<port>`. */
  readonly url: string;
  readonly port: number;
  /** Kills the server (its data is lost) and waits until it exited. */
  stop(): Promise<void>;
  /** Kills the server (if it runs) and starts an empty one on the same port, ready when this resolves. */
  restart(): Promise<void>;
  /** Freezes the server (SIGSTOP): its connections stay open and nothing is answered, as a Redis that hangs. */
  pause(): void;
  /** Thaws a paused server (SIGCONT): it answers what it was sent meanwhile. */
  resume(): void;
}

/** A free TCP port on 127.0.0.1, as the system hands one out. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address !== null ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

/** Starts redis-server on `port` and resolves once it accepts connections (it says so on stdout). */
function launch(port: number, dir: string): Promise<ChildProcess> {
  const child = spawn(redisServerPath, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return new Promise((resolve, reject) => {
    let output = '';
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('Ready to accept connections')) {
        child.stdout!.off('data', onData);
        // Keep draining, so that a chatty server never blocks on a full pipe.
        child.stdout!.resume();
        child.off('exit', onExit);
        resolve(child);
      }
    };
    const onExit = (code: number | null) => reject(new Error(`redis-server exited (${code}) before it was ready on port ${port}:\n${output}`));
    child.stdout!.on('data', onData);
    child.stderr!.on('data', (chunk: Buffer) => void (output += chunk.toString()));
    child.once('exit', onExit);
    child.once('error', reject);
  });
}

/** Kills `child` and waits until it is gone. */
function kill(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    // SIGKILL ends a paused process too.
    child.kill('SIGKILL');
  });
}

/**
 * Starts Debian's `redis-server` on a free port of 127.0.0.1, without persistence (`--save ""
 * --appendonly no`, in a temporary `--dir`), and resolves once it answers.
 * @return Its URL and port, `stop()` and `restart()` (same port, data lost: for chaos specs).
 */
export async function startRedisServer(): Promise<RedisServer> {
  const dir = mkdtempSync(join(tmpdir(), 'agui-rx-redis-'));
  const port = await freePort();
  let child = await launch(port, dir);
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    async stop() {
      await kill(child);
      rmSync(dir, { recursive: true, force: true });
    },
    async restart() {
      await kill(child);
      // stop() removed the directory: restart also brings a stopped server back.
      mkdirSync(dir, { recursive: true });
      child = await launch(port, dir);
    },
    pause() {
      child.kill('SIGSTOP');
    },
    resume() {
      child.kill('SIGCONT');
    },
  };
}

/**
 * Whether the Redis suites can run here. Without `redis-server` they are skipped, with one notice
 * per `jest` run naming the install command; under CI (`CI` set) a missing server fails instead,
 * since CI always runs them (`.ci/run` installs it).
 */
export function redisAvailable(): boolean {
  if (existsSync(redisServerPath)) return true;
  const help = `${redisServerPath} is missing, so the Redis run store specs cannot start Redis: install it with \`apt-get install redis-server\`.`;
  if (process.env.CI) throw new Error(`${help} CI runs the Redis suites, so this fails.`);
  // One notice per jest run: the first spec file of the run to get here creates the marker.
  try {
    closeSync(openSync(join(tmpdir(), `agui-rx-redis-notice-${process.ppid}`), 'wx'));
    console.warn(`Skipping the Redis suites: ${help}`);
  } catch {
    // Another spec file of this run gave the notice.
  }
  return false;
}

/** `describe` for a Redis suite: runs it when redis-server is installed, skips it (one notice) when not, fails under CI. */
export function describeWithRedis(name: string, suite: () => void): void {
  if (process.env.CI && !existsSync(redisServerPath)) {
    describe(name, () => {
      it('should find redis-server (CI always runs the Redis suites)', () => {
        redisAvailable();
      });
    });
    return;
  }
  (redisAvailable() ? describe : describe.skip)(name, suite);
}
