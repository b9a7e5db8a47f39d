import { ExpressReceiver } from '@slack/bolt';
import type { RequestHandler } from 'express';
import type { ChannelAdapter } from '../../src/core/channel';
import { AppError } from '../../src/core/errors';
import { boltLogger } from './bolt-logger';
import { SLACK_LIMITS } from './limits';
import { payloadIssues } from './normalize';
import { slackSignatureCheck } from './signature';
import type { SlackAdapterConfig } from './slack-adapter';
import { unhandledPayload } from './unhandled';

/** Seconds Slack is asked to wait before delivering again while the channel is not running. */
const NOT_RUNNING_RETRY_AFTER_S = 30;

/** Paths under /api/v1/channels/slack (decisions.md §7). */
export const SLACK_PATHS = { base: '/channels/slack', events: '/events', interactions: '/interactions' } as const;

/**
 * The Events API over HTTP: bolt's ExpressReceiver behind our own route. The signature is checked
 * first; genuine payloads nobody here listens to are acknowledged at once; every refusal answers in
 * the documented envelope; until the channel runs (`isRunning`), Slack is told to deliver again.
 */
export function slackEventsReceiver(
  config: SlackAdapterConfig,
  isRunning: () => boolean,
): { receiver: ExpressReceiver; route: NonNullable<ChannelAdapter['routes']>[number] } {
  const logger = boltLogger(config.logger);
  const receiver = new ExpressReceiver({
    signingSecret: config.signingSecret ?? '',
    endpoints: { events: SLACK_PATHS.events, interactions: SLACK_PATHS.interactions },
    // Answer Slack only after the listener stored and queued the message (and 503 if it could not, so Slack retries).
    processBeforeResponse: true,
    logger,
    // Runs once the signature is verified and the body parsed, before bolt reads it: a body that
    // is no Slack payload is refused (422) here, rather than left unanswered (bolt: 404 after 3 s)
    // or failing inside bolt (500). Thrown, it reaches the app's error handler.
    customPropertiesExtractor: (request) => {
      const issues = payloadIssues(request.body);
      if (issues) throw AppError.validation(issues, 'The body is not a Slack event or interaction.');
      return {};
    },
    // A listener's failure goes to the app's error handler: the documented envelope.
    processEventErrorHandler: async ({ error, request }) => {
      const refusal = listenerRefusal(error);
      if (refusal.code === 'VALIDATION_ERROR' && !(error instanceof AppError))
        config.logger.warn({ err: error }, 'slack: a signed payload could not be read (refused with 422)');
      nextOf.get(request)?.(refusal);
      return false;
    },
  });
  const router = receiver.router as unknown as RequestHandler;
  const signed = slackSignatureCheck(config.signingSecret ?? '', SLACK_LIMITS.maxRequestBytes);
  const nextOf = new WeakMap<object, (error: AppError) => void>();
  // Until the token is verified (or while the channel is failed) Slack is told to deliver again later.
  const handler: RequestHandler = (req, res, next) => {
    if (!isRunning()) return next(notRunning());
    nextOf.set(req, next);
    // The signature is checked first (401 in the envelope). bolt's own refusals of what is left
    // (an unparseable body) come as an empty 400: answered in the envelope too, through the
    // app's error handler.
    const send = res.send.bind(res);
    res.send = ((body?: unknown) => {
      res.send = send;
      if (res.statusCode >= 400 && (body === undefined || body === '')) {
        next(receiverRefusal(res.statusCode));
        return res;
      }
      return send(body);
    }) as typeof res.send;
    return signed(req, res, (error?: unknown) => {
      if (error) return next(error);
      const unhandled = unhandledPayload((req as typeof req & { rawBody: Buffer }).rawBody, req.get('content-type'));
      if (unhandled === null) return router(req, res, next);
      config.logger.info({ payload: unhandled }, 'slack: a payload this channel does not handle was acknowledged and dropped');
      res.status(200).send('');
    });
  };
  return { receiver, route: { path: SLACK_PATHS.base, handler } };
}

/** bolt's empty refusals as our codes. */
function receiverRefusal(status: number): AppError {
  if (status === 401) return new AppError('UNAUTHORIZED', 'The Slack request signature is missing, stale or wrong.');
  if (status === 413) return new AppError('PAYLOAD_TOO_LARGE', 'The Slack request body is too large.');
  return new AppError('BAD_REQUEST', 'The Slack request body could not be read or parsed.');
}

/**
 * A listener's error, unwrapped from bolt's (it wraps them, several for several listeners): a
 * refusal of ours as it is; anything else a 503, so that Slack delivers the event again (the
 * message was not stored: the database or the queue failed).
 */
function listenerRefusal(error: unknown): AppError {
  let cause: unknown = error;
  for (let depth = 0; depth < 5 && cause && typeof cause === 'object' && !(cause instanceof AppError); depth += 1) {
    const wrapped = cause as { original?: unknown; originals?: unknown[] };
    cause = wrapped.original ?? wrapped.originals?.[0];
  }
  if (cause instanceof AppError && cause.status < 500) return cause;
  if (cause instanceof AppError || cause instanceof IngestFailure) {
    return new AppError('SERVICE_UNAVAILABLE', 'The Slack event could not be taken in; deliver it again later.', {
      cause: error,
      headers: { 'Retry-After': String(NOT_RUNNING_RETRY_AFTER_S) },
    });
  }
  // Anything else was thrown reading the payload (inside bolt or a listener): a signed body whose
  // fields have types Slack never sends. Delivering it again would fail the same way: a 422, not a 503.
  return AppError.validation(
    { body: [{ code: 'invalid_type', message: 'A field of the Slack payload has a type Slack never sends.' }] },
    'The Slack payload could not be read.',
  );
}

/** The hub could not store or queue a message (database, queue): Slack should deliver it again. */
export class IngestFailure extends Error {}

/** While the channel is not running: 503 (the error envelope), which makes Slack deliver the event again later. */
export function notRunning(): AppError {
  return new AppError('SERVICE_UNAVAILABLE', 'The Slack channel is not running; deliver again later.', {
    headers: { 'Retry-After': String(NOT_RUNNING_RETRY_AFTER_S) },
  });
}
