import { randomUUID } from 'node:crypto';
import type { WhereOptions } from 'sequelize';
import { z } from 'zod';
import { AppError } from '../core/errors';
import type { Principal } from '../core/principal';
import type { ApiKeyAttributes, ApiKeyRecord } from '../db/models/api-key';
import type { AuthModels } from '../db/models/auth';
import type { CachedApiKey, CredentialCache } from './credential-cache';
import { randomSecret, sha256 } from './secrets';

export const API_KEY_PREFIX = 'svc_live_';
/** How many leading characters are stored and listed, so users can tell keys apart. */
export const API_KEY_PREFIX_LENGTH = 12;
/** `svc_live_` + 32 random bytes in base64url (43 characters). */
export const API_KEY_PATTERN = /^svc_live_[A-Za-z0-9_-]{43}$/;
/** last_used_at is written at most this often per key, so busy scripts do not write on every call. */
export const LAST_USED_RESOLUTION_MS = 60_000;

const DAY_MS = 24 * 60 * 60 * 1000;

export const apiKeyViewSchema = z
  .object({
    id: z.uuid(),
    user_id: z.uuid(),
    label: z.string(),
    key_prefix: z.string(),
    created_at: z.iso.datetime(),
    expires_at: z.iso.datetime().nullable(),
    last_used_at: z.iso.datetime().nullable(),
    revoked_at: z.iso.datetime().nullable(),
  })
  .meta({ id: 'ApiKey' });
export type ApiKeyView = z.infer<typeof apiKeyViewSchema>;

/** Columns not set at creation are `undefined` on a fresh record, `null` once read back. */
function iso(value: Date | null | undefined): string | null {
  return value === null || value === undefined ? null : new Date(value).toISOString();
}

export function toApiKeyView(key: ApiKeyRecord): ApiKeyView {
  return {
    id: key.id,
    user_id: key.user_id,
    label: key.label,
    key_prefix: key.key_prefix,
    created_at: new Date(key.created_at).toISOString(),
    expires_at: iso(key.expires_at),
    last_used_at: iso(key.last_used_at),
    revoked_at: iso(key.revoked_at),
  };
}

export function looksLikeApiKey(token: string): boolean {
  return token.startsWith(API_KEY_PREFIX);
}

/** API keys: created and shown once, stored as sha256, listed by prefix, revocable, may expire. */
export class ApiKeys {
  constructor(
    private readonly models: AuthModels,
    private readonly cache: CredentialCache,
    /** Told when a key is revoked, so every process forgets it and closes what it opened. */
    private readonly onRevoked: (userId: string, keyId: string) => Promise<void> = async () => undefined,
  ) {}

  async create(userId: string, label: string, expiresInDays?: number): Promise<ApiKeyView & { key: string }> {
    const key = API_KEY_PREFIX + randomSecret();
    const record = await this.models.ApiKey.create({
      id: randomUUID(),
      user_id: userId,
      label,
      key_hash: sha256(key),
      key_prefix: key.slice(0, API_KEY_PREFIX_LENGTH),
      expires_at: expiresInDays === undefined ? null : new Date(Date.now() + expiresInDays * DAY_MS),
    });
    return { ...toApiKeyView(record), key };
  }

  async list(owner: string | null, offset: number, limit: number): Promise<{ rows: ApiKeyRecord[]; total: number }> {
    const where: WhereOptions<ApiKeyAttributes> = owner === null ? {} : { user_id: owner };
    const { rows, count } = await this.models.ApiKey.findAndCountAll({
      where,
      order: [
        ['created_at', 'ASC'],
        ['id', 'ASC'],
      ],
      offset,
      limit,
    });
    return { rows, total: count };
  }

  /** Revokes a key of the caller's (an admin: anyone's). Revoking twice is not an error. */
  async revoke(principal: Principal, id: string): Promise<void> {
    const key = await this.models.ApiKey.findByPk(id);
    if (!key || (key.user_id !== principal.userId && principal.role !== 'admin')) {
      throw new AppError('NOT_FOUND', 'No such API key.');
    }
    if (key.revoked_at == null) {
      key.revoked_at = new Date();
      await key.save();
      await this.onRevoked(key.user_id, key.id);
    }
  }

  /** The live key for a presented key, or null (unknown, malformed, revoked, expired). No database read when cached. */
  async verify(key: string): Promise<CachedApiKey | null> {
    if (!API_KEY_PATTERN.test(key)) return null;
    const record = await this.cache.apiKey(sha256(key), async () => {
      const row = await this.models.ApiKey.findOne({ where: { key_hash: sha256(key) } });
      if (!row || row.revoked_at != null) return null;
      return {
        id: row.id,
        user_id: row.user_id,
        expires_at: row.expires_at == null ? null : new Date(row.expires_at),
        lastUsedWritten: row.last_used_at == null ? 0 : new Date(row.last_used_at).getTime(),
      };
    });
    if (!record) return null;
    if (record.expires_at !== null && record.expires_at.getTime() <= Date.now()) return null;
    if (Date.now() - record.lastUsedWritten >= LAST_USED_RESOLUTION_MS) {
      record.lastUsedWritten = Date.now();
      await this.models.ApiKey.update({ last_used_at: new Date() }, { where: { id: record.id } });
    }
    return record;
  }
}
