import type { Request } from 'express';
import { AppError } from '../core/errors';
import type { Principal } from '../core/principal';
import { looksLikeApiKey } from './api-keys';
import type { Authenticator } from './authenticator';
import { unauthorized } from './authenticator';

/**
 * True when `Authorization` or `X-API-Key` is sent more than once. Node keeps the first of two
 * `Authorization` headers and joins `X-API-Key`s, while a proxy in front may act on another one:
 * such a request names no single credential and is refused, never served as either.
 */
export function hasRepeatedCredential(req: { rawHeaders?: readonly string[] }): boolean {
  const seen = new Set<string>();
  const raw = req.rawHeaders ?? [];
  for (let index = 0; index < raw.length; index += 2) {
    const name = raw[index]!.toLowerCase();
    if (name !== 'authorization' && name !== 'x-api-key') continue;
    if (seen.has(name)) return true;
    seen.add(name);
  }
  return false;
}

/**
 * The REST credential: `Authorization: Bearer <jwt|svc_live_…>` (scheme in any case) or
 * `X-API-Key: svc_live_…`. When both are sent the Authorization header wins, as on WebSocket.
 * A repeated header is an invalid credential ('').
 */
export function credentialFromRequest(req: Pick<Request, 'headers'> & { rawHeaders?: readonly string[] }): string | null {
  if (hasRepeatedCredential(req)) return '';
  const authorization = req.headers.authorization;
  if (authorization !== undefined) {
    const match = /^bearer +(\S+) *$/i.exec(authorization);
    return match ? match[1]! : '';
  }
  const apiKey = req.headers['x-api-key'];
  // Only API keys travel in X-API-Key; a JWT there is refused rather than guessed at.
  if (typeof apiKey === 'string') return looksLikeApiKey(apiKey.trim()) ? apiKey.trim() : '';
  return null;
}

/** Same shape as the API router's AccessGuard, declared here so auth does not import the API layer. */
export type RequestGuard = (req: Request, access: 'user' | 'admin') => Promise<Principal>;

/** The access guard of user/admin endpoints; an admin endpoint answers 403 FORBIDDEN to a user. */
export function createAccessGuard(authenticator: Authenticator): RequestGuard {
  return async (req, access) => {
    const credential = credentialFromRequest(req);
    if (!credential) throw unauthorized();
    const principal = await authenticator.authenticate(credential);
    if (access === 'admin' && principal.role !== 'admin') {
      throw new AppError('FORBIDDEN', 'This endpoint is for admins.');
    }
    return principal;
  };
}
