import { createApp, type ApiModule } from '../../src/api/app';
import { loadConfig } from '../../src/config';
import { createLogger } from '../../src/logs/logger';
import { createRateLimiter, type CreateRateLimiterOptions, type RateLimiter } from '../../src/ratelimit';
import { listen } from '../../src/server/http-server';
import { Lifecycle } from '../../src/server/lifecycle';
import { testEnv } from './env';
import { LogCapture } from './log-capture';
import { makeTempDir } from './temp-dir';

export interface RateLimitedApp {
  url: string;
  port: number;
  limiter: RateLimiter;
  logs: LogCapture;
  close(): Promise<void>;
}

/**
 * The express app wired to the rate limiter exactly as src/main.ts does it (`before` hook + app-level
 * middleware), configured from `env` like the real process, on a loopback port.
 */
export async function startRateLimitedApp(
  env: Record<string, string>,
  options: { modules?: ApiModule[]; host?: string } & Pick<CreateRateLimiterOptions, 'storeFailureLogIntervalMs' | 'redis'> = {},
): Promise<RateLimitedApp> {
  const { config } = loadConfig({ env: testEnv(makeTempDir(), env), cwd: makeTempDir() });
  const logs = new LogCapture();
  const logger = createLogger({ level: 'debug', format: 'json', name: 'api', destination: logs });
  const lifecycle = new Lifecycle();
  const limiter = await createRateLimiter({
    config,
    logger,
    storeFailureLogIntervalMs: options.storeFailureLogIntervalMs,
    redis: options.redis,
  });
  lifecycle.onStop({ name: 'rate limiter', stop: () => limiter.close() });
  const app = createApp({
    config,
    logger,
    lifecycle,
    readiness: [],
    modules: options.modules,
    before: limiter.registerEndpoint,
    rateLimit: limiter.middleware,
  });
  const host = options.host ?? '127.0.0.1';
  const http = await listen(app.express, host, 0);
  lifecycle.onStop({ name: 'http', stop: () => http.close(5_000) });
  return {
    url: `http://127.0.0.1:${http.port}`,
    port: http.port,
    limiter,
    logs,
    close: () => lifecycle.shutdown(() => undefined),
  };
}

/** Test endpoints: one per rate-limit key, plus a templated path under `default`. */
export const testRoutes: ApiModule = (api) => {
  for (const key of ['auth_register', 'auth_login', 'auth_refresh', 'saml_acs'] as const) {
    api.add({
      method: 'post',
      path: `/test/${key}`,
      summary: `Test endpoint limited by ${key}`,
      tags: ['test'],
      access: 'public',
      rateLimit: key,
      response: { status: 200, description: 'ok' },
      handler: () => ({ key }),
    });
  }
  api.add({
    method: 'get',
    path: '/test/items/{id}',
    summary: 'Test endpoint under the default limit',
    tags: ['test'],
    access: 'public',
    response: { status: 200, description: 'ok' },
    handler: ({ params }) => params,
  });
};

/** Sends `count` requests at once; returns their statuses. */
export async function burst(count: number, send: (index: number) => Promise<Response>): Promise<number[]> {
  const responses = await Promise.all(Array.from({ length: count }, (_, index) => send(index)));
  await Promise.all(responses.map((response) => response.arrayBuffer()));
  return responses.map((response) => response.status);
}

export function countOf(statuses: number[], status: number): number {
  return statuses.filter((value) => value === status).length;
}
