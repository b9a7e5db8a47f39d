export interface EventLogLimits {
  retentionAfterDisconnectMs: number;
  retentionAfterAppendMs: number;
  maxFramesPerSession: number;
}

/** Named limits of the replay buffer (spec: "kept for 30 seconds after disconnect"). */
export const EVENT_LOG_DEFAULTS: Readonly<EventLogLimits> = {
  /** How long frames stay replayable after the session's socket disconnects. */
  retentionAfterDisconnectMs: 30_000,
  /** How long frames stay replayable after they were appended while a socket may be connected. */
  retentionAfterAppendMs: 60_000,
  /** Frames kept per session at most; older ones are dropped (a reconnect past them gets the current state). */
  maxFramesPerSession: 10_000,
};
