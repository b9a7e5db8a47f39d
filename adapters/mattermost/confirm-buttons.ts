import { createHmac, timingSafeEqual } from 'node:crypto';
import { CONFIRM_ACTIONS, type ConfirmAction } from '../../src/core/events';
import { ACTION_TITLES } from '../shared/confirm-actions';
import type { ConfirmRequest } from '../shared/reply-surface';
import { mattermostText } from './reply-text';

/** Under /api/v1: where Mattermost posts a click of a confirmation button (the integration action's URL). */
export const MATTERMOST_ACTIONS_PATH = '/channels/mattermost/actions';

/** What a button's integration context carries back on click. */
export interface ConfirmChoice {
  sessionId: string;
  confirmationId: string;
  action: ConfirmAction;
  tool: string;
}

/**
 * The key that signs button contexts, derived from the bot token: every API process has it, no
 * further setting, and a context cannot be made by anyone who does not hold the token.
 */
export function actionKey(botToken: string): Buffer {
  return createHmac('sha256', 'switchboard mattermost actions').update(botToken).digest();
}

/** The per-action secret in a button's context: an HMAC of which session, confirmation and action it answers. */
export function actionSecret(key: Buffer, choice: Omit<ConfirmChoice, 'tool'>): string {
  return createHmac('sha256', key).update(`${choice.sessionId}\n${choice.confirmationId}\n${choice.action}`).digest('base64url');
}

/** The choice in a click's context, or null when it is not one of ours or its secret does not match. */
export function verifiedChoice(key: Buffer, context: unknown): ConfirmChoice | null {
  if (!context || typeof context !== 'object') return null;
  const { session_id, confirmation_id, action, tool, secret } = context as Record<string, unknown>;
  if (typeof session_id !== 'string' || typeof confirmation_id !== 'string' || typeof secret !== 'string' || typeof tool !== 'string') return null;
  const known = CONFIRM_ACTIONS.find((candidate) => candidate === action);
  if (!known) return null;
  const expected = Buffer.from(actionSecret(key, { sessionId: session_id, confirmationId: confirmation_id, action: known }));
  const given = Buffer.from(secret);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
  return { sessionId: session_id, confirmationId: confirmation_id, action: known, tool };
}

/**
 * The confirmation post's props: one message attachment with what the tool wants and six
 * interactive buttons, each an integration action posting its signed context to `actionsUrl`.
 */
export function confirmationProps(key: Buffer, actionsUrl: string, sessionId: string, request: ConfirmRequest) {
  const parameters = JSON.stringify(request.parameters, null, 2).slice(0, 3000);
  return {
    attachments: [
      {
        fallback: `Confirm ${request.tool}?`,
        title: `Confirm \`${request.tool}\`?`,
        text: `${mattermostText(request.message)}\n\`\`\`\n${parameters}\n\`\`\``,
        actions: CONFIRM_ACTIONS.map((action) => ({
          id: action.replace(/_/g, ''),
          type: 'button',
          name: ACTION_TITLES[action],
          style: action === 'allow' ? 'primary' : action === 'cancel' || action === 'forbid_all' ? 'danger' : 'default',
          integration: {
            url: actionsUrl,
            context: {
              session_id: sessionId,
              confirmation_id: request.confirmation_id,
              action,
              tool: request.tool.slice(0, 200),
              secret: actionSecret(key, { sessionId, confirmationId: request.confirmation_id, action }),
            },
          },
        })),
      },
    ],
  };
}

/** The clicked post once answered: the buttons are gone, the decision and who made it shown. */
export function answeredProps(choice: ConfirmChoice, userName: string) {
  return {
    attachments: [
      { fallback: `${choice.tool}: ${ACTION_TITLES[choice.action]}`, text: `\`${choice.tool}\`: **${ACTION_TITLES[choice.action]}** — chosen by @${userName}` },
    ],
  };
}
