import { randomUUID } from 'node:crypto';
import { actorKey } from '../core/actor';
import type { AuditEvent, AuditSink } from '../core/audit';
import type { Models } from '../db/models';
import type { Logger } from '../logs/logger';

export const AUDIT_LOG_DEFAULTS = {
  /** Rows recorded within this long are written together (one multi-row insert). */
  flushDelayMs: 200,
  /** A batch this large is written at once. */
  maxBatch: 100,
  /** Rows kept while the database refuses them; beyond, the oldest are dropped (and logged). */
  maxPending: 10_000,
};

/**
 * The audit trail's writer: `record` only queues the row, and what was recorded within
 * `flushDelayMs` is written in one insert, so a confirmation never waits for its audit row and a
 * burst of auto-approvals costs one statement. `close` writes what is left (shutdown). A failed
 * write is logged and retried with the next batch.
 */
export class AuditLog implements AuditSink {
  private pending: ReturnType<typeof toRow>[] = [];
  private timer: NodeJS.Timeout | null = null;
  private writing: Promise<void> = Promise.resolve();

  constructor(
    private readonly models: Pick<Models, 'AuditEvent'>,
    private readonly logger: Logger,
    private readonly limits = AUDIT_LOG_DEFAULTS,
  ) {}

  record(event: AuditEvent): void {
    this.pending.push(toRow(event));
    if (this.pending.length > this.limits.maxPending) {
      const dropped = this.pending.splice(0, this.pending.length - this.limits.maxPending);
      this.logger.error({ dropped: dropped.length }, 'audit rows dropped: the database has refused them for too long');
    }
    if (this.pending.length >= this.limits.maxBatch) void this.flush();
    else this.timer ??= setTimeout(() => void this.flush(), this.limits.flushDelayMs);
  }

  /** Writes everything recorded so far; resolves once it is stored (or the failure logged). */
  flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.writing = this.writing.then(() => this.write());
    return this.writing;
  }

  async close(): Promise<void> {
    await this.flush();
  }

  private async write(): Promise<void> {
    const batch = this.pending;
    if (batch.length === 0) return;
    this.pending = [];
    try {
      await this.models.AuditEvent.bulkCreate(batch);
    } catch (error) {
      this.logger.error({ err: error, rows: batch.length }, 'could not write audit rows; retrying with the next batch');
      this.pending = [...batch, ...this.pending];
      this.timer ??= setTimeout(() => void this.flush(), this.limits.flushDelayMs * 10);
    }
  }
}

function toRow(event: AuditEvent) {
  return {
    id: randomUUID(),
    created_at: event.at ?? new Date(),
    kind: event.kind,
    actor: actorKey(event.actor),
    actor_kind: event.actor.kind,
    actor_name: event.actor.name ?? null,
    subject: event.subject ?? null,
    action: event.action,
    session_id: event.sessionId ?? null,
    details: event.details ?? {},
  };
}
