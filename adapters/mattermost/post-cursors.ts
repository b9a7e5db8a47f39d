import type { Post } from '@mattermost/types/posts';
import type { Logger } from 'pino';
import type { ChannelCursors } from '../../src/core/channel-cursors';
import { MATTERMOST_CHANNEL } from './normalize';

/** Named limits of the kept positions (adapters/README.md: every limit a named default). */
export const POST_CURSOR_LIMITS = {
  /** Positions are written at most this often (and at stop): a crash re-reads at most this much, and duplicates are recognised. */
  flushIntervalMs: 2000,
} as const;

/** The key of the newest post dealt with in any channel: where a channel without a position of its own catches up from. */
const NEWEST_KEY = '*';
/** The key of when the channel first listened: nothing older is ever caught up (not even within the margin). */
const FIRST_KEY = '^';

interface Position {
  /** create_at of the newest post of the channel dealt with (taken in, a duplicate, or not for the bot); null: none yet. */
  done: number | null;
  /** Posts whose ingest failed and that are not taken in yet: post id → create_at. They hold the position back. */
  failing: Map<string, number>;
}

/**
 * Where the channel got to in each Mattermost channel, kept across restarts of the hub (the hub's
 * `channel_cursors`): the create_at (and id) of the last post dealt with, held back before the
 * oldest post whose ingest failed. A start catches up from there, so posts made while the whole hub
 * was down are answered; a post taken in already is a duplicate for the hub (answered once).
 */
export class PostCursors {
  private readonly positions = new Map<string, Position>();
  private readonly lastIds = new Map<string, string>();
  private readonly dirty = new Set<string>();
  private newest = 0;
  /** When the channel first listened (the hub's clock); 0: not known (positions kept before it was recorded). */
  private first = 0;
  private loaded = false;
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly store: ChannelCursors | undefined,
    private readonly logger: Logger,
  ) {}

  /**
   * Reads the kept positions (once a process: a later start keeps what this one knows). With none at
   * all (the channel's first start) the hub listens from now on: false, nothing to catch up on.
   * Throws when the store cannot be read.
   */
  async load(): Promise<boolean> {
    if (this.loaded) return true;
    const stored = this.store ? await this.store.read(MATTERMOST_CHANNEL) : new Map<string, string>();
    for (const [key, value] of stored) {
      const at = Number(value.split(':')[0]);
      if (!Number.isFinite(at) || at <= 0) continue;
      if (key === FIRST_KEY) this.first = at;
      else if (key === NEWEST_KEY) this.newest = Math.max(this.newest, at);
      else if (!this.positions.has(key)) this.positions.set(key, { done: at, failing: new Map() });
    }
    this.loaded = true;
    if (this.newest > 0) return true;
    this.first = Date.now();
    this.dirty.add(FIRST_KEY);
    this.advanceNewest(this.first);
    await this.flush();
    return false;
  }

  /** When the channel first listened: a catch-up never asks for older posts. */
  get listeningSince(): number {
    return this.first;
  }

  /** Where a catch-up of `channelId` starts (create_at, ms): its own position, or the newest post of any channel. */
  since(channelId: string): number {
    const position = this.positions.get(channelId);
    return position ? positionValue(position) : this.newest;
  }

  /** `post` was dealt with: the position moves past it (and a failure of it is over). */
  done(post: Post): void {
    const position = this.position(post.channel_id);
    position.failing.delete(post.id);
    position.done = Math.max(position.done ?? 0, post.create_at);
    this.lastIds.set(post.channel_id, post.id);
    this.touch(post);
  }

  /** Taking `post` in failed: the channel's position stays before it until it is taken in. */
  failed(post: Post): void {
    this.position(post.channel_id).failing.set(post.id, post.create_at);
    this.touch(post);
  }

  /** Writes what changed now (at stop, and every `flushIntervalMs`); a failure is logged and written again later. */
  async flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (!this.store || this.dirty.size === 0) return;
    const entries = new Map<string, string>();
    for (const key of this.dirty) {
      const position = this.positions.get(key);
      const at = key === FIRST_KEY ? this.first : key === NEWEST_KEY ? this.newest : position ? positionValue(position) : 0;
      if (at > 0) entries.set(key, `${at}:${this.lastIds.get(key) ?? ''}`);
    }
    this.dirty.clear();
    try {
      await this.store.write(MATTERMOST_CHANNEL, entries);
    } catch (error) {
      for (const key of entries.keys()) this.dirty.add(key);
      this.logger.warn({ err: error }, 'mattermost: could not keep where the channel got to; trying again');
      this.schedule();
    }
  }

  private position(channelId: string): Position {
    let position = this.positions.get(channelId);
    if (!position) {
      position = { done: null, failing: new Map() };
      this.positions.set(channelId, position);
    }
    return position;
  }

  private touch(post: Post): void {
    this.dirty.add(post.channel_id);
    this.advanceNewest(post.create_at);
    this.schedule();
  }

  private advanceNewest(at: number): void {
    if (at <= this.newest) return;
    this.newest = at;
    this.dirty.add(NEWEST_KEY);
  }

  private schedule(): void {
    if (this.timer || !this.store) return;
    this.timer = setTimeout(() => void this.flush(), POST_CURSOR_LIMITS.flushIntervalMs);
    this.timer.unref();
  }
}

/** A position as a catch-up reads it: after the newest post dealt with, but before the oldest still failing. */
function positionValue(position: Position): number {
  if (position.failing.size === 0) return position.done ?? 0;
  const held = Math.min(...position.failing.values()) - 1;
  return position.done === null ? held : Math.min(position.done, held);
}
