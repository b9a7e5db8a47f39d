import { z } from 'zod';
import { AUDIT_KINDS } from '../../core/audit';
import type { AuditService } from '../../audit/audit-service';
import type { ApiModule } from '../app';
import { listQueryShape } from '../pagination';
import { listPage } from '../schemas/envelope';

const auditEventSchema = z.object({
  id: z.uuid(),
  at: z.iso.datetime(),
  kind: z.enum(AUDIT_KINDS),
  actor: z.object({
    key: z.string().describe('`user:<id>`, `<channel>:<contact id>` (e.g. `slack:U123`), or `system:<reason>` (`timeout`, `allow_all`, `saml`…).'),
    kind: z.enum(['user', 'contact', 'system']),
    name: z.string().nullable(),
  }),
  subject: z.string().nullable().describe('A tool name, an API key or user id, a workflow name or channel.'),
  action: z
    .string()
    .describe(
      'A confirmation action (`allow`, `deny`, `allow_all`, `disable`, `forbid_all`, `cancel`, `abandoned`), `created`, `revoked`, `role:admin`, `login`…',
    ),
  session_id: z.uuid().nullable(),
  details: z
    .record(z.string(), z.unknown())
    .describe(
      'Per kind: `parameters_digest` (SHA-256 of the canonical JSON) and `parameter_names` of a tool call, `requested_at` and `waited_ms` of a confirmation…; never a raw parameter or a secret.',
    ),
});

/** `GET /audit`: the audit trail (admin), newest first, paged, filtered by actor, kind and time. */
export function auditRoutes(audit: AuditService): ApiModule {
  return (api) => {
    api.add({
      method: 'get',
      path: '/audit',
      summary: 'The audit trail: confirmations, auto-approvals, API keys, users and roles, SAML sign-ins, workflow changes',
      description: 'Newest first. Rows are kept `audit.retention_days` days (config).',
      tags: ['operations'],
      access: 'admin',
      query: z.object({
        ...listQueryShape,
        actor: z.string().min(1).max(200).optional().describe('As `actor.key` names it: `user:<id>`, `slack:U123`, `system:timeout`.'),
        kind: z.enum(AUDIT_KINDS).optional(),
        session_id: z.uuid().optional(),
        from: z.iso.datetime({ offset: true }).optional().describe('At or after this moment (ISO 8601).'),
        to: z.iso.datetime({ offset: true }).optional().describe('Before this moment (ISO 8601).'),
      }),
      response: { status: 200, description: 'Audit rows, newest first.', data: listPage(auditEventSchema) },
      handler: ({ query }) =>
        audit.list({
          actor: query.actor,
          kind: query.kind,
          sessionId: query.session_id,
          from: query.from === undefined ? undefined : new Date(query.from),
          to: query.to === undefined ? undefined : new Date(query.to),
          cursor: query.cursor,
          limit: query.limit,
        }),
    });
  };
}
