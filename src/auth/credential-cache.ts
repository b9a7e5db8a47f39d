import type { Role } from '../core/principal';

export const CREDENTIAL_CACHE_DEFAULTS = {
  /**
   * Changes reach every process at once (`principal_changed` on the control bus); this bound is
   * only the safety net for a message lost in a Redis outage.
   */
  ttlMs: 60_000,
  maxEntries: 10_000,
};

/** What a credential check needs of a user. */
export interface CachedUser {
  id: string;
  username: string;
  role: Role;
  is_active: boolean;
  tokens_valid_after: Date | null;
}

/** What a credential check needs of an API key (found by the hash of the key). */
export interface CachedApiKey {
  id: string;
  user_id: string;
  expires_at: Date | null;
  /** When last_used_at was last written (it is written at most once a minute). */
  lastUsedWritten: number;
}

interface Timed<T> {
  value: T | null;
  at: number;
}

/**
 * Users and API keys as the credential check last read them, so a request costs no database read.
 * Deactivating, deleting, demoting, logging out everywhere and revoking a key call `forget` in every
 * process, at once. A revoked or unknown key is cached as null (a miss is as cheap as a hit).
 */
export class CredentialCache {
  private readonly users = new Map<string, Timed<CachedUser>>();
  private readonly keys = new Map<string, Timed<CachedApiKey>>();
  /** Bumped by every `forget`: a read that was in flight across one may hold what was just revoked, so it is not kept. */
  private generation = 0;

  constructor(private readonly limits = CREDENTIAL_CACHE_DEFAULTS) {}

  user(id: string, load: () => Promise<CachedUser | null>): Promise<CachedUser | null> {
    return this.through(this.users, id, load);
  }

  apiKey(hash: string, load: () => Promise<CachedApiKey | null>): Promise<CachedApiKey | null> {
    return this.through(this.keys, hash, load);
  }

  /** Drops what is known of the user (and of all their keys, or only `apiKeyId`). */
  forget(userId: string, apiKeyId?: string): void {
    this.generation += 1;
    if (!apiKeyId) this.users.delete(userId);
    for (const [hash, entry] of this.keys) {
      if (entry.value === null || (entry.value.user_id === userId && (!apiKeyId || entry.value.id === apiKeyId))) this.keys.delete(hash);
    }
  }

  private async through<T>(map: Map<string, Timed<T>>, key: string, load: () => Promise<T | null>): Promise<T | null> {
    const now = Date.now();
    const cached = map.get(key);
    if (cached && now - cached.at < this.limits.ttlMs) return cached.value;
    const generation = this.generation;
    const value = await load();
    if (generation !== this.generation) return value;
    if (map.size >= this.limits.maxEntries) map.delete(map.keys().next().value!);
    map.set(key, { value, at: now });
    return value;
  }
}
