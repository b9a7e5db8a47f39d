import type { Redis } from 'ioredis';
import type { WorkerPresence } from '../core/turns';
import { redisKey } from '../redis/connection';

export const WORKER_PRESENCE_DEFAULTS = {
  /** How often a worker says it is alive. */
  heartbeatMs: 5_000,
  /** A worker silent for this long counts as gone (three missed heartbeats). */
  timeoutMs: 15_000,
};

/** The embedded worker lives in this process: it is alive exactly while it is started. */
export class InProcessWorkerPresence implements WorkerPresence {
  readonly name = 'in-process' as const;
  private readonly workers = new Set<string>();

  async beat(workerId: string): Promise<void> {
    this.workers.add(workerId);
  }

  async leave(workerId: string): Promise<void> {
    this.workers.delete(workerId);
  }

  async alive(): Promise<number> {
    return this.workers.size;
  }
}

/** Workers of every process: a sorted set of worker id → time of its last heartbeat. */
export class RedisWorkerPresence implements WorkerPresence {
  readonly name = 'redis' as const;
  private readonly key: string;

  constructor(
    private readonly redis: Redis,
    prefix: string,
    private readonly limits = WORKER_PRESENCE_DEFAULTS,
  ) {
    this.key = redisKey(prefix, 'workers');
  }

  async beat(workerId: string): Promise<void> {
    await this.redis.zadd(this.key, Date.now(), workerId);
  }

  async leave(workerId: string): Promise<void> {
    await this.redis.zrem(this.key, workerId);
  }

  async alive(): Promise<number> {
    const since = Date.now() - this.limits.timeoutMs;
    // Forget the long gone (kept a while, so a brief outage does not look like a new worker).
    await this.redis.zremrangebyscore(this.key, '-inf', since - 10 * this.limits.timeoutMs);
    return this.redis.zcount(this.key, since, '+inf');
  }
}
