import type { HitResult, RateLimitStore } from './store';

/** Limits of the in-process store. */
export const MEMORY_STORE_DEFAULTS = {
  /**
   * How often buckets with nothing left in their window are dropped. Hits prune their own bucket;
   * the sweep frees buckets of clients that went away, so memory follows the active clients.
   */
  sweepIntervalMs: 60_000,
};

export interface MemoryStoreOptions {
  sweepIntervalMs?: number;
  /** Milliseconds clock; tests move time by hand. */
  now?: () => number;
}

/**
 * A sliding log per bucket: the times of the requests counted in the window, oldest first.
 * `head` skips expired entries without shifting the array on every hit; the array is compacted
 * once half of it is dead.
 */
interface Bucket {
  times: number[];
  head: number;
  windowMs: number;
}

/**
 * Counters in this process's memory: the default store. Exact within one process (JavaScript runs a
 * hit to completion before the next), lost on restart, and not shared between replicas (spec,
 * Limits rule 6).
 */
export class MemoryStore implements RateLimitStore {
  readonly description = 'memory (this process; reset on restart)';
  private readonly buckets = new Map<string, Bucket>();
  private readonly now: () => number;
  private readonly sweeper: NodeJS.Timeout;

  constructor(options: MemoryStoreOptions = {}) {
    // Monotonic: a wall-clock step (NTP) must not empty or freeze every window.
    this.now = options.now ?? (() => performance.now());
    this.sweeper = setInterval(() => this.sweep(), options.sweepIntervalMs ?? MEMORY_STORE_DEFAULTS.sweepIntervalMs);
    this.sweeper.unref(); // never keeps the process alive
  }

  /** Number of buckets held; for tests of the memory bound. */
  get size(): number {
    return this.buckets.size;
  }

  async hit(bucketName: string, limit: number, windowMs: number): Promise<HitResult> {
    return this.hitNow(bucketName, limit, windowMs);
  }

  /** The synchronous core of `hit`: no await between reading and writing, hence atomic. */
  hitNow(bucketName: string, limit: number, windowMs: number): HitResult {
    const now = this.now();
    let bucket = this.buckets.get(bucketName);
    if (!bucket) {
      bucket = { times: [], head: 0, windowMs };
      this.buckets.set(bucketName, bucket);
    }
    prune(bucket, now);
    const counted = bucket.times.length - bucket.head;
    const allowed = counted < limit;
    if (allowed) bucket.times.push(now);
    const oldest = bucket.times[bucket.head];
    return {
      allowed,
      limit,
      remaining: Math.max(0, limit - counted - (allowed ? 1 : 0)),
      // Not `oldest + windowMs - now`: with fractional clock values that can exceed the window by a
      // rounding error, and a header rounded up from 60000.000001 ms would say 61 s.
      nextFreeMs: oldest === undefined ? 0 : windowMs - (now - oldest),
    };
  }

  /** Drops every bucket whose window holds nothing any more. */
  sweep(): void {
    const now = this.now();
    for (const [name, bucket] of this.buckets) {
      prune(bucket, now);
      if (bucket.head === bucket.times.length) this.buckets.delete(name);
    }
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper);
    this.buckets.clear();
  }
}

/** A request at time t is counted while now - t < window. */
function prune(bucket: Bucket, now: number): void {
  const cutoff = now - bucket.windowMs;
  const { times } = bucket;
  while (bucket.head < times.length && times[bucket.head]! <= cutoff) bucket.head += 1;
  if (bucket.head > 0 && bucket.head * 2 >= times.length) {
    times.splice(0, bucket.head);
    bucket.head = 0;
  }
}
