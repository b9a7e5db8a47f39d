import { z } from 'zod';
import { AppError } from '../../core/errors';
import type { Events } from '../../triggers/events';
import type { ApiModule } from '../app';
import type { ApiRouter } from '../endpoint';
import { listQueryShape } from '../pagination';
import { listPage } from '../schemas/envelope';

const tags = ['events'];
const STATUSES = ['received', 'verified', 'turn', 'delivered', 'failed'] as const;

const deliverySchema = z
  .object({
    id: z.uuid(),
    workflow: z.string(),
    source: z.enum(['webhook', 'schedule']),
    name: z.string().describe('The hook or schedule.'),
    external_id: z.string().describe("The sender's delivery id (`X-GitHub-Delivery`, `webhook-id`), or the schedule's due time."),
    thread_key: z.string().nullable(),
    deliver: z.string().describe('`slack:<channel id>`, `telegram:<chat id>`.'),
    status: z.enum(STATUSES).describe('received → verified → turn → delivered (with `platform_message_id`) or failed (with `reason`).'),
    session_id: z.uuid().nullable(),
    turn_id: z.uuid().nullable(),
    platform_message_id: z.string().nullable(),
    attempts: z.number().int().describe('Posts tried (a platform failure is retried with backoff).'),
    reason: z.string().nullable(),
    body_bytes: z.number().int().nullable(),
    created_at: z.iso.datetime(),
    updated_at: z.iso.datetime(),
  })
  .meta({ id: 'EventDelivery' });

const scheduleSchema = z
  .object({
    workflow: z.string(),
    name: z.string(),
    cron: z.string(),
    timezone: z.string(),
    deliver: z.string(),
    paused: z.boolean(),
    next_fire_at: z.iso.datetime().nullable(),
    last_fire_at: z.iso.datetime().nullable(),
    last_outcome: z.string().nullable().describe('The last fire: `turn`, `delivered`, `failed`, or `missed` (skipped: everything was down).'),
    last_delivery_id: z.uuid().nullable(),
  })
  .meta({ id: 'EventSchedule' });

const scheduleParams = z.object({ workflow: z.string().min(1).max(64), name: z.string().min(1).max(64) });

/** Deliveries of webhooks and schedules, and the schedules (issue 29); `POST /hooks/{workflow}/{hook}` itself is a raw route (src/triggers/hook-route.ts). */
export function eventRoutes(events: Events): ApiModule {
  return (api) => {
    deliveryRoutes(api, events);
    scheduleRoutes(api, events);
  };
}

function deliveryRoutes(api: ApiRouter, events: Events): void {
  api.add({
    method: 'get',
    path: '/hooks/deliveries',
    summary: 'Deliveries of webhooks and schedules, newest first',
    tags,
    access: 'admin',
    query: z.object({
      ...listQueryShape,
      workflow: z.string().max(64).optional(),
      status: z.enum(STATUSES).optional(),
      source: z.enum(['webhook', 'schedule']).optional(),
    }),
    response: { status: 200, description: 'Deliveries, newest first.', data: listPage(deliverySchema) },
    handler: ({ query }) => events.records.deliveries(query),
  });
  api.add({
    method: 'get',
    path: '/hooks/deliveries/{id}',
    summary: 'One delivery',
    tags,
    access: 'admin',
    params: z.object({ id: z.uuid() }),
    errors: ['NOT_FOUND'],
    response: { status: 200, description: 'The delivery.', data: deliverySchema },
    handler: async ({ params }) => {
      const found = await events.records.delivery(params.id);
      if (!found) throw new AppError('NOT_FOUND', `No delivery ${params.id}.`);
      return found;
    },
  });
}

function scheduleRoutes(api: ApiRouter, events: Events): void {
  api.add({
    method: 'get',
    path: '/schedules',
    summary: 'The schedules of every workflow, with their next and last fire and outcome',
    tags,
    access: 'admin',
    query: z.object({ workflow: z.string().max(64).optional() }),
    response: { status: 200, description: 'Every declared schedule (one page).', data: listPage(scheduleSchema) },
    handler: async ({ query }) => {
      const items = await events.records.schedules(query.workflow);
      return { items, next_cursor: null, has_more: false, total: items.length };
    },
  });
  for (const action of ['pause', 'resume'] as const) {
    api.add({
      method: 'post',
      path: `/schedules/{workflow}/{name}/${action}`,
      summary: action === 'pause' ? 'Pause a schedule (its fires are skipped until resumed)' : 'Resume a paused schedule',
      tags,
      access: 'admin',
      params: scheduleParams,
      errors: ['NOT_FOUND'],
      response: { status: 200, description: 'The schedule.', data: scheduleSchema },
      handler: async ({ params }) => {
        await events.firer.setPaused(params.workflow, params.name, action === 'pause');
        return (await events.records.schedules(params.workflow)).find((item) => item.name === params.name)!;
      },
    });
  }
  api.add({
    method: 'post',
    path: '/schedules/{workflow}/{name}/run',
    summary: 'Fire a schedule now (paused or not)',
    tags,
    access: 'admin',
    params: scheduleParams,
    errors: ['NOT_FOUND'],
    response: { status: 202, description: 'The fire was stored and its turn started.', data: z.object({ delivery_id: z.uuid() }) },
    handler: async ({ params }) => ({ delivery_id: (await events.firer.run(params.workflow, params.name)).id }),
  });
}
