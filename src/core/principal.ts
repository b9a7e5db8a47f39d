/** Roles of the service (decisions.md §2). The first registered user is `admin`. */
export const ROLES = ['admin', 'user'] as const;
export type Role = (typeof ROLES)[number];

/**
 * Who is calling, once a credential (access JWT or API key) has been validated. The same shape on
 * REST, WebSocket and in the worker; it never carries the credential itself.
 */
export interface Principal {
  userId: string;
  username: string;
  role: Role;
  /** How the caller proved who they are. */
  via: 'jwt' | 'api_key';
  /** The API key's id when `via` is `api_key`. */
  apiKeyId?: string;
}

/** Rate-limit buckets of the spec's Limits section; every endpoint without its own uses `default`. */
export const RATE_LIMIT_KEYS = ['auth_register', 'auth_login', 'auth_refresh', 'saml_acs', 'default', 'channel_webhooks'] as const;
export type RateLimitKey = (typeof RATE_LIMIT_KEYS)[number];

/** Why a principal's credentials changed (the `principal_changed` control message). */
export type PrincipalChangeReason = 'deactivated' | 'deleted' | 'role_changed' | 'logged_out' | 'reactivated' | 'api_key_revoked';

/**
 * Whether a change ends what `principal` opened: a deactivated, deleted or re-roled user loses every
 * socket; logging out everywhere ends what access tokens opened (API keys live on); a revoked key
 * ends what that key opened; a reactivation ends nothing.
 */
export function changeEnds(change: { userId: string; reason: PrincipalChangeReason; apiKeyId?: string }, principal: Principal): boolean {
  if (principal.userId !== change.userId) return false;
  switch (change.reason) {
    case 'deactivated':
    case 'deleted':
    case 'role_changed':
      return true;
    case 'logged_out':
      return principal.via === 'jwt';
    case 'api_key_revoked':
      return principal.apiKeyId === change.apiKeyId;
    case 'reactivated':
      return false;
  }
}
