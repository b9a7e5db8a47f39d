import type { IncomingMessage } from 'node:http';
import passport from 'passport';
import { AppError } from '../core/errors';
import type { Principal } from '../core/principal';
import type { AccessTokenConfig } from './access-tokens';
import type { Database } from '../db/database';
import { defineAuthModels } from '../db/models/auth';
import { ApiKeys, looksLikeApiKey } from './api-keys';
import { CredentialCache } from './credential-cache';
import { API_KEY_STRATEGY, ApiKeyStrategy } from './strategies/api-key';
import { createJwtStrategy, JWT_STRATEGY, verifyClaims } from './strategies/jwt';
import { Users } from './users';
import { VerifiedTokens } from './verified-tokens';

/**
 * The one credential check of the service, shared by REST (the access guard) and WebSocket upgrades:
 * an access JWT or an API key `svc_live_…` in, the caller out. A refresh token never passes.
 *
 * @throws AppError `TOKEN_EXPIRED` for a genuine access token past its `exp`, `UNAUTHORIZED` for
 * anything else wrong (the message never says what).
 */
export interface Authenticator {
  authenticate(token: string): Promise<Principal>;
}

export function unauthorized(): AppError {
  return new AppError('UNAUTHORIZED', 'Authentication is required: the credential is missing or not valid.');
}

/**
 * An authenticator over a migrated database, apart from a running hub's (tools, tests): it caches
 * nothing, since no control bus tells it about revocations.
 */
export function createDatabaseAuthenticator(config: AccessTokenConfig, database: Pick<Database, 'sequelize'>): Authenticator {
  const models = defineAuthModels(database.sequelize);
  const credentials = new CredentialCache({ ttlMs: 0, maxEntries: 0 });
  return createAuthenticator(
    config,
    new Users(database.sequelize, models, credentials),
    new ApiKeys(models, credentials),
    new VerifiedTokens({ maxEntries: 0 }),
  );
}

/** Builds the authenticator on a passport instance of its own with the JWT and API-key strategies. */
export function createAuthenticator(config: AccessTokenConfig, users: Users, apiKeys: ApiKeys, verified = new VerifiedTokens()): Authenticator {
  const authenticator = new passport.Passport();
  authenticator.use(JWT_STRATEGY, createJwtStrategy(config, users, verified));
  authenticator.use(API_KEY_STRATEGY, new ApiKeyStrategy(apiKeys, users));

  return {
    authenticate(token: string): Promise<Principal> {
      if (typeof token !== 'string' || token === '' || /\s/.test(token)) return Promise.reject(unauthorized());
      const strategy = looksLikeApiKey(token) ? API_KEY_STRATEGY : JWT_STRATEGY;
      const claims = strategy === JWT_STRATEGY ? verified.get(token) : undefined;
      if (claims) return verifyClaims(claims, users).then((principal) => principal || Promise.reject(unauthorized()));
      // The strategies read the credential from a request; give them one that carries only it.
      const req = { headers: { authorization: `Bearer ${token}` } } as unknown as IncomingMessage;
      return new Promise<Principal>((resolve, reject) => {
        const middleware = authenticator.authenticate(strategy, { session: false }, (error: unknown, principal: Principal | false, info: unknown) => {
          if (error) reject(AppError.from(error));
          else if (principal) resolve(principal);
          else reject(isExpired(info) ? expired() : unauthorized());
        }) as (req: unknown, res: unknown, next: (error?: unknown) => void) => void;
        middleware(req, {}, (error) => reject(AppError.from(error)));
      });
    },
  };
}

/** passport-jwt fails with jsonwebtoken's error; only an expiry (signature already checked) is told apart. */
function isExpired(info: unknown): boolean {
  return typeof info === 'object' && info !== null && (info as { name?: unknown }).name === 'TokenExpiredError';
}

function expired(): AppError {
  return new AppError('TOKEN_EXPIRED', 'The access token has expired: refresh it with POST /api/v1/auth/refresh.');
}
