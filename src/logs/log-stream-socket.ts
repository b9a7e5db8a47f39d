import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { WebSocket } from 'ws';
import type { PrincipalChangeReason } from '../core/principal';
import { SignedInStreams, type SignedInStreamOptions } from '../streams/signed-in-streams';
import { STREAM_LEVELS, type LogHub, type LogLine, type StreamLevel } from './log-hub';

export const LOG_STREAM_PATH = '/ws/v1/logs';

export interface LogStreamOptions {
  hub: LogHub;
  authenticate: SignedInStreamOptions['authenticate'];
  selectProtocol: SignedInStreamOptions['selectProtocol'];
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
  private readonly streams: SignedInStreams;

  constructor(private readonly options: LogStreamOptions) {
    this.streams = new SignedInStreams({
      ...options,
      path: LOG_STREAM_PATH,
      role: 'admin',
      maxPayloadBytes: LOG_STREAM_DEFAULTS.maxPayloadBytes,
      closeGraceMs: LOG_STREAM_DEFAULTS.closeGraceMs,
    });
  }

  matches(pathname: string): boolean {
    return this.streams.matches(pathname);
  }

  handleUpgrade(request: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    const level = (new URL(request.url ?? '/', 'http://localhost').searchParams.get('level') ?? 'INFO').toUpperCase();
    return this.streams.upgrade(request, socket, head, (ws) => {
      if (!(STREAM_LEVELS as readonly string[]).includes(level)) return ws.close(1008, 'level must be DEBUG, INFO, WARNING or ERROR');
      void this.stream(ws, level as StreamLevel);
    });
  }

  async stop(): Promise<void> {
    this.streams.stop();
  }

  /**
   * Closes the streams a credential change ends (from any process): a demoted admin's with 4003,
   * a deactivated, deleted or logged-out one's with 4001.
   */
  revoke(change: { userId: string; reason: PrincipalChangeReason; apiKeyId?: string }): void {
    this.streams.revoke(change, (ws) => ws.close(4003, 'no longer an admin'));
  }

  private async stream(ws: WebSocket, minimum: StreamLevel): Promise<void> {
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
    // The subscription may take a round trip to Redis: a socket closed meanwhile stops it at once.
    let stopListening: (() => void) | null = null;
    let closed = false;
    ws.on('close', () => {
      closed = true;
      stopListening?.();
    });
    const stop = await this.options.hub.listen(send);
    if (closed) stop();
    else stopListening = stop;
  }
}
