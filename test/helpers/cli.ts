import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import path from 'node:path';
import { REPO_ROOT } from './process';

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
