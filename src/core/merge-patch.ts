/**
 * JSON merge-patch (RFC 7396) of a flat object, as `PATCH` applies it to a session's `config` and a
 * workflow's `triggers` (decisions.md §8): keys sent replace, keys absent stay, `null` removes a key.
 * The result never holds a null. (Nested objects are replaced whole: none of ours nest further.)
 */
export function mergePatch<T extends object>(stored: T, patch: object | undefined): T {
  const merged: Record<string, unknown> = { ...(stored as Record<string, unknown>) };
  for (const [key, value] of Object.entries(patch ?? {})) {
    if (value === null) delete merged[key];
    else if (value !== undefined) merged[key] = value;
  }
  return merged as T;
}
