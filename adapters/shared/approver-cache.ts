/**
 * How long a platform's answer about who may approve is kept (issue 30): group and chat-admin
 * changes count within this time, and a burst of clicks costs one platform call.
 */
export const APPROVER_CACHE_MS = 60_000;

/** A small time-limited cache of a platform's membership answers; failures are never kept (the next click asks again). */
export class ApproverCache<T> {
  private readonly entries = new Map<string, { value: Promise<T>; until: number }>();

  constructor(
    private readonly ttlMs: number = APPROVER_CACHE_MS,
    private readonly now: () => number = Date.now,
  ) {}

  get(key: string, load: () => Promise<T>): Promise<T> {
    const kept = this.entries.get(key);
    if (kept && kept.until > this.now()) return kept.value;
    const value = load();
    this.entries.set(key, { value, until: this.now() + this.ttlMs });
    value.catch(() => this.entries.delete(key));
    if (this.entries.size > 1_000) this.entries.delete(this.entries.keys().next().value!);
    return value;
  }
}
