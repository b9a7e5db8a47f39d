import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';

/** A WebSocket endpoint: claims upgrade requests for its path and handles them. */
export interface UpgradeRoute {
  matches(pathname: string): boolean;
  handle(request: IncomingMessage, socket: Duplex, head: Buffer): void | Promise<void>;
}

/** Answers a raw HTTP error on a socket that has not been upgraded, then closes it. */
export function refuseUpgrade(socket: Duplex, status: number, reason: string, headers: Record<string, string> = {}): void {
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const lines = [
    `HTTP/1.1 ${status} ${reason}`,
    'Connection: close',
    'Content-Length: 0',
    ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
  ];
  socket.end(`${lines.join('\r\n')}\r\n\r\n`);
}

/**
 * One `upgrade` listener for the HTTP server (ws in noServer mode): each request goes to the first
 * route claiming its path; unknown paths get a 404. `guard` runs first (rate limiting) and may refuse.
 */
export function attachUpgradeRouter(
  server: Server,
  routes: readonly UpgradeRoute[],
  guard?: (request: IncomingMessage, socket: Duplex) => Promise<boolean>,
): void {
  server.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on('error', destroySocket);
    void (async () => {
      if (guard && !(await guard(request, socket))) return;
      const pathname = pathnameOf(request.url);
      // A request-target no URL parser accepts (`//%zz`): the client's mistake, not ours (was a 500).
      if (pathname === null) return refuseUpgrade(socket, 400, 'Bad Request');
      const route = routes.find((candidate) => candidate.matches(pathname));
      if (!route) return refuseUpgrade(socket, 404, 'Not Found');
      await route.handle(request, socket, head);
    })().catch(() => refuseUpgrade(socket, 500, 'Internal Server Error'));
  });
}

/**
 * A function of its own, not a closure: a listener written inline shares the upgrade handler's
 * context and would keep the request (headers, credential, head buffer) alive as long as the socket.
 */
function destroySocket(this: Duplex): void {
  this.destroy();
}

/** The path of an origin-form request-target, or null when it does not parse as a URL path. */
function pathnameOf(target: string | undefined): string | null {
  if (target === undefined || !target.startsWith('/')) return null;
  try {
    return new URL(target, 'http://localhost').pathname;
  } catch {
    return null;
  }
}
