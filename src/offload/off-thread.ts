import { existsSync } from 'node:fs';
import path from 'node:path';
import { Worker } from 'node:worker_threads';

/**
 * Work that may cost seconds on hostile input (parsing a fetched page or an upload, checking
 * regular expressions) runs here, in a worker thread, so the event loop that serves every request,
 * socket and turn never waits for it. Each call gets its own worker, ended when it answers, when
 * its time is up or when the caller gives up: a runaway task costs its worker, never the hub.
 */
export interface OffThreadLimits {
  /** The task (waiting for a free worker included) is given up after this long. */
  timeoutMs: number;
  /** Heap of the task's worker, so hostile input cannot exhaust the hub's memory. */
  maxHeapMb: number;
  /** Gives the task up early (a cancelled turn). */
  signal?: AbortSignal;
}

/** Workers running tasks at once in this process; further tasks wait for one to end. */
export const OFF_THREAD_MAX_WORKERS = 4;

/** The task did not answer in time, or was given up: its worker was ended. */
export class OffThreadTimeout extends Error {}

/** The task threw; `message` is its error's message. */
export class OffThreadFailure extends Error {}

const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
(async () => {
  const task = require(workerData.modulePath)[workerData.exportName];
  const result = await task(workerData.input);
  parentPort.postMessage({ ok: true, result });
})().catch((error) => parentPort.postMessage({ ok: false, message: String((error && error.message) || error) }));
`;

let running = 0;
const waiting: (() => void)[] = [];

/**
 * Runs `exportName(input)` of the module at `modulePath` in a worker thread and resolves with what
 * it returns (structured-cloned). The module must be plain (no state it relies on from the hub):
 * it is loaded fresh in the worker. Rejects with OffThreadTimeout or OffThreadFailure.
 */
export async function runOffThread<T>(modulePath: string, exportName: string, input: unknown, limits: OffThreadLimits): Promise<T> {
  const deadline = Date.now() + limits.timeoutMs;
  await slot(limits.signal, limits.timeoutMs);
  try {
    return await inWorker<T>(compiledModule(modulePath), exportName, input, { ...limits, timeoutMs: Math.max(1, deadline - Date.now()) });
  } finally {
    running -= 1;
    waiting.shift()?.();
  }
}

function slot(signal: AbortSignal | undefined, timeoutMs: number): Promise<void> {
  if (running < OFF_THREAD_MAX_WORKERS) {
    running += 1;
    return Promise.resolve();
  }
  return new Promise((resolve, reject) => {
    const take = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', giveUp);
      running += 1;
      resolve();
    };
    const giveUp = () => {
      clearTimeout(timer);
      const at = waiting.indexOf(take);
      if (at >= 0) waiting.splice(at, 1);
      reject(new OffThreadTimeout('the task was given up while waiting for a worker'));
    };
    const timer = setTimeout(giveUp, timeoutMs);
    signal?.addEventListener('abort', giveUp, { once: true });
    waiting.push(take);
  });
}

function inWorker<T>(modulePath: string, exportName: string, input: unknown, limits: OffThreadLimits): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    if (limits.signal?.aborted) return reject(new OffThreadTimeout('the task was given up'));
    const worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: { modulePath, exportName, input },
      resourceLimits: { maxOldGenerationSizeMb: limits.maxHeapMb },
      stdout: true,
      stderr: true,
    });
    // Whatever a library prints in there is dropped, never mixed into the hub's log.
    worker.stdout.resume();
    worker.stderr.resume();
    let done = false;
    const finish = (outcome: () => void) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      limits.signal?.removeEventListener('abort', abort);
      void worker.terminate();
      outcome();
    };
    const abort = () => finish(() => reject(new OffThreadTimeout('the task was given up')));
    const timer = setTimeout(() => finish(() => reject(new OffThreadTimeout(`the task took longer than ${limits.timeoutMs} ms`))), limits.timeoutMs);
    limits.signal?.addEventListener('abort', abort, { once: true });
    worker.on('message', (message: { ok: true; result: T } | { ok: false; message: string }) =>
      finish(() => (message.ok ? resolve(message.result) : reject(new OffThreadFailure(message.message)))),
    );
    worker.on('error', (error) => finish(() => reject(new OffThreadFailure(error.message))));
    worker.on('exit', (code) => finish(() => reject(new OffThreadFailure(`the worker stopped (exit ${code})`))));
  });
}

/**
 * The JavaScript a worker can load for a module of ours: the module itself when it is compiled
 * (`dist/…/x.js`, how the hub runs), else — running from TypeScript sources under jest — its
 * compiled twin in `dist/`, which jest's global setup builds first.
 */
export function compiledModule(modulePath: string): string {
  if (!/\.tsx?$/.test(modulePath)) return modulePath;
  let root = path.dirname(modulePath);
  while (!existsSync(path.join(root, 'package.json')) && path.dirname(root) !== root) root = path.dirname(root);
  const twin = path.join(root, 'dist', path.relative(root, modulePath)).replace(/\.tsx?$/, '.js');
  if (!existsSync(twin)) throw new Error(`${twin} is missing: build the hub first (npm run build)`);
  return twin;
}
