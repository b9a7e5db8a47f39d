import { spawn, type ChildProcess } from 'node:child_process';
import { appendFileSync } from 'node:fs';

export interface Child {
  process: ChildProcess;
  /** Resolves once a stdout line contains `text`; rejects if the process exits first. */
  waitFor(text: string, timeoutMs?: number): Promise<void>;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves when it has exited. */
  stop(graceMs?: number): Promise<void>;
}

/** Runs a compiled script with this Node; output is kept for error messages only. */
export function spawnNode(script: string, env: Record<string, string>, cwd: string, nodeArguments: string[] = []): Child {
  const child = spawn(process.execPath, [...nodeArguments, script], { cwd, env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.stdout!.on('data', (chunk: Buffer) => (output = (output + chunk.toString()).slice(-20_000)));
  child.stderr!.on('data', (chunk: Buffer) => (output = (output + chunk.toString()).slice(-20_000)));
  // BENCH_CHILD_LOG=<file>: every child's output is also appended there (with BENCH_NODE_ARGS=--trace-gc, say).
  const log = process.env.BENCH_CHILD_LOG;
  if (log) for (const stream of [child.stdout!, child.stderr!]) stream.on('data', (chunk: Buffer) => appendFileSync(log, chunk));
  return {
    process: child,
    waitFor: (text, timeoutMs = 30_000) =>
      new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`${script}: no "${text}" in ${timeoutMs} ms:\n${output}`)), timeoutMs);
        const check = () => {
          if (!output.includes(text)) return;
          clearTimeout(timer);
          child.stdout!.off('data', check);
          resolve();
        };
        child.stdout!.on('data', check);
        check();
        void exited.then(() => {
          clearTimeout(timer);
          reject(new Error(`${script} exited (${child.exitCode ?? child.signalCode}):\n${output}`));
        });
      }),
    stop: async (graceMs = 10_000) => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
    },
  };
}
