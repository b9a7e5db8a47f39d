import type { RequestHandler } from 'express';
import { WEB_CHANNEL } from '../core/channel';
import type { Hub } from '../core/hub';
import type { ChannelName } from '../core/inbound';

/** `disabled`: not configured; `starting`: first attempt running; `running`; `failed`: retried with backoff. */
export type ChannelState = 'disabled' | 'starting' | 'running' | 'failed';

/** One channel as `GET /admin/channels` shows it (field names are a contract with the Web UI). */
export interface ChannelStatus {
  name: ChannelName;
  enabled: boolean;
  /** How it connects, as its descriptor says: `events`/`socket` (Slack), `webhook`/`polling` (Telegram), `rest+websocket` (web). */
  mode: string;
  status: ChannelState;
  /** The platform's reason for the last failure (`invalid_auth`, `401: Unauthorized`, …); null once running. */
  error: string | null;
  /** The last inbound event from the platform's users (a message, a button click, a cancel). */
  last_event_at: string | null;
  /** When the channel last became running. */
  started_at: string | null;
  /** While failed: when the next start attempt is due. */
  next_retry_at: string | null;
}

/** A channel's entry in `/health/ready` (reported there; never what makes readiness 503). */
export interface ChannelReadiness {
  status: ChannelState;
  mode: string;
  error?: string;
}

/** The REST messages endpoint is the web channel's inbound half (the socket's frames reach `observedHub`). */
const WEB_MESSAGES = { method: 'post', path: '/sessions/{id}/messages' } as const;

/**
 * The state of every channel in this process, in one place: the supervisor writes it, the
 * readiness check and the admin endpoint read it, and inbound activity stamps `last_event_at`.
 */
export class ChannelStatusBoard {
  private readonly entries = new Map<ChannelName, ChannelStatus>();

  /** Declares a channel (listed in the order declared); an enabled one starts out `starting`, a disabled one stays `disabled`. */
  register(name: ChannelName, options: { enabled: boolean; mode: string }): void {
    this.entries.set(name, {
      name,
      enabled: options.enabled,
      mode: options.mode,
      status: options.enabled ? 'starting' : 'disabled',
      error: null,
      last_event_at: null,
      started_at: null,
      next_retry_at: null,
    });
  }

  running(name: ChannelName): void {
    this.update(name, { status: 'running', error: null, started_at: new Date().toISOString(), next_retry_at: null });
  }

  failed(name: ChannelName, error: string, retryAt: Date | null): void {
    this.update(name, { status: 'failed', error, next_retry_at: retryAt?.toISOString() ?? null });
  }

  /** An inbound event arrived on the channel (at `at`; a later one already recorded wins). */
  touch(name: ChannelName, at = new Date()): void {
    const last = this.entries.get(name)?.last_event_at;
    if (last && Date.parse(last) > at.getTime()) return;
    this.update(name, { last_event_at: at.toISOString() });
  }

  /**
   * Per-endpoint middleware (`ApiRouterOptions.before`) that stamps the web channel's
   * `last_event_at` when `POST /sessions/{id}/messages` accepted a message — with the time it
   * arrived, since a `sync=true` answer is sent only when the turn is over.
   */
  webMessageActivity(endpoint: { method: string; path: string }): RequestHandler[] {
    if (endpoint.method !== WEB_MESSAGES.method || endpoint.path !== WEB_MESSAGES.path) return [];
    return [
      (_req, res, next) => {
        const arrived = new Date();
        res.on('finish', () => {
          if (res.statusCode < 300) this.touch(WEB_CHANNEL, arrived);
        });
        next();
      },
    ];
  }

  get(name: ChannelName): ChannelStatus | undefined {
    const entry = this.entries.get(name);
    return entry && { ...entry };
  }

  list(): ChannelStatus[] {
    return [...this.entries.values()].map((entry) => ({ ...entry }));
  }

  /** The names of the enabled channels (`GET /config`). */
  enabledNames(): string[] {
    return this.list()
      .filter((channel) => channel.enabled)
      .map((channel) => channel.name);
  }

  /** The enabled channels, for `/health/ready`. */
  readiness(): Record<string, ChannelReadiness> {
    const result: Record<string, ChannelReadiness> = {};
    for (const entry of this.list()) {
      if (!entry.enabled) continue;
      result[entry.name] = { status: entry.status, mode: entry.mode, ...(entry.error ? { error: entry.error } : {}) };
    }
    return result;
  }

  /**
   * The hub port as one channel sees it: every user action it forwards (a message, a cancel, a
   * confirmation) stamps the channel's `last_event_at` — so adapters need no extra reporting.
   */
  observedHub(name: ChannelName, hub: Hub): Hub {
    const touch = () => this.touch(name);
    return {
      ingest: (message) => (touch(), hub.ingest(message)),
      cancelTurn: (sessionId) => (touch(), hub.cancelTurn(sessionId)),
      confirmTool: (sessionId, confirmationId, action, actor, groups) => (touch(), hub.confirmTool(sessionId, confirmationId, action, actor, groups)),
      amendWaiting: (channel, externalId, text) => (touch(), hub.amendWaiting(channel, externalId, text)),
      findSession: (sessionId) => hub.findSession(sessionId),
      announceSession: (sessionId, seen) => hub.announceSession(sessionId, seen),
      answerClient: (sessionId, answer) => hub.answerClient(sessionId, answer),
      events: hub.events,
      control: hub.control,
    };
  }

  private update(name: ChannelName, change: Partial<ChannelStatus>): void {
    const entry = this.entries.get(name);
    if (entry) this.entries.set(name, { ...entry, ...change });
  }
}
