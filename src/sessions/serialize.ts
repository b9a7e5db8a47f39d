import type { AgentState } from '../core/events';
import { runningTurn, type LiveTurn } from '../core/turns';
import type { MessageRecord, SessionRecord } from '../db/turn-store';
import { toStoredToolCall } from './stored-tool-calls';

/** Token totals as the API shows them on sessions and messages. */
export function tokenCounts(input: number, output: number) {
  return { input_tokens: input, output_tokens: output, total_tokens: input + output };
}

/**
 * The session record of decisions.md §3: objects and arrays never null, nullable scalars present.
 * `state` is the running turn's (from the turn registry), `idle` between turns; `active_tools` are
 * the tools the model is offered: the active workflow's pinned list when it has one.
 */
export function sessionView(row: Omit<SessionRecord, 'answered_through' | 'ordinal'>, held: LiveTurn | null = null, pinnedTools?: readonly string[]) {
  const live = runningTurn(held);
  const state: AgentState = live?.state ?? 'idle';
  return {
    id: row.id,
    name: row.name,
    owner_id: row.owner_id,
    channel: row.channel,
    session_key: row.session_key,
    state,
    active_workflow_id: row.active_workflow_id,
    config: row.config ?? {},
    token_counts: tokenCounts(row.input_tokens, row.output_tokens),
    active_tools: [...(pinnedTools ?? row.active_tools ?? [])],
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
    archived_at: row.archived_at ? row.archived_at.toISOString() : null,
    pending_confirmation: live?.pending ? pendingView(live.pending) : null,
  };
}

/** What the turn waits for, in the `tool_confirm_request` payload's own fields. */
function pendingView(pending: NonNullable<LiveTurn['pending']>) {
  const base = { confirmation_id: pending.confirmation_id, tool: pending.tool, parameters: pending.parameters, message: pending.message };
  // An approval (issue 30) says who may approve and how far it got; decide it with POST /approvals/{id}.
  return pending.approval ? { ...base, approval: pending.approval } : base;
}

/** A stored message as the history shows it; tool calls in the protocol's own vocabulary (decisions.md §3). */
export function messageView(row: Omit<MessageRecord, 'ordinal' | 'token_count' | 'sender'>) {
  return {
    id: row.id,
    session_id: row.session_id,
    role: row.role,
    content: row.content,
    tool_calls: (row.tool_calls ?? []).map(toStoredToolCall),
    token_counts: tokenCounts(row.input_tokens, row.output_tokens),
    workflow_id: row.workflow_id,
    ...routingOf(row),
    ...turnOf(row),
    /** Set by the history (it knows how far the session's turns answered); null elsewhere. */
    status: null as 'answered' | 'waiting' | null,
    created_at: row.created_at.toISOString(),
  };
}

/**
 * Which turn a message belongs to: a user message, the turn that answers it (its own id, or the
 * turn of an earlier waiting message that answered it too: mid-turn `collect`); a reply, the turn it
 * answers. Clients place a reply under its question with it (a reply stored after messages that
 * queued meanwhile is listed after them) and match a turn's frames to it after a reload.
 */
function turnOf(row: Pick<MessageRecord, 'id' | 'role' | 'reply_to' | 'turn_id'>): { turn_id: string | null; reply_to: string | null } {
  if (row.role === 'user') return { turn_id: row.turn_id ?? row.id, reply_to: null };
  if (row.role === 'assistant') return { turn_id: null, reply_to: row.reply_to ?? null };
  return { turn_id: null, reply_to: null };
}

/**
 * Which workflow answered a reply and why (`metadata`, `contact`, `trigger`, `default_workflow`,
 * `session`, `default`, `command`), as its `done` payload said, stored with the reply; null on
 * other messages and on replies stored before the reason was kept.
 */
function routingOf(row: Pick<MessageRecord, 'role' | 'metadata'>): { workflow: string | null; routing_reason: string | null } {
  if (row.role !== 'assistant') return { workflow: null, routing_reason: null };
  const metadata = row.metadata ?? {};
  if (metadata.command) return { workflow: null, routing_reason: 'command' };
  return {
    workflow: typeof metadata.workflow === 'string' ? metadata.workflow : null,
    routing_reason: typeof metadata.routing_reason === 'string' ? metadata.routing_reason : null,
  };
}

export type SessionView = ReturnType<typeof sessionView>;
export type MessageView = ReturnType<typeof messageView>;
