import type { ToolSpec } from './provider';
import type { Tool } from './tools/tool';

/** Input validation of one tool call: the parsed input, or an error message meant for the model. */
export type Validation = { ok: true; input: Record<string, unknown> } | { ok: false; error: string };

/** The tools of one turn: what the model may call, and how calls are checked before running. */
export interface ToolBox {
  /** Tools offered to the model this turn. */
  specs(): ToolSpec[];
  get(name: string): Tool | undefined;
  /** Parses the model's raw JSON arguments and validates them against the tool's schema. */
  validate(name: string, rawArguments: string): Validation;
  /** Why a call for a tool this box does not hold is refused (default: no such tool in the session). */
  refusal?(name: string): string;
}

export { CONFIRM_ACTIONS, type ConfirmAction } from '../core/events';

/** Every tool the hub knows (the registry built from config). */
export interface ToolCatalog {
  list(): Tool[];
  get(name: string): Tool | undefined;
  validate(name: string, rawArguments: string): Validation;
  /** Whether a workflow may pin this tool_list entry though no tool has that name (an MCP `<server>.<tool>` or `<server>.*`). */
  acceptsPin?(entry: string): boolean;
  /** Called before a turn offers the tools these entries pin (MCP: waits for servers still starting). */
  prepare?(pinned: readonly string[] | undefined): Promise<void>;
}
