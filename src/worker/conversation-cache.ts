import { madeOncePer } from '../core/made-once';
import type { MessageRecord } from '../db/turn-store';

export const CONVERSATION_CACHE_DEFAULTS = {
  /** Sessions whose conversation a worker keeps between turns (least recently used ones go first). */
  maxSessions: 1_000,
  /**
   * The estimated size of all kept conversations (see `messageBytes`); least recently used ones go
   * first. A count alone did not bound memory: a message may carry up to 1 MiB (text and
   * `metadata`), and 1,000 sessions of those held ~80 MB after a fuzz run. A conversation larger
   * than this is not kept (its next turn reads it from the database, as on any miss).
   */
  maxBytes: 32 * 1024 * 1024,
  /**
   * Messages kept in all, whatever the number of sessions: a session's window is bounded only by the
   * context window (hundreds of messages), so a bound in sessions alone let a worker's memory grow
   * with every long session it ran (the soak run's workers grew for its whole 10 minutes). A short
   * message held with its ids and dates measured ~1.6 KB of heap, so this is ~26 MB of short ones.
   * Thirty-two 500-message sessions fit: at 5,000 (ten), sixteen long sessions taking turns in
   * rotation missed on every turn (least recently used goes first) and read 500 rows each time.
   */
  maxMessages: 16_000,
};

/**
 * What a kept message costs besides its text: the record's object, its ids (strings of their own),
 * fields and date; measured ~1.6 KB of heap for a message of 60 characters (Node 20).
 */
const MESSAGE_OVERHEAD_BYTES = 1_536;
/**
 * A message's size, estimated: two bytes per UTF-16 unit of its text and JSON, plus the record's
 * overhead. Made once per record (the same records are kept turn after turn).
 */
export const messageBytes = madeOncePer((message: MessageRecord): number => {
  const units = message.content.length + jsonLength(message.metadata) + jsonLength(message.tool_calls);
  return 2 * units + MESSAGE_OVERHEAD_BYTES;
});

function jsonLength(value: unknown): number {
  return value === null || value === undefined ? 0 : (JSON.stringify(value)?.length ?? 0);
}

/**
 * The messages after `ordinal`, of messages in ordinal order (as read, and as kept): those before it
 * are a prefix, cut once (a filter over a long session's window was a per-turn cost of its own).
 */
export function messagesAfter(messages: readonly MessageRecord[], ordinal: number): readonly MessageRecord[] {
  let first = 0;
  while (first < messages.length && messages[first]!.ordinal <= ordinal) first += 1;
  return first === 0 ? messages : messages.slice(first);
}

interface Entry {
  /** The session's `updated_at` as this worker's last write left it (ms). */
  updatedAt: number;
  messages: MessageRecord[];
  /** The messages' estimated size. */
  bytes: number;
}

/**
 * A worker's copy of the conversations it ran last, so a long session's next turn reads only what
 * is new. It is trusted only while the session's `updated_at` is still the one this worker's own
 * last write gave it: another worker's turn, a cleared history or memory, a rename — anything that
 * touched the session since — makes it a miss, and the turn reads the whole window again.
 */
export class ConversationCache {
  private readonly entries = new Map<string, Entry>();
  private bytes = 0;
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
    return [...messagesAfter(entry.messages, memoryThrough ?? 0), ...fresh];
  }

  /** Keeps the conversation as this worker leaves it (its reply included) and the `updated_at` it wrote. */
  keep(sessionId: string, updatedAt: Date, messages: MessageRecord[]): void {
    this.forget(sessionId);
    const bytes = messages.reduce((sum, message) => sum + messageBytes(message), 0);
    if (bytes > this.limits.maxBytes || messages.length > this.limits.maxMessages) return;
    const full = () =>
      this.entries.size >= this.limits.maxSessions || this.bytes + bytes > this.limits.maxBytes || this.size + messages.length > this.limits.maxMessages;
    while (this.entries.size > 0 && full()) this.forget(this.entries.keys().next().value!);
    this.entries.set(sessionId, { updatedAt: updatedAt.getTime(), messages, bytes });
    this.bytes += bytes;
    this.size += messages.length;
  }

  forget(sessionId: string): void {
    const entry = this.entries.get(sessionId);
    if (!entry) return;
    this.entries.delete(sessionId);
    this.bytes -= entry.bytes;
    this.size -= entry.messages.length;
  }

  /** Sessions kept and their estimated size: for tests and diagnostics. */
  held(): { sessions: number; bytes: number } {
    return { sessions: this.entries.size, bytes: this.bytes };
  }

  /** Messages kept now (all sessions). */
  get messages(): number {
    return this.size;
  }
}
