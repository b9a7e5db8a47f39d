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
  usageDay,
  DEFAULT_MEMORY_MODE,
  SESSION_COLUMNS,
  SESSION_INSERT_COLUMNS,
  sessionValues,
} from '../turn-store-rows';
import { fromSqliteDate, SqliteConnection, toSqliteDate } from './connection';
import { SqliteWriteThread, type WriteStep } from './write-thread';

export const SQLITE_TURN_STORE_DEFAULTS = {
  /** Read connections: a turn's conversation is read beside the writer, never queued behind it. */
  readers: 2,
  busyTimeoutMs: 5_000,
};

const placeholders = (count: number) => Array.from({ length: count }, () => '?').join(', ');
const MESSAGE_SELECT = MESSAGE_COLUMNS.map((column) => `m.${column} AS m_${column}`).join(', ');
const SESSION_SELECT = SESSION_COLUMNS.map((column) => `s.${column}`).join(', ');

const SQL = {
  createSession: `INSERT INTO sessions (${SESSION_INSERT_COLUMNS.join(', ')}) VALUES (${placeholders(SESSION_INSERT_COLUMNS.length)})`,
  insertTurnMessage: `INSERT INTO messages (${MESSAGE_INSERT_COLUMNS.join(', ')}) SELECT ${placeholders(MESSAGE_INSERT_COLUMNS.length)} WHERE EXISTS (SELECT 1 FROM sessions WHERE id = ? AND archived_at IS NULL)`,
  insertMessage: `INSERT INTO messages (${MESSAGE_INSERT_COLUMNS.join(', ')}) VALUES (${placeholders(MESSAGE_INSERT_COLUMNS.length)})`,
  insertReply: `INSERT INTO messages (${MESSAGE_INSERT_COLUMNS.join(', ')}) VALUES (${placeholders(MESSAGE_INSERT_COLUMNS.length)}) ON CONFLICT (reply_to) DO NOTHING`,
  loadConversation: `SELECT ${SESSION_SELECT}, ${MESSAGE_SELECT} FROM sessions s LEFT JOIN messages m ON m.session_id = s.id AND m.ordinal > MAX(COALESCE(s.memory_through, 0), ?) WHERE s.id = ? ORDER BY m.ordinal`,
  // Budgets on: today's tokens of the turn's sender and of the budgeted workflows, in the same
  // statement (uncorrelated subqueries: evaluated once, not per message row).
  loadConversationWithUsage: `SELECT ${SESSION_SELECT}, ${MESSAGE_SELECT},
    (SELECT COALESCE(SUM(u.input_tokens + u.output_tokens), 0) FROM usage_daily u WHERE u.day = ?
      AND u.user_key = COALESCE((SELECT sender FROM messages WHERE id = ?), (SELECT owner_id FROM sessions WHERE id = ?))) AS usage_user,
    (SELECT json_group_object(workflow_id, tokens) FROM (SELECT workflow_id, SUM(input_tokens + output_tokens) AS tokens FROM usage_daily
      WHERE day = ? AND workflow_id IN (SELECT value FROM json_each(?)) GROUP BY workflow_id)) AS usage_workflows
    FROM sessions s LEFT JOIN messages m ON m.session_id = s.id AND m.ordinal > MAX(COALESCE(s.memory_through, 0), ?) WHERE s.id = ? ORDER BY m.ordinal`,
  // A turn that ended without a reply (cancelled, failed) after the model spent tokens; a reply adds its own by trigger (migration 0009).
  usageWithoutReply: `INSERT INTO usage_daily (day, user_key, workflow_id, channel, input_tokens, output_tokens, turns)
    SELECT ?, COALESCE((SELECT sender FROM messages WHERE id = ?), s.owner_id), COALESCE(s.active_workflow_id, ''), s.channel, ?, ?, 0 FROM sessions s WHERE s.id = ?
    ON CONFLICT (day, user_key, workflow_id, channel) DO UPDATE SET input_tokens = input_tokens + excluded.input_tokens, output_tokens = output_tokens + excluded.output_tokens`,
  endTurn: `UPDATE sessions SET input_tokens = input_tokens + ?, output_tokens = output_tokens + ?,
    answered_through = MAX(COALESCE(answered_through, 0), COALESCE((SELECT ordinal FROM messages WHERE id = ?), 0)),
    active_workflow_id = CASE WHEN ? THEN ? ELSE active_workflow_id END,
    memory_summary = CASE WHEN ? THEN ? ELSE memory_summary END,
    memory_through = CASE WHEN ? THEN ? ELSE memory_through END,
    memory_updated_at = CASE WHEN ? THEN ? ELSE memory_updated_at END,
    updated_at = ? WHERE id = ?`,
  deleteMessage: 'DELETE FROM messages WHERE id = ?',
  setToolCalls: 'UPDATE messages SET tool_calls = ? WHERE id = ?',
  mergeIntoTurn: 'UPDATE messages SET turn_id = ? WHERE id = ?',
  owedTurns: `SELECT m.id AS id, m.ordinal AS ordinal FROM sessions s JOIN messages m ON m.session_id = s.id AND m.ordinal > COALESCE(s.answered_through, 0)
    WHERE s.id = ? AND s.archived_at IS NULL AND m.role = 'user' ORDER BY m.ordinal LIMIT ?`,
  editOwed: `UPDATE messages SET content = ?, token_count = ? WHERE id = ? AND role = 'user' AND ordinal > (SELECT COALESCE(answered_through, 0) FROM sessions WHERE id = messages.session_id)`,
  deleteOwed: `DELETE FROM messages WHERE id = ? AND role = 'user' AND ordinal > (SELECT COALESCE(answered_through, 0) FROM sessions WHERE id = messages.session_id)`,
  claimToolRun: 'INSERT INTO tool_runs (turn_id, tool_call_id, session_id, name, status, created_at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING',
  finishToolRun: 'UPDATE tool_runs SET status = ? WHERE turn_id = ? AND tool_call_id = ?',
  saveSessionTools: 'UPDATE sessions SET active_tools = ?, tool_state = ?, updated_at = ? WHERE id = ?',
  findSession: `SELECT ${SESSION_SELECT} FROM sessions s WHERE s.id = ?`,
  unansweredTurns: `SELECT m.id AS message_id, m.session_id AS session_id FROM sessions s JOIN messages m ON m.session_id = s.id AND m.ordinal > COALESCE(s.answered_through, 0)
    WHERE m.role = 'user' AND s.archived_at IS NULL ORDER BY m.ordinal`,
};

