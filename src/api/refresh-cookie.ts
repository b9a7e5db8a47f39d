import type { Request, Response } from 'express';
import type { TokenPair } from '../auth/sessions';

/**
 * The Web UI keeps its refresh token out of script reach (issue 26): it asks for it as an HttpOnly,
 * SameSite=Strict cookie scoped to the refresh endpoint, and the JSON answer carries
 * `refresh_token: null`. CLI and SDK clients send no such header and get the token in the JSON, as
 * decisions.md §2 has it.
 */
export const REFRESH_COOKIE = 'switchboard_refresh';
/** The only path the browser sends the cookie to: `POST` refreshes, `DELETE` signs out. */
export const REFRESH_COOKIE_PATH = '/api/v1/auth/refresh';
/** Request header by which a browser client asks for the cookie: `X-Switchboard-Refresh: cookie`. */
export const REFRESH_TRANSPORT_HEADER = 'X-Switchboard-Refresh';

export interface RefreshCookieOptions {
  /** The refresh token's lifetime (`auth.refresh_token_ttl_days`). */
  maxAgeS: number;
  /** Marked Secure when the hub is reached over HTTPS (`server.public_url`, or the request itself). */
  secure: boolean;
}

export const DEFAULT_REFRESH_COOKIE: RefreshCookieOptions = { maxAgeS: 30 * 86_400, secure: false };

/** A token pair as answered: with the refresh token in a cookie instead when the client asked for that. */
export type DeliveredPair = Omit<TokenPair, 'refresh_token'> & { refresh_token: string | null };

export function wantsCookie(req: Request): boolean {
  return (req.get(REFRESH_TRANSPORT_HEADER) ?? '').trim().toLowerCase() === 'cookie';
}

export function deliverPair(req: Request, res: Response, pair: TokenPair, options: RefreshCookieOptions): DeliveredPair {
  if (!wantsCookie(req)) return pair;
  res.cookie(REFRESH_COOKIE, pair.refresh_token, {
    httpOnly: true,
    sameSite: 'strict',
    secure: options.secure || req.secure,
    path: REFRESH_COOKIE_PATH,
    maxAge: options.maxAgeS * 1000,
  });
  res.setHeader('Cache-Control', 'no-store');
  return { ...pair, refresh_token: null };
}

export function clearRefreshCookie(req: Request, res: Response, options: RefreshCookieOptions): void {
  res.clearCookie(REFRESH_COOKIE, { httpOnly: true, sameSite: 'strict', secure: options.secure || req.secure, path: REFRESH_COOKIE_PATH });
}

/** The refresh token the browser's cookie carries, or null (no cookie-parser: one header, one name). */
export function cookieRefreshToken(req: Request): string | null {
  for (const part of (req.get('cookie') ?? '').split(';')) {
    const at = part.indexOf('=');
    if (at > 0 && part.slice(0, at).trim() === REFRESH_COOKIE) {
      const value = part.slice(at + 1).trim();
      try {
        return decodeURIComponent(value) || null;
      } catch {
        return null;
      }
    }
  }
  return null;
}
