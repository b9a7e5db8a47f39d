import { Queue, Worker, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import type { TurnHandler, TurnJob, TurnQueue } from '../core/turns';
import type { Logger } from '../logs/logger';
import { nextAttemptDelayMs, TURN_RETRIES, type TurnRetries } from './turn-retries';

export const TURN_QUEUE_NAME = 'turns';

export interface RedisTurnQueueOptions {
  /**
   * A connection made for BullMQ (`maxRetriesPerRequest: null`) by the same factory as every other
   * Redis connection (named, errors logged once per outage); BullMQ duplicates it for blocking reads.
   */
  connection: Redis;
  prefix: string;
  /** How long a worker holds a turn's lock between renewals; a dead worker's turn is redelivered after it. */
  lockDurationMs: number;
  /** How often workers look for turns whose worker died. */
  stalledIntervalMs: number;
  /** How long a graceful stop waits for running turns before handing them back. */
  stopTimeoutMs: number;
  /** When a failed turn is tried again (default TURN_RETRIES). */
  retries?: Readonly<TurnRetries>;
}

/** The scaled-out turn queue: BullMQ, job id = the stored user message's id. */
export class RedisTurnQueue implements TurnQueue {
  readonly name = 'redis' as const;
  private readonly queue: Queue;
  private worker: Worker | null = null;
  private readonly abort = new AbortController();
  private readonly retries: Readonly<TurnRetries>;

  constructor(
    private readonly options: RedisTurnQueueOptions,
    private readonly logger: Logger,
  ) {
    this.queue = new Queue(TURN_QUEUE_NAME, { connection: options.connection, prefix: options.prefix });
    this.retries = options.retries ?? TURN_RETRIES;
    this.queue.on('error', (error) => logger.warn({ err: error.message }, 'turn queue error'));
  }

  async enqueue(job: TurnJob): Promise<void> {
    await this.queue.add('turn', job, {
      jobId: job.userMessageId,
      // The most any failure allows; the worker's backoff strategy gives up sooner on the others.
      attempts: Math.max(this.retries.attempts, this.retries.unreachableAttempts),
      backoff: { type: 'turn' },
      removeOnComplete: { count: 1_000 },
      removeOnFail: { count: 1_000 },
    });
  }

  /** Waiting and retry-delayed jobs: one Redis round trip, at scrape time only. */
  async depth(): Promise<number> {
    return this.queue.getJobCountByTypes('waiting', 'prioritized', 'delayed');
  }

  consume(handler: TurnHandler, options: { concurrency: number; onGiveUp?: (job: TurnJob, error: unknown) => Promise<void> }): void {
    this.worker = new Worker<TurnJob>(TURN_QUEUE_NAME, async (job) => handler(job.data, { signal: this.abort.signal }), {
      connection: this.options.connection,
      prefix: this.options.prefix,
      concurrency: options.concurrency,
      lockDuration: this.options.lockDurationMs,
      stalledInterval: this.options.stalledIntervalMs,
      maxStalledCount: 2,
      // -1: no attempt is left for this failure (BullMQ then fails the job).
      settings: { backoffStrategy: (failedAttempts, _type, error) => nextAttemptDelayMs(failedAttempts, error, this.retries) ?? -1 },
    });
    this.worker.on('error', (error) => this.logger.warn({ err: error.message }, 'turn worker error'));
    // A job whose lock was not renewed in time (its worker died, or was starved past turn_lock_s) goes back to the queue.
    this.worker.on('stalled', (jobId) => this.logger.warn({ job_id: jobId }, 'a turn stalled (its lock expired); another attempt takes it over'));
    this.worker.on('failed', (job, error) => {
      void (async () => {
        const final = !job || (await finalFailure(job));
        if (final && job && options.onGiveUp) await options.onGiveUp(job.data, error);
        else if (final) this.logger.error({ job: job?.data, err: error.message }, 'turn failed after every attempt');
        else this.logger.warn({ job: job.data, err: error.message, attempt: job.attemptsMade }, 'turn failed; retrying');
      })().catch((failure: unknown) => this.logger.error({ err: failure, job: job?.data }, 'could not end a failed turn'));
    });
  }

  async stopConsuming(): Promise<void> {
    if (!this.worker) return;
    const worker = this.worker;
    this.worker = null;
    // Let running turns finish; past the timeout, abort them and hand their jobs back (they are
    // redelivered to another worker once their lock expires).
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), this.options.stopTimeoutMs);
    });
    const outcome = await Promise.race([worker.close().then(() => 'closed' as const), timedOut]);
    clearTimeout(timer);
    if (outcome === 'timeout') {
      this.abort.abort();
      await worker.close(true);
    }
  }

  async close(): Promise<void> {
    await this.stopConsuming();
    await this.queue.close();
  }
}

/**
 * Whether a failed job is over (no other attempt comes): its last attempt failed, or it stalled more
 * often than `maxStalledCount` (the workers running it kept dying), which fails it at once whatever
 * attempts are left.
 */
async function finalFailure(job: Job): Promise<boolean> {
  if (job.attemptsMade >= (job.opts.attempts ?? 1)) return true;
  return (await job.getState().catch(() => 'unknown')) === 'failed';
}
