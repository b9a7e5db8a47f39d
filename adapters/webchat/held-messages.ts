export interface HeldLimits {
  /** How long a message waits for its visitor to come back (a page load, a flaky network). */
  keepMs: number;
  /** Messages kept per conversation; older ones give way. */
  perConversation: number;
  /** Conversations with held messages; the one held longest gives way. */
  conversations: number;
}

/**
 * Answers for a visitor with no socket open here at that moment — they clicked to another page of
 * the site mid-answer — kept for a while and delivered when the widget asks for its session again.
 * Bounded in time, per conversation and overall (anonymous visitors must not grow memory).
 */
export class HeldMessages<T> {
  private readonly held = new Map<string, { items: T[]; until: number }>();

  constructor(
    private readonly limits: HeldLimits,
    private readonly now: () => number = Date.now,
  ) {}

  hold(conversation: string, item: T): void {
    const entry = this.held.get(conversation) ?? { items: [], until: 0 };
    entry.items.push(item);
    if (entry.items.length > this.limits.perConversation) entry.items.shift();
    entry.until = this.now() + this.limits.keepMs;
    // Re-inserted at the end: the map's first entry is the one held longest.
    this.held.delete(conversation);
    this.held.set(conversation, entry);
    if (this.held.size > this.limits.conversations) this.held.delete(this.held.keys().next().value!);
  }

  /** The messages kept for `conversation` (now delivered, so no longer kept). */
  take(conversation: string): T[] {
    const entry = this.held.get(conversation);
    this.held.delete(conversation);
    return entry && entry.until > this.now() ? entry.items : [];
  }

  sweep(): void {
    const now = this.now();
    for (const [conversation, entry] of this.held) if (entry.until <= now) this.held.delete(conversation);
  }

  get size(): number {
    return this.held.size;
  }
}
