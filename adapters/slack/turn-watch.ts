import type { Logger } from 'pino';
import type { SessionFrame } from '../../src/core/events';
import type { Hub } from '../../src/core/hub';
import type { Unsubscribe } from '../../src/core/turns';
import { SLACK_LIMITS } from './limits';
import type { TurnRenderer } from './render';

/**
 * Feeds one turn's frames to its renderer. A turn's frames begin with `agent_state: thinking`
 * (the worker's first event), so everything before that — the end of the previous turn — is
 * skipped. Listening starts before the message is stored when the session is known; for a
 * conversation's first message here it starts just after, and the kept frames are replayed, so a
 * fast turn is not missed (frames stamped before the message was stored are not this turn's).
 */
export class TurnWatch {
  private unsubscribe: Unsubscribe | null = null;
  private started = false;
  private lastSeq = Number.NEGATIVE_INFINITY;
  private buffered: SessionFrame[] | null = null;
  private timer: NodeJS.Timeout | null = null;
  private over = false;

  constructor(
    private readonly hub: Hub,
    private readonly renderer: TurnRenderer,
    private readonly storedAfter: number,
    private readonly onEnd: () => void,
    private readonly logger: Logger,
  ) {}

  /** Listens to the session; with `replay`, also feeds the frames already kept. */
  async begin(sessionId: string, replay: boolean): Promise<void> {
    if (replay) this.buffered = [];
    this.unsubscribe = await this.hub.events.subscribe(sessionId, (frame) => this.receive(frame));
    this.timer = setTimeout(() => {
      this.logger.warn({ session_id: sessionId }, 'a Slack turn went silent; no longer rendering it');
      this.stop();
    }, SLACK_LIMITS.renderTimeoutMs);
    this.timer.unref();
    if (!replay) return;
    const kept = await this.hub.events.replay(sessionId, -1);
    const live = this.buffered ?? [];
    this.buffered = null;
    for (const frame of [...kept.frames, ...live].sort((a, b) => a.seq - b.seq)) this.feed(frame);
  }

  /** Stops listening; the renderer makes no further calls. */
  stop(): void {
    if (this.over) return;
    this.over = true;
    this.renderer.abandon();
    this.finish();
  }

  private receive(frame: SessionFrame): void {
    if (this.buffered) this.buffered.push(frame);
    else this.feed(frame);
  }

  private feed(frame: SessionFrame): void {
    if (this.over || frame.seq <= this.lastSeq) return; // replay and live tail overlap: each seq once
    this.lastSeq = frame.seq;
    if (!this.started) {
      const isStart = frame.type === 'agent_state' && frame.payload.state === 'thinking';
      if (!isStart || Date.parse(frame.ts) < this.storedAfter - SLACK_LIMITS.clockSkewToleranceMs) return;
      this.started = true;
    }
    if (this.renderer.handle(frame)) {
      this.over = true;
      this.finish();
    }
  }

  private finish(): void {
    if (this.timer) clearTimeout(this.timer);
    this.unsubscribe?.();
    this.unsubscribe = null;
    this.onEnd();
  }
}
