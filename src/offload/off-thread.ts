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

/**
 * What a task's worker is given besides its input: more input sent while it runs (`received`), and a
 * way to hand back a large result in parts (`emit`). A task that needs neither ignores it.
 */
export interface OffThreadTaskIo {
  /** Values the caller sends (`OffThreadTask.send`), in order, until it finishes the task. */
  received(): AsyncIterable<unknown>;
  /** Hands one part to the caller's `onPart`; resolves once the caller has taken it. */
  emit(part: unknown): Promise<void>;
}

/** How input and output cross to and from the worker. */
export interface OffThreadIo {
  /** Buffers of the input moved to the worker rather than copied; the caller's views of them become empty. */
  transfer?: ArrayBuffer[];
  /**
   * Takes each part the task emits. The worker sends the next part only once this one was taken,
   * so a large result arrives over several turns of the event loop, never in one long copy.
   */
  onPart?: (part: unknown) => void;
}

/** A task started with `startOffThread`: it takes more input while it runs. */
export interface OffThreadTask<T> {
  /** Sends more input (the task's `received()`); each value is copied on its own, so send it in pieces. */
  send(value: unknown): void;
  /** Ends the input; resolves with what the task returns. */
  finish(): Promise<T>;
  /** Gives the task up; its worker is ended. */
  cancel(): void;
}

type FromWorker = { kind: 'part'; value: unknown } | { kind: 'done'; ok: true; result: unknown } | { kind: 'done'; ok: false; message: string };
type ToWorker = { kind: 'input'; value: unknown } | { kind: 'end' } | { kind: 'ack' };

const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const inbox = [];
let ended = false, wake = null, taken = null;
parentPort.on('message', (message) => {
  if (message.kind === 'ack') taken && taken();
  else if (message.kind === 'input') inbox.push(message.value);
  else if (message.kind === 'end') ended = true;
  if (wake) wake();
});
const io = {
  async *received() {
    for (;;) {
      if (inbox.length > 0) yield inbox.shift();
      else if (ended) return;
      else await new Promise((resolve) => (wake = resolve));
    }
  },
  emit(part) {
    return new Promise((resolve) => {
      taken = resolve;
      parentPort.postMessage({ kind: 'part', value: part });
    });
  },
};
(async () => {
  const task = require(workerData.modulePath)[workerData.exportName];
  const result = await task(workerData.input, io);
  parentPort.postMessage({ kind: 'done', ok: true, result });
})().catch((error) => parentPort.postMessage({ kind: 'done', ok: false, message: String((error && error.message) || error) }));
`;

let running = 0;
const waiting: (() => void)[] = [];

/**
 * Runs `exportName(input, io)` of the module at `modulePath` in a worker thread and resolves with
 * what it returns (structured-cloned). The module must be plain (no state it relies on from the hub):
 * it is loaded fresh in the worker. Rejects with OffThreadTimeout or OffThreadFailure.
 */
export async function runOffThread<T>(modulePath: string, exportName: string, input: unknown, limits: OffThreadLimits, io: OffThreadIo = {}): Promise<T> {
  return (await startOffThread<T>(modulePath, exportName, input, limits, io)).finish();
}

/**
 * Starts `exportName(input, io)` in a worker thread (once one of OFF_THREAD_MAX_WORKERS is free) and
 * returns at once, so the caller can send the rest of the input as it has it. The time limit counts
 * from the call; a task nobody finishes is ended by it.
 */
export async function startOffThread<T>(
  modulePath: string,
  exportName: string,
  input: unknown,
  limits: OffThreadLimits,
  io: OffThreadIo = {},
): Promise<OffThreadTask<T>> {
  const deadline = Date.now() + limits.timeoutMs;
  await slot(limits.signal, limits.timeoutMs);
  try {
    return inWorker<T>(compiledModule(modulePath), exportName, input, { ...limits, timeoutMs: Math.max(1, deadline - Date.now()) }, io, release);
  } catch (error) {
    // The worker never started (no compiled module, an input that cannot be sent): its place is free again.
    release();
    throw error;
  }
}

function release(): void {
  running -= 1;
  waiting.shift()?.();
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

function inWorker<T>(modulePath: string, exportName: string, input: unknown, limits: OffThreadLimits, io: OffThreadIo, ended: () => void): OffThreadTask<T> {
  if (limits.signal?.aborted) {
    ended();
    const given = Promise.reject(new OffThreadTimeout('the task was given up'));
    given.catch(() => undefined);
    return { send: () => undefined, finish: () => given, cancel: () => undefined };
  }
  const worker = new Worker(WORKER_SOURCE, {
    eval: true,
    workerData: { modulePath, exportName, input },
    transferList: io.transfer,
    resourceLimits: { maxOldGenerationSizeMb: limits.maxHeapMb },
    stdout: true,
    stderr: true,
  });
  // Whatever a library prints in there is dropped, never mixed into the hub's log.
  worker.stdout.resume();
  worker.stderr.resume();
  let done = false;
  let settle!: { resolve: (value: T) => void; reject: (error: Error) => void };
  const result = new Promise<T>((resolve, reject) => (settle = { resolve, reject }));
  // Settled before the caller asks (a timeout while it still sends): not an unhandled rejection.
  result.catch(() => undefined);
  const finish = (outcome: () => void) => {
    if (done) return;
    done = true;
    clearTimeout(timer);
    limits.signal?.removeEventListener('abort', abort);
    void worker.terminate();
    ended();
    outcome();
  };
  const post = (message: ToWorker) => {
    if (!done) worker.postMessage(message);
  };
  const abort = () => finish(() => settle.reject(new OffThreadTimeout('the task was given up')));
  const timer = setTimeout(() => finish(() => settle.reject(new OffThreadTimeout(`the task took longer than ${limits.timeoutMs} ms`))), limits.timeoutMs);
  limits.signal?.addEventListener('abort', abort, { once: true });
  worker.on('message', (message: FromWorker) => {
    if (message.kind === 'part') {
      if (!io.onPart) return finish(() => settle.reject(new OffThreadFailure('the task emitted a part nobody takes')));
      try {
        io.onPart(message.value);
      } catch (error) {
        return finish(() => settle.reject(new OffThreadFailure(`taking a part failed: ${error instanceof Error ? error.message : String(error)}`)));
      }
      // Acknowledged after this turn's I/O: the port would hand over the next part in this same turn
      // had it arrived meanwhile, and several large parts in one turn are the long block parts avoid.
      setImmediate(() => post({ kind: 'ack' }));
      return;
    }
    finish(() => (message.ok ? settle.resolve(message.result as T) : settle.reject(new OffThreadFailure(message.message))));
  });
  worker.on('error', (error) => finish(() => settle.reject(new OffThreadFailure(error.message))));
  worker.on('exit', (code) => finish(() => settle.reject(new OffThreadFailure(`the worker stopped (exit ${code})`))));
  return {
    send: (value) => post({ kind: 'input', value }),
    finish: () => {
      post({ kind: 'end' });
      return result;
    },
    cancel: abort,
  };
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
