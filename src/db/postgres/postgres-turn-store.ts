import { Pool, type QueryResultRow } from 'pg';
import type { ToolState } from '../models';
import {
  type MessageRecord,
  type NewMessage,
  type NewSession,
  type SessionRecord,
  type StatementCount,
  type TurnEnd,
  type TurnStore,
  type UsageQuery,
  type UsageToday,
} from '../turn-store';
import {
  MESSAGE_COLUMNS,
  MESSAGE_INSERT_COLUMNS,
  messageValues,
  rowToMessage,
  rowToSession,
  rowToUsage,
  SESSION_COLUMNS,
  SESSION_INSERT_COLUMNS,
  sessionValues,
  type DateColumn,
} from '../turn-store-rows';

/** PostgreSQL types of the inserted message columns, so `INSERT … SELECT $n` parameters are typed. */
const MESSAGE_TYPES: Record<(typeof MESSAGE_INSERT_COLUMNS)[number], string> = {
  id: 'uuid',
  session_id: 'uuid',
  role: 'varchar',
  content: 'text',
  tool_calls: 'json',
  input_tokens: 'integer',
  output_tokens: 'integer',
  token_count: 'integer',
  workflow_id: 'varchar',
  mode: 'varchar',
  metadata: 'json',
  reply_to: 'uuid',
  turn_id: 'uuid',
  sender: 'varchar',
  created_at: 'timestamptz',
};

const parameters = (from: number, count: number) => Array.from({ length: count }, (_, index) => `$${from + index}`);
const typedParameters = MESSAGE_INSERT_COLUMNS.map((column, index) => `$${index + 1}::${MESSAGE_TYPES[column]}`).join(', ');
const MESSAGE_LIST = MESSAGE_INSERT_COLUMNS.join(', ');
const COUNT = MESSAGE_INSERT_COLUMNS.length;
const MESSAGE_SELECT = MESSAGE_COLUMNS.map((column) => `m.${column} AS m_${column}`).join(', ');
const SESSION_SELECT = SESSION_COLUMNS.map((column) => `s.${column}`).join(', ');
const END_TURN_SET = (first: number) => `input_tokens = input_tokens + $${first}, output_tokens = output_tokens + $${first + 1},
  answered_through = GREATEST(COALESCE(answered_through, 0), COALESCE((SELECT ordinal FROM messages WHERE id = $${first + 2}::uuid), 0)),
  active_workflow_id = CASE WHEN $${first + 3}::boolean THEN $${first + 4}::varchar ELSE active_workflow_id END,
  memory_summary = CASE WHEN $${first + 5}::boolean THEN $${first + 6}::text ELSE memory_summary END,
  memory_through = CASE WHEN $${first + 5}::boolean THEN $${first + 7}::integer ELSE memory_through END,
  memory_updated_at = CASE WHEN $${first + 5}::boolean THEN $${first + 8}::timestamptz ELSE memory_updated_at END,
  updated_at = $${first + 8}::timestamptz`;

/** `$n` of a message column in a statement that starts with the message's values. */
const messageParameter = (column: (typeof MESSAGE_INSERT_COLUMNS)[number]) => `$${MESSAGE_INSERT_COLUMNS.indexOf(column) + 1}`;
/** Adds a row's tokens to its day, user, workflow and channel (usage_daily, migration 0009). */
const ADD_USAGE = `ON CONFLICT (day, user_key, workflow_id, channel) DO UPDATE SET
  input_tokens = usage_daily.input_tokens + EXCLUDED.input_tokens, output_tokens = usage_daily.output_tokens + EXCLUDED.output_tokens, turns = usage_daily.turns + EXCLUDED.turns`;
const USAGE_COLUMNS = 'usage_daily (day, user_key, workflow_id, channel, input_tokens, output_tokens, turns)';

/**
 * Named statements: PostgreSQL plans each once per connection, and a name stands for one text for
 * the life of the connection (pg refuses a second text under a name already prepared). So every
 * text here is fixed at load time; SQL whose shape varies (multi-row inserts) goes unnamed.
 */
