import type { SessionConnection } from './session-connection';

/**
 * The open sockets of each session. Almost always one (a newer one takes over the session), so the
 * map holds the connection itself, and an array only while two overlap: an array per idle socket
 * would cost ~56 bytes of the few hundred a socket is allowed.
 */
export class ConnectionsBySession {
  private readonly map = new Map<string, SessionConnection | SessionConnection[]>();

  of(sessionId: string): readonly SessionConnection[] {
    const held = this.map.get(sessionId);
    return held === undefined ? [] : Array.isArray(held) ? held : [held];
  }

  /** Every connection, as a list of its own (closing one while going through it is safe). */
  all(): SessionConnection[] {
    const all: SessionConnection[] = [];
    for (const held of this.map.values()) {
      if (Array.isArray(held)) all.push(...held);
      else all.push(held);
    }
    return all;
  }

  /** Every connection without a list (closing one is safe: a socket leaves the map on its close event, later). */
  forEach(visit: (connection: SessionConnection) => void): void {
    for (const held of this.map.values()) {
      if (Array.isArray(held)) held.forEach(visit);
      else visit(held);
    }
  }

  add(connection: SessionConnection): void {
    const held = this.map.get(connection.sessionId);
    if (held === undefined) this.map.set(connection.sessionId, connection);
    else this.map.set(connection.sessionId, Array.isArray(held) ? [...held, connection] : [held, connection]);
  }

  delete(connection: SessionConnection): void {
    const held = this.map.get(connection.sessionId);
    if (held === connection) {
      this.map.delete(connection.sessionId);
    } else if (Array.isArray(held)) {
      const rest = held.filter((other) => other !== connection);
      if (rest.length === 0) this.map.delete(connection.sessionId);
      else this.map.set(connection.sessionId, rest.length === 1 ? rest[0]! : rest);
    }
  }

  clear(): void {
    this.map.clear();
  }
}
