import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';

export const REPO_ROOT = path.resolve(__dirname, '../..');

export interface ServiceProcess {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  /** Resolves with the exit code (or the signal name). */
  exited: Promise<number | string>;
  /** Waits for a JSON log line matching `predicate` and returns it. */
  waitForLog(predicate: (entry: Record<string, any>) => boolean, timeoutMs?: number): Promise<Record<string, any>>;
}

/** Runs a compiled entry point (`dist/src/main.js` by default) as a real process. */
export function spawnService(env: Record<string, string>, options: { cwd?: string; entry?: string } = {}): ServiceProcess {
  const child = spawn(process.execPath, [path.join(REPO_ROOT, options.entry ?? 'dist/src/main.js')], {
    cwd: options.cwd ?? REPO_ROOT,
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  const waiters: { predicate: (entry: Record<string, any>) => boolean; resolve: (entry: Record<string, any>) => void }[] = [];
  const seen: Record<string, any>[] = [];
  let partial = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    const text = chunk.toString('utf8');
    out += text;
    const lines = (partial + text).split('\n');
    partial = lines.pop()!;
    for (const line of lines) {
      let entry: Record<string, any>;
      try {
        entry = JSON.parse(line) as Record<string, any>;
      } catch {
        continue; // not a JSON log line
      }
      seen.push(entry);
      for (const waiter of waiters.filter((w) => w.predicate(entry))) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(entry);
      }
    }
  });
  child.stderr!.on('data', (chunk: Buffer) => {
    err += chunk.toString('utf8');
  });
  const exited = new Promise<number | string>((resolve) => child.on('exit', (code, signal) => resolve(code ?? signal ?? -1)));
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    exited,
    waitForLog: (predicate, timeoutMs = 20_000) =>
      new Promise((resolve, reject) => {
        const found = seen.find(predicate);
        if (found) return resolve(found);
        const timer = setTimeout(() => reject(new Error(`timed out waiting for a log line; stdout:\n${out}\nstderr:\n${err}`)), timeoutMs);
        waiters.push({
          predicate,
          resolve: (entry) => {
            clearTimeout(timer);
            resolve(entry);
          },
        });
        void exited.then((code) => reject(new Error(`process exited (${code}) first; stdout:\n${out}\nstderr:\n${err}`)));
      }),
  };
}

/** Waits for the ready line and returns the base URL the process listens on. */
export async function readyUrl(service: ServiceProcess, timeoutMs?: number): Promise<string> {
  const ready = await service.waitForLog((entry) => entry.msg === 'Switchboard is ready', timeoutMs);
  const port = String(ready.listening).split(':').pop();
  return `http://127.0.0.1:${port}`;
}