const STATEMENTS = {
  insertTurnMessage: `INSERT INTO messages (${MESSAGE_LIST}) SELECT ${typedParameters} WHERE EXISTS (SELECT 1 FROM sessions WHERE id = $${COUNT + 1} AND archived_at IS NULL) RETURNING ordinal`,
  insertMessage: `INSERT INTO messages (${MESSAGE_LIST}) VALUES (${parameters(1, COUNT).join(', ')})`,
  loadConversation: `SELECT ${SESSION_SELECT}, ${MESSAGE_SELECT} FROM sessions s LEFT JOIN messages m ON m.session_id = s.id AND m.ordinal > GREATEST(COALESCE(s.memory_through, 0), $2::integer) WHERE s.id = $1 ORDER BY m.ordinal`,
  // Budgets on: today's tokens of the turn's sender and of the budgeted workflows, in the same statement.
  loadConversationWithUsage: `SELECT ${SESSION_SELECT}, ${MESSAGE_SELECT},
    (SELECT COALESCE(SUM(u.input_tokens + u.output_tokens), 0) FROM usage_daily u WHERE u.day = $3
      AND u.user_key = COALESCE((SELECT sender FROM messages WHERE id = $4::uuid), (SELECT owner_id FROM sessions WHERE id = $1))) AS usage_user,
    (SELECT json_object_agg(workflow_id, tokens) FROM (SELECT workflow_id, SUM(input_tokens + output_tokens) AS tokens FROM usage_daily
      WHERE day = $3 AND workflow_id = ANY($5::varchar[]) GROUP BY workflow_id) w) AS usage_workflows
    FROM sessions s LEFT JOIN messages m ON m.session_id = s.id AND m.ordinal > GREATEST(COALESCE(s.memory_through, 0), $2::integer) WHERE s.id = $1 ORDER BY m.ordinal`,
  // One statement, so one implicit transaction: the reply, the session only if the reply was new,
  // and the reply's tokens in its day's usage row (its sender's, its workflow's, its channel's).
  endTurnWithReply: `WITH reply AS (
      INSERT INTO messages (${MESSAGE_LIST}) VALUES (${parameters(1, COUNT).join(', ')}) ON CONFLICT (reply_to) DO NOTHING RETURNING ordinal
    ), touched AS (
      UPDATE sessions SET ${END_TURN_SET(COUNT + 1)} WHERE id = $${COUNT + 10} AND EXISTS (SELECT 1 FROM reply) RETURNING owner_id, channel
    ), usage AS (
      INSERT INTO ${USAGE_COLUMNS}
      SELECT to_char(${messageParameter('created_at')}::timestamptz AT TIME ZONE 'UTC', 'YYYY-MM-DD'),
        COALESCE((SELECT sender FROM messages WHERE id = ${messageParameter('reply_to')}::uuid), t.owner_id), COALESCE(${messageParameter('workflow_id')}::varchar, ''), t.channel,
        ${messageParameter('input_tokens')}::integer, ${messageParameter('output_tokens')}::integer, 1
      FROM touched t ${ADD_USAGE}
    ) SELECT (SELECT ordinal FROM reply) AS ordinal`,
  // A cancelled or failed turn: its session's totals, and the tokens the model spent anyway.
  endTurnWithoutReply: `WITH touched AS (
      UPDATE sessions SET ${END_TURN_SET(1)} WHERE id = $10 RETURNING owner_id, channel, active_workflow_id
    ), usage AS (
      INSERT INTO ${USAGE_COLUMNS}
      SELECT to_char($9::timestamptz AT TIME ZONE 'UTC', 'YYYY-MM-DD'), COALESCE((SELECT sender FROM messages WHERE id = $3::uuid), t.owner_id),
        COALESCE(t.active_workflow_id, ''), t.channel, $1::integer, $2::integer, 0
      FROM touched t WHERE $1::integer + $2::integer > 0 ${ADD_USAGE}
    ) SELECT 1`,
  deleteMessage: 'DELETE FROM messages WHERE id = $1',
  mergeIntoTurn: 'UPDATE messages SET turn_id = $1 WHERE id = ANY($2::uuid[])',
  owedTurns: `SELECT m.id AS id, m.ordinal AS ordinal FROM sessions s JOIN messages m ON m.session_id = s.id AND m.ordinal > COALESCE(s.answered_through, 0)
    WHERE s.id = $1 AND s.archived_at IS NULL AND m.role = 'user' ORDER BY m.ordinal LIMIT $2`,
  editOwed: `UPDATE messages SET content = $1, token_count = $2 WHERE id = $3 AND role = 'user' AND ordinal > (SELECT COALESCE(answered_through, 0) FROM sessions WHERE id = messages.session_id)`,
  deleteOwed: `DELETE FROM messages WHERE id = $1 AND role = 'user' AND ordinal > (SELECT COALESCE(answered_through, 0) FROM sessions WHERE id = messages.session_id)`,
  claimToolRun: 'INSERT INTO tool_runs (turn_id, tool_call_id, session_id, name, status, created_at) VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING',
  finishToolRun: 'UPDATE tool_runs SET status = $1 WHERE turn_id = $2 AND tool_call_id = $3',
  saveSessionTools: 'UPDATE sessions SET active_tools = $1, tool_state = $2, updated_at = $3 WHERE id = $4',
  createSession: `INSERT INTO sessions (${SESSION_INSERT_COLUMNS.join(', ')}) VALUES (${parameters(1, SESSION_INSERT_COLUMNS.length).join(', ')}) RETURNING ${SESSION_COLUMNS.join(', ')}`,
  findSession: `SELECT ${SESSION_SELECT} FROM sessions s WHERE s.id = $1`,
  unansweredTurns: `SELECT m.id AS message_id, m.session_id AS session_id FROM sessions s JOIN messages m ON m.session_id = s.id AND m.ordinal > COALESCE(s.answered_through, 0)
    WHERE m.role = 'user' AND s.archived_at IS NULL ORDER BY m.ordinal`,
} as const;

