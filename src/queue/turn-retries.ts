import { isBackingServiceUnreachable } from '../core/unreachable';

export interface TurnRetries {
  /** Attempts of a turn whose handler failed for any other reason: a fault of the turn, tried again briefly. */
  attempts: number;
  /**
   * Attempts while the database or Redis cannot be reached (the turn never started or could not be
   * ended): enough to outlast a restart or a failover, so a short outage delays the answer instead
   * of ending the turn in an error.
   */
  unreachableAttempts: number;
  firstDelayMs: number;
  maxDelayMs: number;
}

/**
 * With these, an outage of up to ~30 s (1 s, then 2 s apart: 29 s, plus the attempts' own time) is
 * waited out, and a turn runs again at most 2 s after the database is back.
 */
export const TURN_RETRIES: Readonly<TurnRetries> = {
  attempts: 3,
  unreachableAttempts: 16,
  firstDelayMs: 1_000,
  maxDelayMs: 2_000,
};

/**
 * The delay before a turn's next attempt, after `failedAttempts` attempts of which the last failed
 * with `error`; null when no attempt is left. Exponential from `firstDelayMs`, at most `maxDelayMs`.
 * Both turn queues follow it (the contract suite holds them to the same behaviour).
 */
export function nextAttemptDelayMs(failedAttempts: number, error: unknown, retries: Readonly<TurnRetries> = TURN_RETRIES): number | null {
  const allowed = isBackingServiceUnreachable(error) ? retries.unreachableAttempts : retries.attempts;
  if (failedAttempts >= allowed) return null;
  return Math.min(retries.maxDelayMs, retries.firstDelayMs * 2 ** Math.max(0, failedAttempts - 1));
}
