import { z } from 'zod';
import { AppError } from '../../core/errors';
import type { ChannelReadiness } from '../../server/channel-status';
import type { Lifecycle } from '../../server/lifecycle';
import { runChecks, type ReadinessCheck } from '../../server/readiness';
import { VERSION } from '../../version';
import type { ApiRouter } from '../endpoint';

/** Seconds a client should wait before asking again when the service is not ready. */
export const NOT_READY_RETRY_AFTER_S = 5;

const checkSchema = z.object({
  status: z.enum(['ok', 'failed']),
  latency_ms: z.number().int(),
  error: z.string().optional(),
});

const channelSchema = z.object({
  status: z.enum(['disabled', 'starting', 'running', 'failed']),
  mode: z.string(),
  error: z.string().optional(),
});

const mcpServerSchema = z.object({
  status: z.enum(['starting', 'ready', 'failed', 'stopped']),
  error: z.string().optional(),
});

export interface HealthDeps {
  lifecycle: Lifecycle;
  readiness: readonly ReadinessCheck[];
  /** The enabled channels' states: reported, never a reason for 503 (decisions.md, "A channel that fails"). */
  channels?: () => Record<string, ChannelReadiness>;
  /** The MCP servers' states: a failed one makes the answer `degraded` (200), never 503. */
  mcpServers?: () => Record<string, { status: 'starting' | 'ready' | 'failed' | 'stopped'; error?: string }>;
}

export function registerHealthRoutes(api: ApiRouter, deps: HealthDeps): void {
  api.add({
    method: 'get',
    path: '/health',
    summary: 'Liveness: the process is up',
    tags: ['health'],
    access: 'public',
    response: {
      status: 200,
      description: 'The process answers.',
      data: z.object({ status: z.literal('ok'), version: z.string(), uptime_s: z.number().int() }).meta({ id: 'Health' }),
    },
    handler: () => ({
      status: 'ok' as const,
      version: VERSION,
      uptime_s: Math.floor((Date.now() - deps.lifecycle.startedAt) / 1000),
    }),
  });

  api.add({
    method: 'get',
    path: '/health/ready',
    summary: 'Readiness: the database (and Redis, when configured) answer',
    description:
      'Also lists the enabled channels with their state. A failed chat channel (wrong token, platform unreachable) is shown here as `failed` with the platform’s reason but does not make this 503: the hub still serves its API and the other channels, and the channel is retried with backoff.',
    tags: ['health'],
    access: 'public',
    errors: ['SERVICE_UNAVAILABLE'],
    response: {
      status: 200,
      description: 'Every dependency answered.',
      data: z
        .object({
          status: z.enum(['ready', 'degraded']).describe('`degraded`: an MCP server has failed (its tools are unavailable); everything else answers.'),
          checks: z.record(z.string(), checkSchema),
          channels: z.record(z.string(), channelSchema).optional(),
          mcp_servers: z.record(z.string(), mcpServerSchema).optional(),
        })
        .meta({ id: 'Readiness' }),
    },
    handler: async () => {
      const retry = { 'Retry-After': String(NOT_READY_RETRY_AFTER_S) };
      if (deps.lifecycle.draining) {
        throw new AppError('SERVICE_UNAVAILABLE', 'The service is shutting down.', { headers: retry });
      }
      const checks = await runChecks(deps.readiness);
      const channels = deps.channels ? { channels: deps.channels() } : {};
      if (Object.values(checks).some((check) => check.status !== 'ok')) {
        throw new AppError('SERVICE_UNAVAILABLE', 'A dependency is not ready.', { headers: retry, details: { checks, ...channels } });
      }
      const mcpServers = deps.mcpServers?.() ?? {};
      const degraded = Object.values(mcpServers).some((server) => server.status === 'failed');
      const mcp = Object.keys(mcpServers).length > 0 ? { mcp_servers: mcpServers } : {};
      return { status: degraded ? ('degraded' as const) : ('ready' as const), checks, ...channels, ...mcp };
    },
  });
}