type StatementName = keyof typeof STATEMENTS;

/** The scaled-out database's hot path: its own pg pool, named prepared statements, one statement per step. */
export class PostgresTurnStore implements TurnStore {
  readonly dialect = 'postgres' as const;
  readonly statements: StatementCount = { reads: 0, writes: 0, commits: 0, messagesRead: 0 };
  private readonly pool: Pool;

  constructor(url: string, poolMax: number) {
    this.pool = new Pool({ connectionString: url, max: poolMax, idleTimeoutMillis: 10_000 });
    // An idle client's error (the server restarted) must not crash the process; the next query reconnects.
    this.pool.on('error', () => undefined);
  }

  async insertTurnMessage(message: NewMessage): Promise<MessageRecord | null> {
    const createdAt = new Date();
    const result = await this.write<{ ordinal: number }>('insertTurnMessage', [...messageValues(message, createdAt), message.session_id]);
    return result.rows[0] ? { ...message, ordinal: result.rows[0].ordinal, created_at: createdAt } : null;
  }

  async loadConversation(
    sessionId: string,
    after = 0,
    usage?: UsageQuery,
  ): Promise<{ session: SessionRecord; messages: MessageRecord[]; usage?: UsageToday } | null> {
    const rows = usage
      ? await this.read<Record<string, unknown>>('loadConversationWithUsage', [sessionId, after, usage.day, usage.turnId, usage.workflowIds])
      : await this.read<Record<string, unknown>>('loadConversation', [sessionId, after]);
    if (rows.length === 0) return null;
    const loaded = { session: toSession(rows[0]!), messages: rows.filter((row) => row.m_ordinal !== null).map((row) => toMessage(row, 'm_')) };
    this.statements.messagesRead += loaded.messages.length;
    return usage ? { ...loaded, usage: rowToUsage(rows[0]!) } : loaded;
  }

  async endTurn(end: TurnEnd): Promise<{ reply: MessageRecord | null; updatedAt: Date }> {
    const now = new Date();
    const session = [
      end.usage.inputTokens,
      end.usage.outputTokens,
      end.answeredThrough ?? end.turnId,
      end.activeWorkflowId !== undefined,
      end.activeWorkflowId ?? null,
      end.memory !== undefined,
      end.memory?.summary ?? null,
      end.memory?.through ?? null,
      now,
      end.sessionId,
    ];
    if (!end.reply) {
      await this.write('endTurnWithoutReply', session);
      await this.merge(end);
      return { reply: null, updatedAt: now };
    }
    const result = await this.write<{ ordinal: number | null }>('endTurnWithReply', [...messageValues(end.reply, now), ...session]);
    const ordinal = result.rows[0]?.ordinal ?? null;
    if (ordinal !== null) await this.merge(end);
    return { reply: ordinal === null ? null : { ...end.reply, ordinal, created_at: now }, updatedAt: now };
  }

  /**
   * Files the messages a `collect` turn answered under it (after the turn ended: a crash in between
   * leaves them answered, only grouped by their own ordinal in later prompts).
   */
  private async merge(end: TurnEnd): Promise<void> {
    if (end.merged && end.merged.length > 0) await this.write('mergeIntoTurn', [end.turnId, end.merged]);
  }

