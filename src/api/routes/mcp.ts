import { z } from 'zod';
import type { AuditSink } from '../../core/audit';
import { userActor } from '../../core/actor';
import { MCP_SERVER_NAME } from '../../config/mcp-schema';
import type { McpHub } from '../../mcp/mcp-hub';
import type { ApiModule } from '../app';

const mcpToolSchema = z
  .object({
    name: z.string().describe("The server's own name for the tool (what a workflow pins as `<server>.<tool>`)."),
    model_name: z.string().describe('The name the model sees: `<server>__<tool>`, sanitised, at most 64 characters.'),
    description: z.string(),
    requires_confirmation: z.boolean().describe("The server's `confirm`/`auto_approve` rule for this tool."),
    changed: z.boolean().describe('The definition differs from the one pinned: withheld from the model until an admin approves it.'),
  })
  .meta({ id: 'McpTool' });

const mcpServerSchema = z
  .object({
    name: z.string(),
    transport: z.enum(['stdio', 'http']),
    state: z.enum(['starting', 'ready', 'failed', 'stopped']),
    confirm: z.string().describe('always, never or read_only_auto.'),
    restarts: z.number().int(),
    last_error: z.string().nullable(),
    tools: z.array(mcpToolSchema),
  })
  .meta({ id: 'McpServer' });

const serverParams = z.object({ name: z.string().regex(MCP_SERVER_NAME, 'an MCP server name') });

/**
 * MCP servers in operation (admin): their state and tools, a restart, the approval of a changed
 * tool definition. What a server runs is declared in config.yaml only, never here. The answers
 * are this process's view (each process supervises its own servers).
 */
export function mcpRoutes(mcp: McpHub, audit: AuditSink): ApiModule {
  return (api) => {
    api.add({
      method: 'get',
      path: '/mcp/servers',
      summary: 'The MCP servers of config.yaml: transport, state, tools, restarts, last error',
      tags: ['mcp'],
      access: 'admin',
      response: { status: 200, description: 'Every configured server (a plain array).', data: z.array(mcpServerSchema) },
      handler: () => mcp.servers(),
    });

    api.add({
      method: 'post',
      path: '/mcp/servers/{name}/restart',
      summary: 'Stop an MCP server and start it again',
      tags: ['mcp'],
      access: 'admin',
      params: serverParams,
      errors: ['NOT_FOUND'],
      response: { status: 200, description: 'The server after the restart (ready, or failed with its error).', data: mcpServerSchema },
      handler: async ({ principal, params }) => {
        const view = await mcp.restart(params.name);
        audit.record({ kind: 'mcp.server_restarted', actor: userActor(principal), subject: params.name, action: 'restart', details: { state: view.state } });
        return view;
      },
    });

    api.add({
      method: 'post',
      path: '/mcp/servers/{name}/tools/{tool}/approve',
      summary: 'Approve the definition an MCP server presents now for a tool (after a change)',
      tags: ['mcp'],
      access: 'admin',
      params: serverParams.extend({ tool: z.string().min(1).max(200) }),
      errors: ['NOT_FOUND'],
      response: {
        status: 200,
        description: 'The tool, offered again; the hashes of the previous and the approved definition.',
        data: mcpToolSchema.extend({ previous_hash: z.string().nullable(), hash: z.string() }),
      },
      handler: async ({ principal, params }) => {
        const approved = await mcp.approve(params.name, params.tool, principal.username);
        audit.record({
          kind: 'mcp.tool_approved',
          actor: userActor(principal),
          subject: `${params.name}.${params.tool}`,
          action: 'approve',
          details: { previous_hash: approved.previous_hash, hash: approved.hash },
        });
        return approved;
      },
    });
  };
}
