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

/** The name of a worker's presence connection: CLIENT LIST shows it while the worker's process lives. */
export const presenceConnectionName = (workerId: string) => `switchboard:worker:${workerId}`;

/**
 * Workers of every process: a sorted set of worker id → time of its last heartbeat, and for each
 * worker a Redis connection of its own named after it. A worker counts as alive while it beats AND
 * its connection is open: a killed process's connections close with it (the kernel closes its
 * sockets), so it stops counting at once instead of when its heartbeat expires; a process that
 * hangs keeps its connection but stops beating. Where CLIENT LIST is refused (a managed Redis's
 * ACL), the heartbeats alone count.
 */
export class RedisWorkerPresence implements WorkerPresence {
  readonly name = 'redis' as const;
  private readonly key: string;
  private readonly connections = new Map<string, Redis>();

  constructor(
    private readonly redis: Redis,
    prefix: string,
    private readonly limits = WORKER_PRESENCE_DEFAULTS,
  ) {
    this.key = redisKey(prefix, 'workers');
  }

  async beat(workerId: string): Promise<void> {
    // Connected before the first heartbeat is written, so a counted worker is always a connected one.
    await this.connection(workerId).ping();
    await this.redis.zadd(this.key, Date.now(), workerId);
  }

  async leave(workerId: string): Promise<void> {
    this.connections.get(workerId)?.disconnect();
    this.connections.delete(workerId);
    await this.redis.zrem(this.key, workerId);
  }

  async alive(): Promise<number> {
    const since = Date.now() - this.limits.timeoutMs;
    // Forget the long gone (kept a while, so a brief outage does not look like a new worker).
    await this.redis.zremrangebyscore(this.key, '-inf', since - 10 * this.limits.timeoutMs);
    const beating = await this.redis.zrangebyscore(this.key, since, '+inf');
    if (beating.length === 0) return 0;
    const connected = await this.connectedNames();
    return connected ? beating.filter((workerId) => connected.has(presenceConnectionName(workerId))).length : beating.length;
  }

  /** The names of the connections Redis holds now; null when it will not say. */
  private async connectedNames(): Promise<Set<string> | null> {
    try {
      const list = (await this.redis.call('CLIENT', 'LIST', 'TYPE', 'normal')) as string;
      return new Set(list.split('\n').flatMap((line) => /(?:^| )name=(\S+)/.exec(line)?.[1] ?? []));
    } catch {
      return null;
    }
  }

  private connection(workerId: string): Redis {
    let connection = this.connections.get(workerId);
    if (!connection) {
      connection = this.redis.duplicate({ connectionName: presenceConnectionName(workerId), enableAutoPipelining: false });
      // The process's command connection reports outages; this one would only repeat them.
      connection.on('error', () => undefined);
      this.connections.set(workerId, connection);
    }
    return connection;
  }
}
