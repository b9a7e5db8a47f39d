import { createHash, timingSafeEqual } from 'node:crypto';
import express, { type RequestHandler } from 'express';
import type { Update } from 'telegraf/types';
import { z } from 'zod';
import { AppError, type FieldIssues } from '../../src/core/errors';

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
  /** Logs a failure to take an update in (then answered 503, so that Telegram delivers it again). */
  onFailure: (error: unknown) => void;
}

/** Hashing both sides first makes the comparison constant-time whatever the header's length. */
export function secretMatches(given: string | undefined, expected: string): boolean {
  if (typeof given !== 'string') return false;
  const digest = (value: string) => createHash('sha256').update(value).digest();
  return timingSafeEqual(digest(given), digest(expected));
}

/** A message as far as the adapter reads one; every other field (and update kind) passes through unread. */
const chat = z.looseObject({ id: z.number(), type: z.string() });
const user = z.looseObject({
  id: z.number(),
  is_bot: z.boolean().nullish(),
  first_name: z.string().nullish(),
  last_name: z.string().nullish(),
  username: z.string().nullish(),
});
const message = z.looseObject({ message_id: z.number(), chat, from: user.optional(), text: z.string().optional() });

/**
 * The fields of an update the adapter reads, with the types the Bot API gives them. Telegram never
 * sends anything else, so a body that does not fit did not come from Telegram: 422, not a 500 from
 * reading `chat.id` of a string (and not redelivered, unlike a failure to store).
 */
export const telegramUpdateSchema = z.looseObject({
  update_id: z.number().int(),
  message: message.optional(),
  edited_message: message.optional(),
  callback_query: z.looseObject({ id: z.string(), from: user, data: z.string().optional(), message: message.optional() }).optional(),
});

/** The 422 field issues of a body that is not a Telegram update, or null when it is one. */
export function updateIssues(body: unknown): FieldIssues | null {
  const result = telegramUpdateSchema.safeParse(body);
  if (result.success) return null;
  const fields: FieldIssues = {};
  for (const issue of result.error.issues) (fields[issue.path.join('.') || 'body'] ??= []).push({ code: issue.code, message: issue.message });
  return fields;
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
      // Refusals go to the app's error handler: the documented envelope, like every other route.
      const issues = updateIssues(request.body);
      if (issues) return next(AppError.validation(issues, 'The body is not a Telegram update.'));
      try {
        await options.receive(request.body as Update);
        response.status(200).json({ ok: true });
      } catch (error) {
        options.onFailure(error);
        // A refusal of the update itself is answered as such; a failure to store it (database, queue)
        // is a 503, so that Telegram delivers it again.
        next(
          error instanceof AppError && error.status < 500
            ? error
            : new AppError('SERVICE_UNAVAILABLE', 'The update could not be taken in; deliver it again.', {
                cause: error,
                headers: { 'Retry-After': String(NOT_RUNNING_RETRY_AFTER_S) },
              }),
        );
      }
    },
  );
  return router;
}
