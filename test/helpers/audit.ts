import { request } from './http';

/** An audit row as GET /api/v1/audit shows it. */
export interface AuditRow {
  id: string;
  at: string;
  kind: string;
  actor: { key: string; kind: string; name: string | null };
  subject: string | null;
  action: string;
  session_id: string | null;
  details: Record<string, any>;
}

/**
 * Audit rows matching `query` (GET /api/v1/audit as an admin), waiting until `count` are there:
 * rows are written in batches, a moment after what they record.
 */
export async function auditRows(
  api: string,
  adminToken: string,
  query: Record<string, string>,
  count = 1,
  /** Waits until one row matches it too (a row written in a later batch than others of its kind). */
  wanted: (row: AuditRow) => boolean = () => true,
  timeoutMs = 10_000,
): Promise<AuditRow[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const response = await request(`${api}/audit?${new URLSearchParams({ limit: '100', ...query })}`, { headers: { authorization: `Bearer ${adminToken}` } });
    if (response.status !== 200) throw new Error(`GET /audit answered ${response.status}: ${JSON.stringify(response.body)}`);
    const rows = response.body.data.items as AuditRow[];
    if (rows.length >= count && rows.some(wanted)) return rows;
    if (Date.now() > deadline)
      throw new Error(`expected ${count} audit rows for ${JSON.stringify(query)}, found ${rows.length}: ${JSON.stringify(rows.slice(0, 5))}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
