import { useCallback, useState } from 'react';

/** Cursor paging (decisions.md §1): a stack of the cursors that led to each page seen so far. */
export function useCursorPages() {
  const [stack, setStack] = useState<(string | null)[]>([null]);
  return {
    cursor: stack.at(-1) ?? null,
    page: stack.length - 1,
    next: useCallback((cursor: string | null) => cursor && setStack((current) => [...current, cursor]), []),
    previous: useCallback(() => setStack((current) => (current.length > 1 ? current.slice(0, -1) : current)), []),
    reset: useCallback(() => setStack([null]), []),
  };
}

/** `?cursor=…&limit=…` plus extra parameters, for list endpoints. */
export function listQuery(cursor: string | null, limit: number, extra: Record<string, string> = {}): string {
  const params = new URLSearchParams({ limit: String(limit), ...extra });
  if (cursor) params.set('cursor', cursor);
  return params.toString();
}
