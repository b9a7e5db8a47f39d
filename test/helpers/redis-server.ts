import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';

// The shared Redis and unique key prefixes are in ./redis (TEST_REDIS_URL, uniquePrefix).

export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export interface OwnRedis {
  port: number;
  url: string;
  child: ChildProcess;
  /** SIGKILL: the server vanishes without a goodbye, like a crashed host. */
  kill(): Promise<void>;
}

/**
 * A throw-away redis-server child (no persistence) for tests that stop Redis mid-test; the shared
 * Redis on 6379 is never touched.
 */
export async function startOwnRedis(options: { password?: string } = {}): Promise<OwnRedis> {
  const port = await freePort();
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'];
  if (options.password) args.push('--requirepass', options.password);
  const child = await spawnRedisServer(args);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const auth = options.password ? `:${options.password}@` : '';
  return {
    port,
    url: `redis://${auth}127.0.0.1:${port}`,
    child,
    kill: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}

/** Starts `redis-server` with `args` and resolves once it accepts connections (10 s at most). */
export async function spawnRedisServer(args: string[]): Promise<ChildProcess> {
  const child = spawn('redis-server', args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`redis-server did not start:\n${output}`)), 10_000);
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8');
      if (output.includes('Ready to accept connections')) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`redis-server exited (${code}):\n${output}`));
    });
  });
  return child;
}
