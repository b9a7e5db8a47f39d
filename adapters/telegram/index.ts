export { TELEGRAM_DEFAULTS, type TelegramAdapterConfig } from './config';
export { TELEGRAM_WEBHOOK_PATH } from './webhook';
import type { TelegramAdapterConfig } from './config';
import { TelegramAdapter } from './telegram-adapter';

/** The Telegram channel: webhook (a route under /api/v1) or long polling, per `config.mode`. */
export function createTelegramAdapter(config: TelegramAdapterConfig): TelegramAdapter {
  return new TelegramAdapter(config);
}

export type { TelegramAdapter };
export { telegramChannel } from './channel';
export { telegramSettingsSchema, type TelegramSettings } from './settings';
