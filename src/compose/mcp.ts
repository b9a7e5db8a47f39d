import type { ToolCatalog } from '../agent/tool-box';
import type { Config } from '../config';
import type { Database } from '../db/database';
import type { Logger } from '../logs/logger';
import { SqlDefinitionPins } from '../mcp/definition-pins';
import { McpHub } from '../mcp/mcp-hub';
import type { McpCallObserver } from '../mcp/mcp-tool';
import { CombinedToolCatalog } from '../mcp/tool-catalog';
import type { HubMetrics } from '../metrics/hub-metrics';
import { McpMetrics } from '../metrics/mcp-metrics';
import type { Lifecycle } from '../server/lifecycle';
import { SpanKind, type Tracing } from '../tracing/tracing';

/** What watches MCP calls, known once observability has started (after the catalogue exists). */
export interface McpWatch {
  metrics: HubMetrics | null;
  tracing: Tracing | null;
}

/**
 * The MCP servers of this process (config `mcp.servers`), started now in the background and
 * stopped with the process, and the one catalogue of built-in and MCP tools.
 */
export function startMcp(
  config: Readonly<Config>,
  logger: Logger,
  lifecycle: Lifecycle,
  database: Database,
  builtins: ToolCatalog,
  cwd: string,
): { mcp: McpHub; tools: CombinedToolCatalog; watch: McpWatch } {
  const watch: McpWatch = { metrics: null, tracing: null };
  let mcpMetrics: McpMetrics | null = null;
  const observe: McpCallObserver = async (server, tool, run) => {
    if (watch.metrics && !mcpMetrics) mcpMetrics = new McpMetrics(watch.metrics);
    const started = performance.now();
    let ok = false;
    try {
      const attributes = { 'mcp.server': server, 'mcp.tool': tool, 'rpc.system': 'mcp', 'rpc.method': 'tools/call' };
      const result = watch.tracing
        ? await watch.tracing.inSpan(`mcp tools/call ${server}.${tool}`, { kind: SpanKind.CLIENT, attributes }, () => run())
        : await run();
      ok = true;
      return result;
    } finally {
      mcpMetrics?.call(server, tool, ok, (performance.now() - started) / 1000);
    }
  };
  const mcp = new McpHub({
    config: config.mcp,
    logger,
    pins: new SqlDefinitionPins(database.sequelize),
    cwd,
    reservedNames: builtins.list().map((tool) => tool.name),
    observe,
  });
  // Stopped before the database closes (the lifecycle stops in reverse): every server process is reaped.
  lifecycle.onStop({ name: 'mcp servers', stop: () => mcp.close() });
  mcp.start();
  return { mcp, tools: new CombinedToolCatalog(builtins, mcp), watch };
}
