import type { IncomingMessage } from 'node:http';
import { Server as Engine } from 'engine.io';
import { Server as SocketServer } from 'socket.io';

export interface SocketServerOptions {
  /** Origins whose pages may connect (read per request: the hub's own origin is known once it listens). */
  isAllowedOrigin(origin: string): boolean;
  /** True while the hub shuts down: no new connections. */
  isDraining(): boolean;
  /** Largest packet a client may send (a message with its customData), in bytes. */
  maxPacketBytes: number;
}

/** Why a connection is refused, as the client sees it (the body of engine.io's 403). */
export const ORIGIN_REFUSED = 'This site is not allowed to use this chat (its origin is not in channels.webchat.allowed_origins).';
export const DRAINING_REFUSED = 'The server is shutting down; reconnect in a moment.';

/** The Engine.IO timings (its own defaults): a silent client is dropped after ping interval + timeout. */
export const ENGINE_DEFAULTS = {
  pingIntervalMs: 25_000,
  pingTimeoutMs: 20_000,
  /** A client that connected but never joined the namespace is dropped after this. */
  connectTimeoutMs: 10_000,
} as const;

/**
 * The Socket.IO server the widget talks to, without an HTTP server of its own: the hub routes the
 * widget's HTTP long-polling requests (`engine.handleRequest`) and WebSocket upgrades
 * (`engine.handleUpgrade`) to it. rasa-webchat 1.x ships socket.io-client 3 (Engine.IO 4, native to
 * this server); `allowEIO3` also admits the older widgets built on socket.io-client 2.
 * A browser's Origin must be allowed; requests without one (same-origin polling GETs, scripts) pass.
 */
export function createSocketServer(options: SocketServerOptions): { engine: Engine; io: SocketServer } {
  const allowed = (origin: string | undefined) => origin === undefined || options.isAllowedOrigin(origin);
  const engine = new Engine({
    allowEIO3: true,
    maxHttpBufferSize: options.maxPacketBytes,
    pingInterval: ENGINE_DEFAULTS.pingIntervalMs,
    pingTimeout: ENGINE_DEFAULTS.pingTimeoutMs,
    perMessageDeflate: false,
    httpCompression: false,
    allowRequest: (request: IncomingMessage, callback) => {
      if (options.isDraining()) return callback(DRAINING_REFUSED, false);
      if (!allowed(request.headers.origin)) return callback(ORIGIN_REFUSED, false);
      callback(null, true);
    },
    // Polling from a page on another site is a cross-origin XHR: allowed origins get CORS headers.
    cors: { origin: (origin, callback) => callback(null, allowed(origin)), methods: ['GET', 'POST'] },
  });
  const io = new SocketServer({ serveClient: false, connectTimeout: ENGINE_DEFAULTS.connectTimeoutMs });
  io.bind(engine);
  return { engine, io };
}
