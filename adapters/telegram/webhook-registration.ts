import type { Telegram } from 'telegraf';
import type { ConnectionCheck } from '../../src/core/channel';
import { failureReason, loggableError } from './bot-api';
import { TELEGRAM_WEBHOOK_PATH } from './webhook';

/** What the connection test and the webhook registration need of the adapter's settings. */
export interface TelegramRegistration {
  botToken: string;
  mode: 'webhook' | 'polling';
  webhookSecret: string | null;
}

/** The URL Telegram delivers updates to: `<public_url>/api/v1/channels/telegram/webhook`. */
export function webhookUrl(publicUrl: string): string {
  return `${publicUrl.replace(/\/+$/, '')}/api/v1${TELEGRAM_WEBHOOK_PATH}`;
}

/**
 * `setWebhook` with the hub's URL and secret (Telegram then sends it as
 * `X-Telegram-Bot-Api-Secret-Token`). Only in webhook mode: polling and a webhook exclude each other.
 */
export async function registerTelegramWebhook(telegram: Telegram, settings: TelegramRegistration, publicUrl: string): Promise<{ url: string }> {
  if (settings.mode !== 'webhook' || !settings.webhookSecret) {
    throw new Error('telegram is in polling mode (channels.telegram.mode: polling): it fetches updates itself, no webhook to register');
  }
  const url = webhookUrl(publicUrl);
  try {
    await telegram.setWebhook(url, { secret_token: settings.webhookSecret, drop_pending_updates: false });
  } catch (error) {
    throw new Error(`setWebhook failed: ${failureReason(error, settings.botToken)}`);
  }
  return { url };
}

/** getMe: the token works (the bot's name), or which variable to fix (Telegram's 401/404 mean the token). */
export async function checkTelegramConnection(telegram: Telegram, botToken: string): Promise<ConnectionCheck> {
  try {
    const me = await telegram.getMe();
    return { ok: true, detail: `Telegram accepts the token: the bot is @${me.username}.`, variable: null };
  } catch (error) {
    const details = loggableError(error, botToken);
    const refused = details.type === 'TelegramError' && (details.code === 401 || details.code === 404);
    return refused
      ? { ok: false, detail: `Telegram refused the bot token (${failureReason(error, botToken)}).`, variable: 'SERVICE_TELEGRAM_BOT_TOKEN' }
      : { ok: false, detail: `Telegram's Bot API did not answer: ${failureReason(error, botToken)}.`, variable: 'SERVICE_TELEGRAM_API_ROOT' };
  }
}
