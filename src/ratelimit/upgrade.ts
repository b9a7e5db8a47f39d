import { STATUS_CODES, type IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { RateLimiter } from './limiter';

/**
 * Refuses a WebSocket upgrade that `RateLimiter.checkUpgrade` did not allow: the handshake has not
 * happened, so the answer is a plain HTTP 429 on the raw socket, then the socket is closed.
 */
export function writeUpgradeRefusal(socket: Duplex, retryAfterS: number): void {
  if (socket.destroyed) return;
  const body = JSON.stringify({ error: { code: 'RATE_LIMIT_EXCEEDED', message: `Too many requests; try again in ${retryAfterS} s.` } });
  socket.end(
    `HTTP/1.1 429 ${STATUS_CODES[429]}\r\n` +
      'Connection: close\r\n' +
      'Content-Type: application/json\r\n' +
      `Content-Length: ${Buffer.byteLength(body)}\r\n` +
      `Retry-After: ${retryAfterS}\r\n` +
      '\r\n' +
      body,
  );
}

/**
 * The guard `attachUpgradeRouter` runs before routing an upgrade: upgrades count under the
 * `default` limit like every other route (spec, Limits); a refused one gets its 429 here.
 */
export function upgradeGuard(limiter: Pick<RateLimiter, 'checkUpgrade'>): (request: IncomingMessage, socket: Duplex) => Promise<boolean> {
  return async (request, socket) => {
    const decision = await limiter.checkUpgrade(request);
    if (!decision.allowed) writeUpgradeRefusal(socket, decision.retryAfterS);
    return decision.allowed;
  };
}
