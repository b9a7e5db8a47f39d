import type { Config } from '../config';
import type { Database } from '../db/database';
import { defineAuthModels, type AuthModels } from '../db/models/auth';
import { ApiKeys } from './api-keys';
import { createAuthenticator, type Authenticator } from './authenticator';
import { createAccessGuard, type RequestGuard } from './guard';
import { RefreshTokens } from './refresh-tokens';
import { Sessions } from './sessions';
import { Users } from './users';

export type { Authenticator } from './authenticator';

/** Everything auth, built once in main.ts from the `auth` config section and the database. */
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
}

export function createAuth(config: Config['auth'], database: Pick<Database, 'sequelize'>): Auth {
  const models = defineAuthModels(database.sequelize);
  const users = new Users(database.sequelize, models);
  const apiKeys = new ApiKeys(models);
  const refreshTokens = new RefreshTokens(models, config.refresh_token_ttl_days);
  const sessions = new Sessions(config, users, refreshTokens);
  const authenticator = createAuthenticator(config, users, apiKeys);
  return { models, users, apiKeys, refreshTokens, sessions, authenticator, guard: createAccessGuard(authenticator) };
}
