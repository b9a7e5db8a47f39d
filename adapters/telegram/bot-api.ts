import { TelegramError } from 'telegraf';

/** How long to wait for a call Telegram refused with 429, or null when it is not a 429. */
export function retryAfterMs(error: unknown): number | null {
  if (!(error instanceof TelegramError) || error.code !== 429) return null;
  const seconds = error.parameters?.retry_after;
  return typeof seconds === 'number' && seconds >= 0 ? seconds * 1000 : 1000;
}

/** Telegram answers 400 "message is not modified" to an edit with the same text: nothing to do. */
export function isNotModified(error: unknown): boolean {
  return error instanceof TelegramError && error.code === 400 && /not modified/i.test(error.description);
}

/**
 * Runs a Bot API call, waiting `retry_after` and trying again when Telegram answers 429 (flood
 * control), at most `maxAttempts` times and never waiting longer than `maxRetryAfterMs` at once.
 */
export async function withFloodRetry<T>(call: () => Promise<T>, limits: { maxAttempts: number; maxRetryAfterMs: number }): Promise<T> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await call();
    } catch (error) {
      const wait = retryAfterMs(error);
      if (wait === null || attempt >= limits.maxAttempts || wait > limits.maxRetryAfterMs) throw error;
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
  }
}

/**
 * A Bot API failure as it may be logged: the bot token is part of every request URL, and network
 * errors quote that URL, so the token is cut out of every text before it reaches the logs.
 */
export function loggableError(error: unknown, botToken: string): Record<string, unknown> {
  const scrub = (text: string) => text.split(botToken).join('<bot-token>');
  if (error instanceof TelegramError) return { type: 'TelegramError', code: error.code, description: scrub(error.description) };
  if (error instanceof Error) return { type: error.name, message: scrub(error.message) };
  return { type: typeof error, message: scrub(String(error)) };
}

/** A Bot API failure as one line for status and logs (`401: Unauthorized`), the token cut out. */
export function failureReason(error: unknown, botToken: string): string {
  const details = loggableError(error, botToken);
  if (details.type === 'TelegramError') return `${String(details.code)}: ${String(details.description)}`;
  return String(details.message).split('\n')[0]!;
}
