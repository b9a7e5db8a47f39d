import { randomUUID } from 'node:crypto';
import { Op, QueryTypes, UniqueConstraintError, type Sequelize } from 'sequelize';
import { AppError } from '../core/errors';
import type { PrincipalChangeReason, Role } from '../core/principal';
import type { AuthModels } from '../db/models/auth';
import type { UserRecord } from '../db/models/user';
import { hashPassword } from './passwords';
import { CredentialCache, type CachedUser } from './credential-cache';
import { writeAtomically } from './transactions';

export interface NewUser {
  username: string;
  email: string;
  /** null: the user cannot log in with a password (SAML-provisioned). */
  password: string | null;
  role?: Role;
}

export interface UserChanges {
  role?: Role;
  is_active?: boolean;
}

/** Users: creation with the atomic first-admin claim, lookup, admin changes. */
/** Why a user's credentials stopped being what they were (every process forgets them and closes their sockets). */
export type PrincipalChange = Exclude<PrincipalChangeReason, 'api_key_revoked'>;

export class Users {
  constructor(
    private readonly sequelize: Sequelize,
    private readonly models: AuthModels,
    private readonly cache: CredentialCache = new CredentialCache(),
    private readonly onChanged: (userId: string, change: PrincipalChange) => Promise<void> = async () => undefined,
  ) {}

  /** What a credential check needs of the user; no database read when cached. */
  forCredentialCheck(id: string): Promise<CachedUser | null> {
    return this.cache.user(id, async () => {
      const user = await this.findById(id);
      if (!user) return null;
      return { id: user.id, username: user.username, role: user.role, is_active: user.is_active, tokens_valid_after: user.tokens_valid_after };
    });
  }

  /**
   * Creates a user. The first user ever created becomes `admin`: a one-row table is claimed with
   * `INSERT … ON CONFLICT DO NOTHING` after the user is inserted (in one transaction on PostgreSQL),
   * so of any number of concurrent first registrations exactly one wins, on SQLite and PostgreSQL.
   * The user row comes first: a failed insert (duplicate name) never consumes the claim.
   */
  async create(input: NewUser): Promise<UserRecord> {
    // Hashing is slow (argon2id): do it before taking any lock.
    const passwordHash = input.password === null ? null : await hashPassword(input.password);
    const id = randomUUID();
    try {
      return await writeAtomically(this.sequelize, async (transaction) => {
        const user = await this.models.User.create(
          {
            id,
            username: input.username,
            username_key: input.username.toLowerCase(),
            email: input.email.toLowerCase(),
            password_hash: passwordHash,
            role: input.role ?? 'user',
          },
          { transaction },
        );
        // The claim row is read back rather than RETURNING-ed: sequelize's SQLite driver drops the
        // rows of an INSERT. A concurrent claimer on PostgreSQL waits for ours to commit, then reads it.
        await this.sequelize.query('INSERT INTO auth_first_admin (id, user_id, created_at) VALUES (1, :id, :now) ON CONFLICT (id) DO NOTHING', {
          replacements: { id, now: new Date() },
          transaction,
        });
        const [claim] = await this.sequelize.query<{ user_id: string }>('SELECT user_id FROM auth_first_admin WHERE id = 1', {
          type: QueryTypes.SELECT,
          transaction,
        });
        if (claim?.user_id === id && user.role !== 'admin') {
          user.role = 'admin';
          await user.save({ transaction });
        }
        return user;
      });
    } catch (error) {
      if (error instanceof UniqueConstraintError) {
        throw new AppError('CONFLICT', 'A user with this username or email already exists.');
      }
      throw error;
    }
  }

  findById(id: string): Promise<UserRecord | null> {
    return this.models.User.findByPk(id);
  }

  /** By username (any case) or email: usernames cannot contain `@`, so the two never collide. */
  findByLogin(login: string): Promise<UserRecord | null> {
    const key = login.toLowerCase();
    return this.models.User.findOne({ where: { [Op.or]: [{ username_key: key }, { email: key }] } });
  }

  findByEmail(email: string): Promise<UserRecord | null> {
    return this.models.User.findOne({ where: { email: email.toLowerCase() } });
  }

  async list(offset: number, limit: number): Promise<{ rows: UserRecord[]; total: number }> {
    const { rows, count } = await this.models.User.findAndCountAll({
      order: [
        ['created_at', 'ASC'],
        ['id', 'ASC'],
      ],
      offset,
      limit,
    });
    return { rows, total: count };
  }

  /** Applies an admin's change; an admin may not demote or deactivate themself. */
  async update(actorId: string, id: string, changes: UserChanges): Promise<UserRecord> {
    const user = await this.requireUser(id);
    if (actorId === id && ((changes.role !== undefined && changes.role !== 'admin') || changes.is_active === false)) {
      throw new AppError('FORBIDDEN', 'An admin cannot demote or deactivate themself.');
    }
    const demoted = changes.role !== undefined && changes.role !== user.role;
    const deactivated = changes.is_active === false && user.is_active;
    const reactivated = changes.is_active === true && !user.is_active;
    if (changes.role !== undefined) user.role = changes.role;
    if (changes.is_active !== undefined) user.is_active = changes.is_active;
    await user.save();
    if (deactivated) await this.onChanged(id, 'deactivated');
    else if (demoted) await this.onChanged(id, 'role_changed');
    else if (reactivated) await this.onChanged(id, 'reactivated'); // cached as inactive until now
    return user;
  }

  async remove(actorId: string, id: string): Promise<void> {
    if (actorId === id) throw new AppError('FORBIDDEN', 'An admin cannot delete themself.');
    const user = await this.requireUser(id);
    await user.destroy();
    await this.onChanged(id, 'deleted');
  }

  async setPassword(user: UserRecord, password: string, tokensValidAfter: Date): Promise<void> {
    user.password_hash = await hashPassword(password);
    user.tokens_valid_after = tokensValidAfter;
    await user.save();
    await this.onChanged(user.id, 'logged_out');
  }

  async invalidateTokens(user: UserRecord, tokensValidAfter: Date): Promise<void> {
    user.tokens_valid_after = tokensValidAfter;
    await user.save();
    await this.onChanged(user.id, 'logged_out');
  }

  private async requireUser(id: string): Promise<UserRecord> {
    const user = await this.findById(id);
    if (!user) throw new AppError('NOT_FOUND', 'No such user.');
    return user;
  }
}
