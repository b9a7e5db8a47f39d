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
