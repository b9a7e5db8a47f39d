import path from 'node:path';
import { MessageChannel, receiveMessageOnPort, Worker, type MessagePort } from 'node:worker_threads';
import { compiledModule } from '../../offload/off-thread';
import { IN_FLIGHT, STOPPING, type RunResult } from './connection';
import type { GroupCommitCounters } from './group-commit';
import type { WriteReply, WriteRequest, WriteStep, WriteThreadData } from './write-thread-worker';

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
 * group-committed exactly as before (the GroupCommitWriter runs in the thread). A thread that dies
 * fails the writes it held (their callers see why) and the next write starts another.
 */
export class SqliteWriteThread {
  private readonly pending = new Map<number, Pending>();
  /** Requests made after the first of this synchronous run, sent together at its end (`post`). */
  private outbox: WriteRequest[] = [];
  private holding = false;
  private nextId = 1;
  private worker: Worker | null = null;
  private replies: MessagePort | null = null;
  private starting: Promise<Worker> | null = null;
  private draining = false;
  private closed = false;
  /** The counters of the threads that ended before this one (each thread counts from 0). */
  private readonly base: GroupCommitCounters = { writes: 0, commits: 0 };

  private constructor(
    private readonly data: Omit<WriteThreadData, 'replies'>,
    private readonly counters: GroupCommitCounters,
  ) {}

  /** Starts the thread and opens the write connection; `counters` follow the thread's statements and commits. */
  static async open(file: string, busyTimeoutMs: number, counters: GroupCommitCounters): Promise<SqliteWriteThread> {
    const shared = new Int32Array(new SharedArrayBuffer(2 * Int32Array.BYTES_PER_ELEMENT));
    const writer = new SqliteWriteThread({ file, busyTimeoutMs, shared }, counters);
    await writer.start();
    settleAtExit(shared);
    return writer;
  }

  /** Runs the statements in order in one group commit; their results, up to the one that stopped it. */
  write(steps: WriteStep[]): Promise<RunResult[]> {
    return this.request({ id: this.nextId++, steps });
  }

  /** Waits for every write sent so far, closes the connection and ends the thread. */
  async close(): Promise<void> {
    if (this.closed) return;
    const worker = this.worker ?? (await this.starting?.catch(() => null));
    try {
      if (worker) await this.request({ id: this.nextId++, close: true });
    } finally {
      this.closed = true;
      WRITERS_AT_EXIT.delete(this.data.shared);
      await worker?.terminate();
    }
  }

  private async request(request: WriteRequest): Promise<RunResult[]> {
    if (this.closed) throw new Error('the SQLite writer is closed');
    const worker = this.worker ?? (await this.start());
    return new Promise((resolve, reject) => {
      if (this.pending.size === 0) worker.ref();
      this.pending.set(request.id, { resolve, reject });
      this.post(worker, request);
      this.drainAtEndOfTurn();
    });
  }

  /**
   * The first request of a synchronous run goes to the thread at once (it starts on it while this
   * loop is still busy); the ones made after it in the same run follow as one message when the run's
   * microtasks are done. They would wait for the next commit anyway (the thread's first batch is
   * taken when the first write arrives); this way they all arrive together and share it, whatever the
   * scheduler does between separate messages (a CI run saw 20 writes sent in one loop arrive in
   * three groups, three commits), and a burst costs two postMessages, not one per write.
   */
  private post(worker: Worker, request: WriteRequest): void {
    if (this.holding) {
      this.outbox.push(request);
      return;
    }
    worker.postMessage([request]);
    this.holding = true;
    queueMicrotask(() => {
      this.holding = false;
      if (this.outbox.length === 0) return;
      const requests = this.outbox;
      this.outbox = [];
      worker.postMessage(requests);
    });
  }

  /**
   * The thread answers a write in well under a millisecond, while a busy turn of this loop takes
   * milliseconds: its reply is read at the end of the same turn (synchronously, off the port) rather
   * than in the next turn's I/O, so under load an accepted message is answered as soon as a refused one.
   */
  private drainAtEndOfTurn(): void {
    if (this.draining) return;
    this.draining = true;
    setImmediate(() => {
      this.draining = false;
      const port = this.replies;
      for (let received = port && receiveMessageOnPort(port); received; received = port && receiveMessageOnPort(port)) {
        this.receive(received.message as WriteReply[]);
      }
    });
  }

  private receive(replies: WriteReply[]): void {
    for (const reply of replies) this.settle(reply);
  }

