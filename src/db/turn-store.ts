import type { MessageRole, ToolState } from './models';

/**
 * The session columns a turn and the session API read (the `sessions` table, without the columns
 * the hot path no longer writes). A sequelize `SessionRow` has the same shape.
 */
export interface SessionRecord {
  ordinal: number;
  id: string;
  name: string;
  owner_id: string;
  channel: string;
  session_key: string | null;
  active_workflow_id: string | null;
  config: Record<string, unknown>;
  active_tools: string[];
  input_tokens: number;
  output_tokens: number;
  archived_at: Date | null;
  tool_state: ToolState | null;
  memory_mode: string;
  memory_summary: string | null;
  memory_through: number | null;
  memory_updated_at: Date | null;
  answered_through: number | null;
  created_at: Date;
  updated_at: Date;
}

export interface MessageRecord {
  ordinal: number;
  id: string;
  session_id: string;
  role: MessageRole;
  content: string;
  tool_calls: unknown[];
  input_tokens: number;
  output_tokens: number;
  token_count: number | null;
  workflow_id: string | null;
  mode: string | null;
  metadata: Record<string, unknown>;
  reply_to: string | null;
  turn_id: string | null;
  /** Who sent a user message: a user id, or `<channel>:<contact id>` (usage counts their turn's tokens for them); null otherwise. */
  sender: string | null;
  created_at: Date;
}

export type NewMessage = Omit<MessageRecord, 'ordinal' | 'created_at'>;
export type NewSession = Omit<
  SessionRecord,
  | 'ordinal'
  | 'created_at'
  | 'updated_at'
  | 'input_tokens'
  | 'output_tokens'
  | 'memory_mode'
  | 'memory_summary'
  | 'memory_through'
  | 'memory_updated_at'
  | 'answered_through'
> & {
  /** Default `conversation`. */
  memory_mode?: string;
};

/** How a turn ends in the database: its reply (none when cancelled or failed) and the session's totals. */
export interface TurnEnd {
  sessionId: string;
  /** The turn (its user message): the session's `answered_through` moves up to that message. */
  turnId: string;
  reply: NewMessage | null;
  usage: { inputTokens: number; outputTokens: number };
  /** The last message this turn answered (a `collect` turn answers several): default the turn's own. */
  answeredThrough?: string;
  /** Messages that waited and were answered by this turn (`collect`): they become rows of the turn. */
  merged?: readonly string[];
  /** The workflow this turn routed to (the session's `active_workflow_id` from now on); undefined: unchanged. */
  activeWorkflowId?: string | null;
  /** The rolling summary after compaction; undefined: unchanged. */
  memory?: { summary: string; through: number };
}

/** What to read of today's usage with a turn's conversation, when daily budgets are on. */
export interface UsageQuery {
  /** The UTC day, `YYYY-MM-DD`. */
  day: string;
  /** The turn: its message's sender is the user whose tokens are summed (else the session's owner). */
  turnId: string;
  /** The workflows that have a budget: their tokens today. */
  workflowIds: readonly string[];
}

/** Tokens spent today (input + output), read in the conversation's own statement. */
export interface UsageToday {
  user: number;
  /** By workflow id; a workflow with nothing spent today is absent. */
  workflows: Record<string, number>;
}

/** Statements the store ran, for tests that hold the hot path to its budget. */
export interface StatementCount {
  reads: number;
  writes: number;
  /** Transactions committed (SQLite group commits several callers' writes in one). */
  commits: number;
  /** Messages a turn's conversation read returned (a worker that ran the session's last turn reads only the new ones). */
  messagesRead: number;
}

/**
 * The turn's hot path in the database, in as few statements as durability needs (issue 13):
 * accepting a message is one insert; running a turn reads its session and conversation in one
 * statement; ending it is one transaction (the reply and the session's totals). Prepared statements
 * on the database's own driver (sqlite3, pg); sequelize keeps the schema, migrations and admin CRUD.
 */
