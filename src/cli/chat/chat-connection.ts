import type { AgentState, SessionFrame, TurnMode } from '../../protocol/frames';
import type { HubClient } from '../api-client';
import { CliError } from '../exit-codes';
import type { MessageView } from '../../protocol/payloads';
import type { ConfirmAction } from '../../protocol/confirm-actions';
import { SessionStream } from '../socket/session-stream';

export interface ChatConnectionListener {
  /** Every frame after the first on-connect state. */
  onFrame(frame: SessionFrame): void;
  onReady?(info: { reconnected: boolean; outage: boolean }): void;
  onRetry?(info: { attempt: number; delayMs: number; why: string }): void;
  /** The connection is gone for good (refused, or the reconnect policy gave up). */
  onStop(error: CliError): void;
}

/**
 * One chat: the session's socket for everything the hub streams, and the REST messages endpoint to
 * send (it answers with the stored user message, whose id is the turn's id, used to find the reply
 * in the history after an outage, and it lets every message name its workflow).
 */
export class ChatConnection {
  private readonly stream: SessionStream;
  private opened: { resolve: (state: AgentState) => void; reject: (error: CliError) => void } | null = null;

  constructor(
    private readonly client: HubClient,
    readonly sessionId: string,
    listener: ChatConnectionListener,
  ) {
    this.stream = new SessionStream(client, sessionId, {
      onFrame: (frame) => {
        if (this.opened && frame.type === 'agent_state') {
          const { resolve } = this.opened;
          this.opened = null;
          return resolve(frame.payload.state);
        }
        listener.onFrame(frame);
      },
      onReady: (info) => {
        if (info.reconnected) listener.onReady?.(info);
      },
      onRetry: (info) => listener.onRetry?.(info),
      onStop: (error) => {
        if (this.opened) {
          const { reject } = this.opened;
          this.opened = null;
          return reject(error);
        }
        listener.onStop(error);
      },
    });
  }

  get isOpen(): boolean {
    return this.stream.isOpen;
  }

  /** Connects; resolves with the session's current state (the hub's on-connect `agent_state`). */
  open(): Promise<AgentState> {
    return new Promise((resolve, reject) => {
      this.opened = { resolve, reject };
      this.stream.start();
    });
  }

  /** Sends a user message; the turn streams on the socket. */
  send(text: string, mode: TurnMode, workflow: string | null): Promise<MessageView> {
    return this.client.post<MessageView>(`/sessions/${this.sessionId}/messages`, { text, mode, metadata: workflow ? { workflow } : {} });
  }

  /** Answers a confirmation; false when the socket is down (the hub asks again once it is back). */
  confirm(confirmationId: string, action: ConfirmAction): boolean {
    return this.stream.send({ type: 'tool_confirm', payload: { confirmation_id: confirmationId, action } });
  }

  /** Cancels the running turn: the `cancel` frame, or the REST twin while the socket is down. */
  async cancel(): Promise<void> {
    if (this.stream.send({ type: 'cancel', payload: {} })) return;
    try {
      await this.client.post(`/sessions/${this.sessionId}/cancel`);
    } catch (error) {
      if (!(error instanceof CliError)) throw error;
      // Nothing running (409) or the hub is away: the turn follower notices either way.
    }
  }

  close(): void {
    this.stream.close();
  }
}
