import type { Logger } from 'pino';
import { createTelegramAdapter, type TelegramAdapter } from '../../adapters/telegram';
import { ConfigError, type Config } from '../config';

/**
 * The Telegram channel from `channels.telegram`, or null when it is off. It is on when a bot token
 * is set or `enabled: true` (decisions.md §7). Refuses to start without a token, and in webhook
 * mode without a secret: an endpoint anyone could post updates to would let anyone talk as anyone.
 */
export function createTelegramChannel(config: Readonly<Config>, logger: Logger): TelegramAdapter | null {
  const telegram = config.channels.telegram;
  if (!telegram.enabled && !telegram.bot_token) return null;
  if (!telegram.bot_token) throw new ConfigError('SERVICE_TELEGRAM_BOT_TOKEN: is required when channels.telegram.enabled is true');
  if (telegram.mode === 'webhook' && !telegram.webhook_secret?.trim()) {
    throw new ConfigError('SERVICE_TELEGRAM_WEBHOOK_SECRET: is required in webhook mode (channels.telegram.mode: webhook); or use mode: polling');
  }
  return createTelegramAdapter({
    botToken: telegram.bot_token,
    mode: telegram.mode,
    webhookSecret: telegram.webhook_secret,
    apiRoot: telegram.api_root,
    editIntervalMs: telegram.edit_interval_ms,
    maxRetryAfterS: telegram.max_retry_after_s,
    drafts: telegram.drafts,
    typingIntervalMs: telegram.typing_interval_ms,
    sendLimits: {
      perChat: { sends: telegram.send_limits.per_chat, windowMs: telegram.send_limits.per_chat_window_ms },
      perGroup: { sends: telegram.send_limits.per_group, windowMs: telegram.send_limits.per_group_window_ms },
      global: { sends: telegram.send_limits.global, windowMs: telegram.send_limits.global_window_ms },
    },
    logger,
  });
}
