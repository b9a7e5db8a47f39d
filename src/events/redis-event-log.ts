import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { SessionFrame, SessionFrameBody } from '../core/events';
import { asSubscriber, type EventLog, type FrameListener, type FrameSubscriber, type Replay, type Unsubscribe } from '../core/turns';
import { onSubscriberResumed, redisKey } from '../redis/connection';
import { EVENT_LOG_DEFAULTS, type EventLogLimits } from './retention';

/**
 * One script per batch of appends to a session (the frames one tick produced: a burst of tokens),
 * so numbering, storing and publishing happen in one step and every process sees a session's frames
 * in seq order. The batch is one text: each frame's JSON with the byte 0x01 where its seq goes (JSON
 * text never holds a raw control character), the frames joined by newlines (nor a raw newline). The
 * script takes the batch's seqs from the counter and keeps the text as it is, as **one stream entry**
 * whose id is the first frame's seq (`<seq>-0`), and publishes `<first seq>\n<text>` on the live
 * tail; readers write each frame's seq in (the first frame's, then one more each). So Redis does no
 * work per frame: one XADD a batch, not one a frame, and no Lua string work per frame (per-frame
 * XADDs, then writing the seqs in Lua, were most of Redis's CPU on a long stream).
 * An entry holds at most `maxBatch` frames, so the frames after seq N are in the entries from
 * `N + 2 - maxBatch` on. Trimming drops the entries before the one holding the oldest of the last
 * `maxFramesPerSession` frames (MINID: Redis 6.2 or newer). The counter lives `counterTtlMs` after
 * the last append (ARGV[4]).
 *
 * A script that runs twice appends once: a command whose answer was lost when the connection
 * dropped (Redis restarted after running it) is sent again by ioredis once reconnected and runs
 * again, which stored its frames twice, under new seqs (a client saw a token or a `done` twice). Each
 * append carries an id (ARGV[6]) unique to it; the session's recent append ids and their first seqs
 * are kept in KEYS[4] (`;<id>=<first seq>`, newest first, `resendMemoryMs`, at most
 * `RECENT_APPENDS_BYTES`), and an id found there answers its first seq without appending again.
 * ARGV: max frames kept, ttl, count, counter ttl, the batch's text, the append id, the recent ids'
 * ttl. Returns the first seq.
 */
const RECENT_APPENDS_BYTES = 1024;
const APPEND_SCRIPT = `
local append_key = ';' .. ARGV[6] .. '='
local recent = redis.call('GET', KEYS[4]) or ''
local seen = string.find(recent, append_key, 1, true)
if seen then
  local from = seen + #append_key
  return tonumber(string.sub(recent, from, (string.find(recent, ';', from, true) or (#recent + 1)) - 1))
end
local count = tonumber(ARGV[3])
local first = redis.call('INCRBY', KEYS[1], count) - count + 1
redis.call('PEXPIRE', KEYS[1], ARGV[4])
-- %d: Lua's own number to text switches to exponents (1e+14) long before seqs stop being integers.
local first_text = string.format('%d', first)
-- Newest first; what outgrows the bound goes whole (every entry starts with ';').
recent = append_key .. first_text .. recent
if #recent > ${RECENT_APPENDS_BYTES} then recent = string.match(string.sub(recent, 1, ${RECENT_APPENDS_BYTES}), '^(.*);') end
redis.call('SET', KEYS[4], recent, 'PX', ARGV[7])
local id = first_text .. '-0'
-- Entries before the one holding the oldest frame to keep go: this batch's, or an earlier one.
local keep_from = first + count - tonumber(ARGV[1])
local min_id = nil
if keep_from >= first then
  min_id = id
elseif keep_from > 1 then
  local holder = redis.call('XREVRANGE', KEYS[2], string.format('%d', keep_from) .. '-0', '-', 'COUNT', 1)[1]
  if holder then min_id = holder[1] end
end
if min_id then
  redis.call('XADD', KEYS[2], 'MINID', '~', min_id, id, 'f', ARGV[5])
else
  redis.call('XADD', KEYS[2], id, 'f', ARGV[5])
end
redis.call('PEXPIRE', KEYS[2], ARGV[2])
redis.call('PUBLISH', KEYS[3], first_text .. '\\n' .. ARGV[5])
return first
`;

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
  /** The last frame's type and its JSON up to the payload in this session (a burst is one type, mostly). */
  head: { type: string; text: string } | null;
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
 * Raises the counter to ARGV[1] when the client is ahead (the counter was lost or expired), returns
 * the counter. A connection counts as activity: the counter lives ARGV[2] ms from now.
 */
const RAISE_SCRIPT = `
local current = tonumber(redis.call('GET', KEYS[1]) or '0')
local wanted = tonumber(ARGV[1])
if wanted > current then
  redis.call('SET', KEYS[1], ARGV[1]) -- the client's digits as given (a Lua number would be written 1.1e+15)
end
if wanted > current or current > 0 then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return current
`;

type RedisWithScripts = Redis & {
  eventLogAppend(
    seqKey: string,
    streamKey: string,
    channel: string,
    recentKey: string,
    maxLen: number,
    ttlMs: number,
    count: number,
    counterTtlMs: number,
    text: string,
    appendId: string,
    resendMemoryMs: number,
  ): Promise<number>;
  eventLogRaise(seqKey: string, afterSeq: number, counterTtlMs: number): Promise<number>;
};

/** The scaled-out event log: Redis Streams for replay, pub/sub for the live tail. */
export class RedisEventLog implements EventLog {
  readonly name = 'redis' as const;
  private readonly redis: RedisWithScripts;
  private readonly listeners = new Map<string, Set<FrameSubscriber>>();
  /** Appends waiting for the end of this tick, per session. */
  private readonly batches = new Map<string, PendingBatch>();
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
    redis.defineCommand('eventLogAppend', {
      numberOfKeys: 4,
      lua: APPEND_SCRIPT,
    });
    redis.defineCommand('eventLogRaise', { numberOfKeys: 1, lua: RAISE_SCRIPT });
    this.redis = redis as RedisWithScripts;
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
    const ts = new Date().toISOString();
    return new Promise((resolve, reject) => {
      const batch = this.batch(sessionId);
      const at = batch.frames.length;
      batch.frames.push(frameText(batch, sessionId, body, ts));
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
    const ts = new Date().toISOString();
    return new Promise((resolve, reject) => {
      const batch = this.batch(sessionId);
      const at = batch.frames.length;
      for (const body of bodies) batch.frames.push(frameText(batch, sessionId, body, ts));
      batch.waiters.push({ at, count: bodies.length, settle: () => resolve(), fail: reject });
    });
  }

  /** This tick's batch of the session: everything appended to it until the tick's work is done goes in one script. */
  private batch(sessionId: string): PendingBatch {
    let batch = this.batches.get(sessionId);
    if (!batch) {
      batch = { frames: [], waiters: [], head: null };
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

/** The frame's JSON in the spec's envelope order (type, session_id, payload, seq, ts), its seq's place marked. */
function frameText(batch: PendingBatch, sessionId: string, body: SessionFrameBody, ts: string): string {
  if (batch.head?.type !== body.type) {
    batch.head = { type: body.type, text: `{"type":${JSON.stringify(body.type)},"session_id":${JSON.stringify(sessionId)},"payload":` };
  }
  return `${batch.head.text}${JSON.stringify(body.payload)},"seq":${SEQ_PLACE},"ts":"${ts}"}`;
}
