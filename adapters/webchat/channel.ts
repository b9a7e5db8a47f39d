import { defineChannel } from '../../src/core/channel';
import { WEBCHAT_CHANNEL } from './normalize';
import { webchatSettingsSchema, WEBCHAT_ENV, type WebchatSettings } from './settings';

/** How it connects, for GET /admin/channels. */
export const WEBCHAT_MODE = 'socket.io';

/**
 * The website widget channel as the registry lists it: `channels.webchat`, off until enabled; a
 * widget session is a session `webchat::<conversation>` that routes as `webchat` (one binding for
 * every visitor; route further with contact tags from the widget's customData).
 */
export const webchatChannel = defineChannel<WebchatSettings>({
  name: WEBCHAT_CHANNEL,
  routingChannel: () => WEBCHAT_CHANNEL,
  // Anyone on the site can write: tools only as the webchat workflow pins them, no tool commands.
  anonymous: true,
  config: { schema: webchatSettingsSchema, env: WEBCHAT_ENV },
  mode: () => WEBCHAT_MODE,
  create: ({ settings, logger, allowedOrigins, clientAddress, telemetry, draining, renderLeases }) => {
    if (!settings.enabled) return null;
    // Loaded only when the widget is on, like every channel's client (adapters/index.ts): socket.io.
    const { WebchatAdapter } = require('./webchat-adapter') as typeof import('./webchat-adapter');
    return new WebchatAdapter({ settings, logger, allowedOrigins, clientAddress, telemetry, draining, renderLeases });
  },
});
