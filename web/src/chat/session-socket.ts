import { socketOrigin } from '../api/origin';
import type { ClientFrame } from '../../../src/protocol/client-frames';
import { CLOSE_CODES, isTakenOverClose } from '../../../src/protocol/close-codes';
import type { SessionFrame } from '../../../src/protocol/frames';
import { reconnectDelay } from './reconnect-policy';

export type SocketStatus =
  | { kind: 'connecting' }
  | { kind: 'open' }
  | { kind: 'reconnecting'; attempt: number; inMs: number }
  /** Another tab or window opened this session; the hub closed this one (1001). */
  | { kind: 'replaced' }
  /** Gave up after the policy's consecutive failures. */
  | { kind: 'failed'; message: string }
  /** Refused for good: signed out (4001), forbidden (4003), not found or archived (4004). */
  | { kind: 'ended'; code: number; message: string }
  | { kind: 'closed' };

export interface SessionSocketOptions {
  sessionId: string;
  /** The access token to present (the `bearer` subprotocol); null when signed out. */
  token(): Promise<string | null>;
  /** Refreshes a token the hub refused (4001); true when there is a new one. */
  refresh(staleToken: string): Promise<boolean>;
  /** `replayed`: the frame is older than this connection (from the hub's replay buffer). */
  onFrame(frame: SessionFrame, replayed: boolean): void;
  onStatus(status: SocketStatus): void;
  /** After a reconnect (not the first connect): the caller fetches history to fill any gap. */
  onReconnected?(): void;
  /** For tests: the WebSocket constructor. */
  createSocket?: (url: string, protocols: string[]) => WebSocket;
}

/** The spec's client `ping` interval; the hub drops sockets silent for 90 s. */
export const PING_INTERVAL_MS = 30_000;
const REPLAY_CLOCK_SLACK_MS = 1_000;

/** What the page says when the hub refuses the session for good. */
const REFUSALS: Record<number, string> = {
  [CLOSE_CODES.UNAUTHORIZED]: 'Your sign-in has ended. Sign in again.',
  [CLOSE_CODES.FORBIDDEN]: 'You may not open this session.',
  [CLOSE_CODES.NOT_FOUND]: 'This session does not exist or is archived.',
};

/**
 * One session's WebSocket with the spec's client behaviour: browser auth by the `bearer`
 * subprotocol, a ping every 30 s, replay from `last_seq` on reconnect (frames already seen are
 * dropped), the reconnect policy of reconnect-policy.ts, and no reconnect when another tab took the
 * session over (the `session_taken_over` notice, then close 1001 "taken over by another connection";
 * older hubs said "replaced") or the hub refused it.
 */
export class SessionSocket {
  /** The highest `seq` seen; -1 on page load (spec, Reconnection and replay). */
  lastSeq = -1;
  private socket: WebSocket | null = null;
  private failures = 0;
  private openedBefore = false;
  private authRetried = false;
  private stopped = false;
  private pingTimer: ReturnType<typeof setInterval> | undefined;
  private retryTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(private readonly options: SessionSocketOptions) {}

  start(): void {
    this.stopped = false;
    void this.connect();
  }

  /** Try again now (after `failed` or `replaced`): the failure count starts over. */
  reconnectNow(): void {
    clearTimeout(this.retryTimer);
    this.failures = 0;
    this.stopped = false;
    void this.connect();
  }

  /** Sends a client frame (src/protocol/client-frames.ts); false when the socket is not open. */
  send(frame: ClientFrame): boolean {
    if (this.socket?.readyState !== WebSocket.OPEN) return false;
    this.socket.send(JSON.stringify(frame));
    return true;
  }

  get isOpen(): boolean {
    return this.socket?.readyState === WebSocket.OPEN;
  }

  close(): void {
    this.stopped = true;
    clearTimeout(this.retryTimer);
    clearInterval(this.pingTimer);
    const socket = this.socket;
    this.socket = null;
    if (socket && socket.readyState <= WebSocket.OPEN) socket.close(1000, 'closed by the client');
    this.options.onStatus({ kind: 'closed' });
  }

  private async connect(): Promise<void> {
    if (this.stopped) return;
    this.options.onStatus({ kind: 'connecting' });
    const token = await this.options.token();
    if (this.stopped) return;
    if (!token) {
      this.options.onStatus({ kind: 'ended', code: CLOSE_CODES.UNAUTHORIZED, message: REFUSALS[CLOSE_CODES.UNAUTHORIZED]! });
      return;
    }
    const url = `${socketOrigin()}/ws/v1/sessions/${encodeURIComponent(this.options.sessionId)}?last_seq=${this.lastSeq}`;
    const socket = (this.options.createSocket ?? ((address, protocols) => new WebSocket(address, protocols)))(url, ['bearer', token]);
    this.socket = socket;
    let opened = false;
    let takenOver = false;
    let openedAt = Number.POSITIVE_INFINITY;
    socket.onopen = () => {
      opened = true;
      openedAt = Date.now();
      this.failures = 0;
      this.authRetried = false;
      this.options.onStatus({ kind: 'open' });
      clearInterval(this.pingTimer);
      this.pingTimer = setInterval(() => this.send({ type: 'ping', payload: {} }), PING_INTERVAL_MS);
      if (this.openedBefore) this.options.onReconnected?.();
      this.openedBefore = true;
    };
    socket.onmessage = (event) => {
      let frame: SessionFrame | { type: 'session_taken_over' };
      try {
        frame = JSON.parse(String(event.data)) as SessionFrame | { type: 'session_taken_over' };
      } catch {
        return; // the hub sends only JSON; ignore anything else
      }
      // Outside the session's numbered frames: the close that follows must not be retried.
      if (frame.type === 'session_taken_over') {
        takenOver = true;
        return;
      }
      if (typeof frame.seq === 'number') {
        if (frame.seq <= this.lastSeq) return; // already seen (replay overlap)
        this.lastSeq = frame.seq;
      }
      // A second of slack for clock skew between the hub and this browser.
      this.options.onFrame(frame, Date.parse(frame.ts) < openedAt - REPLAY_CLOCK_SLACK_MS);
    };
    socket.onclose = (event) => {
      if (this.socket !== socket) return; // an older socket we already replaced or closed
      this.socket = null;
      clearInterval(this.pingTimer);
      if (this.stopped) return;
      void this.afterClose(event.code, event.reason, opened, token, takenOver);
    };
  }

  private async afterClose(code: number, reason: string, opened: boolean, token: string, takenOver: boolean): Promise<void> {
    if (takenOver || isTakenOverClose(code, reason)) {
      this.options.onStatus({ kind: 'replaced' });
      return;
    }
    if (code === CLOSE_CODES.UNAUTHORIZED && !this.authRetried) {
      // Most often an access token that expired while connected: refresh once and go straight back.
      this.authRetried = true;
      if (await this.options.refresh(token)) return void this.connect();
    }
    const refusal = REFUSALS[code];
    if (refusal) {
      this.options.onStatus({ kind: 'ended', code, message: refusal });
      return;
    }
    if (opened) this.failures = 0;
    this.failures += 1;
    const delay = reconnectDelay(this.failures);
    if (delay === null) {
      this.options.onStatus({ kind: 'failed', message: `Lost the connection to the hub (${this.failures - 1} attempts failed).` });
      return;
    }
    this.options.onStatus({ kind: 'reconnecting', attempt: this.failures, inMs: delay });
    this.retryTimer = setTimeout(() => void this.connect(), delay);
  }
}
