import type { Logger } from 'pino';

/** Named limits of the Telegram channel (documented in config.yaml under `channels.telegram`). */
export const TELEGRAM_DEFAULTS = {
  /**
   * Minimum time between two edits of a streamed reply. Telegram throttles bots that edit a message
   * more than about once a second, so tokens are coalesced into one edit per interval.
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
} as const;

export interface TelegramAdapterConfig {
  /** Secret: it is part of every Bot API URL, so it never goes into logs. */
  botToken: string;
  /** `webhook`: Telegram POSTs updates to our endpoint; `polling`: we long-poll `getUpdates`. */
  mode: 'webhook' | 'polling';
  /** Required (non-empty) in webhook mode: Telegram sends it as `X-Telegram-Bot-Api-Secret-Token`. */
  webhookSecret: string | null;
  /** Bot API root: Telegram's, a local `telegram-bot-api` server, or a fake in tests. */
  apiRoot: string;
  editIntervalMs: number;
  maxRetryAfterS: number;
  logger: Logger;
}
