import type { Logger } from 'pino';
import { z } from 'zod';
import type { ChannelEnvBinding } from '../../src/core/channel';
import { midTurnSetting } from '../shared/settings';
import type { TelegramAdapterConfig } from './config';

/**
 * `channels.telegram` in config.yaml (documented there, key by key). Off until a bot token is set or
 * `enabled: true` (decisions.md §7). Refuses to start without a token, and in webhook mode without
 * a secret: an endpoint anyone could post updates to would let anyone talk as anyone.
 */
export const telegramSettingsSchema = z
  .strictObject({
    enabled: z.boolean().default(false),
    mid_turn: midTurnSetting,
    /** Secrets: SERVICE_TELEGRAM_BOT_TOKEN, SERVICE_TELEGRAM_WEBHOOK_SECRET. */
    bot_token: z.string().min(1).nullable().default(null),
    webhook_secret: z.string().min(1).nullable().default(null),
    api_root: z.url().default('https://api.telegram.org'),
    /** `webhook` (Telegram POSTs to /api/v1/channels/telegram/webhook; needs webhook_secret) or `polling`. */
    mode: z.enum(['webhook', 'polling']).default('webhook'),
    /** Minimum milliseconds between two interim updates (drafts or edits) of a streamed reply. */
    edit_interval_ms: z.number().int().positive().max(60_000).default(1500),
    /** Longest Bot API `retry_after` (429) waited before a call is given up. */
    max_retry_after_s: z.number().int().positive().max(600).default(30),
    /** Private chats stream replies as drafts (sendMessageDraft); false: as an edited message, like groups. */
    drafts: z.boolean().default(true),
    /** Milliseconds between two typing actions while a turn runs (Telegram shows one about 5 s). */
    typing_interval_ms: z.number().int().positive().max(5000).default(4000),
    /** The bot's send budget, shared by all turns (Telegram's published limits). */
    send_limits: z
      .strictObject({
        per_chat: z.number().int().positive().default(1),
        per_chat_window_ms: z.number().int().positive().default(1000),
        per_group: z.number().int().positive().default(20),
        per_group_window_ms: z.number().int().positive().default(60_000),
        global: z.number().int().positive().default(30),
        global_window_ms: z.number().int().positive().default(1000),
      })
      .prefault({}),
  })
  .superRefine((telegram, context) => {
    if (!telegramEnabled(telegram)) return;
    // Issues are reported on the secret's key: the message then names its environment variable.
    if (!telegram.bot_token) {
      context.addIssue({ code: 'custom', path: ['bot_token'], message: 'is required when channels.telegram.enabled is true' });
    } else if (telegram.mode === 'webhook' && !telegram.webhook_secret?.trim()) {
      context.addIssue({
        code: 'custom',
        path: ['webhook_secret'],
        message: 'is required in webhook mode (channels.telegram.mode: webhook); or use mode: polling',
      });
    }
  });

/** The validated `channels.telegram` section (secrets included: never log it). */
export type TelegramSettings = z.infer<typeof telegramSettingsSchema>;

/** The `SERVICE_TELEGRAM_*` variables (secrets only from the environment). */
export const TELEGRAM_ENV: readonly ChannelEnvBinding[] = [
  { env: 'SERVICE_TELEGRAM_BOT_TOKEN', key: 'bot_token', kind: 'nullable-string', secret: true },
  { env: 'SERVICE_TELEGRAM_WEBHOOK_SECRET', key: 'webhook_secret', kind: 'nullable-string', secret: true },
  { env: 'SERVICE_TELEGRAM_API_ROOT', key: 'api_root', kind: 'string' },
  { env: 'SERVICE_TELEGRAM_MODE', key: 'mode', kind: 'string' },
];

/** On when a bot token is set or `channels.telegram.enabled`. */
export function telegramEnabled(telegram: Pick<TelegramSettings, 'enabled' | 'bot_token'>): boolean {
  return telegram.enabled || telegram.bot_token !== null;
}

/** The adapter's configuration from a validated (and enabled) section. */
export function telegramAdapterConfig(telegram: TelegramSettings, logger: Logger): TelegramAdapterConfig {
  return {
    botToken: telegram.bot_token ?? '',
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
  };
}
