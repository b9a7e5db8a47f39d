/**
 * The spec's client reconnection policy (Reconnection and replay, rule 6): reconnect at once, then
 * back off 1, 2, 4, 8, 16 s, capped at 30 s; give up after 10 consecutive failures.
 */
export interface ReconnectPolicy {
  /** Consecutive failed attempts after which the client stops and says so. */
  maxFailures: number;
  /** The first backoff step, doubled per further failure. */
  firstBackoffMs: number;
  /** No wait is longer than this. */
  capMs: number;
}

export const RECONNECT_DEFAULTS: Readonly<ReconnectPolicy> = { maxFailures: 10, firstBackoffMs: 1_000, capMs: 30_000 };

/**
 * How long to wait before reconnect attempt `attempt` (1 = the first one after a drop): 0, then
 * 1 s, 2 s, 4 s, 8 s, 16 s, 30 s, 30 s …
 */
export function reconnectDelayMs(attempt: number, policy: Readonly<ReconnectPolicy> = RECONNECT_DEFAULTS): number {
  if (attempt <= 1) return 0;
  return Math.min(policy.capMs, policy.firstBackoffMs * 2 ** (attempt - 2));
}
