import { z } from 'zod';
import { AppError } from '../../core/errors';
import { usageDay } from '../../db/turn-store-rows';
import { USAGE_DIMENSIONS, type UsageDimension, type UsageService } from '../../usage/usage-service';
import type { ApiModule } from '../app';
import { listQueryShape, offsetFromCursor, toPage } from '../pagination';
import { listPage } from '../schemas/envelope';

/** Days shown when `from` is not given: today and the 29 before. */
export const USAGE_DEFAULT_DAYS = 30;
/** The widest range one request may ask for. */
export const USAGE_MAX_DAYS = 366;

const day = z.string().regex(/^\d{4}-\d{2}-\d{2}$/, 'a UTC day, YYYY-MM-DD');

const usageRowSchema = z.object({
  day: day.optional(),
  user: z.object({ key: z.string().describe('A user id, or a chat contact `<channel>:<contact id>`.'), username: z.string().nullable() }).optional(),
  workflow: z.object({ id: z.string(), name: z.string().nullable() }).nullable().optional().describe('null: turns no workflow answered (the config default).'),
  channel: z.string().optional(),
  input_tokens: z.number().int(),
  output_tokens: z.number().int(),
  total_tokens: z.number().int(),
  turns: z.number().int().describe('Turns answered; a cancelled or failed turn adds its tokens, not a turn.'),
});

/**
 * `GET /usage`: tokens per UTC day, user, workflow and channel. Admins see everyone's (and may
 * filter by `user`); a user sees their own only.
 */
export function usageRoutes(usage: UsageService): ApiModule {
  return (api) => {
    api.add({
      method: 'get',
      path: '/usage',
      summary: 'Token usage per day, user, workflow and channel',
      description: `Summed over what is not in \`group_by\`; newest day first, then most tokens. Days are UTC; \`from\` defaults to ${USAGE_DEFAULT_DAYS - 1} days before \`to\` (today). A user sees only their own usage.`,
      tags: ['operations'],
      access: 'user',
      query: z.object({
        ...listQueryShape,
        from: day.optional(),
        to: day.optional(),
        user: z.string().min(1).max(200).optional().describe('A user id, a username, or a chat contact (`slack:U123`). Admins only.'),
        workflow: z.string().min(1).max(64).optional().describe("A workflow's name."),
        channel: z.string().min(1).max(32).optional(),
        group_by: z
          .string()
          .default(USAGE_DIMENSIONS.join(','))
          .transform((text, context) => {
            const parts = text
              .split(',')
              .map((part) => part.trim())
              .filter(Boolean);
            const unknown = parts.filter((part) => !(USAGE_DIMENSIONS as readonly string[]).includes(part));
            if (unknown.length > 0)
              context.addIssue({ code: 'custom', message: `unknown dimension ${unknown.join(', ')}; use ${USAGE_DIMENSIONS.join(', ')}` });
            return [...new Set(parts)] as UsageDimension[];
          })
          .describe(`Comma-separated, any of ${USAGE_DIMENSIONS.join(', ')} (default all); empty: one total.`),
      }),
      errors: ['FORBIDDEN'],
      response: { status: 200, description: 'Usage rows.', data: listPage(usageRowSchema) },
      handler: async ({ principal, query }) => {
        if (query.user !== undefined && principal.role !== 'admin') throw new AppError('FORBIDDEN', "Only an admin may read another user's usage.");
        const to = query.to ?? usageDay();
        const from = query.from ?? usageDay(new Date(Date.parse(`${to}T00:00:00Z`) - (USAGE_DEFAULT_DAYS - 1) * 86_400_000));
        const days = (Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / 86_400_000;
        if (!(days >= 0 && days < USAGE_MAX_DAYS)) {
          throw AppError.validation({
            'query.from': [{ code: 'invalid_range', message: `from must be on or before to, at most ${USAGE_MAX_DAYS} days apart` }],
          });
        }
        const offset = offsetFromCursor(query.cursor);
        const { rows, total } = await usage.list({
          from,
          to,
          user: principal.role === 'admin' ? query.user : principal.userId,
          workflow: query.workflow,
          channel: query.channel,
          groupBy: query.group_by,
          offset,
          limit: query.limit,
        });
        return toPage(rows, offset, total);
      },
    });
  };
}
