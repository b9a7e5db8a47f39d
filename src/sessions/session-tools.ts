import { AppError } from '../core/errors';
import { madeOncePer } from '../core/made-once';
import type { ToolSpec } from '../agent/provider';
import type { ToolBox, ToolCatalog } from '../agent/tool-box';
import { pinsTool } from '../agent/tools/pins';
import type { Tool } from '../agent/tools/tool';
import type { ToolState } from '../db/models';

/** What a session keeps about its tools (a stored row, or the worker's copy of it). */
export interface SessionToolFields {
  active_tools: string[];
  tool_state: ToolState | null;
}

export type ToolStatus = 'active' | 'available' | 'disabled' | 'unavailable';

export interface SessionToolView {
  name: string;
  description: string;
  /** The description's first sentence, for lists and pickers. */
  short_description: string;
  /** True for a tool an MCP server provides (its model name is `<server>__<tool>`). */
  is_mcp: boolean;
  /** The MCP server that provides it; null for a built-in tool. */
  server: string | null;
  parameters: Record<string, unknown>;
  requires_confirmation: boolean;
  status: ToolStatus;
  auto_approved: boolean;
  /** Why an unavailable tool cannot be used. */
  reason: string | null;
}

export interface ToolChanges {
  load?: string[];
  unload?: string[];
  enable?: string[];
  disable?: string[];
  auto_approve?: string[];
  revoke_approval?: string[];
}

/**
 * A session's tools: loaded (`active_tools`), disabled and auto-approved (`tool_state`). The same
 * rules for REST, `/tools load` and the worker: a disabled tool is never offered, an unavailable one
 * cannot be loaded (TOOL_EXPANSION_FAILED).
 */
export class SessionTools {
  constructor(private readonly catalog: ToolCatalog) {}

  /** An MCP tool's server and its own name for the tool (the MCP hub's table), or undefined: a built-in or unknown tool. */
  originOf(name: string): { server: string; tool: string } | undefined {
    return this.catalog.get(name)?.source;
  }

  state(session: SessionToolFields): ToolState {
    return { approved: session.tool_state?.approved ?? [], disabled: session.tool_state?.disabled ?? [] };
  }

  /**
   * `pinned`: the active workflow's tool_list, which replaces the session's own loaded tools (spec
   * rule 2); a tool outside it is `unavailable` (it cannot be loaded while that workflow is active).
   */
  views(session: SessionToolFields, pinned?: readonly string[], pinnedBy?: string): SessionToolView[] {
    const state = this.state(session);
    const loaded = pinned ?? session.active_tools;
    return this.catalog.list().map((tool) => {
      const availability = tool.availability();
      const outsidePin = pinned !== undefined && !pinsTool(pinned, tool);
      // MCP tools are offered only where a workflow pins them (fail-closed), never loaded by a session.
      const unpinnedMcp = pinned === undefined && tool.source !== undefined;
      const status: ToolStatus =
        !availability.ok || outsidePin || unpinnedMcp
          ? 'unavailable'
          : state.disabled.includes(tool.name)
            ? 'disabled'
            : tool.source || loaded.includes(tool.name)
              ? 'active'
              : 'available';
      return {
        name: tool.name,
        description: tool.description,
        short_description: firstSentence(tool.description),
        is_mcp: tool.source !== undefined,
        server: tool.source?.server ?? null,
        parameters: tool.parameters,
        requires_confirmation: tool.requiresConfirmation,
        status,
        auto_approved: state.approved.includes(tool.name),
        reason: !availability.ok ? availability.reason : outsidePin || unpinnedMcp ? pinReason(tool, pinnedBy) : null,
      };
    });
  }

  /** Before a turn builds its tool box: the catalogue's sources get ready for what is pinned. */
  async prepare(pinned: readonly string[] | undefined): Promise<void> {
    await this.catalog.prepare?.(pinned);
  }

  /** Applies changes to the row (not saved). Throws TOOL_EXPANSION_FAILED / VALIDATION_ERROR / CONFLICT. */
  apply(session: SessionToolFields, changes: ToolChanges, pinnedBy?: string): void {
    if (pinnedBy && ((changes.load?.length ?? 0) > 0 || (changes.unload?.length ?? 0) > 0)) {
      throw new AppError('CONFLICT', `The active workflow "${pinnedBy}" pins its tool list; add the tool to its tool_list instead.`);
    }
    const state = this.state(session);
    const active = new Set(session.active_tools);
    const unknown = Object.values(changes)
      .flat()
      .filter((name) => !this.catalog.get(name));
    if (unknown.length > 0) throw AppError.validation({ tools: [{ code: 'unknown_tool', message: `No such tool: ${unknown.join(', ')}.` }] });
    for (const name of changes.load ?? []) {
      if (this.catalog.get(name)!.source)
        throw new AppError('CONFLICT', `"${name}" is an MCP tool: a workflow pins it in its tool_list; a session cannot load it.`);
      const availability = this.catalog.get(name)!.availability();
      if (!availability.ok) throw new AppError('TOOL_EXPANSION_FAILED', `"${name}" cannot be loaded: ${availability.reason}`);
      active.add(name);
    }
    for (const name of changes.unload ?? []) active.delete(name);
    const disabled = new Set(state.disabled);
    for (const name of changes.disable ?? []) disabled.add(name);
    for (const name of changes.enable ?? []) disabled.delete(name);
    const approved = new Set(state.approved);
    for (const name of changes.auto_approve ?? []) approved.add(name);
    for (const name of changes.revoke_approval ?? []) approved.delete(name);
    session.active_tools = [...active];
    session.tool_state = { approved: [...approved], disabled: [...disabled] };
  }

  /** What the model may call in this session's turn: loaded, available, not disabled. */
  toolBox(session: SessionToolFields, pinned?: readonly string[]): ToolBox {
    const allowed = new Set(
      this.views(session, pinned)
        .filter((view) => view.status === 'active')
        .map((view) => view.name),
    );
    const tools = this.catalog.list().filter((tool) => allowed.has(tool.name));
    return {
      specs: () => tools.map(specOf),
      get: (name) => (allowed.has(name) ? this.catalog.get(name) : undefined),
      validate: (name, raw) => this.catalog.validate(name, raw),
    };
  }
}

/** Each tool's spec, made once: a provider keeps the JSON it sends for a spec with the spec object (a tool never changes once made). */
const specOf = madeOncePer((tool: Tool): ToolSpec => ({ name: tool.name, description: tool.description, parameters: tool.parameters }));

function pinReason(tool: Tool, pinnedBy: string | undefined): string {
  const entry = tool.source ? `${tool.source.server}.${tool.source.tool}` : tool.name;
  if (pinnedBy === undefined && tool.source) return `MCP tools are offered only by a workflow that pins them; add "${entry}" to a workflow's tool_list`;
  return `the workflow${pinnedBy ? ` "${pinnedBy}"` : ''} pins its tool list; add "${entry}" to its tool_list to use it`;
}

/** Longest short description, in characters. */
const SHORT_DESCRIPTION_MAX = 100;

function firstSentence(text: string): string {
  const sentence = /^.*?[.!?](?=\s|$)/s.exec(text.trim())?.[0] ?? text.trim();
  return sentence.length <= SHORT_DESCRIPTION_MAX ? sentence : `${sentence.slice(0, SHORT_DESCRIPTION_MAX - 1).trimEnd()}…`;
}
