import { CONFIRM_ACTION_PREFIX } from './confirm-buttons';

/**
 * Genuine Slack payloads this channel has no listener for — `app_rate_limited`, global and message
 * shortcuts, modal submissions, option requests, actions on other apps' (or old) components. bolt
 * would leave them unacknowledged until its 3-second timeout and then answer an empty 404, which Slack
 * counts as a failure. They are acknowledged at once (an empty 200, what Slack expects), logged and
 * dropped. What this returns names the payload for the log; null: bolt takes it (events, the URL
 * check, our confirmation buttons) or the body is no payload at all (refused later with 422/400).
 */
export function unhandledPayload(rawBody: Buffer, contentType: string | undefined): string | null {
  const payload = parsePayload(rawBody.toString('utf8'), contentType ?? '');
  if (payload === null || typeof payload.type !== 'string') return null;
  switch (payload.type) {
    case 'event_callback':
    case 'url_verification':
      return null;
    case 'block_actions': {
      const actions = Array.isArray(payload.actions) ? payload.actions : [];
      const ours = actions.some(
        (action) =>
          typeof action === 'object' && action !== null && String((action as { action_id?: unknown }).action_id ?? '').startsWith(CONFIRM_ACTION_PREFIX),
      );
      return ours ? null : 'block_actions on a component that is not ours';
    }
    case 'app_rate_limited':
    case 'shortcut':
    case 'message_action':
    case 'view_submission':
    case 'view_closed':
    case 'block_suggestion':
    case 'interactive_message':
    case 'dialog_submission':
    case 'dialog_suggestion':
    case 'dialog_cancellation':
      return payload.type;
    default:
      return null;
  }
}

function parsePayload(text: string, contentType: string): Record<string, unknown> | null {
  try {
    // Interactivity posts `payload=<json>` form-encoded; the Events API posts JSON.
    const json = contentType.includes('application/x-www-form-urlencoded') ? new URLSearchParams(text).get('payload') : text;
    const value: unknown = json === null ? null : JSON.parse(json);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}
