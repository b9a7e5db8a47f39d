/**
 * The widget's abuse limits, counted in this process's memory (like the hub's rate limiter without
 * a shared store: N API processes each enforce their own share). Both are sliding windows; `sweep`
 * drops what no longer counts, so memory follows the visitors of the last window.
 */

/** At most `limit` events per key in any `windowMs`. */
export class SlidingWindow {
  private readonly hits = new Map<string, number[]>();

  constructor(
    readonly limit: number,
    readonly windowMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Counts one event for `key` when the window has room; false (nothing counted) when it is full. */
  take(key: string): boolean {
    const now = this.now();
    const times = (this.hits.get(key) ?? []).filter((time) => time > now - this.windowMs);
    if (times.length >= this.limit) {
      this.hits.set(key, times);
      return false;
    }
    times.push(now);
    this.hits.set(key, times);
    return true;
  }

  sweep(): void {
    const cutoff = this.now() - this.windowMs;
    for (const [key, times] of this.hits) if (times.every((time) => time <= cutoff)) this.hits.delete(key);
  }
}

/** At most `limit` distinct members per key in any `windowMs`; a member counts once, from when it was first seen. */
export class DistinctWindow {
  private readonly members = new Map<string, Map<string, number>>();

  constructor(
    readonly limit: number,
    readonly windowMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** True when `member` already counts for `key`, or was counted now; false when the key is full. */
  admit(key: string, member: string): boolean {
    const now = this.now();
    const seen = this.members.get(key) ?? new Map<string, number>();
    for (const [other, at] of seen) if (at <= now - this.windowMs) seen.delete(other);
    this.members.set(key, seen);
    if (seen.has(member)) return true;
    if (seen.size >= this.limit) return false;
    seen.set(member, now);
    return true;
  }

  sweep(): void {
    const cutoff = this.now() - this.windowMs;
    for (const [key, seen] of this.members) {
      for (const [member, at] of seen) if (at <= cutoff) seen.delete(member);
      if (seen.size === 0) this.members.delete(key);
    }
  }
}
