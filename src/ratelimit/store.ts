/**
 * Where the moving-window counters live. Two implementations share this contract (and one contract
 * test suite): in-process memory (memory-store.ts) and Redis (redis-store.ts).
 */

/** What one hit on a bucket decided. Times are milliseconds from now. */
export interface HitResult {
  allowed: boolean;
  limit: number;
  /** Requests still allowed in the current window after this one. */
  remaining: number;
  /**
   * When the oldest counted request leaves the window, i.e. when one more request becomes possible
   * (0 when nothing is counted). On a refusal this is how long the client must wait.
   */
  nextFreeMs: number;
}

export interface RateLimitStore {
  /** The backend for the startup log, credentials redacted: `memory`, `redis://…`. */
  readonly description: string;
  /**
   * Counts one request in `bucket` if fewer than `limit` were counted in the last `windowMs`
   * (refused requests are not counted, so a client that keeps trying is let in once the window
   * has room). Atomic: concurrent hits never let more than `limit` through.
   */
  hit(bucket: string, limit: number, windowMs: number): Promise<HitResult>;
  close(): Promise<void>;
}
