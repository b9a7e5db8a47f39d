import { matchesAny } from '../agent/tools/tool-globs';
import type { ApprovalPolicy } from './policy-schema';

/**
 * The names a tool is matched by: its own, and for an MCP tool the model sees as `<server>__<tool>`
 * also `<server>.<tool>`, the name `tool_list` pins it by (decisions.md §8).
 */
function namesOf(tool: string): string[] {
  const split = tool.indexOf('__');
  return split > 0 ? [tool, `${tool.slice(0, split)}.${tool.slice(split + 2)}`] : [tool];
}

/** The policy that governs `tool` (the first whose globs match it), with its index, or null: no policy. */
export function policyFor(policies: readonly ApprovalPolicy[], tool: string): { policy: ApprovalPolicy; index: number } | null {
  const names = namesOf(tool);
  for (const [index, policy] of policies.entries()) {
    // The same globs as `tool_list` and `mcp.servers.*.tools`: `*` crosses dots, so `github.*` is every tool of that server.
    if (names.some((name) => matchesAny(policy.tools, name))) return { policy, index };
  }
  return null;
}
