import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { createApp } from '../src/api/app';
import { loadConfig } from '../src/config';
import { createLogger } from '../src/logs/logger';
import { redactUrlCredentials } from '../src/logs/redact';
import { createRateLimiter, type RateLimiter } from '../src/ratelimit';
import { listen, type HttpServer } from '../src/server/http-server';
import { Lifecycle } from '../src/server/lifecycle';
import type { Benchmark, Metric } from './lib/benchmark';
import { loadTest, type LoadResult } from './lib/http-load';

/**
 * Added latency per request of the rate limiter: the same unlimited route (GET /api/v1/health, no
 * dependencies) served three ways in one run — no limiter (baseline), limiter with the memory store,
 * limiter with the Redis store — driven by autocannon on loopback. Variants are interleaved run by
 * run so drift (thermal, other load) hits them alike; "added" is store minus baseline, per run.
 *
 * One connection, one request at a time: with more, a request would also wait for the limiter work
 * of the requests queued ahead of it, multiplying the figure. With one connection the time per
 * request is exactly 1 / throughput; autocannon's latency histogram counts whole milliseconds, too
 * coarse for differences of microseconds, so it is not reported.
 */
export const LIMITER_BENCH = {
  route: '/api/v1/health',
  /** High enough that nothing is ever refused: we measure the bookkeeping, not 429s. */
  limit: '1000000000/second',
  /** Shared Redis of this machine unless SERVICE_SHARED_STORE_URL names another. */
  defaultRedisUrl: 'redis://127.0.0.1:6379',
  /** See the comment above: one request in flight. */
  connections: 1,
  goals: { memoryAddedUs: 50, redisAddedUs: 500 },
};

type Variant = 'baseline' | 'memory' | 'redis';
const VARIANTS: Variant[] = ['baseline', 'memory', 'redis'];

interface Server {
  url: string;
  stop(): Promise<void>;
}

async function startServer(variant: Variant, redisUrl: string, prefix: string, dataDir: string): Promise<Server> {
  const env: Record<string, string> = {
    SERVICE_JWT_SECRET: randomBytes(32).toString('hex'),
    SERVICE_DATA_DIR: dataDir,
    SERVICE_LOG_LEVEL: 'silent',
    SERVICE_LOG_FORMAT: 'json',
    SERVICE_RATE_LIMIT_DEFAULT: LIMITER_BENCH.limit,
    SERVICE_REDIS_PREFIX: prefix,
  };
  if (variant === 'redis') env.SERVICE_SHARED_STORE_URL = redisUrl;
  const { config } = loadConfig({ env, cwd: dataDir });
  const logger = createLogger({ level: 'silent', format: 'json', name: 'bench', destination: process.stderr as never });
  const lifecycle = new Lifecycle();
  let limiter: RateLimiter | undefined;
  if (variant !== 'baseline') {
    limiter = await createRateLimiter({ config, logger });
    const connected = limiter;
    lifecycle.onStop({ name: 'rate limiter', stop: () => connected.close() });
  }
  const app = createApp({
    config,
    logger,
    lifecycle,
    readiness: [],
    before: limiter?.registerEndpoint,
    rateLimit: limiter?.middleware,
  });
  const http: HttpServer = await listen(app.express, '127.0.0.1', 0);
  lifecycle.onStop({ name: 'http', stop: () => http.close(2_000) });
  const url = `http://127.0.0.1:${http.port}${LIMITER_BENCH.route}`;
  // Every variant must really be limiting (or not): check the headers once.
  const probe = await fetch(url);
  await probe.arrayBuffer();
  const limited = probe.headers.get('ratelimit-limit') !== null;
  if (probe.status !== 200 || limited !== (variant !== 'baseline')) {
    throw new Error(`${variant} server answered ${probe.status}, RateLimit-Limit ${limited ? 'present' : 'absent'}`);
  }
  return { url, stop: () => lifecycle.shutdown(() => undefined) };
}

export const benchmark: Benchmark = {
  name: 'limiter',
  description: 'added latency per request of the rate limiter (memory and Redis stores) vs no limiter',
  async run({ runs, durationS, warmupS, log }) {
    const redisUrl = process.env.SERVICE_SHARED_STORE_URL || LIMITER_BENCH.defaultRedisUrl;
    const prefix = `switchboard-bench-${randomBytes(4).toString('hex')}`;
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'switchboard-bench-'));
    const servers = new Map<Variant, Server>();
    try {
      for (const variant of VARIANTS) servers.set(variant, await startServer(variant, redisUrl, prefix, dataDir));
      for (const variant of VARIANTS) {
        log(`warm-up ${variant} (${warmupS} s)`);
        await loadTest(servers.get(variant)!.url, warmupS, LIMITER_BENCH.connections);
      }
      const results: Record<Variant, LoadResult[]> = { baseline: [], memory: [], redis: [] };
      for (let run = 0; run < runs; run += 1) {
        // Rotate the order so no variant always runs first (or last) in a round.
        const order = VARIANTS.map((_, index) => VARIANTS[(index + run) % VARIANTS.length]!);
        for (const variant of order) {
          const result = await loadTest(servers.get(variant)!.url, durationS, LIMITER_BENCH.connections);
          results[variant].push(result);
          log(`run ${run + 1}/${runs} ${variant}: ${(1e6 / result.requestsPerSecond).toFixed(1)} µs per request`);
        }
      }
      const perRequestUs = (variant: Variant) => results[variant].map((result) => 1e6 / result.requestsPerSecond);
      const addedUs = (variant: Variant) => perRequestUs(variant).map((time, run) => time - perRequestUs('baseline')[run]!);
      const metrics: Metric[] = [
        {
          name: 'memory store: added latency',
          unit: 'µs/request',
          samples: addedUs('memory'),
          goal: { text: `≤ ${LIMITER_BENCH.goals.memoryAddedUs}`, met: (median) => median <= LIMITER_BENCH.goals.memoryAddedUs },
        },
        {
          name: 'redis store: added latency',
          unit: 'µs/request',
          samples: addedUs('redis'),
          goal: { text: `≤ ${LIMITER_BENCH.goals.redisAddedUs}`, met: (median) => median <= LIMITER_BENCH.goals.redisAddedUs },
        },
        ...VARIANTS.flatMap((variant): Metric[] => [
          { name: `${variant}: time per request`, unit: 'µs', samples: perRequestUs(variant) },
          { name: `${variant}: throughput`, unit: 'req/s', samples: results[variant].map((result) => result.requestsPerSecond) },
        ]),
      ];
      return {
        metrics,
        setup: {
          route: LIMITER_BENCH.route,
          limit: LIMITER_BENCH.limit,
          connections: LIMITER_BENCH.connections,
          pipelining: 1,
          redis: redactUrlCredentials(redisUrl),
          load_generator: 'autocannon in the same process as the servers (loopback)',
        },
      };
    } finally {
      for (const server of servers.values()) await server.stop();
      await deleteKeys(redisUrl, prefix);
      rmSync(dataDir, { recursive: true, force: true });
    }
  },
};

/** Leaves the shared Redis as it was: removes this run's limiter keys. */
async function deleteKeys(redisUrl: string, prefix: string): Promise<void> {
  const redis = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await redis.connect();
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length > 0) await redis.del(...keys);
  } catch {
    // Redis unreachable: the run already failed, and there is nothing of ours to delete.
  } finally {
    redis.disconnect();
  }
}
