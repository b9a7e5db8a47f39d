/**
 * Where a channel got to on its platform, kept across restarts of the hub (issue 31): a channel that
 * catches up on what was posted while the hub was down reads its positions at start and writes them
 * as it goes. Keys and values are the channel's own (Mattermost: a channel id → its last post dealt
 * with); the hub only stores them, shared by every process (the database).
 */
export interface ChannelCursors {
  /** Every position `channel` stored: key → value. */
  read(channel: string): Promise<Map<string, string>>;
  /** Stores these positions of `channel` (each key replaced; keys not given stay). */
  write(channel: string, entries: ReadonlyMap<string, string>): Promise<void>;
}

/** Longest key and value a channel may store (the table's column sizes). */
export const CHANNEL_CURSOR_LIMITS = { keyChars: 128, valueChars: 512 } as const;
