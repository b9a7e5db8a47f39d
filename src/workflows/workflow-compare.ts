import type { FieldIssues } from '../core/errors';

/** Defaults applied and key order fixed, so equal workflows compare equal whatever their source. */
export function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value)
        .filter(([, child]) => child !== undefined)
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([key, child]) => [key, canonical(child)]),
    );
  }
  return value;
}

export function issuesOf(issues: readonly { path: PropertyKey[]; code: string; message: string }[]): FieldIssues {
  const fields: FieldIssues = {};
  for (const issue of issues) (fields[issue.path.map(String).join('.') || 'body'] ??= []).push({ code: issue.code, message: issue.message });
  return fields;
}
