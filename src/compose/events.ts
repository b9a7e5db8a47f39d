import type { RequestHandler } from 'express';
import type { Hub } from '../core/hub';
import type { RateLimiter } from '../ratelimit';
import { EventMetrics } from '../metrics/event-metrics';
import { createRedis } from '../redis/connection';
import { Events } from '../triggers/events';
import { hookRoute } from '../api/routes/hook-route';
import { CronScheduleDriver, type ScheduleDriver } from '../triggers/schedule-drivers';
import type { BuiltChannel } from './channels';
import type { Core, ServiceOptions } from './service-types';

/** Webhooks and schedules of an API process (issue 29): the parts, and the hook route for the HTTP server. */
export interface EventParts {
  events: Events;
  route: RequestHandler;
  /** Called by the HTTP server once its rate limiter exists; the hooks count on its store. */
  limiter(limiter: RateLimiter): void;
  /** The rate limiter, once the HTTP server made it. */
  readonly limits: () => RateLimiter | null;
}

export function composeEvents(core: Core, options: ServiceOptions, channels: readonly BuiltChannel[]): EventParts {
  const { config, models, drivers, logger } = core;
  const metrics = core.metrics ? new EventMetrics(core.metrics.registry) : null;
  const events = new Events({
    models,
    events: drivers.events,
    control: drivers.control,
    workflowByName: (name) => core.routing.workflowByName(name),
    deliveryFor: (name) => channels.find(({ adapter }) => adapter.name === name)?.adapter.delivery ?? null,
    secrets: options.env,
    settings: config.hooks,
    tracing: core.tracing,
    logger,
    observe: metrics
      ? { hook: (w, h, o) => metrics.hookRequest(w, h, o), schedule: (w, s, o) => metrics.scheduleFire(w, s, o), delivery: (o) => metrics.eventDelivery(o) }
      : undefined,
  });
  let limiter: RateLimiter | null = null;
  return { events, route: hookRoute(() => (limiter ? events.hooks() : null)), limiter: (ready) => (limiter = ready), limits: () => limiter };
}

/** Starts taking events in through `hub`, and the schedules (`hooks.schedules`): croner embedded, BullMQ job schedulers with Redis. */
export async function startEvents(core: Core, parts: EventParts, hub: Hub): Promise<void> {
  const { config, logger, lifecycle } = core;
  const limiter = parts.limits();
  if (!limiter) throw new Error('events: the HTTP server has not made its rate limiter');
  let driver: ScheduleDriver | null = null;
  let close: () => void = () => undefined;
  if (config.hooks.schedules && config.redis.url) {
    const connection = createRedis(config.redis.url, logger, 'schedules');
    const workerConnection = createRedis(config.redis.url, logger, 'schedules-worker', { blocking: true });
    // bullmq is loaded only with Redis (compose/drivers.ts does the same for the turn queue).
    const { BullScheduleDriver } = require('../triggers/bull-schedule-driver') as typeof import('../triggers/bull-schedule-driver');
    driver = new BullScheduleDriver(connection, workerConnection, `${config.redis.prefix}:bull`, parts.events.firer, logger);
    close = () => {
      connection.disconnect();
      workerConnection.disconnect();
    };
  } else if (config.hooks.schedules) {
    driver = new CronScheduleDriver(parts.events.firer, logger);
  }
  lifecycle.onStop({
    name: 'events',
    stop: async () => {
      await parts.events.stop();
      close();
    },
  });
  await parts.events.start(hub, limiter, driver);
}
