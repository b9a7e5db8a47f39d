import type { Command } from 'commander';
import type { McpServerPayload, McpToolPayload } from '../../protocol/payloads';
import { connect, type CliContext } from '../context';
import { formatTable } from '../terminal/table';
import { sanitize } from '../terminal/text';
import { jsonOption, withHubOptions, type HubOptions } from './hub-options';

/** `switchboard mcp list | restart | approve`: the hub's MCP servers (admins). */
export function registerMcp(program: Command, context: CliContext): void {
  const mcp = program.command('mcp').description("the hub's MCP servers (admins): their state and tools, a restart, approving a changed tool");

  withHubOptions(mcp.command('list'))
    .description('list the MCP servers of the hub with their state, and each tool with its model name, confirmation rule and whether it changed')
    .addOption(jsonOption())
    .action(async (options: HubOptions & { json?: boolean }) => {
      const servers = await connect(context, options).get<McpServerPayload[]>('/mcp/servers');
      if (options.json) return context.out(JSON.stringify(servers, null, 2));
      if (servers.length === 0) return context.out('No MCP servers are configured (mcp.servers in config.yaml).');
      const rows = servers.flatMap((server) => [
        [sanitize(server.name), server.transport, server.state, String(server.restarts), '', sanitize(server.last_error ?? '')],
        ...server.tools.map((tool) => ['', '', '', '', sanitize(tool.model_name), toolNote(tool)]),
      ]);
      for (const line of formatTable(['SERVER', 'TRANSPORT', 'STATE', 'RESTARTS', 'TOOL', 'NOTE'], rows, context.stdout.columns ?? Infinity)) context.out(line);
    });

  withHubOptions(mcp.command('restart'))
    .description('stop an MCP server and start it again')
    .argument('<server>', "the server's name in config.yaml")
    .action(async (server: string, options: HubOptions) => {
      const view = await connect(context, options).post<McpServerPayload>(`/mcp/servers/${encodeURIComponent(server)}/restart`);
      context.out(
        `Restarted "${sanitize(view.name)}": ${view.state}${view.last_error ? ` (${sanitize(view.last_error)})` : ''}, ${view.tools.length} tool(s).`,
      );
    });

  withHubOptions(mcp.command('approve'))
    .description('approve the definition an MCP server presents now for a tool whose definition changed (recorded in the audit trail)')
    .argument('<server>', "the server's name in config.yaml")
    .argument('<tool>', "the server's name for the tool (not the model name)")
    .action(async (server: string, tool: string, options: HubOptions) => {
      const path = `/mcp/servers/${encodeURIComponent(server)}/tools/${encodeURIComponent(tool)}/approve`;
      const approved = await connect(context, options).post<McpToolPayload>(path);
      context.out(`Approved ${sanitize(server)}.${sanitize(approved.name)}: offered to the model again as ${sanitize(approved.model_name)}.`);
    });
}

function toolNote(tool: McpToolPayload): string {
  if (tool.changed) return 'changed: withheld until approved';
  return tool.requires_confirmation ? 'asks for confirmation' : 'runs without asking';
}
