import { z } from 'zod';
import { AppError } from '../core/errors';

/** decisions.md §1: `limit` 1–100, default 20; `cursor` opaque. */
export const LIST_LIMIT_DEFAULT = 20;
export const LIST_LIMIT_MAX = 100;

export const listQueryShape = {
  cursor: z.string().max(200).optional().describe('Opaque: the `next_cursor` of the previous page.'),
  limit: z.coerce.number().int().min(1).max(LIST_LIMIT_MAX).default(LIST_LIMIT_DEFAULT),
};

export interface Page<T> {
  items: T[];
  next_cursor: string | null;
  has_more: boolean;
  total: number;
}

/** The cursor is an offset, base64url-encoded so clients treat it as opaque. */
export function offsetFromCursor(cursor: string | undefined): number {
  if (cursor === undefined) return 0;
  const match = /^o:(\d{1,9})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (!match) {
    throw AppError.validation({ 'query.cursor': [{ code: 'invalid_cursor', message: 'Not a cursor this endpoint returned.' }] });
  }
  return Number(match[1]);
}

export function toPage<T>(items: T[], offset: number, total: number): Page<T> {
  const end = offset + items.length;
  const hasMore = end < total;
  return { items, next_cursor: hasMore ? Buffer.from(`o:${end}`).toString('base64url') : null, has_more: hasMore, total };
}
