import type { ErrorCode } from './error-codes';
import type { DonePayload, SessionFrame } from './frames';

/** How a turn ended: its `done`, a cancel, or the error that ended it. */
export type TurnOutcome =
  | { kind: 'done'; done: DonePayload }
  /** The message waited and another turn answers it together with its own (mid-turn policy `collect`). */
  | { kind: 'merged'; into: string }
  /** The message waited and was deleted on its platform before its turn started: no turn, no answer. */
  | { kind: 'dropped' }
  /** The follower stopped (`stop()`, e.g. at shutdown) before the turn ended. */
  | { kind: 'stopped' }
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
      if (frame.payload.code === 'CANCELLED') return frame.payload.dropped ? { kind: 'dropped' } : { kind: 'cancelled' };
      this.lastError = { code: frame.payload.code, message: frame.payload.message };
      return this.idle ? { kind: 'error', ...this.lastError } : null;
    }
    if (frame.type === 'agent_state' && frame.payload.state === 'idle') {
      this.idle = true;
      if (this.lastError) return { kind: 'error', ...this.lastError };
    }
    return null;
  }

  /** A tracker that goes on from the frames this one has seen (for immutable client state, e.g. a React reducer). */
  copy(): TurnOutcomeTracker {
    const copy = new TurnOutcomeTracker();
    copy.lastError = this.lastError;
    copy.idle = this.idle;
    return copy;
  }
}

/**
 * True for the frame that says no turn runs in the session: `agent_state idle` naming no turn.
 * Every frame of a turn names it (`turn_id`), and so does the state the hub sends on (re)connect
 * while a turn is queued or running; so this is the on-connect state of an idle session. A client
 * following a turn the tracker has not seen end learns from it that the turn ended out of its
 * sight (a restarted hub, an expired replay buffer): the reply, if any, is in the history.
 */
export function saysNoTurnRuns(frame: SessionFrame): boolean {
  return frame.type === 'agent_state' && frame.payload.state === 'idle' && frame.payload.turn_id === undefined;
}
