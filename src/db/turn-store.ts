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
