import type { IncomingMessage } from 'node:http';
import type { Logger } from 'pino';
import type { RenderLeases } from '../../src/core/render-lease';
import type { ChannelTelemetry } from '../../src/core/telemetry';
import type { WebchatSettings } from './settings';

export interface WebchatAdapterConfig {
  settings: WebchatSettings;
  logger: Logger;
  /** The hub's own browser origins (`api.allowed_origins`), allowed besides `settings.allowed_origins`. */
  allowedOrigins: ReadonlySet<string>;
  clientAddress(request: IncomingMessage): string;
  /** The hub's metrics (sockets, events received, answers delivered); absent: none. */
  telemetry?: ChannelTelemetry;
  /** True once the process shuts down: new widget connections are refused. */
  draining?(): boolean;
  /** Chats' rendering leases (ChannelContext.renderLeases): a conversation's turns are shown in the order they ran. */
  renderLeases?: RenderLeases;
}

/** The channel's fixed limits (its configurable ones are `channels.webchat.*`). */
export const WEBCHAT_DEFAULTS = {
  /** Answers for a visitor who is away (a page load) wait this long for the widget to reconnect. */
  heldKeepMs: 120_000,
  heldPerConversation: 50,
  heldConversations: 10_000,
  /** How often expired limit counters and held answers are dropped. */
  sweepIntervalMs: 60_000,
  /** A packet's room beyond its text (6 bytes per character, JSON's worst): customData and framing. */
  packetOverheadBytes: 16 * 1024,
} as const;
