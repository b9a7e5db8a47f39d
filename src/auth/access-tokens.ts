import jwt from 'jsonwebtoken';
import type { Config } from '../config';
import type { Role } from '../core/principal';

/** The only algorithm accepted for access tokens; never taken from the token's own header. */
export const ACCESS_TOKEN_ALGORITHMS: jwt.Algorithm[] = ['HS256'];
export const ACCESS_TOKEN_TYPE = 'access';
/** Clock difference tolerated with whoever issued a token: an `iat` further in the future is refused. */
export const ACCESS_TOKEN_CLOCK_SKEW_S = 30;

export type AccessTokenConfig = Pick<Config['auth'], 'jwt_secret' | 'access_token_ttl_s' | 'issuer' | 'audience'>;

/** Signs an access JWT: claims sub, role, iat, exp, iss, aud, typ. */
export function signAccessToken(config: AccessTokenConfig, user: { id: string; role: Role }): string {
  return jwt.sign({ role: user.role, typ: ACCESS_TOKEN_TYPE }, config.jwt_secret, {
    algorithm: 'HS256',
    subject: user.id,
    issuer: config.issuer,
    audience: config.audience,
    expiresIn: config.access_token_ttl_s,
  });
}
