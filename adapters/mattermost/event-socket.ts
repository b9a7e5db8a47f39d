import type { Logger } from 'pino';
import WebSocket from 'ws';

/** Named limits of the event socket (adapters/README.md: every limit a named default). */
export const EVENT_SOCKET_LIMITS = {
  /** The challenge and `hello` must arrive this soon after connecting, or the attempt failed. */
  helloTimeoutMs: 10_000,
  /** A `ping` action goes out this often; one still unanswered at the next is a dead socket (closed, reconnected). */
  pingIntervalMs: 30_000,
  /** Largest event frame read (a post is at most 16,383 characters plus its props). */
  maxPayloadBytes: 4 * 1024 * 1024,
} as const;

/** One event of Mattermost's stream: `posted`, `post_edited`, … with its `data` (posts as JSON strings). */
export interface MattermostEvent {
  event: string;
  data: Record<string, unknown>;
  broadcast?: Record<string, unknown>;
  seq: number;
}

export interface EventSocketOptions {
  /** The server's base URL (http or https): the socket is `<ws|wss>://…/api/v4/websocket`. */
  url: string;
  token: string;
  logger: Logger;
  reconnectMinMs: number;
  reconnectMaxMs: number;
  onEvent(event: MattermostEvent): void;
  /** A reconnected socket said `hello`: events may have been missed meanwhile (the channel catches up over REST). */
  onReconnected(missedSince: number): void;
  /** Every reconnect attempt since the socket dropped failed; `attempts` so far. */
  onReconnectFailed(reason: string, attempts: number): void;
}

/** The WebSocket URL of a Mattermost server's base URL. */
export function websocketUrl(base: string): string {
  const url = new URL(base.replace(/\/+$/, '') + '/api/v4/websocket');
  url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
  return url.toString();
}

/**
 * Mattermost's event stream over `ws`, driven here rather than through `@mattermost/client`'s
 * WebSocketClient (which needs the browser globals WebSocket and CloseEvent, logs to the console and
 * keeps its own fixed backoff): connect, `authentication_challenge` with the bot's token, `hello`
 * with the connection id, events checked by `seq` (a gap closes the socket: the reconnect catches up),
 * `ping` actions, `user_typing`, and a reconnect with backoff (doubled per failure, capped) after
 * the socket drops, until `close()`.
 */
export class EventSocket {
  private socket: WebSocket | null = null;
  private actionSeq = 1;
  private expectedSeq = 0;
  private closed = false;
  private failures = 0;
  private reconnectTimer: NodeJS.Timeout | null = null;
  private pingTimer: NodeJS.Timeout | null = null;
  private awaitingPong = false;
  /** When the last event (or hello) arrived: the catch-up after a drop asks for posts since then. */
  private lastHeardAt = 0;

  constructor(private readonly options: EventSocketOptions) {}

  /** Connects and authenticates; resolves at `hello`, rejects with the reason (a refused token, an unreachable server). */
  async open(): Promise<void> {
    this.closed = false;
    await this.connect();
  }

  /** When the last event (or hello) arrived, 0 before the first: where a later catch-up starts. */
  get lastHeard(): number {
    return this.lastHeardAt;
  }

  /** Whether the socket is authenticated and open now. */
  get connected(): boolean {
    return this.socket !== null && this.socket.readyState === WebSocket.OPEN && this.expectedSeq > 0;
  }

  /** "The bot is typing" in a channel (or a thread), while the socket is open; lost silently otherwise. */
  typing(channelId: string, parentId: string): void {
    this.action('user_typing', { channel_id: channelId, parent_id: parentId });
  }

  /** Closes for good: no reconnect. */
  close(): void {
    this.closed = true;
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    this.reconnectTimer = null;
    this.stopPings();
    this.socket?.terminate();
    this.socket = null;
  }

