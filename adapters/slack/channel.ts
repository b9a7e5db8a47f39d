import { defineChannel } from '../../src/core/channel';
import { conversationOfKey, SLACK_CHANNEL } from './normalize';
import { slackAdapterConfig, slackEnabled, slackSettingsSchema, SLACK_ENV, type SlackSettings } from './settings';

/**
 * The Slack channel as the registry lists it: `channels.slack`, Events API or Socket Mode, and its
 * routing scope — a thread (or DM) is a session `slack::<team>:<channel>[:<thread ts>]` that routes
 * as `slack:<channel id>` (bindings `slack` or `slack:<channel id>`).
 */
export const slackChannel = defineChannel<SlackSettings>({
  name: SLACK_CHANNEL,
  narrowBinding: '<channel id>',
  routingChannel: (conversation) => {
    const address = conversationOfKey(conversation);
    return address ? `${SLACK_CHANNEL}:${address.channel}` : SLACK_CHANNEL;
  },
  config: { schema: slackSettingsSchema, env: SLACK_ENV },
  secretHeaders: ['x-slack-signature'],
  mode: (settings) => settings.mode,
  create: ({ settings, logger, telemetry, renderLeases }) => {
    if (!slackEnabled(settings)) return null;
    // Loaded only when Slack is on: @slack/bolt would cost every hub's start ~0.3 s (2-core machine).
    const { SlackAdapter } = require('./slack-adapter') as typeof import('./slack-adapter');
    return new SlackAdapter({ ...slackAdapterConfig(settings, logger), telemetry, renderLeases });
  },
});
