import type { Config } from '../config';
import type { Logger } from '../logs/logger';
import { RateLimiter, type RateLimiterOptions } from './limiter';
import { MemoryStore } from './memory-store';
import { RedisStore, type RedisStoreOptions } from './redis-store';

export { createClientIpResolver, normaliseIp, type ClientIpResolver } from './client-ip';
export { RateLimiter, RATE_LIMITER_DEFAULTS, retryAfterSeconds, type RateLimitDecision, type UpgradeCheck } from './limiter';
export { MemoryStore, MEMORY_STORE_DEFAULTS } from './memory-store';
export { RedisStore, REDIS_STORE_DEFAULTS, HIT_SCRIPT } from './redis-store';
export { UNMATCHED_ROUTE } from './route-table';
export { parseRateLimitSpec, ruleFromSpec, WINDOW_UNIT_MS, type RateLimitRule } from '../config/rate-limit-spec';
export type { HitResult, RateLimitStore } from './store';
export { upgradeGuard, writeUpgradeRefusal } from './upgrade';

export interface CreateRateLimiterOptions {
  config: Readonly<Pick<Config, 'api' | 'redis'>>;
  logger: Logger;
  /** Overrides for tests: the warning interval and the Redis timeouts. */
  storeFailureLogIntervalMs?: RateLimiterOptions['storeFailureLogIntervalMs'];
  redis?: Pick<RedisStoreOptions, 'commandTimeoutMs' | 'connectTimeoutMs'>;
  onRefusal?: RateLimiterOptions['onRefusal'];
}

/**
 * Builds the limiter from configuration: Redis when `api.shared_store_url` is set (keys under
 * `<redis.prefix>:ratelimit:`, never flushed), otherwise this process's memory. Logs the backend,
 * password redacted. An unreachable Redis does not stop startup: requests pass (fail open) and the
 * client keeps reconnecting.
 */
export async function createRateLimiter(options: CreateRateLimiterOptions): Promise<RateLimiter> {
  const { config, logger } = options;
  let limiter: RateLimiter | undefined;
  let store: MemoryStore | RedisStore;
  const url = config.api.shared_store_url;
  if (url) {
    const redisStore = new RedisStore({
      url,
      prefix: config.redis.prefix,
      ...options.redis,
      onConnectionError: (error) => limiter?.reportStoreError(error),
    });
    store = redisStore;
    limiter = build();
    if (!(await redisStore.connect())) {
      limiter.reportStoreError(new Error('not reachable at startup; retrying in the background'));
    }
  } else {
    store = new MemoryStore();
    limiter = build();
  }
  logger.info({ rate_limit_store: store.description, rate_limits: config.api.rate_limits }, 'rate limiting enabled');
  return limiter;

  function build(): RateLimiter {
    return new RateLimiter({
      rules: config.api.rate_limits,
      trustedProxyCidrs: config.api.trusted_proxy_cidrs,
      store,
      logger,
      storeFailureLogIntervalMs: options.storeFailureLogIntervalMs,
      onRefusal: options.onRefusal,
    });
  }
}
