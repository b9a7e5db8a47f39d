import { createHash } from 'node:crypto';

/**
 * A tool call's parameters as the audit trail keeps them: a SHA-256 digest of their canonical JSON
 * (keys sorted at every depth, so the same call always gives the same digest) and their names. The
 * values themselves never reach the audit rows: they may hold secrets or personal data, and the
 * digest is enough to tell whether two approvals were of the same call.
 */
export function parametersDigest(parameters: Record<string, unknown>): { parameters_digest: string; parameter_names: string[] } {
  return {
    parameters_digest: `sha256:${createHash('sha256').update(canonicalJson(parameters)).digest('hex')}`,
    parameter_names: Object.keys(parameters).sort(),
  };
}

/** JSON with object keys sorted, recursively. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, item]) => item !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${canonicalJson(item)}`).join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}
