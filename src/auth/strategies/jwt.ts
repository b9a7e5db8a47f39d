import { createSecretKey } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { ExtractJwt, Strategy as JwtStrategy } from 'passport-jwt';
import type { Principal } from '../../core/principal';
import { ACCESS_TOKEN_ALGORITHMS, ACCESS_TOKEN_CLOCK_SKEW_S, ACCESS_TOKEN_TYPE, type AccessTokenConfig } from '../access-tokens';
import { jwtPrincipal } from '../principals';
import type { Users } from '../users';
import type { AccessClaims, VerifiedTokens } from '../verified-tokens';

export const JWT_STRATEGY = 'jwt';

/**
 * Access JWTs: HS256 only (the list is fixed here, never read from the token), issuer and audience
 * checked, `typ: "access"` and `exp` required. The role comes from the database, not the claim, so
 * a demotion or deactivation takes effect at once.
 */
export function createJwtStrategy(config: AccessTokenConfig, users: Users, verified: VerifiedTokens): JwtStrategy {
  const fromRequest = ExtractJwt.fromAuthHeaderAsBearerToken();
  return new JwtStrategy(
    {
      // Scheme compared case-insensitively (spec, Authentication rule 3).
      jwtFromRequest: fromRequest,
      // A key object, not the string: given a string, jsonwebtoken first tries (and fails) to read it
      // as a public key on every request (0.9 ms each).
      secretOrKey: createSecretKey(Buffer.from(config.jwt_secret, 'utf8')) as unknown as string,
      algorithms: ACCESS_TOKEN_ALGORITHMS,
      issuer: config.issuer,
      audience: config.audience,
      passReqToCallback: true,
    },
    (req: IncomingMessage, claims: AccessClaims, done: (error: unknown, principal?: Principal | false) => void) => {
      void verifyClaims(claims, users).then(
        (principal) => {
          // The token itself is good: later requests with it skip straight to the user checks.
          if (principal) verified.remember(fromRequest(req as never)!, claims);
          done(null, principal);
        },
        (error: unknown) => done(error),
      );
    },
  );
}

/** The checks of a verified token's claims and of the user behind it, made on every request. */
export async function verifyClaims(claims: AccessClaims, users: Users): Promise<Principal | false> {
  // jsonwebtoken accepts a token without `exp` as never expiring: refuse it here.
  if (claims.typ !== ACCESS_TOKEN_TYPE || typeof claims.exp !== 'number' || typeof claims.iat !== 'number') return false;
  if (typeof claims.sub !== 'string') return false;
  // Issued in the future (beyond the clock difference we tolerate): not a token we made.
  if (claims.iat * 1000 > Date.now() + ACCESS_TOKEN_CLOCK_SKEW_S * 1000) return false;
  const user = await users.forCredentialCheck(claims.sub).catch(() => null);
  if (!user || !user.is_active) return false;
  // logout-all and password changes refuse tokens issued before them (iat has whole seconds).
  if (user.tokens_valid_after !== null && claims.iat * 1000 < new Date(user.tokens_valid_after).getTime()) return false;
  return jwtPrincipal(user);
}
