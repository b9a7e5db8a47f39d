import { randomUUID } from 'node:crypto';
import { Op, type Transaction } from 'sequelize';
import { AppError } from '../core/errors';
import type { AuthModels } from '../db/models/auth';
import { randomSecret, sha256 } from './secrets';

const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * A rotated token presented again within this long counts as the losing half of a concurrent double
 * refresh (two tabs, a retried request): refused, but the family is kept, so the winner's new token
 * goes on working. Later it counts as reuse and revokes the family.
 */
export const REFRESH_RACE_GRACE_MS = 1_000;

/** Every refusal looks the same: unknown, expired, rotated and revoked are not told apart. */
export function invalidRefreshToken(): AppError {
  return new AppError('UNAUTHORIZED', 'The refresh token is not valid.');
}

/**
 * Opaque, single-use refresh tokens, stored as sha256 hashes. A token rotated once and presented
 * again (a stolen copy, or the victim after a thief used it) revokes its whole family.
 */
export class RefreshTokens {
  constructor(
    private readonly models: AuthModels,
    private readonly ttlDays: number,
  ) {}

  /** A new token in `familyId` (a new family: a new login). Returns the token, shown once. */
  async issue(userId: string, familyId: string = randomUUID(), transaction?: Transaction): Promise<string> {
    const token = randomSecret();
    await this.models.RefreshToken.create(
      {
        id: randomUUID(),
        user_id: userId,
        token_hash: sha256(token),
        family_id: familyId,
        expires_at: new Date(Date.now() + this.ttlDays * DAY_MS),
      },
      { transaction },
    );
    return token;
  }

  /**
   * Exchanges a token for its successor. The swap is one conditional UPDATE (`rotated_at IS NULL`),
   * so of two concurrent refreshes with the same token exactly one wins; the loser is refused
   * without revoking the family (see REFRESH_RACE_GRACE_MS).
   */
  async rotate(token: string): Promise<{ userId: string; token: string }> {
    const row = await this.models.RefreshToken.findOne({ where: { token_hash: sha256(token) } });
    if (!row || row.revoked_at !== null) throw invalidRefreshToken();
    if (row.rotated_at !== null) {
      if (Date.now() - new Date(row.rotated_at).getTime() >= REFRESH_RACE_GRACE_MS) await this.revokeFamily(row.family_id);
      throw invalidRefreshToken();
    }
    if (new Date(row.expires_at).getTime() <= Date.now()) throw invalidRefreshToken();
    // The conditional UPDATE alone decides the winner: it is one atomic statement on both databases.
    const [changed] = await this.models.RefreshToken.update({ rotated_at: new Date() }, { where: { id: row.id, rotated_at: null, revoked_at: null } });
    if (changed !== 1) throw invalidRefreshToken();
    const next = await this.issue(row.user_id, row.family_id);
    return { userId: row.user_id, token: next };
  }

  /** Ends the session the token belongs to (its family). Unknown tokens are ignored: logout is idempotent. */
  async revoke(token: string): Promise<void> {
    const row = await this.models.RefreshToken.findOne({ where: { token_hash: sha256(token) } });
    if (row) await this.revokeFamily(row.family_id);
  }

  async revokeAllForUser(userId: string): Promise<void> {
    await this.models.RefreshToken.update({ revoked_at: new Date() }, { where: { user_id: userId, revoked_at: null } });
  }

  private async revokeFamily(familyId: string): Promise<void> {
    await this.models.RefreshToken.update({ revoked_at: new Date() }, { where: { family_id: familyId, revoked_at: { [Op.is]: null } } });
  }
}
