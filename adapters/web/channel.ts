import { defineChannel, WEB_CHANNEL } from '../../src/core/channel';
import { WEB_ADAPTER_DEFAULTS, WebAdapter } from './web-adapter';

/** Its two halves: the REST messages endpoint (src/api) and the session WebSocket (this adapter). */
export const WEB_CHANNEL_MODE = 'rest+websocket';

/**
 * The web channel as the registry lists it: always on, no `channels.web` section (its socket
 * settings are `websocket.*`), sessions addressed by id rather than by key, bound as `web`.
 */
export const webChannel = defineChannel<undefined>({
  name: WEB_CHANNEL,
  required: true,
  routingChannel: () => WEB_CHANNEL,
  mode: () => WEB_CHANNEL_MODE,
  create: ({ logger, allowedOrigins, socketIdleTimeoutMs, telemetry, socketAuth, draining }) => {
    // The hub always hands these over; a context without them (a test building channels) has no users to let in.
    if (!socketAuth) throw new Error('the web channel needs the hub\'s socket credential check (ChannelContext.socketAuth)');
    return new WebAdapter({
      logger,
      allowedOrigins,
      idleTimeoutMs: socketIdleTimeoutMs,
      maxPayloadBytes: WEB_ADAPTER_DEFAULTS.maxPayloadBytes,
      maxBufferedBytes: WEB_ADAPTER_DEFAULTS.maxBufferedBytes,
      telemetry,
      socketAuth,
      draining: draining ?? (() => false),
    });
  },
});
