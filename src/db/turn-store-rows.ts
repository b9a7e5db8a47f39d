import type { ToolState } from './models';
import type { MessageRecord, NewMessage, NewSession, SessionRecord, UsageToday } from './turn-store';

/**
 * How the turn store's records map to table rows, for both databases: the column lists (fixed, so a
 * statement's text never depends on which fields are set), the values of a new row, and rows read back.
 */
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