  private connect(): Promise<void> {
    const socket = new WebSocket(`${websocketUrl(this.options.url)}?connection_id=&sequence_number=0`, { maxPayload: EVENT_SOCKET_LIMITS.maxPayloadBytes });
    this.socket = socket;
    this.expectedSeq = 0;
    this.actionSeq = 1; // the challenge is the connection's first action: its reply is seq_reply 1
    return new Promise<void>((resolve, reject) => {
      let settled = false;
      const settle = (error: Error | null) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        if (error) {
          socket.removeAllListeners('close');
          socket.terminate();
          if (this.socket === socket) this.socket = null;
          reject(error);
        } else resolve();
      };
      const timer = setTimeout(() => settle(new Error('Mattermost sent no hello in time')), EVENT_SOCKET_LIMITS.helloTimeoutMs);
      socket.on('open', () => this.send(socket, 'authentication_challenge', { token: this.options.token }));
      socket.on('error', (error) => settle(new Error(`event socket: ${error.message}`)));
      socket.on('unexpected-response', (_request, response) => settle(new Error(`event socket refused: HTTP ${response.statusCode}`)));
      socket.on('message', (raw) => {
        const frame = parseFrame(String(raw));
        if (!frame) return;
        if (!isEvent(frame)) {
          if (frame.status === 'FAIL' && frame.seq_reply === 1) settle(new Error('Mattermost refused the bot token on the event socket'));
          if (frame.seq_reply !== undefined) this.awaitingPong = false;
          return;
        }
        if (frame.event === 'hello') settle(null);
        this.onEvent(socket, frame);
      });
      socket.on('close', () => {
        settle(new Error('the event socket closed before hello'));
        if (this.socket === socket) this.dropped();
      });
    });
  }

  private onEvent(socket: WebSocket, event: MattermostEvent): void {
    if (event.seq !== this.expectedSeq) {
      // A missed event: start over (the catch-up after the reconnect fetches what was missed).
      this.options.logger.warn({ expected: this.expectedSeq, got: event.seq }, 'mattermost: an event was missed; reconnecting');
      socket.terminate();
      return;
    }
    this.expectedSeq = event.seq + 1;
    if (event.event === 'hello') {
      const missedSince = this.lastHeardAt;
      this.lastHeardAt = Date.now();
      this.startPings(socket);
      if (this.failures > 0 || missedSince > 0) {
        this.failures = 0;
        if (missedSince > 0) this.options.onReconnected(missedSince);
      }
      return;
    }
    this.lastHeardAt = Date.now();
    this.options.onEvent(event);
  }

  /** The socket dropped (not by close()): reconnect after the backoff. */
  private dropped(): void {
    this.stopPings();
    this.socket = null;
    if (this.closed) return;
    const wait = Math.min(this.options.reconnectMinMs * 2 ** this.failures, this.options.reconnectMaxMs);
    this.options.logger.warn({ retry_in_ms: wait }, 'mattermost: the event socket dropped; reconnecting');
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = null;
      if (this.closed) return;
      this.connect().catch((error: unknown) => {
        this.failures += 1;
        const reason = error instanceof Error ? error.message : String(error);
        this.options.onReconnectFailed(reason, this.failures);
        if (!this.closed && !this.reconnectTimer && this.socket === null) this.dropped();
      });
    }, wait);
    this.reconnectTimer.unref();
  }

  private startPings(socket: WebSocket): void {
    this.stopPings();
    this.awaitingPong = false;
    this.pingTimer = setInterval(() => {
      if (this.awaitingPong) return socket.terminate();
      this.awaitingPong = true;
      this.send(socket, 'ping', {});
    }, EVENT_SOCKET_LIMITS.pingIntervalMs);
    this.pingTimer.unref();
  }

  private stopPings(): void {
    if (this.pingTimer) clearInterval(this.pingTimer);
    this.pingTimer = null;
  }

  private action(action: string, data: Record<string, unknown>): void {
    if (this.socket && this.connected) this.send(this.socket, action, data);
  }

  private send(socket: WebSocket, action: string, data: Record<string, unknown>): void {
    if (socket.readyState !== WebSocket.OPEN) return;
    socket.send(JSON.stringify({ seq: this.actionSeq++, action, data }));
  }
}

type Frame = MattermostEvent | { seq_reply?: number; status?: string; event?: undefined };

function isEvent(frame: Frame): frame is MattermostEvent {
  return typeof frame.event === 'string' && typeof (frame as MattermostEvent).seq === 'number';
}

function parseFrame(raw: string): Frame | null {
  try {
    const frame = JSON.parse(raw) as Frame;
    return frame && typeof frame === 'object' ? frame : null;
  } catch {
    return null;
  }
}
