import type { MessageRow, SessionRow } from '../db/models';

/** Token totals as the API shows them on sessions and messages. */
export function tokenCounts(input: number, output: number) {
  return { input_tokens: input, output_tokens: output, total_tokens: input + output };
}

/** The session record of decisions.md §3: objects and arrays never null, nullable scalars present. */
export function sessionView(row: SessionRow) {
  return {
    id: row.id,
    name: row.name,
    owner_id: row.owner_id,
    channel: row.channel,
    session_key: row.session_key,
    state: row.state,
    active_workflow_id: row.active_workflow_id,
    config: row.config ?? {},
    token_counts: tokenCounts(row.input_tokens, row.output_tokens),
    active_tools: row.active_tools ?? [],
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
    archived_at: row.archived_at ? row.archived_at.toISOString() : null,
  };
}

export function messageView(row: MessageRow) {
  return {
    id: row.id,
    session_id: row.session_id,
    role: row.role,
    content: row.content,
    tool_calls: row.tool_calls ?? [],
    token_counts: tokenCounts(row.input_tokens, row.output_tokens),
    workflow_id: row.workflow_id,
    created_at: row.created_at.toISOString(),
  };
}

export type SessionView = ReturnType<typeof sessionView>;
export type MessageView = ReturnType<typeof messageView>;

/** Opaque list cursors: the row ordinal, base64url-encoded. */
export function encodeCursor(ordinal: number): string {
  return Buffer.from(`o:${ordinal}`).toString('base64url');
}

export function decodeCursor(cursor: string): number | null {
  // At most 15 digits: a longer number is not a row ordinal (and 400 digits is Infinity, which SQL refuses).
  const match = /^o:(\d{1,15})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  return match ? Number(match[1]) : null;
}
