import { MattermostAdapter, type MattermostAdapterConfig } from './mattermost-adapter';

/** The Mattermost channel: the event WebSocket in, REST v4 posts and edits out. */
export function createMattermostAdapter(config: MattermostAdapterConfig): MattermostAdapter {
  return new MattermostAdapter(config);
}

export type { MattermostAdapter, MattermostAdapterConfig };
export { mattermostChannel } from './channel';
export { mattermostSettingsSchema, type MattermostSettings } from './settings';
