/** The hub's wire shapes the UI reads (decisions.md §2–§4); fields it does not use are left out. */

// The shapes the CLI reads too are the wire protocol's (src/protocol/payloads.ts), named here as the
// pages know them; the session frames are imported from src/protocol by the chat itself.
export type {
  ApiKeyView as ApiKey,
  McpServerPayload as McpServer,
  McpToolPayload as McpTool,
  MessageView as Message,
  Page,
  Role,
  SessionView as Session,
  TokenPair,
  UserView as User,
} from '../../../src/protocol/payloads';

export interface Workflow {
  id: string;
  name: string;
  description: string;
  system_prompt: string;
  tool_list: string;
  knowledge_base_ids: string[];
  triggers: { keywords: string[]; regex: string[]; contact_tags: string[]; min_score?: number };
  binding_channels: string[];
  /** The fallback of the channels it is bound to (older hubs leave it out). */
  default?: boolean;
  /** Webhooks and schedules (docs/guides/events.md). */
  events?: { webhooks: WorkflowWebhook[]; schedules: WorkflowSchedule[] };
  created_at: string;
  updated_at: string;
  /** In the answer of a create or an update: what is saved but will not work as likely meant. */
  warnings?: WorkflowWarning[];
}

export interface WorkflowWarning {
  workflow: string;
  code: string;
  message: string;
}

export interface WorkflowWebhook {
  name: string;
  verify: 'github' | 'standard' | 'token' | 'none';
  secret_env?: string;
  message: string;
  deliver: string;
  thread?: string;
}

export interface WorkflowSchedule {
  name: string;
  cron: string;
  timezone?: string;
  message: string;
  deliver: string;
}

export interface BindingChannel {
  channel: string;
  workflows: string[];
}

export interface RoutingTestResult {
  workflow: string | null;
  reason: 'metadata' | 'contact' | 'trigger' | 'session' | 'channel_default' | 'default';
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

export interface ChannelStatus {
  name: string;
  enabled: boolean;
  mode: string | null;
  status: 'disabled' | 'starting' | 'running' | 'failed';
  error: string | null;
  last_event_at: string | null;
  started_at: string | null;
}

/** `POST /assistant/workflows/tests`: the editor's Tests panel (docs/guides/testing-workflows.md). */
export interface WorkflowTestRun {
  passed: number;
  failed: number;
  cases: {
    name: string;
    passed: boolean;
    failures: string[];
    routing: { workflow: string | null; reason: string; rule: string | null } | null;
    turn: { ending: string; workflow: string | null; tools: { name: string; error: string | null }[]; reply: string } | null;
    duration_ms: number;
  }[];
}
