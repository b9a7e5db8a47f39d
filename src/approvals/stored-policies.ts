import { approvalPoliciesSchema, type ApprovalPolicy } from './policy-schema';

/**
 * A workflow's stored `approvals` column as policies (null, or a list saved by an older hub: none).
 * The list was validated when it was saved; parsing again fills defaults a newer schema added.
 */
export function storedPolicies(stored: unknown): ApprovalPolicy[] {
  if (stored === null || stored === undefined) return [];
  const parsed = approvalPoliciesSchema.safeParse(stored);
  // A stored list that no longer parses must not silently drop every approval: fail loudly.
  if (!parsed.success) throw new Error(`a stored approvals list does not parse: ${parsed.error.message}`);
  return parsed.data;
}
