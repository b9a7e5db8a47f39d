import type { RequestHandler } from 'express';
import type { Hub } from './hub';
import type { ChannelName } from './inbound';

/**
 * A chat channel (Slack, Telegram): translates platform events into `Hub.ingest` calls and renders
 * the session's `AgentEvent`s back on the platform. Required: a name, start and stop. Optional
 * capabilities are optional members — a platform that cannot do something simply lacks them.
 */
export interface ChannelAdapter {
  readonly name: ChannelName;
  /** Starts receiving (webhook routes become live; polling or socket mode connects). */
  start(hub: Hub): Promise<void>;
  /** Stops receiving and finishes (or abandons, after the shutdown timeout) pending renders. */
  stop(): Promise<void>;
  /**
   * HTTP endpoints the platform calls, mounted under /api/v1 before the JSON parser (webhooks
   * verify signatures over the raw body). Absent for polling / socket-mode only adapters.
   */
  routes?: readonly { path: string; handler: RequestHandler }[];
}

/** The service identity that owns a chat channel's sessions (admins see them; users never own them). */
export function channelOwner(channel: ChannelName): string {
  return `channel:${channel}`;
}
