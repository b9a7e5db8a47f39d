import type { RenderLeases } from '../../src/core/render-lease';
import type { ChannelTelemetry } from '../../src/core/telemetry';
import type { Logger } from 'pino';

/** Sends allowed in a sliding window: at most `sends` in any `windowMs`. */
export interface TelegramSendWindow {
  sends: number;
  windowMs: number;
}

/**
 * Telegram's published limits for bots (core.telegram.org/bots/faq, "My bot is hitting limits"):
 * about one message a second in a chat, 20 messages a minute in a group, 30 messages a second
 * overall. Every message the bot sends or edits and every draft counts.
 */
export interface TelegramSendLimits {
  perChat: TelegramSendWindow;
  perGroup: TelegramSendWindow;
  global: TelegramSendWindow;
}

/** Named limits of the Telegram channel (documented in config.yaml under `channels.telegram`). */
export const TELEGRAM_DEFAULTS = {
  /**
   * Minimum time between two interim updates (draft or edit) of a streamed reply: tokens are
   * coalesced into one update per interval. Groups are paced to their send limit when that is slower.
   */
  editIntervalMs: 1500,
  /** Longest `retry_after` (a 429 from the Bot API) waited before a call is given up. */
  maxRetryAfterS: 30,
  /** Attempts of one Bot API call when it keeps answering 429. */
  maxAttempts: 3,
  /** Telegram's limit on a message's text; longer answers are split. */
  maxMessageChars: 4096,
  /** Largest webhook body read (Telegram updates are a few kilobytes). */
  maxWebhookBytes: 1024 * 1024,
  /** The typing action is shown for about 5 s; it is sent again this often while a turn runs. */
  typingIntervalMs: 4000,
  /** A draft is an ephemeral preview of about 30 s: one that did not change is sent again this often. */
  draftKeepAliveMs: 20_000,
  /** On shutdown, pending final messages get this long to go out before their waits are abandoned. */
  stopGraceMs: 5000,
  sendLimits: {
    perChat: { sends: 1, windowMs: 1000 },
    perGroup: { sends: 20, windowMs: 60_000 },
    global: { sends: 30, windowMs: 1000 },
  } satisfies TelegramSendLimits,
} as const;

export interface TelegramAdapterConfig {
  /** Secret: it is part of every Bot API URL, so it never goes into logs. */
  botToken: string;
  /** `webhook`: Telegram POSTs updates to our endpoint; `polling`: we long-poll `getUpdates`. */
  mode: 'webhook' | 'polling';
  /** Required (non-empty) in webhook mode: Telegram sends it as `X-Telegram-Bot-Api-Secret-Token`. */
  webhookSecret: string | null;
  /** `server.public_url`: in webhook mode the webhook is registered there on start; null: by hand. */
  publicUrl?: string | null;
  /** Bot API root: Telegram's, a local `telegram-bot-api` server, or a fake in tests. */
  apiRoot: string;
  editIntervalMs: number;
  maxRetryAfterS: number;
  /** Stream private-chat replies as `sendMessageDraft` drafts (false: edits, as in groups). */
  drafts?: boolean;
  typingIntervalMs?: number;
  sendLimits?: TelegramSendLimits;
  /** Not a config key: tests shorten it (default `TELEGRAM_DEFAULTS.draftKeepAliveMs`). */
  draftKeepAliveMs?: number;
  logger: Logger;
  /** Bot API calls and first answers, for the hub's metrics. */
  telemetry?: ChannelTelemetry;
  /** Chats' rendering leases (ChannelContext.renderLeases): a chat's answers in order across processes. */
  renderLeases?: RenderLeases;
}
