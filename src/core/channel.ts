import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { RequestHandler } from 'express';
import type { Logger } from 'pino';
import type { ZodType } from 'zod';
import type { Hub, SocketAuth } from './hub';
import type { RenderLeases } from './render-lease';
import type { ChannelTelemetry } from './telemetry';
import type { ChannelName } from './inbound';
import type { ChatDelivery } from './delivery';
import type { ChannelCursors } from './channel-cursors';

/**
 * A channel (Slack, Telegram, the web): translates platform events into `Hub.ingest` calls and renders
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
  /**
   * HTTP endpoints outside the API, mounted at the hub's root before the web UI, with no JSON parser
   * before them: what a browser on another site talks to at a path of its own convention (the
   * website widget's Socket.IO path, its demo page). Rate-limited like every other route.
   */
  rootRoutes?: readonly { path: string; handler: RequestHandler }[];
  /** WebSocket upgrades the channel serves (the web channel's session socket). */
  upgrade?: {
    matches(pathname: string): boolean;
    handle(request: IncomingMessage, socket: Duplex, head: Buffer): Promise<void>;
  };
  /** Asks the platform whether the channel's credentials work (admin "test connection"); never throws. */
  checkConnection?(): Promise<ConnectionCheck>;
  /**
   * Tells the platform where to deliver (Telegram's setWebhook): `<publicUrl>/api/v1/…`. Throws with
   * the platform's reason (never a token). A channel that is not delivered to by webhook lacks it.
   */
  registerWebhook?(publicUrl: string): Promise<{ url: string }>;
  /** Posts answers of webhooks and schedules into its conversations (`deliver: <channel>:<id>`; src/core/delivery.ts). */
  delivery?: ChatDelivery;
}

