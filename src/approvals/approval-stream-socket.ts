import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { PrincipalChangeReason } from '../core/principal';
import { SignedInStreams, type SignedInStreamOptions } from '../streams/signed-in-streams';

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
  authenticate: SignedInStreamOptions['authenticate'];
  selectProtocol: SignedInStreamOptions['selectProtocol'];
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
  private readonly streams: SignedInStreams;
  private pending: NodeJS.Timeout | null = null;

  constructor(options: ApprovalStreamOptions) {
    this.streams = new SignedInStreams({
      ...options,
      path: APPROVAL_STREAM_PATH,
      maxPayloadBytes: APPROVAL_STREAM_DEFAULTS.maxPayloadBytes,
      closeGraceMs: APPROVAL_STREAM_DEFAULTS.closeGraceMs,
    });
  }

  matches(pathname: string): boolean {
    return this.streams.matches(pathname);
  }

  handleUpgrade(request: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    return this.streams.upgrade(request, socket, head, (ws) => ws.send('{"type":"approvals_ready"}'));
  }

  /** An approval changed somewhere: every socket hears it once per coalescing window. */
  changed(): void {
    if (this.pending || this.streams.sockets.size === 0) return;
    this.pending = setTimeout(() => {
      this.pending = null;
      for (const ws of this.streams.sockets) if (ws.readyState === ws.OPEN) ws.send('{"type":"approvals_changed"}');
    }, APPROVAL_STREAM_DEFAULTS.coalesceMs);
    this.pending.unref();
  }

  /** A credential change: a role change may change what the list holds (told); a revoked one ends the stream. */
  revoke(change: { userId: string; reason: PrincipalChangeReason; apiKeyId?: string }): void {
    this.streams.revoke(change, (ws) => ws.send('{"type":"approvals_changed"}'));
  }

  async stop(): Promise<void> {
    if (this.pending) clearTimeout(this.pending);
    this.streams.stop();
  }
}
