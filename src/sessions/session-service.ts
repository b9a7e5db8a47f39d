import { randomUUID } from 'node:crypto';
import { Op, type WhereOptions } from 'sequelize';
import { AppError } from '../core/errors';
import type { Principal } from '../core/principal';
import type { Models, SessionRow } from '../db/models';
import { decodeCursor, encodeCursor, messageView, sessionView } from './serialize';

export interface ListOptions {
  cursor?: string;
  limit: number;
}

/** Sessions and their history, as their owner (or an admin) sees them. */
export class SessionService {
  constructor(
    private readonly models: Models,
    /** Tools loaded in a new session (`agent.default_tools`). */
    private readonly defaultTools: readonly string[] = [],
  ) {}

  async create(principal: Principal, input: { name?: string; workflow?: string; config?: Record<string, unknown> }) {
    const workflow = input.workflow === undefined ? null : await this.models.Workflow.findOne({ where: { name: input.workflow } });
    if (input.workflow !== undefined && !workflow) {
      throw AppError.validation({ workflow: [{ code: 'unknown_workflow', message: `No workflow named "${input.workflow}".` }] });
    }
    const now = new Date();
    const row = await this.models.Session.create({
      id: randomUUID(),
      name: input.name ?? defaultName(now),
      owner_id: principal.userId,
      channel: 'web',
      session_key: null,
      active_workflow_id: workflow?.id ?? null,
      config: input.config ?? {},
      active_tools: [...this.defaultTools],
      current_turn_id: null,
      turn_phase: null,
      archived_at: null,
    });
    return sessionView(row);
  }

  async list(principal: Principal, options: ListOptions & { includeArchived: boolean }) {
    const where: WhereOptions<SessionRow> = {};
    if (principal.role !== 'admin') Object.assign(where, { owner_id: principal.userId });
    if (!options.includeArchived) Object.assign(where, { archived_at: null });
    const total = await this.models.Session.count({ where });
    const before = options.cursor === undefined ? null : cursorOrThrow(options.cursor);
    const rows = await this.models.Session.findAll({
      where: before === null ? where : { ...where, ordinal: { [Op.lt]: before } },
      order: [['ordinal', 'DESC']],
      limit: options.limit + 1,
    });
    return page(rows.map((row) => ({ row, view: sessionView(row) })), options.limit, total);
  }

  /** The session if the caller may see it; 404 SESSION_NOT_FOUND otherwise (not 403: no existence leak). */
  async visible(principal: Principal, id: string): Promise<SessionRow> {
    const row = await this.models.Session.findOne({ where: { id } });
    if (!row || (principal.role !== 'admin' && row.owner_id !== principal.userId)) {
      throw new AppError('SESSION_NOT_FOUND', `No session ${id}.`);
    }
    return row;
  }

  async get(principal: Principal, id: string) {
    return sessionView(await this.visible(principal, id));
  }

  async update(principal: Principal, id: string, input: { name?: string; config?: Record<string, unknown> }) {
    const row = await this.visible(principal, id);
    if (input.name !== undefined) row.name = input.name;
    if (input.config !== undefined) row.config = input.config;
    await row.save();
    return sessionView(row);
  }

  async archive(principal: Principal, id: string) {
    const row = await this.visible(principal, id);
    if (row.current_turn_id) throw new AppError('TURN_IN_PROGRESS', 'A turn is running; cancel it or wait for `done` first.');
    row.archived_at ??= new Date();
    await row.save();
    return sessionView(row);
  }

  async restore(principal: Principal, id: string) {
    const row = await this.visible(principal, id);
    row.archived_at = null;
    await row.save();
    return sessionView(row);
  }

  async history(principal: Principal, id: string, options: ListOptions) {
    await this.visible(principal, id);
    const where = { session_id: id };
    const total = await this.models.Message.count({ where });
    const after = options.cursor === undefined ? null : cursorOrThrow(options.cursor);
    const rows = await this.models.Message.findAll({
      where: after === null ? where : { ...where, ordinal: { [Op.gt]: after } },
      order: [['ordinal', 'ASC']],
      limit: options.limit + 1,
    });
    return page(rows.map((row) => ({ row, view: messageView(row) })), options.limit, total);
  }

  /** Deletes the history, keeping the newest `keepLast` messages. Refused while a turn runs. */
  async clear(principal: Principal, id: string, keepLast: number) {
    const session = await this.visible(principal, id);
    if (session.current_turn_id) throw new AppError('TURN_IN_PROGRESS', 'A turn is running; wait for `done` first.');
    const kept = await this.models.Message.findAll({
      where: { session_id: id },
      order: [['ordinal', 'DESC']],
      limit: keepLast,
      attributes: ['ordinal'],
    });
    const oldestKept = kept.at(-1)?.ordinal;
    const deleted = await this.models.Message.destroy({
      where: oldestKept === undefined ? { session_id: id } : { session_id: id, ordinal: { [Op.lt]: oldestKept } },
    });
    return { deleted, kept: kept.length };
  }
}

function cursorOrThrow(cursor: string): number {
  const ordinal = decodeCursor(cursor);
  if (ordinal === null) throw AppError.validation({ 'query.cursor': [{ code: 'invalid_cursor', message: 'Not a cursor from this list.' }] });
  return ordinal;
}

function page<V>(entries: { row: { ordinal: number }; view: V }[], limit: number, total: number) {
  const hasMore = entries.length > limit;
  const items = entries.slice(0, limit);
  return {
    items: items.map((entry) => entry.view),
    next_cursor: hasMore ? encodeCursor(items.at(-1)!.row.ordinal) : null,
    has_more: hasMore,
    total,
  };
}

/** `Session YYYY-MM-DD HH:MM` (UTC), the default name of decisions.md §3. */
function defaultName(now: Date): string {
  return `Session ${now.toISOString().slice(0, 16).replace('T', ' ')}`;
}
