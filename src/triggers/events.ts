import type { ChatDelivery } from '../core/delivery';
import type { Hub } from '../core/hub';
import type { ControlBus, EventLog, MidTurnPolicy } from '../core/turns';
import type { Models, WorkflowRow } from '../db/models';
import type { Logger } from '../logs/logger';
import { EventDeliverer } from './event-delivery';
import { EVENTS_CHANNEL, EventIntake } from './event-intake';
import { EventRecords } from './event-records';
import { eventsOf, EventService, type HitCounter } from './event-service';
import { ScheduleFirer } from './schedule-firer';
import { DeliveryClaims } from './delivery-claims';
import type { Tracing } from '../tracing/tracing';
import type { DeclaredSchedule, ScheduleDriver } from './schedule-drivers';

export interface EventsOptions {
  models: Models;
  events: EventLog;
  control: ControlBus;
  workflowByName(name: string): Promise<WorkflowRow | null>;
  deliveryFor(channel: string): ChatDelivery | null;
  /** Environment variables, for the hooks' `secret_env`. */
  secrets: Readonly<Record<string, string | undefined>>;
  settings: { allow_unsigned: boolean; rate_limit: string; delivery_attempts: number; delivery_backoff_ms: number; delivery_lease_ms: number };
  logger: Logger;
  /** A span per hook delivery and schedule fire (null: traces off). */
  tracing?: Tracing | null;
  observe?: {
    hook(workflow: string, hook: string, outcome: string): void;
    schedule(workflow: string, schedule: string, outcome: string): void;
    delivery(outcome: string): void;
  };
}

/**
 * Events in, answers out (issue 29), as one part of an API process: the hook endpoint's service,
 * the schedules (a driver given at `start`), the deliverer and the records the API reads.
 */
export class Events {
  readonly deliverer: EventDeliverer;
  readonly firer: ScheduleFirer;
  readonly records: EventRecords;
  private readonly intake: EventIntake;
  private readonly claims: DeliveryClaims;
  /** Whether any workflow declares events (the lease sweeps run only then). */
  private anyEvents = false;
  private hub: Hub | null = null;
  private service: EventService | null = null;
  private driver: ScheduleDriver | null = null;
  private unsubscribe: (() => void) | null = null;

  constructor(private readonly options: EventsOptions) {
    const { models, logger, settings, observe } = options;
    this.deliverer = new EventDeliverer({
      models,
      events: options.events,
      deliveryFor: options.deliveryFor,
      logger,
      attempts: settings.delivery_attempts,
      backoffMs: settings.delivery_backoff_ms,
      onSettled: (row) => observe?.delivery(row.status),
    });
    this.claims = new DeliveryClaims(
      models,
      settings.delivery_lease_ms,
      logger,
      (row) => this.intake.resume(row),
      () => this.anyEvents,
    );
    this.intake = new EventIntake(models, () => this.hub, this.deliverer, this.claims, logger, options.tracing ?? null);
    this.firer = new ScheduleFirer(models, options.workflowByName, this.intake, logger, observe ? (w, s, o) => observe.schedule(w, s, o) : undefined);
    this.records = new EventRecords(models, () => models.Workflow.findAll({ order: [['name', 'ASC']] }));
  }

  /** The hook endpoint's service once the hub takes messages (null before: the endpoint answers 500 → the sender retries). */
  hooks(): EventService | null {
    return this.service;
  }

  /** Takes events in through `hub`; with a driver, runs the schedules and follows workflow changes. */
  async start(hub: Hub, limits: HitCounter, driver: ScheduleDriver | null): Promise<void> {
    const { options } = this;
    this.hub = hub;
    this.service = new EventService({
      workflowByName: options.workflowByName,
      intake: this.intake,
      secrets: options.secrets,
      allowUnsigned: options.settings.allow_unsigned,
      rateLimit: options.settings.rate_limit,
      limits,
      logger: options.logger,
      observe: options.observe ? (w, h, o) => options.observe!.hook(w, h, o) : undefined,
    });
    this.driver = driver;
    await this.applySchedules(true);
    this.unsubscribe = await options.control.subscribe((message) => {
      if (message.kind === 'workflows_changed')
        void this.applySchedules(false).catch((error: unknown) => options.logger.error({ err: error }, 'events: schedules not updated'));
    });
    // Deliveries whose process stopped before they were settled are taken up now, and whenever a lease runs out.
    await this.claims.start();
    if (!driver) return;
    options.logger.info({ driver: driver.description }, 'events: schedules running');
  }

  async stop(): Promise<void> {
    this.unsubscribe?.();
    this.deliverer.stop();
    await this.claims.stop();
    await this.driver?.stop();
    this.driver = null;
  }

  private async applySchedules(starting: boolean): Promise<void> {
    const workflows = await this.options.models.Workflow.findAll();
    this.anyEvents = workflows.some((row) => eventsOf(row).webhooks.length + eventsOf(row).schedules.length > 0);
    const declared: DeclaredSchedule[] = workflows.flatMap((row) => eventsOf(row).schedules.map((schedule) => ({ workflow: row.name, schedule })));
    if (starting && this.driver) for (const item of declared) await this.firer.reportMissed(item.workflow, item.schedule);
    await this.driver?.apply(declared);
  }
}

/** The mid-turn default of the `events` channel: an event arriving while its thread's turn runs waits for it (`queue`). */
export function withEventsMidTurn(base: (channel: string) => MidTurnPolicy): (channel: string) => MidTurnPolicy {
  return (channel) => (channel === EVENTS_CHANNEL ? 'queue' : base(channel));
}
