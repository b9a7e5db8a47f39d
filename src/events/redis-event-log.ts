import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { SessionFrame, SessionFrameBody } from '../core/events';
import { asSubscriber, type EventLog, type FrameListener, type FrameSubscriber, type Replay, type Unsubscribe } from '../core/turns';
import { onSubscriberResumed, redisKey } from '../redis/connection';
import { frameTimestamp, FrameTextMaker } from './frame-text';
import { defineEventLogScripts, type RedisWithScripts } from './redis-event-log-scripts';
import { EVENT_LOG_DEFAULTS, type EventLogLimits } from './retention';

export const REDIS_EVENT_LOG_DEFAULTS = {
  /** Most frames one script appends, and so one stream entry holds (a longer burst takes several): Redis runs a script alone. */
  maxBatch: 256,
  /**
   * How long an append's id is remembered, so that the same append sent again is not stored
   * twice: far longer than a client takes to resend after reconnecting (REDIS_COMMAND_RETRIES, ~5 s).
   */
  resendMemoryMs: 60_000,
};

/** Where a frame's seq goes in the batch's text (JSON.stringify escapes every control character). */
const SEQ_PLACE = '\u0001';

/** The appends to one session waiting for the end of this tick: each frame's JSON with its seq's place, and who waits. */
interface PendingBatch {
  frames: string[];
  waiters: Waiter[];
}

/** An `append` (one frame, answered with it) or an `appendAll` (`count` frames, answered once). */
interface Waiter {
  /** Index of its first frame in the batch. */
  at: number;
  count: number;
  settle(firstSeq: number): void;
  fail(error: unknown): void;
}

/**
 * The scaled-out event log: Redis Streams for replay, pub/sub for the live tail. A tick's appends to
 * a session go as one script, one stream entry and one message (redis-event-log-scripts.ts says how,
 * and how a script sent twice appends once); readers write each frame's seq in.
 */
export class RedisEventLog implements EventLog {
  readonly name = 'redis' as const;
  private readonly redis: RedisWithScripts;
  private readonly listeners = new Map<string, Set<FrameSubscriber>>();
  /** Appends waiting for the end of this tick, per session. */
  private readonly batches = new Map<string, PendingBatch>();
  /** Each frame's JSON, its seq's place marked: one for the log, as in the in-process log (a burst is one session and type). */
  private readonly text = new FrameTextMaker();
  /** Each append's id: this log's own prefix and a count (the script tells a resent append by it). */
  private readonly appendIdPrefix = `${randomBytes(6).toString('base64url')}:`;
  private appends = 0;

  /** `redis` runs commands; `subscriber` is a dedicated connection in subscriber mode. */
  constructor(
    redis: Redis,
    private readonly subscriber: Redis,
    private readonly prefix: string,
    private readonly limits: Readonly<EventLogLimits> = EVENT_LOG_DEFAULTS,
  ) {
    this.redis = defineEventLogScripts(redis);
    // Each live listener catches up when the subscriber connection is back after a drop.
    onSubscriberResumed(subscriber, () => {
      for (const set of [...this.listeners.values()]) for (const listener of [...set]) listener.onGap?.();
    });
    this.subscriber.on('message', (channel: string, message: string) => {
      const listeners = this.listeners.get(channel);
      if (!listeners) return;
      const cut = message.indexOf('\n');
      for (const [frame, text] of unpacked(message.slice(cut + 1), Number(message.slice(0, cut)))) {
        for (const listener of listeners) listener.onFrame(frame, text);
      }
    });
  }

  append(sessionId: string, body: SessionFrameBody): Promise<SessionFrame> {
    const ts = frameTimestamp();
    return new Promise((resolve, reject) => {
      const batch = this.batch(sessionId);
      const at = batch.frames.length;
      batch.frames.push(this.text.text(sessionId, body, SEQ_PLACE, ts));
      batch.waiters.push({
        at,
        count: 1,
        settle: (seq) => resolve({ type: body.type, session_id: sessionId, payload: body.payload, seq, ts } as SessionFrame),
        fail: reject,
      });
    });
  }

  appendAll(sessionId: string, bodies: readonly SessionFrameBody[]): Promise<void> {
    if (bodies.length === 0) return Promise.resolve();
    // Frames appended together were made at one instant: they share one `ts`.
    const ts = frameTimestamp();
    return new Promise((resolve, reject) => {
      const batch = this.batch(sessionId);
      const at = batch.frames.length;
      for (const body of bodies) batch.frames.push(this.text.text(sessionId, body, SEQ_PLACE, ts));
      batch.waiters.push({ at, count: bodies.length, settle: () => resolve(), fail: reject });
    });
  }

  /** This tick's batch of the session: everything appended to it until the tick's work is done goes in one script. */
  private batch(sessionId: string): PendingBatch {
    let batch = this.batches.get(sessionId);
    if (!batch) {
      batch = { frames: [], waiters: [] };
      this.batches.set(sessionId, batch);
      process.nextTick(() => this.flush(sessionId));
    }
    return batch;
  }

