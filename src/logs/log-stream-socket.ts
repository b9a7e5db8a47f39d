import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import type { SocketAuthResult } from '../core/hub';
import { changeEnds, type Principal, type PrincipalChangeReason, type Role } from '../core/principal';
import { STREAM_LEVELS, type LogHub, type LogLine, type StreamLevel } from './log-hub';

export const LOG_STREAM_PATH = '/ws/v1/logs';

export interface LogStreamOptions {
  hub: LogHub;
  authenticate(request: IncomingMessage, options: { queryToken: boolean; role?: Role }): Promise<SocketAuthResult>;
  selectProtocol(protocols: Set<string>, request: IncomingMessage): string | false;
  allowedOrigins: ReadonlySet<string>;
  idleTimeoutMs: number;
  /** Bytes queued for a slow admin socket before lines are dropped for it (never slowing the service). */
  maxBufferedBytes: number;
}

export const LOG_STREAM_DEFAULTS = { maxBufferedBytes: 1024 * 1024, maxPayloadBytes: 4096, closeGraceMs: 1_000 } as const;

const RANK: Record<StreamLevel, number> = { DEBUG: 0, INFO: 1, WARNING: 2, ERROR: 3 };

/**
 * `/ws/v1/logs?token=&level=`: the live log stream for admins. Plain `log_line` objects (no session
 * envelope); the client's plain-text `ping` gets `{"type":"pong"}`.
 */
export class LogStreamSocket {
  private readonly wss: WebSocketServer;
  private readonly sockets = new Set<WebSocket>();
  private idleTimer: NodeJS.Timeout | null = null;
  private readonly lastHeard = new WeakMap<WebSocket, number>();
  private readonly principals = new WeakMap<WebSocket, Principal>();

  constructor(private readonly options: LogStreamOptions) {
    this.wss = new WebSocketServer({
      noServer: true,
      maxPayload: LOG_STREAM_DEFAULTS.maxPayloadBytes,
      perMessageDeflate: false,
      handleProtocols: (protocols, request) => options.selectProtocol(protocols, request),
    });
    this.idleTimer = setInterval(() => this.closeIdle(), Math.max(50, Math.min(5_000, Math.floor(options.idleTimeoutMs / 4))));
    this.idleTimer.unref();
  }

  matches(pathname: string): boolean {
    return pathname === LOG_STREAM_PATH;
  }

  async handleUpgrade(request: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    const origin = request.headers.origin;
    if (origin !== undefined && !this.options.allowedOrigins.has(origin)) {
      socket.end('HTTP/1.1 403 Forbidden\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
      return;
    }
    const auth = await this.options.authenticate(request, { queryToken: true, role: 'admin' }).catch(() => null);
    const level = (new URL(request.url ?? '/', 'http://localhost').searchParams.get('level') ?? 'INFO').toUpperCase();
    this.wss.handleUpgrade(request, socket, head, (ws) => {
      if (!auth) return ws.close(1011, 'internal error'); // the credential check itself failed
      if (!auth.ok) return ws.close(auth.closeCode, auth.reason);
      if (!(STREAM_LEVELS as readonly string[]).includes(level)) return ws.close(1008, 'level must be DEBUG, INFO, WARNING or ERROR');
      this.principals.set(ws, auth.principal);
      void this.stream(ws, level as StreamLevel);
    });
  }

  async stop(): Promise<void> {
    if (this.idleTimer) clearInterval(this.idleTimer);
    for (const ws of this.sockets) {
      ws.close(1001, 'server shutting down');
      setTimeout(() => ws.terminate(), LOG_STREAM_DEFAULTS.closeGraceMs).unref(); // a client that never answers the close
    }
  }

  /**
   * Closes the streams a credential change ends (from any process): a demoted admin's with 4003,
   * a deactivated, deleted or logged-out one's with 4001.
   */
  revoke(change: { userId: string; reason: PrincipalChangeReason; apiKeyId?: string }): void {
    for (const ws of this.sockets) {
      const principal = this.principals.get(ws);
      if (!principal || !changeEnds(change, principal)) continue;
      if (change.reason === 'role_changed') ws.close(4003, 'no longer an admin');
      else ws.close(4001, 'credentials revoked');
    }
  }

  private async stream(ws: WebSocket, minimum: StreamLevel): Promise<void> {
    this.sockets.add(ws);
    this.lastHeard.set(ws, Date.now());
    let dropped = 0;
    const send = (line: LogLine) => {
      if (RANK[line.level] < RANK[minimum] || ws.readyState !== ws.OPEN) return;
      if (ws.bufferedAmount > this.options.maxBufferedBytes) {
        dropped += 1; // a slow admin socket loses lines; the service never waits for it
        return;
      }
      if (dropped > 0) {
        ws.send(
          JSON.stringify({
            type: 'log_line',
            level: 'WARNING',
            logger: 'log-stream',
            message: `${dropped} lines dropped: the client reads too slowly`,
            timestamp: new Date().toISOString(),
          }),
        );
        dropped = 0;
      }
      ws.send(JSON.stringify(line));
    };
    // Listeners first: ws drops client frames that arrive while nobody listens (the subscription
    // below may take a round trip to Redis).
    let stopListening: (() => void) | null = null;
    let closed = false;
    ws.on('message', (data, isBinary) => {
      this.lastHeard.set(ws, Date.now());
      if (!isBinary && data.toString() === 'ping') ws.send('{"type":"pong"}');
    });
    ws.on('close', () => {
      closed = true;
      stopListening?.();
      this.sockets.delete(ws);
    });
    ws.on('error', () => undefined);
    const stop = await this.options.hub.listen(send);
    if (closed) stop();
    else stopListening = stop;
  }

  private closeIdle(): void {
    const cutoff = Date.now() - this.options.idleTimeoutMs;
    for (const ws of this.sockets) if ((this.lastHeard.get(ws) ?? 0) < cutoff) ws.close(1000, 'idle timeout');
  }
}
