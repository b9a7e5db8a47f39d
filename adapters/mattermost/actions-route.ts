import express, { type RequestHandler } from 'express';
import { AppError } from '../../src/core/errors';
import { clickNote, confirmClick } from '../shared/confirm-click';
import type { ApproverGroups, Hub } from '../../src/core/hub';
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
  /** What Mattermost says of the clicker at click time (an approval policy's Mattermost approvers), in the channel of the clicked post. */
  groups(channelId: string, userId: string): ApproverGroups;
}

/**
 * `POST /api/v1/channels/mattermost/actions`: a click of a confirmation button, posted by the
 * Mattermost server with the button's context. The context's per-action secret (an HMAC keyed by the
 * bot token) is checked first: a wrong or missing one is 401, and nothing is confirmed. A valid click
 * answers the confirmation as the person who clicked (the audit trail names their Mattermost user)
 * and answers `update`, which Mattermost applies to the clicked post: the buttons become the decision.
 * A click on a confirmation no longer pending is told so (ephemeral text), the post unchanged; under
 * an approval policy (issue 30) a click that may not approve, or that counts toward a quorum, is told
 * so privately and the buttons stay.
 */
export function actionsHandler(options: ActionsRouteOptions): RequestHandler {
  const router = express.Router();
  router.post('/', express.json({ limit: MAX_ACTION_BYTES }), async (request, response, next) => {
    const body = (request.body ?? {}) as { context?: unknown; user_id?: unknown; user_name?: unknown; channel_id?: unknown };
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
    const actor = { kind: 'contact' as const, channel: MATTERMOST_CHANNEL, id: body.user_id, name: userName };
    // No channel in the click: the channel-admin check cannot be made, and refuses (fail-closed).
    const groups = options.groups(typeof body.channel_id === 'string' ? body.channel_id : '', body.user_id);
    const click = await confirmClick(() => hub.confirmTool(choice.sessionId, choice.confirmationId, choice.action, actor, groups));
    switch (click.kind) {
      case 'failed':
        return next(click.error);
      case 'stale':
        return void response.status(200).json({ ephemeral_text: STALE_CONFIRMATION_TEXT });
      case 'refused': // under an approval policy (issue 30): told only to the clicker, the buttons stay
      case 'counted':
        return void response.status(200).json({ ephemeral_text: clickNote(click) });
      case 'answered': {
        const decided = { ...choice, action: click.action ?? choice.action };
        return void response.status(200).json({ update: { message: '', props: answeredProps(decided, userName) } });
      }
      default:
        click satisfies never;
    }
  });
  return router;
}
