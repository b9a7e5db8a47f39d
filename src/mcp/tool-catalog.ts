import type { ToolCatalog, Validation } from '../agent/tool-box';
import type { Tool } from '../agent/tools/tool';
import type { McpHub } from './mcp-hub';

/**
 * One catalogue of every tool, whatever its source (ARCHITECTURE.md: tools come from one
 * registry): the built-in tools first, then the MCP servers' tools as they are listed.
 */
export class CombinedToolCatalog implements ToolCatalog {
  constructor(
    private readonly builtins: ToolCatalog,
    private readonly mcp: McpHub,
  ) {}

  list(): Tool[] {
    return [...this.builtins.list(), ...this.mcp.list()];
  }

  get(name: string): Tool | undefined {
    return this.builtins.get(name) ?? this.mcp.get(name);
  }

  validate(name: string, rawArguments: string): Validation {
    if (!this.builtins.get(name) && this.mcp.get(name)) return this.mcp.validate(name, rawArguments);
    return this.builtins.validate(name, rawArguments);
  }

  acceptsPin(entry: string): boolean {
    return this.mcp.acceptsPin(entry);
  }

  prepare(pinned: readonly string[] | undefined): Promise<void> {
    return this.mcp.prepare(pinned);
  }
}
