import { defineChannel } from '../../src/core/channel';
import { TELEGRAM_CHANNEL } from './normalize';
import { telegramAdapterConfig, telegramEnabled, telegramSettingsSchema, TELEGRAM_ENV, type TelegramSettings } from './settings';
import { SECRET_HEADER } from './webhook';

/**
 * The Telegram channel as the registry lists it: `channels.telegram`, webhook or long polling, and
 * its routing scope — a chat is a session `telegram::<chat id>` that routes as `telegram:<chat id>`
 * (bindings `telegram` or `telegram:<chat id>`).
 */
export const telegramChannel = defineChannel<TelegramSettings>({
  name: TELEGRAM_CHANNEL,
  narrowBinding: '<chat id>',
  routingChannel: (conversation) => (conversation ? `${TELEGRAM_CHANNEL}:${conversation}` : TELEGRAM_CHANNEL),
  config: { schema: telegramSettingsSchema, env: TELEGRAM_ENV },
  secretHeaders: [SECRET_HEADER],
  mode: (settings) => settings.mode,
  create: ({ settings, logger, telemetry, renderLeases, publicUrl }) => {
    if (!telegramEnabled(settings)) return null;
    // Loaded only when Telegram is on: telegraf would cost every hub's start ~0.1 s (2-core machine).
    const { TelegramAdapter } = require('./telegram-adapter') as typeof import('./telegram-adapter');
    return new TelegramAdapter({ ...telegramAdapterConfig(settings, logger), telemetry, renderLeases, publicUrl: publicUrl ?? null });
  },
});
