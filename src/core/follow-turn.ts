import { TurnOutcomeTracker, type TurnOutcome } from '../protocol/turn-outcome';
import type { ErrorCode } from './errors';
import type { SessionFrame } from './events';
import type { EventLog } from './turns';

// The reducer that decides how a turn ended is part of the wire protocol (src/protocol/turn-outcome.ts):
// the CLI and the Web UI follow turns with it too. Its names stay importable from here.
export { TurnOutcomeTracker, type TurnOutcome };

/**
 * Error codes whose message a chat channel shows as it is (it tells the person what to do); any
 * other error is shown as the channel's short apology, its message kept for the logs.
 */
export const SHOWN_ERROR_CODES: ReadonlySet<ErrorCode> = new Set<ErrorCode>(['BUDGET_EXCEEDED']);

/** The text a chat channel shows for a turn that ended in an error: its message when safe to show, else `apology`. */
export function errorText(outcome: { code: ErrorCode; message: string }, apology: string): string {
  return SHOWN_ERROR_CODES.has(outcome.code) ? outcome.message : apology;
}

export interface FollowOptions {
  /** Every frame of the turn, in seq order, once each, until (and including) the one that ends it. */
  onFrame?: (frame: SessionFrame) => void;
  /**
   * Also deliver the turn's frames the log still keeps from before the subscription (a channel that
   * follows its turn once it has been accepted). Not needed when following starts before accepting.
   */
  replay?: boolean;
}

export interface FollowedTurn {
  /** Settles with the outcome once the turn's frames say it ended. */
  outcome: Promise<TurnOutcome>;
  /** Stops following (it also stops by itself once the outcome is known); an outcome not yet known becomes `stopped`. */
  stop(): void;
}

/**
 * Follows one turn by its id (the `turn_id` every event of a turn carries) — the one way every
 * channel and `?sync=true` learn which frames are a turn's and how it ended. A message that waited
 * and was answered by another turn (`answers` on that turn's first frame) ends as `merged`. Frames of other turns
 * and frames of no turn are ignored; no clock decides what belongs to the turn, so processes whose
 * clocks disagree agree on it.
 */
export async function followTurn(events: EventLog, sessionId: string, turnId: string, options: FollowOptions = {}): Promise<FollowedTurn> {
  let settle!: (outcome: TurnOutcome) => void;
  const outcome = new Promise<TurnOutcome>((resolve) => (settle = resolve));
  const tracker = new TurnOutcomeTracker();
  let lastSeq = Number.NEGATIVE_INFINITY;
  let ended = false;
  let held: SessionFrame[] | null = options.replay ? [] : null;
  let unsubscribe: (() => void) | null = null;
  const stop = () => {
    ended = true;
    unsubscribe?.();
    unsubscribe = null;
    settle({ kind: 'stopped' }); // no effect once the outcome is known
  };
  const take = (frame: SessionFrame) => {
    if (ended || frame.seq <= lastSeq) return;
    const of = frame.payload.turn_id;
    if (of !== turnId) {
      // Another turn took this message in: whoever follows that turn shows the answer.
      if (of && frame.type === 'agent_state' && frame.payload.answers?.includes(turnId)) {
        settle({ kind: 'merged', into: of });
        stop();
      }
      return;
    }
    lastSeq = frame.seq;
    options.onFrame?.(frame);
    const result = tracker.next(frame);
    if (result) {
      settle(result);
      stop();
    }
  };
  unsubscribe = await events.subscribe(sessionId, (frame) => (held ? held.push(frame) : take(frame)));
  if (options.replay) {
    const kept = await events.replay(sessionId, -1);
    // Live frames that arrived meanwhile follow the kept ones; each seq is taken once.
    for (const frame of [...kept.frames, ...(held ?? [])].sort((a, b) => a.seq - b.seq)) take(frame);
    held = null;
  }
  return { outcome, stop };
}
