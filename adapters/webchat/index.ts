export { WEBCHAT_DEFAULTS, type WebchatAdapterConfig } from './webchat-adapter';
import { WebchatAdapter, type WebchatAdapterConfig } from './webchat-adapter';

/** The website widget channel: Rasa Webchat's Socket.IO protocol at `channels.webchat.path`. */
export function createWebchatAdapter(config: WebchatAdapterConfig): WebchatAdapter {
  return new WebchatAdapter(config);
}

export type { WebchatAdapter };
export { webchatChannel, WEBCHAT_MODE } from './channel';
export { webchatSettingsSchema, type WebchatSettings } from './settings';
