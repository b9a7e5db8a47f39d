/**
 * WebSocket upgrade authentication (spec, Authentication rules 3–8; Errors, close codes).
 *
 * The WebSocket issue plugs these into its `server.on('upgrade')` handler:
 *
 * @example
 * const wss = new WebSocketServer({ noServer: true, handleProtocols: selectProtocol, maxPayload });
 * server.on('upgrade', async (req, socket, head) => {
 *   try {
 *     const { principal } = await authenticateUpgrade(req, authenticator, { role: 'admin', queryToken: true });
 *     wss.handleUpgrade(req, socket, head, (ws) => attach(ws, principal));
 *   } catch (error) {
 *     if (error instanceof WsRefusal) acceptThenClose(wss, req, socket, head, error.code, error.message);
 *     else acceptThenClose(wss, req, socket, head, 1011, 'internal error');
 *   }
 * });
 */
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { WebSocketServer } from 'ws';
import { AppError } from '../core/errors';
import type { Principal, Role } from '../core/principal';
import { CLOSE_CODES } from '../protocol/close-codes';
import type { SocketAuthResult } from '../core/hub';
import type { Authenticator } from './authenticator';
import { hasRepeatedCredential } from './guard';

export const WS_CLOSE = { UNAUTHORIZED: CLOSE_CODES.UNAUTHORIZED, FORBIDDEN: CLOSE_CODES.FORBIDDEN } as const;

/** Why an upgrade is refused: the close code to send after accepting, and a short reason (≤ 123 bytes). */
export class WsRefusal extends Error {
  constructor(
    readonly code: 4001 | 4003,
    reason: string,
  ) {
    super(reason);
    this.name = 'WsRefusal';
  }
}

export interface UpgradeCredential {
  token: string;
  via: 'authorization' | 'subprotocol' | 'query';
}

const BEARER_HEADER = /^bearer +(\S+) *$/i;

/** `Sec-WebSocket-Protocol: bearer, <token>` → the listed values, trimmed, in order. */
function offeredProtocols(req: IncomingMessage): string[] {
  const header = req.headers['sec-websocket-protocol'];
  if (typeof header !== 'string') return [];
  return header.split(',').map((value) => value.trim());
}

/**
 * Where the credential of an upgrade is, by precedence: the `Authorization` header (scheme in any
 * case; when present it decides, even if malformed, and the subprotocol is ignored), then
 * `Sec-WebSocket-Protocol: bearer, <token>`, then `?token=` when `queryToken` is on (the log stream).
 * Returns null when there is none.
 */
export function extractUpgradeCredential(req: IncomingMessage, options: { queryToken?: boolean } = {}): UpgradeCredential | null {
  if (hasRepeatedCredential(req)) return null; // two Authorization headers name no single credential
  const authorization = req.headers.authorization;
  if (authorization !== undefined) {
    const match = BEARER_HEADER.exec(authorization);
    return match ? { token: match[1]!, via: 'authorization' } : null;
  }
  const [first, token] = offeredProtocols(req);
  if (first?.toLowerCase() === 'bearer' && token) return { token, via: 'subprotocol' };
  if (options.queryToken) {
    const query = new URL(req.url ?? '/', 'http://upgrade.invalid').searchParams.get('token');
    if (query) return { token: query, via: 'query' };
  }
  return null;
}

/**
 * For ws's `handleProtocols`: echo `bearer` (exactly as the client spelled it) only on the
 * subprotocol path, never when an Authorization header is present. Without the echo, browsers that
 * offered `bearer` close with 1002; with an unasked-for one, any client fails.
 */
export function selectProtocol(protocols: Set<string>, req: IncomingMessage): string | false {
  if (req.headers.authorization !== undefined) return false;
  const [first] = protocols;
  return first !== undefined && first.toLowerCase() === 'bearer' && protocols.size >= 2 ? first : false;
}

/**
 * Validates an upgrade's credential with the same authenticator as REST.
 *
 * @throws WsRefusal 4001 (missing, malformed, invalid, expired, revoked, inactive user) or 4003
 * (valid, but not `role`). Other failures (database down) are rethrown as they are: close with 1011.
 */
export async function authenticateUpgrade(
  req: IncomingMessage,
  authenticator: Authenticator,
  options: { queryToken?: boolean; role?: Role } = {},
): Promise<{ principal: Principal; protocol: 'bearer' | null }> {
  const credential = extractUpgradeCredential(req, options);
  if (!credential) throw new WsRefusal(WS_CLOSE.UNAUTHORIZED, 'unauthorized');
  let principal: Principal;
  try {
    principal = await authenticator.authenticate(credential.token);
  } catch (error) {
    if (error instanceof AppError && error.code === 'TOKEN_EXPIRED') throw new WsRefusal(WS_CLOSE.UNAUTHORIZED, 'token expired');
    if (error instanceof AppError && error.code === 'UNAUTHORIZED') throw new WsRefusal(WS_CLOSE.UNAUTHORIZED, 'unauthorized');
    throw error;
  }
  if (options.role === 'admin' && principal.role !== 'admin') throw new WsRefusal(WS_CLOSE.FORBIDDEN, 'forbidden');
  return { principal, protocol: credential.via === 'subprotocol' ? 'bearer' : null };
}

/**
 * Completes the handshake and closes at once with `code`: a browser only sees close codes of an
 * accepted connection (a refused handshake is just "error", code 1006). The subprotocol is still
 * echoed (by the server's `handleProtocols`) when offered, or the browser would report 1002 instead.
 */
export function acceptThenClose(wss: WebSocketServer, req: IncomingMessage, socket: Duplex, head: Buffer, code: number, reason: string): void {
  wss.handleUpgrade(req, socket, head, (ws) => ws.close(code, reason));
}

/**
 * `authenticateUpgrade` as the hub port's `SocketAuthResult` (channel adapters import only
 * src/core): a refusal becomes `{ok: false, closeCode}`; other failures are rethrown (close 1011).
 */
export async function checkUpgradeCredential(
  req: IncomingMessage,
  authenticator: Authenticator,
  options: { queryToken?: boolean; role?: Role } = {},
): Promise<SocketAuthResult> {
  try {
    return { ok: true, principal: (await authenticateUpgrade(req, authenticator, options)).principal };
  } catch (error) {
    if (error instanceof WsRefusal) return { ok: false, closeCode: error.code, reason: error.message };
    throw error;
  }
}
