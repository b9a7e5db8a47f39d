import type { ErrorCode } from './errors';
import type { DonePayload, SessionFrame } from './events';
import type { EventLog, Unsubscribe } from './turns';

/** How a turn ended: its `done`, a cancel, or the error that ended it. */
export type TurnOutcome =
  | { kind: 'done'; done: DonePayload }
  | { kind: 'cancelled' }
  | { kind: 'error'; code: ErrorCode; message: string };

/**
 * Decides a turn's outcome from its frames, in seq order; null while it runs. The spec's endings:
 * `done` (success); `agent_state idle` then `error CANCELLED` (cancel); `error`, `agent_state error`,
 * `agent_state idle` (failure). An `error` that is not followed by `idle` did not end the turn.
 */
export class TurnOutcomeTracker {
  private lastError: { code: ErrorCode; message: string } | null = null;
  private idle = false;

  next(frame: SessionFrame): TurnOutcome | null {
    if (frame.type === 'done') return { kind: 'done', done: frame.payload };
    if (frame.type === 'error') {
      if (frame.payload.code === 'CANCELLED') return { kind: 'cancelled' };
      this.lastError = { code: frame.payload.code, message: frame.payload.message };
      return this.idle ? { kind: 'error', ...this.lastError } : null;
    }
    if (frame.type === 'agent_state' && frame.payload.state === 'idle') {
      this.idle = true;
      if (this.lastError) return { kind: 'error', ...this.lastError };
    }
    return null;
  }
}

export interface FollowedTurn {
  /** Settles with the outcome once the turn's frames say it ended. */
  outcome: Promise<TurnOutcome>;
  stop: Unsubscribe;
}

/**
 * Follows one turn by its id (the `turn_id` every event of a turn carries): subscribe before the
 * turn is accepted, so no frame is missed. Frames of other turns and frames that belong to no turn
 * are ignored; no clock decides what belongs to the turn.
 */
export async function followTurn(events: EventLog, sessionId: string, turnId: string): Promise<FollowedTurn> {
  let settle!: (outcome: TurnOutcome) => void;
  const outcome = new Promise<TurnOutcome>((resolve) => (settle = resolve));
  const tracker = new TurnOutcomeTracker();
  const stop = await events.subscribe(sessionId, (frame) => {
    if ((frame.payload as { turn_id?: string }).turn_id !== turnId) return;
    const ended = tracker.next(frame);
    if (ended) settle(ended);
  });
  return { outcome, stop };
}
