import WebSocket from 'ws';
import type { HubClient } from '../api-client';
import { CliError } from '../exit-codes';
import { isTakenOverNotice } from '../../protocol/frames';
import { classifyClose, TAKEN_OVER_WHY, type CloseVerdict, type RefusalWording } from './close-codes';
import { RECONNECT_DEFAULTS, reconnectDelayMs, type ReconnectPolicy } from './reconnect-policy';

export const SOCKET_DEFAULTS = {
  /** The spec asks clients to ping every 30 s (the hub drops sockets silent for 90 s). */
  keepaliveMs: 30_000,
  /** Nothing heard for a keepalive interval plus this: the connection is dead (no FIN came). */
  deadAfterSilenceMs: 15_000,
  handshakeTimeoutMs: 10_000,
  /** With `readyOn: 'open'`, how long a new socket must stay open to count (a refusal closes at once). */
  settleMs: 300,
} as const;

export interface HubSocketListener {
  /** A text frame from the hub. */
  onMessage(text: string): void;
  /**
   * The connection is usable (again). `outage`: the hub went away or refused attempts in between
   * (a restart: whatever it kept in memory, such as the replay buffer, may be gone).
   */
  onReady?(info: { reconnected: boolean; outage: boolean }): void;
  /** The connection dropped; attempt `attempt` of the reconnect policy starts in `delayMs`. */
  onRetry?(info: { attempt: number; delayMs: number; why: string }): void;
  /** Closed for good: refused, or the reconnect policy gave up. Not called after `close()`. */
  onStop(error: CliError): void;
}

export interface HubSocketOptions {
  /** The ws:// URL to open, asked again on every attempt (so it can carry `last_seq`). */
  url(): string;
  client: HubClient;
  listener: HubSocketListener;
  /** What a 4003 / 4004 means for what is being opened. */
  wording: RefusalWording;
  /** The text sent every `keepaliveMs` (`{"type":"ping",…}` on sessions, `ping` on the log stream). */
  keepaliveText: string;
  /**
   * When an attempt counts as successful: at the first frame (a session's on-connect state), or
   * shortly after `open` when no refusal closed it (the log stream sends nothing until a line comes).
   */
  readyOn: 'open' | 'first-message';
  policy?: Readonly<ReconnectPolicy>;
  keepaliveMs?: number;
}

/**
 * A WebSocket to the hub that reconnects by the spec's policy and authenticates with the
 * `Authorization` header (an access token, refreshed once when the hub says it expired, or an API key).
 */
export class HubSocket {
  private socket: WebSocket | null = null;
  private stopped = false;
  private everReady = false;
  private ready = false;
  private failures = 0;
  private outage = false;
  private refreshed = false;
  private retryTimer: NodeJS.Timeout | null = null;
  private keepaliveTimer: NodeJS.Timeout | null = null;
  private settleTimer: NodeJS.Timeout | null = null;
  private lastHeardAt = 0;

  constructor(private readonly options: HubSocketOptions) {}

  get isOpen(): boolean {
    return this.ready && this.socket?.readyState === WebSocket.OPEN;
  }

  start(): void {
    void this.attempt();
  }

  /** Sends a text frame; false when not connected (the caller decides whether that matters). */
  send(text: string): boolean {
    if (!this.isOpen) return false;
    this.socket!.send(text);
    return true;
  }

  /** Closes for good (1000), without reconnecting or calling `onStop`. */
  close(): void {
    this.stopped = true;
    this.clearTimers();
    const socket = this.socket;
    this.socket = null;
    if (!socket) return;
    if (socket.readyState === WebSocket.CONNECTING) socket.terminate();
    else if (socket.readyState === WebSocket.OPEN) {
      socket.close(1000, 'client done');
      setTimeout(() => socket.terminate(), 1_000).unref();
    }
  }

  private async attempt(): Promise<void> {
    if (this.stopped) return;
    let token: string;
    try {
      token = await this.options.client.socketToken();
    } catch (error) {
      return this.stop(error instanceof CliError ? error : new CliError(String(error)));
    }
    if (this.stopped) return;
    const url = this.options.url();
    const socket = new WebSocket(url, {
      headers: { authorization: `Bearer ${token}` },
      handshakeTimeout: SOCKET_DEFAULTS.handshakeTimeoutMs,
      perMessageDeflate: false,
    });
    this.socket = socket;
    this.ready = false;
    let failure: string | null = null;
    let httpStatus: number | null = null;
    let takenOver = false;
    socket.on('open', () => {
      this.lastHeardAt = Date.now();
      this.startKeepalive(socket);
      if (this.options.readyOn === 'open') {
        this.settleTimer = setTimeout(() => {
          if (socket === this.socket && !this.ready) this.markReady();
        }, SOCKET_DEFAULTS.settleMs);
      }
    });
    socket.on('message', (data, isBinary) => {
      if (socket !== this.socket) return;
      this.lastHeardAt = Date.now();
      if (!this.ready) this.markReady();
      if (isBinary) return;
      const text = data.toString();
      // The hub says another client took the session over, then closes: never reconnect after it.
      if (isTakenOverNotice(text)) takenOver = true;
      else this.options.listener.onMessage(text);
    });
    socket.on('error', (error: Error & { code?: string }) => {
      const status = /Unexpected server response: (\d+)/.exec(error.message);
      if (status) httpStatus = Number(status[1]);
      failure = error.code ?? error.message;
    });
    socket.on('close', (code, reasonBuffer) => {
      if (socket !== this.socket || this.stopped) return;
      this.clearTimers();
      const reason = reasonBuffer.toString();
      const wasReady = this.ready;
      this.ready = false;
      this.socket = null;
      const verdict: CloseVerdict = takenOver ? { kind: 'stop', why: TAKEN_OVER_WHY } : this.verdict(code, reason, failure, httpStatus, wasReady);
      void this.afterClose(verdict, wasReady);
    });
  }

