import { selectProtocol } from '../auth/websocket';
import type { ChannelAdapter } from '../core/channel';
import type { Hub } from '../core/hub';
import { SqlChannelCursors } from '../db/channel-cursors';
import type { Logger } from '../logs/logger';
import { channelTelemetry } from '../metrics/channel-telemetry';
import { createClientIpResolver } from '../ratelimit';
import type { ChannelStatusBoard } from '../server/channel-status';
import { ChannelSupervisor } from '../server/channel-supervisor';
import type { Lifecycle } from '../server/lifecycle';
import type { SocketAuthenticator } from './auth';
import type { Core } from './service-types';

/** An enabled channel of this configuration, with its mode and whether the hub may start without it. */
export interface BuiltChannel {
  adapter: ChannelAdapter;
  mode: string;
  required: boolean;
}

/**
 * The registry's channels in this configuration: each declared on the status board (enabled or
 * not, with its mode), the enabled ones built from their validated `channels.<name>` section.
 * Built before the app: webhook routes mount before the JSON parser. `allowedOrigins` is filled
 * once the server listens (the hub's own origin needs the port).
 */
export function buildChannels(
  core: Core,
  board: ChannelStatusBoard,
  allowedOrigins: ReadonlySet<string>,
  authenticateSocket: SocketAuthenticator,
): BuiltChannel[] {
  const { config, logger, lifecycle } = core;
  const built: BuiltChannel[] = [];
  const clientAddress = createClientIpResolver(config.api.trusted_proxy_cidrs);
  const processFacts = {
    allowedOrigins,
    socketIdleTimeoutMs: config.websocket.idle_timeout_s * 1000,
    clientAddress,
    draining: () => lifecycle.draining,
    socketAuth: { authenticate: authenticateSocket, selectProtocol },
    renderLeases: core.drivers.leases,
    publicUrl: config.server.public_url ?? null,
    cursors: new SqlChannelCursors(core.database.sequelize),
  };
  for (const channel of core.channels) {
    const settings = config.channels[channel.name];
    const telemetry = channelTelemetry(channel.name, core.metrics, core.tracing, core.arrivals);
    const adapter = channel.create({ settings, logger, telemetry, ...processFacts });
    const mode = channel.mode(settings);
    board.register(channel.name, { enabled: adapter !== null, mode });
    if (adapter) built.push({ adapter, mode, required: channel.required === true });
  }
  return built;
}

/**
 * Starts every built channel under a supervisor. A channel never stops the hub (except a required
 * one's first start): a failed start is reported and retried with backoff.
 */
export async function startChannels(built: readonly BuiltChannel[], hub: Hub, board: ChannelStatusBoard, logger: Logger, lifecycle: Lifecycle): Promise<void> {
  const supervisors = built.map(({ adapter, mode, required }) => new ChannelSupervisor(adapter, mode, hub, board, logger, required));
  for (const supervisor of supervisors) lifecycle.onStop({ name: `${supervisor.name} channel`, stop: () => supervisor.stop() });
  await Promise.all(supervisors.map((supervisor) => supervisor.start()));
}
