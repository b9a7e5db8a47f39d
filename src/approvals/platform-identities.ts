import { QueryTypes, type Sequelize } from 'sequelize';
import { AppError } from '../core/errors';

/** The chat channels whose people can be bound to hub users (their clicks carry a platform user id). */
export const IDENTITY_CHANNELS = ['slack', 'telegram', 'mattermost'] as const;
export type IdentityChannel = (typeof IDENTITY_CHANNELS)[number];

/** A platform user id: a Slack `U0123ABCD`, a Telegram user id `123456789`, a Mattermost id. */
export const PLATFORM_USER_ID = /^[A-Za-z0-9_.@-]{1,128}$/;

export interface PlatformIdentity {
  channel: string;
  platform_user_id: string;
  user_id: string;
  created_at: string;
}

/** The hub user a platform user is bound to, read when their click arrives (an unbinding counts at once). */
export type PlatformIdentityLookup = (channel: string, platformUserId: string) => Promise<string | null>;

/**
 * Platform users bound to hub users (issue 30, docs/guides/approvals.md "Linking chat users"):
 * set by admins over the API or `switchboard identities`; read by the approval check in any
 * process (the worker does not define the auth models, so plain SQL). A platform id belongs to one
 * hub user; a hub user may have one per platform and more.
 */
export class PlatformIdentities {
  constructor(private readonly sequelize: Sequelize) {}

  async list(userId: string): Promise<PlatformIdentity[]> {
    const rows = await this.sequelize.query<PlatformIdentity & { created_at: string | Date }>(
      'SELECT channel, platform_user_id, user_id, created_at FROM platform_identities WHERE user_id = :userId ORDER BY channel, platform_user_id',
      { type: QueryTypes.SELECT, replacements: { userId } },
    );
    return rows.map((row) => ({ ...row, created_at: new Date(row.created_at).toISOString() }));
  }

  /** Binds `platformUserId` of `channel` to `userId`; CONFLICT when it is bound to another hub user. */
  async link(userId: string, channel: IdentityChannel, platformUserId: string, by: string | null): Promise<PlatformIdentity> {
    const holder = await this.lookup(channel, platformUserId);
    if (holder !== null && holder !== userId)
      throw new AppError('CONFLICT', `${channel}:${platformUserId} is bound to another hub user: unlink it there first.`);
    if (holder === null) {
      try {
        await this.sequelize.query(
          'INSERT INTO platform_identities (channel, platform_user_id, user_id, created_by, created_at) VALUES (:channel, :platformUserId, :userId, :by, :now)',
          { replacements: { channel, platformUserId, userId, by, now: new Date() } },
        );
      } catch {
        // Bound meanwhile (the primary key): say so, as above.
        throw new AppError('CONFLICT', `${channel}:${platformUserId} is already bound.`);
      }
    }
    return (await this.list(userId)).find((row) => row.channel === channel && row.platform_user_id === platformUserId)!;
  }

  /** Unbinds it; false when it was not bound to `userId`. */
  async unlink(userId: string, channel: string, platformUserId: string): Promise<boolean> {
    const bound = await this.lookup(channel, platformUserId);
    if (bound !== userId) return false;
    await this.sequelize.query('DELETE FROM platform_identities WHERE channel = :channel AND platform_user_id = :platformUserId AND user_id = :userId', {
      replacements: { channel, platformUserId, userId },
    });
    return true;
  }

  /** The hub user id bound to a platform user, or null (also when that hub user no longer exists). */
  readonly lookup: PlatformIdentityLookup = async (channel, platformUserId) => {
    const [row] = await this.sequelize.query<{ user_id: string }>(
      'SELECT p.user_id FROM platform_identities p JOIN users u ON u.id = p.user_id WHERE p.channel = :channel AND p.platform_user_id = :platformUserId',
      { type: QueryTypes.SELECT, replacements: { channel, platformUserId } },
    );
    return row?.user_id ?? null;
  };
}