  private start(): Promise<Worker> {
    this.starting ??= startThread(this.data).then(
      ({ worker, replies }) => {
        this.starting = null;
        this.adopt(worker, replies);
        return worker;
      },
      (error: unknown) => {
        this.starting = null;
        throw error;
      },
    );
    return this.starting;
  }

  private adopt(worker: Worker, replies: MessagePort): void {
    this.worker = worker;
    this.replies = replies;
    replies.on('message', (received: WriteReply[]) => this.receive(received));
    // The worker is what holds the process open while a write is in flight (below), not its port.
    replies.unref();
    worker.on('error', (error) => this.lost(worker, new Error(`the SQLite writer thread failed: ${error.message}`)));
    worker.on('exit', (code) => this.lost(worker, new Error(`the SQLite writer thread stopped (exit ${code})`)));
    // Held only while a write is in flight: an idle writer never keeps the process alive.
    worker.unref();
  }

  private settle(reply: WriteReply): void {
    this.counters.writes = this.base.writes + reply.counters.writes;
    this.counters.commits = this.base.commits + reply.counters.commits;
    const pending = this.pending.get(reply.id);
    if (!pending) return;
    this.pending.delete(reply.id);
    if (this.pending.size === 0) this.worker?.unref();
    if (reply.ok) pending.resolve(reply.results);
    else pending.reject(toError(reply.error));
  }

  /** The thread ended (or failed): what it held is refused with the reason; the next write starts another. */
  private lost(worker: Worker, reason: Error): void {
    if (this.worker !== worker) return;
    this.worker = null;
    this.replies?.close();
    this.replies = null;
    this.base.writes = this.counters.writes;
    this.base.commits = this.counters.commits;
    const refused = [...this.pending.values()];
    this.pending.clear();
    for (const pending of refused) pending.reject(this.closed ? new Error('the SQLite writer is closed') : reason);
  }
}

/** The shared counters of every open writer, settled when the process exits. */
const WRITERS_AT_EXIT = new Set<Int32Array>();
/** Longest an exiting process waits for a writer's statements in flight. */
const EXIT_SETTLE_MS = 2_000;

/**
 * A process that exits (process.exit, an uncaught error) ends its worker threads, and a thread ended
 * while sqlite3 still owes it a statement's callback aborts the whole process (node-sqlite3 #1666:
 * "FATAL ERROR: Error::ThrowAsJavaScriptException napi_throw", exit 134 instead of the code asked
 * for). So at exit every writer is told to start nothing more, and the exit waits (synchronously:
 * an `exit` listener cannot await) until its statements in flight are back, at most EXIT_SETTLE_MS.
 * A graceful stop closes the store first, and has nothing in flight here.
 */
function settleAtExit(shared: Int32Array): void {
  if (!process.listeners('exit').includes(settleWriters)) process.on('exit', settleWriters);
  WRITERS_AT_EXIT.add(shared);
}

function settleWriters(): void {
  const deadline = Date.now() + EXIT_SETTLE_MS;
  for (const shared of WRITERS_AT_EXIT) Atomics.store(shared, STOPPING, 1);
  for (const shared of WRITERS_AT_EXIT) {
    for (let inFlight = Atomics.load(shared, IN_FLIGHT); inFlight > 0 && Date.now() < deadline; inFlight = Atomics.load(shared, IN_FLIGHT)) {
      Atomics.wait(shared, IN_FLIGHT, inFlight, Math.max(1, deadline - Date.now()));
    }
  }
}

/** A new thread with its connection open, and the port its replies come on; rejects with the reason it could not open the file. */
function startThread(data: Omit<WriteThreadData, 'replies'>): Promise<{ worker: Worker; replies: MessagePort }> {
  const modulePath = compiledModule(path.join(__dirname, `write-thread-worker${path.extname(__filename)}`));
  const { port1: replies, port2 } = new MessageChannel();
  const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { modulePath, data: { ...data, replies: port2 } }, transferList: [port2] });
  return new Promise((resolve, reject) => {
    const failed = (error: Error) => {
      replies.close();
      void worker.terminate();
      reject(error);
    };
    worker.once('error', failed);
    replies.once('message', ([ready]: WriteReply[]) => {
      worker.off('error', failed);
      if (ready!.ok) return resolve({ worker, replies });
      failed(toError(ready!.error));
    });
  });
}

function toError(shaped: { message: string; code?: string; errno?: number }): Error {
  return Object.assign(
    new Error(shaped.message),
    shaped.code === undefined ? {} : { code: shaped.code },
    shaped.errno === undefined ? {} : { errno: shaped.errno },
  );
}
