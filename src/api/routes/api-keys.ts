import { NO_AUDIT, type AuditSink } from '../../core/audit';
import { userActor } from '../../core/actor';
import { z } from 'zod';
import { apiKeyViewSchema, toApiKeyView, type ApiKeys } from '../../auth/api-keys';
import { AppError } from '../../core/errors';
import type { ApiModule } from '../app';
import { listQueryShape, offsetFromCursor, toPage } from '../pagination';
import { listPage } from '../schemas/envelope';

/** Longest expiry a key may be given, in days (ten years). */
export const API_KEY_MAX_EXPIRY_DAYS = 3650;

export function apiKeyRoutes(apiKeys: ApiKeys, audit: AuditSink = NO_AUDIT): ApiModule {
  return (api) => {
    api.add({
      method: 'get',
      path: '/auth/api-keys',
      summary: "List the caller's API keys (admins: everyone's with all=true)",
      tags: ['auth'],
      access: 'user',
      query: z.object({ ...listQueryShape, all: z.enum(['true', 'false']).optional() }),
      errors: ['FORBIDDEN'],
      response: { status: 200, description: 'Keys, oldest first; never the key itself.', data: listPage(apiKeyViewSchema) },
      handler: async ({ principal, query }) => {
        const all = query.all === 'true';
        if (all && principal.role !== 'admin') throw new AppError('FORBIDDEN', 'Only admins may list every API key.');
        const offset = offsetFromCursor(query.cursor);
        const { rows, total } = await apiKeys.list(all ? null : principal.userId, offset, query.limit);
        return toPage(rows.map(toApiKeyView), offset, total);
      },
    });

    api.add({
      method: 'post',
      path: '/auth/api-keys',
      summary: 'Create an API key (the key is shown only in this response)',
      tags: ['auth'],
      access: 'user',
      body: z.strictObject({
        label: z.string().trim().min(1).max(100),
        expires_in_days: z
          .number()
          .int()
          .min(1)
          .max(API_KEY_MAX_EXPIRY_DAYS)
          .nullable()
          .optional()
          .describe('Days until the key expires; absent or null: never.'),
      }),
      response: {
        status: 201,
        description: 'The new key; `key` is never shown again.',
        data: apiKeyViewSchema.extend({ key: z.string().describe('svc_live_…: store it now.') }).meta({ id: 'NewApiKey' }),
      },
      handler: async ({ principal, body }) => {
        const created = await apiKeys.create(principal.userId, body.label, body.expires_in_days ?? undefined);
        // The key's id and prefix only: the key itself is shown once, to its owner, and never kept.
        audit.record({
          kind: 'api_key.created',
          actor: userActor(principal),
          subject: created.id,
          action: 'created',
          details: { key_prefix: created.key_prefix, label: created.label, expires_at: created.expires_at },
        });
        return created;
      },
    });

    api.add({
      method: 'delete',
      path: '/auth/api-keys/{id}',
      summary: 'Revoke an API key',
      tags: ['auth'],
      access: 'user',
      params: z.object({ id: z.uuid() }),
      errors: ['NOT_FOUND'],
      response: { status: 204, description: 'Revoked (also when it already was).' },
      handler: async ({ principal, params }) => {
        await apiKeys.revoke(principal, params.id);
        audit.record({ kind: 'api_key.revoked', actor: userActor(principal), subject: params.id, action: 'revoked' });
      },
    });
  };
}
