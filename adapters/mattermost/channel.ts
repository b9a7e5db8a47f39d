import { defineChannel } from '../../src/core/channel';
import { sendBudgetLimits } from '../shared/settings';
import { MATTERMOST_CHANNEL, routingChannelOf } from './normalize';
import { mattermostEnabled, mattermostSettingsSchema, MATTERMOST_ENV, type MattermostSettings } from './settings';

/**
 * The Mattermost channel as the registry lists it: `channels.mattermost`, the event WebSocket, and
 * its routing scope — a DM is `mattermost::<channel id>`, a thread `mattermost::<channel id>:<root id>`,
 * both routing as `mattermost:<channel id>` (bindings `mattermost` or `mattermost:<channel id>`).
 */
export const mattermostChannel = defineChannel<MattermostSettings>({
  name: MATTERMOST_CHANNEL,
  narrowBinding: '<channel id>',
  routingChannel: routingChannelOf,
  config: { schema: mattermostSettingsSchema, env: MATTERMOST_ENV },
  mode: () => 'websocket',
  create: ({ settings, logger, telemetry, renderLeases, cursors }) => {
    if (!mattermostEnabled(settings)) return null;
    // Loaded only when Mattermost is on, like every channel's client (adapters/index.ts).
    const { MattermostAdapter } = require('./mattermost-adapter') as typeof import('./mattermost-adapter');
    return new MattermostAdapter({
      url: settings.url ?? '',
      botToken: settings.bot_token ?? '',
      teams: settings.teams,
      actionsUrl: settings.actions_url,
      editIntervalMs: settings.edit_interval_ms,
      typingIntervalMs: settings.typing_interval_ms,
      reconnectMinMs: settings.reconnect_min_ms,
      reconnectMaxMs: settings.reconnect_max_ms,
      sendBudget: sendBudgetLimits(settings.send_budget.per_channel, settings.send_budget.overall),
      logger,
      telemetry,
      renderLeases,
      cursors,
    });
  },
});
