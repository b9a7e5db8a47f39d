import passport from 'passport';
import type { IncomingMessage } from 'node:http';
import type { Principal } from '../../core/principal';
import type { ApiKeys } from '../api-keys';
import { apiKeyPrincipal } from '../principals';
import type { Users } from '../users';

export const API_KEY_STRATEGY = 'api-key';

/** The credential of `Authorization: Bearer svc_live_…` (scheme in any case; wins) or `X-API-Key`. */
export function apiKeyFromRequest(req: IncomingMessage): string | null {
  if (req.headers.authorization !== undefined) {
    const match = /^bearer +(\S+) *$/i.exec(req.headers.authorization);
    return match ? match[1]! : null;
  }
  const header = req.headers['x-api-key'];
  return typeof header === 'string' && header.trim() !== '' ? header.trim() : null;
}

/** API keys `svc_live_…`: known, not revoked, not expired, and the owner active. */
export class ApiKeyStrategy extends passport.Strategy {
  override name = API_KEY_STRATEGY;

  constructor(
    private readonly apiKeys: ApiKeys,
    private readonly users: Users,
  ) {
    super();
  }

  override authenticate(req: IncomingMessage): void {
    const key = apiKeyFromRequest(req);
    if (key === null) {
      this.fail('missing credential', 401);
      return;
    }
    this.verify(key).then(
      (principal) => (principal ? this.success(principal) : this.fail('invalid credential', 401)),
      (error: unknown) => this.error(error as Error),
    );
  }

  private async verify(key: string): Promise<Principal | null> {
    const record = await this.apiKeys.verify(key);
    if (!record) return null;
    const user = await this.users.forCredentialCheck(record.user_id);
    if (!user || !user.is_active) return null;
    return apiKeyPrincipal(user, record);
  }
}
