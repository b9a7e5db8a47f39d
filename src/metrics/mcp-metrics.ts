import { Counter, Histogram } from 'prom-client';
import { LATENCY_BUCKETS, type HubMetrics } from './hub-metrics';

/**
 * MCP calls per server and tool (docs/guides/mcp-tools.md): label values are configured server
 * names and the tools those servers list (bounded by the servers' own lists and `tools` filters).
 */
export class McpMetrics {
  private readonly calls: Counter<'server' | 'tool' | 'outcome'>;
  private readonly duration: Histogram<'server' | 'tool'>;

  constructor(metrics: HubMetrics) {
    const registers = [metrics.registry];
    this.calls = new Counter({
      name: 'switchboard_mcp_calls_total',
      help: 'MCP tool calls sent to a server, by server, tool and outcome (ok, error)',
      labelNames: ['server', 'tool', 'outcome'],
      registers,
    });
    this.duration = new Histogram({
      name: 'switchboard_mcp_call_duration_seconds',
      help: 'Time an MCP server took to answer a tool call',
      labelNames: ['server', 'tool'],
      buckets: LATENCY_BUCKETS,
      registers,
    });
  }

  call(server: string, tool: string, ok: boolean, seconds: number): void {
    this.calls.inc({ server, tool, outcome: ok ? 'ok' : 'error' });
    this.duration.observe({ server, tool }, seconds);
  }
}
