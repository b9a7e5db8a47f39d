import { Counter, type Registry } from 'prom-client';

/**
 * Webhooks and schedules (issue 29), on the process's registry: hook requests by workflow, hook and
 * outcome (`accepted`, `redelivery`, `unauthorized`, `rate_limited`…), schedule fires by outcome
 * (`fired`, `paused`, `missed`), and deliveries by outcome (`delivered`, `failed`). Label values are
 * declared names, never ids.
 */
export class EventMetrics {
  private readonly hooks: Counter<'workflow' | 'hook' | 'outcome'>;
  private readonly fires: Counter<'workflow' | 'schedule' | 'outcome'>;
  private readonly deliveries: Counter<'outcome'>;

  constructor(registry: Registry) {
    const registers = [registry];
    this.hooks = new Counter({
      name: 'switchboard_hook_requests_total',
      help: 'Webhook requests by workflow, hook and outcome.',
      labelNames: ['workflow', 'hook', 'outcome'],
      registers,
    });
    this.fires = new Counter({
      name: 'switchboard_schedule_fires_total',
      help: 'Schedule fires by workflow, schedule and outcome.',
      labelNames: ['workflow', 'schedule', 'outcome'],
      registers,
    });
    this.deliveries = new Counter({
      name: 'switchboard_event_deliveries_total',
      help: 'Answers of webhooks and schedules posted into chats, by outcome.',
      labelNames: ['outcome'],
      registers,
    });
  }

  hookRequest(workflow: string, hook: string, outcome: string): void {
    this.hooks.inc({ workflow, hook, outcome });
  }

  scheduleFire(workflow: string, schedule: string, outcome: string): void {
    this.fires.inc({ workflow, schedule, outcome });
  }

  eventDelivery(outcome: string): void {
    this.deliveries.inc({ outcome });
  }
}
