/**
 * What a channel tells the hub's metrics and traces (docs/observability.md). Every method is cheap
 * (an in-memory counter) and must never throw; a hub without metrics passes NO_CHANNEL_TELEMETRY.
 */
export interface ChannelTelemetry {
  /**
   * A call to the platform's API ended (`chat.postMessage`, `sendMessage`…): its HTTP status (0
   * when no answer came) and how long it took. 429s are counted from the status.
   */
  platformCall(method: string, status: number, seconds: number): void;
  /**
   * The first answer frame of a turn (its first `token`) reached the user: written to the socket,
   * or handed to the platform. `frameTs` is the frame's `ts` (when the worker emitted it).
   */
  answerDelivered(turnId: string, frameTs: string): void;
  /** A socket of the channel opened or closed. */
  socketOpened(): void;
  socketClosed(): void;
  /** Frames written to sockets (a burst of tokens counts each). */
  framesSent(count: number): void;
  /** A client frame arrived (its `type`, or `invalid`). */
  frameReceived(type: string): void;
}

export const NO_CHANNEL_TELEMETRY: ChannelTelemetry = {
  platformCall: () => undefined,
  answerDelivered: () => undefined,
  socketOpened: () => undefined,
  socketClosed: () => undefined,
  framesSent: () => undefined,
  frameReceived: () => undefined,
};
