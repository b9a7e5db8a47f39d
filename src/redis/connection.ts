import { Redis, type RedisOptions } from 'ioredis';
import type { Logger } from 'pino';

/**
 * A Redis connection for one purpose. `blocking` connections (BullMQ workers, subscribers) must
 * retry forever (`maxRetriesPerRequest: null`, as BullMQ requires); others fail a command after one
 * retry so a dead Redis surfaces as an error instead of a hang.
 */
export function createRedis(url: string, logger: Logger, purpose: string, options: { blocking?: boolean; autoPipelining?: boolean } = {}): Redis {
  const settings: RedisOptions = {
    connectionName: `switchboard:${purpose}`,
    maxRetriesPerRequest: options.blocking ? null : 1,
    enableReadyCheck: true,
    enableAutoPipelining: options.autoPipelining ?? false,
  };
  const redis = new Redis(url, settings);
  let reported = false;
  redis.on('error', (error: Error) => {
    // One line per outage, not one per reconnect attempt.
    if (!reported) logger.warn({ purpose, err: error.message }, 'redis connection error');
    reported = true;
  });
  redis.on('ready', () => {
    if (reported) logger.info({ purpose }, 'redis connection restored');
    reported = false;
  });
  return redis;
}

/** Every Redis key and channel of this hub starts with the configured prefix (decisions.md §7). */
export function redisKey(prefix: string, ...parts: string[]): string {
  return [prefix, ...parts].join(':');
}
