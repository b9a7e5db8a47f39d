import type { EventLog, TurnRegistry, WorkerPresence } from '../core/turns';
import type { Logger } from '../logs/logger';

/** How often (at most) an API process looks for accepted turns no worker took. */
export const PICKUP_SWEEP_MS = 5_000;

export interface PickupWatchOptions {
  /** How long a turn may wait in the queue before the client is told nobody took it. */
  warnAfterMs: number;
  /** How often accepted turns are checked (one batched registry read per check). */
  sweepMs: number;
}

/**
 * Tells a client when its turn waits in the queue with no worker taking it (none running, or all
 * busy): a non-final `error WORKER_UNAVAILABLE` frame and a warning in the log. The turn stays
 * queued. Each accepted turn is looked at once, `warnAfterMs` after it was accepted, in batches.
 */
export class PickupWatch {
  private readonly waiting = new Map<string, { sessionId: string; acceptedAt: number }>();
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly deps: { registry: TurnRegistry; events: EventLog; workers: WorkerPresence; logger: Logger },
    private readonly options: PickupWatchOptions,
  ) {}

  start(): void {
    this.timer = setInterval(
      () => void this.sweep().catch((error: unknown) => this.deps.logger.warn({ err: error }, 'pickup check failed')),
      this.options.sweepMs,
    );
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.waiting.clear();
  }

  watch(sessionId: string, turnId: string): void {
    this.waiting.set(turnId, { sessionId, acceptedAt: Date.now() });
  }

  /** Checks the turns accepted at least `warnAfterMs` ago; exposed for tests. */
  async sweep(): Promise<void> {
    const due: [string, string][] = [];
    const cutoff = Date.now() - this.options.warnAfterMs;
    for (const [turnId, entry] of this.waiting) {
      if (entry.acceptedAt > cutoff) break; // insertion order is acceptance order
      due.push([turnId, entry.sessionId]);
      this.waiting.delete(turnId);
    }
    if (due.length === 0) return;
    const live = await this.deps.registry.getMany(due.map(([, sessionId]) => sessionId));
    const stuck = due.filter(([turnId, sessionId]) => {
      const turn = live.get(sessionId);
      return turn?.turnId === turnId && turn.phase === 'queued';
    });
    if (stuck.length === 0) return;
    const workers = await this.deps.workers.alive();
    const seconds = Math.round(this.options.warnAfterMs / 1000);
    const why = workers === 0 ? 'no worker is running (start one with `npm run worker`)' : `all ${workers} worker(s) are busy`;
    for (const [turnId, sessionId] of stuck) {
      this.deps.logger.warn({ session_id: sessionId, turn_id: turnId, workers }, `a turn has waited ${seconds} s for a worker: ${why}`);
      await this.deps.events.append(sessionId, {
        type: 'error',
        payload: {
          code: 'WORKER_UNAVAILABLE',
          message: `No worker has started this turn after ${seconds} s: ${why}. It stays queued; cancel it to give up.`,
          turn_id: turnId,
        },
      });
    }
  }
}

/** The watch's timings for `worker.pickup_warning_s`: a short warning time is checked four times within it. */
export function pickupTimings(pickupWarningS: number): PickupWatchOptions {
  return { warnAfterMs: pickupWarningS * 1000, sweepMs: Math.min(PICKUP_SWEEP_MS, pickupWarningS * 250) };
}
