import type { webApi } from '@slack/bolt';
import type { ConnectionCheck } from '../../src/core/channel';
import { platformReason } from './platform-reason';

/** Slack's answers that mean the bot token itself is wrong (revoked, mistyped, another workspace's). */
const TOKEN_REFUSALS = new Set(['invalid_auth', 'not_authed', 'account_inactive', 'token_revoked', 'token_expired', 'not_allowed_token_type']);

/** auth.test with the bot token: the bot and workspace it names, or which variable to fix. */
export async function checkSlackConnection(client: webApi.WebClient): Promise<ConnectionCheck> {
  try {
    const answer = await client.auth.test();
    return { ok: true, detail: `Slack accepts the bot token: ${String(answer.user)} in ${String(answer.team)}.`, variable: null };
  } catch (error) {
    const reason = platformReason(error);
    if (TOKEN_REFUSALS.has(reason)) return { ok: false, detail: `Slack refused the bot token (${reason}).`, variable: 'SERVICE_SLACK_BOT_TOKEN' };
    return { ok: false, detail: `Slack's Web API did not answer as expected: ${reason}.`, variable: 'SERVICE_SLACK_API_URL' };
  }
}
