import { matchesAny } from '../agent/tools/tool-globs';
import type { ApprovalPolicy } from './policy-schema';

/** An MCP tool's origin as the MCP hub's name table keeps it (`Tool.source`): the server and its own tool name. */
export interface ToolOrigin {
  server: string;
  tool: string;
}

/**
 * The names a tool is matched by: the one the model calls it by, and for an MCP tool also
 * `<server>.<tool>`, the name `tool_list` pins it by (decisions.md §8). The origin comes from the
 * MCP hub's own table, never from splitting the model's name: that name is sanitised and shortened
 * (`model-names.ts`), so `ops.k8s/restart` is called `ops__k8s_restart` and cannot be split back.
 */
function namesOf(tool: string, origin: ToolOrigin | undefined): string[] {
  return origin ? [tool, `${origin.server}.${origin.tool}`] : [tool];
}

/** The policy that governs `tool` (the first whose globs match it), with its index, or null: no policy. */
export function policyFor(policies: readonly ApprovalPolicy[], tool: string, origin?: ToolOrigin): { policy: ApprovalPolicy; index: number } | null {
  const names = namesOf(tool, origin);
  for (const [index, policy] of policies.entries()) {
    // The same globs as `tool_list` and `mcp.servers.*.tools`: `*` crosses dots, so `github.*` is every tool of that server.
    if (names.some((name) => matchesAny(policy.tools, name))) return { policy, index };
  }
  return null;
}