  async insertMessages(messages: NewMessage[]): Promise<void> {
    if (messages.length === 0) return;
    const createdAt = new Date();
    // One multi-row insert: one statement, one implicit transaction.
    const rows = messages.map((_, index) => `(${parameters(index * COUNT + 1, COUNT).join(', ')})`).join(', ');
    this.statements.writes += 1;
    await this.pool.query(
      `INSERT INTO messages (${MESSAGE_LIST}) VALUES ${rows}`,
      messages.flatMap((message) => messageValues(message, createdAt)),
    );
  }

  async finishToolRound(roundId: string, calls: unknown[], results: NewMessage[]): Promise<void> {
    const createdAt = new Date();
    // One statement, so one implicit transaction: the round's outcomes and its results together.
    const rows = results.map((_, index) => `(${parameters(index * COUNT + 3, COUNT).join(', ')})`).join(', ');
    const insert = results.length > 0 ? `INSERT INTO messages (${MESSAGE_LIST}) VALUES ${rows}` : 'SELECT 1';
    this.statements.writes += 1;
    await this.pool.query(`WITH round AS (UPDATE messages SET tool_calls = $1::json WHERE id = $2::uuid) ${insert}`, [
      JSON.stringify(calls),
      roundId,
      ...results.flatMap((message) => messageValues(message, createdAt)),
    ]);
  }

  async deleteMessage(id: string): Promise<void> {
    await this.write('deleteMessage', [id]);
  }

  async claimToolRun(run: { turnId: string; toolCallId: string; sessionId: string; name: string }): Promise<boolean> {
    const result = await this.write('claimToolRun', [run.turnId, run.toolCallId, run.sessionId, run.name, 'running', new Date()]);
    return result.rowCount === 1;
  }

  async finishToolRun(turnId: string, toolCallId: string, ok: boolean): Promise<void> {
    await this.write('finishToolRun', [ok ? 'done' : 'failed', turnId, toolCallId]);
  }

  async saveSessionTools(sessionId: string, activeTools: string[], toolState: ToolState): Promise<void> {
    await this.write('saveSessionTools', [JSON.stringify(activeTools), JSON.stringify(toolState), new Date(), sessionId]);
  }

  async createSession(session: NewSession): Promise<SessionRecord> {
    const result = await this.write<SessionRow>('createSession', sessionValues(session, new Date()));
    return toSession(result.rows[0]!);
  }

  async findSession(id: string): Promise<SessionRecord | null> {
    const [row] = await this.read<Record<string, unknown>>('findSession', [id]);
    return row ? toSession(row) : null;
  }

  async owedTurns(sessionId: string, limit: number): Promise<{ id: string; ordinal: number }[]> {
    return (await this.read<{ id: string; ordinal: string | number }>('owedTurns', [sessionId, limit])).map((row) => ({
      id: row.id,
      ordinal: Number(row.ordinal),
    }));
  }

  async changeOwedMessage(id: string, text: string | null, tokenCount: number): Promise<boolean> {
    const result = text === null ? await this.write('deleteOwed', [id]) : await this.write('editOwed', [text, tokenCount, id]);
    return result.rowCount === 1;
  }

  async unansweredTurns(): Promise<{ sessionId: string; messageId: string }[]> {
    const rows = await this.read<{ message_id: string; session_id: string }>('unansweredTurns', []);
    return rows.map((row) => ({ sessionId: row.session_id, messageId: row.message_id }));
  }

  async close(): Promise<void> {
    await this.pool.end();
  }

  private async read<T extends QueryResultRow>(name: StatementName, values: unknown[]): Promise<T[]> {
    this.statements.reads += 1;
    return (await this.pool.query<T>({ name, text: STATEMENTS[name], values })).rows;
  }

  private write<T extends QueryResultRow>(name: StatementName, values: unknown[]) {
    this.statements.writes += 1;
    this.statements.commits += 1;
    return this.pool.query<T>({ name, text: STATEMENTS[name], values });
  }
}

type SessionRow = Record<string, unknown>;

const pgDate: DateColumn = (value) => (value === null || value === undefined ? null : (value as Date));
const toSession = (row: Record<string, unknown>) => rowToSession(row, pgDate);
const toMessage = (row: Record<string, unknown>, prefix: string) => rowToMessage(row, prefix, pgDate);
