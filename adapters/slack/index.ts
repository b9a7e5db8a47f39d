export { SLACK_PATHS } from './events-receiver';
export type { SlackAdapterConfig } from './slack-adapter';
export { SLACK_LIMITS } from './limits';
import { SlackAdapter, type SlackAdapterConfig } from './slack-adapter';

/** The Slack channel: Events API (routes under /api/v1/channels/slack) or Socket Mode. */
export function createSlackAdapter(config: SlackAdapterConfig): SlackAdapter {
  return new SlackAdapter(config);
}

export type { SlackAdapter };
export { slackChannel } from './channel';
export { slackSettingsSchema, type SlackSettings } from './settings';
