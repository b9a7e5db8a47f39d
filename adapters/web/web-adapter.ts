import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import { WebSocketServer, type Server as WsServer } from 'ws';
import type { ChannelAdapter } from '../../src/core/channel';
import type { Hub, SessionSummary, SocketAuth } from '../../src/core/hub';
import { changeEnds, type Principal } from '../../src/core/principal';
import type { Unsubscribe } from '../../src/core/turns';
import { NO_CHANNEL_TELEMETRY, type ChannelTelemetry } from '../../src/core/telemetry';
import { CLOSE_CODES, CLOSE_REASONS } from '../../src/protocol/close-codes';
import { ConnectionsBySession } from './connections-by-session';
import { CLOSE, SessionConnection } from './session-connection';
import { SessionSocket, type ConnectionContext } from './session-socket';

export const SESSION_SOCKET_PATH = /^\/ws\/v1\/sessions\/([^/]+)$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Close codes of the spec's Errors section that the web channel uses at connect. */
export const CONNECT_CLOSE = {
  REGISTRY_UNAVAILABLE: CLOSE_CODES.SERVER_STARTING,
  UNAUTHORIZED: CLOSE_CODES.UNAUTHORIZED,
  FORBIDDEN: CLOSE_CODES.FORBIDDEN,
  SESSION_NOT_FOUND: CLOSE_CODES.NOT_FOUND,
} as const;

export interface WebAdapterConfig {
  logger: Logger;
  /** Browser origins allowed to open sockets; requests without Origin (CLI, SDKs) are allowed. */
  allowedOrigins: ReadonlySet<string>;
  /** Client silence after which a socket is closed (spec: 90 s), except while a turn runs. */
  idleTimeoutMs: number;
  /** Largest client frame; bigger ones close the socket with 1009 (decisions.md §5: 1 MiB). */
  maxPayloadBytes: number;
  /** Bytes queued for a slow client before its socket is closed (it reconnects and replays). */
  maxBufferedBytes: number;
  /** Sockets, frames and first answers, for the hub's metrics. */
  telemetry?: ChannelTelemetry;
  /** The hub's credential check for upgrades and the subprotocol echo (ChannelContext.socketAuth). */
  socketAuth: SocketAuth;
  /** True once the process shuts down: new sockets are closed with 1001 at once. */
  draining(): boolean;
}

export const WEB_ADAPTER_DEFAULTS = {
  idleTimeoutMs: 90_000,
  maxPayloadBytes: 1024 * 1024,
  maxBufferedBytes: 8 * 1024 * 1024,
} as const;

/**
 * The web channel's stream: the session WebSocket `/ws/v1/sessions/{id}` (the REST messages
 * endpoint is the other half). Authenticates at connect, then relays the session's event log.
 */
export class WebAdapter implements ChannelAdapter {
  readonly name = 'web' as const;
  /** The session socket, for the hub's upgrade router. */
  readonly upgrade: NonNullable<ChannelAdapter['upgrade']> = {
    matches: (pathname) => this.matches(pathname),
    handle: (request, socket, head) => this.handleUpgrade(request, socket, head),
  };
  private hub: Hub | null = null;
  private readonly wss: WsServer<typeof SessionSocket>;
  private readonly connections = new ConnectionsBySession();
  /** One object for every connection (each would otherwise keep the hub, logger, limits and telemetry); set by start(). */
  private context: ConnectionContext | null = null;
  private stopTakeovers: Unsubscribe | null = null;
  private idleTimer: NodeJS.Timeout | null = null;

  constructor(private readonly config: WebAdapterConfig) {
    this.wss = new WebSocketServer<typeof SessionSocket>({
      noServer: true,
      WebSocket: SessionSocket,
      // The adapter tracks its connections; ws's own Set would add a close listener, a closure and a Set entry per socket.
      clientTracking: false,
      maxPayload: config.maxPayloadBytes,
      perMessageDeflate: false,
      handleProtocols: (protocols, request) => config.socketAuth.selectProtocol(protocols, request),
    });
  }

  async start(hub: Hub): Promise<void> {
    const telemetry = this.config.telemetry ?? NO_CHANNEL_TELEMETRY;
    this.context = {
      hub,
      logger: this.config.logger,
      limits: { maxBufferedBytes: this.config.maxBufferedBytes },
      telemetry,
      closed: (connection) => {
        telemetry.socketClosed();
        this.forget(connection);
      },
    };
    this.hub = hub;
    // A second connection to a session replaces the first, on whichever process that one lives.
    this.stopTakeovers = await hub.control.subscribe((message) => {
      if (message.kind === 'takeover') {
        for (const connection of this.connections.of(message.sessionId)) {
          if (connection.id !== message.connectionId) connection.takenOver();
        }
      }
      // Revoked credentials end the sockets they opened, on whichever process those live.
      if (message.kind === 'principal_changed') {
        this.connections.forEach((connection) => {
          if (changeEnds(message, connection.principal)) connection.close(CONNECT_CLOSE.UNAUTHORIZED, 'credentials revoked');
        });
      }
    });
    const interval = Math.max(50, Math.min(5_000, Math.floor(this.config.idleTimeoutMs / 4)));
    this.idleTimer = setInterval(() => this.closeIdle(), interval);
    this.idleTimer.unref();
  }

