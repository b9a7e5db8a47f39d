import { Queue, Worker, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Logger } from '../logs/logger';
import type { DeclaredSchedule, ScheduleDriver } from './schedule-drivers';
import type { ScheduleFirer } from './schedule-firer';

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
