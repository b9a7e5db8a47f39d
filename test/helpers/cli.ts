import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import path from 'node:path';
import { GENEROUS_RATE_LIMITS } from './auth-service';
import { testEnv } from './env';
import { REPO_ROOT, readyUrl, spawnService, type ServiceProcess } from './process';
import { makeTempDir } from './temp-dir';

export interface CliRun {
  code: number | string;
  stdout: string;
  stderr: string;
}

/** Runs the built CLI (`node dist/src/compose/cli.js …`) as a real process; `input` is piped to stdin. */
export function runCli(args: readonly string[], env: Record<string, string>, input = ''): Promise<CliRun> {
  const child = spawn(process.execPath, [path.join(REPO_ROOT, 'dist/src/compose/cli.js'), ...args], {
    cwd: REPO_ROOT,
    // Only what is given: no HOME credentials, no CI variable turning colours on.
    env: { PATH: process.env.PATH ?? '', NO_COLOR: '1', ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  child.stdin.end(input);
  return new Promise((resolve) => child.on('close', (code, signal) => resolve({ code: code ?? signal ?? -1, stdout, stderr })));
}

/** A CLI process that keeps running (`logs`): its output so far, a way to wait for some, its exit. */
export interface RunningCli {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** Resolves once stdout or stderr contains `text`. */
  waitFor(text: string, timeoutMs?: number): Promise<void>;
  exited: Promise<number | string>;
}

/** Starts the built CLI with pipes (not a terminal) and leaves it running. */
export function spawnCli(args: readonly string[], env: Record<string, string>): RunningCli {
  const child = spawn(process.execPath, [path.join(REPO_ROOT, 'dist/src/compose/cli.js'), ...args], {
    cwd: REPO_ROOT,
    env: { PATH: process.env.PATH ?? '', NO_COLOR: '1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  const wakers = new Set<() => void>();
  const onOutput = () => {
    for (const wake of [...wakers]) wake();
  };
  child.stdout!.on('data', (chunk: Buffer) => {
    stdout += chunk.toString('utf8');
    onOutput();
  });
  child.stderr!.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
    onOutput();
  });
  const exited = new Promise<number | string>((resolve) => child.on('close', (code, signal) => resolve(code ?? signal ?? -1)));
  return {
    child,
    stdout: () => stdout,
    stderr: () => stderr,
    exited,
    waitFor: (text, timeoutMs = 15_000) =>
      new Promise((resolve, reject) => {
        const wake = () => {
          if (!stdout.includes(text) && !stderr.includes(text)) return;
          wakers.delete(wake);
          clearTimeout(timer);
          resolve();
        };
        const timer = setTimeout(() => {
          wakers.delete(wake);
          reject(new Error(`timed out waiting for "${text}"; stdout:\n${stdout}\nstderr:\n${stderr}`));
        }, timeoutMs);
        wakers.add(wake);
        wake();
      }),
  };
}

/** A loopback port nothing listens on (bound, then released). */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export interface HubProcess {
  /** http://127.0.0.1:<port> */
  url: string;
  /** http://127.0.0.1:<port>/api/v1 */
  api: string;
  /** The hub's data directory (SQLite file, `workspace/` of write_file). */
  dataDir: string;
  /** The running process (its logs, to wait for a line). */
  service(): ServiceProcess;
  /** SIGTERM (graceful shutdown), then the same hub again: same port, data and settings. */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

export interface HubProcessOptions {
  /** Extra SERVICE_* variables (a model provider, say). */
  env?: Record<string, string>;
  /** A fixed port (for a restart the client must find again); default: any free one. */
  port?: number;
}

/**
 * The real hub (`node dist/src/main.js`) in its own process on a loopback port, as the CLI meets it
 * in use. Its own heap also keeps the hub's timed regex-safety probes clear of the test runner's
 * garbage-collection pauses.
 */
export async function startHubProcess(options: HubProcessOptions = {}): Promise<HubProcess> {
  const dataDir = makeTempDir();
  const cwd = makeTempDir();
  const env = testEnv(dataDir, { ...GENEROUS_RATE_LIMITS, ...(options.port ? { SERVICE_PORT: String(options.port) } : {}), ...options.env });
  let service = spawnService(env, { cwd });
  const url = await readyUrl(service);
  const stop = async () => {
    if (service.child.exitCode === null && service.child.signalCode === null) service.child.kill('SIGTERM');
    await service.exited;
  };
  return {
    url,
    api: `${url}/api/v1`,
    dataDir,
    service: () => service,
    restart: async () => {
      if (!options.port) throw new Error('restart needs a fixed port (options.port)');
      await stop();
      service = spawnService(env, { cwd });
      await readyUrl(service);
    },
    stop,
  };
}
