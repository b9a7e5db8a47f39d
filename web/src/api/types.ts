/** The hub's wire shapes the UI reads (decisions.md §2–§4); fields it does not use are left out. */

export type Role = 'admin' | 'user';

export interface User {
  id: string;
  username: string;
  email: string;
  role: Role;
  is_active: boolean;
  created_at: string;
}

export interface TokenPair {
  access_token: string;
  refresh_token: string;
  token_type: 'bearer';
  expires_in: number;
  user: User;
}

export interface Page<T> {
  items: T[];
  next_cursor: string | null;
  has_more: boolean;
  total: number;
}

export const AGENT_STATES = ['idle', 'thinking', 'analyzing', 'researching', 'deep_thinking', 'writing', 'delegating', 'done', 'error'] as const;
export type AgentState = (typeof AGENT_STATES)[number];
export const TURN_MODES = ['normal', 'think', 'delegate'] as const;
export type TurnMode = (typeof TURN_MODES)[number];

export interface TokenCounts {
  input_tokens: number;
  output_tokens: number;
  total_tokens: number;
}

export interface Session {
  id: string;
  name: string;
  owner_id: string;
  channel: string;
  session_key: string | null;
  state: AgentState;
  active_workflow_id: string | null;
  token_counts: TokenCounts;
  active_tools: string[];
  created_at: string;
  updated_at: string;
  archived_at: string | null;
}

export interface HistoryToolCall {
  tool_call_id: string;
  tool_name: string;
  input: Record<string, unknown>;
  output?: unknown;
  duration_ms: number | null;
  error: string | null;
}

export interface Message {
  id: string;
  session_id: string;
  role: 'user' | 'assistant' | 'system' | 'tool';
  content: string;
  tool_calls: HistoryToolCall[];
  workflow_id: string | null;
  created_at: string;
}

export interface Workflow {
  id: string;
  name: string;
  description: string;
  system_prompt: string;
  tool_list: string;
  knowledge_base_ids: string[];
  triggers: { keywords: string[]; regex: string[]; contact_tags: string[]; min_score?: number };
  binding_channels: string[];
  created_at: string;
  updated_at: string;
}

export interface BindingChannel {
  channel: string;
  workflows: string[];
}

export interface RoutingTestResult {
  workflow: string | null;
  reason: 'metadata' | 'contact' | 'trigger' | 'session' | 'default';
  score: number | null;
  rule: string;
  channel: string;
  workflows: {
    name: string;
    bound: boolean;
    score: number;
    min_score: number;
    matches: boolean;
    matched: { keywords: string[]; regex: string[]; contact_tags: string[] };
  }[];
}

export interface Collection {
  id: string;
  name: string;
  document_count: number;
  created_at: string;
}

export interface KnowledgeDocument {
  id: string;
  collection_id: string;
  title: string;
  source: string | null;
  media_type: string;
  size_bytes: number;
  chunk_count: number;
  created_at: string;
}

export interface ScoredChunk {
  chunk_id: string;
  document_id: string;
  title: string;
  source: string | null;
  position: number;
  text: string;
  score: number;
}

export interface ApiKey {
  id: string;
  label: string;
  key_prefix: string;
  created_at: string;
  expires_at: string | null;
  last_used_at: string | null;
  revoked_at: string | null;
  user_id: string;
}

export interface ChannelStatus {
  name: string;
  enabled: boolean;
  mode: string | null;
  status: 'disabled' | 'starting' | 'running' | 'failed';
  error: string | null;
  last_event_at: string | null;
  started_at: string | null;
}

/** One server→client frame on the session WebSocket (spec, Events; decisions.md §5). */
export type SessionFrame = {
  session_id: string;
  seq: number;
  ts: string;
} & (
  | { type: 'token'; payload: { text: string; final: boolean; turn_id?: string } }
  | { type: 'tool_start'; payload: { tool_name: string; tool_call_id: string; input: Record<string, unknown>; turn_id?: string } }
  | { type: 'tool_end'; payload: { tool_name: string; tool_call_id: string; duration_ms: number; error: string | null; turn_id?: string } }
  | { type: 'tool_confirm_request'; payload: ConfirmRequest }
  | { type: 'agent_state'; payload: { state: AgentState; turn_id?: string } }
  | { type: 'memory_update'; payload: { mode: string; tokens_used: number; summarized: boolean; turn_id?: string } }
  | { type: 'error'; payload: { code: string; message: string; turn_id?: string } }
  | { type: 'done'; payload: DonePayload }
  | { type: 'pong'; payload: Record<string, never> }
);

export interface ConfirmRequest {
  confirmation_id: string;
  tool: string;
  parameters: Record<string, unknown>;
  message: string;
  turn_id?: string;
}

export interface DonePayload {
  message_id: string;
  total_tokens: number;
  input_tokens: number;
  output_tokens: number;
  duration_ms: number;
  tool_calls: number;
  text: string;
  turn_id?: string;
  workflow?: string | null;
  routing_reason?: string;
}

export const CONFIRM_ACTIONS = [
  { action: 'allow', key: 'y', label: 'Allow', hint: 'this call, once' },
  { action: 'deny', key: 'n', label: 'Deny', hint: 'this call; the agent may try something else' },
  { action: 'allow_all', key: 'a', label: 'Allow all', hint: 'this tool for the rest of the session' },
  { action: 'disable', key: 'd', label: 'Disable', hint: 'this tool for the rest of the session' },
  { action: 'forbid_all', key: 'f', label: 'Forbid all', hint: 'every tool request in this turn' },
  { action: 'cancel', key: 'c', label: 'Cancel', hint: 'the whole turn' },
] as const;
export type ConfirmAction = (typeof CONFIRM_ACTIONS)[number]['action'];

export interface LogLine {
  type: 'log_line';
  level: string;
  logger: string;
  message: string;
  timestamp: string;
}
