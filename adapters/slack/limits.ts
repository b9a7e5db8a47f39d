/** Named limits of the Slack channel (config can override the edit interval and the send budget). */
export const SLACK_LIMITS = {
  /** Slack tolerates about one `chat.update` per second per message (Tier 3 per channel): coalesce tokens to this. */
  editIntervalMs: 1_000,
  /** Display names looked up with users.info are kept this long, so a busy thread costs one call per person. */
  userCacheTtlMs: 10 * 60 * 1000,
  /** At most this many people cached; the oldest entry is dropped first. */
  userCacheSize: 1_000,
  /** A turn still silent after this long is given up (its listener released); the worker's own limits end turns sooner. */
  renderTimeoutMs: 30 * 60 * 1000,
  /** Web API retries for a failed call (network errors; 429s are handled by the send budget, see slack-outbox.ts). */
  apiRetries: 3,
  /** A message send answered 429 this many times in a row is given up (each time after its Retry-After). */
  rateLimitRetries: 5,
  /** The largest request body taken from Slack (bolt's own default, kept when the hub checks the signature first). */
  maxRequestBytes: 4 * 1024 * 1024,
  /** Slack's limit for a message's text; longer answers are cut (the full text stays in the session history). */
  maxMessageChars: 39_000,
  /** Slack's limit for one `markdown_text` (chat.startStream / appendStream / stopStream / update). */
  maxMarkdownChars: 12_000,
  /** Slack drops an assistant status after 2 minutes without a message: a long turn re-sends it this often. */
  statusRefreshMs: 90_000,
  /** Slack shows at most four suggested prompts. */
  maxSuggestedPrompts: 4,
} as const;
