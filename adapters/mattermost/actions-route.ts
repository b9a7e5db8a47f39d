import express, { type RequestHandler } from 'express';
import { AppError, isAppError } from '../../src/core/errors';
import type { Hub } from '../../src/core/hub';
import { answeredProps, verifiedChoice } from './confirm-buttons';
import { MATTERMOST_CHANNEL } from './normalize';
import { STALE_CONFIRMATION_TEXT } from './reply-text';

/** Largest click body read (Mattermost's is well under 2 KB). */
const MAX_ACTION_BYTES = 64 * 1024;
/** Seconds the clicker's client is told to wait while the channel is not running. */
const NOT_RUNNING_RETRY_AFTER_S = 30;

export interface ActionsRouteOptions {
  key: Buffer;
  /** The hub once the channel runs; null before (or after a failure): 503. */
  hub(): Hub | null;
}

/**
 * `POST /api/v1/channels/mattermost/actions`: a click of a confirmation button, posted by the
 * Mattermost server with the button's context. The context's per-action secret (an HMAC keyed by the
 * bot token) is checked first: a wrong or missing one is 401, and nothing is confirmed. A valid click
 * answers the confirmation as the person who clicked (the audit trail names their Mattermost user)
 * and answers `update`, which Mattermost applies to the clicked post: the buttons become the decision.
 * A click on a confirmation no longer pending is told so (ephemeral text), the post unchanged.
 */
export function actionsHandler(options: ActionsRouteOptions): RequestHandler {
  const router = express.Router();
  router.post('/', express.json({ limit: MAX_ACTION_BYTES }), async (request, response, next) => {
    const body = (request.body ?? {}) as { context?: unknown; user_id?: unknown; user_name?: unknown };
    const choice = verifiedChoice(options.key, body.context);
    if (!choice || typeof body.user_id !== 'string') return next(new AppError('UNAUTHORIZED', 'The action context is missing or its secret does not match.'));
    const hub = options.hub();
    if (!hub) {
      return next(
        new AppError('SERVICE_UNAVAILABLE', 'The Mattermost channel is not running; try again later.', {
          headers: { 'Retry-After': String(NOT_RUNNING_RETRY_AFTER_S) },
        }),
      );
    }
    const userName = typeof body.user_name === 'string' ? body.user_name : body.user_id;
    try {
      await hub.confirmTool(choice.sessionId, choice.confirmationId, choice.action, {
        kind: 'contact',
        channel: MATTERMOST_CHANNEL,
        id: body.user_id,
        name: userName,
      });
    } catch (error) {
      if (!isAppError(error) || error.status >= 500) return next(error);
      response.status(200).json({ ephemeral_text: STALE_CONFIRMATION_TEXT });
      return;
    }
    response.status(200).json({ update: { message: '', props: answeredProps(choice, userName) } });
  });
  return router;
}