/** What a channel's connection test found: whether the platform accepts it, and which variable to fix if not. */
export interface ConnectionCheck {
  ok: boolean;
  /** What the platform said, for people (the bot's name, or its refusal; never a token). */
  detail: string;
  /** The environment variable to fix when `ok` is false and a setting is to blame; null otherwise. */
  variable: string | null;
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

/**
 * The channel of sessions made through the REST API and used over the session WebSocket
 * (adapters/web): the spec's own channel, which every hub has.
 */
export const WEB_CHANNEL: ChannelName = 'web';

// ---------------------------------------------------------------------------------------------
// Routing scope: what the core knows of a channel, as data (the registry is adapters/index.ts).

/** A channel's name: lowercase letters, digits, `_` and `-`. */
export const CHANNEL_NAME = /^[a-z][a-z0-9_-]{0,31}$/;
/** A `binding_channels` value's shape: `<channel>` or `<channel>:<id>` (which channels exist is the registry's). */
export const BINDING_CHANNEL = /^[a-z][a-z0-9_-]{0,31}(:[A-Za-z0-9._-]{1,64})?$/;
/** A session key's shape: `<channel>::<conversation>` (decisions.md §3). */
export const SESSION_KEY = /^[a-z][a-z0-9_-]{0,31}::.{1,240}$/;

/**
 * A channel's routing scope: which `binding_channels` values it owns and how its session keys map
 * to them. Each adapter implements it; the routing and workflow services take the registry's list.
 */
export interface ChannelScope {
  /** As in `InboundMessage.channel`, session keys (`<name>::…`) and binding channels (`<name>`). */
  readonly name: ChannelName;
  /**
   * What `<name>:<id>` narrows a binding to (`'<channel id>'` for Slack), for messages and docs;
   * absent when only the bare name binds.
   */
  readonly narrowBinding?: string;
  /**
   * The binding channel a session of this channel routes as, from its session key's conversation
   * part: `slack:C456` for `T123:C456:1700000000.000100`; the bare name when nothing narrower applies.
   */
  routingChannel(conversation: string): string;
  /**
   * Its senders are anonymous visitors (the website widget): their sessions get no tools of their
   * own — only what the answering workflow pins (`tool_list`), never `agent.default_tools` — and the
   * in-chat tool commands are off for them; `/info` names no model and no tools.
   */
  readonly anonymous?: boolean;
}

/** Whether `channel` is one whose senders are anonymous visitors (ChannelScope.anonymous). */
export function isAnonymousChannel(channel: string, scopes: readonly ChannelScope[]): boolean {
  return scopes.some((scope) => scope.name === channel && scope.anonymous === true);
}

/** `<channel>::<conversation>`: a chat session's key, found or created on its first message. */
export function formatSessionKey(channel: ChannelName, conversation: string): string {
  return `${channel}::${conversation}`;
}

/** The parts of a session key, or null when it has none. */
export function parseSessionKey(key: string): { channel: ChannelName; conversation: string } | null {
  const at = key.indexOf('::');
  return at > 0 ? { channel: key.slice(0, at), conversation: key.slice(at + 2) } : null;
}

/** The binding channel of a session: its channel's scope reads the key; web sessions have none. */
export function routingChannelOf(session: { channel: string; session_key: string | null }, scopes: readonly ChannelScope[]): string {
  const parsed = session.session_key ? parseSessionKey(session.session_key) : null;
  if (!parsed) return session.channel;
  const scope = scopes.find((candidate) => candidate.name === parsed.channel);
  return scope ? scope.routingChannel(parsed.conversation) : parsed.channel;
}

/** Whether a `binding_channels` value names a channel of `scopes` (a narrowed one only where the channel narrows). */
export function isKnownBinding(value: string, scopes: readonly ChannelScope[]): boolean {
  if (!BINDING_CHANNEL.test(value)) return false;
  const [name, narrowed] = value.split(':');
  const scope = scopes.find((candidate) => candidate.name === name);
  return scope !== undefined && (narrowed === undefined || scope.narrowBinding !== undefined);
}

/** `web, slack, telegram, slack:<channel id> or telegram:<chat id>`: the binding channels of `scopes`, for messages. */
export function describeBindings(scopes: readonly ChannelScope[]): string {
  const values = [...scopes.map((scope) => scope.name), ...scopes.flatMap((scope) => (scope.narrowBinding ? [`${scope.name}:${scope.narrowBinding}`] : []))];
  return values.length > 1 ? `${values.slice(0, -1).join(', ')} or ${values.at(-1)}` : (values[0] ?? 'no channel');
}

// ---------------------------------------------------------------------------------------------
// Plug-in contract: one descriptor per channel folder, listed once in adapters/index.ts.

/** How a `SERVICE_*` variable's text becomes a config value (src/config/load.ts converts it). */
export type EnvKind = 'string' | 'int' | 'bool' | 'list' | 'nullable-string';

/** A `SERVICE_*` variable that sets one key of a channel's `channels.<name>` section. */
export interface ChannelEnvBinding {
  env: string;
  /** The key inside the section (`bot_token` for `channels.slack.bot_token`). */
  key: string;
  kind: EnvKind;
  /** Secrets come only from the environment: config.yaml refuses them, messages name the variable. */
  secret?: boolean;
}

/** A channel's `channels.<name>` section: validated with the rest of the configuration, once, at startup. */
export interface ChannelConfigSection<S> {
  /** Strict, every key defaulted; refuses (naming the key) a combination that cannot work. */
  schema: ZodType<S>;
  env: readonly ChannelEnvBinding[];
}

/** What the hub hands a channel's factory. */
export interface ChannelContext<S> {
  /** The channel's validated `channels.<name>` section (undefined for a channel without one). */
  settings: S;
  logger: Logger;
  /**
   * Browser origins the hub accepts (CORS, WebSocket upgrades). The hub's own origin needs the
   * bound port, so the set is complete once the server listens: read it per request.
   */
  allowedOrigins: ReadonlySet<string>;
  /** Client silence after which a socket is closed (`websocket.idle_timeout_s`), except while a turn runs. */
  socketIdleTimeoutMs: number;
  /**
   * The client address of a request as the rate limiter buckets it: the TCP peer, or with
   * `api.trusted_proxy_cidrs` the X-Forwarded-For walk (for a channel's own per-address limits).
   */
  clientAddress(request: IncomingMessage): string;
  /** Platform calls, sockets, frames and answer delivery, for the hub's metrics (no-ops when metrics are off). */
  telemetry?: ChannelTelemetry;
  /**
   * True once the process is shutting down: a channel that takes connections (the web socket, the
   * widget's Socket.IO) refuses new ones then. A process fact, known before the hub starts the channel.
   */
  draining?(): boolean;
  /**
   * The hub's check of a WebSocket upgrade's credential (the same as REST's) and the subprotocol to
   * echo: for a channel that serves the hub's own users on a socket (the web channel). Server facts
   * like `allowedOrigins`, not calls on the hub port (decisions, "The channel contract").
   */
  socketAuth?: SocketAuth;
  /**
   * Chats' rendering leases (src/core/render-lease.ts): a chat channel that follows turns shows a
   * chat's turns in order across API processes with them (`adapters/shared/chat-follower.ts`).
   */
  renderLeases?: RenderLeases;
  /** `server.public_url`: where platforms reach the hub (Telegram's webhook is registered there on start); null when unset. */
  publicUrl?: string | null;
  /** Positions on the platform kept across restarts (a channel that catches up on what was posted while the hub was down). */
  cursors?: ChannelCursors;
}

/**
 * One channel plug-in. The composition root validates `config` with the rest of the configuration, then for
 * every descriptor of the registry: `create`, mount its routes and upgrades, and run it under a
 * supervisor that retries a failed start with backoff.
 */
export interface ChannelDescriptor<S = unknown> extends ChannelScope {
  /** Its `channels.<name>` section; absent for a channel without settings (web). */
  readonly config?: ChannelConfigSection<S>;
  /**
   * The hub does not start without it (the web channel: the hub's own API). Any other channel that
   * fails is reported and started again with backoff while the hub serves.
   */
  readonly required?: boolean;
  /** Request headers of its platform's calls that carry a secret or a signature: redacted in every log line. */
  readonly secretHeaders?: readonly string[];
  /** How it connects in these settings (`events`, `polling`, `rest+websocket`…), for GET /admin/channels. */
  mode(settings: S): string;
  /** The adapter, or null when the channel is off in these settings. */
  create(context: ChannelContext<S>): ChannelAdapter | null;
}

/**
 * A descriptor as the registry lists it: the composition root hands each one only the section its own schema
 * validated, so forgetting the settings' type here is safe.
 */
export function defineChannel<S>(descriptor: ChannelDescriptor<S>): ChannelDescriptor {
  return descriptor as unknown as ChannelDescriptor;
}
