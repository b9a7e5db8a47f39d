import type { Logger } from '../logs/logger';
import type { TurnHandler, TurnJob, TurnQueue } from '../core/turns';
import { nextAttemptDelayMs, TURN_RETRIES, type TurnRetries } from './turn-retries';

export interface InProcessQueueLimits {
  retries: Readonly<TurnRetries>;
  rememberFinished: number;
}

/** Named limits of the embedded queue. */
export const IN_PROCESS_QUEUE_DEFAULTS: Readonly<InProcessQueueLimits> = {
  /** A handler that throws is tried again, as the Redis queue does (turn-retries.ts). */
  retries: TURN_RETRIES,
  /** Ids of finished jobs remembered, so enqueueing the same message again is a no-op (as in BullMQ). */
  rememberFinished: 10_000,
};

interface Entry {
  job: TurnJob;
  attempt: number;
}

/**
 * The embedded turn queue: FIFO in memory, at most one entry per job id. Nothing survives a crash
 * here; the worker re-enqueues turns the database still marks as running when it starts.
 */
export class InProcessTurnQueue implements TurnQueue {
  readonly name = 'in-process' as const;
  private readonly waiting: Entry[] = [];
  private readonly known = new Set<string>();
  private readonly finished: string[] = [];
  private readonly running = new Map<string, Promise<void>>();
  private handler: TurnHandler | null = null;
  private onGiveUp: ((job: TurnJob, error: unknown) => Promise<void>) | undefined;
  private concurrency = 1;
  private readonly abort = new AbortController();
  private stopped = false;

  constructor(
    private readonly logger: Logger,
    private readonly limits: Readonly<InProcessQueueLimits> = IN_PROCESS_QUEUE_DEFAULTS,
  ) {}

  async enqueue(job: TurnJob): Promise<void> {
    if (this.stopped) throw new Error('the turn queue is stopped');
    if (this.known.has(job.userMessageId)) return;
    this.known.add(job.userMessageId);
    this.waiting.push({ job, attempt: 1 });
    this.pump();
  }

  async depth(): Promise<number> {
    return this.waiting.length;
  }

  consume(handler: TurnHandler, options: { concurrency: number; onGiveUp?: (job: TurnJob, error: unknown) => Promise<void> }): void {
    this.handler = handler;
    this.onGiveUp = options.onGiveUp;
    this.concurrency = options.concurrency;
    this.pump();
  }

  async stopConsuming(): Promise<void> {
    this.stopped = true;
    this.abort.abort();
    await Promise.allSettled(this.running.values());
  }

  async close(): Promise<void> {
    await this.stopConsuming();
  }

  private pump(): void {
    while (this.handler && !this.stopped && this.running.size < this.concurrency && this.waiting.length > 0) {
      const entry = this.waiting.shift()!;
      const id = entry.job.userMessageId;
      const run = this.handler(entry.job, { signal: this.abort.signal })
        .then(() => this.remember(id))
        .catch((error: unknown) => this.retry(entry, error))
        .finally(() => {
          this.running.delete(id);
          this.pump();
        });
      this.running.set(id, run);
    }
  }

  /** Keeps the id in `known` for a while after it finished; the oldest ones are forgotten first. */
  private remember(id: string): void {
    this.finished.push(id);
    if (this.finished.length > this.limits.rememberFinished) this.known.delete(this.finished.shift()!);
  }

  private retry(entry: Entry, error: unknown): void {
    const id = entry.job.userMessageId;
    if (this.stopped) return;
    const delayMs = nextAttemptDelayMs(entry.attempt, error, this.limits.retries);
    if (delayMs === null) {
      this.remember(id);
      if (this.onGiveUp)
        void this.onGiveUp(entry.job, error).catch((failure: unknown) => this.logger.error({ err: failure, job: entry.job }, 'could not end a failed turn'));
      else this.logger.error({ err: error, job: entry.job }, 'turn failed after every attempt');
      return;
    }
    this.logger.warn({ err: error, job: entry.job, attempt: entry.attempt }, 'turn failed; retrying');
    setTimeout(() => {
      this.waiting.push({ job: entry.job, attempt: entry.attempt + 1 });
      this.pump();
    }, delayMs).unref();
  }
}