/**
 * The embedded database's hot path: one group-committing writer in a thread of its own
 * (write-thread.ts), a few readers, WAL, synchronous=NORMAL.
 */
export class SqliteTurnStore implements TurnStore {
  readonly dialect = 'sqlite' as const;
  private nextReader = 0;

  private constructor(
    private readonly writer: SqliteWriteThread,
    private readonly readers: SqliteConnection[],
    readonly statements: StatementCount,
  ) {}

  /** Opens the store on a migrated SQLite file (the writer first: it puts the file in WAL mode). */
  static async open(file: string, limits = SQLITE_TURN_STORE_DEFAULTS): Promise<SqliteTurnStore> {
    const statements: StatementCount = { reads: 0, writes: 0, commits: 0, messagesRead: 0 };
    const writer = await SqliteWriteThread.open(file, limits.busyTimeoutMs, statements);
    try {
      const readers = await Promise.all(
        Array.from({ length: limits.readers }, () => SqliteConnection.open(file, { readOnly: true, busyTimeoutMs: limits.busyTimeoutMs })),
      );
      return new SqliteTurnStore(writer, readers, statements);
    } catch (error) {
      await writer.close();
      throw error;
    }
  }

  async insertTurnMessage(message: NewMessage): Promise<MessageRecord | null> {
    const createdAt = new Date();
    const result = await this.writeOne(SQL.insertTurnMessage, [...messageValues(message, toSqliteDate(createdAt)), message.session_id]);
    return result.changes === 1 ? { ...message, ordinal: result.lastID, created_at: createdAt } : null;
  }

  async loadConversation(
    sessionId: string,
    after = 0,
    usage?: UsageQuery,
  ): Promise<{ session: SessionRecord; messages: MessageRecord[]; usage?: UsageToday } | null> {
    const rows = usage
      ? await this.read<Record<string, unknown>>(SQL.loadConversationWithUsage, [
          usage.day,
          usage.turnId,
          sessionId,
          usage.day,
          JSON.stringify(usage.workflowIds),
          after,
          sessionId,
        ])
      : await this.read<Record<string, unknown>>(SQL.loadConversation, [after, sessionId]);
    if (rows.length === 0) return null;
    const session = toSession(rows[0]!);
    const messages = rows.filter((row) => row.m_ordinal !== null).map((row) => toMessage(row, 'm_'));
    this.statements.messagesRead += messages.length;
    return usage ? { session, messages, usage: rowToUsage(rows[0]!) } : { session, messages };
  }