  async stop(): Promise<void> {
    if (this.idleTimer) clearInterval(this.idleTimer);
    this.stopTakeovers?.();
    for (const connection of this.connections.all()) connection.close(CLOSE.GOING_AWAY, CLOSE_REASONS.SHUTTING_DOWN);
    this.connections.clear();
  }

  matches(pathname: string): boolean {
    return SESSION_SOCKET_PATH.test(pathname);
  }

  async handleUpgrade(request: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    const hub = this.hub;
    const url = new URL(request.url ?? '/', 'http://localhost');
    const sessionId = SESSION_SOCKET_PATH.exec(url.pathname)![1]!;
    const origin = request.headers.origin;
    if (origin !== undefined && !this.config.allowedOrigins.has(origin)) {
      socket.end('HTTP/1.1 403 Forbidden\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
      return;
    }
    if (!hub) return this.acceptThenClose(request, socket, head, CONNECT_CLOSE.REGISTRY_UNAVAILABLE, 'server starting');
    if (this.config.draining()) return this.acceptThenClose(request, socket, head, CLOSE.GOING_AWAY, 'server shutting down');

    let auth;
    try {
      auth = await this.config.socketAuth.authenticate(request, { queryToken: false });
    } catch (error) {
      this.config.logger.error({ err: error }, 'credential check failed at connect');
      return this.acceptThenClose(request, socket, head, CLOSE.INTERNAL_ERROR, 'internal error');
    }
    if (!auth.ok) return this.acceptThenClose(request, socket, head, auth.closeCode, auth.reason);
    let session;
    try {
      session = UUID.test(sessionId) ? await hub.findSession(sessionId) : null;
    } catch (error) {
      this.config.logger.error({ err: error }, 'session lookup failed at connect');
      return this.acceptThenClose(request, socket, head, CONNECT_CLOSE.REGISTRY_UNAVAILABLE, 'session registry unavailable');
    }
    if (!session || session.archived) return this.acceptThenClose(request, socket, head, CONNECT_CLOSE.SESSION_NOT_FOUND, 'session not found');
    if (auth.principal.role !== 'admin' && session.ownerId !== auth.principal.userId) {
      return this.acceptThenClose(request, socket, head, CONNECT_CLOSE.FORBIDDEN, 'not your session');
    }
    const lastSeq = parseLastSeq(url.searchParams.get('last_seq'));
    const context = this.context!;
    this.wss.handleUpgrade(request, socket, head, (ws) => {
      void this.connect(ws, context, session, auth.principal, lastSeq);
    });
  }

  private async connect(ws: SessionSocket, context: ConnectionContext, session: SessionSummary, principal: Principal, lastSeq: number | null) {
    const { hub } = context;
    const sessionId = session.id;
    const connection = new SessionConnection(ws, sessionId, principal, context, session.state);
    context.telemetry.socketOpened();
    this.connections.add(connection);
    ws.on('error', ignoreError); // 1009 (too big) and resets end in 'close'
    try {
      await hub.control.publish({ kind: 'takeover', sessionId, connectionId: connection.id });
      await connection.open(lastSeq);
    } catch (error) {
      this.config.logger.error({ err: error, session_id: sessionId }, 'could not open a session socket');
      connection.close(CLOSE.INTERNAL_ERROR, 'internal error');
    }
  }

  private forget(connection: SessionConnection): void {
    this.connections.delete(connection);
  }

  /** Completes the handshake and closes at once, so browsers see the close code (they cannot read a 4xx). */
  private acceptThenClose(request: IncomingMessage, socket: Duplex, head: Buffer, code: number, reason: string): void {
    this.wss.handleUpgrade(request, socket, head, (ws) => ws.close(code, reason));
  }

  private closeIdle(): void {
    const cutoff = Date.now() - this.config.idleTimeoutMs;
    this.connections.forEach((connection) => {
      if (!connection.turnRunning && connection.lastClientFrameAt < cutoff) connection.close(CLOSE.NORMAL, 'idle timeout');
    });
  }
}

/** A module-level listener: an inline one would be one more closure kept per socket. */
function ignoreError(): void {}

/**
 * Largest `last_seq` taken: far past any seq a session reaches (a million frames a second for 35
 * years), and far below 2^53, where numbers stop counting by one. A client's seq raises the session's
 * counter (the log restarted; its numbers keep increasing), so a larger one would leave no room.
 */
export const MAX_LAST_SEQ = 2 ** 50;

/** `?last_seq=<int>`; absent, not an integer or above MAX_LAST_SEQ: no replay. Negative: everything kept. */
export function parseLastSeq(value: string | null): number | null {
  if (value === null || !/^-?\d{1,16}$/.test(value)) return null;
  const seq = Number(value);
  if (seq > MAX_LAST_SEQ) return null;
  return Math.max(seq, -1);
}
