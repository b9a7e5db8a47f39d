import type { ToolCatalog } from '../agent/tool-box';
import { metricsApp } from '../api/metrics-app';
import { ConfigError, type Config } from '../config';
import type { TurnQueue } from '../core/turns';
import type { Logger } from '../logs/logger';
import { HubMetrics } from '../metrics/hub-metrics';
import { metricsHandler } from '../metrics/metrics-endpoint';
import { listen } from '../server/http-server';
import type { Lifecycle } from '../server/lifecycle';
import { Tracing } from '../tracing/tracing';

/** A process's metrics and traces (each null when off) and the port of its own metrics listener. */
export interface Observability {
  metrics: HubMetrics | null;
  tracing: Tracing | null;
  metricsPort: number | null;
}

/** Metrics (`metrics.enabled`), traces (`traces.otlp_url`) and, for `metrics.port`, a listener of their own. */
export async function startObservability(
  config: Readonly<Config>,
  logger: Logger,
  lifecycle: Lifecycle,
  processName: 'api' | 'worker',
  tools: ToolCatalog,
  queue: TurnQueue,
  knownTool?: (name: string) => boolean,
): Promise<Observability> {
  const metrics = config.metrics.enabled
    ? new HubMetrics({ role: processName, tools: tools.list().map((tool) => tool.name), knownTool, queueDepth: () => queue.depth() })
    : null;
  const tracing = Tracing.start(config.traces, processName);
  if (tracing) lifecycle.onStop({ name: 'traces', stop: () => tracing.shutdown() });
  const metricsPort = metrics ? await serveMetricsPort(config, metrics, logger, lifecycle, processName) : null;
  return { metrics, tracing, metricsPort };
}

/**
 * `metrics.port`: `/metrics` on a listener of its own (how a worker process is scraped). A worker
 * with metrics on needs it: it serves nothing else.
 */
async function serveMetricsPort(
  config: Readonly<Config>,
  metrics: HubMetrics,
  logger: Logger,
  lifecycle: Lifecycle,
  processName: 'api' | 'worker',
): Promise<number | null> {
  const { port, host, token } = config.metrics;
  if (port === null) {
    if (processName === 'worker')
      throw new ConfigError(
        'metrics.port (SERVICE_METRICS_PORT): is required to serve the metrics of a worker process, which serves nothing else; give each process its own port',
      );
    if (!token) throw new ConfigError('SERVICE_METRICS_TOKEN: is required for /metrics on the API port (or set metrics.port for a listener of its own)');
    return null;
  }
  const listener = await listen(metricsApp(metricsHandler(metrics, token), logger), host, port);
  lifecycle.onStop({ name: 'metrics listener', stop: () => listener.close(1_000) });
  logger.info({ metrics_listening: `${host}:${listener.port}` }, 'metrics served on a port of their own');
  return listener.port;
}