export interface TurnStore {
  readonly dialect: 'sqlite' | 'postgres';
  /**
   * Stores a user message that starts a turn, only if its session exists and is not archived
   * (checked in the same statement). Null when it was not stored.
   */
  insertTurnMessage(message: NewMessage): Promise<MessageRecord | null>;
  /**
   * The session and the messages after its memory summary (and after `after`, when given: a worker
   * that keeps the rest), oldest first; null when there is no session.
   */
  loadConversation(
    sessionId: string,
    after?: number,
    usage?: UsageQuery,
  ): Promise<{ session: SessionRecord; messages: MessageRecord[]; usage?: UsageToday } | null>;
  /**
   * Ends a turn in one transaction; returns the stored reply (null: a second reply to one message
   * is refused, or none was given) and the session's new `updated_at`.
   */
  endTurn(end: TurnEnd): Promise<{ reply: MessageRecord | null; updatedAt: Date }>;
  /** Messages of a turn's tool rounds (a round's calls as they start), so a redelivered turn resumes from them. */
  insertMessages(messages: NewMessage[]): Promise<void>;
  /**
   * Ends a tool round stored when its calls started, in one transaction: the calls with their
   * outcomes on the round's assistant message, and the results (one `tool` message each).
   */
  finishToolRound(roundId: string, calls: unknown[], results: NewMessage[]): Promise<void>;
  /** Forgets a user message that was stored but could not be queued. */
  deleteMessage(id: string): Promise<void>;
  /** Records a side-effecting tool call before it runs; false when this call of this turn was started before. */
  claimToolRun(run: { turnId: string; toolCallId: string; sessionId: string; name: string }): Promise<boolean>;
  finishToolRun(turnId: string, toolCallId: string, ok: boolean): Promise<void>;
  /** Saves a session's loaded tools and approvals (allow_all, disable). */
  saveSessionTools(sessionId: string, activeTools: string[], toolState: ToolState): Promise<void>;
  createSession(session: NewSession): Promise<SessionRecord>;
  findSession(id: string): Promise<SessionRecord | null>;
  /**
   * The session's messages that wait for a turn of their own (stored while another turn ran, not yet
   * answered), oldest first, at most `limit`. Empty for an archived or missing session.
   */
  owedTurns(sessionId: string, limit: number): Promise<{ id: string; ordinal: number }[]>;
  /**
   * Changes (text given) or drops (text null) a user message only while it still waits for its turn
   * (not yet answered); false when it is answered, gone or not a user message.
   */
  changeOwedMessage(id: string, text: string | null, tokenCount: number): Promise<boolean>;
  /** User messages whose turn never ended (their process died), oldest first. */
  unansweredTurns(): Promise<{ sessionId: string; messageId: string }[]>;
  readonly statements: StatementCount;
  close(): Promise<void>;
}

export const SESSION_COLUMNS = [
  'ordinal',
  'id',
  'name',
  'owner_id',
  'channel',
  'session_key',
  'active_workflow_id',
  'config',
  'active_tools',
  'input_tokens',
  'output_tokens',
  'archived_at',
  'tool_state',
  'memory_mode',
  'memory_summary',
  'memory_through',
  'memory_updated_at',
  'answered_through',
  'created_at',
  'updated_at',
] as const satisfies readonly (keyof SessionRecord)[];

export const MESSAGE_COLUMNS = [
  'ordinal',
  'id',
  'session_id',
  'role',
  'content',
  'tool_calls',
  'input_tokens',
  'output_tokens',
  'token_count',
  'workflow_id',
  'mode',
  'metadata',
  'reply_to',
  'turn_id',
  'sender',
  'created_at',
] as const satisfies readonly (keyof MessageRecord)[];

/** Columns an insert writes (ordinal is the database's). */
export const MESSAGE_INSERT_COLUMNS = MESSAGE_COLUMNS.filter((column) => column !== 'ordinal');

const JSON_COLUMNS = new Set(['config', 'active_tools', 'tool_state', 'tool_calls', 'metadata']);

/** Row values in column order, JSON columns as text (both drivers store JSON as text parameters). */
export function messageValues(message: NewMessage, createdAt: unknown): unknown[] {
  return MESSAGE_INSERT_COLUMNS.map((column) => {
    if (column === 'created_at') return createdAt;
    const value = message[column];
    return JSON_COLUMNS.has(column) ? JSON.stringify(value) : value;
  });
}

/**
 * Columns a new session's insert writes, always all of them and in this order: the statement's text
 * must not depend on which fields a caller set (PostgreSQL's named statements are one text per name).
 */
export const SESSION_INSERT_COLUMNS = [
  'id',
  'name',
  'owner_id',
  'channel',
  'session_key',
  'active_workflow_id',
  'config',
  'active_tools',
  'archived_at',
  'tool_state',
  'memory_mode',
  'created_at',
  'updated_at',
] as const satisfies readonly (keyof SessionRecord)[];

