import type { Tool } from './tool';
import { globMatches } from './tool-globs';

/**
 * Whether a workflow's pinned `tool_list` entries take this tool: a built-in tool by its name; an
 * MCP tool by `<server>.<tool>` or a glob over the server's tool names (`<server>.*`), never by the
 * name the model sees.
 */
export function pinsTool(pinned: readonly string[], tool: Pick<Tool, 'name' | 'source'>): boolean {
  const source = tool.source;
  if (!source) return pinned.includes(tool.name);
  return pinned.some((entry) => {
    const dot = entry.indexOf('.');
    return dot > 0 && entry.slice(0, dot) === source.server && globMatches(entry.slice(dot + 1), source.tool);
  });
}

/** The server an MCP entry of a tool_list names (`docs.search` → `docs`), or null for a built-in tool's name. */
export function pinnedServer(entry: string): string | null {
  const dot = entry.indexOf('.');
  return dot > 0 ? entry.slice(0, dot) : null;
}
