import type { ApprovalPolicy } from './policy-schema';

/**
 * A tool glob as a regular expression: `*` any run of characters (dots included, so `github.*`
 * covers every tool of the `github` MCP server), `?` one character, everything else literal.
 */
export function globPattern(glob: string): RegExp {
  const body = [...glob].map((char) => (char === '*' ? '.*' : char === '?' ? '.' : char.replace(/[.+^${}()|[\]\\-]/g, '\\$&'))).join('');
  return new RegExp(`^${body}$`);
}

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
    if (policy.tools.some((glob) => names.some((name) => globPattern(glob).test(name)))) return { policy, index };
  }
  return null;
}
