import { z } from 'zod';
import type { ChannelEnvBinding } from '../../src/core/channel';
import { midTurnSetting, sendWindowSetting } from '../shared/settings';

/**
 * `channels.mattermost` in config.yaml (documented there, key by key). On when both the server URL
 * and the bot token are set, or `enabled: true` (then both are required).
 */
export const mattermostSettingsSchema = z
  .strictObject({
    enabled: z.boolean().default(false),
    mid_turn: midTurnSetting,
    /** The server's base URL (http or https); the WebSocket URL derives from it. */
    url: z
      .url({ protocol: /^https?$/ })
      .nullable()
      .default(null),
    /** Secret: SERVICE_MATTERMOST_BOT_TOKEN, the bot account's access token. */
    bot_token: z.string().min(1).nullable().default(null),
    /** Team names (or ids) whose channels the bot answers in; empty: every team. Direct messages always. */
    teams: z.array(z.string().min(1)).default([]),
    /** The URL Mattermost posts button clicks to: `<hub>/api/v1/channels/mattermost/actions`. Null: confirmations are asked as text. */
    actions_url: z
      .url({ protocol: /^https?$/ })
      .nullable()
      .default(null),
    /** Least milliseconds between two edits of a streamed answer. */
    edit_interval_ms: z.number().int().positive().max(60_000).default(1000),
    /** Milliseconds between two typing events while a turn works (Mattermost shows one about 5 s). */
    typing_interval_ms: z.number().int().positive().max(10_000).default(3000),
    /** The event socket's reconnect backoff: the first wait, doubled per failure up to max. */
    reconnect_min_ms: z.number().int().positive().max(60_000).default(1000),
    reconnect_max_ms: z.number().int().positive().max(600_000).default(60_000),
    /** The bot's send budget: posts and edits per channel, and overall (Mattermost's default limit is 10 requests a second). */
    send_budget: z.strictObject({ per_channel: sendWindowSetting(3, 1000), overall: sendWindowSetting(8, 1000) }).prefault({}),
  })
  .superRefine((settings, context) => {
    if (!mattermostEnabled(settings)) return;
    if (!settings.url) context.addIssue({ code: 'custom', path: ['url'], message: 'is required when the Mattermost channel is enabled' });
    if (!settings.bot_token) context.addIssue({ code: 'custom', path: ['bot_token'], message: 'is required when the Mattermost channel is enabled' });
  });

/** The validated `channels.mattermost` section (secrets included: never log it). */
export type MattermostSettings = z.infer<typeof mattermostSettingsSchema>;

/** The `SERVICE_MATTERMOST_*` variables (the token only from the environment). */
export const MATTERMOST_ENV: readonly ChannelEnvBinding[] = [
  { env: 'SERVICE_MATTERMOST_URL', key: 'url', kind: 'nullable-string' },
  { env: 'SERVICE_MATTERMOST_BOT_TOKEN', key: 'bot_token', kind: 'nullable-string', secret: true },
  { env: 'SERVICE_MATTERMOST_TEAMS', key: 'teams', kind: 'list' },
  { env: 'SERVICE_MATTERMOST_ACTIONS_URL', key: 'actions_url', kind: 'nullable-string' },
];

/** On when both the URL and the token are set, or `channels.mattermost.enabled`. */
export function mattermostEnabled(settings: Pick<MattermostSettings, 'enabled' | 'url' | 'bot_token'>): boolean {
  return settings.enabled || (settings.url !== null && settings.bot_token !== null);
}
