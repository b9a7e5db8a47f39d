import pc from 'picocolors';

/** The answer of `POST /assistant/workflows/sync` (src/workflows/workflow-service.ts `SyncResult`). */
export interface SyncResult {
  created: string[];
  updated: { name: string; fields: string[] }[];
  unchanged: string[];
  deleted: string[];
  errors: { name: string | null; index: number; code: string; message: string; fields: Record<string, { code: string; message: string }[]> }[];
  dry_run: boolean;
  /** Workflows saved (or that would be) but never picked as likely meant; absent from older hubs. */
  warnings?: { workflow: string; code: string; message: string }[];
}

/**
 * How the plan is worded: `applied` after a real sync, `dry-run` for `sync --dry-run` (and a sync
 * stopped by refusals), `diff` for `workflows diff`, where deletions only happen with `--prune`.
 */
export type PlanMode = 'applied' | 'dry-run' | 'diff';

/**
 * The readable plan: one line per created, changed and deleted workflow, a count of unchanged ones,
 * and one `✗ <file>: <field>: <message>` line per refused field (errors name files through the
 * index of the workflow in the request, `files[index]`).
 */
export function formatPlan(result: SyncResult, files: readonly string[], mode: PlanMode): { out: string[]; err: string[] } {
  const would = mode !== 'applied';
  const out: string[] = [];
  for (const name of result.created) out.push(pc.green(`+ ${name} (${would ? 'would be created' : 'created'})`));
  for (const { name, fields } of result.updated) out.push(pc.yellow(`~ ${name}: ${fields.join(', ')}`));
  for (const name of result.deleted) {
    out.push(pc.red(`- ${name} (${mode === 'diff' ? 'would be deleted with --prune' : would ? 'would be deleted' : 'deleted'})`));
  }
  if (result.unchanged.length > 0) out.push(pc.dim(`= ${result.unchanged.length} unchanged`));
  if (out.length === 0) out.push(pc.dim('= nothing to sync'));
  const err: string[] = [];
  for (const error of result.errors) {
    const file = files[error.index] ?? `workflow #${error.index + 1}${error.name ? ` (${error.name})` : ''}`;
    const issues = Object.entries(error.fields).flatMap(([field, list]) => list.map((issue) => `${field}: ${issue.message}`));
    if (issues.length === 0) err.push(pc.red(`✗ ${file}: ${error.code}: ${error.message}`));
    for (const issue of issues) err.push(pc.red(`✗ ${file}: ${issue}`));
  }
  // Warnings never fail the sync: the workflow is valid, it just will not be picked as likely meant.
  for (const warning of result.warnings ?? []) err.push(pc.yellow(`! ${warning.workflow}: ${warning.message}`));
  return { out, err };
}

/** One summary line: what happened (or would), in numbers. */
export function summary(result: SyncResult, mode: PlanMode): string {
  const counts = `${result.created.length} created, ${result.updated.length} changed, ${result.deleted.length} deleted, ${result.unchanged.length} unchanged`;
  const refused = `${result.errors.length} workflow(s) refused`;
  if (result.errors.length > 0 && mode === 'applied') return `${refused} and left as they were; the rest was applied: ${counts}.`;
  if (result.errors.length > 0) return `${refused}; nothing was changed. Fix the file(s) named above and run again.`;
  if (mode === 'applied') return `Synced: ${counts}.`;
  if (mode === 'diff') return `Diff (nothing changed): ${counts.replace(`${result.deleted.length} deleted`, `${result.deleted.length} only on the hub`)}.`;
  return `Dry run (nothing changed): ${counts}.`;
}
