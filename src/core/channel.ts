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
  /**
   * Starts receiving (webhook routes become live; polling or socket mode connects) once the
   * platform accepted the credentials. Throws when it cannot — with the platform's reason and never
   * a token in the message — and the hub retries later (decisions.md, "A channel that fails").
   * Until it resolved, webhook routes answer 503 so that the platform delivers again.
   */
  start(hub: Hub, reporter: ChannelReporter): Promise<void>;
  /** Stops receiving and finishes (or abandons, after the shutdown timeout) pending renders. */
  stop(): Promise<void>;
  /**
   * HTTP endpoints the platform calls, mounted under /api/v1 before the JSON parser (webhooks
   * verify signatures over the raw body). Absent for polling / socket-mode only adapters.
   */
  routes?: readonly { path: string; handler: RequestHandler }[];
}

/** What a started chat channel tells the hub about itself. */
export interface ChannelReporter {
  /**
   * The channel stopped working after it started (long polling ended, the platform refused the
   * token). The hub marks it failed, stops it and starts it again with backoff.
   */
  failed(reason: string): void;
}

/** The service identity that owns a chat channel's sessions (admins see them; users never own them). */
export function channelOwner(channel: ChannelName): string {
  return `channel:${channel}`;
}
