import type { WhereOptions } from 'sequelize';
import type { DeliveryStatus, EventDeliveryRow, Models, WorkflowRow } from '../db/models';
import { cursorOrThrow, encodeCursor } from '../core/page-cursor';
import { eventsOf } from './event-service';
import { nextFires } from './schedule-firer';

/** A delivery as `GET /hooks/deliveries` shows it (the body is not shown: it may hold anything). */
export function deliveryView(row: EventDeliveryRow) {
  return {
    id: row.id,
    workflow: row.workflow,
    source: row.source,
    name: row.name,
    external_id: row.external_id,
    thread_key: row.thread_key,
    deliver: row.deliver,
    status: row.status,
    session_id: row.session_id,
    turn_id: row.turn_id,
    platform_message_id: row.platform_message_id,
    attempts: row.attempts,
    reason: row.reason,
    body_bytes: row.payload === null ? null : Buffer.byteLength(row.payload),
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}
export type DeliveryView = ReturnType<typeof deliveryView>;

/** Reads of deliveries and schedules for the API, the CLI and the Web UI. */
export class EventRecords {
  constructor(
    private readonly models: Models,
    private readonly workflows: () => Promise<WorkflowRow[]>,
  ) {}

  /** Newest first, filtered by workflow, status and source. */
  async deliveries(filter: {
    workflow?: string;
    status?: DeliveryStatus;
    source?: 'webhook' | 'schedule';
    cursor?: string;
    limit: number;
  }): Promise<{ items: DeliveryView[]; next_cursor: string | null; has_more: boolean; total: number }> {
    const where: WhereOptions<EventDeliveryRow> = {
      ...(filter.workflow ? { workflow: filter.workflow } : {}),
      ...(filter.status ? { status: filter.status } : {}),
      ...(filter.source ? { source: filter.source } : {}),
    };
    // The cursor is the offset of the next page (deliveries are newest first, so rows come in front).
    const offset = filter.cursor === undefined ? 0 : cursorOrThrow(filter.cursor);
    const { rows, count } = await this.models.EventDelivery.findAndCountAll({
      where,
      order: [
        ['created_at', 'DESC'],
        ['id', 'ASC'],
      ],
      offset,
      limit: filter.limit,
    });
    const end = offset + rows.length;
    return { items: rows.map(deliveryView), next_cursor: end < count ? encodeCursor(end) : null, has_more: end < count, total: count };
  }

  async delivery(id: string): Promise<DeliveryView | null> {
    const row = await this.models.EventDelivery.findOne({ where: { id } });
    return row ? deliveryView(row) : null;
  }

  /** Every declared schedule with its state: paused, the next and last fire, and the last outcome. */
  async schedules(workflow?: string) {
    const rows = (await this.workflows()).filter((row) => !workflow || row.name === workflow);
    const states = await this.models.EventSchedule.findAll();
    const items = [];
    for (const row of rows) {
      for (const schedule of eventsOf(row).schedules) {
        const state = states.find((candidate) => candidate.workflow === row.name && candidate.name === schedule.name);
        const last = state?.last_delivery_id ? await this.models.EventDelivery.findOne({ where: { id: state.last_delivery_id } }) : null;
        const paused = state?.paused ?? false;
        items.push({
          workflow: row.name,
          name: schedule.name,
          cron: schedule.cron,
          timezone: schedule.timezone ?? 'UTC',
          deliver: schedule.deliver,
          paused,
          next_fire_at: paused ? null : (nextFires(schedule, new Date(), 1)[0]?.toISOString() ?? null),
          last_fire_at: state?.last_fire_at ? state.last_fire_at.toISOString() : null,
          last_outcome: state?.last_outcome === 'missed' ? 'missed' : (last?.status ?? state?.last_outcome ?? null),
          last_delivery_id: state?.last_delivery_id ?? null,
        });
      }
    }
    return items;
  }
}
