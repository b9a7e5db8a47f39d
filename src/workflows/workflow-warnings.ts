import { z } from 'zod';
import { workflowInputSchema } from './workflow-schema';

/** What the warnings read of a workflow (a stored row, a view or a validated input). */
export interface WarnedWorkflow {
  name: string;
  triggers: { keywords: readonly string[]; regex: readonly string[]; contact_tags: readonly string[]; min_score?: number | null };
  binding_channels: readonly string[];
  default?: boolean;
}

/**
 * Something saved that works, but not as its author likely meant: a workflow the router can never
 * pick by itself, or a `default: true` that has no effect. Writes succeed; the answer lists these.
 */
export const WARNING_CODES = ['never_matches', 'not_bound', 'min_score_unreachable', 'default_not_bound', 'second_default'] as const;
export type WarningCode = (typeof WARNING_CODES)[number];

export const workflowWarningSchema = z
  .object({
    workflow: z.string().describe('The workflow the warning is about.'),
    code: z.enum(WARNING_CODES),
    message: z.string(),
  })
  .meta({ id: 'WorkflowWarning' });
export type WorkflowWarning = z.infer<typeof workflowWarningSchema>;

const MANUAL_ONLY = 'it answers only when a message names it (metadata.workflow), a contact is bound to it, or a session already uses it';

/**
 * The warnings about `workflow` among `all` (the whole set as it is, or would be, stored; the
 * workflow itself included or not). Pure: create, update and sync (dry runs too) ask the same.
 */
export function workflowWarnings(workflow: WarnedWorkflow, all: readonly WarnedWorkflow[]): WorkflowWarning[] {
  const warnings: WorkflowWarning[] = [];
  const warn = (code: WarningCode, message: string) => warnings.push({ workflow: workflow.name, code, message });
  const { keywords, regex, contact_tags: tags } = workflow.triggers;
  const reachable = keywords.length + 2 * regex.length + tags.length;
  const minScore = workflow.triggers.min_score ?? 1;
  const bound = workflow.binding_channels.length > 0;
  if (workflow.default) {
    if (!bound) warn('default_not_bound', 'default: true has no effect: the workflow is bound to no channel (binding_channels is empty).');
    for (const channel of workflow.binding_channels) {
      const other = all.find((candidate) => candidate.name !== workflow.name && candidate.default && candidate.binding_channels.includes(channel));
      if (!other) continue;
      const winner = [workflow.name, other.name].sort()[0];
      warn('second_default', `"${other.name}" is the default of ${channel} too; only one answers there ("${winner}", the alphabetically first).`);
    }
    return warnings;
  }
  if (reachable === 0) {
    warn('never_matches', `No triggers (keywords, regex, contact_tags): the router never picks it; ${MANUAL_ONLY}. Add triggers, or set default: true.`);
  } else if (!bound) {
    warn('not_bound', `Bound to no channel (binding_channels is empty): its triggers are never scored; ${MANUAL_ONLY}.`);
  } else if (reachable < minScore) {
    warn('min_score_unreachable', `min_score ${minScore} is more than all its triggers together can score (${reachable}): it never matches.`);
  }
  return warnings;
}

/** Warnings for each of `names` among `all`, in that order. */
export function warningsFor(names: readonly string[], all: readonly WarnedWorkflow[]): WorkflowWarning[] {
  return names.flatMap((name) => {
    const workflow = all.find((candidate) => candidate.name === name);
    return workflow ? workflowWarnings(workflow, all) : [];
  });
}

/**
 * The warnings of a sync: about every workflow it accepted (created, updated or unchanged), among the
 * set it leaves — or, in a dry run, would leave: the stored workflows before the sync, those it
 * accepted replaced by their inputs, the pruned ones left out.
 */
export function syncWarnings(
  before: readonly WarnedWorkflow[],
  inputs: readonly unknown[],
  result: { created: readonly string[]; updated: readonly { name: string }[]; unchanged: readonly string[]; deleted: readonly string[] },
): WorkflowWarning[] {
  const accepted = new Set([...result.created, ...result.updated.map((entry) => entry.name), ...result.unchanged]);
  const given = inputs.flatMap((raw) => {
    const parsed = workflowInputSchema.safeParse(raw);
    return parsed.success && accepted.has(parsed.data.name) ? [parsed.data] : [];
  });
  const kept = before.filter((row) => !accepted.has(row.name) && !result.deleted.includes(row.name));
  return warningsFor(
    given.map((input) => input.name),
    [...kept, ...given],
  );
}
