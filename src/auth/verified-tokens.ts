/** The claims of an access JWT as its strategy reads them. */
export interface AccessClaims {
  sub?: unknown;
  typ?: unknown;
  iat?: unknown;
  exp?: unknown;
  nbf?: unknown;
}

export const VERIFIED_TOKENS_DEFAULTS = { maxEntries: 10_000 };

/**
 * Access JWTs whose signature, algorithm, issuer and audience were checked once, with their claims,
 * until they expire: a client sends the same token on every request, and checking it again (HMAC,
 * base64 and JSON decoding, passport's per-request strategy) was most of a request's auth cost. Only
 * the token's own checks are skipped: the user behind it (active, role, logged out since `iat`) is
 * looked at on every request, so revocation still takes effect at once. Memory only, never logged.
 */
export class VerifiedTokens {
  private readonly claims = new Map<string, AccessClaims>();

  constructor(private readonly limits = VERIFIED_TOKENS_DEFAULTS) {}

  /** The token's claims if it was verified and has not expired since (jsonwebtoken's rule: expired at `exp`). */
  get(token: string): AccessClaims | undefined {
    const claims = this.claims.get(token);
    if (claims === undefined) return undefined;
    if ((claims.exp as number) * 1000 <= Date.now()) {
      this.claims.delete(token);
      return undefined;
    }
    return claims;
  }

  /** Called with a token that passed every check of the JWT library; tokens with `nbf` are not kept (not yet valid is a state of time). */
  remember(token: string, claims: AccessClaims): void {
    if (typeof claims.exp !== 'number' || claims.nbf !== undefined || this.limits.maxEntries <= 0) return;
    if (this.claims.size >= this.limits.maxEntries) this.claims.delete(this.claims.keys().next().value!);
    this.claims.set(token, claims);
  }
}
