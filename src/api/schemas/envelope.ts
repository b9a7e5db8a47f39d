import { z, type ZodType } from 'zod';
import { ERROR_CODES } from '../../core/errors';

export const metaSchema = z
  .object({
    request_id: z.uuid().describe('Also sent as the X-Request-ID header.'),
    timestamp: z.iso.datetime().describe('ISO 8601 UTC with milliseconds.'),
  })
  .meta({ id: 'Meta' });

export const fieldIssueSchema = z.object({ code: z.string(), message: z.string() }).meta({ id: 'FieldIssue' });

export const errorEnvelopeSchema = z
  .object({
    data: z.null(),
    error: z.object({
      code: z.enum(ERROR_CODES as [string, ...string[]]),
      message: z.string().describe('Safe to show to a user.'),
      details: z
        .object({ fields: z.record(z.string(), z.array(fieldIssueSchema)).optional() })
        .catchall(z.unknown())
        .describe('VALIDATION_ERROR carries `fields`: {field: [{code, message}]}.'),
    }),
    meta: metaSchema,
  })
  .meta({ id: 'ErrorEnvelope' });

export function successEnvelope(data: ZodType) {
  return z.object({ data, error: z.null(), meta: metaSchema });
}

/** `data` of every list endpoint (decisions.md §1). */
export function listPage<T extends ZodType>(item: T) {
  return z.object({
    items: z.array(item),
    next_cursor: z.string().nullable(),
    has_more: z.boolean(),
    total: z.number().int(),
  });
}
