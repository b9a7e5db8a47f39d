export interface EventLogLimits {
  retentionAfterDisconnectMs: number;
  retentionAfterAppendMs: number;
  maxFramesPerSession: number;
  countersKept: number;
  counterTtlMs: number;
}

/** Named limits of the replay buffer (spec: "kept for 30 seconds after disconnect"). */
export const EVENT_LOG_DEFAULTS: Readonly<EventLogLimits> = {
  /** How long frames stay replayable after the session's socket disconnects. */
  retentionAfterDisconnectMs: 30_000,
  /** How long frames stay replayable after they were appended while a socket may be connected. */
  retentionAfterAppendMs: 60_000,
  /** Frames kept per session at most; older ones are dropped (a reconnect past them gets the current state). */
  maxFramesPerSession: 10_000,
  /**
   * In-process log only: seq counters kept for sessions whose frames all expired (about 100 bytes
   * each), so a session that speaks again keeps counting up; the least recently retired go first.
   * Without a bound every session that ever had a frame stayed in memory for the life of the process.
   * A session past it starts again at 1, like after a restart: a client that comes back with an older
   * `last_seq` raises the counter and gets the current state (its frames had expired anyway).
   */
  countersKept: 10_000,
  /**
   * Redis only: a session's seq counter goes this long after its last frame or connection. Far
   * longer than a connected socket can go without a frame (idle sockets close after 90 s, pings are
   * frames; a turn's silence is bounded by the turn registry's 6 h safety net), so only the counter
   * of a session nobody follows expires. A client that comes back after with its old `last_seq`
   * raises the new counter past it (EventLog.replay), so what it gets next still counts up, and it
   * gets the current state, as for any `last_seq` whose frames expired.
   */
  counterTtlMs: 24 * 60 * 60 * 1000,
};
