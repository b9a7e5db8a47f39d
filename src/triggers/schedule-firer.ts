import { randomUUID } from 'node:crypto';
import { Cron } from 'croner';
import { findOrInsert } from '../db/find-or-insert';
import type { EventDeliveryRow, Models, WorkflowRow } from '../db/models';
import type { Logger } from '../logs/logger';
import type { ScheduleSpec } from '../workflows/events-schema';
import type { EventIntake } from './event-intake';
import { findSchedule } from './event-service';

/** Named limits of schedules. */
export const SCHEDULE_DEFAULTS = {
  /** A fire that starts later than this after its due time was missed (everything was down): skipped and logged, never run late. */
  missedAfterMs: 60_000,
  /** Missed fires counted at most when a schedule starts again (for the log line). */
  missedCountLimit: 1_000,
} as const;

/** The next due times of a schedule after `after` (croner, in the schedule's time zone). */
export function nextFires(schedule: Pick<ScheduleSpec, 'cron' | 'timezone'>, after: Date, count: number): Date[] {
  return new Cron(schedule.cron, { paused: true, ...(schedule.timezone ? { timezone: schedule.timezone } : {}) }).nextRuns(count, after);
}

/**
 * Fires a workflow's schedule (issue 29): once per due time whatever the number of processes (the
 * delivery row is unique per workflow, schedule and due time), never while paused, never late (a
 * fire missed while everything was down is logged and skipped). `run` fires it now, paused or not.
 */
export class ScheduleFirer {
  constructor(
    private readonly models: Models,
    private readonly workflowByName: (name: string) => Promise<WorkflowRow | null>,
    private readonly intake: EventIntake,
    private readonly logger: Logger,
    private readonly observe?: (workflow: string, schedule: string, outcome: string) => void,
  ) {}

  /** The due fire at `due`; null when it was skipped or another process fired it. */
  async fire(workflowName: string, scheduleName: string, due: Date): Promise<EventDeliveryRow | null> {
    const workflow = await this.workflowByName(workflowName);
    const schedule = findSchedule(workflow, scheduleName);
    const state = await this.state(workflowName, scheduleName);
    if (state.paused) return this.skip(workflowName, scheduleName, 'paused', due);
    const late = Date.now() - due.getTime();
    if (late > SCHEDULE_DEFAULTS.missedAfterMs) {
      this.logger.warn(
        { workflow: workflowName, schedule: scheduleName, due: due.toISOString(), late_ms: late },
        'events: a schedule fire was missed; skipped',
      );
      return this.skip(workflowName, scheduleName, 'missed', due);
    }
    return this.start(workflowName, schedule, due, due.toISOString());
  }

  /** Fires now (the run route, the CLI's `events fire`), paused or not. */
  async run(workflowName: string, scheduleName: string): Promise<EventDeliveryRow> {
    const schedule = findSchedule(await this.workflowByName(workflowName), scheduleName);
    const now = new Date();
    return (await this.start(workflowName, schedule, now, `run:${randomUUID()}`))!;
  }

  async setPaused(workflowName: string, scheduleName: string, paused: boolean): Promise<void> {
    findSchedule(await this.workflowByName(workflowName), scheduleName);
    const state = await this.state(workflowName, scheduleName);
    await state.update({ paused, updated_at: new Date() });
    this.logger.info({ workflow: workflowName, schedule: scheduleName }, paused ? 'events: schedule paused' : 'events: schedule resumed');
  }

  /** Logs the fires missed since the last one (the hub was down); they are not run. */
  async reportMissed(workflowName: string, schedule: ScheduleSpec, now = new Date()): Promise<number> {
    const state = await this.models.EventSchedule.findOne({ where: { workflow: workflowName, name: schedule.name } });
    if (!state?.last_fire_at) return 0;
    const missed = nextFires(schedule, state.last_fire_at, SCHEDULE_DEFAULTS.missedCountLimit).filter(
      (due) => due.getTime() < now.getTime() - SCHEDULE_DEFAULTS.missedAfterMs,
    ).length;
    if (missed > 0) this.logger.warn({ workflow: workflowName, schedule: schedule.name, missed }, 'events: schedule fires missed while down; skipped');
    return missed;
  }

  private async start(workflowName: string, schedule: ScheduleSpec, due: Date, externalId: string): Promise<EventDeliveryRow | null> {
    const fireTime = due.toISOString();
    const stored = await this.intake.store({
      workflow: workflowName,
      source: 'schedule',
      name: schedule.name,
      externalId,
      bodyHash: null,
      payload: null,
      deliver: schedule.deliver,
      message: schedule.message,
      thread: schedule.thread,
      scope: { schedule: { name: schedule.name, workflow: workflowName, cron: schedule.cron, timezone: schedule.timezone ?? 'UTC' }, fire_time: fireTime },
      defaultThread: fireTime,
    });
    if (!stored.created) return null; // another process fired this due time
    const state = await this.state(workflowName, schedule.name);
    await state.update({ last_fire_at: due, last_outcome: 'fired', last_delivery_id: stored.row.id, updated_at: new Date() });
    this.observe?.(workflowName, schedule.name, 'fired');
    await this.intake.start(stored.row, stored.text);
    return stored.row;
  }

  private async skip(workflowName: string, scheduleName: string, outcome: 'paused' | 'missed', due: Date): Promise<null> {
    this.observe?.(workflowName, scheduleName, outcome);
    const state = await this.state(workflowName, scheduleName);
    if (outcome === 'missed') await state.update({ last_outcome: 'missed', updated_at: new Date() });
    this.logger.debug({ workflow: workflowName, schedule: scheduleName, due: due.toISOString(), outcome }, 'events: schedule fire skipped');
    return null;
  }

  private async state(workflow: string, name: string) {
    const [row] = await findOrInsert(
      this.models.EventSchedule,
      { workflow, name },
      { workflow, name, paused: false, last_fire_at: null, last_outcome: null, last_delivery_id: null, updated_at: new Date() },
    );
    return row;
  }
}