  private verdict(code: number, reason: string, failure: string | null, httpStatus: number | null, wasReady: boolean): CloseVerdict {
    const url = this.options.url().replace(/\?.*$/, '');
    if (httpStatus === 404) return { kind: 'stop', why: `the hub has no WebSocket endpoint at ${url} (check --url)` };
    if (httpStatus !== null)
      return httpStatus === 429 || httpStatus >= 500
        ? { kind: 'retry', why: `HTTP ${httpStatus}` }
        : { kind: 'stop', why: `the hub refused the connection (HTTP ${httpStatus})` };
    // Never connected at all, and the hub cannot be reached: a wrong --url, not a restart.
    if (failure !== null && !this.everReady) return { kind: 'stop', why: `cannot reach the hub (${failure})` };
    if (failure !== null && !wasReady) return { kind: 'retry', why: failure };
    return classifyClose(code, reason, this.options.wording);
  }

  private async afterClose(verdict: CloseVerdict, wasReady: boolean): Promise<void> {
    if (this.stopped) return;
    if (verdict.kind === 'stop') return this.stop(new CliError(`Connection to ${this.options.client.hubUrl} ended: ${verdict.why}.`));
    if (verdict.kind === 'refresh') {
      if (this.refreshed || !this.options.client.canRefresh)
        return this.stop(new CliError(`Connection to ${this.options.client.hubUrl} ended: the credential expired.`));
      this.refreshed = true;
      try {
        await this.options.client.refreshToken();
      } catch (error) {
        return this.stop(error instanceof CliError ? error : new CliError(String(error)));
      }
      return void this.attempt();
    }
    // A drop of a working connection is not a failure yet; a failed attempt is.
    if (!wasReady) this.failures += 1;
    const attempt = this.failures + 1;
    if (this.failures >= (this.options.policy ?? RECONNECT_DEFAULTS).maxFailures) {
      return this.stop(new CliError(`Gave up reconnecting to ${this.options.client.hubUrl} after ${this.failures} failed attempts (last: ${verdict.why}).`));
    }
    if (!wasReady || /going away|shutting down/.test(verdict.why)) this.outage = true;
    const delayMs = reconnectDelayMs(attempt, this.options.policy);
    this.options.listener.onRetry?.({ attempt, delayMs, why: verdict.why });
    this.retryTimer = setTimeout(() => void this.attempt(), delayMs);
  }

  private markReady(): void {
    this.ready = true;
    const reconnected = this.everReady;
    const outage = this.outage;
    this.everReady = true;
    this.failures = 0;
    this.outage = false;
    this.refreshed = false;
    this.options.listener.onReady?.({ reconnected, outage });
  }

  private startKeepalive(socket: WebSocket): void {
    const interval = this.options.keepaliveMs ?? SOCKET_DEFAULTS.keepaliveMs;
    this.keepaliveTimer = setInterval(() => {
      if (Date.now() - this.lastHeardAt > interval + SOCKET_DEFAULTS.deadAfterSilenceMs) {
        socket.terminate(); // no answer to the last ping: the connection is dead; 'close' reconnects
        return;
      }
      if (socket.readyState === WebSocket.OPEN) socket.send(this.options.keepaliveText);
    }, interval);
    this.keepaliveTimer.unref();
  }

  private stop(error: CliError): void {
    if (this.stopped) return;
    this.stopped = true;
    this.clearTimers();
    this.socket?.terminate();
    this.socket = null;
    this.options.listener.onStop(error);
  }

  private clearTimers(): void {
    if (this.retryTimer) clearTimeout(this.retryTimer);
    if (this.keepaliveTimer) clearInterval(this.keepaliveTimer);
    if (this.settleTimer) clearTimeout(this.settleTimer);
    this.retryTimer = null;
    this.keepaliveTimer = null;
    this.settleTimer = null;
  }
}
