import { Cron } from 'croner';
import { Queue, Worker, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Logger } from '../logs/logger';
import type { ScheduleSpec } from '../workflows/events-schema';
import type { ScheduleFirer } from './schedule-firer';

/** A declared schedule of a workflow. */
export interface DeclaredSchedule {
  workflow: string;
  schedule: ScheduleSpec;
}

/** Runs the declared schedules: croner in this process, or BullMQ job schedulers shared by every process on Redis. */
export interface ScheduleDriver {
  readonly description: string;
  /** Makes the running schedules exactly `declared` (added, changed, removed). */
  apply(declared: readonly DeclaredSchedule[]): Promise<void>;
  stop(): Promise<void>;
}

function report(logger: Logger, item: DeclaredSchedule) {
  return (error: unknown) => logger.error({ err: error, workflow: item.workflow, schedule: item.schedule.name }, 'events: a schedule fire failed');
}

/**
 * croner timers in this process (the embedded hub). Each fire is named by its due time — the
 * second croner fired at, rounded — so two processes on one database still fire it once.
 */
export class CronScheduleDriver implements ScheduleDriver {
  readonly description = 'croner (in-process)';
  private jobs: Cron[] = [];

  constructor(
    private readonly firer: ScheduleFirer,
    private readonly logger: Logger,
  ) {}

  async apply(declared: readonly DeclaredSchedule[]): Promise<void> {
    await this.stop();
    this.jobs = declared.map((item) => {
      const options = { protect: true, ...(item.schedule.timezone ? { timezone: item.schedule.timezone } : {}) };
      return new Cron(item.schedule.cron, options, () => {
        const due = new Date(Math.round(Date.now() / 1000) * 1000);
        void this.firer.fire(item.workflow, item.schedule.name, due).catch(report(this.logger, item));
      });
    });
  }

  async stop(): Promise<void> {
    for (const job of this.jobs) job.stop();
    this.jobs = [];
  }
}

/** The BullMQ queue of schedule fires. */
export const SCHEDULE_QUEUE_NAME = 'schedules';

interface FireData {
  workflow: string;
  schedule: string;
}

/**
 * BullMQ job schedulers (`upsertJobScheduler`) on Redis: one job per due time whatever the number
 * of API processes, taken by exactly one of them; the schedule lives in Redis across restarts. A job
 * that starts long after its due time (every process was down) is skipped by the firer.
 */
export class BullScheduleDriver implements ScheduleDriver {
  readonly description = 'BullMQ job schedulers (Redis)';
  private readonly queue: Queue;
  private readonly worker: Worker<FireData>;

  constructor(
    connection: Redis,
    workerConnection: Redis,
    prefix: string,
    private readonly firer: ScheduleFirer,
    private readonly logger: Logger,
  ) {
    this.queue = new Queue(SCHEDULE_QUEUE_NAME, { connection, prefix });
    this.worker = new Worker<FireData>(SCHEDULE_QUEUE_NAME, async (job) => this.run(job), { connection: workerConnection, prefix, concurrency: 4 });
    this.worker.on('error', (error) => logger.warn({ err: error.message }, 'events: the schedule worker reported an error'));
  }

  async apply(declared: readonly DeclaredSchedule[]): Promise<void> {
    const wanted = new Set<string>();
    for (const item of declared) {
      const id = `${item.workflow}:${item.schedule.name}`;
      wanted.add(id);
      await this.queue.upsertJobScheduler(
        id,
        { pattern: item.schedule.cron, ...(item.schedule.timezone ? { tz: item.schedule.timezone } : {}) },
        { name: 'fire', data: { workflow: item.workflow, schedule: item.schedule.name }, opts: { removeOnComplete: 100, removeOnFail: 100 } },
      );
    }
    for (const scheduler of await this.queue.getJobSchedulers(0, -1)) {
      if (scheduler.key && !wanted.has(scheduler.key)) await this.queue.removeJobScheduler(scheduler.key);
    }
  }

  async stop(): Promise<void> {
    await this.worker.close();
    await this.queue.close();
  }

  private async run(job: Job<FireData>): Promise<void> {
    const dueMs = (job.opts as { prevMillis?: number }).prevMillis ?? job.timestamp + (job.opts.delay ?? 0);
    try {
      await this.firer.fire(job.data.workflow, job.data.schedule, new Date(dueMs));
    } catch (error) {
      // Not retried: a fire that failed is reported in its delivery, never run twice.
      this.logger.error({ err: error, workflow: job.data.workflow, schedule: job.data.schedule }, 'events: a schedule fire failed');
    }
  }
}
