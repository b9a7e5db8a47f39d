import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { compiledModule } from '../../offload/off-thread';
import type { RunResult } from './connection';
import type { GroupCommitCounters } from './group-commit';
import { Coalesced, type WriteReply, type WriteRequest, type WriteStep, type WriteThreadData } from './write-thread-worker';

export type { WriteStep } from './write-thread-worker';

const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
require(workerData.modulePath).serveWrites(parentPort, workerData.data);
`;

interface Pending {
  resolve: (results: RunResult[]) => void;
  reject: (error: Error) => void;
}

/**
 * The embedded database's writer, run in a worker thread. With the write connection on the hub's
 * own thread every statement of a group commit (`BEGIN`, each write, `COMMIT`) came back through
 * the hub's event loop before the next one went out; under load, with each turn of that loop busy
 * with dozens of requests for ~5 ms, storing one message took 20–30 such turns (~140 ms at 7,000
 * requests/s, against 5 ms for a refusal). Here a write costs the hub one message each way, and
 * the statements follow one another in a thread that does nothing else. Writes stay ordered and
 * group-committed exactly as before (the GroupCommitWriter runs in the thread).
 */
export class SqliteWriteThread {
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private stopped: Error | null = null;
  private readonly outbox = new Coalesced<WriteRequest>((requests) => this.worker.postMessage(requests));

  private constructor(
    private readonly worker: Worker,
    private readonly counters: GroupCommitCounters,
  ) {
    worker.on('message', (replies: WriteReply[]) => {
      for (const reply of replies) this.settle(reply);
    });
    worker.on('error', (error) => this.stop(new Error(`the SQLite writer thread failed: ${error.message}`)));
    worker.on('exit', (code) => this.stop(new Error(`the SQLite writer thread stopped (exit ${code})`)));
    // Held only while a write is in flight: an idle writer never keeps the process alive.
    worker.unref();
  }

  /** Starts the thread and opens the write connection; `counters` follow the thread's statements and commits. */
  static open(file: string, busyTimeoutMs: number, counters: GroupCommitCounters): Promise<SqliteWriteThread> {
    const modulePath = compiledModule(path.join(__dirname, `write-thread-worker${path.extname(__filename)}`));
    const data: WriteThreadData = { file, busyTimeoutMs };
    const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { modulePath, data } });
    return new Promise((resolve, reject) => {
      const failed = (error: Error) => {
        void worker.terminate();
        reject(error);
      };
      worker.once('error', failed);
      worker.once('message', ([ready]: WriteReply[]) => {
        worker.off('error', failed);
        if (ready!.ok) return resolve(new SqliteWriteThread(worker, counters));
        failed(toError(ready!.error));
      });
    });
  }

  /** Runs the statements in order in one group commit; their results, up to the one that stopped it. */
  write(steps: WriteStep[]): Promise<RunResult[]> {
    return this.request({ id: this.nextId++, steps });
  }

  /** Waits for every write sent so far, closes the connection and ends the thread. */
  async close(): Promise<void> {
    if (this.stopped) return;
    try {
      await this.request({ id: this.nextId++, close: true });
    } finally {
      this.stop(new Error('the SQLite writer is closed'));
      await this.worker.terminate();
    }
  }

  private request(request: WriteRequest): Promise<RunResult[]> {
    if (this.stopped) return Promise.reject(this.stopped);
    return new Promise((resolve, reject) => {
      if (this.pending.size === 0) this.worker.ref();
      this.pending.set(request.id, { resolve, reject });
      this.outbox.push(request);
    });
  }

  private settle(reply: WriteReply): void {
    this.counters.writes = reply.counters.writes;
    this.counters.commits = reply.counters.commits;
    const pending = this.pending.get(reply.id);
    if (!pending) return;
    this.pending.delete(reply.id);
    if (this.pending.size === 0) this.worker.unref();
    if (reply.ok) pending.resolve(reply.results);
    else pending.reject(toError(reply.error));
  }

  private stop(reason: Error): void {
    if (this.stopped) return;
    this.stopped = reason;
    for (const pending of this.pending.values()) pending.reject(reason);
    this.pending.clear();
  }
}

function toError(shaped: { message: string; code?: string; errno?: number }): Error {
  return Object.assign(
    new Error(shaped.message),
    shaped.code === undefined ? {} : { code: shaped.code },
    shaped.errno === undefined ? {} : { errno: shaped.errno },
  );
}
