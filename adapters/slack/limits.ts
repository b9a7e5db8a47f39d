/** Named limits of the Slack channel (config can override the edit interval). */
export const SLACK_LIMITS = {
  /** Slack tolerates about one `chat.update` per second per message (Tier 3 per channel): coalesce tokens to this. */
  editIntervalMs: 1_000,
  /** Display names looked up with users.info are kept this long, so a busy thread costs one call per person. */
  userCacheTtlMs: 10 * 60 * 1000,
  /** At most this many people cached; the oldest entry is dropped first. */
  userCacheSize: 1_000,
  /** A turn still silent after this long is given up (its listener released); the worker's own limits end turns sooner. */
  renderTimeoutMs: 30 * 60 * 1000,
  /** Web API retries for a failed call (429s are waited out per Retry-After and retried on top). */
  apiRetries: 3,
  /** Slack's limit for a message's text; longer answers are cut (the full text stays in the session history). */
  maxMessageChars: 39_000,
} as const;
