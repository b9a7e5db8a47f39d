import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import type { SocketAuthResult } from '../core/hub';
import { changeEnds, type Principal, type PrincipalChangeReason, type Role } from '../core/principal';

export interface SignedInStreamOptions {
  path: string;
  authenticate(request: IncomingMessage, options: { queryToken: boolean; role?: Role }): Promise<SocketAuthResult>;
  /** Only principals with this role are let in (the log stream: admins). */
  role?: Role;
  selectProtocol(protocols: Set<string>, request: IncomingMessage): string | false;
  allowedOrigins: ReadonlySet<string>;
  idleTimeoutMs: number;
  maxPayloadBytes: number;
  /** How long a closed socket may take to answer the close before it is cut. */
  closeGraceMs: number;
}

/**
 * The life every signed-in stream socket of the hub shares (`/ws/v1/logs`, `/ws/v1/approvals`):
 * the origin and the credential checked at upgrade (a token in the query allowed), plain-text
 * `ping` answered `{"type":"pong"}`, sockets that say nothing for `idleTimeoutMs` closed, revoked
 * credentials ending their sockets, a grace period at stop. What a stream sends is its owner's.
 */
export class SignedInStreams {
  readonly sockets = new Set<WebSocket>();
  private readonly wss: WebSocketServer;
  private readonly principals = new WeakMap<WebSocket, Principal>();
  private readonly lastHeard = new WeakMap<WebSocket, number>();
  private readonly idleTimer: NodeJS.Timeout;

  constructor(private readonly options: SignedInStreamOptions) {
    this.wss = new WebSocketServer({
      noServer: true,
      maxPayload: options.maxPayloadBytes,
      perMessageDeflate: false,
      handleProtocols: (protocols, request) => options.selectProtocol(protocols, request),
    });
    this.idleTimer = setInterval(() => this.closeIdle(), Math.max(50, Math.min(5_000, Math.floor(options.idleTimeoutMs / 4))));
    this.idleTimer.unref();
  }

  matches(pathname: string): boolean {
    return pathname === this.options.path;
  }

  /** Checks the origin and the credential, then hands `opened` a signed-in socket already listened to (ping, close). */
  async upgrade(request: IncomingMessage, socket: Duplex, head: Buffer, opened: (ws: WebSocket) => void): Promise<void> {
    const origin = request.headers.origin;
    if (origin !== undefined && !this.options.allowedOrigins.has(origin)) {
      socket.end('HTTP/1.1 403 Forbidden\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
      return;
    }
    const auth = await this.options.authenticate(request, { queryToken: true, role: this.options.role }).catch(() => null);
    this.wss.handleUpgrade(request, socket, head, (ws) => {
      if (!auth) return ws.close(1011, 'internal error'); // the credential check itself failed
      if (!auth.ok) return ws.close(auth.closeCode, auth.reason);
      this.principals.set(ws, auth.principal);
      this.lastHeard.set(ws, Date.now());
      this.sockets.add(ws);
      // Listeners first: ws drops client frames that arrive while nobody listens.
      ws.on('message', (data, isBinary) => {
        this.lastHeard.set(ws, Date.now());
        if (!isBinary && data.toString() === 'ping') ws.send('{"type":"pong"}');
      });
      ws.on('close', () => this.sockets.delete(ws));
      ws.on('error', () => undefined);
      opened(ws);
    });
  }

  /** A credential change (from any process): a role change is `roleChanged`'s to handle; anything else ends the socket with 4001. */
  revoke(change: { userId: string; reason: PrincipalChangeReason; apiKeyId?: string }, roleChanged: (ws: WebSocket) => void): void {
    for (const ws of this.sockets) {
      const principal = this.principals.get(ws);
      if (!principal || !changeEnds(change, principal)) continue;
      if (change.reason === 'role_changed') roleChanged(ws);
      else ws.close(4001, 'credentials revoked');
    }
  }

  stop(): void {
    clearInterval(this.idleTimer);
    for (const ws of this.sockets) {
      ws.close(1001, 'server shutting down');
      setTimeout(() => ws.terminate(), this.options.closeGraceMs).unref(); // a client that never answers the close
    }
  }

  private closeIdle(): void {
    const cutoff = Date.now() - this.options.idleTimeoutMs;
    for (const ws of this.sockets) if ((this.lastHeard.get(ws) ?? 0) < cutoff) ws.close(1000, 'idle timeout');
  }
}
