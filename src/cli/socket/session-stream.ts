import type { ClientFrame } from '../../protocol/client-frames';
import type { SessionFrame } from '../../protocol/frames';
import type { HubClient } from '../api-client';
import type { CliError } from '../exit-codes';
import { HubSocket, type HubSocketListener } from './hub-socket';

export interface SessionStreamListener {
  onFrame(frame: SessionFrame): void;
  onReady?: HubSocketListener['onReady'];
  onRetry?: HubSocketListener['onRetry'];
  onStop(error: CliError): void;
}

/**
 * `/ws/v1/sessions/{id}`: frames in `seq` order, each once. The first connection asks for no replay
 * (what happened before is history); every reconnection passes `last_seq`, so the hub replays what
 * was missed while it keeps it.
 */
export class SessionStream {
  /** The highest `seq` received; null before the first frame. */
  lastSeq: number | null = null;
  private readonly socket: HubSocket;

  constructor(
    client: HubClient,
    readonly sessionId: string,
    private readonly listener: SessionStreamListener,
  ) {
    const base = client.socketUrl(`/ws/v1/sessions/${sessionId}`);
    this.socket = new HubSocket({
      client,
      url: () => (this.lastSeq === null ? base : `${base}?last_seq=${this.lastSeq}`),
      keepaliveText: JSON.stringify({ type: 'ping', payload: {} }),
      readyOn: 'first-message',
      wording: {
        forbidden: `session ${sessionId} belongs to another user`,
        notFound: `session ${sessionId} was not found, or it is archived (\`switchboard sessions restore ${sessionId}\`)`,
      },
      listener: {
        onMessage: (text) => this.onMessage(text),
        onReady: (info) => listener.onReady?.(info),
        onRetry: (info) => listener.onRetry?.(info),
        onStop: (error) => listener.onStop(error),
      },
    });
  }

  get isOpen(): boolean {
    return this.socket.isOpen;
  }

  start(): void {
    this.socket.start();
  }

  /** A client frame (the CLI sends `tool_confirm` and `cancel`; user messages go over REST). */
  send(frame: ClientFrame): boolean {
    return this.socket.send(JSON.stringify(frame));
  }

  close(): void {
    this.socket.close();
  }

  private onMessage(text: string): void {
    let frame: SessionFrame;
    try {
      frame = JSON.parse(text) as SessionFrame;
    } catch {
      return; // not ours to judge: the hub only sends JSON
    }
    if (typeof frame !== 'object' || frame === null || typeof frame.seq !== 'number' || typeof frame.type !== 'string') return;
    // Replay and live frames can overlap around a reconnection: each seq once.
    if (this.lastSeq !== null && frame.seq <= this.lastSeq) return;
    this.lastSeq = frame.seq;
    this.listener.onFrame(frame);
  }
}
