import { Op, type WhereOptions } from 'sequelize';
import type { AuditEventRow, Models } from '../db/models';
import { cursorOrThrow, keysetPage } from '../core/page-cursor';
import type { Actor } from '../core/actor';
import type { AuditKind } from '../core/audit';

export interface AuditFilter {
  /** `user:<id>`, `slack:U123`, `system:timeout` (as rows name their actor). */
  actor?: string;
  kind?: string;
  from?: Date;
  to?: Date;
  sessionId?: string;
  cursor?: string;
  limit: number;
}

/** One audit row as GET /api/v1/audit shows it. */
export function auditView(row: AuditEventRow) {
  return {
    id: row.id,
    at: new Date(row.created_at).toISOString(),
    kind: row.kind as AuditKind,
    actor: { key: row.actor, kind: row.actor_kind as Actor['kind'], name: row.actor_name },
    subject: row.subject,
    action: row.action,
    session_id: row.session_id,
    details: typeof row.details === 'string' ? (JSON.parse(row.details) as Record<string, unknown>) : row.details,
  };
}

/** Reading the audit trail (newest first) and keeping it within `audit.retention_days`. */
export class AuditService {
  constructor(private readonly models: Pick<Models, 'AuditEvent'>) {}

  async list(filter: AuditFilter) {
    const where: WhereOptions<AuditEventRow>[] = [];
    if (filter.actor !== undefined) where.push({ actor: filter.actor });
    if (filter.kind !== undefined) where.push({ kind: filter.kind });
    if (filter.sessionId !== undefined) where.push({ session_id: filter.sessionId });
    if (filter.from !== undefined) where.push({ created_at: { [Op.gte]: filter.from } });
    if (filter.to !== undefined) where.push({ created_at: { [Op.lt]: filter.to } });
    const matching = { [Op.and]: where };
    const before = filter.cursor === undefined ? null : cursorOrThrow(filter.cursor);
    const [rows, total] = await Promise.all([
      this.models.AuditEvent.findAll({
        where: before === null ? matching : { [Op.and]: [...where, { ordinal: { [Op.lt]: before } }] },
        order: [['ordinal', 'DESC']],
        limit: filter.limit + 1,
      }),
      this.models.AuditEvent.count({ where: matching }),
    ]);
    return keysetPage(
      rows.map((row) => ({ row, view: auditView(row) })),
      filter.limit,
      total,
    );
  }

  /** Deletes rows older than `days` (0: keeps everything); returns how many went. */
  async prune(days: number, now = new Date()): Promise<number> {
    if (days <= 0) return 0;
    return this.models.AuditEvent.destroy({ where: { created_at: { [Op.lt]: new Date(now.getTime() - days * 86_400_000) } } });
  }
}
