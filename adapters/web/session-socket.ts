import type { Logger } from 'pino';
import { WebSocket, type RawData } from 'ws';
import type { Hub } from '../../src/core/hub';
import type { ChannelTelemetry } from '../../src/core/telemetry';
import type { SessionConnection } from './session-connection';

export interface ConnectionLimits {
  /** Bytes queued for a client before it counts as too slow and is closed. */
  maxBufferedBytes: number;
}

/** What every connection of an adapter shares (one object, not four fields per connection). */
export interface ConnectionContext {
  readonly hub: Hub;
  readonly logger: Logger;
  readonly limits: ConnectionLimits;
  readonly telemetry: ChannelTelemetry;
  /** Told once a connection's socket closed, from either side. */
  closed(connection: SessionConnection): void;
}

/**
 * The web channel's WebSocket: ws builds this class (the server's `WebSocket` option), so the
 * socket points at its connection and one listener function serves every socket (an inline listener
 * would keep a closure and its context per socket).
 */
export class SessionSocket extends WebSocket {
  connection: SessionConnection | null = null;
}

/** Points the socket at its connection and adds the shared message and close listeners. */
export function listenToSocket(socket: SessionSocket, connection: SessionConnection): void {
  socket.connection = connection;
  socket.on('message', onSocketMessage);
  socket.on('close', onSocketClose);
}

function onSocketMessage(this: WebSocket, data: RawData, isBinary: boolean): void {
  (this as SessionSocket).connection?.receive(isBinary ? null : data.toString());
}

function onSocketClose(this: WebSocket): void {
  const connection = (this as SessionSocket).connection;
  if (!connection) return;
  connection.dispose();
  connection.context.closed(connection);
}
