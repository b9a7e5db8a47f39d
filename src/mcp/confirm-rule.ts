import type { McpConfirmRule } from '../config/mcp-schema';
import { matchesAny } from '../agent/tools/tool-globs';

/**
 * Whether a call of an MCP tool asks a human first: the one place that decides it (an approvals
 * policy — issue 30 — merges here). Fail-closed: anything not explicitly relieved asks.
 *
 * - `auto_approve` globs of the server: the tool runs without asking.
 * - `confirm: never`: no tool of the server asks.
 * - `confirm: read_only_auto`: a tool that declares `readOnlyHint: true` and not
 *   `destructiveHint: true` runs without asking; annotations are otherwise hints only.
 * - `confirm: always` (the default), or anything else: it asks.
 *
 * "Allow all", "Disable" and "Forbid all" then apply by the tool's name, as to built-in tools.
 */
export interface McpConfirmPolicy {
  confirm: McpConfirmRule;
  auto_approve: readonly string[];
}

/** The annotations a server declares on a tool (hints from the server, not trusted beyond read_only_auto). */
export interface McpToolHints {
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
}

export function mcpToolNeedsConfirmation(policy: McpConfirmPolicy, tool: string, hints: McpToolHints | undefined): boolean {
  if (matchesAny(policy.auto_approve, tool)) return false;
  switch (policy.confirm) {
    case 'never':
      return false;
    case 'read_only_auto':
      return !(hints?.readOnlyHint === true && hints.destructiveHint !== true);
    case 'always':
      return true;
  }
}
