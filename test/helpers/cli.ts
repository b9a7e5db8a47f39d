import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import path from 'node:path';
import { GENEROUS_RATE_LIMITS } from './auth-service';
import { testEnv } from './env';
import { REPO_ROOT, readyUrl, spawnService } from './process';
import { makeTempDir } from './temp-dir';

export interface CliRun {
  code: number | string;
  stdout: string;
  stderr: string;
}

/** Runs the built CLI (`node dist/src/cli/index.js …`) as a real process; `input` is piped to stdin. */
export function runCli(args: readonly string[], env: Record<string, string>, input = ''): Promise<CliRun> {
  const child = spawn(process.execPath, [path.join(REPO_ROOT, 'dist/src/cli/index.js'), ...args], {
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
  stop(): Promise<void>;
}

/**
 * The real hub (`node dist/src/main.js`) in its own process on a loopback port, as the CLI meets it
 * in use. Its own heap also keeps the hub's timed regex-safety probes clear of the test runner's
 * garbage-collection pauses.
 */
export async function startHubProcess(): Promise<HubProcess> {
  const service = spawnService(testEnv(makeTempDir(), GENEROUS_RATE_LIMITS), { cwd: makeTempDir() });
  const url = await readyUrl(service);
  return {
    url,
    api: `${url}/api/v1`,
    stop: async () => {
      service.child.kill('SIGTERM');
      await service.exited;
    },
  };
}
