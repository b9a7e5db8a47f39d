import type { TurnMode } from './events';

/** A channel's name, as the channel registry (adapters/index.ts) lists it; `<channel>::<conversation>` addresses belong to their adapter. */
export type ChannelName = string;

/**
 * One inbound user message, normalised by its channel adapter. Adapters only translate platform
 * events into this shape; storing, routing and running the turn happen behind `Hub.ingest`.
 */
export interface InboundMessage {
  channel: ChannelName;
  /** The session, when the channel addresses one directly (the web channel). */
  sessionId?: string;
  /** `<channel>::<conversation>` for chat channels (decisions.md §3); finds or creates the session. */
  sessionKey?: string;
  /**
   * A session key this message may continue instead (a Telegram reply to an event's delivered answer):
   * when a session alias has this key, the message goes to that session; otherwise to `sessionKey`'s.
   */
  continues?: string;
  sender: {
    /** The user account the message acts for (web: the authenticated caller). */
    userId: string;
    /** The platform's id of the person (Slack user id, Telegram user id), when not a web user. */
    contactId?: string;
    displayName?: string;
    tags?: string[];
  };
  text: string;
  mode: TurnMode;
  metadata: Record<string, unknown>;
  /** The turn's id to use (a caller that follows the turn from before it is accepted picks it). */
  turnId?: string;
  /** The platform's id of this message/update, to recognise platform retries. */
  externalId?: string;
  /** The original platform payload, kept for debugging only. */
  raw?: unknown;
}
