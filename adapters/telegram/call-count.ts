import { TelegramError, type Telegram } from 'telegraf';
import type { ChannelTelemetry } from '../../src/core/telemetry';

/**
 * Every Bot API call of the bot goes through `Telegram.callApi`: each is timed and counted by
 * method and status (the Bot API's `error_code`, 429 for flood control; 200 on success, 0 when no
 * answer came) for the hub's metrics. The calls themselves are unchanged.
 */
export function countCalls(telegram: Telegram, telemetry: ChannelTelemetry): void {
  const callApi = telegram.callApi.bind(telegram);
  const counted = async (...args: Parameters<typeof callApi>) => {
    const started = performance.now();
    try {
      const result = await callApi(...args);
      telemetry.platformCall(args[0], 200, (performance.now() - started) / 1000);
      return result;
    } catch (error) {
      telemetry.platformCall(args[0], error instanceof TelegramError ? error.code : 0, (performance.now() - started) / 1000);
      throw error;
    }
  };
  telegram.callApi = counted as typeof telegram.callApi;
}
