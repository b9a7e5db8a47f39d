/**
 * A tool the agent can call. Its input is validated against `parameters` (JSON Schema) before
 * `run`; a tool with `requiresConfirmation` runs only after a human allows it (tool_confirm).
 */
export interface ToolContext {
  sessionId: string;
  /** Aborted on cancel or shutdown. */
  signal: AbortSignal;
}

export type ToolAvailability = { ok: true } | { ok: false; reason: string };

export interface Tool<Input = Record<string, unknown>> {
  name: string;
  description: string;
  /** JSON Schema of the input object. */
  parameters: Record<string, unknown>;
  /** Needs a human's approval before each run (unless approved for the session). */
  requiresConfirmation: boolean;
  /** Reaches the web (http_fetch, web_search): `think` mode goes through `researching` when one is used. */
  web: boolean;
  /** Changes something outside the conversation: recorded by tool_call_id and never run twice. */
  sideEffects: boolean;
  /** Set for a tool an MCP server provides: the server's name and the server's own name for the tool. */
  source?: { server: string; tool: string };
  /** Whether the tool can run with this configuration (e.g. web_search needs an API key). */
  availability(): ToolAvailability;
  /** The result is given to the model as JSON text. Throwing reports a tool error to the model. */
  run(input: Input, context: ToolContext): Promise<unknown>;
}
