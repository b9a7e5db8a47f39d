/** The hub's REST shapes the CLI reads (decisions.md §1–3); fields it does not use are left out. */

export interface Page<T> {
  items: T[];
  next_cursor: string | null;
  has_more: boolean;
  total: number;
}

export interface SessionView {
  id: string;
  name: string;
  owner_id: string;
  channel: string;
  session_key: string | null;
  state: string;
  active_workflow_id: string | null;
  config: Record<string, unknown>;
  token_counts: { input_tokens: number; output_tokens: number; total_tokens: number };
  active_tools: string[];
  created_at: string;
  updated_at: string;
  archived_at: string | null;
}

/**
 * A tool call in the history: the protocol's vocabulary (`tool_name`, `input`, `duration_ms`,
 * `error`, decisions.md §3), or the model's (`name`, `arguments`) on hubs that store that.
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
  token_counts: { input_tokens: number; output_tokens: number; total_tokens: number };
  workflow_id: string | null;
  created_at: string;
}

export interface UserView {
  id: string;
  username: string;
  email: string;
  role: string;
  is_active: boolean;
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
