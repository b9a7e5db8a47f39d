import { Cron } from 'croner';
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
