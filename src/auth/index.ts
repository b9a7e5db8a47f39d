import type { Config } from '../config';
import type { Database } from '../db/database';
import { defineAuthModels, type AuthModels } from '../db/models/auth';
import { ApiKeys } from './api-keys';
import { createAuthenticator, type Authenticator } from './authenticator';
import { CredentialCache } from './credential-cache';
import { createAccessGuard, type RequestGuard } from './guard';
import { RefreshTokens } from './refresh-tokens';
import { Sessions } from './sessions';
import { Users, type PrincipalChange } from './users';

export type { Authenticator } from './authenticator';

/** Everything auth, built once in the composition root (src/compose/auth.ts) from the `auth` config section and the database. */
export interface Auth {
  models: AuthModels;
  users: Users;
  apiKeys: ApiKeys;
  refreshTokens: RefreshTokens;
  sessions: Sessions;
  /** The one credential check, for REST and WebSocket upgrades. */
  authenticator: Authenticator;
  /** The REST access guard (`createApp({ guard })`). */
  guard: RequestGuard;
  /** Users and keys as credential checks cached them; `forget` when another process says they changed. */
  credentials: CredentialCache;
}

/** Told when a principal's credentials change (the composition root tells every process over the control bus). */
export type PrincipalChanged = (change: { userId: string; reason: PrincipalChange | 'api_key_revoked'; apiKeyId?: string }) => Promise<void>;

export function createAuth(config: Config['auth'], database: Pick<Database, 'sequelize'>, onChanged: PrincipalChanged = async () => undefined): Auth {
  const models = defineAuthModels(database.sequelize);
  const credentials = new CredentialCache();
  // Forgotten here at once (the next request must not pass), then told to every process.
  const changed: PrincipalChanged = async (change) => {
    credentials.forget(change.userId, change.apiKeyId);
    await onChanged(change);
  };
  const users = new Users(database.sequelize, models, credentials, (userId, reason) => changed({ userId, reason }));
  const apiKeys = new ApiKeys(models, credentials, (userId, apiKeyId) => changed({ userId, reason: 'api_key_revoked', apiKeyId }));
  const refreshTokens = new RefreshTokens(models, config.refresh_token_ttl_days);
  const sessions = new Sessions(config, users, refreshTokens);
  const authenticator = createAuthenticator(config, users, apiKeys);
  return { models, users, apiKeys, refreshTokens, sessions, authenticator, guard: createAccessGuard(authenticator), credentials };
}
