import type { Principal } from '../core/principal';
import type { CachedApiKey, CachedUser } from './credential-cache';

/**
 * One frozen principal per cached user (and per cached API key): every socket a user opens holds the
 * same object instead of a copy (idle sockets are counted in the hundreds of thousands). Keyed by the
 * cache's own records, so a changed user (a new record once the cache reads it again) gets a new one.
 */
const byUser = new WeakMap<CachedUser, Principal>();
const byKey = new WeakMap<CachedApiKey, Principal>();

export function jwtPrincipal(user: CachedUser): Principal {
  let principal = byUser.get(user);
  if (!principal) {
    principal = Object.freeze({ userId: user.id, username: user.username, role: user.role, via: 'jwt' as const });
    byUser.set(user, principal);
  }
  return principal;
}

export function apiKeyPrincipal(user: CachedUser, key: CachedApiKey): Principal {
  let principal = byKey.get(key);
  // The key's record may outlive its owner's (each is cached on its own): the user's fields decide.
  if (!principal || principal.userId !== user.id || principal.username !== user.username || principal.role !== user.role) {
    principal = Object.freeze({ userId: user.id, username: user.username, role: user.role, via: 'api_key' as const, apiKeyId: key.id });
    byKey.set(key, principal);
  }
  return principal;
}