  async endTurn(end: TurnEnd): Promise<{ reply: MessageRecord | null; updatedAt: Date }> {
    const now = new Date();
    const steps: WriteStep[] = [];
    // Replied before (a redelivered turn): the insert changes nothing, and nothing is counted twice.
    if (end.reply) steps.push({ sql: SQL.insertReply, parameters: messageValues(end.reply, toSqliteDate(now)), stopUnlessChanged: true });
    const workflowChanged = end.activeWorkflowId !== undefined;
    const memory = end.memory;
    for (const id of end.merged ?? []) steps.push({ sql: SQL.mergeIntoTurn, parameters: [end.turnId, id] });
    steps.push({
      sql: SQL.endTurn,
      parameters: [
        end.usage.inputTokens,
        end.usage.outputTokens,
        end.answeredThrough ?? end.turnId,
        workflowChanged ? 1 : 0,
        end.activeWorkflowId ?? null,
        memory ? 1 : 0,
        memory?.summary ?? null,
        memory ? 1 : 0,
        memory?.through ?? null,
        memory ? 1 : 0,
        memory ? toSqliteDate(now) : null,
        toSqliteDate(now),
        end.sessionId,
      ],
    });
    if (!end.reply && end.usage.inputTokens + end.usage.outputTokens > 0) {
      steps.push({ sql: SQL.usageWithoutReply, parameters: [usageDay(now), end.turnId, end.usage.inputTokens, end.usage.outputTokens, end.sessionId] });
    }
    const [inserted] = await this.writer.write(steps);
    if (!end.reply) return { reply: null, updatedAt: now };
    return { reply: inserted!.changes === 0 ? null : { ...end.reply, ordinal: inserted!.lastID, created_at: now }, updatedAt: now };
  }

  async insertMessages(messages: NewMessage[]): Promise<void> {
    const createdAt = toSqliteDate(new Date());
    await this.writer.write(messages.map((message) => ({ sql: SQL.insertMessage, parameters: messageValues(message, createdAt) })));
  }

  async finishToolRound(roundId: string, calls: unknown[], results: NewMessage[]): Promise<void> {
    const createdAt = toSqliteDate(new Date());
    await this.writer.write([
      { sql: SQL.setToolCalls, parameters: [JSON.stringify(calls), roundId] },
      ...results.map((message) => ({ sql: SQL.insertMessage, parameters: messageValues(message, createdAt) })),
    ]);
  }

  async deleteMessage(id: string): Promise<void> {
    await this.writeOne(SQL.deleteMessage, [id]);
  }

  async claimToolRun(run: { turnId: string; toolCallId: string; sessionId: string; name: string }): Promise<boolean> {
    const result = await this.writeOne(SQL.claimToolRun, [run.turnId, run.toolCallId, run.sessionId, run.name, 'running', toSqliteDate(new Date())]);
    return result.changes === 1;
  }

  async finishToolRun(turnId: string, toolCallId: string, ok: boolean): Promise<void> {
    await this.writeOne(SQL.finishToolRun, [ok ? 'done' : 'failed', turnId, toolCallId]);
  }

  async saveSessionTools(sessionId: string, activeTools: string[], toolState: ToolState): Promise<void> {
    await this.writeOne(SQL.saveSessionTools, [JSON.stringify(activeTools), JSON.stringify(toolState), toSqliteDate(new Date()), sessionId]);
  }

  async createSession(session: NewSession): Promise<SessionRecord> {
    const now = new Date();
    const result = await this.writeOne(SQL.createSession, sessionValues(session, toSqliteDate(now)));
    return {
      ...session,
      ordinal: result.lastID,
      input_tokens: 0,
      output_tokens: 0,
      memory_mode: session.memory_mode ?? DEFAULT_MEMORY_MODE,
      memory_summary: null,
      memory_through: null,
      memory_updated_at: null,
      answered_through: null,
      created_at: now,
      updated_at: now,
    };
  }

  async findSession(id: string): Promise<SessionRecord | null> {
    const [row] = await this.read<Record<string, unknown>>(SQL.findSession, [id]);
    return row ? toSession(row) : null;
  }

  async owedTurns(sessionId: string, limit: number): Promise<{ id: string; ordinal: number }[]> {
    return this.read<{ id: string; ordinal: number }>(SQL.owedTurns, [sessionId, limit]);
  }

  async changeOwedMessage(id: string, text: string | null, tokenCount: number): Promise<boolean> {
    const result = await (text === null ? this.writeOne(SQL.deleteOwed, [id]) : this.writeOne(SQL.editOwed, [text, tokenCount, id]));
    return result.changes === 1;
  }

  async unansweredTurns(): Promise<{ sessionId: string; messageId: string }[]> {
    const rows = await this.read<{ message_id: string; session_id: string }>(SQL.unansweredTurns, []);
    return rows.map((row) => ({ sessionId: row.session_id, messageId: row.message_id }));
  }

  async close(): Promise<void> {
    await this.writer.close();
    await Promise.all(this.readers.map((connection) => connection.close()));
  }

  private async writeOne(sql: string, parameters: readonly unknown[]): Promise<{ lastID: number; changes: number }> {
    const [result] = await this.writer.write([{ sql, parameters }]);
    return result!;
  }

  private read<T>(sql: string, parameters: readonly unknown[]): Promise<T[]> {
    this.statements.reads += 1;
    const reader = this.readers[this.nextReader++ % this.readers.length]!;
    return reader.all<T>(sql, parameters);
  }
}

const toSession = (row: Record<string, unknown>) => rowToSession(row, fromSqliteDate);
const toMessage = (row: Record<string, unknown>, prefix: string) => rowToMessage(row, prefix, fromSqliteDate);
