import { z } from 'zod';
import type { Config } from '../config';
import { AppError } from '../core/errors';
import type { UserRecord } from '../db/models/user';
import { signAccessToken } from './access-tokens';
import { verifyPassword } from './passwords';
import type { RefreshTokens } from './refresh-tokens';
import { invalidRefreshToken } from './refresh-tokens';
import { toUserView, userViewSchema } from './user-view';
import type { NewUser, Users } from './users';

export const tokenPairSchema = z
  .object({
    access_token: z.string(),
    refresh_token: z.string(),
    token_type: z.literal('bearer'),
    expires_in: z.number().int().describe('Seconds until the access token expires.'),
    user: userViewSchema,
  })
  .meta({ id: 'TokenPair' });
export type TokenPair = z.infer<typeof tokenPairSchema>;

function badCredentials(): AppError {
  // One message for unknown user, wrong password and inactive user: nothing to enumerate.
  return new AppError('UNAUTHORIZED', 'Invalid username or password.');
}

/** Whole seconds: access tokens carry `iat` in seconds, so "issued before" is decided per second. */
function currentSecond(): Date {
  return new Date(Math.floor(Date.now() / 1000) * 1000);
}

/** Register, log in, refresh, log out, change password: the token-pair lifecycle. */
export class Sessions {
  constructor(
    private readonly config: Config['auth'],
    private readonly users: Users,
    private readonly refreshTokens: RefreshTokens,
  ) {}

  async register(input: NewUser & { password: string }): Promise<TokenPair> {
    const user = await this.users.create({ username: input.username, email: input.email, password: input.password });
    return this.issue(user);
  }

  /** Constant time for unknown users: the password is always verified against some hash. */
  async login(login: string, password: string): Promise<TokenPair> {
    const user = await this.users.findByLogin(login);
    const matches = await verifyPassword(user?.password_hash ?? null, password);
    if (!user || !matches || !user.is_active) throw badCredentials();
    return this.issue(user);
  }

  async refresh(refreshToken: string): Promise<TokenPair> {
    const rotated = await this.refreshTokens.rotate(refreshToken);
    const user = await this.users.findById(rotated.userId);
    if (!user || !user.is_active) {
      await this.refreshTokens.revokeAllForUser(rotated.userId);
      throw invalidRefreshToken();
    }
    return this.pair(user, rotated.token);
  }

  logout(refreshToken: string): Promise<void> {
    return this.refreshTokens.revoke(refreshToken);
  }

  /** Every refresh token of the user is revoked and every access token issued so far refused. */
  async logoutAll(userId: string): Promise<void> {
    const user = await this.users.findById(userId);
    if (!user) return;
    await this.refreshTokens.revokeAllForUser(userId);
    await this.users.invalidateTokens(user, currentSecond());
  }

  /** Ends every other session and returns a fresh pair for this one. */
  async changePassword(userId: string, currentPassword: string, newPassword: string): Promise<TokenPair> {
    const user = await this.users.findById(userId);
    if (!user) throw badCredentials();
    if (!(await verifyPassword(user.password_hash, currentPassword))) {
      throw AppError.validation({ current_password: [{ code: 'incorrect', message: 'The current password is not correct.' }] });
    }
    await this.refreshTokens.revokeAllForUser(userId);
    await this.users.setPassword(user, newPassword, currentSecond());
    return this.issue(user);
  }

  /** A new login: a new refresh-token family. */
  async issue(user: UserRecord): Promise<TokenPair> {
    return this.pair(user, await this.refreshTokens.issue(user.id));
  }

  private pair(user: UserRecord, refreshToken: string): TokenPair {
    return {
      access_token: signAccessToken(this.config, user),
      refresh_token: refreshToken,
      token_type: 'bearer',
      expires_in: this.config.access_token_ttl_s,
      user: toUserView(user),
    };
  }
}
