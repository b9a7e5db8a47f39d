import type { Redis, RedisOptions } from 'ioredis';
import type { Logger } from 'pino';

/**
 * Reconnection attempts a command waits through before it fails (ioredis retries after 50 ms, 100 ms,
 * … so 14 attempts are about 5 s): a Redis restart (a second or two) is ridden out, a dead Redis
 * still surfaces as an error instead of a hang.
 */
export const REDIS_COMMAND_RETRIES = 14;

/**
 * A Redis connection for one purpose. `blocking` connections (BullMQ workers, subscribers) must
 * retry forever (`maxRetriesPerRequest: null`, as BullMQ requires); others fail a command after
 * REDIS_COMMAND_RETRIES reconnection attempts.
 */
export function createRedis(url: string, logger: Logger, purpose: string, options: { blocking?: boolean; autoPipelining?: boolean } = {}): Redis {
  // ioredis is loaded with the first connection: an embedded hub (no Redis) never loads it.
  const { Redis: RedisClient } = require('ioredis') as typeof import('ioredis');
  const settings: RedisOptions = {
    connectionName: `switchboard:${purpose}`,
    maxRetriesPerRequest: options.blocking ? null : REDIS_COMMAND_RETRIES,
    enableReadyCheck: true,
    enableAutoPipelining: options.autoPipelining ?? false,
  };
  const redis = new RedisClient(url, settings);
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

/**
 * Calls `onResumed` each time a subscriber connection is back after a drop, once its subscriptions
 * are restored (ioredis re-subscribes on reconnect; a PING answered after that proves they are in
 * place). What was published meanwhile never reached it: the caller catches up.
 */
export function onSubscriberResumed(subscriber: Redis, onResumed: () => void): void {
  let dropped = false;
  subscriber.on('close', () => {
    dropped = true;
  });
  subscriber.on('ready', () => {
    if (!dropped) return;
    dropped = false;
    void subscriber.ping().then(onResumed, onResumed);
  });
}

/** Every Redis key and channel of this hub starts with the configured prefix (decisions.md §7). */
export function redisKey(prefix: string, ...parts: string[]): string {
  return [prefix, ...parts].join(':');
}
