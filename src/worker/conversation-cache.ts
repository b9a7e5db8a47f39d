import type { MessageRecord } from '../db/turn-store';

export const CONVERSATION_CACHE_DEFAULTS = {
  /** Sessions whose conversation a worker keeps between turns (least recently used ones go first). */
  maxSessions: 1_000,
  /**
   * Messages kept in all (a few kilobytes each: about 15 MB), whatever the number of sessions: a
   * session's window is bounded only by the context window (hundreds of messages), so a bound in
   * sessions alone let a worker's memory grow with every long session it ran (the soak run's workers
   * grew for its whole 10 minutes). Ten 500-message sessions still fit.
   */
  maxMessages: 5_000,
};

interface Entry {
  /** The session's `updated_at` as this worker's last write left it (ms). */
  updatedAt: number;
  messages: MessageRecord[];
}

/**
 * A worker's copy of the conversations it ran last, so a long session's next turn reads only what
 * is new. It is trusted only while the session's `updated_at` is still the one this worker's own
 * last write gave it: another worker's turn, a cleared history or memory, a rename — anything that
 * touched the session since — makes it a miss, and the turn reads the whole window again.
 */
export class ConversationCache {
  private readonly entries = new Map<string, Entry>();
  /** Messages of all entries. */
  private size = 0;

  constructor(private readonly limits = CONVERSATION_CACHE_DEFAULTS) {}

  /** The ordinal after which a turn needs to read (undefined: read the whole window). */
  readAfter(sessionId: string): number | undefined {
    return this.entries.get(sessionId)?.messages.at(-1)?.ordinal;
  }

  /**
   * The conversation after `memoryThrough`: the cached messages plus `fresh` (read after
   * `readAfter`), or null when the cache cannot be trusted for this session.
   */
  join(sessionId: string, updatedAt: Date, memoryThrough: number | null, fresh: readonly MessageRecord[]): MessageRecord[] | null {
    const entry = this.entries.get(sessionId);
    if (!entry || entry.updatedAt !== updatedAt.getTime()) return null;
    const after = memoryThrough ?? 0;
    return [...entry.messages.filter((message) => message.ordinal > after), ...fresh];
  }

  /** Keeps the conversation as this worker leaves it (its reply included) and the `updated_at` it wrote. */
  keep(sessionId: string, updatedAt: Date, messages: MessageRecord[]): void {
    this.forget(sessionId);
    if (messages.length > this.limits.maxMessages) return;
    while (this.entries.size > 0 && (this.entries.size >= this.limits.maxSessions || this.size + messages.length > this.limits.maxMessages)) {
      this.forget(this.entries.keys().next().value!);
    }
    this.entries.set(sessionId, { updatedAt: updatedAt.getTime(), messages });
    this.size += messages.length;
  }

  forget(sessionId: string): void {
    const entry = this.entries.get(sessionId);
    if (!entry) return;
    this.entries.delete(sessionId);
    this.size -= entry.messages.length;
  }

  /** Messages kept now (all sessions). */
  get messages(): number {
    return this.size;
  }
}
