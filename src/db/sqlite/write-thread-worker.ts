import type { MessagePort } from 'node:worker_threads';
import { SqliteConnection, type RunResult } from './connection';
import { GroupCommitWriter, type GroupCommitCounters } from './group-commit';

/** One statement of a write; with `stopUnlessChanged`, a statement that changed no row ends the write there. */
export interface WriteStep {
  sql: string;
  parameters: readonly unknown[];
  stopUnlessChanged?: boolean;
}

export type WriteRequest = { id: number; steps: WriteStep[] } | { id: number; close: true };

export type WriteReply = { id: number; counters: GroupCommitCounters } & (
  { ok: true; results: RunResult[] } | { ok: false; error: { message: string; code?: string; errno?: number } }
);

export interface WriteThreadData {
  file: string;
  busyTimeoutMs: number;
  /** Statements in flight and "stop", shared with the hub's thread (SqliteConnection.track). */
  shared: Int32Array;
  /** Where the replies go: a port of their own, which the hub's thread can also read synchronously. */
  replies: MessagePort;
}

/**
 * The embedded database's write connection, in a thread of its own (see write-thread.ts): opens the
 * file, then runs each write's statements through the group commit and answers with their results.
 * Its event loop does nothing else, so one statement follows another at once instead of waiting for
 * a turn of the hub's loop each. Requests come on `port`, replies go to `data.replies`, both ways
 * as arrays; `{ id: 0, ok }` says the connection is ready.
 */
export async function serveWrites(port: MessagePort, data: WriteThreadData): Promise<void> {
  const out = data.replies;
  let connection: SqliteConnection;
  const counters: GroupCommitCounters = { writes: 0, commits: 0 };
  try {
    connection = await SqliteConnection.open(data.file, { readOnly: false, busyTimeoutMs: data.busyTimeoutMs });
    connection.track(data.shared);
    // WAL lets readers run beside the writer; NORMAL syncs at checkpoints, not at every commit
    // (a power cut may lose the last commits, never corrupt the file: SQLite's documented trade).
    await connection.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON;');
  } catch (error) {
    out.postMessage([{ id: 0, counters, ok: false, error: shape(error) }] satisfies WriteReply[]);
    return;
  }
  const writer = new GroupCommitWriter(connection, counters);
  out.postMessage([{ id: 0, counters, ok: true, results: [] }] satisfies WriteReply[]);
  // Replies that settle in one turn of this loop (a batch's jobs commit together) go back as one message.
  const replies = new Coalesced<WriteReply>((batch) => out.postMessage(batch));
  const answer = (id: number, work: Promise<RunResult[]>) =>
    work.then(
      (results) => replies.push({ id, counters, ok: true, results }),
      (error: unknown) => replies.push({ id, counters, ok: false, error: shape(error) }),
    );
  port.on('message', (requests: WriteRequest[]) => {
    for (const request of requests) {
      if ('close' in request)
        void answer(
          request.id,
          writer.idle().then(() => connection.close().then(() => [])),
        );
      else {
        const [only] = request.steps;
        void answer(
          request.id,
          request.steps.length === 1 && only
            ? writer.writeStatement(only.sql, only.parameters).then((result) => [result])
            : writer.write((execute) => runSteps(execute, request.steps)),
        );
      }
    }
  });
}

/**
 * Items pushed during one turn of the event loop, handed over together at its end (`setImmediate`
 * runs right after the loop's I/O callbacks: no extra turn): one message per batch instead of one
 * per write.
 */
class Coalesced<T> {
  private items: T[] = [];

  constructor(private readonly send: (items: T[]) => void) {}

  push(item: T): void {
    if (this.items.length === 0) setImmediate(() => this.flush());
    this.items.push(item);
  }

  private flush(): void {
    const items = this.items;
    this.items = [];
    this.send(items);
  }
}

async function runSteps(execute: (sql: string, parameters: readonly unknown[]) => Promise<RunResult>, steps: WriteStep[]): Promise<RunResult[]> {
  const results: RunResult[] = [];
  for (const step of steps) {
    const result = await execute(step.sql, step.parameters);
    results.push(result);
    if (step.stopUnlessChanged && result.changes === 0) break;
  }
  return results;
}

/** What crosses back of an error: its message and SQLite's code and errno (a cloned Error keeps neither). */
function shape(error: unknown): { message: string; code?: string; errno?: number } {
  const { code, errno } = (error ?? {}) as { code?: unknown; errno?: unknown };
  return {
    message: error instanceof Error ? error.message : String(error),
    ...(typeof code === 'string' ? { code } : {}),
    ...(typeof errno === 'number' ? { errno } : {}),
  };
}
