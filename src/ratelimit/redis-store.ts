import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { redactUrlCredentials } from '../logs/redact';
import type { HitResult, RateLimitStore } from './store';

/** Limits of the Redis store. */
export const REDIS_STORE_DEFAULTS = {
  /**
   * A hit that gets no answer within this is treated as a store error (the request passes): a hung
   * Redis may add at most this much latency to a request. Not shorter: the timer runs on the API
   * process's event loop, which a burst of requests (when limiting matters most) can hold up for a
   * few hundred milliseconds; with 150 ms such a burst read as a dead store and passed unlimited
   * (test/reliability/limiter-exactness.test.ts). A Redis that is down fails at once (no queueing).
   */
  commandTimeoutMs: 1_000,
  /** How long startup waits for the first connection before serving anyway (failing open). */
  connectTimeoutMs: 2_000,
  /** Longest pause between reconnection attempts while Redis is down. */
  maxReconnectDelayMs: 2_000,
  /**
   * On close, how long a connection may take to shut down before it is destroyed. ioredis arms this
   * timer even when Redis is already gone (its default, 2 s, would hold shutdown up for nothing).
   */
  disconnectTimeoutMs: 200,
};

/**
 * One atomic hit on a sliding log kept as a sorted set (score = time in ms, member unique per
 * request). Redis's own clock is used, so every replica measures the same window.
 *
 * KEYS[1] bucket key; ARGV[1] limit; ARGV[2] window in ms; ARGV[3] unique member.
 * Returns {allowed (1/0), remaining, ms until the oldest counted request leaves the window}.
 */
export const HIT_SCRIPT = `
local key = KEYS[1]
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
local counted = redis.call('ZCARD', key)
local allowed = 0
if counted < limit then
  redis.call('ZADD', key, now, ARGV[3])
  redis.call('PEXPIRE', key, window)
  counted = counted + 1
  allowed = 1
end
local next_free = 0
local oldest = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
if oldest[2] then next_free = tonumber(oldest[2]) + window - now end
local remaining = limit - counted
if remaining < 0 then remaining = 0 end
return {allowed, remaining, next_free}
`;

export interface RedisStoreOptions {
  url: string;
  /** Every key starts with `<prefix>:ratelimit:` (decisions.md §7: one prefix for all our keys). */
  prefix: string;
  commandTimeoutMs?: number;
  connectTimeoutMs?: number;
  /** Connection problems (errors, closes) are reported here; the limiter rate-limits the logging. */
  onConnectionError?: (error: Error) => void;
}

type HitReply = [number, number, number];

interface RedisWithHit extends Redis {
  rateLimitHit(key: string, limit: number, windowMs: number, member: string): Promise<HitReply>;
}

/**
 * Counters shared by every process using the same Redis and prefix, so N replicas enforce one exact
 * limit (decisions.md §6). Never flushed at startup (spec, Limits rule 7). Commands are not queued
 * while disconnected (`enableOfflineQueue: false`) and time out quickly, so a dead Redis turns into
 * immediate errors, which the limiter treats as "let the request pass".
 */
export class RedisStore implements RateLimitStore {
  readonly description: string;
  readonly keyPrefix: string;
  private readonly redis: RedisWithHit;
  /** Makes sorted-set members unique across processes: two hits in the same millisecond both count. */
  private readonly memberPrefix = randomBytes(6).toString('hex');
  private sequence = 0;

  constructor(options: RedisStoreOptions) {
    this.description = `redis ${redactUrlCredentials(options.url)}`;
    this.keyPrefix = `${options.prefix}:ratelimit:`;
    // ioredis is loaded with the first Redis store: a hub without Redis never loads it.
    const { Redis: RedisClient } = require('ioredis') as typeof import('ioredis');
    this.redis = new RedisClient(options.url, {
      lazyConnect: true,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      commandTimeout: options.commandTimeoutMs ?? REDIS_STORE_DEFAULTS.commandTimeoutMs,
      connectTimeout: options.connectTimeoutMs ?? REDIS_STORE_DEFAULTS.connectTimeoutMs,
      disconnectTimeout: REDIS_STORE_DEFAULTS.disconnectTimeoutMs,
      retryStrategy: (attempt) => Math.min(attempt * 100, REDIS_STORE_DEFAULTS.maxReconnectDelayMs),
    }) as RedisWithHit;
    this.redis.defineCommand('rateLimitHit', { numberOfKeys: 1, lua: HIT_SCRIPT });
    // Without a listener ioredis prints every connection error to stderr itself.
    this.redis.on('error', (error: Error) => options.onConnectionError?.(error));
  }

  /**
   * Connects, waiting at most the connect timeout. Resolves false when Redis is not reachable yet:
   * the hub serves anyway (requests pass) and ioredis keeps reconnecting in the background.
   */
  async connect(): Promise<boolean> {
    try {
      await this.redis.connect();
      return true;
    } catch {
      return false;
    }
  }

  async hit(bucket: string, limit: number, windowMs: number): Promise<HitResult> {
    this.sequence = (this.sequence + 1) % Number.MAX_SAFE_INTEGER;
    const member = `${this.memberPrefix}:${this.sequence}`;
    const [allowed, remaining, nextFreeMs] = await this.redis.rateLimitHit(this.keyPrefix + bucket, limit, windowMs, member);
    return { allowed: allowed === 1, limit, remaining, nextFreeMs: Math.max(0, nextFreeMs) };
  }

  async close(): Promise<void> {
    if (this.redis.status === 'end') return;
    try {
      await this.redis.quit();
    } catch {
      this.redis.disconnect(); // not connected: nothing to say goodbye to
    }
  }
}
