import type { Actor } from './actor';

/**
 * What the audit trail records (GET /api/v1/audit): who allowed which tool call and how long it
 * waited, calls run under an earlier `allow_all`, credential and role changes, SAML sign-ins and
 * refusals, workflow changes. Never a secret or a raw tool parameter: parameters are kept as a
 * digest and their names.
 */
export const AUDIT_KINDS = [
  'tool.confirmation',
  'tool.auto_approved',
  'api_key.created',
  'api_key.revoked',
  'user.created',
  'user.changed',
  'user.deleted',
  'saml.login',
  'saml.refused',
  'workflow.changed',
  'workflow.synced',
  'mcp.tool_approved',
  'mcp.server_restarted',
  'approval.requested',
  'approval.click',
  'approval.decided',
] as const;
export type AuditKind = (typeof AUDIT_KINDS)[number];

export interface AuditEvent {
  kind: AuditKind;
  actor: Actor;
  /** What it was done to: a tool's name, an API key's or user's id, a workflow's name. */
  subject?: string | null;
  /** What was done (`allow`, `deny`, `revoked`, `role:admin`…). */
  action: string;
  sessionId?: string | null;
  /** Facts of this kind of event (a parameter digest, how long a confirmation waited). JSON, no secrets. */
  details?: Record<string, unknown>;
  /** When it happened (default: when recorded). */
  at?: Date;
}

/**
 * Where audit events go. `record` never throws and never waits for the database: rows are written
 * in batches (a turn that asks for a confirmation does not wait for its audit row).
 */
export interface AuditSink {
  record(event: AuditEvent): void;
}

/** The sink of a hub whose callers need not care whether auditing is wired (tests, tools). */
export const NO_AUDIT: AuditSink = { record: () => undefined };
