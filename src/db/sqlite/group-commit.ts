import type { RunResult, SqliteConnection } from './connection';

/** Runs one statement inside the batch's transaction. */
export type Execute = (sql: string, parameters: readonly unknown[]) => Promise<RunResult>;

interface Job {
  work: (execute: Execute) => Promise<unknown>;
  /** One statement (`writeStatement`): alone in a batch, it needs no BEGIN/COMMIT. */
  oneStatement: boolean;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

export interface GroupCommitCounters {
  writes: number;
  commits: number;
}

/**
 * Group commit on one SQLite write connection: every write that arrives while a transaction is
 * being written waits for the next one, and all of them go in together (`BEGIN IMMEDIATE` … `COMMIT`),
 * so concurrent turns share one commit instead of queueing for one each. A job is a function of
 * its statements, run in order inside the transaction. A job that fails after it wrote something
 * rolls the whole batch back and the other jobs of the batch are written again in the next one, so
 * no job ever commits half of its statements.
 */
export class GroupCommitWriter {
  private queue: Job[] = [];
  private writing = false;

  constructor(
    private readonly connection: SqliteConnection,
    private readonly counters: GroupCommitCounters,
  ) {}

  write<T>(work: (execute: Execute) => Promise<T>): Promise<T> {
    return this.enqueue(work);
  }

  /**
   * One statement. When nothing else is waiting it runs in SQLite's autocommit mode, as its own
   * transaction (just as atomic: a statement that fails changes nothing): one call into the driver
   * instead of `BEGIN IMMEDIATE`, the statement and `COMMIT`, each of which is a trip through the
   * driver's thread pool and back. That is most of the time a lone write takes (a message accepted
   * on an idle hub); under load the statement joins the batch's transaction like any job.
   */
  writeStatement(sql: string, parameters: readonly unknown[]): Promise<RunResult> {
    return this.enqueue((execute) => execute(sql, parameters), true);
  }

  private enqueue<T>(work: (execute: Execute) => Promise<T>, oneStatement = false): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ work, oneStatement, resolve: resolve as (value: unknown) => void, reject });
      if (!this.writing) void this.drain();
    });
  }

  /** Resolves once everything queued so far is written. */
  async idle(): Promise<void> {
    while (this.writing || this.queue.length > 0) await new Promise((resolve) => setImmediate(resolve));
  }

  private async drain(): Promise<void> {
    this.writing = true;
    try {
      while (this.queue.length > 0) {
        const batch = this.queue;
        this.queue = [];
        await this.commit(batch);
      }
    } finally {
      this.writing = false;
    }
  }

  private async commit(batch: Job[]): Promise<void> {
    if (batch.length === 1 && batch[0]!.oneStatement) return this.commitAlone(batch[0]!);
    const settled: { job: Job; ok: boolean; value: unknown }[] = [];
    try {
      await this.connection.exec('BEGIN IMMEDIATE');
    } catch (error) {
      for (const job of batch) job.reject(error);
      return;
    }
    for (let index = 0; index < batch.length; index += 1) {
      const job = batch[index]!;
      let wrote = 0;
      const execute: Execute = async (sql, parameters) => {
        this.counters.writes += 1;
        const result = await this.connection.run(sql, parameters);
        wrote += 1;
        return result;
      };
      try {
        settled.push({ job, ok: true, value: await job.work(execute) });
      } catch (error) {
        if (wrote === 0) {
          settled.push({ job, ok: false, value: error });
          continue;
        }
        // Half written: undo the batch, fail this job, write the others again.
        await this.connection.exec('ROLLBACK').catch(() => undefined);
        job.reject(error);
        this.queue = [...batch.slice(0, index), ...batch.slice(index + 1), ...this.queue];
        return;
      }
    }
    try {
      await this.connection.exec('COMMIT');
      this.counters.commits += 1;
    } catch (error) {
      await this.connection.exec('ROLLBACK').catch(() => undefined);
      for (const job of batch) job.reject(error);
      return;
    }
    for (const { job, ok, value } of settled) (ok ? job.resolve : job.reject)(value);
  }

  /** A one-statement job in SQLite's autocommit mode: the statement is its own transaction. */
  private async commitAlone(job: Job): Promise<void> {
    try {
      const result = await job.work((sql, parameters) => {
        this.counters.writes += 1;
        return this.connection.run(sql, parameters);
      });
      this.counters.commits += 1;
      job.resolve(result);
    } catch (error) {
      job.reject(error);
    }
  }
}
