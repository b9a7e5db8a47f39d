import { QueryTypes, type Sequelize } from 'sequelize';
import { usageDay } from '../db/turn-store-rows';

/** The dimensions usage rows are kept by; GET /api/v1/usage groups by any of them. */
export const USAGE_DIMENSIONS = ['day', 'user', 'workflow', 'channel'] as const;
export type UsageDimension = (typeof USAGE_DIMENSIONS)[number];

const COLUMN: Record<UsageDimension, string> = { day: 'day', user: 'user_key', workflow: 'workflow_id', channel: 'channel' };

export interface UsageFilter {
  /** First and last UTC day, `YYYY-MM-DD`, both included. */
  from: string;
  to: string;
  /** A user id, a username, or a chat contact (`slack:U123`). */
  user?: string;
  /** A workflow's name. */
  workflow?: string;
  channel?: string;
  groupBy: readonly UsageDimension[];
  offset: number;
  limit: number;
}

export interface UsageRow {
  day?: string;
  user?: { key: string; username: string | null };
  workflow?: { id: string; name: string | null } | null;
  channel?: string;
  input_tokens: number;
  output_tokens: number;
  total_tokens: number;
  /** Turns answered (a cancelled or failed turn's tokens count, the turn does not). */
  turns: number;
}

/**
 * Reads `usage_daily` (filled in the turns' own statements, see migration 0009): tokens per day,
 * user, workflow and channel, summed over the dimensions not grouped by; newest day first, then
 * most tokens first.
 */
export class UsageService {
  constructor(private readonly sequelize: Sequelize) {}

  async list(filter: UsageFilter): Promise<{ rows: UsageRow[]; total: number }> {
    const where = ['day >= :from', 'day <= :to'];
    const replacements: Record<string, unknown> = { from: filter.from, to: filter.to, limit: filter.limit, offset: filter.offset };
    if (filter.user !== undefined) {
      where.push('user_key IN (:users)');
      replacements.users = await this.userKeys(filter.user);
    }
    if (filter.workflow !== undefined) {
      const ids = await this.workflowIds(filter.workflow);
      if (ids.length === 0) return { rows: [], total: 0 }; // no workflow of that name: no usage
      where.push('workflow_id IN (:workflows)');
      replacements.workflows = ids;
    }
    if (filter.channel !== undefined) {
      where.push('channel = :channel');
      replacements.channel = filter.channel;
    }
    const groups = filter.groupBy.map((dimension) => COLUMN[dimension]);
    const select = [...groups, 'SUM(input_tokens) AS input_tokens', 'SUM(output_tokens) AS output_tokens', 'SUM(turns) AS turns'].join(', ');
    const grouped = groups.length > 0 ? ` GROUP BY ${groups.join(', ')}` : '';
    const from = `FROM usage_daily WHERE ${where.join(' AND ')}${grouped}`;
    const order = [...(groups.includes('day') ? ['day DESC'] : []), 'SUM(input_tokens + output_tokens) DESC', ...groups.map((column) => `${column} ASC`)].join(
      ', ',
    );
    const [rows, [counted]] = await Promise.all([
      this.sequelize.query<Record<string, unknown>>(`SELECT ${select} ${from} ORDER BY ${order} LIMIT :limit OFFSET :offset`, {
        type: QueryTypes.SELECT,
        replacements,
      }),
      this.sequelize.query<{ total: number | string }>(`SELECT COUNT(*) AS total FROM (SELECT 1 AS one ${from}) AS grouped`, {
        type: QueryTypes.SELECT,
        replacements,
      }),
    ]);
    // A group over no rows still answers one row of nulls and zeros in SQL: it is no usage.
    const found = groups.length === 0 && rows[0]?.input_tokens === null ? [] : rows;
    const names = await this.names(found);
    return { rows: found.map((row) => view(row, filter.groupBy, names)), total: groups.length === 0 ? found.length : Number(counted?.total ?? 0) };
  }

  /**
   * Deletes the days before the last `days` UTC days (0: keeps everything); returns how many rows
   * went. A day is kept whole while any of it is within the window.
   */
  async prune(days: number, now = new Date()): Promise<number> {
    if (days <= 0) return 0;
    const cutoff = usageDay(new Date(now.getTime() - days * 86_400_000));
    return this.sequelize.query('DELETE FROM usage_daily WHERE day < :cutoff', { type: QueryTypes.BULKDELETE, replacements: { cutoff } });
  }

  /** The keys a user filter matches: itself, and the id of a user of that name. */
  private async userKeys(user: string): Promise<string[]> {
    const rows = await this.sequelize.query<{ id: string }>('SELECT id FROM users WHERE username = :user', { type: QueryTypes.SELECT, replacements: { user } });
    return [user, ...rows.map((row) => String(row.id))];
  }

  private async workflowIds(name: string): Promise<string[]> {
    const rows = await this.sequelize.query<{ id: string }>('SELECT id FROM workflows WHERE name = :name', { type: QueryTypes.SELECT, replacements: { name } });
    return rows.map((row) => String(row.id));
  }

  /** Usernames of the user ids and names of the workflow ids among the rows (two reads at most). */
  private async names(rows: Record<string, unknown>[]): Promise<{ users: Map<string, string>; workflows: Map<string, string> }> {
    const userIds = [...new Set(rows.map((row) => row.user_key).filter((key): key is string => typeof key === 'string' && UUID.test(key)))];
    const workflowIds = [...new Set(rows.map((row) => row.workflow_id).filter((id): id is string => typeof id === 'string' && id !== ''))];
    const [users, workflows] = await Promise.all([
      userIds.length > 0
        ? this.sequelize.query<{ id: string; username: string }>('SELECT id, username FROM users WHERE id IN (:ids)', {
            type: QueryTypes.SELECT,
            replacements: { ids: userIds },
          })
        : [],
      workflowIds.length > 0
        ? this.sequelize.query<{ id: string; name: string }>('SELECT id, name FROM workflows WHERE id IN (:ids)', {
            type: QueryTypes.SELECT,
            replacements: { ids: workflowIds },
          })
        : [],
    ]);
    return {
      users: new Map(users.map((row) => [String(row.id), row.username])),
      workflows: new Map(workflows.map((row) => [String(row.id), row.name])),
    };
  }
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function view(
  row: Record<string, unknown>,
  groupBy: readonly UsageDimension[],
  names: { users: Map<string, string>; workflows: Map<string, string> },
): UsageRow {
  const input = Number(row.input_tokens ?? 0);
  const output = Number(row.output_tokens ?? 0);
  const result: UsageRow = { input_tokens: input, output_tokens: output, total_tokens: input + output, turns: Number(row.turns ?? 0) };
  if (groupBy.includes('day')) result.day = String(row.day);
  if (groupBy.includes('user')) result.user = { key: String(row.user_key), username: names.users.get(String(row.user_key)) ?? null };
  if (groupBy.includes('workflow')) {
    const id = String(row.workflow_id);
    result.workflow = id === '' ? null : { id, name: names.workflows.get(id) ?? null };
  }
  if (groupBy.includes('channel')) result.channel = String(row.channel);
  return result;
}
