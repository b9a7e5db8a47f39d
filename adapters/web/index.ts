export { CONNECT_CLOSE, WEB_ADAPTER_DEFAULTS, type WebAdapterConfig } from './web-adapter';
import { WebAdapter, type WebAdapterConfig } from './web-adapter';

/** The web channel: the session WebSocket (the REST messages endpoint lives with the sessions API). */
export function createWebAdapter(config: WebAdapterConfig): WebAdapter {
  return new WebAdapter(config);
}

export type { WebAdapter };
export { webChannel, WEB_CHANNEL_MODE } from './channel';
