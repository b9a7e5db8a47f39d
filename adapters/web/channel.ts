import { defineChannel, WEB_CHANNEL } from '../../src/core/channel';
import type { SocketAuth } from '../../src/core/hub';
import { CLOSE_CODES } from '../../src/protocol/close-codes';
import { WEB_ADAPTER_DEFAULTS, WebAdapter } from './web-adapter';

/** Without the hub's credential check every upgrade is refused as unauthorized (4001). */
const NO_SOCKET_AUTH: SocketAuth = {
  authenticate: async () => ({ ok: false, closeCode: CLOSE_CODES.UNAUTHORIZED, reason: 'unauthorized' }),
  selectProtocol: () => false,
};

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
  create: ({ logger, allowedOrigins, socketIdleTimeoutMs, telemetry, socketAuth, draining }) =>
    new WebAdapter({
      logger,
      allowedOrigins,
      idleTimeoutMs: socketIdleTimeoutMs,
      maxPayloadBytes: WEB_ADAPTER_DEFAULTS.maxPayloadBytes,
      maxBufferedBytes: WEB_ADAPTER_DEFAULTS.maxBufferedBytes,
      telemetry,
      // The hub always hands it over; a context without one can check nobody, so it lets nobody in.
      socketAuth: socketAuth ?? NO_SOCKET_AUTH,
      draining: draining ?? (() => false),
    }),
});
