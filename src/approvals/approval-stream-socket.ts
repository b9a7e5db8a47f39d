import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import type { SocketAuthResult } from '../core/hub';
import { changeEnds, type Principal, type PrincipalChangeReason } from '../core/principal';

export const APPROVAL_STREAM_PATH = '/ws/v1/approvals';

/** Limits of the approvals stream (docs/guides/approvals.md). */
export const APPROVAL_STREAM_DEFAULTS = {
  /** Client frames are `ping` only. */
  maxPayloadBytes: 256,
  /** Changes within this window go out as one notice (a quorum's clicks, a burst of new approvals). */
  coalesceMs: 50,
  closeGraceMs: 1_000,
} as const;

export interface ApprovalStreamOptions {
  authenticate(request: IncomingMessage, options: { queryToken: boolean }): Promise<SocketAuthResult>;
  selectProtocol(protocols: Set<string>, request: IncomingMessage): string | false;
  allowedOrigins: ReadonlySet<string>;
  idleTimeoutMs: number;
}

/**
 * `/ws/v1/approvals`: the Web UI's Approvals page stays live (issue 30). A doorbell, not a feed: any
 * approval opened, counted, decided or escalated on any process (`approval_changed` on the control
 * bus) sends `{"type":"approvals_changed"}` to every signed-in socket, and the page reads
 * `GET /approvals` again, which filters by who may decide. So the socket carries no approval's
 * content and needs no rule of its own about who sees what. Plain-text `ping` gets `{"type":"pong"}`.
 */
export class ApprovalStreamSocket {
  private readonly wss: WebSocketServer;
  private readonly sockets = new Set<WebSocket>();
  private readonly principals = new WeakMap<WebSocket, Principal>();
  private readonly lastHeard = new WeakMap<WebSocket, number>();
  private readonly idleTimer: NodeJS.Timeout;
  private pending: NodeJS.Timeout | null = null;

  constructor(private readonly options: ApprovalStreamOptions) {
    this.wss = new WebSocketServer({
      noServer: true,
      maxPayload: APPROVAL_STREAM_DEFAULTS.maxPayloadBytes,
      perMessageDeflate: false,
      handleProtocols: (protocols, request) => options.selectProtocol(protocols, request),
    });
    this.idleTimer = setInterval(() => this.closeIdle(), Math.max(50, Math.min(5_000, Math.floor(options.idleTimeoutMs / 4))));
    this.idleTimer.unref();
  }

  matches(pathname: string): boolean {
    return pathname === APPROVAL_STREAM_PATH;
  }

  async handleUpgrade(request: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    const origin = request.headers.origin;
    if (origin !== undefined && !this.options.allowedOrigins.has(origin)) {
      socket.end('HTTP/1.1 403 Forbidden\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
      return;
    }
    const auth = await this.options.authenticate(request, { queryToken: true }).catch(() => null);
    this.wss.handleUpgrade(request, socket, head, (ws) => {
      if (!auth) return ws.close(1011, 'internal error'); // the credential check itself failed
      if (!auth.ok) return ws.close(auth.closeCode, auth.reason);
      this.principals.set(ws, auth.principal);
      this.lastHeard.set(ws, Date.now());
      this.sockets.add(ws);
      ws.on('message', (data, isBinary) => {
        this.lastHeard.set(ws, Date.now());
        if (!isBinary && data.toString() === 'ping') ws.send('{"type":"pong"}');
      });
      ws.on('close', () => this.sockets.delete(ws));
      ws.on('error', () => undefined);
      ws.send('{"type":"approvals_ready"}');
    });
  }

  /** An approval changed somewhere: every socket hears it once per coalescing window. */
  changed(): void {
    if (this.pending || this.sockets.size === 0) return;
    this.pending = setTimeout(() => {
      this.pending = null;
      for (const ws of this.sockets) if (ws.readyState === ws.OPEN) ws.send('{"type":"approvals_changed"}');
    }, APPROVAL_STREAM_DEFAULTS.coalesceMs);
    this.pending.unref();
  }

  /** A credential change: a role change may change what the list holds (told); a revoked one ends the stream. */
  revoke(change: { userId: string; reason: PrincipalChangeReason; apiKeyId?: string }): void {
    for (const ws of this.sockets) {
      const principal = this.principals.get(ws);
      if (!principal || !changeEnds(change, principal)) continue;
      if (change.reason === 'role_changed') ws.send('{"type":"approvals_changed"}');
      else ws.close(4001, 'credentials revoked');
    }
  }

  async stop(): Promise<void> {
    clearInterval(this.idleTimer);
    if (this.pending) clearTimeout(this.pending);
    for (const ws of this.sockets) {
      ws.close(1001, 'server shutting down');
      setTimeout(() => ws.terminate(), APPROVAL_STREAM_DEFAULTS.closeGraceMs).unref();
    }
  }

  private closeIdle(): void {
    const cutoff = Date.now() - this.options.idleTimeoutMs;
    for (const ws of this.sockets) if ((this.lastHeard.get(ws) ?? 0) < cutoff) ws.close(1000, 'idle timeout');
  }
}