/** The column default of `sessions.memory_mode` (migration 0003), written when a new session names none. */
export const DEFAULT_MEMORY_MODE = 'conversation';

/** A new session's row values in SESSION_INSERT_COLUMNS order, JSON columns as text. */
export function sessionValues(session: NewSession, now: unknown): unknown[] {
  const row: Record<(typeof SESSION_INSERT_COLUMNS)[number], unknown> = {
    id: session.id,
    name: session.name,
    owner_id: session.owner_id,
    channel: session.channel,
    session_key: session.session_key,
    active_workflow_id: session.active_workflow_id,
    config: JSON.stringify(session.config),
    active_tools: JSON.stringify(session.active_tools),
    archived_at: session.archived_at,
    tool_state: session.tool_state === null ? null : JSON.stringify(session.tool_state),
    memory_mode: session.memory_mode ?? DEFAULT_MEMORY_MODE,
    created_at: now,
    updated_at: now,
  };
  return SESSION_INSERT_COLUMNS.map((column) => row[column]);
}

/** Reads a JSON column: SQLite gives text, PostgreSQL (json type) the parsed value. */
export function jsonColumn<T>(value: unknown, fallback: T): T {
  if (value === null || value === undefined) return fallback;
  return (typeof value === 'string' ? JSON.parse(value) : value) as T;
}

/** Parses a DATE column: SQLite keeps text, PostgreSQL gives a Date. */
export type DateColumn = (value: unknown) => Date | null;

/** A `sessions` row (as both drivers return it) as a record. */
export function rowToSession(row: Record<string, unknown>, date: DateColumn): SessionRecord {
  return {
    ordinal: row.ordinal as number,
    id: row.id as string,
    name: row.name as string,
    owner_id: row.owner_id as string,
    channel: row.channel as string,
    session_key: (row.session_key as string | null) ?? null,
    active_workflow_id: (row.active_workflow_id as string | null) ?? null,
    config: jsonColumn(row.config, {}),
    active_tools: jsonColumn(row.active_tools, []),
    input_tokens: row.input_tokens as number,
    output_tokens: row.output_tokens as number,
    archived_at: date(row.archived_at),
    tool_state: jsonColumn<ToolState | null>(row.tool_state, null),
    memory_mode: row.memory_mode as string,
    memory_summary: (row.memory_summary as string | null) ?? null,
    memory_through: (row.memory_through as number | null) ?? null,
    memory_updated_at: date(row.memory_updated_at),
    answered_through: (row.answered_through as number | null) ?? null,
    created_at: date(row.created_at)!,
    updated_at: date(row.updated_at)!,
  };
}

/** A `messages` row whose columns carry `prefix` (`m_` in joins) as a record. */
export function rowToMessage(row: Record<string, unknown>, prefix: string, date: DateColumn): MessageRecord {
  const value = (column: string) => row[`${prefix}${column}`];
  return {
    ordinal: value('ordinal') as number,
    id: value('id') as string,
    session_id: value('session_id') as string,
    role: value('role') as MessageRecord['role'],
    content: value('content') as string,
    tool_calls: jsonColumn(value('tool_calls'), []),
    input_tokens: value('input_tokens') as number,
    output_tokens: value('output_tokens') as number,
    token_count: (value('token_count') as number | null) ?? null,
    workflow_id: (value('workflow_id') as string | null) ?? null,
    mode: (value('mode') as string | null) ?? null,
    metadata: jsonColumn(value('metadata'), {}),
    reply_to: (value('reply_to') as string | null) ?? null,
    turn_id: (value('turn_id') as string | null) ?? null,
    sender: (value('sender') as string | null) ?? null,
    created_at: date(value('created_at'))!,
  };
}

/** Today's usage columns of a conversation row (`usage_user`, `usage_workflows` as JSON text or object). */
export function rowToUsage(row: Record<string, unknown>): UsageToday {
  const workflows = jsonColumn<Record<string, number | string> | null>(row.usage_workflows, null) ?? {};
  return { user: Number(row.usage_user ?? 0), workflows: Object.fromEntries(Object.entries(workflows).map(([id, tokens]) => [id, Number(tokens)])) };
}

/** The UTC day of a moment, as usage rows name it. */
export function usageDay(at: Date = new Date()): string {
  return at.toISOString().slice(0, 10);
}