  private flush(sessionId: string): void {
    const batch = this.batches.get(sessionId);
    if (!batch) return;
    this.batches.delete(sessionId);
    const { maxBatch } = REDIS_EVENT_LOG_DEFAULTS;
    const frames = batch.frames.length;
    // One script per `maxBatch` frames; each answers the seq of its first frame.
    const scripts: Promise<number>[] = [];
    for (let start = 0; start < frames; start += maxBatch) {
      const count = Math.min(maxBatch, frames - start);
      const whole = start === 0 && count === frames;
      const texts = whole ? batch.frames : batch.frames.slice(start, start + count);
      scripts.push(
        this.redis.eventLogAppend(
          this.seqKey(sessionId),
          this.streamKey(sessionId),
          this.channel(sessionId),
          this.recentKey(sessionId),
          this.limits.maxFramesPerSession,
          this.limits.retentionAfterAppendMs,
          count,
          this.limits.counterTtlMs,
          texts.join('\n'),
          this.appendIdPrefix + (this.appends++).toString(36),
          REDIS_EVENT_LOG_DEFAULTS.resendMemoryMs,
        ),
      );
    }
    for (const waiter of batch.waiters) {
      const first = Math.floor(waiter.at / maxBatch);
      const last = Math.floor((waiter.at + waiter.count - 1) / maxBatch);
      const offset = waiter.at - first * maxBatch;
      const done = first === last ? scripts[first]! : Promise.all(scripts.slice(first, last + 1)).then((seqs) => seqs[0]!);
      done.then((seq) => waiter.settle(Number(seq) + offset), waiter.fail);
    }
  }

  async replay(sessionId: string, afterSeq: number): Promise<Replay> {
    const current = await this.redis.eventLogRaise(this.seqKey(sessionId), afterSeq, this.limits.counterTtlMs);
    if (afterSeq > current) return { frames: [], complete: false };
    if (afterSeq === current) return { frames: [], complete: true };
    // Only the last maxFramesPerSession frames count (trimming drops whole entries, so an entry may
    // hold older ones). The entry holding the first frame wanted starts at most maxBatch - 1 before it.
    const after = Math.max(afterSeq, current - this.limits.maxFramesPerSession);
    const from = after < 0 ? '-' : `${Math.max(0, after + 2 - REDIS_EVENT_LOG_DEFAULTS.maxBatch)}-0`;
    const entries = await this.redis.xrange(this.streamKey(sessionId), from, '+');
    const frames: SessionFrame[] = [];
    for (const [id, fields] of entries) for (const [frame] of unpacked(fields[1]!, Number.parseInt(id, 10), after)) frames.push(frame);
    if (afterSeq < 0) return { frames, complete: true };
    if (frames.length === 0 || frames[0]!.seq !== afterSeq + 1) return { frames: [], complete: false };
    return { frames, complete: true };
  }

  async subscribe(sessionId: string, listener: FrameListener | FrameSubscriber, onGap?: () => void): Promise<Unsubscribe> {
    const subscriber = asSubscriber(listener, onGap);
    const channel = this.channel(sessionId);
    let set = this.listeners.get(channel);
    if (!set) {
      set = new Set();
      this.listeners.set(channel, set);
      await this.subscriber.subscribe(channel);
    }
    set.add(subscriber);
    return () => this.unsubscribe(sessionId, subscriber);
  }

  unsubscribe(sessionId: string, subscriber: FrameSubscriber): void {
    const channel = this.channel(sessionId);
    const current = this.listeners.get(channel);
    if (!current?.delete(subscriber) || current.size > 0) return;
    this.listeners.delete(channel);
    void this.subscriber.unsubscribe(channel).catch(() => undefined);
    // The 30-second replay window starts when the last socket goes.
    void this.redis.pexpire(this.streamKey(sessionId), this.limits.retentionAfterDisconnectMs).catch(() => undefined);
  }

  async close(): Promise<void> {
    this.listeners.clear();
  }

  private seqKey(sessionId: string): string {
    return redisKey(this.prefix, 'events', sessionId, 'seq');
  }

  private streamKey(sessionId: string): string {
    // `batches` and `tail`: a batch of frames an entry, seqs written in by the reader (until 2026-11-29
    // `frames` and `live` held a frame an entry; the names differ so such processes never read these).
    return redisKey(this.prefix, 'events', sessionId, 'batches');
  }

  private recentKey(sessionId: string): string {
    return redisKey(this.prefix, 'events', sessionId, 'appends');
  }

  private channel(sessionId: string): string {
    return redisKey(this.prefix, 'events', sessionId, 'tail');
  }
}

/** A stored batch's frames after seq `after`, their seqs written in (`first`, then one more each): each frame and its JSON text. */
function unpacked(batch: string, first: number, after = first - 1): [SessionFrame, string][] {
  const frames: [SessionFrame, string][] = [];
  batch.split('\n').forEach((marked, index) => {
    if (first + index <= after) return;
    const text = marked.replace(SEQ_PLACE, String(first + index));
    frames.push([JSON.parse(text) as SessionFrame, text]);
  });
  return frames;
}
