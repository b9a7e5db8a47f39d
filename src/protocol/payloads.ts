/**
 * REST shapes both clients (the CLI and the Web UI) read (decisions.md §1–§3). Fields a client
 * does not use may be left out; clients ignore fields they do not know.
 */
import type { AgentState } from './frames';

/** A list page (decisions.md §1). */
export interface Page<T> {
  items: T[];
  next_cursor: string | null;
  has_more: boolean;
  total: number;
}

export type Role = 'admin' | 'user';

export interface TokenCounts {
  input_tokens: number;
  output_tokens: number;
  total_tokens: number;
}

export interface UserView {
  id: string;
  username: string;
  email: string;
  role: Role;
  is_active: boolean;
  created_at: string;
}

/** What `POST /auth/login`, `/auth/register` and `/auth/refresh` return. */
export interface TokenPair {
  access_token: string;
  refresh_token: string;
  token_type: 'bearer';
  expires_in: number;
  user: UserView;
}

export interface SessionView {
  id: string;
  name: string;
  owner_id: string;
  channel: string;
  session_key: string | null;
  state: AgentState;
  active_workflow_id: string | null;
  config: Record<string, unknown>;
  token_counts: TokenCounts;
  active_tools: string[];
  created_at: string;
  updated_at: string;
  archived_at: string | null;
}

/**
 * A tool call in the history: the protocol's vocabulary (`tool_call_id`, `tool_name`, `input`,
 * `output`, `duration_ms`, `error`; decisions.md §3), or the model's (`id`, `name`, `arguments`)
 * on hubs that stored that.
 */
export interface ToolCallView {
  id?: string;
  name?: string;
  arguments?: string;
  tool_call_id?: string;
  tool_name?: string;
  input?: unknown;
  output?: unknown;
  duration_ms?: number | null;
  error?: string | null;
}

export interface MessageView {
  id: string;
  session_id: string;
  role: 'user' | 'assistant' | 'system' | 'tool';
  content: string;
  tool_calls: ToolCallView[];
  token_counts: TokenCounts;
  workflow_id: string | null;
  /** A reply: the workflow that answered (its name then) and why it was picked, as its `done` said; else null. */
  workflow: string | null;
  routing_reason: string | null;
  /** A user message: the turn that answers it (its own id, or the turn it was merged into by mid-turn `collect`); else null. Optional: older hubs. */
  turn_id?: string | null;
  /** A reply: the turn (user message id) it answers; else null. Optional: older hubs. */
  reply_to?: string | null;
  /** A user message in the history: `waiting` until its turn ended (running or queued), then `answered`; else null. */
  status?: 'answered' | 'waiting' | null;
  created_at: string;
}

export interface ApiKeyView {
  id: string;
  user_id: string;
  label: string;
  key_prefix: string;
  created_at: string;
  expires_at: string | null;
  last_used_at: string | null;
  revoked_at: string | null;
}

/** One tool of an MCP server in `GET /mcp/servers` (admin). */
export interface McpToolPayload {
  /** The server's own name for it (pinned as `<server>.<tool>`). */
  name: string;
  /** What the model sees: `<server>__<tool>`. */
  model_name: string;
  description: string;
  requires_confirmation: boolean;
  /** Its definition changed since it was pinned: withheld until approved. */
  changed: boolean;
}

/** One MCP server of config.yaml in `GET /mcp/servers` (admin). */
export interface McpServerPayload {
  name: string;
  transport: 'stdio' | 'http';
  state: 'starting' | 'ready' | 'failed' | 'stopped';
  confirm: string;
  restarts: number;
  last_error: string | null;
  tools: McpToolPayload[];
}
