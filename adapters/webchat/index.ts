export { WEBCHAT_DEFAULTS, type WebchatAdapterConfig } from './adapter-config';
import type { WebchatAdapterConfig } from './adapter-config';
import { WebchatAdapter } from './webchat-adapter';

/** The website widget channel: Rasa Webchat's Socket.IO protocol at `channels.webchat.path`. */
export function createWebchatAdapter(config: WebchatAdapterConfig): WebchatAdapter {
  return new WebchatAdapter(config);
}

export type { WebchatAdapter };
export { webchatChannel, WEBCHAT_MODE } from './channel';
export { webchatSettingsSchema, type WebchatSettings } from './settings';
