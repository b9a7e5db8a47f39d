import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { ToolError } from '../agent/tools/tool-error';
import type { Tool, ToolAvailability, ToolContext } from '../agent/tools/tool';
import type { McpServerSupervisor, McpToolDefinition } from './server-supervisor';

/** Bytes of an MCP tool's output kept; the rest is cut with a note (the model then sees at most the executor's own limit). */
export const MCP_OUTPUT_LIMIT_BYTES = 100_000;

/** Runs one call inside whatever watches MCP calls (metrics, a span); absent: it just runs. */
export type McpCallObserver = <T>(server: string, tool: string, run: () => Promise<T>) => Promise<T>;

export interface McpToolOptions {
  definition: McpToolDefinition;
  modelName: string;
  supervisor: McpServerSupervisor;
  requiresConfirmation: boolean;
  /** The definition differs from the one pinned: withheld until an admin approves it. */
  changed: boolean;
  hash: string;
  observe?: McpCallObserver;
}

/**
 * One tool of an MCP server, as the agent sees every tool: named `<server>__<tool>` for the
 * model, its input schema as the server gave it. Every call is treated as having side effects
 * (recorded by tool_call_id, never run twice after a crash): a server's annotations are hints.
 */
export class McpTool implements Tool {
  readonly name: string;
  readonly description: string;
  readonly parameters: Record<string, unknown>;
  readonly requiresConfirmation: boolean;
  readonly web = false;
  readonly sideEffects = true;
  readonly source: { server: string; tool: string };
  readonly changed: boolean;
  readonly hash: string;
  /** Set when the input schema could not be compiled: the tool is not offered. */
  schemaProblem: string | null = null;

  constructor(private readonly options: McpToolOptions) {
    const { definition } = options;
    this.name = options.modelName;
    this.description = definition.description ?? definition.title ?? `The tool "${definition.name}" of the MCP server "${options.supervisor.name}".`;
    this.parameters = inputSchemaOf(definition);
    this.requiresConfirmation = options.requiresConfirmation;
    this.source = { server: options.supervisor.name, tool: definition.name };
    this.changed = options.changed;
    this.hash = options.hash;
  }

  get definition(): McpToolDefinition {
    return this.options.definition;
  }

  availability(): ToolAvailability {
    const { supervisor } = this.options;
    if (this.changed)
      return {
        ok: false,
        reason: `its definition changed since it was first seen; an admin must approve it (switchboard mcp approve ${supervisor.name} ${this.source.tool})`,
      };
    if (this.schemaProblem) return { ok: false, reason: `its input schema is not usable: ${this.schemaProblem}` };
    if (supervisor.state !== 'ready')
      return { ok: false, reason: `the MCP server "${supervisor.name}" is ${supervisor.state}${supervisor.lastError ? ` (${supervisor.lastError})` : ''}` };
    return { ok: true };
  }

  async run(input: Record<string, unknown>, context: ToolContext): Promise<unknown> {
    const { supervisor, observe } = this.options;
    const call = () => supervisor.callTool(this.source.tool, input, context.signal);
    let result: CallToolResult;
    try {
      result = observe ? await observe(supervisor.name, this.source.tool, call) : await call();
    } catch (error) {
      if (context.signal.aborted) throw error;
      throw new ToolError(describeFailure(supervisor.name, supervisor.config.timeout_s, error), { cause: error });
    }
    const text = capOutput(resultText(result));
    if (result.isError) throw new ToolError(`The MCP tool "${this.source.tool}" reported an error: ${text}`);
    return text;
  }
}

/** The input schema as a JSON schema of type object (`$schema` dropped: the validator knows its draft). */
function inputSchemaOf(definition: McpToolDefinition): Record<string, unknown> {
  const { $schema: _dropped, ...schema } = (definition.inputSchema ?? {}) as Record<string, unknown>;
  return { ...schema, type: 'object' };
}

function describeFailure(server: string, timeoutSeconds: number, error: unknown): string {
  // Here only once a server exists, so the SDK is already loaded (mcp-hub.ts loads it with the first server).
  const { ErrorCode, McpError } = require('@modelcontextprotocol/sdk/types.js') as typeof import('@modelcontextprotocol/sdk/types.js');
  if (error instanceof McpError && error.code === Number(ErrorCode.RequestTimeout))
    return `The MCP server "${server}" did not answer within ${timeoutSeconds} s; the call was abandoned.`;
  if (error instanceof McpError && error.code === Number(ErrorCode.ConnectionClosed))
    return `The MCP server "${server}" stopped during the call (it exited or crashed); it is being restarted.`;
  const message = error instanceof Error ? error.message : String(error);
  return `The MCP server "${server}" could not run the call: ${message.slice(0, 500)}`;
}

/** The result's content as text for the model: text parts as they are, other parts described. */
export function resultText(result: CallToolResult): string {
  const parts = (result.content ?? []).map((part) => {
    switch (part.type) {
      case 'text':
        return part.text;
      case 'image':
      case 'audio':
        return `[${part.type} ${part.mimeType}, ${part.data.length} characters of base64 not shown]`;
      case 'resource':
        return 'text' in part.resource && typeof part.resource.text === 'string' ? part.resource.text : `[resource ${part.resource.uri}]`;
      case 'resource_link':
        return `[resource link ${part.uri}${part.name ? ` (${part.name})` : ''}]`;
      default:
        return '[content of an unknown type]';
    }
  });
  if (parts.length === 0 && result.structuredContent !== undefined) return JSON.stringify(result.structuredContent);
  return parts.join('\n');
}

/** At most MCP_OUTPUT_LIMIT_BYTES of UTF-8, cut with a note saying so. */
export function capOutput(text: string): string {
  const bytes = Buffer.byteLength(text);
  if (bytes <= MCP_OUTPUT_LIMIT_BYTES) return text;
  const kept = Buffer.from(text)
    .subarray(0, MCP_OUTPUT_LIMIT_BYTES)
    .toString('utf8')
    .replace(/\uFFFD$/, '');
  return `${kept}\n… [cut: the tool's output was ${bytes} bytes; the first ${MCP_OUTPUT_LIMIT_BYTES} are shown]`;
}
