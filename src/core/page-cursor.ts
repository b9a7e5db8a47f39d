import { AppError } from './errors';

/**
 * Opaque list cursors (decisions.md §1): the row ordinal, base64url-encoded. Here rather than beside
 * one service because sessions and workflows both page with it.
 */
export function encodeCursor(ordinal: number): string {
  return Buffer.from(`o:${ordinal}`).toString('base64url');
}

export function decodeCursor(cursor: string): number | null {
  // At most 15 digits: a longer number is not a row ordinal (and 400 digits is Infinity, which SQL refuses).
  const match = /^o:(\d{1,15})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  return match ? Number(match[1]) : null;
}

/** The ordinal a list's `cursor` names; a cursor this list never gave is a 422 on `query.cursor`. */
export function cursorOrThrow(cursor: string): number {
  const ordinal = decodeCursor(cursor);
  if (ordinal === null) throw AppError.validation({ 'query.cursor': [{ code: 'invalid_cursor', message: 'Not a cursor from this list.' }] });
  return ordinal;
}

/**
 * A page of a list read with one row more than `limit` (that row only tells that there is more):
 * decisions.md §1's `{items, next_cursor, has_more, total}`, the cursor naming the last row's ordinal.
 */
export function keysetPage<V>(entries: { row: { ordinal: number }; view: V }[], limit: number, total: number) {
  const hasMore = entries.length > limit;
  const items = entries.slice(0, limit);
  return {
    items: items.map((entry) => entry.view),
    next_cursor: hasMore ? encodeCursor(items.at(-1)!.row.ordinal) : null,
    has_more: hasMore,
    total,
  };
}
