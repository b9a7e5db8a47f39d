import { randomUUID } from 'node:crypto';
import { UniqueConstraintError } from 'sequelize';
import { channelOwner, formatSessionKey } from '../core/channel';
import type { Hub } from '../core/hub';
import type { EventDeliveryRow, Models } from '../db/models';
import type { Logger } from '../logs/logger';
import { renderTemplate, threadKeyOf } from '../workflows/event-templates';
import type { Tracing } from '../tracing/tracing';
import { SpanKind, SpanStatusCode } from '../tracing/tracing';
import type { DeliveryClaims } from './delivery-claims';
import type { EventDeliverer } from './event-delivery';

/** The channel events enter as (decisions.md §8): in `InboundMessage.channel` and session keys `events::…`. */
export const EVENTS_CHANNEL = 'events';

/** What an event is made of before it is stored: where it comes from, its templates and their scope. */
export interface EventInput {
  workflow: string;
  source: 'webhook' | 'schedule';
  name: string;
  /** The sender's delivery id, or the schedule's due time: one row per (workflow, source, name, external id). */
  externalId: string;
  bodyHash: string | null;
  payload: string | null;
  deliver: string;
  message: string;
  thread: string | undefined;
  /** What the templates see (`payload`, `headers`, `schedule`, `fire_time`). */
  scope: Record<string, unknown>;
  /** The thread key when there is no `thread` template. */
  defaultThread: string;
}

/** `events::<workflow>:<hook or schedule>:<thread key>`: one session per thread key. */
export function eventSessionKey(workflow: string, name: string, threadKey: string): string {
  return formatSessionKey(EVENTS_CHANNEL, `${workflow}:${name}:${threadKey}`);
}

/**
 * Stores an event and starts its turn (issue 29): the templates rendered, a delivery row recorded
 * (received → verified, once per delivery id), the message ingested as channel `events` in the
 * thread key's session, routed to its workflow (`metadata.workflow`), then its answer delivered.
 */
export class EventIntake {
  constructor(
    private readonly models: Models,
    private readonly hub: () => Hub | null,
    private readonly deliverer: EventDeliverer,
    private readonly claims: DeliveryClaims,
    private readonly logger: Logger,
    private readonly tracing: Tracing | null = null,
  ) {}

  /** Stores the event; null when its delivery id was stored already (the existing row is returned as `existing`). */
  async store(input: EventInput): Promise<{ row: EventDeliveryRow; created: boolean; text: string; threadKey: string }> {
    const text = await renderTemplate(input.message, input.scope);
    const threadKey = threadKeyOf(input.thread ? await renderTemplate(input.thread, input.scope) : input.defaultThread) || threadKeyOf(input.defaultThread);
    const key = { workflow: input.workflow, source: input.source, name: input.name, external_id: input.externalId };
    try {
      const row = await this.models.EventDelivery.create({
        id: randomUUID(),
        ...key,
        body_hash: input.bodyHash,
        payload: input.payload,
        thread_key: threadKey,
        deliver: input.deliver,
        status: 'verified',
        session_id: null,
        turn_id: null,
        platform_message_id: null,
        reason: null,
        message: text,
        ...this.claims.lease(),
      });
      return { row, created: true, text, threadKey };
    } catch (error) {
      if (!(error instanceof UniqueConstraintError)) throw error;
      const row = await this.models.EventDelivery.findOne({ where: key });
      if (!row) throw error;
      return { row, created: false, text, threadKey };
    }
  }

  /**
   * Ingests the stored event's message and hands its turn to the deliverer (not awaited), inside the
   * event's span (`event webhook deploys/github`): the turn's `ingest events` span is its child, and
   * it ends when the delivery is settled. `resumed`: taken up after its process stopped.
   */
  async start(row: EventDeliveryRow, text: string, resumed = false): Promise<void> {
    const span =
      this.tracing?.startSpan(`event ${row.source} ${row.workflow}/${row.name}`, {
        kind: SpanKind.CONSUMER,
        attributes: {
          'switchboard.workflow': row.workflow,
          'switchboard.event.source': row.source,
          'switchboard.event.name': row.name,
          'switchboard.delivery_id': row.id,
          'switchboard.deliver': row.deliver,
          ...(resumed ? { 'switchboard.event.resumed': true } : {}),
        },
      }) ?? null;
    this.claims.hold(row.id);
    const sessionKey = eventSessionKey(row.workflow, row.name, row.thread_key ?? row.id);
    const ingest = () => this.ingest(row, text, sessionKey);
    const started = span && this.tracing ? await this.tracing.within(span, ingest) : await ingest();
    span?.setAttributes({ 'switchboard.session_id': row.session_id ?? '', 'switchboard.turn_id': row.turn_id ?? '' });
    const delivered = started ? this.deliverer.deliver(row, sessionKey, resumed) : Promise.resolve();
    void delivered.finally(() => {
      this.claims.release(row.id);
      span?.setAttributes({ 'switchboard.delivery.status': row.status, 'switchboard.delivery.attempts': row.attempts });
      if (row.status === 'failed') span?.setStatus({ code: SpanStatusCode.ERROR, message: row.reason ?? 'failed' });
      span?.end();
    });
  }

  /** Resumes a delivery this process took up (its process stopped): starts its turn, or follows the one it started. */
  resume(row: EventDeliveryRow): void {
    const sessionKey = eventSessionKey(row.workflow, row.name, row.thread_key ?? row.id);
    if (row.status === 'verified' && row.message !== null) return void this.start(row, row.message, true);
    if (row.status === 'verified') {
      this.claims.release(row.id);
      return void row.update({ status: 'failed', reason: 'no turn: the message was not kept', claimed_by: null, claimed_until: null });
    }
    void this.deliverer.deliver(row, sessionKey, true).finally(() => this.claims.release(row.id));
  }

  private async ingest(row: EventDeliveryRow, text: string, sessionKey: string): Promise<boolean> {
    const hub = this.hub();
    try {
      if (!hub) throw new Error('the hub is not ready');
      // A resumed delivery ingests again: the same external id finds the message it stored before, if any.
      const ingested = await hub.ingest({
        channel: EVENTS_CHANNEL,
        sessionKey,
        sender: { userId: channelOwner(EVENTS_CHANNEL), displayName: `${row.source} ${row.workflow}/${row.name}` },
        text: text.trim() === '' ? `(${row.source} ${row.name}: empty message)` : text,
        mode: 'normal',
        metadata: { workflow: row.workflow, event: { source: row.source, name: row.name, delivery_id: row.id } },
        externalId: row.id,
      });
      await row.update({ status: 'turn', session_id: ingested.sessionId, turn_id: ingested.userMessageId || null });
      return true;
    } catch (error) {
      this.logger.error({ err: error, delivery_id: row.id }, 'events: the event could not start a turn');
      const reason = `no turn: ${error instanceof Error ? error.message : String(error)}`.slice(0, 500);
      await row.update({ status: 'failed', reason, claimed_by: null, claimed_until: null });
      return false;
    }
  }
}
