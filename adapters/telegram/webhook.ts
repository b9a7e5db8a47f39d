import { createHash, timingSafeEqual } from 'node:crypto';
import express, { type RequestHandler } from 'express';
import type { Update } from 'telegraf/types';
import { AppError } from '../../src/core/errors';

/** Under /api/v1 (decisions.md §7); the URL to give `setWebhook`. */
export const TELEGRAM_WEBHOOK_PATH = '/channels/telegram/webhook';
export const SECRET_HEADER = 'x-telegram-bot-api-secret-token';
/** Seconds Telegram is asked to wait before delivering again while the channel is not running. */
const NOT_RUNNING_RETRY_AFTER_S = 30;

export interface WebhookOptions {
  secret: string;
  maxBytes: number;
  /** False while the channel is not running (starting, or failed and waiting to retry): 503. */
  isRunning: () => boolean;
  /** Takes the update in (stored and queued) — the 200 is sent only after it resolves. */
  receive: (update: Update) => Promise<void>;
  /** Logs a failure to take an update in (then answered 500, so that Telegram delivers it again). */
  onFailure: (error: unknown) => void;
}

/** Hashing both sides first makes the comparison constant-time whatever the header's length. */
export function secretMatches(given: string | undefined, expected: string): boolean {
  if (typeof given !== 'string') return false;
  const digest = (value: string) => createHash('sha256').update(value).digest();
  return timingSafeEqual(digest(given), digest(expected));
}

/**
 * `POST /api/v1/channels/telegram/webhook`: the secret header is checked before the body is even
 * read; an update is acknowledged (200) once the hub stored and queued it, so a crash before that
 * makes Telegram deliver it again (and a redelivery is recognised by its update_id).
 */
export function webhookHandler(options: WebhookOptions): RequestHandler {
  const router = express.Router();
  router.post(
    '/',
    (request, _response, next) => {
      if (secretMatches(request.get(SECRET_HEADER), options.secret)) return next();
      next(new AppError('UNAUTHORIZED', 'The webhook secret token is missing or wrong.'));
    },
    (_request, _response, next) => {
      if (options.isRunning()) return next();
      // Telegram delivers an update again after a non-2xx answer: nothing is lost while we retry.
      const retry = { 'Retry-After': String(NOT_RUNNING_RETRY_AFTER_S) };
      next(new AppError('SERVICE_UNAVAILABLE', 'The Telegram channel is not running; deliver again later.', { headers: retry }));
    },
    express.json({ limit: options.maxBytes }),
    async (request, response, next) => {
      const update = request.body as Update;
      if (typeof update !== 'object' || update === null || typeof update.update_id !== 'number') {
        next(new AppError('BAD_REQUEST', 'The body is not a Telegram update.'));
        return;
      }
      try {
        await options.receive(update);
        response.status(200).json({ ok: true });
      } catch (error) {
        options.onFailure(error);
        // Any non-2xx makes Telegram deliver the update again; the answer keeps the documented envelope.
        next(error instanceof AppError ? error : new AppError('INTERNAL_ERROR', 'The update could not be taken in.'));
      }
    },
  );
  return router;
}
