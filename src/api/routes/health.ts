import { z } from 'zod';
import { AppError } from '../../core/errors';
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

export function registerHealthRoutes(api: ApiRouter, deps: { lifecycle: Lifecycle; readiness: readonly ReadinessCheck[] }): void {
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
    tags: ['health'],
    access: 'public',
    errors: ['SERVICE_UNAVAILABLE'],
    response: {
      status: 200,
      description: 'Every dependency answered.',
      data: z.object({ status: z.literal('ready'), checks: z.record(z.string(), checkSchema) }).meta({ id: 'Readiness' }),
    },
    handler: async () => {
      const retry = { 'Retry-After': String(NOT_READY_RETRY_AFTER_S) };
      if (deps.lifecycle.draining) {
        throw new AppError('SERVICE_UNAVAILABLE', 'The service is shutting down.', { headers: retry });
      }
      const checks = await runChecks(deps.readiness);
      if (Object.values(checks).some((check) => check.status !== 'ok')) {
        throw new AppError('SERVICE_UNAVAILABLE', 'A dependency is not ready.', { headers: retry, details: { checks } });
      }
      return { status: 'ready' as const, checks };
    },
  });
}
