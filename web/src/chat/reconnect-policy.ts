/**
 * The spec's client reconnect policy: reconnect at once the first time, then back off 1, 2, 4, 8,
 * 16 s, capped at 30 s; give up after 10 consecutive failures.
 */
export const RECONNECT_POLICY = {
  backoffMs: [0, 1_000, 2_000, 4_000, 8_000, 16_000],
  capMs: 30_000,
  maxConsecutiveFailures: 10,
} as const;

/**
 * The wait before reconnect attempt number `attempt` (1-based, counting consecutive failures), or
 * null when the client should stop and say so.
 */
export function reconnectDelay(attempt: number): number | null {
  if (attempt < 1) return 0;
  if (attempt > RECONNECT_POLICY.maxConsecutiveFailures) return null;
  const listed = RECONNECT_POLICY.backoffMs[attempt - 1];
  return listed ?? Math.min(RECONNECT_POLICY.capMs, 1_000 * 2 ** (attempt - 2));
}
