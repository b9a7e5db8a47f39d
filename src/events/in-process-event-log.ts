import type { SessionFrame, SessionFrameBody } from '../core/events';
import { asSubscriber, type EventLog, type FrameListener, type FrameSubscriber, type Replay, type Unsubscribe } from '../core/turns';
import { frameTimestamp, FrameTextMaker } from './frame-text';
import { EVENT_LOG_DEFAULTS, type EventLogLimits } from './retention';

/** How often frames past their retention are freed and idle sessions let go. */
const SWEEP_MS = 5_000;

interface SessionBuffer {
  seq: number;
  frames: SessionFrame[];
  expiresAt: number;
  /** Almost always none or one (a socket; a newer one takes over): an array, replaced on removal. */
  listeners: FrameSubscriber[];
}

/**
 * The embedded event log: one process, memory only. A session is held while it has frames kept for
 * replay or a socket listening; once neither, only its seq counter stays (`countersKept` of them, the
 * least recently retired go first), so memory follows the sessions active in the retention window,
 * not every session the process ever saw.
 */
export class InProcessEventLog implements EventLog {
  readonly name = 'in-process' as const;
  private readonly sessions = new Map<string, SessionBuffer>();
  /** The counters of sessions no longer held, oldest retirement first. */
  private readonly counters = new Map<string, number>();
  private readonly sweep: NodeJS.Timeout;
  /** One for the log, not per session: a burst appends to one session (no bytes per idle socket). */
  private readonly text = new FrameTextMaker();

  constructor(private readonly limits: Readonly<EventLogLimits> = EVENT_LOG_DEFAULTS) {
    this.sweep = setInterval(() => this.dropExpired(), SWEEP_MS);
    this.sweep.unref();
  }

  async append(sessionId: string, body: SessionFrameBody): Promise<SessionFrame> {
    return this.appendNow(this.buffer(sessionId), sessionId, body, frameTimestamp());
  }

  /** Frames appended together were made at one instant: they share one `ts`. */
  async appendAll(sessionId: string, bodies: readonly SessionFrameBody[]): Promise<void> {
    const buffer = this.buffer(sessionId);
    const ts = frameTimestamp();
    for (const body of bodies) this.appendNow(buffer, sessionId, body, ts);
  }

  private appendNow(buffer: SessionBuffer, sessionId: string, body: SessionFrameBody, ts: string): SessionFrame {
    this.expireIfDue(buffer);
    buffer.seq += 1;
    // Key order is the spec's envelope order: type, session_id, payload, seq, ts.
    const frame = { type: body.type, session_id: sessionId, payload: body.payload, seq: buffer.seq, ts } as SessionFrame;
    // The first frame in an exact-size array: push() on an empty one reserves 17 slots (136 bytes per idle socket).
    if (buffer.frames.length === 0) buffer.frames = [frame];
    else buffer.frames.push(frame);
    if (buffer.frames.length > this.limits.maxFramesPerSession) buffer.frames.shift();
    buffer.expiresAt = Math.max(buffer.expiresAt, Date.now() + this.limits.retentionAfterAppendMs);
    if (buffer.listeners.length > 0) {
      const text = this.text.text(sessionId, body, frame.seq, ts); // once, for every socket
      for (const listener of buffer.listeners) listener.onFrame(frame, text);
    }
    return frame;
  }

  async replay(sessionId: string, afterSeq: number): Promise<Replay> {
    const buffer = this.buffer(sessionId);
    this.expireIfDue(buffer);
    if (afterSeq > buffer.seq) {
      buffer.seq = afterSeq; // the client is ahead: this log restarted; keep its numbers increasing
      return { frames: [], complete: false };
    }
    if (afterSeq === buffer.seq) return { frames: [], complete: true };
    if (afterSeq < 0) return { frames: [...buffer.frames], complete: true };
    const first = buffer.frames[0];
    if (!first || first.seq > afterSeq + 1) return { frames: [], complete: false };
    return { frames: buffer.frames.filter((frame) => frame.seq > afterSeq), complete: true };
  }

  /** A single process has no live tail to drop, so `onGap` is never called. */
  async subscribe(sessionId: string, listener: FrameListener | FrameSubscriber): Promise<Unsubscribe> {
    const subscriber = asSubscriber(listener);
    const buffer = this.buffer(sessionId);
    buffer.listeners = buffer.listeners.concat(subscriber); // exact size, unlike a spread
    return () => this.unsubscribe(sessionId, subscriber);
  }

  unsubscribe(sessionId: string, subscriber: FrameSubscriber): void {
    // A session with listeners is never retired, so a subscribed session's buffer is still here.
    const buffer = this.sessions.get(sessionId);
    if (!buffer?.listeners.includes(subscriber)) return;
    buffer.listeners = buffer.listeners.filter((other) => other !== subscriber);
    if (buffer.listeners.length === 0) {
      // The 30-second replay window starts when the last socket goes.
      buffer.expiresAt = Date.now() + this.limits.retentionAfterDisconnectMs;
    }
  }

  async close(): Promise<void> {
    clearInterval(this.sweep);
  }

  /** Sessions held whole (frames or listeners) and counters kept of retired ones: for tests and diagnostics. */
  held(): { sessions: number; counters: number } {
    return { sessions: this.sessions.size, counters: this.counters.size };
  }

  private buffer(sessionId: string): SessionBuffer {
    let buffer = this.sessions.get(sessionId);
    if (!buffer) {
      // Nothing kept yet, so nothing to expire: the first append or the last unsubscribe sets the time.
      buffer = { seq: this.counters.get(sessionId) ?? 0, frames: [], expiresAt: 0, listeners: [] };
      this.counters.delete(sessionId);
      this.sessions.set(sessionId, buffer);
    }
    return buffer;
  }

  private expireIfDue(buffer: SessionBuffer): void {
    if (buffer.listeners.length === 0 && buffer.expiresAt <= Date.now()) buffer.frames = [];
  }

  /** Frees the frames of sessions nobody watches, then lets go of them but for their counter. */
  private dropExpired(): void {
    for (const [sessionId, buffer] of this.sessions) {
      this.expireIfDue(buffer);
      if (buffer.listeners.length === 0 && buffer.frames.length === 0) this.retire(sessionId, buffer);
    }
  }

  private retire(sessionId: string, buffer: SessionBuffer): void {
    this.sessions.delete(sessionId);
    if (buffer.seq === 0) return;
    this.counters.set(sessionId, buffer.seq);
    if (this.counters.size > this.limits.countersKept) this.counters.delete(this.counters.keys().next().value!);
  }
}
